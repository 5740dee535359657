"""Building the BinaryMatrix of T10I4D100K with read_transactions, against reading it with pandas.

Run with ``make benchmark`` or ``python benchmarks/bench_transactions.py`` (prints markdown tables).
Times are medians of interleaved repetitions with the file in the page cache; memory is the peak
traced by ``tracemalloc`` while parsing bytes already in memory (NumPy reports its buffers to it).
"""

from __future__ import annotations

import csv
import sys
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from _bench import dataset, machine, markdown_table, median_times
from veil.engine import BinaryMatrix
from veil.engine.data.transactions import parse_transactions, read_transactions

T10 = "fimi_T10I4D100K/T10I4D100K.dat"


def build_times(path, repeats: int = 5) -> list[list[object]]:
    fields = max(len(line.split(b" ")) for line in path.read_bytes().splitlines())  # as pandas sees them
    candidates = {
        "read_transactions → BinaryMatrix": lambda: read_transactions(path),
        "pandas.read_csv, one text column of lines (Arrow strings)": lambda: pd.read_csv(
            path, header=None, names=["line"], sep="\t", quoting=csv.QUOTE_NONE
        ),
        "pandas.read_csv, one text column of lines (dtype=object)": lambda: pd.read_csv(
            path, header=None, names=["line"], sep="\t", quoting=csv.QUOTE_NONE, dtype=object
        ),
        f"pandas.read_csv, sep=' ', {fields} numeric columns": lambda: pd.read_csv(
            path, header=None, sep=" ", names=range(fields)
        ),
        "pandas lines, then str.split + explode + astype(int) (the items, no matrix yet)": lambda: (
            pd.read_csv(path, header=None, names=["line"], sep="\t", quoting=csv.QUOTE_NONE)["line"]
            .str.split()
            .explode()
            .dropna()
            .astype(int)
        ),
        "Python split + int + BinaryMatrix.from_transactions": lambda: BinaryMatrix.from_transactions(
            list(map(int, line.split())) for line in path.read_text().splitlines()
        ),
    }
    times = median_times(candidates, repeats)
    ours = times["read_transactions → BinaryMatrix"]
    return [[name, f"{t * 1e3:.1f}", f"{t / ours:.2f}×"] for name, t in times.items()]


def memory_profile(path, fractions=(0.25, 0.5, 1.0), repeats: int = 5) -> list[list[object]]:
    """Parse the first lines of the file (a share of its transactions); peak memory against ones."""
    data = path.read_bytes()
    breaks = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    rows, previous = [], None
    for fraction in fractions:
        part = data[: int(breaks[int(len(breaks) * fraction) - 1]) + 1]
        seconds = median_times({"parse": lambda: parse_transactions(part)}, repeats)["parse"]
        tracemalloc.start()
        matrix = parse_transactions(part)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        ones = matrix.nnz
        marginal = f"{(peak - previous[0]) / (ones - previous[1]):.1f}" if previous else "–"
        previous = peak, ones
        rows.append(
            [
                f"{fraction:.0%}",
                f"{matrix.n_rows:,}",
                f"{ones:,}",
                f"{len(part) / 2**20:.2f}",
                f"{matrix.nbytes / ones:.2f}",
                f"{peak / 2**20:.1f}",
                f"{peak / ones:.1f}",
                marginal,
                f"{seconds * 1e3:.1f}",
                f"{seconds / ones * 1e9:.0f}",
            ]
        )
    return rows


TIME_HEADER = ["method", "median ms", "time ÷ read_transactions"]
MEMORY_HEADER = [
    "share of file",
    "transactions",
    "ones",
    "input MiB",
    "matrix bytes per one",
    "peak traced MiB",
    "peak bytes per one",
    "extra peak bytes per extra one",
    "median ms",
    "ns per one",
]


def _ratio(rows, method: str) -> float:
    return next(float(r[2].rstrip("×")) for r in rows if r[0].startswith(method))


def _path():
    path = dataset(T10)
    if path is None:
        pytest.skip("T10I4D100K not found under ../shared/datasets")
    return path


@pytest.mark.benchmark
def test_read_transactions_against_pandas(capsys):
    rows = build_times(_path())
    with capsys.disabled():
        print("\n" + markdown_table(TIME_HEADER, rows))
    assert _ratio(rows, "pandas.read_csv, sep=' '") > 1  # faster than pandas reading the items as numbers
    assert _ratio(rows, "Python split") > 5


@pytest.mark.benchmark
def test_parse_memory_is_proportional_to_the_ones(capsys):
    rows = memory_profile(_path())
    with capsys.disabled():
        print("\n" + markdown_table(MEMORY_HEADER, rows))
    marginal = [float(r[7]) for r in rows[1:]]
    assert max(marginal) <= 1.25 * min(marginal)  # peak memory grows linearly with the ones
    assert all(float(r[4]) < 5 for r in rows)  # int32 row indices plus the column pointers


def main() -> None:
    path = dataset(T10)
    info = machine()
    print(
        f"{info['cpus']} CPUs, {info['cpu']}, Python {info['python']}, NumPy {info['numpy']}, pandas {info['pandas']}\n"
    )
    if path is None:
        print("T10I4D100K not found under ../shared/datasets")
        return
    print(markdown_table(TIME_HEADER, build_times(path)) + "\n")
    print(markdown_table(MEMORY_HEADER, memory_profile(path)))


if __name__ == "__main__":
    sys.exit(main())
