"""The longest-pattern miner against brute force and against the exhaustive miner."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from veil.engine import (
    CLOSED_ITEMSETS,
    MAXIMAL_ITEMSETS,
    BadInput,
    BinaryMatrix,
    Cancelled,
    MiningLimit,
    SearchOptions,
    SetValued,
    have_pyfim,
    longest_itemsets,
    mine,
)
from veil.engine.kernels.longest_dfs import NO_LIMIT, have_numba

BACKENDS = [
    "python",
    "dfs",
    pytest.param("pyfim", marks=pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed")),
]
ONE = SearchOptions(threads=1)


def threads(n: int | str, **more) -> SearchOptions:
    """Options for a search split between ``n`` threads whatever its size."""
    return SearchOptions(threads=int(n), parallel_entries=0, **more)


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
        if target == MAXIMAL_ITEMSETS and supersets:
            continue
        if target == CLOSED_ITEMSETS and any(frequent[t] == support for t in supersets):
            continue
        out.append((items, support))
    out.sort(key=lambda p: (-len(p[0]), p[0]))
    return out[:r]


def varied(rng, rows: tuple, cols: tuple, density: tuple, slope: tuple) -> np.ndarray:
    """A random 0/1 matrix with records of very different lengths (a density drawn per record) and items
    of very different supports (a falling profile over the items, in random order)."""
    n, m = int(rng.integers(*rows)), int(rng.integers(*cols))
    return rng.random((n, m)) < rng.uniform(*density, size=(n, 1)) * np.linspace(*slope, m)[rng.permutation(m)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("target", [CLOSED_ITEMSETS, MAXIMAL_ITEMSETS])
def test_matches_brute_force_on_random_data(target, backend):
    rng = np.random.default_rng(7)
    for _ in range(60):
        n, m = int(rng.integers(3, 22)), int(rng.integers(1, 8))
        x = rng.random((n, m)) < rng.uniform(0.2, 0.9)
        k, r = int(rng.integers(1, 5)), int(rng.integers(1, 8))
        found = longest_itemsets(x, k, r, target=target, backend=backend)
        expected = brute(x, k, r, target)
        assert found.patterns == expected, (x.astype(int), k, r)
        assert found.cut == (len(expected[-1][0]) if len(expected) == r else 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cut_says_where_the_list_is_complete(backend):
    x = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1], [1, 0, 1, 0], [1, 0, 1, 0]], dtype=bool)
    one = longest_itemsets(x, 2, 1, backend=backend)
    assert one.patterns == [((0, 1), 2)] and one.cut == 2  # (0, 2) and (2, 3) tie at length 2
    every = longest_itemsets(x, 2, 100, backend=backend)
    assert every.cut == 0 and len(every.patterns) == len(brute(x, 2, 100, CLOSED_ITEMSETS))


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_as_the_exhaustive_maximal_top_r(backend):
    rng = np.random.default_rng(3)
    for _ in range(6):
        x = rng.random((40, 10)) < 0.45
        matrix = BinaryMatrix.from_dense(x.astype(np.uint8))
        for k in (2, 5):
            exhaustive = mine(matrix, k, MAXIMAL_ITEMSETS, backend="numpy", largest=10)[:10]
            assert longest_itemsets(matrix, k, 10, target=MAXIMAL_ITEMSETS, backend=backend).patterns == exhaustive


@pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed")
@pytest.mark.parametrize("gram_rows, carpenter_rows", [(4000, 1000), (60, 40)])
def test_backends_agree_on_long_patterns_among_many_records(gram_rows, carpenter_rows, monkeypatch):
    """Records of very different lengths (the row and overlap cuts of the C path matter here); with
    small thresholds the overlap cut covers only the longest records and FP-growth takes over."""
    from veil.engine.kernels import longest_fim

    monkeypatch.setattr(longest_fim, "GRAM_ROWS", gram_rows)
    monkeypatch.setattr(longest_fim, "CARPENTER_ROWS", carpenter_rows)
    rng = np.random.default_rng(11)
    for _ in range(4):
        n, m = 160, 20
        x = rng.random((n, m)) < rng.uniform(0.05, 0.6, size=(n, 1)) * np.linspace(1.4, 0.3, m)
        for k, r, target in ((2, 5, CLOSED_ITEMSETS), (4, 12, MAXIMAL_ITEMSETS), (10, 3, CLOSED_ITEMSETS)):
            a = longest_itemsets(x, k, r, target=target, backend="python")
            b = longest_itemsets(x, k, r, target=target, backend="pyfim")
            assert (a.patterns, a.cut) == (b.patterns, b.cut)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_restrict_the_search_and_sets_are_accepted(backend):
    s = SetValued.from_sets([["a", "b"], ["a", "b"], ["c"], ["c"], ["c"]])
    assert longest_itemsets(s, 2, backend=backend).patterns == [((0, 1), 2)]
    assert longest_itemsets(s, 2, rows=[2, 3, 4], backend=backend).patterns == [((2,), 3)]


def test_a_limit_ends_the_search_with_a_message():
    x = np.random.default_rng(0).random((200, 30)) < 0.5
    with pytest.raises(MiningLimit, match="stopped after visiting 5 branches"):
        longest_itemsets(x, 2, 50, max_nodes=5, backend="python")
    with pytest.raises(BadInput, match="unknown longest-pattern backend"):
        longest_itemsets(x, 2, 50, backend="java")


def _hard():
    """Dense enough that enumerating every closed itemset at support 2 takes minutes."""
    return np.random.default_rng(1).random((3000, 60)) < 0.5


@pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed")
def test_the_c_search_is_ended_by_its_limits():
    x = _hard()
    with pytest.raises(MiningLimit, match="stopped after 0.5 s without finishing"):
        longest_itemsets(x, 2, 10**9, max_seconds=0.5, backend="pyfim")
    with pytest.raises(MiningLimit, match="more than 100 patterns"):
        longest_itemsets(x[:300, :12], 2, 10**9, max_nodes=100, backend="pyfim")

    calls = []

    def cancel():
        calls.append(1)
        if len(calls) > 2:
            raise Cancelled("cancelled")

    with pytest.raises(Cancelled):
        longest_itemsets(x, 2, 10**9, check=cancel, backend="pyfim")


@pytest.mark.parametrize(
    "backend",
    ["numpy", pytest.param("pyfim", marks=pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed"))],
)
def test_the_exhaustive_miner_is_ended_by_its_time_limit(backend):
    matrix = BinaryMatrix.from_dense(_hard().astype(np.uint8))
    with pytest.raises(MiningLimit, match="the itemset miner stopped after 0.5 s"):
        mine(matrix, 2, MAXIMAL_ITEMSETS, backend=backend, max_seconds=0.5)


def test_the_compiled_search_matches_brute_force_on_varied_shapes():
    """Records of very different lengths, items of very different supports, many ties at the cut, the
    caller's max_length bound (an upper bound of the longest length), closed and maximal."""
    rng = np.random.default_rng(23)
    for trial in range(40):
        x = varied(rng, (5, 60), (2, 11), (0.1, 0.95), (1.3, 0.4))
        k, r = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        for target in (CLOSED_ITEMSETS, MAXIMAL_ITEMSETS):
            expected = brute(x, k, r, target)
            longest = len(expected[0][0]) if expected else 0
            for bound in (None, longest + int(rng.integers(0, 3))):
                found = longest_itemsets(x, k, r, target=target, backend="dfs", max_length=bound)
                assert found.patterns == expected, (trial, target, bound)
                assert found.cut == (len(expected[-1][0]) if len(expected) == r else 0)


