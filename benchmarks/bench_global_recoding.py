"""Global recoding with suppression on adult_arx (30,162 rows, its nine attributes as quasi-identifiers
with ARX's hierarchies: a lattice of 12,960 transformations), k = 5 and 4 % suppression, for every
metric; and on a generated table of 1,000,000 records (each of adult_arx's columns drawn
independently from its values, the same hierarchies).

Run with ``make benchmark`` or ``python benchmarks/bench_global_recoding.py`` (prints markdown tables).
``python benchmarks/bench_global_recoding.py --against REV [ROWS]`` instead runs the search of git revision
REV's ``_lattice.py`` and the current one on the same generated table (default 1,000,000 records), one
after the other for each metric, and prints both with their ratios and node counts.
Each figure is the median of interleaved repetitions, as wall time and as the process's CPU time (on
a machine shared with other jobs the CPU time is the steadier). *Search* is the lattice search alone
(``_lattice.Search.run``: its class tables and checks); *whole run* is ``execute`` (reading the
hierarchies, the search, the release with its groups and typed values, the privacy check of the
release). The datasets are read from ``../shared/datasets`` and never copied.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _bench import dataset, machine, markdown_table
from veil.engine import Context, Hierarchy, PluginCall, Role, RunSpec, Table, bind_models, execute, make_registry
from veil.plugins.anonymisation import _lattice
from veil.plugins.anonymisation._sensitive import sensitive_view

REGISTRY = make_registry()
MODEL = "k-anonymity:k=5"
SUPPRESSION = 0.04
METRICS = [
    "loss",
    "entropy",
    "precision",
    "height",
    "discernibility",
    "discernibility:monotonic=false",
    "average-class-size",
]


def adult_arx(rows: int | None = None, seed: int = 0) -> Table | None:
    """adult_arx with every column a quasi-identifier under ARX's hierarchy; with ``rows``, a table of that
    many records, each column drawn independently from adult_arx's values."""
    folder = dataset("adult_arx")
    if folder is None:
        return None
    frame = pd.read_csv(folder / "adult.csv", sep=";")
    if rows is not None:
        rng = np.random.default_rng(seed)
        frame = pd.DataFrame({c: rng.choice(frame[c].to_numpy(), rows) for c in frame.columns})
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in frame.columns})
    for c in frame.columns:
        table = table.with_hierarchy(c, Hierarchy.from_arx_csv(folder / f"adult_hierarchy_{c}.csv"))
    return table


def search_only(table: Table, metric: str, lattice=_lattice, bounds: bool = False):
    """The lattice search alone, as the method sets it up: (seconds wall, seconds CPU, search, best);
    with ``bounds``, the time includes working out the metric's bounds (the search's set-up)."""
    name, _, rest = metric.partition(":")
    model = bind_models(REGISTRY, [PluginCall.parse(MODEL)])
    attrs = lattice.attributes(table, list(table.frame.columns))
    judge = lattice.Judge(model, math.floor(SUPPRESSION * table.n_rows + 1e-9), sensitive_view(table, None))
    base = lattice.bottom(attrs, None, 1)
    wall, cpu = time.perf_counter(), time.process_time()
    objective = lattice.Objective(name, attrs, table.n_rows, monotonic="monotonic=false" not in rest)
    search = lattice.Search(attrs, base, judge, objective, Context(0))
    if not bounds:
        wall, cpu = time.perf_counter(), time.process_time()
    best = search.run()
    return time.perf_counter() - wall, time.process_time() - cpu, search, best


