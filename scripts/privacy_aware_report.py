"""Regenerate docs/privacy_aware_evaluation.md: paper 004 (docs/reference.md#privacy-aware-evaluation) reproduced
on Pima, Adult, ILPD
and Diabetes 130-US with C4.5 and naive Bayes.

    .venv/bin/python scripts/privacy_aware_report.py            # every study (4 to 7 minutes)
    .venv/bin/python scripts/privacy_aware_report.py pima ilpd  # only the studies whose key is given
    .venv/bin/python scripts/privacy_aware_report.py --redraw   # text and charts from docs/privacy_aware only

Each study is a recipe under resources/studies/privacy_aware_*.json (``veil study`` runs the same
files and writes the tidy result table and the run-level charts). This script runs every method of a
recipe through the engine, then writes for each run the candidate table (docs/privacy_aware/*.csv),
the whole ``release.details`` (*.json), the four-region scatter and the E(S) chart
(docs/figures/privacy_aware_*.png), and the report with the paper's numbers beside ours. Studies
not given on the command line keep the tables they already have (read back from their JSON).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from veil.engine import Context, Study, __version__, execute, make_registry
from veil.plugins.feature_selection._privacy_aware import candidate_frame, rank_candidates
from veil.plugins.feature_selection.privacy_aware_charts import parse_weight_settings
from veil.plugins.feature_selection._cv import CrossValidation, encode, label_codes

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STUDIES = {  # key: (recipe, title)
    "pima-preg": ("privacy_aware_pima_preg.json", "Pima, SA = preg (C ≠ SA)"),
    "pima": ("privacy_aware_pima.json", "Pima, C = SA = class"),
    "adult": ("privacy_aware_adult.json", "Adult, C = SA = income"),
    "ilpd": ("privacy_aware_ilpd.json", "Liver Patients (ILPD), C = SA = is_patient"),
    "diabetes": ("privacy_aware_diabetes.json", "Diabetes 130-US hospitals, C = SA = readmitted"),
}
SEEDS = range(10)  # the baseline's spread over CV shuffles


def main(argv: list[str]) -> int:
    redraw = "--redraw" in argv
    keys = [] if redraw else argv or list(STUDIES)
    unknown = set(keys) - set(STUDIES)
    if unknown:
        print(f"unknown study {sorted(unknown)[0]!r}; studies: {', '.join(STUDIES)}", file=sys.stderr)
        return 2
    registry = make_registry()
    (DOCS / "figures").mkdir(parents=True, exist_ok=True)
    (DOCS / "privacy_aware").mkdir(parents=True, exist_ok=True)
    for key in keys:
        run_study(registry, key)
    if redraw:
        redraw_charts(registry)
    write_report()
    print(DOCS / "privacy_aware_evaluation.md")
    return 0


def run_study(registry, key: str) -> None:
    recipe, _ = STUDIES[key]
    study = Study.load(ROOT / "resources" / "studies" / recipe)
    data = study.data.load(registry)
    weights = _weights_of(study)
    for spec in study.runs(registry):
        classifier = spec.method.params["classifier"]
        stem = f"{key}-{classifier.replace('.', '')}"
        print(f"{stem}: running", file=sys.stderr)
        started = time.perf_counter()
        result = execute(registry, data, spec, Context(spec.seed, _printer(stem)), version=__version__)
        details = dict(result.release.details)
        details["seconds"] = round(time.perf_counter() - started, 1)
        details["baseline_seeds"] = baseline_spread(data, details, spec.method.params)
        details["chart_weights"] = [list(w) for w in weights]
        (DOCS / "privacy_aware" / f"{stem}.json").write_text(json.dumps(details, indent=1) + "\n", encoding="utf-8")
        candidate_frame(details).to_csv(DOCS / "privacy_aware" / f"{stem}.csv", index=False)
        draw(registry, details, stem, weights, STUDIES[key][1])


def _weights_of(study) -> list[tuple]:
    for call in study.charts:
        if call.name == "privacy-aware-es":
            return parse_weight_settings(call.params.get("weights", ""))
    return [(0.333, 0.333, 0.333)]


def _printer(stem: str):
    state = {"last": -1}

    def show(fraction, message):
        pct = int(fraction * 100)
        if pct >= state["last"] + 10:
            state["last"] = pct
            print(f"  {stem}: {pct:3d} % {message}", file=sys.stderr)

    return show


def baseline_spread(data, details: dict, params: dict) -> list[float]:
    """Acc(C | BL) for seeds 0–9 (the paper's single Weka run sits somewhere in this spread)."""
    from veil.plugins.feature_selection._privacy_aware import evaluation_frame, resolve_roles

    roles = resolve_roles(data, bool(params.get("sensitive_is_class")))
    out = []
    for seed in SEEDS:
        frame = evaluation_frame(data, roles, params.get("missing", "drop-rows"), params.get("sample_rows", 0), seed)
        kinds = {c.name: c.kind for c in data.schema.columns}
        cv = CrossValidation(
            encode(frame, kinds, roles.baseline),
            {roles.target: label_codes(frame[roles.target])},
            details["classifier"],
            details["folds"],
            seed,
            Context(seed),
        )
        out.append(round(cv.accuracy(roles.target, roles.baseline).accuracy, 3))
    return out


def redraw_charts(registry) -> None:
    """Every chart again from the stored details (no classifier is run)."""
    for key, (_, title) in STUDIES.items():
        for classifier in ("c45", "naive-bayes"):
            path = DOCS / "privacy_aware" / f"{key}-{classifier}.json"
            if path.exists():
                details = json.loads(path.read_text(encoding="utf-8"))
                draw(registry, details, path.stem, [tuple(w) for w in details["chart_weights"]], title)


def draw(registry, details: dict, stem: str, weights, title: str) -> None:
    frame = candidate_frame(details)
    setting = "; ".join("/".join(f"{x:g}" for x in w) for w in weights)
    for chart_name, suffix, params, size in (
        ("privacy-aware-regions", "regions", {}, (7.5, 5.0)),
        ("privacy-aware-es", "es", {"weights": setting}, (min(max(7.5, 0.16 * len(frame) + 4), 15.0), 4.5)),
    ):
        chart = registry.chart(chart_name)
        figure = Figure(figsize=size, dpi=110, layout="constrained")
        FigureCanvasAgg(figure)
        chart.draw(frame, figure, chart.params(params))
        figure.axes[0].set_title(f"{title}: {details['classifier']}", fontsize="small")
        figure.savefig(DOCS / "figures" / f"privacy_aware_{stem.replace('-', '_')}_{suffix}.png")


# -- the report ---------------------------------------------------------------------------------------------
def write_report() -> None:
    from privacy_aware_paper import COMMENTARY, INTRO, PAPER_NOTES

    parts = [INTRO]
    for key, (recipe, title) in STUDIES.items():
        runs = [p for p in (DOCS / "privacy_aware" / f"{key}-{c}.json" for c in ("c45", "naive-bayes")) if p.exists()]
        if not runs:
            continue
        parts.append(f"## {title}\n\nRecipe: `resources/studies/{recipe}`.\n")
        if key in PAPER_NOTES:
            parts.append(PAPER_NOTES[key] + "\n")
        for path in runs:
            parts.append(run_section(key, path))
        if key in COMMENTARY:
            parts.append("### Compared with the paper\n\n" + COMMENTARY[key] + "\n")
    (DOCS / "privacy_aware_evaluation.md").write_text("\n".join(parts), encoding="utf-8")


def run_section(key: str, path: Path) -> str:
    d = json.loads(path.read_text(encoding="utf-8"))
    stem = path.stem
    base = d["baseline"]
    spread = np.asarray(d["baseline_seeds"])
    weights = [tuple(w) for w in d["chart_weights"]]
    lines = [
        f"### {d['classifier']}\n",
        f"{d['records']:,} records, |BL| = {len(base['attributes'])}, {d['folds']}-fold stratified CV (seed 0), "
        f"α = {d['alpha']:g} %, significance {d['significance']:g}; {d['evaluations']} cross-validations, "
        f"{d['seconds']:g} s.\n",
        f"* Perf_BLC = Acc(C | BL) = **{base['perf']:.3f} %** (seeds 0–9: mean {spread.mean():.2f} %, "
        f"range {spread.min():.2f}–{spread.max():.2f} %)",
        f"* Perf_BLP = Acc(SA | BL) = {base['perf_sa']:.3f} %; majority share of SA {base['majority_sa']:.3f} %; "
        f"DistP_PBI = {base['distp_pbi']:.3f} %",
        f"* PerfR = {{{', '.join(r['attribute'] for r in d['rankings']['PerfR'])}}}",
        f"* PrivR = {{{', '.join(r['attribute'] for r in d['rankings']['PrivR'])}}}\n",
    ]
    es = [{r["index"]: r for r in rank_candidates(d["candidates"], w)} for w in weights]
    head = (
        "| | subset S | \\|S\\| | Perf (%) | p | PBI (%) | list | "
        + " | ".join("E " + "/".join(f"{x:g}" for x in w) for w in weights)
        + " |"
    )
    lines += [head, "|" + "---|" * (7 + len(weights))]
    for i, c in enumerate(d["candidates"]):
        cells = [f"{e[i]['e']:.3f}" + (" ★" if e[i]["place"] == 1 else "") for e in es]
        lines.append(
            f"| {c['label']} | {_subset(c['subset'], base['attributes'])} | {c['size']} | {c['perf']:.3f} "
            f"| {c['p_value']:.3f} "
            f"| {c['pbi']:.3f} | {c['list']} | " + " | ".join(cells) + " |"
        )
    refused = [s for s in d["steps"] if not s["accepted"] and s["reason"] != "would leave no attribute"]
    if refused:
        lines.append(
            "\nRefused removals: " + "; ".join(f"{s['list']} −{s['removed']} ({_refusal(s)})" for s in refused) + "."
        )
    lines.append(
        "\nE(S) ranking, best three per weight setting: "
        + "; ".join(
            f"w = ({', '.join(f'{x:g}' for x in w)}): "
            + ", ".join(d["candidates"][r["index"]]["label"] for r in sorted(e.values(), key=lambda r: r["place"])[:3])
            for w, e in zip(weights, es)
        )
        + ".\n"
    )
    fig = stem.replace("-", "_")
    lines.append(
        f"![four regions](figures/privacy_aware_{fig}_regions.png)\n"
        f"![E(S) per candidate](figures/privacy_aware_{fig}_es.png)\n"
    )
    lines.append(
        f"Data: [`privacy_aware/{stem}.csv`](privacy_aware/{stem}.csv) (candidates), "
        f"[`privacy_aware/{stem}.json`](privacy_aware/{stem}.json) (the release's details).\n"
    )
    return "\n".join(lines)


def _subset(subset: list[str], baseline: list[str]) -> str:
    """A subset by its members, or as "BL − {…}" when it keeps most of BL (Diabetes has 47 attributes)."""
    if len(subset) == len(baseline):
        return "BL (all attributes)"
    if len(subset) > len(baseline) / 2:
        return "BL − {" + ", ".join(a for a in baseline if a not in subset) + "}"
    return ", ".join(subset)


def _refusal(step: dict) -> str:
    if step["reason"].startswith("PBI"):
        return f"PBI {step['pbi']:.2f} % > α"
    return f"Perf {step['perf']:.2f} %, p = {step['p_value']:.3f}"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main(sys.argv[1:]))
