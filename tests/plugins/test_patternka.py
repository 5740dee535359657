"""PatternKa against a brute-force Algorithm 1, its speed-ups, and its release written and verified."""

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
    verify_file,
    verify_manifest,
    write_release,
)
from veil.plugins.setvalued._grouping import information_loss
from veil.plugins.setvalued._patternka import _Tuning, patternka_groups


def brute_patternka(rows: list[set], m: int, k: int):
    """Algorithm 1 of docs/reference.md#set-valued-data by enumeration: longest frequent itemset (smallest item
    list among equals)."""
    alive = list(range(len(rows)))
    groups = [-1] * len(rows)
    centres = []
    while len(alive) >= k:
        best = None
        for size in range(m, 0, -1):
            for items in itertools.combinations(range(m), size):
                if sum(1 for i in alive if set(items) <= rows[i]) >= k:
                    best = items
                    break
            if best:
                break
        members = [i for i in alive if best is None or set(best) <= rows[i]]
        for i in members:
            groups[i] = len(centres)
        centres.append(set.intersection(*(rows[i] for i in members)))
        alive = [i for i in alive if i not in members]
    for i in alive:  # leftovers, in input order, to the group whose loss grows least
        sizes = [groups.count(g) for g in range(len(centres))]
        growth = [
            sizes[g] * (len(c) - len(c & rows[i])) + len(rows[i]) - len(c & rows[i]) for g, c in enumerate(centres)
        ]
        g = growth.index(min(growth))
        groups[i] = g
        centres[g] = centres[g] & rows[i]
    return groups, centres


def random_sets(rng, n, m, p):
    rows = [{j for j in range(m) if rng.random() < p[j]} for _ in range(n)]
    return rows, SetValued(
        np.concatenate(([0], np.cumsum([len(r) for r in rows]))),
        [j for r in rows for j in sorted(r)],
        [f"i{j:02d}" for j in range(m)],
    )


@pytest.mark.parametrize("dfs_rows", [None, 0])
def test_matches_brute_force_algorithm_1(dfs_rows, monkeypatch):
    """With the default miner for small data, and with the compiled search for every mining (dfs_rows 0)."""
    if dfs_rows is not None:
        import veil.engine.kernels.longest as longest

        monkeypatch.setattr(longest, "DFS_ROWS", dfs_rows)
    rng = np.random.default_rng(11)
    for _ in range(25):
        n, m = int(rng.integers(4, 30)), int(rng.integers(1, 8))
        rows, sets = random_sets(rng, n, m, rng.uniform(0.1, 0.9, size=m))
        k = int(rng.integers(1, min(n, 6) + 1))
        groups, centres = brute_patternka(rows, m, k)
        got = patternka_groups(sets, k, cache_size=int(rng.integers(1, 5)))
        assert got.groups.tolist() == groups
        assert [set(got.centres.row(g).tolist()) for g in range(got.n_groups)] == centres
        assert np.bincount(got.groups).min() >= k


@pytest.mark.parametrize(
    "off",
    [
        "closed",
        "length_pruning",
        "cache",
        "bitset_update",
        "compiled_search",
        "carry_bounds",
        "deep_bounds",
        "greedy_floor",
        "all_ties",
    ],
)
def test_each_speed_up_changes_no_output(off, monkeypatch):
    rng = np.random.default_rng(5)
    if off in ("carry_bounds", "deep_bounds", "greedy_floor", "all_ties"):  # the compiled search's own: every mining
        import veil.engine.kernels.longest as longest

        monkeypatch.setattr(longest, "DFS_ROWS", 0)
    if off == "compiled_search":  # the fast path is the compiled search for every mining, the slow one pyfim/Python
        import veil.engine.kernels.longest as longest

        monkeypatch.setattr(longest, "DFS_ROWS", 0)
        fast_off, off = {}, None
    else:
        fast_off = {"tuning": _Tuning(**{off: False})}
    for _ in range(2):
        rows, sets = random_sets(rng, 50, 10, rng.uniform(0.1, 0.8, size=10))
        for k in (3, 7):
            fast = patternka_groups(sets, k, cache_size=4)
            if off is None:
                monkeypatch.setattr(longest, "DFS_ROWS", 1 << 62)
                slow = patternka_groups(sets, k, cache_size=4)
                monkeypatch.setattr(longest, "DFS_ROWS", 0)
            else:
                slow = patternka_groups(sets, k, cache_size=4, **fast_off)
            assert fast.groups.tolist() == slow.groups.tolist()
            assert fast.patterns == slow.patterns


