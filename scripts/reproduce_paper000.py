"""Reproduce the layout of paper 000's Tables 4–6 and Figure 1 from the study recipes in
resources/studies (reads ../shared/datasets). Writes docs/results/*.csv, docs/figures/*.png and
docs/feature_selection_results.md.

    .venv/bin/python scripts/reproduce_paper000.py [adult basehock pcmac relathe spambase] [--dp] [--tables-only]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from veil.engine import Context, Study, make_registry, run_study
from veil.engine.release.charts import save_chart

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "resources" / "studies"
DOCS = ROOT / "docs"
DATASETS = ["adult", "basehock", "pcmac", "relathe", "spambase"]


def cell(sub: pd.DataFrame, label: str, k) -> str:
    rows = sub[(sub["label"] == label) & (sub["k"] == k)]
    auc = rows[rows["metric"] == "auc"]["value"]
    if auc.isna().all():
        return "fails"
    if label == "RF":
        flips = rows[rows["metric"] == "flip-rate"]["value"].mean() * 100
        return f"{auc.mean():.2f} ± {auc.std(ddof=0):.2f} ({flips:.2f} %)"
    sfc = rows[rows["metric"] == "sfc"]["value"].mean()
    return f"{auc.mean():.2f} ({sfc:.0f})"


def table(results: pd.DataFrame) -> str:
    ks = sorted(results["k"].dropna().unique())
    labels = list(dict.fromkeys(results["label"]))
    lines = ["| method | " + " | ".join(f"k = {int(k)}" for k in ks) + " |", "|---|" + "---:|" * len(ks)]
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(cell(results, label, k) for k in ks) + " |")
    return "\n".join(lines)


def dp_table(results: pd.DataFrame) -> str:
    eps = sorted(results["epsilon"].unique())
    lines = ["| method | " + " | ".join(f"ε = {e:g}" for e in eps) + " |", "|---|" + "---:|" * len(eps)]
    for label in dict.fromkeys(results["label"]):
        cells = []
        for e in eps:
            auc = results[(results["label"] == label) & (results["epsilon"] == e) & (results["metric"] == "auc")]
            cells.append(f"{auc['value'].mean():.2f} ± {auc['value'].std(ddof=0):.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(registry, name: str) -> pd.DataFrame:
    study = Study.load(STUDIES / f"{name}.json")
    started = time.perf_counter()

    def progress(fraction, message):
        print(f"\r{name}: {fraction * 100:5.1f}% {message[:60]:<60}", end="", file=sys.stderr)

    results = run_study(registry, study, Context(study.seed, progress))
    print(f"\r{name}: done in {time.perf_counter() - started:.0f} s{' ' * 60}", file=sys.stderr)
    results.to_csv(DOCS / "results" / f"{name}.csv", index=False)
    for call in study.charts:
        save_chart(registry, call, results, DOCS / "figures", stem=name)
    return results


def tables_from_csv() -> Path:
    """Rebuild docs/feature_selection_results.md from every results CSV already written."""
    sections = [
        "# Feature selection under k-anonymity by containment: generated tables\n\n"
        "Made by `scripts/reproduce_paper000.py`; "
        "cells are \"AUC (SFC)\", RF \"AUC ± std (flip %)\", protocol = paper; Figure 1 cells are "
        "\"AUC ± std over repeats\".\n"
    ]
    for name in DATASETS:
        path = DOCS / "results" / f"paper000_{name}.csv"
        if path.exists():
            sections.append(f"\n## {name}\n\n{table(pd.read_csv(path))}\n\n![](figures/paper000_{name}.png)\n")
    for name in DATASETS:
        path = DOCS / "results" / f"paper000_dp_{name}.csv"
        if path.exists():
            sections.append(
                f"\n## Figure 1, {name}\n\n{dp_table(pd.read_csv(path))}\n\n![](figures/paper000_dp_{name}.png)\n"
            )
    out = DOCS / "feature_selection_results.md"
    out.write_text("\n".join(sections), encoding="utf-8")
    return out


def main(argv: list[str]) -> int:
    if "--tables-only" in argv:
        print(tables_from_csv())
        return 0
    registry = make_registry()
    dp = "--dp" in argv
    names = [a for a in argv if not a.startswith("--")] or DATASETS
    out = DOCS / "feature_selection_results.md"
    sections = (
        [out.read_text(encoding="utf-8")]
        if out.exists() and len(names) < len(DATASETS)
        else [
            "# Feature selection under k-anonymity by containment: generated tables\n\n"
            "Made by `scripts/reproduce_paper000.py`; "
            "cells are \"AUC (SFC)\", RF \"AUC ± std (flip %)\", protocol = paper.\n"
        ]
    )
    for name in names:
        if dp:
            results = run(registry, f"paper000_dp_{name}")
            sections.append(f"\n## Figure 1, {name}\n\n{dp_table(results)}\n\n![](figures/paper000_dp_{name}.png)\n")
        else:
            results = run(registry, f"paper000_{name}")
            sections.append(f"\n## {name}\n\n{table(results)}\n\n![](figures/paper000_{name}.png)\n")
    print(tables_from_csv())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
