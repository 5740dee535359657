"""Veil's Mondrian against qiyuangong/Mondrian (a Python implementation of LeFevre et al.'s strict
Mondrian, not on PyPI) on that implementation's own setting, in one process.

The setting: UCI Adult's adult.data without its records holding a missing value (30,162 records),
8 quasi-identifiers (age, workclass, education-num, marital-status, occupation, race, sex,
native-country), no hierarchies, k = 10 (and 50). The peer takes its records as it reads them
itself: categorical values coded by first appearance, the income class last. Veil takes the same
records as a table (categories split as sets, its default). Each side's CPU seconds
(``time.process_time``) are the median of interleaved repetitions: the peer's whole ``mondrian()``
call (its ordering of each column's values, its partitioning, its generalised records — every cell
of every record written as its partition's ``lo~hi`` text, in memory — and its NCP), Veil's
partitioning (``partition``: reading the columns' codes and orders, the units, the rounds) and its
run (``execute``: the checks and memory estimate before, the partitioning, each group's typed value,
the released table — every quasi-identifier a categorical column whose categories are the groups'
texts, each formatted once — and the k-anonymity check of that release; the ncp metric, which also
reports each column's loss, is timed on its own). NCP is each side's own: the peer's as it reports
it, Veil's ``ncp`` metric (which charges a set of s of a column's m values s/m, never less than the
peer's (hi − lo)/(m − 1) for the same group; docs/anonymisation.md).

Veil's partitioning runs compiled (numba) when numba is loaded in the process or the table has
200,000 distinct records or more (loading numba costs about half a CPU second, more than the NumPy
rounds take on a table this size): this benchmark loads it first, as a desktop that has run any
compiled kernel has, and measures Veil's run both ways — compiled, and the NumPy rounds a fresh
command-line process takes on this table.

The peer's code is fetched at run time into a temporary folder (``git clone``), never into the
repository; ``--peer DIR`` names a checkout already on the machine instead.

Run: ``.venv/bin/python benchmarks/bench_mondrian_peer.py [--peer DIR] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import dataset, markdown_table  # noqa: E402

pytestmark = pytest.mark.benchmark

with contextlib.suppress(ImportError):
    import numba  # noqa: F401  (loaded, as in a process that has run a compiled kernel: see above)

PEER = "https://github.com/qiyuangong/Mondrian"
NAMES = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
]  # fmt: skip
QIS = ["age", "workclass", "education-num", "marital-status", "occupation", "race", "sex", "native-country"]
NUMERIC = {"age", "education-num"}


def adult_records() -> pd.DataFrame:
    """adult.data as the peer reads it: lines holding ``?`` dropped, spaces removed."""
    lines = (dataset("adult") / "adult.data").read_text().splitlines()
    rows = [line.replace(" ", "").split(",") for line in lines if line.strip() and "?" not in line]
    frame = pd.DataFrame(rows, columns=NAMES)[[*QIS, "income"]]
    for c in NUMERIC:
        frame[c] = frame[c].astype(int)
    return frame


def peer_input(frame: pd.DataFrame) -> list[list]:
    """The peer's records: categorical values coded 0, 1, … by first appearance, the class last."""
    coded = [frame[c].tolist() if c in NUMERIC else pd.factorize(frame[c])[0].tolist() for c in QIS]
    return [[*row, cls] for row, cls in zip(zip(*coded), frame["income"].tolist())]


def load_peer(folder: Path):
    """The peer's ``mondrian`` module (it orders every column by its codes)."""
    sys.path.insert(0, str(folder))
    return importlib.import_module("mondrian")


def numpy_rounds(call):
    """``call`` with Mondrian's NumPy rounds, as in a process where numba is not loaded."""
    from veil.plugins.anonymisation import mondrian

    def run():
        compiled = mondrian._compiled
        mondrian._compiled = lambda units: False
        try:
            return call()
        finally:
            mondrian._compiled = compiled

    return run


def veil_side(frame: pd.DataFrame, k: int):
    from veil.engine import Context, PluginCall, Role, RunSpec, Table, execute, make_registry
    from veil.engine.run.runs import bind_model
    from veil.plugins.anonymisation.mondrian import partition

    registry = make_registry()
    roles = {**{q: Role.QUASI_IDENTIFIER for q in QIS}, "income": Role.TARGET}
    table = Table.from_frame(frame, roles=roles)
    model = bind_model(registry, PluginCall("k-anonymity", {"k": k}))
    spec = RunSpec(PluginCall("mondrian", {}), PluginCall("k-anonymity", {"k": k}), 0, ())
    ncp = registry.metric("ncp")

    def split():
        return partition(table, model, Context(0))

    def whole():
        return execute(registry, table, spec, Context(0))

    def loss(run):
        return ncp.compute(table, run.release, ncp.params({}), Context(0))

    return split, whole, loss


def cpu(call) -> tuple[float, object]:
    started = time.process_time()
    out = call()
    return time.process_time() - started, out