def test_random_selection_draws_among_the_longest_with_the_seed():
    rng = np.random.default_rng(2)
    rows, sets = random_sets(rng, 60, 8, np.full(8, 0.5))
    a = patternka_groups(sets, 4, pattern_selection="random", seed=1)
    b = patternka_groups(sets, 4, pattern_selection="random", seed=1)
    assert a.groups.tolist() == b.groups.tolist()
    lex = patternka_groups(sets, 4)
    assert len(a.patterns[0]) == len(lex.patterns[0])  # a longest pattern, drawn or not


def test_gcp_is_the_fraction_of_items_suppressed():
    sets = SetValued.from_sets([["a", "b"], ["a", "b", "c"], ["a"], ["a", "d"]])
    g = patternka_groups(sets, 2)
    assert g.groups.tolist() == [0, 0, 1, 1]
    assert information_loss(sets, g.groups, g.centres) == pytest.approx(1 - (2 * 2 + 2 * 1) / 8)


def test_release_written_in_order_and_verified_from_the_file(registry, tmp_path):
    rng = np.random.default_rng(4)
    rows, sets = random_sets(rng, 50, 9, rng.uniform(0.2, 0.7, size=9))
    spec = RunSpec(PluginCall("patternka"), PluginCall("set-k-anonymity", {"k": 4}), 0, ("gcp",))
    result = execute(registry, sets, spec, Context(0))
    assert result.holds and 0 <= result.metrics["gcp"] <= 1
    write_release(registry, result, tmp_path, ExportOptions("itemsets", shuffle=False))
    lines = (tmp_path / "release.dat").read_text().splitlines()
    assert len(lines) == 50
    for i, line in enumerate(lines):  # unshuffled: line i is record i's group centre, a subset of it
        published = {int(t[1:]) for t in line.split()}
        assert published <= rows[i]
    assert verify_manifest(registry, tmp_path).holds
    lines[0] = "i00 i01 i02 i03 i04 i05 i06 i07 i08"  # a tampered line is a group of one
    bad = tmp_path / "tampered.dat"
    bad.write_text("\n".join(lines) + "\n")
    roles = {"quasi_identifiers": ["items"], "target": None, "sensitive": []}
    assert not verify_file(registry, bad, "itemsets", PluginCall("set-k-anonymity", {"k": 4}), roles).holds


def test_a_run_searches_with_the_threads_its_context_allows(registry, monkeypatch):
    """The number of threads comes from the run (its context), not from the environment: each mining
    and each cache's lookup of its patterns' records is told it."""
    import veil.plugins.setvalued._patternka as patternka
    from veil.engine import RecordIndex

    told = []
    search, holders = patternka.longest_itemsets, RecordIndex.holders

    def searching(*args, options, **kwargs):
        told.append(("search", options.threads))
        return search(*args, options=options, **kwargs)

    def looking(self, *args, options, **kwargs):
        told.append(("holders", options.threads))
        return holders(self, *args, options=options, **kwargs)

    monkeypatch.setattr(patternka, "longest_itemsets", searching)
    monkeypatch.setattr(RecordIndex, "holders", looking)
    rng = np.random.default_rng(5)
    _, sets = random_sets(rng, 60, 9, rng.uniform(0.2, 0.7, size=9))
    spec = RunSpec(PluginCall("patternka"), PluginCall("set-k-anonymity", {"k": 3}))
    execute(registry, sets, spec, Context(0, threads=3))
    assert {"search", "holders"} <= {kind for kind, _ in told}
    assert {threads for _, threads in told} == {3}


def test_a_set_valued_release_needs_an_item_set_format(registry, tmp_path):
    sets = SetValued.from_sets([["a"], ["a"], ["b"], ["b"]])
    result = execute(registry, sets, RunSpec(PluginCall("patternka"), PluginCall("set-k-anonymity", {"k": 2})))
    from veil.engine import BadInput

    with pytest.raises(BadInput, match="itemsets"):
        write_release(registry, result, tmp_path, ExportOptions("csv"))


