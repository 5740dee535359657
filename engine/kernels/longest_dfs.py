"""The r longest closed (maximal) itemsets by a compiled, length-bounded depth-first search.

FP-growth enumerates every closed pattern above the support and only then keeps the long ones;
this search abandons a branch as soon as its data cannot hold a pattern long enough. It enumerates
closed itemsets as LCM does (prefix-preserving closure extension: items are numbered by falling
support, a branch P ∪ {c} extends only with items numbered below c, items in every one of its records
are absorbed, and a branch whose records all hold an item it may not use is abandoned: that closed
set is found in another branch), and at every branch:

* **peels** its conditional database to a fixpoint: items held by fewer than k of its records go
  (they can be in no frequent superset), records holding fewer than ``need`` candidate items go
  (``need`` = the length still wanted minus the branch's length: such a record holds no pattern
  long enough), repeatedly; fewer than k records left ends the branch;
* **bounds every child at once**: with each record's candidates in ascending order, the child of
  candidate c can reach at most |P| + 1 + (the number of candidates before c in a record holding
  c), so a child with fewer than k records having ``need`` − 1 candidates before c is skipped.

The length wanted is ``max(floor, the r-th longest length found so far)``. :func:`longest_by_dfs`
starts the floor one below the length of a greedily found pattern (a lower bound of the longest) and
lowers it until r patterns are found, so every search prunes hard from its first branch; a
``partial`` search starts at that length and stops there with what it found, however few (every
pattern at least that long: the floor it reports). What earlier searches on more of the same records
proved can be carried in (``LengthBounds``). Records dropped by a peel never hold a pattern long enough, so
every reported pattern's support and closedness are exact (tests: brute force on random data).

A branch with at most 64 candidate items, and so every branch below it, keeps one 64-bit mask a
record (the candidates mapped to bits in their order) instead of a list of items, and one with at most
``SearchOptions.mask_words`` × 64 keeps that many words (each child the words of the bits below its
own, one word once they fit in one): the peel counts an item's records as popcounts of **columns**
(the records holding each item as a bit set, made by 64 × 64 bit transposes) and drops records by
popcounts of their words, so that neither costs an operation per (record, item) entry; closure and
bound are word operations too. A child of a bit-mask branch is peeled on its parent's columns (its
records: the column of its item; its candidates: the parent's below that item) and copied only if
the peel leaves it k records, so the children that end in their own peel, most of them, cost no copy
and no transposes. A bit-mask branch too short to be emitted is not checked for a closure item it
may not use (held by all its records, outside its candidates, read on whole records): that check only
prunes (the branch's closed sets are another branch's, and so is every pattern below it), and the
pattern that would be emitted below it is checked, so the patterns are the same. A one-word branch
also bounds by **item pairs**: the items of a pattern long enough are pairwise held together by
k of its records, a clique in the graph of pairs held together by k records, so an item with fewer
than ``need`` − 1 neighbours goes (and the peel runs again), a branch whose graph has a proper
colouring in fewer than ``need`` classes ends (a clique takes one item of a class at most), a child c
counts only the records holding ``need`` − 1 neighbours of c before it, and a child whose neighbours
before it fall in fewer than ``need`` − 1 classes is skipped.

A search over at least ``SearchOptions.parallel_entries`` (record, item) entries without a branch
limit runs in as many threads as its :class:`SearchOptions` allow (numba releases the GIL), which take
the root's children one at a time from a shared counter; each keeps its own r-th longest length,
which is never above the whole search's, so the union of their patterns holds every pattern the
single search keeps (tests: brute force and one thread).

The search is in parts by concern: its state and constants (:mod:`.dfs_state`), what a branch wants
and whether its pattern is its own (:mod:`.dfs_emit`), branches on item lists (:mod:`.dfs_lists`), on
one-word bit masks (:mod:`.dfs_masks`) and on several words (:mod:`.dfs_wide`), the walks that go
down them (:mod:`.dfs_walk`), and which records hold each pattern found (:mod:`.dfs_holders`); this
module starts a search, runs it in threads and keeps the r longest. numba keys each compiled function's
cache on its own file, not on the files of the functions it calls: after editing one part, delete the
kernels' cache (``engine/kernels/__pycache__/*.nbi`` and ``*.nbc``) so that its callers compile again.

The kernel is compiled with numba when it is installed (``veil[mining]``); without numba the same
code runs as plain Python, correct but slow. The search's counts (branches, copies, prunes, how the
threads shared the work) go to this module's logger at DEBUG level.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from . import dfs_emit, dfs_holders, dfs_lists, dfs_masks, dfs_state, dfs_walk, dfs_wide
from .dfs_state import (
    ALIVE,
    COPIED,
    DEEP,
    FLOOR,
    HAVE_NUMBA,
    HELP_FIRST,
    HELPED,
    MAX_NODES,
    MAXIMAL,
    N_OUT,
    NODES,
    OVERFLOW,
    PART,
    PRUNED,
    ROOT_LEN,
    SKIPPED,
    STATE,
    STOPPED,
    WIDE_WORDS,
    K,
    R,
    njit,
)
from .dfs_walk import _dfs
from .limits import LengthBounds, MiningLimit, run_limited
from .options import SearchOptions

log = logging.getLogger(__name__)

# the search's compiled functions, by concern (each module's docstring says which); see compiled_kernels()
MODULES = (dfs_state, dfs_emit, dfs_lists, dfs_masks, dfs_wide, dfs_walk, dfs_holders)


def have_numba() -> bool:
    return HAVE_NUMBA


def compiled_kernels() -> list:
    """Every function of the search numba compiles (its dispatchers), this module's and its parts'."""
    found = {
        id(v): v
        for module in (*MODULES, sys.modules[__name__])
        for v in vars(module).values()
        if hasattr(v, "py_func") and hasattr(v, "stats")
    }
    return list(found.values())


@njit(cache=True)
def _greedy(ptr, items, n, m, k):
    """The length of a frequent itemset found by adding, while k records remain, the item most of them hold
    (a lower bound of the longest length; 0 when no item is frequent)."""
    cnt = np.zeros(m, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    taken = np.zeros(m, dtype=np.bool_)
    length = 0
    while True:
        for i in range(n):
            if alive[i]:
                for e in range(ptr[i], ptr[i + 1]):
                    cnt[items[e]] += 1
        best = -1
        for j in range(m):
            if not taken[j] and cnt[j] >= k and (best < 0 or cnt[j] > cnt[best]):
                best = j
        cnt[:] = 0
        if best < 0:
            return length
        taken[best] = True
        length += 1
        for i in range(n):
            if alive[i]:
                hit = False
                for e in range(ptr[i], ptr[i + 1]):
                    if items[e] == best:
                        hit = True
                        break
                alive[i] = hit


@njit(cache=True)
def _coded_rows(indptr, indices, number):
    """(ptr, items): each record's items renumbered by ``number`` (-1: left out), ascending, in one pass
    (rather than NumPy's mask, cumulative sum, take and per-row sort)."""
    n = len(indptr) - 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        kept = 0
        for e in range(indptr[i], indptr[i + 1]):
            kept += number[indices[e]] >= 0
        ptr[i + 1] = ptr[i] + kept
    items = np.empty(ptr[n], dtype=np.int32)
    for i in range(n):
        at = ptr[i]
        for e in range(indptr[i], indptr[i + 1]):
            c = number[indices[e]]
            if c >= 0:
                items[at] = c
                at += 1
        items[ptr[i] : at].sort()
    return ptr, items


def _run(
    ptr,
    items,
    n,
    m,
    k,
    r,
    maximal,
    floor,
    max_nodes,
    capacity,
    parts=1,
    limit=None,
    shared=None,
    deep=0,
    options: SearchOptions = SearchOptions(),
):
    """One search at ``floor``, split into ``parts`` threads (each taking the root's next child when
    done with one, with a state of its own); the patterns of all parts, each once, and the summed state.

    Splitting changes no answer: a part keeps every pattern of its branches at least as long as its
    own r-th longest (or the floor), and that length is at most the whole search's, so the union holds
    every pattern the single search keeps (the caller takes the r longest).

    ``limit``: per item number, the lengths earlier searches proved out of reach (see
    :class:`~veil.engine.longest.LengthBounds`; none: nothing proved). The state's ``reach`` is what this search proves,
    per root child taken (-1 for the others). ``options``: the bit-mask width and whether threads help
    first (see :class:`SearchOptions`)."""
    # the root's next child, shared by the parts, and how many there are; in ``shared`` (memory the
    # parent process reads, for the progress) when given
    taken = np.zeros(2, dtype=np.int64) if shared is None else shared[:2]
    taken[:] = 0
    if limit is None:
        limit = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    reach = np.full((parts, m), -1, dtype=np.int64)  # a row a part: the children it took or helped with
    active = np.full(parts, -1, dtype=np.int64)  # the root child each part searches on bit masks
    # per root child searched on bit masks: its next child no part has taken, and the length wanted when
    # it was entered (see _dfs_bits)
    counters = np.zeros((m, 2), dtype=np.int64)
    halt = np.zeros(1, dtype=np.int64)  # 1 once a part's pattern store is full: the others stop too
    busy = [0.0] * parts  # each part's seconds in the search

    def one(part):
        st = np.zeros(STATE, dtype=np.int64)
        st[FLOOR], st[R], st[K], st[MAXIMAL], st[MAX_NODES] = floor, r, k, int(maximal), max_nodes or 0
        st[DEEP] = deep
        st[PART] = part
        st[WIDE_WORDS] = options.mask_words
        st[HELP_FIRST] = int(options.help_first)
        cnt = np.zeros(m, dtype=np.int64)
        hist = np.zeros(m + 2, dtype=np.int64)
        prefix = np.zeros(m + 1, dtype=np.int32)
        mark = np.zeros(m, dtype=np.bool_)
        buf = np.zeros(m, dtype=np.int32)
        out_items = np.zeros(capacity * 64, dtype=np.int32)
        out_start = np.zeros(capacity, dtype=np.int64)
        out_len = np.zeros(capacity, dtype=np.int64)
        out_sup = np.zeros(capacity, dtype=np.int64)
        started = time.monotonic()
        _dfs(
            ptr,
            items,
            np.arange(n, dtype=np.int64),
            n,
            prefix,
            st,
            cnt,
            mark,
            buf,
            hist,
            out_items,
            out_start,
            out_len,
            out_sup,
            taken,
            limit,
            reach[part],
            active,
            counters,
            halt,
        )
        busy[part] = time.monotonic() - started
        found = [(out_items[out_start[i] : out_start[i] + out_len[i]], int(out_sup[i])) for i in range(int(st[N_OUT]))]
        return st, found

    if parts == 1:
        st, found = one(0)
        return st, found, reach[0]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=parts) as pool:
        done = list(pool.map(one, range(parts)))
    log.debug("dfs parts' seconds %s", [round(b, 3) for b in busy])  # how evenly the parts shared the root's children
    st = np.zeros(STATE, dtype=np.int64)
    for key in (NODES, ALIVE, COPIED, PRUNED, SKIPPED, HELPED):
        st[key] = sum(int(d[0][key]) for d in done)
    for key in (OVERFLOW, STOPPED, ROOT_LEN):
        st[key] = max(int(d[0][key]) for d in done)
    seen, found = set(), []
    for _, part_found in done:  # the root's own pattern is every part's: kept once
        for pattern, support in part_found:
            key = np.sort(pattern).tobytes()  # (two copies of a branch may absorb its items in another order)
            if key not in seen:
                seen.add(key)
                found.append((pattern, support))
    return st, found, reach.max(axis=0)


