"""The baselines of paper 002 (docs/reference.md#set-valued-data): the Hilbert curve with optimal 1-D runs
(relational) and
top-down partitioning of set-valued records without a hierarchy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from veil.engine import (
    Context,
    ExportOptions,
    PluginCall,
    RunSpec,
    SetValued,
    execute,
    make_registry,
    verify_manifest,
    write_release,
)
from veil.plugins.anonymisation.hilbert import hilbert_order, optimal_runs
from veil.plugins.anonymisation._regions import qi_columns
from veil.plugins.setvalued.top_down import top_down_groups

from test_patternka_relational import QIS, naive_ncp, random_table

REGISTRY = make_registry()


# ------------------------------------------------------------------------------------ Hilbert
@pytest.mark.parametrize("d,bits", [(2, 1), (2, 2), (2, 4), (3, 1), (3, 3), (4, 2)])
def test_hilbert_order_walks_the_grid_one_step_at_a_time(d, bits):
    side = 1 << bits
    grid = np.array(list(itertools.product(range(side), repeat=d)), dtype=np.uint64)
    rng = np.random.default_rng(d * 10 + bits)
    grid = grid[rng.permutation(len(grid))]
    walk = grid[hilbert_order(grid, bits)].astype(np.int64)
    assert len({tuple(p) for p in walk}) == side**d
    assert (walk[0] == 0).all()  # the curve starts at the origin
    assert (np.abs(np.diff(walk, axis=0)).sum(axis=1) == 1).all()  # every step moves to a neighbouring cell


def test_hilbert_order_keeps_equal_points_in_input_order():
    pts = np.array([[1, 1], [0, 0], [1, 1], [0, 0]], dtype=np.uint64)
    assert hilbert_order(pts, 1).tolist() == [1, 3, 0, 2]


def _compositions(n, lo, hi):
    if n == 0:
        yield ()
        return
    for s in range(lo, min(hi, n) + 1):
        for rest in _compositions(n - s, lo, hi):
            yield (s,) + rest


@pytest.mark.parametrize("seed", range(12))
def test_optimal_runs_match_brute_force(seed):
    table = random_table(200 + seed, n=6 + seed % 8)
    k = 2 + seed % 3
    if table.n_rows < k:
        return
    cols = qi_columns(table, QIS)
    order = np.random.default_rng(seed).permutation(table.n_rows)

    def cost(sizes):
        total, start = 0.0, 0
        for s in sizes:
            total += s * naive_ncp(table, order[start : start + s].tolist())
            start += s
        return total

    best = min(cost(c) for c in _compositions(table.n_rows, k, 2 * k - 1))
    runs = optimal_runs(cols, order, k)
    sizes = np.bincount(runs)
    assert (np.diff(runs) >= 0).all()  # runs are consecutive along the order
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert cost(sizes.tolist()) == pytest.approx(best)


def test_hilbert_release_is_k_anonymous_from_the_file(tmp_path):
    table = random_table(5, n=90)
    spec = RunSpec(PluginCall("hilbert"), PluginCall("k-anonymity", {"k": 6}), 0, ("ncp",))
    result = execute(REGISTRY, table, spec, Context(0))
    assert result.holds
    assert result.metrics["ncp"] == pytest.approx(result.release.details["gcp"])
    write_release(REGISTRY, result, tmp_path, ExportOptions("csv"))
    assert verify_manifest(REGISTRY, tmp_path).holds


# ------------------------------------------------------------------------------------ top-down
def naive_top_down(recs: list[frozenset], k: int) -> list[frozenset]:
    """The rule of docs/reference.md#set-valued-data with Python sets: split on the allowed item lowering the loss
    most (smallest on ties)."""

    def loss(rows):
        centre = frozenset.intersection(*(recs[i] for i in rows))
        return sum(len(recs[i]) - len(centre) for i in rows)

    def part(rows):
        best, best_gain = None, 0
        for item in sorted(set().union(*(recs[i] for i in rows))):
            a = [i for i in rows if item in recs[i]]
            b = [i for i in rows if item not in recs[i]]
            if len(a) < k or len(b) < k:
                continue
            gain = loss(rows) - loss(a) - loss(b)
            if best is None or gain > best_gain:
                best, best_gain = (a, b), gain
        if best is None:
            return [frozenset(rows)]
        return part(best[0]) + part(best[1])

    return part(list(range(len(recs))))


def random_sets(seed, n=None, m=None):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(6, 40))
    m = m or int(rng.integers(3, 10))
    p = rng.uniform(0.1, 0.8, m)
    rows = [frozenset(np.flatnonzero(rng.random(m) < p).tolist()) for _ in range(n)]
    return rows, SetValued.from_sets([[f"i{j:02d}" for j in sorted(r)] for r in rows])


@pytest.mark.parametrize("seed", range(25))
def test_top_down_matches_the_naive_rule_and_is_k_anonymous(seed):
    rows, sets = random_sets(seed)
    k = 1 + seed % 4
    if k > len(rows):
        return
    g = top_down_groups(sets, k)
    got = {frozenset(np.flatnonzero(g.groups == x).tolist()) for x in range(g.n_groups)}
    assert got == set(naive_top_down(rows, k))
    assert np.bincount(g.groups).min() >= k
    for x in range(g.n_groups):  # the centre is the intersection of the group's records
        members = np.flatnonzero(g.groups == x)
        centre = {int(sets.item_names[j][1:]) for j in g.centres.row(x)}
        assert centre == set(frozenset.intersection(*(rows[i] for i in members)))


def test_top_down_release_is_checked_from_the_file(tmp_path):
    _, sets = random_sets(3, n=120, m=12)
    spec = RunSpec(PluginCall("top-down"), PluginCall("set-k-anonymity", {"k": 5}), 0, ("gcp",))
    result = execute(REGISTRY, sets, spec, Context(0))
    assert result.holds and 0 <= result.metrics["gcp"] <= 1
    write_release(REGISTRY, result, tmp_path, ExportOptions("itemsets"))
    assert verify_manifest(REGISTRY, tmp_path).holds


def test_each_method_is_offered_for_its_data_form():
    from veil.engine import SETS, TABLE

    assert REGISTRY.get("algorithm", "top-down").accepts == (SETS,)
    assert REGISTRY.get("algorithm", "hilbert").accepts == (TABLE,)
    assert REGISTRY.get("algorithm", "patternka-relational").accepts == (TABLE,)


def test_all_features_releases_item_sets_as_they_are_in_memory_of_the_items_held(tmp_path):
    """The no-privacy baseline on a transaction file: every record's items released unchanged (the same
    multiset of item sets read back), records with equal items grouped, and no records × items frame:
    peak memory a small multiple of the items held (a dense frame of these records would be
    hundreds of times larger)."""
    import tracemalloc

    from benchmarks.synthetic import power_law_sets
    from veil.engine import (
        Context,
        ExportOptions,
        PluginCall,
        RunSpec,
        execute,
        make_registry,
        parse_transactions,
        write_release,
    )

    sets = power_law_sets(20_000, 4_500, mean_items=6.0, seed=2)
    text = "\n".join(" ".join(sets.item_names[j] for j in sets.row(i)) for i in range(sets.n_rows)) + "\n"
    data = parse_transactions(text.encode())
    registry = make_registry()
    tracemalloc.start()
    try:
        result = execute(
            registry,
            data,
            RunSpec(PluginCall("all-features"), metrics=("min-group-size", "discernibility")),
            Context(0),
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    items_held = data.nnz * 8
    assert peak < 40 * items_held < data.n_rows * data.n_features  # a dense uint8 frame: n × items bytes
    release = result.release
    assert release.kind == "grouped-sets" and release.n_rows == sets.n_rows
    write_release(registry, result, tmp_path, ExportOptions(fmt="itemsets"))
    written = sorted(" ".join(sorted(line.split())) for line in (tmp_path / "release.dat").read_text().splitlines())
    assert written == sorted(" ".join(sorted(line.split())) for line in text.splitlines())
    sizes = np.bincount(release.groups)
    distinct = {frozenset(line.split()) for line in text.splitlines()}
    assert len(sizes) == len(distinct) and result.metrics["discernibility"] == float((sizes**2).sum())
