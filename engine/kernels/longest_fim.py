"""The r longest closed (maximal) itemsets with Borgelt's C miners (pyfim), by a falling length floor.

pyfim reports only itemsets of at least ``zmin`` items, and its row-enumeration miner (CARPENTER)
prunes every branch whose intersection is already shorter than ``zmin``: asked for the long patterns
only, it visits little else. :func:`longest_by_fim` therefore mines with a floor z that starts at an
upper bound of the longest length and falls until at least r patterns of length ≥ z are found, or z
reaches 1. Before each run the data are cut to what a pattern of length ≥ z can use (the length
pruning of docs/reference.md#set-valued-data, on the data), repeatedly until nothing changes:

* records holding fewer than z frequent items are dropped, and items with support < k with them;
* on few records, a record is dropped unless k − 1 other kept records share at least z items with
  it (the records of a pattern of length L share its L items pairwise).

Every record holding a pattern of length ≥ z survives the cut, so such a pattern keeps its support,
and so do its supersets (longer still): it is closed (maximal) in the cut data exactly when it is in
the whole. CARPENTER (row enumeration) takes few records, or a floor of at least half their mean
length at a support of at most 1 % of them; FP-growth takes the rest. The first floor is the highest
that k records reach under the first two rules (found on masks, without copying the data). When many
patterns are wanted (``SPECULATE_PATTERNS``) and FP-growth is the miner from the first floor on, or the
records are short, one FP-growth run at floor 1 replaces the floors: its r longest are the answer.

The answer is ordered in NumPy: items reach pyfim as bit weights (or codes, beyond 63 items), each
reported set becomes a bitset, and one sort on (length, bitset) gives the order of
docs/reference.md#set-valued-data (:func:`_top`).

The search runs in a forked child process when a time limit or a cancel check is given (where the
platform can fork, :func:`run_limited`): the C code cannot be interrupted, the child can be killed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gc
import itertools
import logging
import time
from collections.abc import Callable
from operator import itemgetter

import numpy as np

from .limits import MiningLimit, run_limited

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp

log = logging.getLogger(__name__)

GRAM_ROWS = 4000  # the pairwise-overlap cut looks at this many of the longest records at most
CARPENTER_ROWS = 1000  # more records than this, with patterns much shorter than them: FP-growth
# at least this many patterns wanted, and FP-growth the miner at the first floor (or records short on
# average): one FP-growth run at floor 1 and its r longest are kept, instead of a count-only run to
# find the floor and a second run (it holds every pattern in memory at once)
SPECULATE_PATTERNS = 5000
FAST_FALL_ROWS = 500  # the floor falls faster only after runs on at most this many records
SPARSE_LENGTH = 8  # records of at most this many frequent items on average count as short
PACK_CELLS = 1 << 24  # bits of the answer's bitsets made at a time from item codes (see _pack)
WEIGHTED_ITEMS = 63  # more items than this (63 at most): handed to pyfim as their codes (see _transactions)


def longest_by_fim(
    m: sp.csr_matrix,
    k: int,
    r: int,
    maximal: bool,
    *,
    max_seconds: float | None = None,
    max_patterns: int | None = None,
    check: Callable[[], None] | None = None,
    max_length: int | None = None,
):
    """(patterns, cut, runs) as :func:`veil.engine.longest_itemsets` reports them; ``m`` boolean CSR;
    ``max_length``: the caller's guarantee that no frequent itemset is longer (the floor starts there)."""

    out = run_limited(
        _search,
        (m, k, r, maximal, max_patterns, max_length),
        max_seconds=max_seconds,
        check=check,
        what="the longest-pattern search",
    )
    if out[0] == "patterns":
        raise MiningLimit(
            f"the longest-pattern search stopped after enumerating more than {max_patterns} patterns "
            f"without finishing; raise the limit, raise k or ask for fewer patterns"
        )
    return out[1], out[2], out[3]


def _search(m: sp.csr_matrix, k: int, r: int, maximal: bool, max_patterns: int | None, max_length: int | None = None):
    # pyfim's results are many small tuples without cycles: the cyclic collector would walk them again
    # and again while they are built
    paused = gc.isenabled()
    gc.disable()
    try:
        return _floors(m, k, r, maximal, max_patterns, max_length)
    finally:
        if paused:
            gc.enable()


