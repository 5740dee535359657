"""Reproduce paper 002's Figures 5–7 (GCP and time against k) and extend them to FIMI retail and
T10I4D100K: PatternKa against its baselines, on ../shared/datasets.

    .venv/bin/python scripts/reproduce_paper002.py run [--only NAME ...] [--budget SECONDS]
    .venv/bin/python scripts/reproduce_paper002.py plot

``run`` goes through the runs of :data:`RUNS` (large k first, every dataset: they are the fast ones) and appends
every finished run to docs/results/paper002.csv at once, so an interrupted reproduction keeps what
it measured and a second ``run`` skips what is already there. A run is cancelled after ``--budget``
seconds of wall-clock time (default 900) and recorded as not finished, with that time. Every run
is one :func:`veil.engine.execute` (the method, the privacy model checked on the release, the
metric): ``seconds`` is the wall-clock time of the whole call, ``cpu_seconds`` this process's CPU
time over it (the machine is shared, so the two differ). ``plot`` draws docs/figures/paper002_*.png
from the CSV and prints the Markdown table docs/setvalued.md shows.

Adult is ARX's copy (30,162 records after removing missing values, the paper's 9 columns, all
quasi-identifiers, ARX's hierarchies; age is numeric, B = 20 buckets for PatternKa) and is also
the study resources/studies/paper002_adult.json (``veil study`` runs its whole sweep).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
RESULTS = ROOT / "docs" / "results" / "paper002.csv"
FIGURES = ROOT / "docs" / "figures"
STUDY = ROOT / "resources" / "studies" / "paper002_adult.json"
FIELDS = ["dataset", "method", "k", "gcp", "groups", "seconds", "cpu_seconds", "status"]

SETVALUED = {
    "BMS-WebView-1": DATA / "bms_webview_1" / "BMS1_itemset_mining.space-separated.txt",
    "BMS-WebView-2": DATA / "bms_webview_2" / "BMS2_itemset_mining.txt",
    "FIMI retail": DATA / "fimi_retail" / "retail.dat",
    "FIMI T10I4D100K": DATA / "fimi_T10I4D100K" / "T10I4D100K.dat",
}
# (dataset, method, params, k): in the order they run
ADULT_K = (500, 200, 100, 50, 25, 10)
SETVALUED_K = (1000, 500, 200, 100, 50, 20)
RUNS = []
for _k in sorted(set(ADULT_K) | set(SETVALUED_K), reverse=True):
    if _k in ADULT_K:
        for _m, _p in (
            ("mondrian", {"mode": "generalise"}),
            ("hilbert", {}),
            ("patternka-relational", {"buckets": 20}),
        ):
            RUNS.append(("Adult", _m, _p, _k))
    if _k in SETVALUED_K:
        for _name in SETVALUED:
            for _m in ("top-down", "patternka"):
                RUNS.append((_name, _m, {}, _k))
LABELS = {
    "patternka-relational": "PatternKa",
    "patternka": "PatternKa",
    "mondrian": "Mondrian",
    "hilbert": "Hilbert curve",
    "top-down": "Top-down",
}


def load(name, registry):
    from veil.engine import SETS, convert, read_data
    from veil.engine.data.datasource import DataSource

    if name == "Adult":
        study = json.loads(STUDY.read_text())
        return DataSource.from_dict(study["data"], STUDY.parent).load(registry)
    return convert(read_data(registry, SETVALUED[name]), (SETS,))


def done_runs() -> set:
    if not RESULTS.exists():
        return set()
    with RESULTS.open() as f:
        return {(r["dataset"], r["method"], int(r["k"])) for r in csv.DictReader(f)}


def run(only: list[str] | None, budget: float) -> None:
    from veil.engine import CancelToken, Context, PluginCall, RunSpec, execute, make_registry

    registry = make_registry()
    done = done_runs()
    loaded: dict = {}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    new = not RESULTS.exists()
    with RESULTS.open("a", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        if new:
            out.writeheader()
        for dataset, method, params, k in RUNS:
            if (dataset, method, k) in done or (only and dataset not in only and method not in only):
                continue
            if dataset not in loaded:
                loaded[dataset] = load(dataset, registry)
            data = loaded[dataset]
            model = "k-anonymity" if dataset == "Adult" else "set-k-anonymity"
            metric = "ncp" if dataset == "Adult" else "gcp"
            call = dict(params)
            if method.startswith("patternka"):
                call["max_seconds"] = budget
            token = CancelToken()
            timer = threading.Timer(budget, token.cancel)
            timer.start()
            t0, c0 = time.perf_counter(), time.process_time()
            row = {"dataset": dataset, "method": method, "k": k}
            try:
                result = execute(
                    registry,
                    data,
                    RunSpec(PluginCall(method, call), PluginCall(model, {"k": k}), 0, (metric,)),
                    Context(0, token=token),
                )
                status = "ok" if result.holds else "FAILS the model"
                row.update(gcp=f"{result.metrics[metric]:.4f}", groups=int(result.release.groups.max()) + 1)
            except Exception as e:  # a cancelled or limited run is a result too: "not finished"
                status = f"not finished ({type(e).__name__}: {str(e)[:80]})"
            finally:
                timer.cancel()
            row.update(
                seconds=f"{time.perf_counter() - t0:.1f}", cpu_seconds=f"{time.process_time() - c0:.1f}", status=status
            )
            out.writerow(row)
            f.flush()
            print(row, flush=True)


def plot() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    frame = pd.read_csv(RESULTS)
    ok = frame[frame["status"] == "ok"]
    FIGURES.mkdir(parents=True, exist_ok=True)
    figures = {
        "Adult": "fig5_adult",
        "BMS-WebView-1": "fig6_bms1",
        "BMS-WebView-2": "fig7_bms2",
        "FIMI retail": "retail",
        "FIMI T10I4D100K": "t10i4d100k",
    }
    for dataset, stem in figures.items():
        rows = ok[ok["dataset"] == dataset]
        if rows.empty:
            continue
        fig, (a, b) = plt.subplots(1, 2, figsize=(9.6, 3.8))
        for method, part in rows.groupby("method"):
            part = part.sort_values("k")
            a.plot(part["k"], part["gcp"], marker="o", label=LABELS[method])
            b.plot(part["k"], part["cpu_seconds"], marker="o", label=LABELS[method])
        a.set(xscale="log", xlabel="k", ylabel="GCP (NCP)", title=f"{dataset}: information loss")
        b.set(xscale="log", yscale="log", xlabel="k", ylabel="CPU seconds", title=f"{dataset}: time")
        for ax in (a, b):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(FIGURES / f"paper002_{stem}.png", dpi=110)
        plt.close(fig)
    print("| data | k | method | GCP | groups | CPU s | wall s | status |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for _, r in frame.sort_values(["dataset", "k", "method"]).iterrows():
        gcp = "" if pd.isna(r["gcp"]) else f"{r['gcp']:.3f}"
        groups = "" if pd.isna(r["groups"]) else f"{int(r['groups']):,}"
        print(
            f"| {r['dataset']} | {r['k']} | {LABELS[r['method']]} | {gcp} | {groups} | {r['cpu_seconds']:.1f} | "
            f"{r['seconds']:.1f} | {r['status']} |"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("run", "plot"))
    parser.add_argument("--only", nargs="*", help="datasets or methods to run (default: all)")
    parser.add_argument("--budget", type=float, default=900.0, help="wall-clock seconds a run may take")
    args = parser.parse_args(argv)
    if args.what == "run":
        run(args.only, args.budget)
    else:
        plot()
    return 0


if __name__ == "__main__":
    sys.exit(main())