def test_netflix_shaped_generator_is_seeded_and_has_the_asked_shape():
    from benchmarks.synthetic import power_law_sets

    a, b = power_law_sets(20_000, 4_500, seed=3), power_law_sets(20_000, 4_500, seed=3)
    assert a.fingerprint() == b.fingerprint() != power_law_sets(20_000, 4_500, seed=4).fingerprint()
    assert (a.n_rows, a.n_items) == (20_000, 4_500)
    counts = a.item_counts()
    assert counts[0] > 10 * np.median(counts)  # power law: the head is far above the typical item


def test_netflix_shaped_generator_at_a_tenth_has_the_statistics_of_the_papers_table_6():
    """Paper 002's Table 6: 410,201 records, 4,496 items, 13.4 items a record on average, 2,060 at most.
    The length law is fitted to the mean and to the largest of 410,201 records (worked through the law's
    own probabilities, not the draw); a tenth of the records keeps the mean (within four standard
    errors of the law's spread), holds every item, stays within the largest, and its item counts follow
    BMS-WebView-2's Zipf exponent."""
    from benchmarks.synthetic import (
        COUNTS_EXPONENT,
        NETFLIX,
        length_law,
        length_mean,
        length_probabilities,
        power_law_sets,
        zipf_exponent,
    )

    assert NETFLIX == {"records": 410_201, "items": 4_496, "max_items": 2_060, "mean_items": 13.4}
    mu, sigma = length_law(13.4, 2_060, 410_201)
    p = length_probabilities(mu, sigma, 2_060)
    assert abs(p.sum() - 1) < 1e-12 and abs(length_mean(mu, sigma, 2_060) - 13.4) < 1e-9
    assert abs(p[-1] * 410_201 - 1) < 1e-6  # one record of the 410,201 expected at the largest length
    lengths = np.arange(1, 2_061)
    sd = np.sqrt(p @ (lengths - 13.4) ** 2)

    n = NETFLIX["records"] // 10
    sets = power_law_sets(n)
    got = sets.row_lengths()
    assert (sets.n_rows, sets.n_items) == (n, 4_496)
    assert abs(got.mean() - 13.4) < 4 * sd / np.sqrt(n)
    assert got.min() >= 1 and got.max() <= 2_060 and got.max() > 500
    counts = sets.item_counts()
    assert (counts > 0).all()  # every one of the 4,496 items held
    assert abs(zipf_exponent(counts) - COUNTS_EXPONENT) < 0.01
    assert counts[0] > counts[100] > counts[1000] > counts[4000]  # item 0 the most popular, and falling
    # each record holds distinct items (the CSR's columns rise strictly within a row)
    assert (np.diff(sets.indices)[np.diff(np.repeat(np.arange(n), got)) == 0] > 0).all()


def test_zipf_exponent_recovers_the_exponent_of_exact_zipf_counts():
    from benchmarks.synthetic import zipf_exponent

    for a in (0.5, 0.72, 1.3):
        counts = np.rint(1e9 * np.arange(1, 3001, dtype=float) ** -a)
        assert abs(zipf_exponent(counts) - a) <= 0.002
    assert zipf_exponent(np.full(500, 7)) == 0.0  # every item alike: no popularity law


def test_the_generator_draws_distinct_items_as_one_at_a_time_would():
    """Three items of weights 1, 1/2, 1/3 (exponent 1), records of two: the pair {0, 1} comes with
    probability P(0 then 1) + P(1 then 0) = (6/11)(3/5) + (3/11)(6/8) = 0.5318 (successive sampling without
    replacement, worked by hand)."""
    from benchmarks.synthetic import power_law_sets

    sets = power_law_sets(40_000, 3, mean_items=1.5, max_items=2, max_of=2, exponent=1.0, seed=5)  # half of two
    two = sets.row_lengths() == 2
    starts = sets.indptr[:-1][two]
    first, second = sets.indices[starts], sets.indices[starts + 1]
    share = np.mean((first == 0) & (second == 1))
    assert abs(share - (6 / 11 * 3 / 5 + 3 / 11 * 6 / 8)) < 4 * np.sqrt(0.25 / two.sum())
    assert 19_000 < two.sum() < 21_000


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_the_read_back_is_streamed_in_chunks_and_equals_a_whole_file_parse(registry, tmp_path, monkeypatch, chunk):
    """Whatever the chunk size (one line, lines cut mid-chunk, the whole file), the streamed read-back
    gives every record its set as a whole-file parse does, @ITEM names included."""
    import veil.plugins.io._item_lines as itemsets

    monkeypatch.setattr(itemsets, "READ_CHUNK_BYTES", chunk)
    rng = np.random.default_rng(chunk)
    rows = [
        sorted({f"it em{j}" if j % 3 == 0 else f"i{j}" for j in rng.choice(12, rng.integers(0, 6), False)})
        for _ in range(40)
    ]
    centres = SetValued.from_sets(rows)
    path = tmp_path / "r.dat"
    exporter = registry.exporter("itemsets")
    order = rng.permutation(40)
    exporter.write_sets(centres, order, path, exporter.params())
    back = exporter.read_back(path)
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("@")]
    assert back["items"].tolist() == [" ".join(sorted(set(line.split()))) for line in lines]
    names = back.attrs["item_names"]
    assert [{names[t] for t in cell.split()} for cell in back["items"]] == [set(rows[i]) for i in order]
    assert str(back["items"].dtype) == "category"  # one code a record, each distinct set held once


