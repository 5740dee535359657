"""Exporting a set-valued release of 410,000 records × 4,500 items: peak memory against the size of
a dense records × items frame.

The release is a valid grouping of the Netflix-shaped synthetic records (``power_law_sets``; groups
of 100 consecutive records, each published as its group's centre), written with the ``itemsets``
exporter through ``write_release`` (streamed from the group centres, read back and checked from the
file). Peak memory is what ``tracemalloc`` traces during the export alone (NumPy and pandas report
their buffers to it); the records themselves exist before. Run ``python benchmarks/bench_setvalued_export.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from _bench import machine, markdown_table
from synthetic import power_law_sets
from veil.engine import ExportOptions, PluginCall, RunResult, RunSpec, make_registry, write_release
from veil.plugins.setvalued._grouping import Grouping, grouped_sets_release
from veil.plugins.setvalued._patternka import _centres, _Records


def release_of(sets, k=100):
    groups = np.arange(sets.n_rows, dtype=np.int64) // k
    groups[groups == groups[-1]] = max(int(groups[-1]) - 1, 0) if sets.n_rows % k else groups[-1]
    g = int(groups.max()) + 1
    c = _centres(_Records(sets), groups, g)
    from veil.engine import SetValued

    grouping = Grouping(groups, SetValued(c.indptr, c.indices, sets.item_names), [], 0)
    return grouped_sets_release(sets, grouping)


def export_peak(n_records, n_items, k=100):
    sets = power_law_sets(n_records, n_items, seed=0)
    release = release_of(sets, k)
    registry = make_registry()
    spec = RunSpec(PluginCall("patternka"), PluginCall("set-k-anonymity", {"k": k}), 0)
    result = RunResult(spec, release, None, {}, 0.0, sets, sets)
    with tempfile.TemporaryDirectory() as out:
        tracemalloc.start()
        started = time.perf_counter()
        write_release(registry, result, out, ExportOptions("itemsets"))
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        written = next(p for p in Path(out).iterdir() if p.suffix == ".dat")
        tracemalloc.start()
        registry.exporter("itemsets").read_back(written)  # the streamed check alone
        read_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return sets, peak, seconds, read_peak


def table(shapes) -> str:
    rows = []
    for n, m in shapes:
        sets, peak, seconds, read_peak = export_peak(n, m)
        rows.append(
            [
                f"{n:,}",
                f"{m:,}",
                f"{sets.nnz:,}",
                f"{n * m / 2**20:,.0f}",
                f"{sets.nbytes / 2**20:,.0f}",
                f"{peak / 2**20:,.1f}",
                f"{peak / n:,.0f}",
                f"{read_peak / 2**20:,.1f}",
                f"{seconds:.1f}",
            ]
        )
    return markdown_table(
        [
            "records",
            "items",
            "items held",
            "dense frame (MiB, 1 byte a cell)",
            "the records, CSR (MiB)",
            "export peak (MiB)",
            "export peak a record (bytes)",
            "read-back check peak (MiB)",
            "export (s)",
        ],
        rows,
    )


@pytest.mark.benchmark
def test_export_memory_is_far_below_a_dense_frame():
    sets, peak, _, _ = export_peak(41_000, 4_500)
    assert peak < sets.n_rows * sets.n_items / 4


if __name__ == "__main__":
    shapes = [(102_500, 4_500), (205_000, 4_500), (410_000, 4_500), (410_000, 1_125), (410_000, 2_250)]
    if len(sys.argv) > 1:
        shapes = [(int(sys.argv[1]), int(sys.argv[2]))]
    print(machine())
    print(table(shapes))
