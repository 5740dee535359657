"""Reproduce paper 001's Figures 2(a), 2(b) and 3(a)-(c) from the study recipes
resources/studies/paper001_{k,l,t,delta,t_queries}.json on UCI Adult (45,222 records; reads ../shared/datasets).
Writes docs/results/paper001_*.csv, docs/figures/paper001_*.png and prints
the table docs/anonymisation.md shows.

    .venv/bin/python scripts/reproduce_paper001.py [--results DIR]

With ``--results DIR`` the studies are not run again: DIR/<k|l|t|delta>/results.csv (written by
``veil study resources/studies/paper001_<x>.json --out DIR/<x>``) are read instead. With
``--run t_queries`` (names comma-separated) only those studies run again; the others are read back
from docs/results/paper001_results.csv.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from veil.engine import Context, Study, make_registry, run_study  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "resources" / "studies"
DOCS = ROOT / "docs"
PARTS = {"k": "k", "l": "l", "t": "t", "delta": "delta", "t_queries": "t"}
PAPER_K5000 = (0.086, 0.0288)


def results(source: Path | None, only: set[str] | None = None) -> pd.DataFrame:
    """Every study's long results; with ``only``, just those studies are run again and the others are
    read back from docs/results/paper001_results.csv."""
    frames = []
    registry = make_registry()
    kept = pd.read_csv(DOCS / "results" / "paper001_results.csv") if only else None
    for name, key in PARTS.items():
        if only and name not in only:  # (t and t_queries share a parameter: a metric both ask is read twice)
            frames.append(kept[(kept["parameter"] == key) & kept["metric"].isin(_metrics_of(name))])
            continue
        if source is not None:
            path = source / name / "results.csv"
            if not path.exists():
                print(f"no {path}: skipped", file=sys.stderr)
                continue
            frame = pd.read_csv(path)
        else:
            frame = run_study(registry, Study.load(STUDIES / f"paper001_{name}.json"), Context(0))
        frame = frame.rename(columns={key: "setting"})
        frame["parameter"] = key
        frames.append(frame[["label", "parameter", "setting", "metric", "value", "seconds", "error"]])
    return pd.concat(frames, ignore_index=True)


def _metrics_of(name: str) -> list[str]:
    return [str(m) for m in Study.load(STUDIES / f"paper001_{name}.json").metrics]


def wide(long: pd.DataFrame) -> pd.DataFrame:
    table = long.pivot_table(
        index=["label", "parameter", "setting"], columns="metric", values="value", aggfunc="first"
    ).reset_index()
    return table.sort_values(["label", "setting"])


QUERY = "query-error:sel_of=query"  # Anatomy's queries (qd = 4, sel = 0.05, 1,000 queries): the paper's Figure 3(a)
VARIANT = QUERY  # Figure 3(b) and (c): the same 1,000 queries per setting as the paper
MODELS = ("k-anonymity", "l-diversity", "t-closeness", "delta-disclosure")


def figure(
    points: pd.DataFrame, labels: list[str], y: str, title: str, path: Path, ylabel: str, names: dict | None = None
) -> None:
    """One line per label (or per metric in ``names`` for the t-closeness variants of Figure 3)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label in labels:
        rows = points[points["label"] == label].sort_values("ploss")
        if names:
            for metric, name in names.items():
                if metric in rows.columns:
                    ax.plot(rows["ploss"], rows[metric], marker="o", label=name)
        elif len(rows) and y in rows.columns:
            ax.plot(rows["ploss"], rows[y], marker="o", label=label)
    if y == "uloss" and "k-anonymity (generalise)" in labels:
        ax.scatter(*PAPER_K5000, marker="x", color="black", zorder=5, label="paper: k = 5000")
    ax.set_xlabel("Privacy loss (Ploss)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_xlim(0, max(0.7, float(points["ploss"].max()) * 1.05))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(points: pd.DataFrame) -> str:
    lines = [
        "| requirement (mode) | setting | Ploss | Uloss | NCP | average group size | query error, Anatomy's "
        "queries (%) | query error, per-attribute queries (%) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in points.iterrows():
        lines.append(
            f"| {r['label']} | {r['setting']:g} | {r.get('ploss', float('nan')):.3f} | "
            f"{r.get('uloss', float('nan')):.4f} | {r.get('ncp', float('nan')):.3f} | "
            f"{r.get('average-class-size', float('nan')):,.0f} | {r.get(QUERY, float('nan')):.1f} | "
            f"{r.get('query-error', float('nan')):.1f} |"
        )
    return "\n".join(lines)


def trivial_uloss() -> tuple[int, float]:
    """(records, Uloss) of the trivially anonymised table, the paper's reference line: every
    quasi-identifier suppressed, so every population's estimate is the overall distribution Q. It is
    Mondrian's release at k = n (one group, every quasi-identifier at its hierarchy's top)."""
    import json

    from veil.engine import RunSpec, PluginCall, execute

    registry = make_registry()
    study = Study.load(STUDIES / "paper001_k.json")
    data = study.data.load(registry)
    n = data.n_rows
    spec = RunSpec(
        PluginCall("mondrian", {"mode": "bucketise"}), PluginCall("k-anonymity", {"k": n}), metrics=("uloss",), seed=0
    )
    result = execute(registry, data, spec, Context(0))
    assert result.release is not None, json.dumps(str(result))
    return n, float(result.metrics["uloss"])


def main(argv: list[str]) -> None:
    source = Path(argv[argv.index("--results") + 1]) if "--results" in argv else None
    only = set(argv[argv.index("--run") + 1].split(",")) if "--run" in argv else None
    long = results(source, only)
    (DOCS / "results").mkdir(parents=True, exist_ok=True)
    long.to_csv(DOCS / "results" / "paper001_results.csv", index=False)
    points = wide(long)
    figures = DOCS / "figures"
    generalised = [f"{m} (generalise)" for m in MODELS]
    bucketised = [f"{m} (bucketise)" for m in MODELS]
    figure(
        points,
        generalised,
        "uloss",
        "Figure 2(a): Uloss vs Ploss (generalisation)",
        figures / "paper001_fig2a.png",
        "Utility loss (Uloss)",
    )
    modes = [f"{m} ({mode})" for m in ("l-diversity", "t-closeness") for mode in ("generalise", "bucketise")]
    figure(
        points,
        modes,
        "uloss",
        "Figure 2(b): generalisation vs bucketisation",
        figures / "paper001_fig2b.png",
        "Utility loss (Uloss)",
    )
    figure(
        points,
        bucketised,
        QUERY,
        "Figure 3(a): query error vs Ploss (qd = 4, sel = 0.05, bucketisation)",
        figures / "paper001_fig3a.png",
        "Average relative error (%)",
    )
    sels = {f"{QUERY},sel={v}": f"sel = {v}" for v in (0.03,)}
    sels[VARIANT] = "sel = 0.05"
    sels.update({f"{QUERY},sel={v}": f"sel = {v}" for v in (0.07, 0.1)})
    figure(
        points,
        ["t-closeness (bucketise)"],
        "",
        "Figure 3(b): t-closeness, qd = 4, bucketisation",
        figures / "paper001_fig3b.png",
        "Average relative error (%)",
        names=sels,
    )
    qds = {f"{QUERY},qd={v}": f"qd = {v}" for v in (2, 3)}
    qds[VARIANT] = "qd = 4"
    qds[f"{QUERY},qd=5"] = "qd = 5"
    figure(
        points,
        ["t-closeness (bucketise)"],
        "",
        "Figure 3(c): t-closeness, sel = 0.05, bucketisation",
        figures / "paper001_fig3c.png",
        "Average relative error (%)",
        names=qds,
    )
    print(markdown(points))
    n, trivial = trivial_uloss()
    anonymised = points[points["label"].str.contains("generalise|bucketise")]["uloss"]
    above = points[points["uloss"] >= 0.04][["label", "setting", "uloss"]]
    print(f"\ntrivially anonymised ({n:,} records, every quasi-identifier suppressed): Uloss {trivial:.4f}")
    print(f"largest Uloss of an anonymised point: {anonymised.max():.4f}; points at or above 0.04:")
    print(above.to_string(index=False))
    t = points[points["label"] == "t-closeness (bucketise)"].sort_values("setting")
    columns = ["setting", "ploss", *sels, *[q for q in qds if q != VARIANT]]
    print("\n" + t[[c for c in columns if c in t.columns]].round(3).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
