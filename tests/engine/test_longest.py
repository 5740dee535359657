"""The longest-pattern miner against brute force and against the exhaustive miner."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from veil.engine import BinaryMatrix, MiningLimit, SetValued, longest_itemsets, mine


def brute(x: np.ndarray, k: int, r: int, target: str):
    """Every frequent itemset by enumeration, filtered to closed or maximal, longest first."""
    n, m = x.shape
    frequent = {}
    for size in range(1, m + 1):
        found = False
        for items in itertools.combinations(range(m), size):
            support = int(x[:, list(items)].all(axis=1).sum())
            if support >= k:
                frequent[items] = support
                found = True
        if not found:
            break
    out = []
    for items, support in frequent.items():
        supersets = [t for t in frequent if len(t) == len(items) + 1 and set(items) <= set(t)]
        if target == "maximal" and supersets:
            continue
        if target == "closed" and any(frequent[t] == support for t in supersets):
            continue
        out.append((items, support))
    out.sort(key=lambda p: (-len(p[0]), p[0]))
    return out[:r]


@pytest.mark.parametrize("target", ["closed", "maximal"])
def test_matches_brute_force_on_random_data(target):
    rng = np.random.default_rng(7)
    for _ in range(60):
        n, m = int(rng.integers(3, 22)), int(rng.integers(1, 8))
        x = rng.random((n, m)) < rng.uniform(0.2, 0.9)
        k, r = int(rng.integers(1, 5)), int(rng.integers(1, 8))
        assert longest_itemsets(x, k, r, target=target).patterns == brute(x, k, r, target), (x.astype(int), k, r)


def test_cut_says_where_the_list_is_complete():
    x = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1], [1, 0, 1, 0], [1, 0, 1, 0]], dtype=bool)
    one = longest_itemsets(x, 2, 1)
    assert one.patterns == [((0, 1), 2)] and one.cut == 2  # (0, 2) and (2, 3) tie at length 2
    every = longest_itemsets(x, 2, 100)
    assert every.cut == 0 and len(every.patterns) == len(brute(x, 2, 100, "closed"))


def test_same_as_the_exhaustive_maximal_top_r():
    rng = np.random.default_rng(3)
    for _ in range(6):
        x = rng.random((40, 10)) < 0.45
        matrix = BinaryMatrix.from_dense(x.astype(np.uint8))
        for k in (2, 5):
            exhaustive = mine(matrix, k, "maximal", backend="numpy", largest=10)[:10]
            assert longest_itemsets(matrix, k, 10, target="maximal").patterns == exhaustive


def test_rows_restrict_the_search_and_sets_are_accepted():
    s = SetValued.from_sets([["a", "b"], ["a", "b"], ["c"], ["c"], ["c"]])
    assert longest_itemsets(s, 2).patterns == [((0, 1), 2)]
    assert longest_itemsets(s, 2, rows=[2, 3, 4]).patterns == [((2,), 3)]


def test_a_limit_ends_the_search_with_a_message():
    x = np.random.default_rng(0).random((200, 30)) < 0.5
    with pytest.raises(MiningLimit, match="stopped after visiting 5 branches"):
        longest_itemsets(x, 2, 50, max_nodes=5)
