"""Merging classes (global recoding's roll-up): the compiled kernel and the NumPy path against a
brute-force grouping of the mapped codes, on random tables small and large, in every key regime."""

import os
import threading
from collections import Counter

import numpy as np
import pytest

from veil.engine import group_rows, merge_classes
from veil.engine.kernels import grouping


def _numpy(codes, maps, spans, size):
    return grouping._merge_numpy(codes, maps, np.maximum(np.asarray(spans, dtype=np.int64), 1), size)


WAYS = [pytest.param(merge_classes, id="merge_classes"), pytest.param(_numpy, id="numpy")]


def _random_case(rng, d, g, top):
    spans0 = rng.integers(1, top, d)
    codes = np.stack([rng.integers(0, s, g) for s in spans0]).astype(np.int32)
    maps, spans = [], []
    for s in spans0:
        if rng.random() < 0.3:
            maps.append(None)
            spans.append(int(s))
        else:
            coarse = int(rng.integers(1, s + 1))
            maps.append(rng.integers(0, coarse, s))
            spans.append(coarse)
    return codes, maps, spans, rng.integers(1, 10, g)


def _check(result, codes, maps, size):
    inverse, first, merged, merged_size = result
    mapped = np.stack([c if m is None else m[c] for c, m in zip(codes, maps)])
    keys = [tuple(r) for r in mapped.T]
    assert len(first) == len(set(keys)) == merged.shape[1] == len(merged_size)
    assert merged.dtype == np.int32 and merged_size.dtype == np.int64
    for i, k in enumerate(keys):
        assert tuple(merged[:, inverse[i]]) == k
    for c in range(len(first)):
        assert keys[first[c]] == tuple(merged[:, c])
    counts = Counter()
    for k, s in zip(keys, size):
        counts[k] += int(s)
    assert [counts[tuple(merged[:, c])] for c in range(len(first))] == merged_size.tolist()


@pytest.mark.parametrize("merge", WAYS)
def test_merged_classes_are_the_groups_of_the_mapped_codes(merge):
    rng = np.random.default_rng(7)
    regimes = {"dense": 0, "hashed": 0}
    for _ in range(150):
        d, g = int(rng.integers(1, 7)), int(rng.integers(1, 600))
        case = _random_case(rng, d, g, top=int(rng.choice([4, 40, 400])))
        _check(merge(*case), *case[:2], case[3])
        dense, _ = grouping._bounds(np.maximum(np.asarray(case[2]), 1), g)
        regimes["dense" if dense else "hashed"] += 1
    assert min(regimes.values()) > 20  # both ways of numbering the keys were exercised


@pytest.mark.parametrize("merge", WAYS)
def test_a_key_space_beyond_62_bits_still_merges_exactly(merge):
    rng = np.random.default_rng(3)
    g = 500
    codes = np.stack([rng.integers(0, 3, g) for _ in range(5)]).astype(np.int32)
    spans = [2**20] * 5  # 2¹⁰⁰ keys: the codes are small, the declared spans are not
    maps = [None] * 5
    _check(merge(codes, maps, spans, np.ones(g, dtype=np.int64)), codes, maps, np.ones(g, dtype=np.int64))


@pytest.mark.parametrize("merge", WAYS)
def test_every_column_mapped_to_one_code_merges_everything(merge):
    codes = np.array([[0, 1, 2, 1], [3, 3, 0, 1]], dtype=np.int32)
    inverse, first, merged, merged_size = merge(
        codes, [np.zeros(3, int), np.zeros(4, int)], [1, 1], np.array([1, 2, 3, 4])
    )
    assert inverse.tolist() == [0, 0, 0, 0] and merged.tolist() == [[0], [0]] and merged_size.tolist() == [10]
    assert first.tolist() in ([0], [1], [2], [3])