@pytest.mark.skipif(not have_numba(), reason="numba not installed: the plain-Python kernel is too slow for this size")
def test_the_compiled_search_agrees_with_the_c_miners_on_many_records():
    """Power-law records (the Netflix shape, small): the compiled search against pyfim's and the Python
    search's answers, at supports where the floor falls several times."""
    from benchmarks.synthetic import power_law_sets

    sets = power_law_sets(1500, 60, mean_items=12.0, seed=4)
    for k, r, target in ((10, 8, CLOSED_ITEMSETS), (25, 40, CLOSED_ITEMSETS), (10, 20, MAXIMAL_ITEMSETS)):
        a = longest_itemsets(sets, k, r, target=target, backend="dfs")
        b = longest_itemsets(sets, k, r, target=target, backend="pyfim" if have_pyfim() else "python")
        assert (a.patterns, a.cut) == (b.patterns, b.cut)
        assert a.patterns and len(a.patterns[0][0]) >= 2


def test_the_compiled_search_is_ended_by_its_limits():
    x = _hard()
    with pytest.raises(MiningLimit, match="stopped after visiting 50 branches"):
        longest_itemsets(x, 2, 10**6, max_nodes=50, backend="dfs")
    with pytest.raises(MiningLimit, match="stopped after 0.5 s without finishing"):
        longest_itemsets(x, 2, 10**6, max_seconds=0.5, backend="dfs")


@pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed")
@pytest.mark.parametrize("speculate, sparse", [(1, 8), (1, 0), (10**9, 8)])
@pytest.mark.parametrize("weighted", [0, 63])
@pytest.mark.parametrize("target", [CLOSED_ITEMSETS, MAXIMAL_ITEMSETS])
def test_fp_growth_paths_match_brute_force(target, weighted, speculate, sparse, monkeypatch):
    """FP-growth forced (no row enumeration): one run at floor 1 (speculate = 1) or the count-only run
    first; items handed to pyfim as bit weights (weighted = 63) or as their codes (0)."""
    from veil.engine.kernels import longest_fim

    monkeypatch.setattr(longest_fim, "CARPENTER_ROWS", 0)
    monkeypatch.setattr(longest_fim, "SPECULATE_PATTERNS", speculate)
    monkeypatch.setattr(longest_fim, "SPARSE_LENGTH", sparse)
    monkeypatch.setattr(longest_fim, "WEIGHTED_ITEMS", weighted)
    rng = np.random.default_rng(23)
    for _ in range(30):
        n, m = int(rng.integers(3, 22)), int(rng.integers(1, 8))
        x = rng.random((n, m)) < rng.uniform(0.2, 0.9)
        k, r = int(rng.integers(1, 5)), int(rng.integers(1, 12))
        found = longest_itemsets(x, k, r, target=target, backend="pyfim")
        expected = brute(x, k, r, target)
        assert found.patterns == expected, (x.astype(int), k, r)
        assert found.cut == (len(expected[-1][0]) if len(expected) == r else 0)


@pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed")
def test_many_items_order_across_bit_words(monkeypatch):
    """More than 64 items (items reach pyfim as codes; the answer's bitsets take several words, packed
    all at once or two rows at a time), sparse records, both miners; r = 10⁵ asks for every pattern."""
    from veil.engine.kernels import longest_fim

    rng = np.random.default_rng(5)
    x = rng.random((70, 150)) < 0.05
    x[:25, 60:72] |= rng.random((25, 12)) < 0.7  # long patterns across the first word boundary
    x[25:50, 120:134] |= rng.random((25, 14)) < 0.7
    for k, r, target in ((3, 40, CLOSED_ITEMSETS), (4, 25, MAXIMAL_ITEMSETS), (3, 10**5, CLOSED_ITEMSETS)):
        a = longest_itemsets(x, k, r, target=target, backend="python")
        for carpenter_rows, pack_cells in itertools.product((0, 1000), (1 << 24, 300)):
            monkeypatch.setattr(longest_fim, "CARPENTER_ROWS", carpenter_rows)
            monkeypatch.setattr(longest_fim, "PACK_CELLS", pack_cells)  # 300: two rows packed at a time
            b = longest_itemsets(x, k, r, target=target, backend="pyfim")
            assert (a.patterns, a.cut) == (b.patterns, b.cut), (k, r, target, carpenter_rows, pack_cells)


@pytest.mark.skipif(not have_pyfim(), reason="pyfim not installed")
@pytest.mark.parametrize("target", [CLOSED_ITEMSETS, MAXIMAL_ITEMSETS])
def test_many_short_records_with_a_few_long_ones(target, monkeypatch):
    """Row enumeration at the first floor (few long records), yet short records on average: with many
    patterns wanted, one FP-growth run at floor 1 (sparse = 8) gives what the floors give (sparse = 0)."""
    from veil.engine.kernels import longest_fim

    monkeypatch.setattr(longest_fim, "CARPENTER_ROWS", 100)
    rng = np.random.default_rng(17)
    x = np.zeros((310, 40), dtype=bool)
    for i in range(300):
        x[i, rng.choice(40, size=int(rng.integers(1, 4)), replace=False)] = True
    x[300:, :15] = rng.random((10, 15)) < 0.85
    a = longest_itemsets(x, 2, 10**5, target=target, backend="python")
    for sparse in (8, 0):
        monkeypatch.setattr(longest_fim, "SPARSE_LENGTH", sparse)
        b = longest_itemsets(x, 2, 10**5, target=target, backend="pyfim")
        assert (a.patterns, a.cut) == (b.patterns, b.cut), sparse
        assert b.nodes == 1 if sparse else b.nodes > 1  # one C run, or several floors


def test_the_first_floor_search_matches_a_descent_one_by_one():
    """The floor search (doubling steps, then halving) finds what trying every floor downwards finds."""
    from veil.engine.kernels import longest_fim

    rng = np.random.default_rng(1)
    for _ in range(200):
        x = rng.random((int(rng.integers(2, 60)), int(rng.integers(1, 30)))) < rng.uniform(0.05, 0.9)
        m = sp.csr_matrix(x)
        k, z = int(rng.integers(1, 6)), int(rng.integers(1, 35))
        row_of = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
        floor = z
        while floor > 1 and longest_fim._reachable(m, row_of, k, floor) is None:
            floor -= 1
        expected = (floor, longest_fim._reachable(m, row_of, k, floor))
        assert longest_fim._first_floor(m, row_of, k, z) == expected


@pytest.mark.parametrize("parts", [2, 3])
def test_the_search_split_between_threads_finds_the_same_patterns(parts):
    """The root's branches split between threads (every ``parts``-th to one): the same patterns and cut
    as brute force and as one thread, closed and maximal, on shapes where the floor falls."""
    rng = np.random.default_rng(41)
    for trial in range(25):
        x = varied(rng, (5, 60), (2, 11), (0.1, 0.95), (1.3, 0.4))
        k, r = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        for target in (CLOSED_ITEMSETS, MAXIMAL_ITEMSETS):
            split = longest_itemsets(x, k, r, target=target, backend="dfs", options=threads(parts))
            whole = longest_itemsets(x, k, r, target=target, backend="dfs", options=ONE)
            assert split.patterns == whole.patterns == brute(x, k, r, target), (trial, target)
            assert split.cut == whole.cut
    if have_numba():
        from benchmarks.synthetic import power_law_sets

        sets = power_law_sets(1500, 60, mean_items=12.0, seed=4)
        split = longest_itemsets(sets, 10, 20, target=CLOSED_ITEMSETS, backend="dfs", options=threads(parts))
        whole = longest_itemsets(sets, 10, 20, target=CLOSED_ITEMSETS, backend="dfs", options=ONE)
        assert (split.patterns, split.cut) == (whole.patterns, whole.cut)