def test_carried_bounds_change_no_grouping_on_power_law_records(monkeypatch):
    """Dozens of minings on records shaped like the Netflix benchmark, small: the same groups and
    patterns with the bounds carried from one mining to the next and without."""
    import veil.engine.kernels.longest as longest
    from benchmarks.synthetic import power_law_sets

    monkeypatch.setattr(longest, "DFS_ROWS", 0)  # the compiled search for every mining
    sets = power_law_sets(1200, 80, mean_items=10.0, seed=3)
    for k in (4, 12):  # (every tie cached would leave fewer minings to carry bounds between)
        fresh = patternka_groups(sets, k, cache_size=2, tuning=_Tuning(carry_bounds=False, all_ties=False))
        for deep in (False, 1, 2, True):  # shallow, one or two lengths deeper after the first mining, exact
            carried = patternka_groups(sets, k, cache_size=2, tuning=_Tuning(deep_bounds=deep, all_ties=False))
            assert carried.groups.tolist() == fresh.groups.tolist(), deep
            assert carried.patterns == fresh.patterns, deep
            assert carried.minings > 20, carried.minings


def test_minings_stopped_at_the_greedy_length_change_no_grouping(monkeypatch):
    """A mining that stops at the greedy pattern's length with fewer patterns than the cache holds
    (``greedy_floor``, on by default) gives the groups of minings that fill the cache, lexicographic
    and drawn with a seed; on power-law records it does stop short, many times."""
    import veil.engine.kernels.longest as longest
    import veil.plugins.setvalued._patternka as patternka
    from benchmarks.synthetic import power_law_sets

    monkeypatch.setattr(longest, "DFS_ROWS", 0)  # the compiled search for every mining
    floors = []
    real = patternka.longest_itemsets

    def spy(*args, **kwargs):
        found = real(*args, **kwargs)
        floors.append(found.floor)
        return found

    monkeypatch.setattr(patternka, "longest_itemsets", spy)
    sets = power_law_sets(1200, 80, mean_items=10.0, seed=3)
    for k in (4, 12):
        for selection in ("lexicographic", "random"):
            # (without every tie cached: with it, fewer minings are left to stop short)
            short = patternka_groups(
                sets, k, cache_size=8, pattern_selection=selection, seed=k, tuning=_Tuning(all_ties=False)
            )
            filled = patternka_groups(
                sets,
                k,
                cache_size=8,
                pattern_selection=selection,
                seed=k,
                tuning=_Tuning(greedy_floor=False, all_ties=False),
            )
            assert short.groups.tolist() == filled.groups.tolist(), (k, selection)
            assert short.patterns == filled.patterns
    assert sum(f > 0 for f in floors) >= 10, floors