def _floors(m: sp.csr_matrix, k: int, r: int, maximal: bool, max_patterns: int | None, max_length: int | None):
    """("ok", patterns, cut, runs) or ("patterns",) when more than ``max_patterns`` were enumerated."""
    import scipy.sparse as sp

    import fim

    target = "m" if maximal else "c"
    m = sp.csr_matrix(m, dtype=bool)
    if m.shape[0] < k:
        return ("ok", [], 0, 0)
    # a pattern of length L needs k records holding L items of support >= k each
    hit = (np.bincount(m.indices, minlength=m.shape[1]) >= k)[m.indices]
    cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
    lengths = cum[m.indptr[1:]] - cum[m.indptr[:-1]]
    z = max(1, int(np.partition(lengths, len(lengths) - k)[len(lengths) - k]))
    row_of = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    if max_length is not None:
        z = max(1, min(z, int(max_length)))
    runs = enumerated = 0
    found: list = []
    step = 1
    present, weighted = np.zeros(0, dtype=np.int64), True
    overlaps = _Overlaps(m)
    every = reach = None  # the cut at floor 1, and the statistics of the first floor, once made
    if r >= SPECULATE_PATTERNS and max_patterns is None:
        # many patterns wanted, and the records short on average or FP-growth the miner from the first
        # floor on: FP-growth's cost hardly depends on the floor, so one run at floor 1 gives every
        # pattern and the answer is their r longest (no count-only run, no CARPENTER at falling floors)
        every = _cut(m, k, 1, overlaps)
        if every is not None and every[0] > CARPENTER_ROWS:
            short = len(every[2]) <= SPARSE_LENGTH * every[0]
            # at any floor reached, k <= records <= every[0]: then k > CARPENTER_ROWS >= 1 % of them
            # already says FP-growth, without finding the floor
            plain = k > CARPENTER_ROWS and k * 100 > every[0]
            if not short and not plain:
                z, reach = _first_floor(m, row_of, k, z)
            if short or plain or (reach is not None and not _by_rows(*reach, z, k)):
                records, present, weighted = _transactions(every)
                found = fim.fpgrowth(records, target=target, supp=-k, zmin=1, report="a")
                log.debug("fim all: records %d patterns %d", every[0], len(found))
                return ("ok", *_top(found, r, present, weighted), 1)
    if reach is None:
        z, reach = _first_floor(m, row_of, k, z)
    while z >= 1:
        sub = _cut(m, k, z, overlaps)
        if sub is not None:
            rows, sub_indptr, sub_indices = sub
            # row enumeration while few records or long floors at a small support; else FP-growth, whose
            # cost hardly depends on the floor: one count-only run gives every length's number of
            # patterns, and one more run at the right floor gives the patterns
            by_rows = _by_rows(rows, len(sub_indices), z, k)
            started = time.monotonic()
            if not by_rows:
                every = every if every is not None else _cut(m, k, 1, overlaps)
                spectrum = fim.fpgrowth(_transactions(every)[0], target=target, supp=-k, zmin=1, report="#")
                runs += 1
                log.debug(
                    "fim spectrum: records %d patterns %d seconds %.3f",
                    every[0],
                    sum(spectrum.values()),
                    time.monotonic() - started,
                )
                per_size: dict = {}
                for (size, _), count in spectrum.items():
                    per_size[size] = per_size.get(size, 0) + int(count)
                total, z = 0, 1
                for size in sorted(per_size, reverse=True):
                    total += per_size[size]
                    if total >= r:
                        z = size
                        break
                sub = _cut(m, k, z, overlaps)
            started, used = time.monotonic(), time.process_time()
            miner = fim.carpenter if by_rows else fim.fpgrowth
            records, present, weighted = _transactions(sub)
            found = miner(records, target=target, supp=-k, zmin=z, report="a")
            log.debug(
                "fim floor %d: records %d patterns %d seconds %.3f", z, sub[0], len(found), time.monotonic() - started
            )
            runs += 1
            enumerated += len(found)
            if max_patterns is not None and enumerated > max_patterns:
                return ("patterns",)
            if len(found) >= r or not by_rows:
                break
            # far from r patterns after a cheap run on few records: fall faster (never more than a quarter
            # of the floor). CPU time, so that a busy machine does not make a run look dear; few records,
            # since lower floors keep more of them and CARPENTER's cost grows steeply with them
            cheap = time.process_time() - used < 0.05 and rows <= FAST_FALL_ROWS
            step = min(2 * step, max(1, z // 4)) if len(found) < r // 2 and cheap else 1
        if z == 1:
            break
        z = max(1, z - step)
    return ("ok", *_top(found, r, present, weighted), runs)


def _transactions(sub) -> tuple[list, np.ndarray, bool]:
    """The records for pyfim, the item codes present (ascending), and whether items are weighted.

    Weighted (at most ``WEIGHTED_ITEMS`` items, and never more than 63, so that every sum fits one
    64-bit word): item j of the present ones is handed to pyfim as the int 2^(n-1-j), so that the sum
    of a reported set is its bitset (see :func:`_top`); else as its code."""
    _, indptr, indices = sub
    present = np.flatnonzero(np.bincount(indices))
    n = len(present)
    weighted = n <= min(WEIGHTED_ITEMS, 63)
    if weighted:
        rank = np.zeros(int(present[-1]) + 1 if n else 1, dtype=np.int64)
        rank[present] = np.arange(n)
        labels = np.array([1 << (n - 1 - j) for j in range(n)] + [0], dtype=object)[:n]
        codes = labels[rank[indices]]
    else:
        codes = np.arange(int(present[-1]) + 1 if n else 1, dtype=np.int64).astype(object)[indices]
    codes = codes.tolist()
    out = [codes[a:b] for a, b in zip(indptr[:-1].tolist(), indptr[1:].tolist())]
    out.append([])  # pyfim never reports a set made only of items every record holds
    return out, present, weighted


def _top(found: list, r: int, present: np.ndarray, weighted: bool = True):
    """The r longest (ties: smallest item list) as ascending tuples of item codes, and the cut.

    Weighted, each reported set is a tuple of weights 2^(n-1-j) (``present[j]`` is item j's code): its
    sum is the set as a bitset whose highest bit is its smallest item (else the same bitset is made in
    NumPy from the codes). Among sets of one length the lexicographically smallest item list has the
    largest bitset, so sorting (length, bitset) in NumPy and reading the bits back (ascending positions
    = ascending items) builds every answer tuple once.
    """
    if not found:
        return [], 0
    first, second = itemgetter(0), itemgetter(1)
    n = len(present)
    words = max(1, -(-n // 64))
    flat = None
    if not weighted:  # items are codes: the bitsets are made in NumPy from every item
        sizes = np.fromiter(map(len, map(first, found)), dtype=np.int64, count=len(found))
        if len(found) > r:
            found, sizes = _longest(found, sizes, r)
        flat = np.fromiter(itertools.chain.from_iterable(map(first, found)), dtype=np.int64, count=int(sizes.sum()))
        bits = _pack(flat, sizes, present, words)
    else:  # at most 63 items: each sum fits one word
        bits = np.fromiter(map(sum, map(first, found)), dtype=np.uint64, count=len(found))[:, None]
        sizes = np.bitwise_count(bits).sum(axis=1, dtype=np.int64)
        if len(found) > r:
            keep = _longest(None, sizes, r)
            found, sizes, bits = list(map(found.__getitem__, keep.tolist())), sizes[keep], bits[keep]
    # longest first, then the largest bitset (word 0 is the most significant)
    order = np.lexsort(tuple(~bits[:, w] for w in range(words - 1, -1, -1)) + (-sizes,))[:r]
    begin = None if flat is None else np.concatenate(([0], np.cumsum(sizes)[:-1]))[order]
    bits, sizes = bits[order], sizes[order]
    support = np.fromiter(map(second, found), dtype=np.int64, count=len(found))[order].tolist()
    patterns: list = []
    # one length at a time (they are contiguous): its item codes form columns, one entry per pattern
    edges = [0, *(np.flatnonzero(np.diff(sizes)) + 1).tolist(), len(sizes)]
    for start, stop in zip(edges[:-1], edges[1:]):
        size = int(sizes[start])
        if flat is None:
            columns = _decode(bits[start:stop], size, present)
        else:  # the codes themselves, each row sorted
            columns = list(np.sort(flat[begin[start:stop, None] + np.arange(size)], axis=1).T)
        patterns.extend(zip(zip(*[c.tolist() for c in columns]), support[start:stop]))
    cut = len(patterns[-1][0]) if len(patterns) == r else 0
    return patterns, cut


def _pack(flat: np.ndarray, sizes: np.ndarray, present: np.ndarray, words: int) -> np.ndarray:
    """The bitsets (rows × words, word 0 the most significant; item ``present[j]`` at bit position
    64·words − n + j from the top) of the patterns whose codes are ``flat``, ``sizes[i]`` each: a 0/1
    byte per bit and pattern, packed, a block of rows at a time."""
    width = 64 * words
    position = np.zeros(int(present[-1]) + 1, dtype=np.int64)
    position[present] = np.arange(len(present)) + (width - len(present))
    position = position[flat]
    ends = np.cumsum(sizes)
    bits = np.empty((len(sizes), words), dtype=np.uint64)
    step = max(1, PACK_CELLS // width)
    for at in range(0, len(sizes), step):
        stop = min(len(sizes), at + step)
        first, last = (int(ends[at - 1]) if at else 0), int(ends[stop - 1])
        cells = np.zeros((stop - at) * width, dtype=np.uint8)
        cells[np.repeat(np.arange(0, (stop - at) * width, width), sizes[at:stop]) + position[first:last]] = 1
        bits[at:stop] = np.packbits(cells.reshape(stop - at, width), axis=1).view(">u8")
    return bits


def _longest(found, sizes: np.ndarray, r: int):
    """The patterns at least as long as the r-th longest: (found, sizes) cut to them, or their indices
    when ``found`` is None."""
    cutoff = int(np.partition(sizes, len(sizes) - r)[len(sizes) - r])
    keep = np.flatnonzero(sizes >= cutoff)
    if found is None:
        return keep
    return list(map(found.__getitem__, keep.tolist())), sizes[keep]


def _decode(bits: np.ndarray, size: int, present: np.ndarray) -> list:
    """The item codes of one-word bitsets of ``size`` items each, as ``size`` columns (column i: every
    pattern's i-th smallest item). The item of rank j has the bit 2^(n-1-j), n = len(present) <= 63: the
    lowest set bit is the largest item, so the columns fill from the right."""
    top = 64 - len(present)  # bit position, counted from the top, of item 0
    one = np.uint64(1)
    x = bits[:, 0].copy()
    columns = [None] * size
    for i in range(size - 1, -1, -1):
        low = x & (~x + one)
        columns[i] = present[63 - np.bitwise_count(low - one).astype(np.int64) - top]
        x ^= low
    return columns


class _Overlaps:
    """Items shared by each pair of the ``GRAM_ROWS`` longest records (computed once, on first need)."""

    def __init__(self, m: sp.csr_matrix):
        self.m = m
        self.lengths = np.diff(m.indptr)
        order = np.sort(self.lengths)[::-1]
        self.floor = int(order[min(GRAM_ROWS, len(order)) - 1]) if len(order) > GRAM_ROWS else 0
        if len(order) > GRAM_ROWS and order[GRAM_ROWS] == self.floor:
            self.floor += 1  # the GRAM_ROWS-th and the next tie: keep strictly longer records only
        self.gram = None
        self.position = None

    def covers(self, z: int) -> bool:
        return z >= self.floor

    def partners(self, rows: np.ndarray, z: int) -> np.ndarray:
        """For each of ``rows`` (records of length ≥ z): how many others of ``rows`` share ≥ z items."""
        import scipy.sparse as sp

        if self.gram is None:
            keep = np.flatnonzero(self.lengths >= self.floor)
            block = self.m[keep]
            if block.shape[0] * block.shape[1] <= 1 << 26 and block.nnz >= 0.1 * block.shape[0] * block.shape[1]:
                dense = block.toarray().astype(np.float32)
                self.gram = (dense @ dense.T).astype(np.int32)
            else:
                block = sp.csr_matrix(block, dtype=np.int32)
                self.gram = (block @ block.T).toarray().astype(np.int32)
            np.fill_diagonal(self.gram, 0)
            self.position = np.full(self.m.shape[0], -1, dtype=np.int64)
            self.position[keep] = np.arange(len(keep))
        at = self.position[rows]
        block = self.gram if len(at) == len(self.gram) else self.gram[np.ix_(at, at)]
        return (block >= z).sum(axis=1)


def _cut(m: sp.csr_matrix, k: int, z: int, overlaps: _Overlaps):
    """What a pattern of length ≥ z can use: (records kept, indptr, item codes), or None if nothing."""
    if z <= 1:  # the items of support >= k, in every record holding one (nothing else can be cut)
        hit = (np.bincount(m.indices, minlength=m.shape[1]) >= k)[m.indices]
        cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
        lengths = cum[m.indptr[1:]] - cum[m.indptr[:-1]]
        lengths = lengths[lengths > 0]
        if len(lengths) < k:
            return None
        return len(lengths), np.concatenate(([0], np.cumsum(lengths))), m.indices[hit]
    rows = np.flatnonzero(np.diff(m.indptr) >= z)
    if len(rows) < k:
        return None
    sub = m[rows]
    while True:
        counts = np.bincount(sub.indices, minlength=sub.shape[1])
        frequent = counts >= k
        hit = frequent[sub.indices]
        cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
        lengths = cum[sub.indptr[1:]] - cum[sub.indptr[:-1]]
        long_enough = lengths >= z
        if long_enough.sum() < k:
            return None
        if not hit.all():  # drop the infrequent items, then look again
            sub = _keep_entries(sub, hit)
            continue
        if overlaps.covers(z) and long_enough.all() and 1 < k and k * 100 <= len(rows):
            long_enough = overlaps.partners(rows, z) >= k - 1
            if long_enough.sum() < k:
                return None
        if long_enough.all():
            break
        sub = sub[np.flatnonzero(long_enough)]
        rows = rows[long_enough]
    sub.sort_indices()
    return len(rows), sub.indptr, sub.indices


def _by_rows(rows: int, entries: int, z: int, k: int) -> bool:
    """CARPENTER (row enumeration) for few records, or a floor of at least half their mean length at a
    support of at most 1 % of them; else FP-growth."""
    return rows <= CARPENTER_ROWS or (z >= 0.5 * entries / rows and k * 100 <= rows)


def _first_floor(m: sp.csr_matrix, row_of: np.ndarray, k: int, z: int):
    """(z', statistics): the highest floor z' <= z that k records reach (:func:`_reachable`, monotone
    in the floor: steps doubling down from z, then halving), or (1, None) when not even floor 1 is."""
    reach = _reachable(m, row_of, k, z)
    if reach is not None or z <= 1:
        return z, reach
    high, step = z - 1, 1  # every floor above ``high`` is out of reach
    while True:
        low = max(1, high - step + 1)
        reach = _reachable(m, row_of, k, low)
        if reach is not None or low == 1:
            break
        high, step = low - 1, 2 * step
    if reach is None:
        return 1, None
    while low < high:  # ``low`` is reached
        mid = (low + high + 1) // 2
        found = _reachable(m, row_of, k, mid)
        if found is None:
            high = mid - 1
        else:
            low, reach = mid, found
    return low, reach


def _reachable(m: sp.csr_matrix, row_of: np.ndarray, k: int, z: int) -> tuple[int, int] | None:
    """(records, entries) kept when records hold z items of support >= k among such records, repeatedly
    (the cut's first two rules, on masks, without copying the data); None when fewer than k records are
    kept: then no pattern has z items."""
    rows = np.diff(m.indptr) >= z
    items = np.ones(m.shape[1], dtype=bool)
    while True:
        hit = rows[row_of] & items[m.indices]
        frequent = np.bincount(m.indices[hit], minlength=m.shape[1]) >= k
        hit &= frequent[m.indices]
        cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
        long_enough = rows & (cum[m.indptr[1:]] - cum[m.indptr[:-1]] >= z)
        if long_enough.sum() < k:
            return None
        if (frequent == items).all() and (long_enough == rows).all():
            return int(rows.sum()), int(hit.sum())
        rows, items = long_enough, frequent


def _keep_entries(sub: sp.csr_matrix, hit: np.ndarray) -> sp.csr_matrix:
    import scipy.sparse as sp

    cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
    return sp.csr_matrix((sub.data[hit], sub.indices[hit], cum[sub.indptr]), shape=sub.shape)