def _parts(entries: int, max_nodes: int | None, options: SearchOptions) -> int:
    """Threads for one search: as many as ``options`` allow for a search over at least
    ``options.parallel_entries`` entries without a branch limit (a limit counts one thread's branches),
    compiled; else one."""
    if max_nodes is not None or entries < options.parallel_entries or not HAVE_NUMBA:
        return 1
    return options.cores


NO_LIMIT = np.iinfo(np.int64).max
ALL_DEEP = 1 << 30  # a deep search's lengths below the one wanted: all of them


def _proved(reach: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Per item number, the bound on closed patterns ending there that a search's ``reach`` proves (see
    :class:`LengthBounds`), and never looser than the ``limit`` it was given."""
    return np.minimum(limit, reach)


def _search(
    m: sp.csr_matrix,
    k: int,
    r: int,
    maximal: bool,
    max_nodes: int | None,
    max_length: int | None,
    bounds: tuple | None = None,
    shared: np.ndarray | None = None,
    partial: bool = False,
    deep: bool | int = False,
    ties: bool = False,
    options: SearchOptions = SearchOptions(),
):
    """("ok", patterns, cut, nodes, bounds, floor) or ("nodes",) when more than ``max_nodes`` branches
    were visited; ``floor`` is not 0 when a ``partial`` search stopped with fewer than r patterns: every
    one at least that long.

    ``bounds``: (order, below, room) of a :class:`~veil.engine.longest.LengthBounds` (None, None, 0 before its
    first search); the answer's are the updated ones (None when not given). ``deep``: with bounds, each root
    child searched is searched down to its own longest pattern, or at most ``deep`` (an int) lengths below
    the length wanted (see ``LengthBounds.deep``). ``ties``: keep
    every pattern as long as the r-th, not just the r (see :func:`_top`).
    ``shared``: three int64 the search keeps up to date for a watching process (root children taken,
    root children, floor). ``options``: threads and the search's sizes (:class:`SearchOptions`)."""
    n_rows, n_items = m.shape
    if n_rows < k:
        return ("ok", [], 0, 0, bounds, 0)
    support = np.bincount(m.indices, minlength=n_items)
    use_bounds = bounds is not None and not maximal
    room = 0
    if use_bounds:
        fixed, below, room = bounds
        if fixed is None:  # the first search sets the order: falling support, ties by item code
            fixed = np.lexsort((np.arange(n_items), -support))
            below = np.full(n_items, NO_LIMIT, dtype=np.int64)
        order = fixed[support[fixed] >= k]
        bounds = [fixed, below.copy(), room]
    else:
        frequent = np.flatnonzero(support >= k)
        # items numbered by falling support (ties: item code), infrequent ones left out
        order = frequent[np.lexsort((frequent, -support[frequent]))]
    if use_bounds:
        gone = support < k
        bounds[1][gone] = 0  # no frequent itemset holds these any more
    if len(order) == 0:
        return ("ok", [], 0, 0, bounds, 0)
    number = np.full(n_items, -1, dtype=np.int64)
    number[order] = np.arange(len(order))
    ptr, items = _coded_rows(m.indptr, m.indices, number)  # each record's items numbered, ascending
    mm = len(order)
    # the first floor is one below the greedy pattern's length (a lower bound of the longest length): a
    # floor at or below the longest length finds every pattern at least that long (the answer, when r of
    # them), and the r-th longest length found raises it. One below, because when fewer than r patterns
    # reach the greedy length a search there is wasted (the next floor searches it all again), while when
    # r do, they are found in the first children and the length wanted rises at once. (Upper bounds, the
    # caller's max_length among them, cannot start it lower: the peel of the whole database at the longest
    # length keeps that pattern's records.) A partial search starts at the greedy length itself, which at
    # least one pattern reaches, and stops there: its caller (PatternKa's cache) can use every pattern at
    # least that long, and is spared a search one length lower, which the r-th pattern may need.
    z = max(1, int(_greedy(ptr, items, n_rows, mm, k)) - (0 if partial else 1))
    limit = bounds[1][order] if use_bounds else None
    nodes = 0
    log.debug("dfs rows %d items %d first floor %d", n_rows, mm, z)
    # patterns kept at once; a search that needs more runs again with more, and a run's later searches
    # start with what an earlier one needed
    capacity = max(options.capacity or max(1 << 15, 16 * r), room)
    # deep: every root child searched to its longest pattern, or at most ``deep`` lengths below the length wanted
    dz = (ALL_DEEP if deep is True else int(deep)) if use_bounds else 0
    parts = _parts(len(items), max_nodes, options)
    while True:
        started = time.monotonic()
        if shared is not None:
            shared[2] = z
        st, found, reach = _run(
            ptr,
            items,
            n_rows,
            mm,
            k,
            r,
            maximal,
            z,
            None if max_nodes is None else max_nodes - nodes,
            capacity,
            parts,
            limit,
            shared,
            dz,
            options,
        )
        nodes += int(st[NODES])
        log.debug(
            "dfs floor %d found %d nodes %d inner %d copied %d pair prunes %d children skipped %d helped %d "
            "deep %d threads %d seconds %.3f",
            z,
            len(found),
            st[NODES],
            st[ALIVE],
            st[COPIED],
            st[PRUNED],
            st[SKIPPED],
            st[HELPED],
            dz,
            parts,
            time.monotonic() - started,
        )
        if st[STOPPED]:
            return ("nodes",)
        if st[OVERFLOW]:
            capacity *= 4
            if use_bounds:
                bounds[2] = capacity
            continue
        if use_bounds and st[ROOT_LEN] == 0:
            reach[reach < 0] = max(z - dz, 1)  # not a root child: cut at the root, at the (deep) floor
            limit = _proved(reach, limit)
            bounds[1][order] = limit
        if len(found) >= r or z <= 1 or (partial and found):
            break
        z -= 1
        if use_bounds:  # no closed pattern is as long as the largest bound
            z = max(1, min(z, int(limit.max(initial=1)) - 1))
    return ("ok", *_top(found, order, r, ties), nodes, bounds, z if partial and len(found) < r else 0)


