"""FWELL's nearest hit and miss on BASEHOCK (1,993 × 4,862 word counts, 1.4 % non-zero): the sparse
Manhattan search Veil runs, against the same search on the dense matrix (SciPy's cityblock), on the
first ``ROWS`` records so the dense side stays affordable on a shared machine. Also the full
margins and L-BFGS solve on all records. Prints a markdown table; figures go to docs/fwell.md.

Run with ``make benchmark`` or ``python benchmarks/bench_fwell.py``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from _bench import dataset, machine, markdown_table, median_times
from veil.plugins import _fwell as core

ROWS = 600


def load():
    import scipy.io as sio

    path = dataset("scikit_feature/BASEHOCK.mat")
    if path is None:
        return None
    m = sio.loadmat(path)
    return np.asarray(m["X"], dtype=float), core.check_labels(m["Y"].ravel())


def dense_search(x, codes):
    """The dense path: every feature divided by its span, kept dense (cdist cityblock inside sklearn)."""
    lo, hi = x.min(axis=0), x.max(axis=0)
    return core.nearest_hit_miss(x / np.where(hi > lo, hi - lo, 1.0), codes)


def measure(repeats: int = 3) -> list[list[object]]:
    loaded = load()
    if loaded is None:
        return []
    x, codes = loaded
    sub, sub_codes = x[:ROWS], codes[:ROWS]
    sparse_sub = core.scale_span(sp.csr_matrix(sub))
    times = median_times(
        {"sparse": lambda: core.nearest_hit_miss(sparse_sub, sub_codes), "dense": lambda: dense_search(sub, sub_codes)},
        repeats,
    )
    assert all(
        np.array_equal(a, b) for a, b in zip(core.nearest_hit_miss(sparse_sub, sub_codes), dense_search(sub, sub_codes))
    )
    start = time.perf_counter()
    z = core.margins(x, codes)
    margins_s = time.perf_counter() - start
    start = time.perf_counter()
    sol = core.solve_lbfgs(z, 0.01)
    solve_s = time.perf_counter() - start
    return [
        [f"nearest hit/miss, first {ROWS} records, sparse", f"{times['sparse']:.2f} s", "1.0"],
        [
            f"nearest hit/miss, first {ROWS} records, dense",
            f"{times['dense']:.2f} s",
            f"{times['dense'] / times['sparse']:.1f}",
        ],
        [f"margins z, all {x.shape[0]} × {x.shape[1]}", f"{margins_s:.1f} s", ""],
        [f"L-BFGS, λ = 0.01 (gradient {sol.gradient_norm:.1e})", f"{solve_s:.1f} s", ""],
    ]


@pytest.mark.benchmark
def test_sparse_search_beats_dense():
    rows = measure(repeats=2)
    if not rows:
        pytest.skip("BASEHOCK not found")
    assert float(rows[1][2]) > 1.0


if __name__ == "__main__":
    print(machine())
    print(markdown_table(["step", "median time", "× sparse"], measure()))
    sys.exit(0)