def lattice_at(revision: str):
    """The ``_lattice`` module as it was at a git revision, loaded beside the current one."""
    root = Path(__file__).resolve().parents[1]
    text = subprocess.run(
        ["git", "show", f"{revision}:plugins/anonymisation/_lattice.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "lattice_then.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("lattice_then", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def against(revision: str, rows_: int = 1_000_000, metrics=METRICS) -> list[list[object]] | None:
    """Each metric's search at ``revision`` and now, on the same generated table: seconds (bounds
    included), transformations checked, the ratios; the optimum must be the same."""
    table = adult_arx(rows_)
    if table is None:
        return None
    then, rows = lattice_at(revision), []
    for metric in metrics:
        a = search_only(table, metric, then, bounds=True)
        b = search_only(table, metric, _lattice, bounds=True)
        assert a[3].levels == b[3].levels and a[3].value == b[3].value, (metric, a[3], b[3])
        rows.append(
            [
                metric,
                f"{a[0]:.2f}",
                f"{a[1]:.2f}",
                f"{len(a[2].known):,}",
                f"{b[0]:.2f}",
                f"{b[1]:.2f}",
                f"{len(b[2].known):,}",
                f"{a[0] / b[0]:.2f}",
                f"{a[1] / b[1]:.2f}",
                f"{b[3].value:.6g}",
            ]
        )
    return rows


def whole_run(table: Table, metric: str):
    name, _, rest = metric.partition(":")
    params = {"suppression": SUPPRESSION, "metric": name, **({"monotonic": False} if rest else {})}
    spec = RunSpec(PluginCall("global-recoding", params), PluginCall.parse(MODEL))
    wall, cpu = time.perf_counter(), time.process_time()
    result = execute(REGISTRY, table, spec)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _median(samples: list[tuple]) -> tuple[float, float]:
    return float(np.median([s[0] for s in samples])), float(np.median([s[1] for s in samples]))


def adult(repeats: int = 3) -> list[list[object]] | None:
    table = adult_arx()
    if table is None:
        return None
    rows = []
    for metric in METRICS:
        searches, runs = [], []
        for _ in range(repeats):  # interleaved: a burst of load hits both alike
            searches.append(search_only(table, metric))
            runs.append(whole_run(table, metric))
        s_wall, s_cpu = _median(searches)
        r_wall, r_cpu = _median(runs)
        gen = runs[-1][2].release.details["generalisation"]
        search = searches[-1][2]
        rows.append(
            [
                metric,
                f"{s_wall:.3f}",
                f"{s_cpu:.3f}",
                f"{r_wall:.3f}",
                f"{r_cpu:.3f}",
                f"{len(search.known):,} of {search.size:,} ({100 * len(search.known) / search.size:.1f} %)",
                ";".join(f"{c}:{v}" for c, v in gen["levels"].items()),
                f"{gen['suppressed_records']:,}",
                f"{gen['loss']:.6g}",
            ]
        )
    return rows


def million(rows_: int = 1_000_000, metrics=("loss", "entropy", "height")) -> list[list[object]] | None:
    table = adult_arx(rows_)
    if table is None:
        return None
    rows = []
    for metric in metrics:
        s_wall, s_cpu, search, _ = search_only(table, metric)
        r_wall, r_cpu, result = whole_run(table, metric)
        gen = result.release.details["generalisation"]
        rows.append(
            [
                metric,
                f"{rows_:,}",
                f"{s_wall:.2f}",
                f"{s_cpu:.2f}",
                f"{r_wall:.2f}",
                f"{r_cpu:.2f}",
                f"{len(search.known):,} of {search.size:,}",
                f"{gen['suppressed_records']:,}",
                f"{gen['loss']:.6g}",
            ]
        )
    return rows


HEAD_ADULT = [
    "adult_arx, k = 5, 4 % suppression: metric",
    "search wall s",
    "search CPU s",
    "whole run wall s",
    "whole run CPU s",
    "transformations checked",
    "optimum (levels)",
    "suppressed",
    "metric value",
]
HEAD_MILLION = [
    "generated, k = 5, 4 % suppression: metric",
    "records",
    "search wall s",
    "search CPU s",
    "whole run wall s",
    "whole run CPU s",
    "transformations checked",
    "suppressed",
    "metric value",
]


@pytest.mark.benchmark
def test_adult(capsys):
    rows = adult()
    if rows is None:
        pytest.skip("adult_arx not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEAD_ADULT, rows))
    checked = int(rows[0][5].split(" of ")[0].replace(",", ""))
    assert checked < 12_960 / 10  # the default metric settles nine nodes in ten unseen


@pytest.mark.benchmark
def test_million(capsys):
    rows = million(metrics=("loss",))
    if rows is None:
        pytest.skip("adult_arx not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEAD_MILLION, rows))


HEAD_AGAINST = [
    "search, k = 5, 4 % suppression: metric",
    "then wall s",
    "then CPU s",
    "then checked",
    "now wall s",
    "now CPU s",
    "now checked",
    "wall ratio",
    "CPU ratio",
    "optimum's value",
]


def main() -> None:
    info = machine()
    print(
        f"{info['cpus']} CPUs, {info['cpu']}, Python {info['python']}, NumPy {info['numpy']}, pandas {info['pandas']}\n"
    )
    if len(sys.argv) > 2 and sys.argv[1] == "--against":
        rows_ = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
        print(f"{rows_:,} generated records, the search at {sys.argv[2]} (then) and now\n")
        rows = against(sys.argv[2], rows_)
        print(markdown_table(HEAD_AGAINST, rows) if rows else "adult_arx not found under ../shared/datasets")
        return
    for head, rows in ((HEAD_ADULT, adult()), (HEAD_MILLION, million(metrics=METRICS))):
        if rows is None:
            print("adult_arx not found under ../shared/datasets")
            return
        print(markdown_table(head, rows) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