def test_the_compiled_kernel_merges_as_its_python_does():
    """The numba kernel's own code, run as Python, gives the compiled result (when numba is installed),
    across blocks and in both key regimes."""
    kernel = grouping.compiled()
    if kernel is None:
        pytest.skip("numba is not installed: merge_classes runs the NumPy path, tested above")
    rng = np.random.default_rng(11)
    g = 3 * grouping._BLOCK + 17
    codes = rng.integers(0, 40, (3, g)).astype(np.int32)
    flat = (np.arange(40) // 4).astype(np.int32)
    offsets = np.array([-1, 0, -1], dtype=np.int64)
    spans = np.array([40, 10, 40], dtype=np.int64)
    size = rng.integers(1, 5, g).astype(np.int64)
    for dense in (16_000, 0):
        args = (codes, flat, offsets, spans, dense, size)
        with np.errstate(over="ignore"):  # the hash wraps modulo 2⁶⁴, as the compiled code does silently
            expected = grouping._merge(*args)
        got = kernel(*args)
        count = got[-1]
        assert count == expected[-1]
        for a, b in zip(got[:-1], expected[:-1]):  # beyond ``count``, first and the sizes are scratch
            assert np.array_equal(
                a[..., :count] if a.ndim == 2 else a[:count], b[..., :count] if b.ndim == 2 else b[:count]
            )
        assert np.array_equal(got[0], expected[0])


def test_group_rows_groups_equal_rows():
    rng = np.random.default_rng(5)
    cols = [rng.integers(0, 4, 300), rng.integers(0, 3, 300)]
    inverse, first = group_rows(cols, [4, 3])
    pairs = list(zip(*cols))
    assert len(first) == len(set(pairs))
    for i, p in enumerate(pairs):
        assert pairs[first[inverse[i]]] == p


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("seed", range(6))
def test_count_units_counts_each_class_and_value(monkeypatch, compiled, seed):
    """Units of a finer table merged by ``inverse`` (or taken as they are), counted against a Counter
    of (class, value) pairs: the units value by value and within a value class by class, the matrix
    they were read from, a blank (−1) a unit of its own in row 0. Both paths, the same result."""
    if compiled and grouping.compiled_units() is None:
        pytest.skip("numba is not installed: count_units runs the NumPy path, tested beside")
    monkeypatch.setitem(grouping._WARM, "started", True)
    monkeypatch.setitem(grouping._WARM, "ready", compiled)
    rng = np.random.default_rng(seed)
    finer, classes, n_values, n = int(rng.integers(1, 60)), int(rng.integers(1, 30)), int(rng.integers(0, 6)), 200
    inverse = rng.integers(0, classes, finer) if seed % 2 else None
    unit_class = rng.integers(0, finer if inverse is not None else classes, n)
    unit_sens = rng.integers(-1, n_values, n) if n_values else np.full(n, -1)
    unit_w = rng.integers(1, 7, n).astype(np.int64)
    got_class, got_sens, got_w, counts = grouping.count_units(classes, unit_class, unit_sens, unit_w, n_values, inverse)
    expected = Counter()
    for c, s, w in zip(unit_class, unit_sens, unit_w):
        expected[(int(s), int(c if inverse is None else inverse[c]))] += int(w)
    order = sorted(expected)  # value by value, then class by class
    assert list(zip(got_sens.tolist(), got_class.tolist())) == order
    assert got_w.tolist() == [expected[k] for k in order] and got_w.dtype == np.int64
    assert counts.shape == (n_values + 1, classes)
    full = np.zeros((n_values + 1, classes))
    for (s, c), w in expected.items():
        full[s + 1, c] = w
    assert np.array_equal(counts, full)


def test_count_units_leaves_sparse_units_to_the_caller():
    """Many more (class, value) cells than units: None (the caller groups the pairs instead)."""
    one = np.zeros(1, dtype=np.int64)
    assert grouping.count_units(1 << 20, one, one, one + 1, 4) is None


def _fresh_warm_up(monkeypatch, kernels=None):
    monkeypatch.setattr(grouping, "_WARM", {"started": False, "ready": False})
    monkeypatch.setattr(grouping, "_SETTLED", threading.Event())
    if kernels is not None:
        monkeypatch.setattr(grouping, "_COMPILED", kernels)


def test_a_warm_up_that_fails_leaves_the_numpy_path(monkeypatch):
    """A kernel that cannot load (a broken cache, a compiler error) raises from warm(), and every later
    roll-up still takes the NumPy path rather than fail."""

    def broken(*args):
        raise RuntimeError("cannot load")

    _fresh_warm_up(monkeypatch, [broken, broken])
    with pytest.raises(RuntimeError, match="cannot load"):
        grouping.warm()
    assert not grouping.loaded() and grouping._SETTLED.is_set()
    codes = np.array([[0, 1, 1]], dtype=np.int32)
    inverse, first, merged, size = merge_classes(codes, [None], [2], np.ones(3, dtype=np.int64))
    assert sorted(size.tolist()) == [1, 2]
    units = grouping.count_units(2, np.array([0, 1]), np.array([0, 0]), np.array([1, 2], dtype=np.int64), 1)
    assert units[2].tolist() == [1, 2]


def test_a_fork_waits_for_a_warm_up_under_way(monkeypatch):
    """run_limited forks only once a warm-up on another thread has ended: the child sees it ended (it
    would otherwise inherit the locks the warming thread holds, with no thread to release them)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    from veil.engine.kernels.limits import run_limited

    _fresh_warm_up(monkeypatch)
    grouping._WARM["started"] = True
    settled = grouping._SETTLED
    threading.Timer(0.2, settled.set).start()
    assert run_limited(settled.is_set, (), max_seconds=30, check=None, what="test") is True
