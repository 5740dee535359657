"""What the desktop's set-valued views cost in memory: the Item sets summary, the records view and
the release preview, against a dense records × items matrix.

For each input the desktop holds as it does after opening it (a transaction file is a column-wise
``BinaryMatrix``; a table's column of item sets becomes a ``SetValued``), ``tracemalloc`` traces
the peak of what the views add on top of the data: ``summarise`` (counts, items per record, the
rank/frequency curve), the records view's model (``MatrixModel``) and the preview of a grouped
release (groups of 100 consecutive records, each published as its centre). NumPy reports its
buffers to ``tracemalloc``. Run ``python benchmarks/bench_setvalued_view.py`` (add ``--synthetic``
for the Netflix-shaped 410,000 × 4,500 records).
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np
import pytest

from _bench import dataset, machine, markdown_table
from synthetic import power_law_sets
from veil.engine import Release, SetValued, read_transactions

INPUTS = {
    "BMS-WebView-1": "bms_webview_1/BMS1_itemset_mining.space-separated.txt",
    "BMS-WebView-2": "bms_webview_2/BMS2_itemset_mining.txt",
    "FIMI retail": "fimi_retail/retail.dat",
    "FIMI T10I4D100K": "fimi_T10I4D100K/T10I4D100K.dat",
}


def grouped_release(sets: SetValued, k: int = 100) -> Release:
    """A release of groups of k consecutive records, each publishing its centre (the intersection)."""
    groups = np.arange(sets.n_rows, dtype=np.int64) // k
    if sets.n_rows % k and groups[-1] > 0:
        groups[groups == groups[-1]] = groups[-1] - 1
    n_groups = int(groups.max()) + 1
    csc = sets.to_sparse().tocsc()  # items × groups counts, sparse: O(items held)
    import scipy.sparse as sp

    member = sp.csr_matrix(
        (np.ones(sets.n_rows, dtype=np.int64), (groups, np.arange(sets.n_rows))), shape=(n_groups, sets.n_rows)
    )
    counts = (member @ csc).tocsr()
    sizes = np.bincount(groups)
    counts.data = (counts.data == np.repeat(sizes, np.diff(counts.indptr))).astype(np.int64)
    counts.eliminate_zeros()
    counts.sort_indices()
    centres = SetValued(counts.indptr, counts.indices, sets.item_names)
    import pandas as pd

    return Release("grouped-sets", pd.DataFrame({"group": groups}), (), groups=groups, sets=centres)


def views_peak(data, release: Release) -> tuple[int, float]:
    from veil.desktop.models import MatrixModel
    from veil.desktop.state.release_preview import preview
    from veil.desktop.state.setvalued_view import summarise

    tracemalloc.start()
    started = time.perf_counter()
    summary = summarise(data)
    model = MatrixModel(data)
    shown = preview(release)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert summary.n_ones == (data.nnz if hasattr(data, "nnz") else 0) and model.rowCount() == data.n_rows
    assert shown.n_records == data.n_rows
    return peak, seconds


def measure(name: str, data) -> list[str]:
    sets = data if isinstance(data, SetValued) else SetValued.from_binary(data)
    release = grouped_release(sets)
    peak, seconds = views_peak(data, release)
    n, m = data.n_rows, (data.n_items if isinstance(data, SetValued) else data.n_features)
    held = data.nbytes
    return [
        name,
        type(data).__name__,
        f"{n:,}",
        f"{m:,}",
        f"{data.nnz:,}",
        f"{n * m / 2**20:,.1f}",
        f"{held / 2**20:,.1f}",
        f"{peak / 2**20:,.1f}",
        f"{peak / held:.2f}",
        f"{seconds:.2f}",
    ]


HEADER = [
    "data",
    "held as",
    "records",
    "items",
    "items held",
    "dense (MiB, 1 byte a cell)",
    "sparse data (MiB)",
    "views' peak (MiB)",
    "peak / sparse data",
    "views (s)",
]


@pytest.mark.benchmark
def test_the_views_stay_near_the_size_of_the_sparse_data():
    sets = power_law_sets(20_000, 4_500, seed=0)
    peak, _ = views_peak(sets.to_binary(), grouped_release(sets))
    assert peak < 20_000 * 4_500 / 8  # far below one byte a cell


if __name__ == "__main__":
    from PySide6.QtCore import QCoreApplication

    app = QCoreApplication(sys.argv[:1])  # the records view's model is a Qt model
    rows = []
    for name, relative in INPUTS.items():
        path = dataset(relative)
        if path is not None:
            rows.append(measure(name, read_transactions(path)))
    if "--synthetic" in sys.argv:
        sets = power_law_sets(410_000, 4_500, seed=0)
        rows.append(measure("Netflix-shaped (power_law_sets)", sets))
        rows.append(measure("Netflix-shaped, as a transaction file", sets.to_binary()))
    print(machine())
    print(markdown_table(HEADER, rows))
