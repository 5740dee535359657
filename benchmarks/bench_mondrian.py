"""Mondrian on adult_arx (30,162 rows, six QIs with ARX's hierarchies, k = 10) beside the pip package
``anjana`` (global recoding, the same hierarchies; the ``bench`` extra), the l/t/δ checks of every
group of Adult in one pass, and Mondrian's time from 10⁴ to 10⁶ rows.

Run with ``make benchmark`` or ``python benchmarks/bench_mondrian.py`` (prints markdown tables).
Every figure is the median of interleaved repetitions in one run, as wall time and as the process's
CPU time (on a machine shared with other jobs the CPU time is the steadier of the two); NCP is
Veil's ``ncp`` metric (normalised certainty penalty over records and quasi-identifiers) applied to
both releases.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _bench import dataset, machine, markdown_table
from veil.engine import Context, GroupView, Hierarchy, PluginCall, Role, Table, make_registry
from veil.engine.run.runs import bind_model
from veil.plugins.anonymisation.mondrian import Mondrian, partition

QIS = ["age", "education", "marital-status", "race", "sex", "workclass"]
MEDIAN = {"numbers": "median"}  # age cut at its median, its ARX hierarchy unused: the figures in docs/benchmarks.md
REGISTRY = make_registry()


def adult_arx() -> Table | None:
    folder = dataset("adult_arx")
    if folder is None:
        return None
    frame = pd.read_csv(folder / "adult.csv", sep=";")
    table = Table.from_frame(
        frame,
        roles={**{q: Role.QUASI_IDENTIFIER for q in QIS}, "occupation": Role.SENSITIVE, "salary-class": Role.TARGET},
    )
    for q in QIS:
        table = table.with_hierarchy(q, Hierarchy.from_arx_csv(folder / f"adult_hierarchy_{q}.csv"))
    return table


def _ncp(table, release) -> float:
    metric = REGISTRY.metric("ncp")
    return float(metric.compute(table, release, metric.params({}), Context(0)))


ANJANA_SCRIPT = r"""
import sys, time
import pandas as pd
from anjana.anonymity import k_anonymity
folder, out, qis = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
data = pd.read_csv(f"{folder}/adult.csv", sep=";", dtype=str)
hierarchies = {q: dict(pd.read_csv(f"{folder}/adult_hierarchy_{q}.csv", sep=";", header=None, dtype=str)) for q in qis}
start, cpu = time.perf_counter(), time.process_time()
result = k_anonymity(data, [], qis, 10, 0, hierarchies)
print(time.perf_counter() - start, time.process_time() - cpu)
result.to_csv(out, index=False)
"""


def node_ncp(table: Table, frame: pd.DataFrame) -> float:
    """NCP of a release written as hierarchy nodes (global recoding): per record and quasi-identifier,
    the leaves under its node over all leaves (0 for a single leaf, 1 for ``*``), averaged."""
    total = 0.0
    for q in QIS:
        h = table.hierarchy(q)
        width = {}
        for label in frame[q].astype(str).unique():
            levels = [lv for lv in range(h.height + 1) if any(n.label == label for n in h.nodes(lv))]
            if not levels:
                raise ValueError(f"{label!r} is not a node of {q}'s hierarchy")
            count = h.leaf_count((levels[0], label))
            width[label] = 0.0 if count <= 1 else count / len(h.leaves)
        total += frame[q].astype(str).map(width).mean()
    return total / len(QIS)


def anjana_python() -> str | None:
    """anjana pins pandas 2.3.3 and NumPy 2.0.2, older than Veil's: it lives in its own environment,
    ``.venv-anjana`` beside the repository's ``.venv`` (or the interpreter named by ANJANA_PYTHON)."""
    candidates = [os.environ.get("ANJANA_PYTHON"), str(Path(__file__).resolve().parents[1] / ".venv-anjana/bin/python")]
    for python in filter(None, candidates):
        if (
            Path(python).exists()
            and subprocess.run([python, "-c", "import anjana"], capture_output=True).returncode == 0
        ):
            return python
    return None