def _top(found, order, r, ties=False):
    """The r longest (ties: smallest item list, in item codes) as ascending tuples, and the cut.

    ``ties``: every pattern as long as the r-th too. The search found them all (it keeps every pattern
    at least as long as the length it wants, and wants at most the r-th longest length), so the list
    is then complete at its shortest length and the cut is one below that length."""
    patterns = [(tuple(sorted(order[items].tolist())), support) for items, support in found]
    patterns.sort(key=lambda p: (-len(p[0]), p[0]))
    if len(patterns) < r:
        return patterns, 0
    if ties:
        shortest = len(patterns[r - 1][0])
        return [p for p in patterns if len(p[0]) >= shortest], shortest - 1
    return patterns[:r], len(patterns[r - 1][0])


def _watched(progress: Callable[[int, int, int], None]):
    """Three int64 in memory a forked child shares (root children taken, their number, the length
    searched for), and a function that reports them through ``progress`` at most twice a second."""
    import mmap

    shared = np.frombuffer(mmap.mmap(-1, 3 * 8), dtype=np.int64)
    last = [0.0]

    def waiting():
        now = time.monotonic()
        if now - last[0] >= 0.5 and shared[1] > 0:
            last[0] = now
            progress(int(min(shared[0], shared[1])), int(shared[1]), int(shared[2]))

    return shared, waiting


