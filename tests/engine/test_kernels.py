"""Support-counting kernels against brute force on random dense matrices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.engine import BinaryMatrix, pack_rows
from veil.engine.kernels import bitsets as kernels
from veil.engine.kernels.bitsets import and_popcount, support_counts


# block_words only patches a constant, so sharing it across generated inputs is intended
SHARED_FIXTURE = [HealthCheck.function_scoped_fixture]


def brute_support(dense: np.ndarray, itemsets) -> list[int]:
    return [int(dense[:, list(items)].all(axis=1).sum()) if items else len(dense) for items in itemsets]


@st.composite
def matrices_and_itemsets(draw):
    n = draw(st.integers(0, 300))
    m = draw(st.integers(1, 8))
    density = draw(st.sampled_from([0.05, 0.5, 0.95]))
    seed = draw(st.integers(0, 2**32 - 1))
    dense = np.random.default_rng(seed).random((n, m)) < density
    itemsets = draw(st.lists(st.lists(st.integers(0, m - 1), max_size=4), max_size=40))
    return dense, itemsets


@pytest.fixture(params=[(1 << 14, 1 << 16), (2, 3), (3, 7)], ids=["default-blocks", "blocks-2-3", "blocks-3-7"])
def block_words(request, monkeypatch):
    """Small blocks send short test bitsets through the blockwise path, and make runs of itemsets
    span several batches."""
    block, batch = request.param
    monkeypatch.setattr(kernels, "BLOCK_WORDS", block)
    monkeypatch.setattr(kernels, "BATCH_WORDS", batch)
    return block


@settings(max_examples=150, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(case=matrices_and_itemsets())
def test_support_counts_match_brute_force(case, block_words):
    dense, itemsets = case
    matrix = BinaryMatrix.from_dense(dense)
    got = support_counts(matrix, itemsets)
    assert got.dtype == np.int64
    assert got.tolist() == brute_support(dense, itemsets)


@settings(max_examples=150, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(n=st.integers(1, 1000), k=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_and_popcount_matches_brute_force(n, k, seed, block_words):
    rng = np.random.default_rng(seed)
    columns = rng.random((k, n)) < rng.random()
    bitsets = [pack_rows(np.flatnonzero(c), n) for c in columns]
    scratch = np.empty(7, dtype=np.uint64) if n > 500 else None  # too short: a new one is made
    assert and_popcount(*bitsets, scratch=scratch) == int(columns.all(axis=0).sum())


def test_and_popcount_leaves_its_operands_alone():
    a = np.array([0b1011, 2**64 - 1], dtype=np.uint64)
    b = np.array([0b0110, 1], dtype=np.uint64)
    before = a.copy(), b.copy()
    assert and_popcount(a, b) == 2
    assert and_popcount(a) == 3 + 64
    assert np.array_equal(a, before[0]) and np.array_equal(b, before[1])


def test_and_popcount_refuses_bitsets_of_different_lengths():
    with pytest.raises(ValueError, match="different lengths"):
        and_popcount(np.zeros(2, np.uint64), np.zeros(3, np.uint64))


def test_support_counts_agree_with_binary_matrix_support():
    rng = np.random.default_rng(3)
    matrix = BinaryMatrix.from_dense(rng.random((5000, 30)) < 0.3)
    itemsets = [rng.choice(30, size=rng.integers(0, 4), replace=False).tolist() for _ in range(200)]
    assert support_counts(matrix, itemsets).tolist() == [matrix.support(s) for s in itemsets]


@pytest.mark.parametrize("batch_words", [1, 5, 1 << 16])
def test_apriori_style_candidates_as_an_array(batch_words, monkeypatch):
    monkeypatch.setattr(kernels, "BATCH_WORDS", batch_words)
    rng = np.random.default_rng(5)
    dense = rng.random((300, 12)) < 0.4
    pairs = np.array([(a, b) for a in range(12) for b in range(a + 1, 12)])  # runs of adjacent columns
    triples = np.array([(a, b, c) for a in range(4) for b in range(a + 1, 12) for c in range(b + 1, 12)])
    matrix = BinaryMatrix.from_dense(dense)
    assert support_counts(matrix, pairs).tolist() == brute_support(dense, pairs.tolist())
    assert support_counts(matrix, triples[::-1]).tolist() == brute_support(dense, triples[::-1].tolist())
    assert support_counts(matrix, np.zeros((0, 3), dtype=np.int64)).tolist() == []


def test_support_counts_of_nothing():
    matrix = BinaryMatrix.from_dense(np.ones((3, 2)))
    assert support_counts(matrix, []).tolist() == []
    assert support_counts(matrix, [[], [0, 1], [1, 1]]).tolist() == [3, 3, 3]
    assert support_counts(matrix, (iter(s) for s in [[0], [1, 0]])).tolist() == [3, 3]  # any iterables


@pytest.mark.parametrize("bad", [[2], [0, -1]])
def test_support_counts_refuse_unknown_features(bad):
    matrix = BinaryMatrix.from_dense(np.ones((3, 2)))
    with pytest.raises(IndexError, match="out of range"):
        support_counts(matrix, [bad])


def test_a_partition_without_containment_takes_memory_in_proportion_to_the_rows():
    """Splitting 20,000 records into thousands of classes: a bitset of rows per class would take
        classes × rows / 8 bytes (tens of MB); the class index per row and the classes' patterns take far
    less. With
        containment (k-AC) the bitsets are kept, and the two partitions agree on the classes."""
    import tracemalloc

    from veil.engine import KAnonymityConstraint, partition_of

    rng = np.random.default_rng(0)
    n, d = 20_000, 14
    matrix = BinaryMatrix.from_dense(rng.random((n, d)) < 0.5)
    for f in range(d):
        matrix.bitset(f)  # the matrix's own cache, not the partition's
    tracemalloc.start()
    lean = partition_of(matrix, range(d), containment=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert lean.n_classes > 5_000 and lean.contains is None
    assert peak < lean.n_classes * n / 8 / 4  # a quarter of one bitset of rows per class
    full = partition_of(matrix, range(d))
    assert np.array_equal(full.row_classes(), lean.row_classes()) and np.array_equal(full.sizes, lean.sizes)
    assert full.contains.shape == (full.n_classes, matrix.n_words)
    with pytest.raises(ValueError):
        lean.kac()
    assert KAnonymityConstraint(matrix, 5).partition.contains is None