def compare(peer_dir: Path, ks=(10, 50), repeats: int = 5) -> str:
    frame = adult_records()
    records = peer_input(frame)
    peer = load_peer(peer_dir)
    rows = []
    for k in ks:
        split, whole, loss = veil_side(frame, k)
        samples = {"peer": [], "veil partition": [], "veil run": [], "veil ncp": [], "numpy run": []}
        peer_ncp = veil_ncp = groups = None
        for _ in range(repeats + 1):  # the first turn warms every side up
            with contextlib.redirect_stdout(io.StringIO()):
                t, (result, (peer_ncp, _)) = cpu(lambda: peer.mondrian([list(r) for r in records], k, False))
            samples["peer"].append(t)
            t, ids = cpu(split)
            samples["veil partition"].append(t)
            t, run = cpu(whole)
            samples["veil run"].append(t)
            t, veil_ncp = cpu(lambda: loss(run))
            samples["veil ncp"].append(t)
            t, slow = cpu(numpy_rounds(whole))
            samples["numpy run"].append(t)
            assert slow.release.frame.equals(run.release.frame)  # the two ways release the same table
            groups = int(ids.max()) + 1
        med = {name: statistics.median(s[1:]) for name, s in samples.items()}
        rows.append(
            [
                k,
                f"{med['peer']:.3f}",
                f"{peer_ncp:.1f} %",
                f"{med['veil partition']:.4f}",
                f"{med['veil run']:.4f}",
                f"{med['numpy run']:.4f}",
                f"{med['veil ncp']:.3f}",
                f"{100 * veil_ncp:.1f} %",
                groups,
                f"{med['peer'] / med['veil partition']:.1f}×",
                f"**{med['peer'] / med['veil run']:.1f}×**",
                f"{med['peer'] / med['numpy run']:.1f}×",
            ]
        )
    return markdown_table(
        [
            "k",
            "peer CPU s",
            "peer NCP",
            "Veil partition CPU s",
            "Veil run CPU s",
            "Veil run, NumPy rounds, CPU s",
            "Veil ncp metric CPU s",
            "Veil NCP",
            "Veil groups",
            "peer / Veil partition",
            "peer / Veil run",
            "peer / Veil run, NumPy rounds",
        ],
        rows,
    )


def cpu_timed(owner, name: str, into: dict, label: str):
    """Wrap ``owner.name`` so that its calls add their CPU seconds to ``into[label]``; returns the undo."""
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            into[label] = into.get(label, 0.0) + time.process_time() - started

    setattr(owner, name, wrapper)
    return lambda: setattr(owner, name, real)


def stages(frame: pd.DataFrame, k: int, repeats: int = 7) -> str:
    """Where Veil's run (compiled rounds) spends its CPU time: the median over repetitions of each
    step's seconds, the steps timed by wrapping their functions."""
    from veil.engine import Release
    from veil.engine.run import runs
    from veil.plugins.anonymisation import mondrian

    _, whole, _ = veil_side(frame, k)
    whole()
    spent: dict = {}
    steps = [
        (runs, "shape_of", "memory estimate: the input's shape"),
        (mondrian, "qi_columns", "reading the columns' codes and orders"),
        (mondrian, "_units", "equal records as weighted units"),
        (mondrian, "run_rounds", "the rounds (compiled)"),
        (mondrian, "group_values", "each group's typed value"),
        (mondrian, "generalised", "the released table"),
        (Release, "blank_codes", "the check of the release: its blank cells"),
    ]
    undo = [cpu_timed(owner, name, spent, label) for owner, name, label in steps]
    samples: dict = {}
    try:
        for _ in range(repeats):
            spent.clear()
            t, _ = cpu(whole)
            spent["whole run"] = t
            for label, seconds in spent.items():
                samples.setdefault(label, []).append(seconds)
    finally:
        for u in undo:
            u()
    med = {label: statistics.median(s) for label, s in samples.items()}
    rest = med["whole run"] - sum(v for label, v in med.items() if label != "whole run")
    rows = [[label, f"{1000 * v:.1f}"] for label, v in med.items() if label != "whole run"]
    rows += [["everything else (checks, the model's group check, provenance)", f"{1000 * rest:.1f}"]]
    rows += [["whole run", f"{1000 * med['whole run']:.1f}"]]
    return markdown_table([f"Veil's run at k = {k}", "CPU ms"], rows)


def fetched(into: Path) -> Path | None:
    done = subprocess.run(["git", "clone", "--quiet", "--depth", "1", PEER, str(into)], capture_output=True)
    return into if done.returncode == 0 else None


def test_mondrian_against_qiyuangong():
    if dataset("adult") is None:
        pytest.skip("adult is not in ../shared/datasets")
    with tempfile.TemporaryDirectory() as tmp:
        peer = fetched(Path(tmp) / "peer")
        if peer is None:
            pytest.skip(f"{PEER} could not be fetched")
        print("\n" + compare(peer, ks=(10,), repeats=3))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, help="a checkout of qiyuangong/Mondrian (default: fetched)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        peer = args.peer or fetched(Path(tmp) / "peer")
        if peer is None:
            sys.exit(f"{PEER} could not be fetched; give a checkout with --peer DIR")
        print(compare(peer, repeats=args.repeats))
        print()
        print(stages(adult_records(), 10, args.repeats))
