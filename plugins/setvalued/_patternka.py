"""PatternKa's grouping (docs/reference.md#set-valued-data, paper 002 Algorithm 1) on set-valued records,
shared by the algorithm plugin (:mod:`.patternka`) and its Spark mining (:mod:`veil.plugins._spark.patterns`).

While at least k records remain: find the longest frequent itemset p of the remaining records
(support ≥ k; ties by ``pattern_selection``), make every remaining record that holds p a group, and
remove it. When no non-empty itemset is frequent, the remaining records form the last group. The
fewer than k records left over then join, one at a time in input order, the group whose loss
(items suppressed, the numerator of GCP) grows least.

The four speed-ups the paper requires are switches of :class:`_Tuning`, the one tuning argument of
:func:`patternka_groups` (every switch on by default), so a test can show that each changes no output:

``closed``
    mine closed patterns rather than every frequent one (off: the longest frequent itemset is
    found among all frequent itemsets);
``length_pruning``
    the miner abandons branches that cannot beat the current longest (off: every closed itemset is
    mined and the longest taken);
``cache``
    keep the ``cache_size`` longest closed patterns and revalidate their supports after each removal
    instead of mining again (valid because removing records creates no new closed pattern:
    every pattern frequent now was frequent before, and its closure then still has its support);
``bitset_update``
    each cached pattern's records are a packed bitset (over the records holding any cached pattern),
    updated by the removed group's mask (off: supports are recounted from the item columns after
    every removal).

and four of Veil's own, also switches with their tests:

``carry_bounds``
    what each mining proves (no pattern as long as the one wanted ends in this item) stays true when
    records are removed, so it is carried to the next mining, which does not search there again
    (:class:`veil.engine.LengthBounds`; the compiled search only, off: every mining starts afresh);
``deep_bounds``
    with ``carry_bounds``, each mining after the first searches every item it enters down to two
    lengths below the length it wants while the item holds nothing that long (what it finds there is
    not kept, it only lowers the bound), so the bound it carries is up to two lower than "shorter
    than the length wanted": when the length falls by one or two, the next mining enters only the
    items whose patterns reach it, not every item again (``LengthBounds.deep``). The first mining
    searches at its own length only: its patterns' groups remove the records that stand out and the
    length falls far. An int sets the lengths, ``True`` searches every item to its own longest
    pattern (the first mining too, which makes it much dearer), ``False`` or 0 turns it off;
``greedy_floor``
    a mining may stop with fewer than ``cache_size`` patterns: every one at least as long as a
    pattern it found greedily (``Longest.floor``). The cache then holds every pattern that long, so
    it tells the next groups as a full list does (cut 0) until they are all spent, and the search is
    spared the length below, where the r-th pattern may lie (the compiled search only; off: the
    cache is always filled);
``all_ties``
    a mining returns every pattern as long as the ``cache_size``-th, which the compiled search has
    found anyway (``longest_itemsets(ties=True)``), and the cache keeps them (within ``CACHE_BYTES``):
    it is then complete from that length on, so the run mines again only once every pattern that
    long is spent, not each time the ``cache_size`` smallest item lists at that length are (off: the
    cache holds ``cache_size`` patterns).

Memory: the records (CSR and CSC, O(number of items held)), the cached patterns' record lists and
their bit sets over the records holding any of them (at most ``CACHE_BYTES`` kept; a few times that
while a cache is built) and the group centres; never records × items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from veil.engine import (
    pack_mask,
    unpack_mask,
    CLOSED_ITEMSETS,
    FREQUENT_ITEMSETS,
    BadInput,
    BinaryMatrix,
    Feature,
    LengthBounds,
    Longest,
    RecordIndex,
    SearchOptions,
    SetValued,
    longest_itemsets,
    mine,
)

from ._grouping import Grouping

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp

log = logging.getLogger(__name__)

SELECTIONS = ("lexicographic", "random")
DEEP = 2  # lengths below the one wanted each mining after the first proves its bounds (``deep_bounds``)

_Records = RecordIndex  # the records in both orientations (each record's items, each item's records)


# the cached patterns' record lists (while the cache is made) and bit sets (kept), at most (see
# _Cache._holders), half each. Bit sets take patterns × records holding any of them / 8 bytes; a budget
# that cuts the caches short makes the run mine more often.
CACHE_BYTES = 512 << 20


class _Cache:
    """The patterns of the last mining, longest first and ties by item list, with their supports among
    the live records. Every cached pattern longer than ``cut`` is there, and at ``cut`` the smallest
    item lists (see :class:`~veil.engine.Longest`).

    With ``bitset_update``, each pattern's live records are a bit set over ``span`` (the records holding
    any of them, ascending), and a removed group's bit set there lowers every support at once; the
    patterns kept are cut, in their order, to stay within ``CACHE_BYTES``. Without, supports are
    recounted from the item columns."""

    def __init__(
        self,
        rec: _Records,
        found: Longest,
        alive: np.ndarray,
        bitset_update: bool,
        random: bool,
        options: SearchOptions = SearchOptions(),
    ):
        patterns = sorted(found.patterns, key=lambda p: (-len(p[0]), p[0]))
        self.cut = found.cut
        self.bits = None
        if bitset_update and patterns:
            kept, ptr, rows = self._holders(rec, patterns, alive, random, options)
            if kept < len(patterns):
                last, after = len(patterns[kept - 1][0]), len(patterns[kept][0])
                self.cut = last - 1 if after < last else last
                patterns = patterns[:kept]
            held = np.zeros(rec.n_rows, dtype=bool)
            held[rows] = True
            self.span = np.flatnonzero(held)
            where = np.zeros(rec.n_rows, dtype=np.int64)
            where[self.span] = np.arange(len(self.span))
            words = (len(self.span) + 63) >> 6
            # how much of the mining the cache holds, and its memory
            log.debug(
                "cache: %d patterns, kept %d, records %d, span %d, bits %.1f MiB",
                len(found.patterns),
                kept,
                int(ptr[-1]),
                len(self.span),
                kept * words * 8 / 2**20,
            )
            self.bits = np.zeros((kept, words), dtype=np.uint64)
            if len(rows):  # each pattern's records ascending, so its words come in order: OR each run of one word
                pos = where[rows]
                word = np.repeat(np.arange(kept) * words, np.diff(ptr)) + (pos >> 6)
                runs = np.flatnonzero(np.diff(word, prepend=-1))
                self.bits.reshape(-1)[word[runs]] = np.bitwise_or.reduceat(
                    np.left_shift(np.uint64(1), (pos & 63).astype(np.uint64)), runs
                )
            self.live = pack_mask(np.ones(len(self.span), dtype=bool))
            self.support = np.diff(ptr).astype(np.int64)
        else:
            self.support = np.array([s for _, s in patterns], dtype=np.int64)
        self.items = [p[0] for p in patterns]
        self.length = np.array([len(p) for p in self.items], dtype=np.int64)

    @staticmethod
    def _holders(
        rec: _Records, patterns: list, alive: np.ndarray, random: bool, options: SearchOptions = SearchOptions()
    ):
        """(kept, ptr, rows): the live records of the first ``kept`` patterns, as many, in order, as keep
        these lists and their bit sets (patterns × the records holding any of them) within
        ``CACHE_BYTES``, half each; at least one, and every one of the longest length when the group's
        pattern is drawn among them. The lists' sizes are the supports, known before they are made; they
        are found with as many threads as ``options`` allow."""
        lengths = np.array([len(p[0]) for p in patterns])
        must = int((lengths == lengths[0]).sum()) if random else 1
        entries = np.cumsum([s for _, s in patterns])
        listed = max(must, int(np.searchsorted(entries * 8 > CACHE_BYTES // 2, True)))
        ptr, rows, spans = rec.holders([p[0] for p in patterns[:listed]], alive, spans=True, options=options)
        cost = np.arange(1, listed + 1) * ((spans + 63) >> 6) * 8
        kept = max(must, int(np.searchsorted(cost > CACHE_BYTES // 2, True)))
        return kept, ptr[: kept + 1], rows[: ptr[kept]]

    def choose(self, k: int, random: bool, rng) -> int | None:
        """The cached pattern of the next group (its index), or None when the cache cannot tell."""
        valid = np.flatnonzero(self.support >= k)
        if len(valid) == 0:
            return None
        length = int(self.length[valid[0]])  # longest first
        if length < self.cut or (length == self.cut and random):
            return None
        if not random:
            return int(valid[0])  # ties by item list
        tied = valid[self.length[valid] == length]
        return int(tied[int(rng.integers(len(tied)))])

    def members(self, rec: _Records, i: int, alive: np.ndarray) -> np.ndarray:
        """The live records holding cached pattern i (a boolean mask)."""
        if self.bits is None:
            return rec.holding(self.items[i], alive)
        mask = np.zeros(rec.n_rows, dtype=bool)
        mask[self.span[np.flatnonzero(unpack_mask(self.bits[i] & self.live, len(self.span)))]] = True
        return mask & alive

    def remove(self, rec: _Records, members: np.ndarray, alive: np.ndarray, k: int) -> None:
        """Lower the supports by a removed group (``alive`` already without it)."""
        open_ = np.flatnonzero(self.support >= k)
        if self.bits is None:
            for i in open_.tolist():
                self.support[i] = int(rec.holding(self.items[i], alive).sum())
            return
        gone = np.zeros(len(self.span), dtype=bool)
        gone[np.searchsorted(self.span, np.flatnonzero(members))] = True  # the members are cached records
        gone = pack_mask(gone)
        self.live &= ~gone
        words = np.flatnonzero(gone)
        if len(open_) and len(words):
            hit = self.bits[np.ix_(open_, words)] & gone[words]
            self.support[open_] -= np.bitwise_count(hit).sum(axis=1, dtype=np.int64)


@dataclass(frozen=True)
class _Tuning:
    """PatternKa's speed-ups (the module says what each does), all on: a test turns one off to show
    that it changes no output, a benchmark to measure what it saves."""

    closed: bool = True
    length_pruning: bool = True
    cache: bool = True
    bitset_update: bool = True
    carry_bounds: bool = True
    deep_bounds: bool | int = DEEP
    greedy_floor: bool = True
    all_ties: bool = True


def patternka_groups(
    sets: SetValued,
    k: int,
    *,
    pattern_selection: str = "lexicographic",
    seed: int = 0,
    cache_size: int = 32,
    tuning: _Tuning = _Tuning(),
    max_seconds: float | None = None,
    check: Callable[[], None] | None = None,
    progress: Callable[[float, str], None] | None = None,
    miner: Callable[[np.ndarray, int, int], Longest] | None = None,
    options: SearchOptions = SearchOptions(),
) -> Grouping:
    """Group ``sets`` by PatternKa (Algorithm 1). ``tuning``: the speed-ups (see the module), all on
    unless a test or benchmark turns one off. ``options``: how the searches may run, above all how many
    threads (the run passes its context's).

    ``miner(rows, k, r)``, when given, finds the r longest closed patterns of those records in place
    of the in-process miner (exactly as :func:`longest_itemsets` would without ``ties``: same patterns,
    same order, same ``cut``); the distributed miner of :mod:`.patternka_spark` is one. Its cache then
    holds those r, so the run may mine more often than with the in-process miner, to the same groups."""
    if pattern_selection not in SELECTIONS:
        raise BadInput(f"unknown pattern selection {pattern_selection!r}; choose lexicographic or random")
    n = sets.n_rows
    if k < 1:
        raise BadInput("k must be at least 1")
    if k > n:
        raise BadInput(f"k = {k} is larger than the number of records ({n})")
    rng = np.random.default_rng(seed)
    rec = _Records(sets)
    alive = np.ones(n, dtype=bool)
    groups = np.full(n, -1, dtype=np.int64)
    patterns: list[tuple] = []
    state = {"cache": None, "minings": 0}
    cache = tuning.cache
    r = cache_size if cache else 1
    deep_bounds = tuning.deep_bounds
    bounds = LengthBounds(deep=deep_bounds, deepen_first=deep_bounds is True) if tuning.carry_bounds else None
    random = pattern_selection == "random"

    def searching(taken, children, length):  # a long mining's progress, between two groups
        progress(
            1.0 - remaining / n,
            f"mining {state['minings']}: {taken:,} of {children:,} items searched for "
            f"patterns of {length}+ items; {len(patterns)} groups, {remaining:,} records left",
        )

    def mine():
        rows = np.flatnonzero(alive)
        size = r
        last = state["cache"]
        while True:
            state["minings"] += 1
            if miner is None:
                # after a removal nothing is longer than the last cut (every longer pattern's closure was cached)
                longest = (last.cut if last is not None else 0) or None
                found = _mine(
                    rec,
                    rows,
                    k,
                    size,
                    tuning,
                    max_seconds,
                    check,
                    longest,
                    bounds,
                    None if progress is None else searching,
                    options,
                )
            else:
                found = miner(rows, k, size)
            ties_cut = found.cut and found.patterns and len(found.patterns[0][0]) == found.cut
            if random and ties_cut:
                size *= 2  # every longest pattern is needed to draw among them
                continue
            break
        state["cache"] = _Cache(rec, found, alive, tuning.bitset_update, random, options)

    remaining = n
    while remaining >= k:
        if check is not None:
            check()
        pick = state["cache"].choose(k, random, rng) if cache and state["cache"] is not None else None
        if pick is None:
            mine()
            pick = state["cache"].choose(k, random, rng)
        if pick is None:  # nothing frequent: the rest is one group
            members = alive.copy()
            pattern = ()
        else:
            pattern = tuple(state["cache"].items[pick])
            members = state["cache"].members(rec, pick, alive)
        gid = len(patterns)
        groups[members] = gid
        patterns.append(pattern)
        alive &= ~members
        remaining -= int(members.sum())
        if cache and pattern:
            state["cache"].remove(rec, members, alive, k)
        else:
            state["cache"] = None
        if progress is not None:
            progress(1.0 - remaining / n, f"{gid + 1} groups, {remaining} records left")
    centres = _centres(rec, groups, len(patterns))
    leftovers = np.flatnonzero(groups < 0)
    if len(leftovers):
        groups, centres = _join_leftovers(rec, groups, centres, leftovers)
    return Grouping(
        groups,
        SetValued(centres.indptr, centres.indices, sets.item_names, meta={"source": sets.meta.get("source")}),
        patterns,
        state["minings"],
    )


def _mine(
    rec: _Records,
    rows,
    k,
    r,
    tuning: _Tuning,
    max_seconds,
    check,
    max_length=None,
    bounds=None,
    progress=None,
    options: SearchOptions = SearchOptions(),
):
    """The r longest patterns of the live records (with the speed-ups switched as ``tuning`` says)."""
    closed = tuning.closed
    if closed and tuning.length_pruning:
        return longest_itemsets(
            rec.csr,
            k,
            r,
            rows=rows,
            max_seconds=max_seconds,
            check=check,
            max_length=max_length,
            bounds=bounds,
            progress=progress,
            partial=tuning.greedy_floor,
            ties=tuning.cache and tuning.all_ties and tuning.bitset_update,
            options=options,
        )
    sub = rec.csr[rows].tocsc()
    sub.sort_indices()
    matrix = BinaryMatrix(sub.indptr, sub.indices, sub.shape[0], [Feature(str(j)) for j in range(sub.shape[1])])
    found = mine(matrix, k, CLOSED_ITEMSETS if closed else FREQUENT_ITEMSETS)
    if not closed:  # the longest frequent itemsets are closed; keep those that are
        found = _closed_only(found)
    found.sort(key=lambda p: (-len(p[0]), p[0]))
    kept = found[:r]
    cut = len(kept[-1][0]) if len(found) > r else 0
    return Longest(kept, cut, 0)


def _closed_only(found):
    support = dict(found)
    by_size: dict[int, list] = {}
    for items, _ in found:
        by_size.setdefault(len(items), []).append(items)
    out = []
    for items, s in found:
        bigger = [t for t in by_size.get(len(items) + 1, []) if set(items) <= set(t)]
        if all(support[t] < s for t in bigger):
            out.append((items, s))
    return out


def _centres(rec: _Records, groups: np.ndarray, g: int) -> sp.csr_matrix:
    """G × items: each group's intersection (items held by every member); groups of −1 ignored."""
    import scipy.sparse as sp

    member = np.flatnonzero(groups >= 0)
    if g == 0:
        return sp.csr_matrix((0, rec.csr.shape[1]), dtype=bool)
    sizes = np.bincount(groups[member], minlength=g)
    sub = rec.csr[member]
    row_group = np.repeat(groups[member], np.diff(sub.indptr))
    counts = sp.csr_matrix(
        (np.ones(len(row_group), dtype=np.int64), (row_group, sub.indices)), shape=(g, rec.csr.shape[1])
    )
    counts.sum_duplicates()
    row_of = np.repeat(np.arange(g), np.diff(counts.indptr))
    full = counts.data == sizes[row_of]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(row_of[full], minlength=g))))
    out = sp.csr_matrix(
        (np.ones(int(full.sum()), dtype=bool), counts.indices[full], indptr), shape=(g, rec.csr.shape[1])
    )
    out.sort_indices()
    return out


def _join_leftovers(rec: _Records, groups, centres: sp.csr_matrix, leftovers):
    """Each leftover record, in input order, joins the group whose loss grows least (ties: the first)."""
    import scipy.sparse as sp

    g = centres.shape[0]
    if g == 0:
        raise BadInput("fewer records than k: no group can be formed")
    sizes = np.bincount(groups[groups >= 0], minlength=g).astype(np.int64)
    centres = centres.tolil()
    csr = rec.csr
    for i in leftovers.tolist():
        t = csr[i]
        c = sp.csr_matrix(centres)
        lens = np.diff(c.indptr)
        common = np.asarray((c @ t.T.astype(np.int64)).todense()).ravel() if t.nnz else np.zeros(g, np.int64)
        growth = sizes * (lens - common) + (t.nnz - common)
        best = int(np.argmin(growth))
        keep = set(t.indices.tolist())
        centres.rows[best] = [j for j in centres.rows[best] if j in keep]
        centres.data[best] = [True] * len(centres.rows[best])
        groups[i] = best
        sizes[best] += 1
    out = sp.csr_matrix(centres, dtype=bool)
    out.sort_indices()
    return groups, out