def longest_by_dfs(
    m: sp.csr_matrix,
    k: int,
    r: int,
    maximal: bool,
    *,
    max_seconds: float | None = None,
    max_nodes: int | None = None,
    check: Callable[[], None] | None = None,
    max_length: int | None = None,
    bounds: LengthBounds | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    partial: bool = False,
    ties: bool = False,
    options: SearchOptions = SearchOptions(),
):
    """(patterns, cut, nodes, floor) as :func:`veil.engine.longest_itemsets` reports them; ``m`` boolean CSR with
    sorted indices; ``max_length``: the caller's guarantee that no frequent itemset is longer (accepted as
    the other backends accept it; this search needs no upper bound to start);
    ``bounds``: carried from the searches before on more of the same records, and updated;
    ``progress(taken, children, length)``: called while the search runs in a child process (a time limit
    or a cancel check given), about twice a second and once when it ends, with the root's children
    taken so far, their number and the length searched for; ``options``: threads and the search's sizes."""

    if HAVE_NUMBA and (max_seconds is not None or check is not None):
        _warm()  # compile here, not once per forked child
    carried = None if bounds is None else (bounds.order, bounds.below, bounds.room)
    shared = waiting = None
    if progress is not None:
        shared, waiting = _watched(progress)
    deep = 0 if bounds is None or (bounds.order is None and not bounds.deepen_first) else bounds.deep
    out = run_limited(
        _search,
        (m, k, r, maximal, max_nodes, max_length, carried, shared, partial, deep, ties, options),
        max_seconds=max_seconds,
        check=check,
        what="the longest-pattern search",
        waiting=waiting,
    )
    if progress is not None and shared[1] > 0:  # the last state too, however short the search was
        progress(int(min(shared[0], shared[1])), int(shared[1]), int(shared[2]))
    if out[0] == "nodes":
        raise MiningLimit(
            f"the longest-pattern search stopped after visiting {max_nodes} branches without "
            f"finishing; raise the limit, raise k or ask for fewer patterns"
        )
    if bounds is not None and out[4] is not None:
        bounds.update(*out[4])
    return out[1], out[2], out[3], out[5]


_WARM = []


def _warm() -> None:
    if not _WARM:
        x = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]], dtype=bool))
        _search(x, 1, 2, False, None, None)
        _WARM.append(True)
