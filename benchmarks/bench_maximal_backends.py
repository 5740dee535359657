"""Maximal's backends on the FIMI data sets, and which one ``backend=auto`` picks.

Each data set runs in one process: Maximal (top_r = 50, HamDist) with ``auto`` and with each explicit
backend that ``auto`` chooses between plus the exhaustive path (``pyfim``), at each k; every backend
gets ``max_seconds`` and one that stops there is shown as "> limit". The class, needed for the
scoring only, is whether a record holds item 1 (mushroom's "edible"); BASEHOCK and RELATHE (words
present/absent, few records over many words) are read as paper 000 uses them. All backends must return the
same selection (checked). numba's cache is loaded by a small search before any timing.

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_maximal_backends.py [fimi_mushroom fimi_chess … BASEHOCK RELATHE]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import dataset, markdown_table  # noqa: E402

from veil.engine import BinaryMatrix, MiningLimit, Recipe, Step, make_registry, read_data  # noqa: E402
from veil.plugins.feature_selection.greedy import maximal, maximal_backend  # noqa: E402

SETS = {
    "fimi_mushroom": "mushroom.dat",
    "fimi_chess": "chess.dat",
    "fimi_retail": "retail.dat",
    "fimi_T10I4D100K": "T10I4D100K.dat",
    "BASEHOCK": "",
    "RELATHE": "",
}  # the last two: paper 000's text tables
BACKENDS = ("longest-items", "longest-records", "pyfim")


def load(name: str) -> BinaryMatrix | None:
    if not SETS[name]:  # words present/absent, class Y, as paper 000 uses them
        path = dataset(f"scikit_feature/{name}.mat")
        if path is None:
            return None
        table = read_data(make_registry(), path)
        return Recipe(tuple(Step(c, "positive") for c in table.columns if c != "Y"), "Y").apply(table)
    path = dataset(f"{name}/{SETS[name]}")
    if path is None:
        return None
    with open(path) as f:
        records = [[int(t) for t in line.split()] for line in f if line.strip()]
    return BinaryMatrix.from_transactions(records, labels=np.array([1 in r for r in records]))


def measure(matrix: BinaryMatrix, k: int, limit: float) -> tuple[str, dict[str, float | None]]:
    chosen = maximal_backend(matrix, k)[0]
    seconds: dict[str, float | None] = {}
    answers = set()
    for backend in ("auto", *BACKENDS):
        started = time.perf_counter()
        try:
            selected, _ = maximal(matrix, k, 50, "hamdist", backend, max_seconds=limit)
        except MiningLimit:
            seconds[backend] = None
            continue
        seconds[backend] = time.perf_counter() - started
        answers.add(tuple(selected))
    assert len(answers) == 1, f"the backends disagree: {answers}"
    return chosen, seconds


def main(names: list[str], ks=(5, 10), limit: float = 60.0) -> None:
    maximal(
        BinaryMatrix.from_dense(np.eye(70, dtype=np.uint8)[:, :64], labels=np.arange(70) % 2),
        1,
        1,
        backend="longest-items",
    )  # numba's cache
    rows = []
    for name in names:
        matrix = load(name)
        if matrix is None:
            print(f"{name} not found under ../shared/datasets")
            continue
        for k in ks:
            chosen, t = measure(matrix, k, limit)
            done = [s for s in t.values() if s is not None]
            best = min(s for b, s in t.items() if b != "auto" and s is not None) if done else None
            cell = [f"{t[b]:.2f}" if t[b] is not None else f"> {limit:g}" for b in ("auto", *BACKENDS)]
            frequent = int((matrix.column_counts() >= k).sum())
            rows.append(
                [
                    name,
                    f"{matrix.n_rows:,} × {frequent:,}",
                    f"{matrix.density:.3f}",
                    k,
                    chosen,
                    *cell,
                    f"{t['auto'] / best:.2f}" if t["auto"] is not None and best else "–",
                ]
            )
            print(
                markdown_table(
                    [
                        "data",
                        "records × items ≥ k",
                        "density",
                        "k",
                        "auto picks",
                        "auto s",
                        *(f"{b} s" for b in BACKENDS),
                        "auto / best",
                    ],
                    rows[-1:],
                ),
                flush=True,
            )
    print()
    print(
        markdown_table(
            [
                "data",
                "records × items ≥ k",
                "density",
                "k",
                "auto picks",
                "auto s",
                *(f"{b} s" for b in BACKENDS),
                "auto / best",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:] or list(SETS))