def test_every_tie_cached_changes_no_grouping_and_spares_minings(monkeypatch):
    """With every pattern as long as the cache_size-th cached (``all_ties``, on by default), the groups
    are those of a cache of cache_size patterns, lexicographic and drawn, and of a cache cut short by
    its memory budget; the minings that only found again what the cache had cut are spared."""
    import veil.engine.kernels.longest as longest
    import veil.plugins.setvalued._patternka as patternka
    from benchmarks.synthetic import power_law_sets

    monkeypatch.setattr(longest, "DFS_ROWS", 0)  # the compiled search for every mining
    sets = power_law_sets(1500, 80, mean_items=10.0, seed=5)
    spared = 0
    cuts = set()  # where the budget cut a cache: (selection, within a length or at its end)
    real = patternka._Cache._holders

    def spy(rec, patterns, alive, random, *more):
        kept, ptr, rows = real(rec, patterns, alive, random, *more)
        if kept < len(patterns):
            cuts.add((random, len(patterns[kept][0]) == len(patterns[kept - 1][0])))
        return kept, ptr, rows

    monkeypatch.setattr(patternka._Cache, "_holders", staticmethod(spy))
    budget_before = patternka.CACHE_BYTES
    for k in (4, 12):
        for selection in ("lexicographic", "random"):
            few = patternka_groups(
                sets, k, cache_size=2, pattern_selection=selection, seed=k, tuning=_Tuning(all_ties=False)
            )
            every = patternka_groups(sets, k, cache_size=2, pattern_selection=selection, seed=k)
            assert every.groups.tolist() == few.groups.tolist(), (k, selection)
            assert every.patterns == few.patterns
            spared += few.minings - every.minings
            assert every.minings <= few.minings
            # bit sets cut by the budget: at the longest length's end, and within a later length
            few = patternka_groups(
                sets, k, cache_size=6, pattern_selection=selection, seed=k, tuning=_Tuning(all_ties=False)
            )
            for budget in (8, 64, 512, 2048):
                monkeypatch.setattr(patternka, "CACHE_BYTES", budget)
                tight = patternka_groups(sets, k, cache_size=6, pattern_selection=selection, seed=k)
                assert tight.groups.tolist() == few.groups.tolist(), (k, selection, budget)
                assert tight.patterns == few.patterns
            monkeypatch.setattr(patternka, "CACHE_BYTES", budget_before)
    assert spared >= 10, spared
    assert cuts == {(False, False), (False, True), (True, False), (True, True)}, cuts


def test_the_records_holding_many_itemsets_at_once_match_brute_force():
    from veil.engine import RecordIndex

    rng = np.random.default_rng(8)
    wide = 0
    for _ in range(20):
        n, m = int(rng.integers(1, 200)), int(rng.integers(1, 200))
        rows, sets = random_sets(rng, n, m, rng.uniform(0.05, 0.9, size=m))
        alive = rng.random(n) < 0.8
        itemsets = [
            tuple(sorted(rng.choice(m, size=int(rng.integers(0, min(m, 6) + 1)), replace=False).tolist()))
            for _ in range(60)
        ]
        # and nested ones (a chain of prefixes, some with one more item), repeated, shuffled in among the others
        chain = rng.permutation(m)[: min(m, 9)].tolist()
        itemsets += [
            tuple(sorted(chain[: int(rng.integers(0, len(chain) + 1))] + extra))
            for extra in ([], [], [int(rng.integers(m))])
            for _ in range(8)
        ]
        itemsets = [tuple(sorted(set(s))) for s in rng.permutation(np.array(itemsets, dtype=object))]
        wide += len({j for s in itemsets for j in s}) > 64  # items past the 64 of one mask: bisected in the rows
        index = RecordIndex(sets)
        for ptr, held, spans in (
            index.holders(itemsets, alive, spans=True),
            index.holders(itemsets, alive, spans=True, parts=2),  # two threads
            index.holders(itemsets, alive, spans=True, parts=5),
            index._holders_numpy(itemsets, alive, True),
        ):  # without numba
            seen = set()
            for i, items in enumerate(itemsets):
                want = [r for r in range(n) if alive[r] and set(items) <= rows[r]]
                assert held[ptr[i] : ptr[i + 1]].tolist() == want
                seen |= set(want)
                assert spans[i] == len(seen)
    assert wide >= 5, wide


def test_a_long_mining_shows_how_far_it_is_between_two_groups():
    """A user watching PatternKa on large records sees each mining's progress (items searched of how
    many), not a bar that stands still until the next group."""
    from benchmarks.synthetic import power_law_sets
    from veil.engine.kernels.longest_dfs import have_numba

    if not have_numba():
        pytest.skip("numba not installed: the plain-Python kernel is too slow for this size")
    sets = power_law_sets(20_000)
    messages = []
    got = patternka_groups(sets, 100, check=lambda: None, progress=lambda f, text: messages.append((f, text)))
    searching = [text for _, text in messages if "items searched for patterns of" in text]
    assert searching and searching[0].startswith("mining 1: ")
    assert searching[0].endswith("; 0 groups, 20,000 records left")
    assert messages[-1][1].startswith(f"{got.n_groups} groups")
    fractions = [f for f, _ in messages]
    assert fractions == sorted(fractions) and 0 <= fractions[0] and fractions[-1] <= 1