@pytest.mark.skipif(not have_numba(), reason="numba not installed: the plain-Python kernel is too slow for this size")
def test_branches_on_bit_masks_and_on_item_lists_find_the_same_patterns():
    """Branches with at most 64 candidates run on one bit mask a record, those with at most
    ``mask_words`` words of them on that many words, the others on item lists: on 600 items, where some
    root children have more than four words of candidates, every kind meets in one search when
    ``mask_words`` is 1 or 2, and branches of several words when it is the default; the patterns and
    cut are the same for each, and those of pyfim where it takes seconds (maximal, and closed at the
    higher support)."""
    from benchmarks.synthetic import power_law_sets

    sets = power_law_sets(3000, 600, mean_items=30.0, exponent=0.4, seed=9)
    for k, r, target in ((8, 30, CLOSED_ITEMSETS), (20, 10, CLOSED_ITEMSETS), (20, 10, MAXIMAL_ITEMSETS)):
        found = [
            longest_itemsets(sets, k, r, target=target, backend="dfs", options=SearchOptions(mask_words=words))
            for words in (1, 2, SearchOptions().mask_words)
        ]
        assert len({(repr(f.patterns), f.cut) for f in found}) == 1, (k, target)
        assert len(found[0].patterns[0][0]) >= 3
        if have_pyfim() and k == 20:
            c = longest_itemsets(sets, k, r, target=target, backend="pyfim")
            assert (found[0].patterns, found[0].cut) == (c.patterns, c.cut)
    # the root's child of item c has as candidates the items before c (in falling support) that k of
    # c's records hold: more than four words of them for some c at k = 8
    x = sets.to_sparse().astype(np.int32)
    support = np.asarray(x.sum(axis=0)).ravel()
    rank = np.argsort(np.argsort(-support, kind="stable"), kind="stable")
    together = (x.T @ x).toarray()
    before = rank[None, :] < rank[:, None]
    assert ((together >= 8) & before).sum(axis=1).max() > 4 * 64


@pytest.mark.skipif(not have_numba() or not have_pyfim(), reason="needs numba (size) and pyfim (the reference)")
def test_children_peeled_on_their_parents_columns_find_the_patterns_of_pyfim():
    """A child of a bit-mask branch is peeled on its parent's columns and copied only if its peel leaves
    it k records: the patterns and cut of pyfim, closed and maximal, on random shapes of up to 90 items
    (one-word children of one-word branches; one-word and wider children of wider branches with
    ``mask_words`` at least 2) and on power-law records of 600 items, where wider children of wider
    branches meet too (a wider child keeping the bits above its own fails it)."""
    from benchmarks.synthetic import power_law_sets

    rng = np.random.default_rng(13)
    cases = [(power_law_sets(3000, 600, mean_items=30.0, exponent=0.4, seed=9), 20, 10)]
    for _ in range(12):
        n, m = int(rng.integers(50, 400)), int(rng.integers(20, 90))
        x = rng.random((n, m)) < rng.uniform(0.2, 0.7) * rng.uniform(0.3, 1, m)
        cases.append((x, int(rng.integers(2, 12)), int(rng.integers(1, 20))))
    for i, (x, k, r) in enumerate(cases):
        for target in (CLOSED_ITEMSETS, MAXIMAL_ITEMSETS):
            c = longest_itemsets(x, k, r, target=target, backend="pyfim")
            for words in (1, 2, SearchOptions().mask_words):
                got = longest_itemsets(x, k, r, target=target, backend="dfs", options=SearchOptions(mask_words=words))
                assert (got.patterns, got.cut) == (c.patterns, c.cut), (i, target, words)


def _pair_prunes(monkeypatch) -> list:
    """The pair-graph prunes of every compiled search from now on, one count a search at each floor."""
    from veil.engine.kernels import longest_dfs

    prunes = []
    run = longest_dfs._run

    def counting(*args, **kwargs):
        st, found, reach = run(*args, **kwargs)
        prunes.append(int(st[longest_dfs.PRUNED]))
        return st, found, reach

    monkeypatch.setattr(longest_dfs, "_run", counting)
    return prunes


@pytest.mark.parametrize("target", [CLOSED_ITEMSETS, MAXIMAL_ITEMSETS])
def test_branches_too_short_to_emit_skip_the_closure_check_and_change_no_pattern(target):
    """A bit-mask branch too short to be emitted is not checked for a closure item it may not use (the
    check reads whole records and only prunes): on records with nested items (an item held wherever two
    others are), where that check would prune whole subtrees, the patterns are brute force's."""
    rng = np.random.default_rng(23)
    for _trial in range(40):
        x = varied(rng, (10, 60), (6, 13), (0.3, 0.9), (1.2, 0.4))
        for _ in range(int(rng.integers(1, 4))):  # nest: item u held wherever items a and b are
            a, b, u = rng.choice(x.shape[1], 3, replace=False)
            x[:, u] |= x[:, a] & x[:, b]
        k, r = int(rng.integers(2, 6)), int(rng.integers(1, 12))
        got = longest_itemsets(x, k, r, target=target, backend="dfs", options=ONE)
        assert got.patterns == brute(x, k, r, target), (k, r)