def run_anjana(python: str, table: Table):
    """anjana's k-anonymity (k = 10, no suppression) on the same file and hierarchies: its own timing
    of the call, and its output as a release Veil's ncp metric can judge."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "anjana.csv"
        done = subprocess.run(
            [python, "-c", ANJANA_SCRIPT, str(dataset("adult_arx")), str(out), ",".join(QIS)],
            capture_output=True,
            text=True,
            check=True,
        )
        frame = pd.read_csv(out, dtype=str)
    wall, cpu = (float(x) for x in done.stdout.strip().splitlines()[-1].split())
    return wall, cpu, frame


def wall_and_cpu(candidates: dict, repeats: int) -> dict:
    """(median wall seconds, median CPU seconds) of each candidate, after one warm-up call each;
    the candidates take turns inside every repetition."""
    for run in candidates.values():
        run()
    samples = {name: ([], []) for name in candidates}
    for _ in range(repeats):
        for name, run in candidates.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            samples[name][0].append(time.perf_counter() - wall)
            samples[name][1].append(time.process_time() - cpu)
    return {name: (float(np.median(w)), float(np.median(c))) for name, (w, c) in samples.items()}


def adult_k10(repeats: int = 5) -> list[list[object]] | None:
    table = adult_arx()
    if table is None:
        return None
    model = bind_model(REGISTRY, PluginCall("k-anonymity", {"k": 10}))
    method = Mondrian()
    params = method.params(MEDIAN)
    candidates = {
        "Veil mondrian: partition only": lambda: partition(table, model, Context(0), params=params),
        "Veil mondrian: whole run (encode, partition, release)": lambda: method.run(table, model, params, Context(0)),
    }
    times = wall_and_cpu(candidates, repeats)
    release = method.run(table, model, params, Context(0))
    sizes = np.bincount(release.groups)
    rows = [
        [
            name,
            f"{wall:.3f}",
            f"{cpu:.3f}",
            f"{100 * _ncp(table, release):.2f} %",
            f"{len(sizes):,} groups, smallest {sizes.min()}",
        ]
        for name, (wall, cpu) in times.items()
    ]
    python = anjana_python()
    if python is None:
        rows.append(["anjana k_anonymity", "not installed", "", "", "see docs/anonymisation.md (.venv-anjana)"])
        return rows
    wall, cpu, out = run_anjana(python, table)
    rows.append(
        [
            "anjana k_anonymity (global recoding, one run)",
            f"{wall:.3f}",
            f"{cpu:.3f}",
            f"{100 * node_ncp(table, out):.2f} %",
            f"{len(out):,} rows, age → {out['age'].nunique()} value(s): {', '.join(sorted(out['age'].unique())[:3])}",
        ]
    )
    return rows


def model_checks(repeats: int = 7) -> list[list[object]] | None:
    table = adult_arx()
    if table is None:
        return None
    model = bind_model(REGISTRY, PluginCall("k-anonymity", {"k": 10}))
    groups = partition(table, model, Context(0), params=Mondrian.params(MEDIAN))
    codes, uniques = pd.factorize(table.frame["occupation"])
    q = np.bincount(codes) / len(codes)
    checks = {
        name: bind_model(REGISTRY, PluginCall.parse(text))
        for name, text in [
            ("l-diversity (probabilistic, l = 3)", "l-diversity:l=3"),
            ("t-closeness (JS, t = 0.2)", "t-closeness:t=0.2,distance=js"),
            ("t-closeness (EMD, t = 0.2)", "t-closeness:t=0.2,distance=emd"),
            ("one-sided δ-disclosure (δ = 1.5)", "delta-disclosure:delta=1.5,sides=1"),
        ]
    }

    def fresh():
        return GroupView.from_codes(groups, codes, q, tuple(uniques), False)  # no cached counts

    def one(m):
        return lambda: m.plugin.check_groups(fresh(), m.params)

    def all_in_one_pass():
        view = fresh()  # counts computed once, shared by the three models
        return [m.plugin.check_groups(view, m.params) for m in checks.values()]

    times = wall_and_cpu(
        {**{name: one(m) for name, m in checks.items()}, "all four on one view": all_in_one_pass}, repeats
    )
    return [
        [name, f"{1000 * wall:.2f}", f"{1000 * cpu:.2f}", f"{int(groups.max()) + 1:,}"]
        for name, (wall, cpu) in times.items()
    ]


def scaling(sizes=(10_000, 100_000, 1_000_000), distinct: bool = False) -> list[list[object]] | None:
    """Mondrian (k = 10) on adult_arx resampled to each size. Resampled records repeat, and Mondrian
    judges equal records once (as one weighted unit): with ``distinct`` every age gets a random
    fraction added, so nearly every record is its own unit and the partition does all the work."""
    table = adult_arx()
    if table is None:
        return None
    model = bind_model(REGISTRY, PluginCall("k-anonymity", {"k": 10}))
    rows, base = [], None
    rng = np.random.default_rng(0)
    for n in sizes:
        frame = table.frame.iloc[rng.integers(0, table.n_rows, n)].reset_index(drop=True)
        if distinct:
            frame["age"] = frame["age"] + rng.random(n)
        big = Table(frame, table.schema)
        partition(big, model, Context(0), params=Mondrian.params(MEDIAN)) if n <= 100_000 else None  # warm-up
        start, cpu = time.perf_counter(), time.process_time()
        groups = partition(big, model, Context(0), params=Mondrian.params(MEDIAN))
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        per = cpu / (n * math.log2(n))
        base = base or per
        rows.append([f"{n:,}", f"{seconds:.3f}", f"{cpu:.3f}", f"{int(groups.max()) + 1:,}", f"{per / base:.2f}"])
    return rows


HEAD_K10 = ["adult_arx, k = 10", "wall s", "CPU s", "NCP", "output"]
HEAD_CHECKS = ["check of every group (k = 10 partition of adult_arx)", "wall ms", "CPU ms", "groups"]
HEAD_SCALE = ["rows (adult_arx resampled)", "wall s", "CPU s", "groups", "CPU time / (n log n), relative to 10⁴"]


@pytest.mark.benchmark
def test_adult_k10(capsys):
    rows = adult_k10()
    if rows is None:
        pytest.skip("adult_arx not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEAD_K10, rows))
    assert float(rows[1][3].rstrip(" %")) <= 11.24  # NCP no worse than the public Python Mondrian's


@pytest.mark.benchmark
def test_model_checks(capsys):
    rows = model_checks()
    if rows is None:
        pytest.skip("adult_arx not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEAD_CHECKS, rows))


@pytest.mark.benchmark
def test_scaling(capsys):
    rows = scaling()
    if rows is None:
        pytest.skip("adult_arx not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEAD_SCALE, rows))
    assert float(rows[-1][4]) < 4  # n log n: the normalised time stays within a small factor


def main() -> None:
    info = machine()
    print(
        f"{info['cpus']} CPUs, {info['cpu']}, Python {info['python']}, NumPy {info['numpy']}, pandas {info['pandas']}\n"
    )
    for head, rows in (
        (HEAD_K10, adult_k10()),
        (HEAD_CHECKS, model_checks()),
        (HEAD_SCALE, scaling()),
        (HEAD_SCALE, scaling(distinct=True)),
    ):
        if rows is None:
            print("adult_arx not found under ../shared/datasets")
            return
        print(markdown_table(head, rows) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
