"""BinaryMatrix against dense brute force on small random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from veil.engine import BadInput, BinaryMatrix, pack_rows, popcount, unpack_rows

dense_matrices = st.tuples(st.integers(1, 150), st.integers(1, 12)).flatmap(
    lambda s: arrays(np.uint8, s, elements=st.integers(0, 1))
)


@given(dense_matrices)
@settings(max_examples=60, deadline=None)
def test_round_trip_and_supports(dense):
    m = BinaryMatrix.from_dense(dense)
    assert np.array_equal(m.to_dense(), dense)
    assert m.nnz == dense.sum() and m.shape == dense.shape
    rng = np.random.default_rng(dense.size)
    for _ in range(5):
        items = sorted(rng.choice(dense.shape[1], rng.integers(0, dense.shape[1] + 1), replace=False).tolist())
        expected = int(np.all(dense[:, items] == 1, axis=1).sum()) if items else dense.shape[0]
        assert m.support(items) == expected


@given(st.integers(1, 300), st.data())
def test_pack_unpack(n, data):
    rows = sorted(data.draw(st.sets(st.integers(0, n - 1))))
    bits = pack_rows(np.array(rows, dtype=np.int64), n)
    assert popcount(bits) == len(rows)
    assert unpack_rows(bits, n).tolist() == rows


def test_arrays_are_read_only():
    m = BinaryMatrix.from_dense(np.eye(3, dtype=int))
    for arr in (m.indices, m.indptr, m.bitset(0)):
        with pytest.raises(ValueError):
            arr[0] = 1


def test_select_projects_in_order():
    dense = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])
    m = BinaryMatrix.from_dense(dense, features=["a", "b", "c"], labels=[1, -1, 1])
    sub = m.select([2, 0])
    assert sub.feature_names == ["c", "a"]
    assert np.array_equal(sub.to_dense(), dense[:, [2, 0]])
    assert sub.labels.tolist() == [1, -1, 1]


def test_transactions_view_and_construction():
    m = BinaryMatrix.from_transactions([[3, 1], [2], [1, 2, 3, 3]])
    assert m.feature_names == ["1", "2", "3"]
    assert m.transactions() == [[0, 2], [1], [0, 1, 2]]
    assert m.nbytes < 200


def test_non_binary_values_are_refused_with_position():
    with pytest.raises(BadInput, match="row 2, column 1 holds 2"):
        BinaryMatrix.from_dense(np.array([[1, 0], [2, 1]]))


def test_fingerprint_depends_on_content():
    a = BinaryMatrix.from_dense(np.eye(3, dtype=int))
    b = BinaryMatrix.from_dense(np.eye(3, dtype=int))
    c = BinaryMatrix.from_dense(np.eye(3, dtype=int)[::-1])
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