def test_the_bit_mask_columns_are_the_records_holding_each_bit():
    """A bit-mask branch counts and pairs its items on columns (the records holding each bit, as bit sets)
    made by 64 × 64 bit transposes: every bit of every column against the masks, for record counts on
    and off a word's edge."""
    from veil.engine.kernels.dfs_masks import _columns
    from veil.engine.kernels.dfs_state import WORD

    rng = np.random.default_rng(3)
    for n in (1, 63, 64, 65, 200, 1000):
        masks = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n).astype(np.uint64)
        masks[rng.random(n) < 0.1] = np.uint64(2**64 - 1)
        cols = np.full((WORD, (n + 63) // 64 + 1), 7, dtype=np.uint64)  # one spare word, left alone
        _columns(masks, n, cols)
        held = (masks[:, None] >> np.arange(WORD, dtype=np.uint64)) & np.uint64(1)  # record × bit
        bits = np.unpackbits(cols[:, :-1].view(np.uint8), axis=1, bitorder="little")[:, :n]  # bit × record
        assert (bits.T == held).all(), n
        assert (cols[:, -1] == 7).all()
        assert (np.unpackbits(cols[:, :-1].view(np.uint8), axis=1, bitorder="little")[:, n:] == 0).all()


def test_the_pair_graph_joins_exactly_the_items_k_live_records_hold_together():
    """A bit-mask branch's pair graph, whose pairs are counted on the columns except where the two items'
    counts alone prove k shared records (c + c' - n ≥ k): against the pairs counted by brute force, on
    records where that shortcut decides many pairs and others it must leave to the count."""
    from veil.engine.kernels.dfs_masks import _adjacency, _columns
    from veil.engine.kernels.dfs_state import WORD

    rng = np.random.default_rng(17)
    shortcut = counted = 0
    for trial in range(60):
        n = int(rng.integers(5, 300))
        dense = rng.uniform(0.3, 0.98, WORD)
        held = rng.random((n, WORD)) < dense  # record × bit
        masks = (held.astype(np.uint64) << np.arange(WORD, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
        cols = np.zeros((WORD, (n + 63) // 64), dtype=np.uint64)
        _columns(masks, n, cols)
        alive_rows = rng.random(n) < rng.uniform(0.5, 1.0)
        alive = np.packbits(alive_rows, bitorder="little")
        alive = np.pad(alive, (0, cols.shape[1] * 8 - len(alive))).view(np.uint64).copy()
        live_bits = rng.random(WORD) < 0.8
        live = np.uint64(sum(1 << b for b in range(WORD) if live_bits[b]))
        n_alive = int(alive_rows.sum())
        cnt = held[alive_rows].sum(axis=0).astype(np.int64)
        k = int(rng.integers(1, max(2, n_alive)))
        adj = np.full(WORD, 99, dtype=np.uint64)
        _adjacency(cols, alive, cols.shape[1], n_alive, k, live, cnt, adj)
        together = held[alive_rows].T.astype(np.int64) @ held[alive_rows].astype(np.int64)
        for b in range(WORD):
            want = sum(
                1 << b2 for b2 in range(WORD) if b2 != b and live_bits[b] and live_bits[b2] and together[b, b2] >= k
            )
            assert int(adj[b]) == want, (trial, b)
            for b2 in range(b + 1, WORD):
                if live_bits[b] and live_bits[b2]:
                    if cnt[b] + cnt[b2] - n_alive >= k:
                        shortcut += 1
                    else:
                        counted += 1
    assert shortcut > 1000 and counted > 1000  # both ways of deciding a pair were exercised


@pytest.mark.parametrize("target", [CLOSED_ITEMSETS, MAXIMAL_ITEMSETS])
def test_the_item_pair_bounds_change_no_pattern(target, monkeypatch):
    """The bit-mask branches' pair graph (items held together by k records): dropping items with too few
    neighbours, ending branches coloured in too few classes and skipping children finds the same patterns
    and cut as brute force (and as pyfim on power-law records), where it bites."""
    prunes = _pair_prunes(monkeypatch)
    rng = np.random.default_rng(59)
    bitten = 0
    for _trial in range(40):
        x = varied(rng, (8, 70), (4, 12), (0.3, 0.95), (1.2, 0.5))
        k, r = int(rng.integers(2, 9)), int(rng.integers(1, 10))
        prunes.clear()
        got = longest_itemsets(x, k, r, target=target, backend="dfs", options=ONE)
        assert got.patterns == brute(x, k, r, target), (k, r)
        bitten += sum(prunes) > 0
    assert bitten >= 3  # the bounds were exercised, not only there
    if have_numba():
        from benchmarks.synthetic import power_law_sets

        sets = power_law_sets(
            2000, 100, mean_items=14.0, exponent=0.4, seed=11
        )  # items past bit 64: both kinds of branch
        prunes.clear()
        pairs = longest_itemsets(sets, 10, 20, target=target, backend="dfs")
        assert sum(prunes) > 0
        if have_pyfim():
            c = longest_itemsets(sets, 10, 20, target=target, backend="pyfim")
            assert (pairs.patterns, pairs.cut) == (c.patterns, c.cut)


def _frequent_itemsets(x: np.ndarray, k: int):
    """Every frequent itemset of a small 0/1 matrix, as (items, support)."""
    n, m = x.shape
    out = []
    for size in range(1, m + 1):
        found = False
        for items in itertools.combinations(range(m), size):
            if x[:, list(items)].all(axis=1).sum() >= k:
                out.append(items)
                found = True
        if not found:
            break
    return out


def _closed(x: np.ndarray, itemsets):
    """The closed ones among itemsets of x: no other item is held by every record holding them."""
    out = []
    for items in itemsets:
        holding = x[:, list(items)].all(axis=1)
        if x[holding].all(axis=0).sum() == len(items):
            out.append(items)
    return out


@pytest.mark.parametrize("deep", [False, True, 2])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_carried_length_bounds_hold_for_every_closed_itemset_of_every_later_subset(n_threads, deep):
    """What a search proves (LengthBounds.below: every closed frequent itemset whose greatest item, in
    the fixed order, is x is shorter than below[x]) holds, by enumeration, on the searched records and
    on random subsets of them; later searches that use it find what fresh searches find; and a deep
    first search's bounds are exact: one more than the longest closed pattern ending in each item; two
    lengths deep, at most two below the r-th pattern's length where that is more, and never above
    (often below) what a shallow search proves."""
    from veil.engine import LengthBounds

    options = threads(n_threads)
    rng = np.random.default_rng(53)
    checked = exact = deeper = 0
    for trial in range(40):
        x = varied(rng, (6, 50), (2, 10), (0.1, 0.95), (1.3, 0.4))
        n, m = x.shape
        k, r = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        bounds = LengthBounds(deep=deep)
        rows = np.arange(n)
        first = True
        while len(rows) >= k:
            got = longest_itemsets(x, k, r, rows=rows, backend="dfs", bounds=bounds, options=options)
            fresh = longest_itemsets(x, k, r, rows=rows, backend="dfs", options=options)
            assert (got.patterns, got.cut) == (fresh.patterns, fresh.cut), (trial, rows)
            if bounds.order is None:
                break  # nothing frequent, nothing to carry
            position = np.empty(m, dtype=np.int64)
            position[bounds.order] = np.arange(m)
            for later in (rows, rows[rng.random(len(rows)) < 0.6]):
                for items in _closed(x[later], _frequent_itemsets(x[later], k)):
                    last = bounds.order[max(position[list(items)])]
                    assert len(items) < bounds.below[last], (trial, items, bounds.below)
                    checked += 1
            frequent = x[rows].sum(axis=0) >= k
            held = x[rows][:, frequent]
            if deep and first and not held[held.any(axis=1)].all(axis=0).any():  # no pattern at the root
                longest = np.zeros(m, dtype=np.int64)
                for items in _closed(x[rows], _frequent_itemsets(x[rows], k)):
                    last = bounds.order[max(position[list(items)])]
                    longest[last] = max(longest[last], len(items))
                if deep is True:
                    assert bounds.below[frequent].tolist() == (longest[frequent] + 1).tolist(), trial
                elif (bounds.below[frequent] < NO_LIMIT).all():  # else the root held a pattern at its peel's length
                    shallow = LengthBounds()
                    longest_itemsets(x, k, r, rows=rows, backend="dfs", bounds=shallow, options=options)
                    r_th = len(got.patterns[r - 1][0]) if len(got.patterns) >= r else 1
                    most = np.maximum(longest + 1, max(r_th - deep, 1))
                    assert (bounds.below[frequent] <= most[frequent]).all(), trial
                    assert (bounds.below <= shallow.below).all(), trial
                    deeper += int((bounds.below < shallow.below).sum())
                exact += 1
            first = False
            rows = rows[rng.random(len(rows)) < 0.7]  # some records go, as PatternKa's groups do
    assert checked > 1000
    assert exact > 10 or not deep
    assert deeper > 10 or deep in (False, True), deeper


@pytest.mark.skipif(not have_numba(), reason="numba not installed: the plain-Python kernel is too slow for this size")
def test_threads_sharing_a_root_childs_children_find_the_same_patterns_and_prove_true_bounds(monkeypatch):
    """A thread with no root child left helps another with its own: each searches a copy of the child's
    masks and they take its children from one counter. Here every thread helps first
    (``SearchOptions.help_first``), so that it happens hundreds of times: the same patterns and cut as one
    thread, closed and maximal, shallow, two deep and deep; bounds never below the exact ones (a deep
    search on one thread: one more than the longest closed pattern ending in each item), and exactly
    those when deep; later searches with the carried bounds find what fresh ones find."""
    from benchmarks.synthetic import power_law_sets
    from veil.engine import LengthBounds
    from veil.engine.kernels import longest_dfs

    helped = []
    run = longest_dfs._run

    def counting(*args, **kwargs):
        st, found, reach = run(*args, **kwargs)
        helped.append(int(st[longest_dfs.HELPED]))
        return st, found, reach

    monkeypatch.setattr(longest_dfs, "_run", counting)
    rng = np.random.default_rng(7)
    for seed in range(9):
        sets = power_law_sets((1500, 3000, 6000)[seed % 3], 80, mean_items=14.0, seed=seed)
        k, r = (5, 10, 20)[seed % 3], 20

        def search(n_threads, rows=None, **kwargs):
            options = threads(n_threads, help_first=True)
            got = longest_itemsets(sets, k, r, rows=rows, backend="dfs", options=options, **kwargs)
            return got.patterns, got.cut

        for target in (CLOSED_ITEMSETS, MAXIMAL_ITEMSETS):
            assert search("2", target=target) == search("1", target=target), (seed, target)
        exact = LengthBounds(deep=True)
        search("1", bounds=exact)
        for deep in (False, 2, True):
            bounds = LengthBounds(deep=deep)
            assert search("2", bounds=bounds) == search("1"), (seed, deep)
            assert (bounds.below >= exact.below).all(), (seed, deep)
            if deep is True:
                assert bounds.below.tolist() == exact.below.tolist(), seed
            rows = np.flatnonzero(rng.random(sets.n_rows) < 0.8)
            assert search("2", rows, bounds=bounds) == search("1", rows), (seed, deep)
    assert sum(helped) > 100, helped


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_full_pattern_store_runs_the_search_again_with_more_room(n_threads):
    """A part whose pattern store is full stops every part and the search runs again with four times the
    room (``SearchOptions.capacity``: room for two patterns at first): the same patterns, cut and bounds as
    with room to spare, on one and two threads. The room it grew to is carried to the run's next
    search (``LengthBounds.room``), which on one thread then does not search twice. (On two, each
    thread holds what it found before its own r-th longest length rose, which the threads' timing
    decides, so the room one search needed may not be enough for the next: it then grows again.)"""
    from benchmarks.synthetic import power_law_sets
    from veil.engine import LengthBounds

    small = threads(n_threads, capacity=2)
    for seed in range(4):
        sets = power_law_sets(1500, 60, mean_items=12.0, seed=seed)
        answers = []
        for capacity in (None, 2):
            bounds = LengthBounds(deep=2)
            got = longest_itemsets(
                sets, 5, 40, backend="dfs", bounds=bounds, options=threads(n_threads, capacity=capacity)
            )
            answers.append((got.patterns, got.cut, bounds.below.tolist()))
        assert len(answers[0][0]) >= 40
        assert answers[0] == answers[1], seed
        # the room a search needed is carried: the next search of the run starts with it, and does not
        # search again as one starting with room for two does
        assert bounds.room >= 40, seed
        rows = np.arange(1, sets.n_rows)
        carried, reset = copy.deepcopy(bounds), copy.deepcopy(bounds)
        reset.room = 0
        with_room = longest_itemsets(sets, 5, 40, rows=rows, backend="dfs", bounds=carried, options=small)
        without = longest_itemsets(sets, 5, 40, rows=rows, backend="dfs", bounds=reset, options=small)
        assert (with_room.patterns, with_room.cut) == (without.patterns, without.cut), seed
        if n_threads == 1:
            assert with_room.nodes < without.nodes, seed


@pytest.mark.skipif(not have_numba(), reason="numba not installed: the plain-Python kernel is too slow for this size")
def test_carried_length_bounds_skip_branches_and_change_no_pattern():
    """On power-law records losing their records in groups, as PatternKa mines them: each later search
    with the bounds returns what a fresh search returns, and visits fewer branches."""
    from benchmarks.synthetic import power_law_sets
    from veil.engine import LengthBounds

    sets = power_law_sets(3000, 120, mean_items=14.0, seed=6)
    bounds = LengthBounds()
    alive = np.ones(sets.n_rows, dtype=bool)
    rng = np.random.default_rng(0)
    fewer = 0
    for step in range(6):
        rows = np.flatnonzero(alive)
        got = longest_itemsets(sets, 15, 8, rows=rows, backend="dfs", bounds=bounds)
        fresh = longest_itemsets(sets, 15, 8, rows=rows, backend="dfs")
        assert (got.patterns, got.cut) == (fresh.patterns, fresh.cut), step
        fewer += step > 0 and got.nodes < fresh.nodes
        holders = np.flatnonzero(alive)[rng.permutation(len(rows))[:40]]
        alive[holders] = False
    assert fewer >= 3


def test_a_partial_search_lists_every_pattern_from_its_floor():
    """A partial search may stop with fewer than r patterns: then every closed (maximal) pattern at
    least ``floor`` long is listed and none shorter, the longest among them; otherwise it is the
    usual top r. On shapes where fewer than r reach the greedy length, it does stop short."""
    rng = np.random.default_rng(23)
    short = 0
    for trial in range(80):
        x = varied(rng, (5, 60), (2, 11), (0.1, 0.95), (1.3, 0.4))
        k, r = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        for target in (CLOSED_ITEMSETS, MAXIMAL_ITEMSETS):
            got = longest_itemsets(x, k, r, target=target, backend="dfs", partial=True)
            every = brute(x, k, 1 << 30, target)
            if got.floor == 0:
                assert (got.patterns, got.cut) == (every[:r], len(every[r - 1][0]) if len(every) >= r else 0)
                assert longest_itemsets(x, k, r, target=target, backend="dfs").floor == 0
                continue
            short += 1
            assert got.patterns == [p for p in every if len(p[0]) >= got.floor], (trial, target)
            assert 0 < len(got.patterns) < r and got.cut == 0
    assert short >= 10, short
    for backend in ("python", "pyfim"):  # the others ignore it
        if backend == "pyfim" and not have_pyfim():
            continue
        assert longest_itemsets(x, k, r, backend=backend, partial=True).floor == 0


def test_with_ties_every_pattern_as_long_as_the_r_th_is_listed():
    """``ties``: the compiled search lists every closed (maximal) pattern as long as its r-th, and says
    the list is complete from there (cut one below); with ``partial`` too; the others ignore it."""
    rng = np.random.default_rng(29)
    more = 0
    for trial in range(60):
        x = varied(rng, (5, 60), (2, 11), (0.1, 0.95), (1.3, 0.4))
        k, r = int(rng.integers(1, 8)), int(rng.integers(1, 6))
        for target in (CLOSED_ITEMSETS, MAXIMAL_ITEMSETS):
            every = brute(x, k, 1 << 30, target)
            for partial in (False, True):
                got = longest_itemsets(x, k, r, target=target, backend="dfs", partial=partial, ties=True)
                if got.floor:
                    continue  # stopped short: as without ties (the test above)
                if len(every) < r:
                    assert (got.patterns, got.cut) == (every, 0)
                    continue
                shortest = len(every[r - 1][0])
                assert got.patterns == [p for p in every if len(p[0]) >= shortest], (trial, target, partial)
                assert got.cut == shortest - 1
                more += len(got.patterns) > r
    assert more >= 10, more
    for backend in ("python", "pyfim"):
        if backend == "pyfim" and not have_pyfim():
            continue
        assert longest_itemsets(x, k, r, backend=backend, ties=True) == longest_itemsets(x, k, r, backend=backend)


@pytest.mark.skipif(not have_numba(), reason="numba not installed: the plain-Python kernel is too slow for this size")
def test_a_long_search_reports_its_progress_from_its_process():
    """Run in its own process (a cancel check given), the search reports the root's children taken of
    how many, at the length searched for; what it finds is what the same search without reports finds."""
    from benchmarks.synthetic import power_law_sets

    sets = power_law_sets(20_000)
    seen = []
    got = longest_itemsets(
        sets, 100, 32, backend="dfs", check=lambda: None, progress=lambda *report: seen.append(report)
    )
    assert seen, "no progress reported"
    for taken, children, length in seen:
        assert 0 <= taken <= children and children > 100 and length >= 1
    plain = longest_itemsets(sets, 100, 32, backend="dfs")
    assert (got.patterns, got.cut) == (plain.patterns, plain.cut)
    assert max(length for _, _, length in seen) <= len(got.patterns[0][0])


@pytest.mark.skipif(not (have_numba() and have_pyfim()), reason="the choice is between numba's search and pyfim's")
def test_auto_mines_thousands_of_patterns_of_short_records_with_one_fp_growth_run(monkeypatch):
    """Thousands of patterns wanted from records of a few frequent items each (BMS-WebView-1's shape): the
    automatic backend takes pyfim's one FP-growth run, not the compiled search, which length pruning
    cannot help there; the answer is the compiled search's. Few patterns wanted, or long records: the
    compiled search."""
    import veil.engine.kernels.longest as longest_module
    from benchmarks.synthetic import power_law_sets
    from veil.engine.kernels.longest_fim import SPECULATE_PATTERNS as wanted

    short = power_law_sets(12_000, 400, mean_items=3.0, seed=4)
    compiled = longest_itemsets(short, 5, wanted, backend="dfs")
    calls = []
    real = longest_module.longest_by_dfs
    monkeypatch.setattr(longest_module, "longest_by_dfs", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    auto = longest_itemsets(short, 5, wanted)
    assert calls == [] and auto.nodes == 1  # one C run
    assert (auto.patterns, auto.cut) == (compiled.patterns, compiled.cut)
    assert len(compiled.patterns) > 1000
    longest_itemsets(short, 5, 32)  # few wanted
    longest_itemsets(power_law_sets(12_000, 400, mean_items=30.0, seed=4), 50, wanted)  # long records
    assert calls == [1, 1]
