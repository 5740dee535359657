"""AND + popcount support counting on packed bitsets, against a plain copy of the same bytes.

Run with ``make benchmark`` or ``python benchmarks/bench_kernels.py`` (prints markdown tables).
Throughput counts the bitset bytes a kernel reads; the copy reads (and writes) the same number of
bytes with ``np.copyto``. Every figure is the median of interleaved repetitions.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

from _bench import dataset, machine, markdown_table, median_times
from veil.engine.kernels.bitsets import and_popcount, support_counts
from veil.engine.data.transactions import read_transactions

TARGET = 0.25  # share of copy bandwidth the kernels must reach
BIG_WORDS = 1 << 23  # 64 MiB per operand: far beyond the 32 MiB L3 of the machine measured


def out_of_cache(repeats: int = 7) -> tuple[list[list[object]], float]:
    """AND of 2 and 3 operands of 64 MiB each, then popcount; also returns the copy's bytes/s."""
    rng = np.random.default_rng(0)
    operands = [rng.integers(0, 2**63, BIG_WORDS, dtype=np.uint64) for _ in range(3)]
    dst, tmp = np.empty(BIG_WORDS, np.uint64), np.empty(BIG_WORDS, np.uint64)
    scratch = np.empty(BIG_WORDS, np.uint64)
    rows, bandwidths = [], []
    for k in (2, 3):
        ops = operands[:k]

        def copy():
            for op in ops:
                np.copyto(dst, op)

        def straightforward():
            np.bitwise_and(ops[0], ops[1], out=tmp)
            for op in ops[2:]:
                np.bitwise_and(tmp, op, out=tmp)
            return int(np.bitwise_count(tmp).sum())

        def blockwise():
            return and_popcount(*ops, scratch=scratch)

        assert straightforward() == blockwise()
        times = median_times(
            {
                "copy (np.copyto)": copy,
                "whole-array AND, then popcount": straightforward,
                "and_popcount (blockwise)": blockwise,
            },
            repeats,
        )
        nbytes = k * BIG_WORDS * 8
        bandwidths.append(nbytes / times["copy (np.copyto)"])
        rows += _rows(f"{k} operands × 64 MiB", nbytes, times, times["copy (np.copyto)"], None)
    return rows, float(np.median(bandwidths))


def t10_itemsets(memory_copy: float, repeats: int = 5) -> list[list[object]] | None:
    """Supports over T10I4D100K's bitsets: Apriori's level-2 candidates, and scattered triples."""
    path = dataset("fimi_T10I4D100K/T10I4D100K.dat")
    if path is None:
        return None
    matrix = read_transactions(path)
    counts = matrix.column_counts()
    frequent = np.flatnonzero(counts >= 0.005 * matrix.n_rows).tolist()
    top = np.argsort(counts, kind="stable")[::-1][:150].tolist()
    rng = np.random.default_rng(1)
    cases = {
        f"Apriori level 2, minsup 0.5 %: all pairs of {len(frequent)} frequent items": (
            frequent,
            np.array(list(itertools.combinations(frequent, 2))),
        ),
        "10,000 random triples of the 150 most frequent items (no shared prefixes)": (
            top,
            np.array([rng.choice(top, 3, replace=False) for _ in range(10_000)]),
        ),
    }
    rows = []
    for label, (columns, itemsets) in cases.items():
        working_set = matrix.bitsets(columns)  # also packs and caches the bitsets before timing
        dst = np.empty_like(working_set)
        nbytes = itemsets.size * matrix.n_words * 8
        copies = max(1, round(nbytes / working_set.nbytes))
        as_lists = itemsets.tolist()

        def copy():
            for _ in range(copies):
                np.copyto(dst, working_set)

        def one_by_one():
            return [matrix.support(s) for s in as_lists]

        def batched():
            return support_counts(matrix, itemsets)

        assert batched().tolist() == one_by_one()
        times = median_times(
            {
                "copy of the bitsets read (np.copyto)": copy,
                "BinaryMatrix.support, one by one": one_by_one,
                "support_counts": batched,
            },
            repeats,
        )
        cache_copy = times["copy of the bitsets read (np.copyto)"] * nbytes / (copies * working_set.nbytes)
        times["copy of the bitsets read (np.copyto)"] = cache_copy
        case = (
            f"{label}: {len(itemsets):,} itemsets, {nbytes / 2**30:.2f} GiB read, "
            f"working set {working_set.nbytes / 2**20:.1f} MiB"
        )
        rows += _rows(case, nbytes, times, cache_copy, memory_copy)
    return rows


def _rows(case: str, nbytes: int, times: dict[str, float], cache_copy: float, memory_copy: float | None):
    """Fractions of the copy bandwidth, against the copy in this case and against a main-memory copy."""
    out = []
    for name, t in times.items():
        rate = nbytes / t
        vs_memory = f"{rate / memory_copy:.0%}" if memory_copy else f"{cache_copy / t:.0%}"
        out.append([case, name, f"{t * 1e3:.1f}", f"{rate / 1e9:.2f}", f"{cache_copy / t:.0%}", vs_memory])
    return out


HEADER = ["case", "method", "median ms", "GB/s read", "of this case's copy", "of main-memory copy"]


def _fractions(rows, method: str, column: int = 4) -> list[float]:
    return [float(r[column].rstrip("%")) / 100 for r in rows if r[1] == method]


@pytest.fixture(scope="module")
def out_of_cache_results():
    return out_of_cache()


@pytest.mark.benchmark
def test_and_popcount_out_of_cache(out_of_cache_results, capsys):
    rows, _ = out_of_cache_results
    with capsys.disabled():
        print("\n" + markdown_table(HEADER, rows))
    assert min(_fractions(rows, "and_popcount (blockwise)")) >= TARGET


@pytest.mark.benchmark
def test_support_counts_on_t10i4d100k(out_of_cache_results, capsys):
    rows = t10_itemsets(out_of_cache_results[1])
    if rows is None:
        pytest.skip("T10I4D100K not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEADER, rows))
    apriori = [r for r in rows if r[0].startswith("Apriori") and r[1] == "support_counts"]
    assert float(apriori[0][4].rstrip("%")) / 100 >= TARGET  # against the cache-resident copy
    assert min(_fractions(rows, "support_counts", column=5)) >= TARGET  # against main memory


def main() -> None:
    info = machine()
    print(f"{info['cpus']} CPUs, {info['cpu']}, Python {info['python']}, NumPy {info['numpy']}\n")
    rows, memory_copy = out_of_cache()
    rows += t10_itemsets(memory_copy) or [["T10I4D100K not found", "", "", "", "", ""]]
    print(markdown_table(HEADER, rows))


if __name__ == "__main__":
    sys.exit(main())
