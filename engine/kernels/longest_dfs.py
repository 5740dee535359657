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

The kernel is compiled with numba when it is installed (``veil[mining]``); without numba the same
code runs as plain Python, correct but slow. The search's counts (branches, copies, prunes, how the
threads shared the work) go to this module's logger at DEBUG level.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from .limits import LengthBounds, MiningLimit, run_limited
from .options import SearchOptions

log = logging.getLogger(__name__)

try:  # numba is optional: without it the kernel is plain Python
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised where numba is not installed
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f


# st (the search's state, int64): indices
(
    NODES,
    THR,
    N_OUT,
    USED,
    OVERFLOW,
    FLOOR,
    R,
    K,
    MAXIMAL,
    MAX_NODES,
    STOPPED,
    COPIED,
    ALIVE,
    PRUNED,
    ROOT_LEN,
    EMAX,
    SKIPPED,
    DEEP,
    WIDE_WORDS,
    PART,
    HELPED,
    HELP_FIRST,
) = range(22)
STATE = 22
WORD = 64  # a branch whose candidates are all numbered below this is searched on one bit mask a record
# (one with at most ``SearchOptions.mask_words`` * WORD candidates on that many words a record: st[WIDE_WORDS])
SHARED_DONE = 1 << 62  # a shared branch's counter once its children are all taken (see _dfs_bits)
PENDING = -2  # a thread's root child in ``active`` while it takes one and makes its masks (see _dfs)


def have_numba() -> bool:
    return HAVE_NUMBA


@njit(cache=True)
def _supported(items, start, end, cnt, k):
    """How many of the entries ``items[start:end]`` are items with support ≥ k (by ``cnt``)."""
    w = 0
    for e in range(start, end):
        if cnt[items[e]] >= k:
            w += 1
    return w


@njit(cache=True)
def _copy_supported(items, start, end, cnt, k, out, at):
    """Append the supported entries of ``items[start:end]`` to ``out`` from ``at``; the new end."""
    for e in range(start, end):
        it = items[e]
        if cnt[it] >= k:
            out[at] = it
            at += 1
    return at


@njit(cache=True)
def _peel(ptr, items, rid, n, need, k, cnt):
    """The fixpoint of dropping items with support < k and records with fewer than ``need`` items.

    Returns (ptr, items, rid, n); on return ``cnt[item]`` holds every kept item's support (the caller
    zeroes it by walking the kept entries), or n < k and ``cnt`` is zero."""
    while True:
        if n < k:
            return ptr, items, rid, n
        total = ptr[n]
        for e in range(total):
            cnt[items[e]] += 1
        dropped = False
        kept_rows = 0
        kept_entries = 0
        for i in range(n):
            w = _supported(items, ptr[i], ptr[i + 1], cnt, k)
            if w >= need:
                kept_rows += 1
                kept_entries += w
                if w != ptr[i + 1] - ptr[i]:
                    dropped = True
            else:
                dropped = True
        if not dropped:
            return ptr, items, rid, n
        new_ptr = np.empty(kept_rows + 1, dtype=np.int64)
        new_items = np.empty(kept_entries, dtype=np.int32)
        new_rid = np.empty(kept_rows, dtype=np.int64)
        new_ptr[0] = 0
        row = 0
        at = 0
        for i in range(n):
            if _supported(items, ptr[i], ptr[i + 1], cnt, k) >= need:
                at = _copy_supported(items, ptr[i], ptr[i + 1], cnt, k, new_items, at)
                new_rid[row] = rid[i]
                row += 1
                new_ptr[row] = at
        for e in range(total):
            cnt[items[e]] = 0
        ptr, items, rid, n = new_ptr, new_items, new_rid, kept_rows


@njit(cache=True)
def _lower_bound(items, lo, hi, it):
    """The first position in the ascending ``items[lo:hi]`` whose item is not below ``it`` (hi if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] < it:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _witnessed(rid, n, last, ptr0, items0, mark, buf):
    """Whether an item numbered ≥ last and not marked (not in P) is held by all n records (by their
    whole rows ``ptr0``/``items0``): the intersection, started from the shortest row and stopped as
    soon as it is empty; a row is searched by bisection once the intersection is much shorter."""
    shortest = 0
    for q in range(1, n):
        if ptr0[rid[q] + 1] - ptr0[rid[q]] < ptr0[rid[shortest] + 1] - ptr0[rid[shortest]]:
            shortest = q
    r0 = rid[shortest]
    size = 0
    for e in range(ptr0[r0], ptr0[r0 + 1]):
        it = items0[e]
        if it >= last and not mark[it]:
            buf[size] = it
            size += 1
    q = 0
    while size > 0 and q < n:
        if q == shortest:
            q += 1
            continue
        r = rid[q]
        e = ptr0[r]
        end = ptr0[r + 1]
        kept = 0
        if size * 16 < end - e:  # few left: bisect the row for each
            for t in range(size):
                it = buf[t]
                e = _lower_bound(items0, e, end, it)
                if e < end and items0[e] == it:
                    buf[kept] = it
                    kept += 1
        else:
            for t in range(size):
                it = buf[t]
                while e < end and items0[e] < it:
                    e += 1
                if e < end and items0[e] == it:
                    buf[kept] = it
                    kept += 1
        size = kept
        q += 1
    return size > 0


@njit(cache=True)
def _closure_checks(rid, n, last, prefix, plen, total, st, cnt, mark, buf, ptr0, items0):
    """(witnessed, total) of a branch P with ``total`` candidate entries left: witnessed when an item
    P may not use (numbered ≥ last, not in P) is held by every record, which makes this closed set
    another branch's (prefix-preserving closure); total = -1 when maximal patterns are wanted and an
    item outside P is frequent among P's records (P is not maximal: emit nothing, nothing below)."""
    for t in range(plen):
        mark[prefix[t]] = True
    witnessed = last < len(mark) and _witnessed(rid, n, last, ptr0, items0, mark, buf)
    if not witnessed and st[MAXIMAL] != 0 and total == 0 and plen >= _want(st):
        k = st[K]
        for q in range(n):
            r = rid[q]
            for e in range(ptr0[r], ptr0[r + 1]):
                cnt[items0[e]] += 1
        frequent = False
        for q in range(n):
            r = rid[q]
            for e in range(ptr0[r], ptr0[r + 1]):
                it = items0[e]
                if cnt[it] >= k and not mark[it]:
                    frequent = True
                cnt[it] = 0
        if frequent:
            total = -1
    for t in range(plen):
        mark[prefix[t]] = False
    return witnessed, total


@njit(cache=True)
def _want(st):
    """The length a pattern must reach to matter to the search now: the r-th longest length found or the
    floor, whichever is more; in a deep search (``st[DEEP]``: how many lengths deeper), while the root
    child being searched holds nothing that long, one more than the longest it holds so far, but at
    least that many lengths below (and at least 1): what is found below the search's length only raises
    the child's bound, and is not kept."""
    want = max(st[THR], st[FLOOR])
    if st[DEEP] > 0 and st[EMAX] < want:
        return max(want - st[DEEP], st[EMAX] + 1, 1)
    return want


@njit(cache=True)
def _reach(st):
    """A length every closed pattern of the root child just searched is shorter than: the length it
    wanted at the end, or one more than the longest it found."""
    return max(_want(st), st[EMAX] + 1)


@njit(cache=True)
def _visit(st):
    """Count a branch; False, and the search marked stopped, past the branch limit."""
    st[NODES] += 1
    if st[MAX_NODES] > 0 and st[NODES] > st[MAX_NODES]:
        st[STOPPED] = 1
        return False
    return True


@njit(cache=True)
def _own_pattern(
    rid, n, last, prefix, plen, total, st, cnt, mark, buf, ptr0, items0, hist, out_items, out_start, out_len, out_sup
):
    """After a branch's peel and closure (P = ``prefix[:plen]``, ``total`` candidate entries left): emit P
    when it is long enough (and, for maximal patterns, nothing frequent extends it), and say whether
    the branch's children are to be searched: not when another branch owns this closed set, when the
    pattern store overflowed, or when nothing is left to extend P."""
    witnessed, total = _closure_checks(rid, n, last, prefix, plen, total, st, cnt, mark, buf, ptr0, items0)
    if witnessed:
        return False
    if plen > 0 and plen >= _want(st):
        if st[MAXIMAL] == 0 or total == 0:
            if plen >= max(st[THR], st[FLOOR]):
                _emit(prefix, plen, n, st, hist, out_items, out_start, out_len, out_sup)
                if st[OVERFLOW]:
                    return False
            elif plen > st[EMAX]:  # deep: only the child's bound rises
                st[EMAX] = plen
    return total > 0


@njit(cache=True)
def _emit(prefix, plen, support, st, hist, out_items, out_start, out_len, out_sup):
    """Store a pattern; raise the threshold (the r-th longest length) when r are at least that long."""
    if st[N_OUT] >= len(out_len) or st[USED] + plen > len(out_items):
        _compact(st, out_items, out_start, out_len, out_sup)
        if st[N_OUT] >= len(out_len) or st[USED] + plen > len(out_items):
            st[OVERFLOW] = 1
            return
    i = st[N_OUT]
    out_start[i] = st[USED]
    out_len[i] = plen
    out_sup[i] = support
    for t in range(plen):
        out_items[st[USED] + t] = prefix[t]
    st[USED] += plen
    st[N_OUT] += 1
    hist[plen] += 1
    if plen > st[EMAX]:
        st[EMAX] = plen
    # the largest length L with at least r patterns of length >= L
    thr = st[THR]
    above = 0
    for length in range(len(hist) - 1, thr, -1):
        above += hist[length]
        if above >= st[R]:
            st[THR] = length
            break


@njit(cache=True)
def _compact(st, out_items, out_start, out_len, out_sup):
    """Forget the patterns shorter than the length wanted now."""
    want = max(st[THR], st[FLOOR])
    j = 0
    used = 0
    for i in range(st[N_OUT]):
        if out_len[i] >= want:
            s = out_start[i]
            for t in range(out_len[i]):
                out_items[used + t] = out_items[s + t]
            out_start[j] = used
            out_len[j] = out_len[i]
            out_sup[j] = out_sup[i]
            used += out_len[i]
            j += 1
    st[N_OUT] = j
    st[USED] = used


@njit(cache=True)
def _enter(
    ptr,
    items,
    rid,
    n,
    last,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
):
    """One branch: ``prefix[:plen]`` is P, rows ``ptr``/``items`` the records holding P (their items below
    ``last``, the ones that may extend P, ascending; ``rid``: their numbers in ``ptr0``/``items0``, the
    whole records). Emits P when it qualifies; returns (ptr, items, rid, plen, children, holders, at,
    starts): the branch's peeled records, its length after closure, its children, and for each child the
    records holding it and where it sits in each (no children: nothing below)."""
    none = np.empty(0, dtype=np.int32)
    nowhere = np.empty(0, dtype=np.int64)
    if not _visit(st):
        return ptr, items, rid, plen, none, nowhere, nowhere, nowhere
    k = st[K]
    need = _want(st) - plen
    ptr, items, rid, n = _peel(ptr, items, rid, n, need, k, cnt)
    if n < k:
        return ptr, items, rid, plen, none, nowhere, nowhere, nowhere
    total = ptr[n]
    # closure: items held by every record are absorbed into P
    absorbed = 0
    for e in range(total):
        it = items[e]
        if cnt[it] == n:
            cnt[it] = -cnt[it]  # mark once
            prefix[plen + absorbed] = it
            absorbed += 1
    remaining = total
    if absorbed:
        for t in range(absorbed):
            cnt[prefix[plen + t]] = 0
        remaining = 0
        for e in range(total):
            if cnt[items[e]] > 0:
                remaining += 1
        new_items = np.empty(remaining, dtype=np.int32)
        new_ptr = np.empty(n + 1, dtype=np.int64)
        new_ptr[0] = 0
        at = 0
        for i in range(n):
            for e in range(ptr[i], ptr[i + 1]):
                it = items[e]
                if cnt[it] > 0:
                    new_items[at] = it
                    at += 1
            new_ptr[i + 1] = at
        for e in range(total):
            cnt[items[e]] = 0
        ptr, items = new_ptr, new_items
        plen += absorbed
    else:
        for e in range(total):
            cnt[items[e]] = 0
    total = remaining
    if not _own_pattern(
        rid,
        n,
        last,
        prefix,
        plen,
        total,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
    ):
        return ptr, items, rid, plen, none, nowhere, nowhere, nowhere
    # children: every item c; bound all at once by the items before c in each record
    want = _want(st)
    need = want - plen  # the child needs need - 1 items before c
    for i in range(n):
        t = 0
        for e in range(ptr[i], ptr[i + 1]):
            if t + 1 >= need:
                cnt[items[e]] += 1
            t += 1
    m_local = 0
    for e in range(total):
        it = items[e]
        if cnt[it] >= k:
            m_local += 1
            cnt[it] = -cnt[it]  # count each child once
    children = np.empty(m_local, dtype=np.int32)
    j = 0
    for e in range(total):
        it = items[e]
        if cnt[it] < 0:
            children[j] = it
            j += 1
            cnt[it] = 0
    for e in range(total):
        cnt[items[e]] = 0
    if m_local == 0:
        return ptr, items, rid, plen, none, nowhere, nowhere, nowhere
    children.sort()
    # the records holding each child, and the entry where it sits (cnt maps item -> child slot + 1)
    for j in range(m_local):
        cnt[children[j]] = j + 1
    starts = np.zeros(m_local + 1, dtype=np.int64)
    for e in range(total):
        if cnt[items[e]] > 0:
            starts[cnt[items[e]]] += 1
    for j in range(m_local):
        starts[j + 1] += starts[j]
    fill = starts[:-1].copy()
    holders = np.empty(starts[m_local], dtype=np.int64)
    where = np.empty(starts[m_local], dtype=np.int64)
    for i in range(n):
        for e in range(ptr[i], ptr[i + 1]):
            slot = cnt[items[e]] - 1
            if slot >= 0:
                holders[fill[slot]] = i
                where[fill[slot]] = e
                fill[slot] += 1
    for j in range(m_local):
        cnt[children[j]] = 0
    return ptr, items, rid, plen, children, holders, where, starts


@njit(cache=True)
def _popcount(x):
    """Set bits of a uint64 (SWAR; LLVM turns it into one instruction where there is one)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


if HAVE_NUMBA:
    from numba.cpython.unsafe.numbers import trailing_zeros as _ctz  # one instruction

    @njit(cache=True)
    def _lowest(x):
        """The number of the lowest set bit of a non-zero uint64."""
        return np.int64(_ctz(x))
else:  # pragma: no cover - exercised where numba is not installed

    def _lowest(x):
        return _popcount((x & (~x + np.uint64(1))) - np.uint64(1))


if HAVE_NUMBA:
    from numba.core import cgutils, types
    from numba.core.extending import intrinsic

    @intrinsic
    def _fetch_add(typingctx, array, index, value):
        """``array[index] += value`` (an int64 array) in one atomic step, which no other load or store
        moves across (sequentially consistent); the value before."""

        def codegen(context, builder, signature, args):
            array_type = signature.args[0]
            at = context.make_array(array_type)(context, builder, args[0])
            index = context.cast(builder, args[1], signature.args[1], types.intp)
            value = context.cast(builder, args[2], signature.args[2], types.int64)
            where = cgutils.get_item_pointer(context, builder, array_type, at, [index])
            return builder.atomic_rmw("add", where, value, "seq_cst")

        return types.int64(array, index, value), codegen
else:  # pragma: no cover - exercised where numba is not installed

    def _fetch_add(array, index, value):
        before = int(array[index])
        array[index] = before + value
        return before


@njit(cache=True)
def _transpose64(a):
    """In place: afterwards ``a[b]`` bit j is what ``a[j]`` bit b was (a 64 × 64 bit matrix transposed by
    swapping ever smaller blocks, Hacker's Delight § 7-3)."""
    j = 32
    m = np.uint64(0x00000000FFFFFFFF)
    while j != 0:
        k = 0
        sj = np.uint64(j)
        while k < 64:
            t = ((a[k] >> sj) ^ a[k + j]) & m
            a[k] ^= t << sj
            a[k + j] ^= t
            k = (k + j + 1) & ~j
        j >>= 1
        m ^= m << np.uint64(j)


@njit(cache=True)
def _columns(masks, n, cols, row0=0):
    """``cols[row0 + b, w]`` bit j = bit b of ``masks[64 w + j]``: the records holding each bit, as bit sets."""
    blk = np.empty(WORD, dtype=np.uint64)
    for w in range((n + 63) >> 6):
        base = w << 6
        top = min(WORD, n - base)
        for j in range(top):
            blk[j] = masks[base + j]
        for j in range(top, WORD):
            blk[j] = 0
        _transpose64(blk)
        for b in range(WORD):
            cols[row0 + b, w] = blk[b]


@njit(cache=True)
def _all_in(alive, n):
    """Set ``alive`` to the bit set of records 0..n-1; returns its number of words."""
    words = (n + 63) >> 6
    for w in range(words):
        alive[w] = ~np.uint64(0)
    if n & 63:
        alive[words - 1] = (np.uint64(1) << np.uint64(n & 63)) - np.uint64(1)
    return words


@njit(cache=True)
def _held_by(cols, row, alive, words):
    """How many of the records in ``alive`` hold the item of column ``row``."""
    c = 0
    for w in range(words):
        c += _popcount(cols[row, w] & alive[w])
    return c


@njit(cache=True)
def _adjacency(cols, alive, words, n_alive, k, live, cnt64, adj):
    """``adj[b]``: the live items held together with live item b by at least k of the n_alive records in
    ``alive`` (a bit set over the columns ``cols``; ``cnt64[b]``: how many of them hold b). Two items
    held by c and c' of them are held together by at least c + c' - n_alive: no count is needed then."""
    one = np.uint64(1)
    adj[:] = 0
    x = live
    while x:
        b = _lowest(x)
        x &= x - one
        y = x
        sure = n_alive + k - cnt64[b]
        while y:
            b2 = _lowest(y)
            y &= y - one
            if cnt64[b2] >= sure:
                adj[b] |= one << np.uint64(b2)
                adj[b2] |= one << np.uint64(b)
                continue
            co = 0
            for w in range(words):
                co += _popcount(cols[b, w] & cols[b2, w] & alive[w])
            if co >= k:
                adj[b] |= one << np.uint64(b2)
                adj[b2] |= one << np.uint64(b)


@njit(cache=True)
def _colour(adj, live, classes):
    """A greedy proper colouring of the live items' graph ``adj`` (items in ascending order, each in the
    first class holding none of its neighbours); returns the number of classes (``classes[:c]``, bits)."""
    one = np.uint64(1)
    used = 0
    x = live
    while x:
        b = _lowest(x)
        x &= x - one
        bit = one << np.uint64(b)
        c = 0
        while c < used and (classes[c] & adj[b]):
            c += 1
        if c == used:
            classes[c] = 0
            used += 1
        classes[c] |= bit
    return used


@njit(cache=True)
def _peel_mask(masks, cols, alive, words, n_alive, keep, need, st, cnt64, adj, classes):
    """The peel of a one-word branch, to its fixpoint, on columns (``cols[b]``: the records holding bit b,
    a bit set) and a bit set ``alive`` of the records still in (both over the records of ``masks``, which
    may be a parent's: then ``alive`` starts as the child's records and ``keep`` as its candidates, and
    the parent's columns serve, so that a child that ends here is never copied). An item's count is a
    few popcounts, not an increment per record. With ``need`` ≥ 2, the
    items of a pattern long enough are pairwise held together by k records (a clique of at least need
    items in ``adj``): items with fewer than need - 1 neighbours go and the peel runs again; then at most
    one item of each class of a proper colouring (``classes``) is in it: fewer than need classes ends the
    branch. Returns (records left: 0 when the branch ends, the items kept, the colouring's classes or -1
    when there is none); ``cnt64[b]`` is then kept item b's count and ``alive`` the records left."""
    k = st[K]
    one = np.uint64(1)
    while True:
        if n_alive < k:
            return 0, keep, -1
        held = np.uint64(0)  # the items k records hold
        x = keep
        while x:
            b = _lowest(x)
            x &= x - one
            c = _held_by(cols, b, alive, words)
            cnt64[b] = c
            if c >= k:
                held |= one << np.uint64(b)
        changed = held != keep
        keep = held
        for w in range(words):  # records with fewer than need of them go
            y = alive[w]
            while y:
                j = _lowest(y)
                y &= y - one
                if _popcount(masks[(w << 6) + j] & keep) < need:
                    alive[w] &= ~(one << np.uint64(j))
                    n_alive -= 1
                    changed = True
        if changed:
            continue
        if need < 2:
            return n_alive, keep, -1
        _adjacency(cols, alive, words, n_alive, k, keep, cnt64, adj)
        drop = np.uint64(0)
        x = keep
        while x:
            b = _lowest(x)
            x &= x - one
            if _popcount(adj[b]) < need - 1:
                drop |= one << np.uint64(b)
        if drop:
            st[PRUNED] += 1
            keep &= ~drop
            continue
        n_classes = _colour(adj, keep, classes)
        if n_classes < need:
            st[PRUNED] += 1
            return 0, keep, -1
        return n_alive, keep, n_classes


@njit(cache=True)
def _close_mask(
    masks,
    rid,
    n,
    last,
    prefix,
    plen,
    keep,
    n_classes,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt64,
    item_of,
    adj,
    classes,
):
    """A one-word branch after its peel (its n records' masks cut to ``keep``, ``cnt64`` the kept items'
    counts): items held by every record are absorbed into P, P is emitted or the branch left (see
    :func:`_own_pattern`; a branch too short to be emitted is not checked), and its children are bounded.
    Returns (plen, children: bits)."""
    none = np.empty(0, dtype=np.int64)
    one = np.uint64(1)
    coloured = n_classes >= 0
    for b in range(WORD):
        if not (keep >> np.uint64(b)) & one:
            cnt64[b] = 0
    # closure: items held by every record are absorbed into P
    full = np.uint64(0)
    for b in range(WORD):
        if cnt64[b] == n:
            full |= one << np.uint64(b)
    total = 0
    if full:
        x = full
        while x:
            prefix[plen] = item_of[_lowest(x)]
            plen += 1
            x &= x - one
        for i in range(n):
            masks[i] &= ~full
    for i in range(n):
        total += _popcount(masks[i])
    # a branch too short to be emitted is not checked for a closure item it may not use: that check only
    # prunes, and every pattern below it is checked when it is emitted (items numbered from ``last`` on
    # are outside the masks: the check reads the whole rows)
    if plen >= _want(st):
        if not _own_pattern(
            rid,
            n,
            last,
            prefix,
            plen,
            total,
            st,
            cnt,
            mark,
            buf,
            ptr0,
            items0,
            hist,
            out_items,
            out_start,
            out_len,
            out_sup,
        ):
            return plen, none
    return plen, _mask_children(masks, n, _want(st) - plen, full, coloured, n_classes, st, cnt64, adj, classes)


@njit(cache=True)
def _mask_children(masks, n, need, full, coloured, n_classes, st, cnt64, adj, classes):
    """The children of a one-word branch of n records (masks cut to its candidates): every item c with k
    records holding need - 1 candidates before it (with the pair graph: need - 1 of its neighbours
    before it, in enough colour classes)."""
    k = st[K]
    one = np.uint64(1)
    cnt64[:] = 0
    for i in range(n):
        x = masks[i]
        t = 0
        while x:
            if t + 1 >= need:
                b = _lowest(x)
                # with the pair graph: the candidates before b that b shares k records with
                if not coloured or _popcount(masks[i] & adj[b] & ((one << np.uint64(b)) - one)) + 1 >= need:
                    cnt64[b] += 1
            t += 1
            x &= x - one
    if coloured:  # child b: at most one item below b from each class holding a neighbour of b
        for b in range(WORD):
            if cnt64[b] >= k:
                lower = adj[b] & ((one << np.uint64(b)) - one) & ~full
                reach = 1
                for c in range(n_classes):
                    if classes[c] & lower:
                        reach += 1
                if reach < need:
                    cnt64[b] = 0
                    st[PRUNED] += 1
    return np.flatnonzero(cnt64 >= k)


@njit(cache=True)
def _enter_mask(
    masks,
    rid,
    n,
    last,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt64,
    item_of,
    adj,
    classes,
    cols,
    alive,
    want,
):
    """:func:`_enter` for a branch with at most ``WORD`` candidates: each record's candidates are one
    bit mask (bit b = item ``item_of[b]``, in the items' order), peeled, closed and bounded with word
    operations in place (``masks``/``rid`` are the branch's own; ``adj``, ``classes``, ``cols`` and
    ``alive`` are scratch, large enough for n records; peeled at length ``want``). Returns (n, plen,
    children: bits)."""
    none = np.empty(0, dtype=np.int64)
    if not _visit(st):
        return 0, plen, none
    _columns(masks, n, cols)
    words = _all_in(alive, n)
    n_alive, keep, n_classes = _peel_mask(
        masks, cols, alive, words, n, ~np.uint64(0), want - plen, st, cnt64, adj, classes
    )
    if n_alive == 0:
        return 0, plen, none
    n = _gather(masks, rid, alive, words, keep, masks, rid)
    plen, children = _close_mask(
        masks,
        rid,
        n,
        last,
        prefix,
        plen,
        keep,
        n_classes,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
        cnt64,
        item_of,
        adj,
        classes,
    )
    return n, plen, children


@njit(cache=True)
def _gather(masks, rid, alive, words, keep, out, out_rid):
    """The records in ``alive``, their masks cut to ``keep``, in order into ``out``/``out_rid`` (which may
    be ``masks``/``rid`` themselves); returns their number."""
    one = np.uint64(1)
    n = 0
    for w in range(words):
        y = alive[w]
        while y:
            j = _lowest(y)
            y &= y - one
            i = (w << 6) + j
            out[n] = masks[i] & keep
            out_rid[n] = rid[i]
            n += 1
    return n


@njit(cache=True)
def _enter_child(
    pm,
    prid,
    pcols,
    pwords,
    plive,
    c,
    alive,
    n_alive,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt64,
    item_of,
    adj,
    classes,
):
    """:func:`_enter_mask` for the child of bit ``c`` (at most 64) of a branch whose records' word 0 is
    ``pm`` with columns ``pcols`` (``pwords`` words; ``plive`` the bits any of them holds), its
    ``n_alive`` records in ``alive`` (column c): the child is peeled on its parent's columns and copied
    only if its peel leaves it k records. Returns (masks, rid, n, plen, children: bits)."""
    none = np.empty(0, dtype=np.int64)
    if not _visit(st):
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64), 0, plen, none
    one = np.uint64(1)
    keep = plive & (((one << np.uint64(c)) - one) if c < WORD else ~np.uint64(0))
    n_alive, keep, n_classes = _peel_mask(
        pm, pcols, alive, pwords, n_alive, keep, _want(st) - plen, st, cnt64, adj, classes
    )
    if n_alive == 0:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64), 0, plen, none
    masks = np.empty(n_alive, dtype=np.uint64)
    rid = np.empty(n_alive, dtype=np.int64)
    n = _gather(pm, prid, alive, pwords, keep, masks, rid)
    st[COPIED] += n
    plen, children = _close_mask(
        masks,
        rid,
        n,
        item_of[c],
        prefix,
        plen,
        keep,
        n_classes,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
        cnt64,
        item_of,
        adj,
        classes,
    )
    return masks, rid, n, plen, children


@njit(cache=True)
def _peel_wide(masks, cols, alive, words, n_alive, keep, need, st, cnt_w):
    """:func:`_peel_mask` for a branch of ``len(keep)`` words a record (record i's candidates are the bits
    of ``masks[:, i]`` cut to ``keep``; ``masks``, ``cols`` and ``alive`` may be a parent's, as there), to
    its fixpoint (no pair graph: at these sizes nearly every pair is held together by k records).
    Returns the records left (0 when the branch ends); ``cnt_w`` then holds the kept items' counts."""
    k = st[K]
    one = np.uint64(1)
    n_words = len(keep)
    while True:
        if n_alive < k:
            return 0
        changed = False
        for v in range(n_words):
            held = np.uint64(0)
            x = keep[v]
            while x:
                b = _lowest(x)
                x &= x - one
                c = _held_by(cols, v * WORD + b, alive, words)
                cnt_w[v * WORD + b] = c
                if c >= k:
                    held |= one << np.uint64(b)
            if held != keep[v]:
                changed = True
                keep[v] = held
        for w in range(words):
            y = alive[w]
            while y:
                j = _lowest(y)
                y &= y - one
                i = (w << 6) + j
                t = 0
                for v in range(n_words):
                    t += _popcount(masks[v, i] & keep[v])
                if t < need:
                    alive[w] &= ~(one << np.uint64(j))
                    n_alive -= 1
                    changed = True
        if not changed:
            return n_alive


@njit(cache=True)
def _close_wide(
    masks,
    rid,
    alive,
    words,
    keep,
    n_alive,
    out,
    out_rid,
    last,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt_w,
    item_of,
):
    """A wide branch after its peel (its records: ``alive`` over ``masks``/``rid``; ``cnt_w`` the kept
    items' counts): items held by every record are absorbed into P, the records are gathered with their
    words cut to ``keep`` into ``out``/``out_rid`` (which may be ``masks``/``rid``), P is emitted or the
    branch left (:func:`_own_pattern`) and its children bounded by the items before each. Returns (n,
    plen, children: bits)."""
    none = np.empty(0, dtype=np.int64)
    k = st[K]
    one = np.uint64(1)
    n_words = len(keep)
    for v in range(n_words):
        x = keep[v]
        while x:
            b = _lowest(x)
            x &= x - one
            if cnt_w[v * WORD + b] == n_alive:
                prefix[plen] = item_of[v * WORD + b]
                plen += 1
                keep[v] &= ~(one << np.uint64(b))
    n = 0
    total = 0
    for w in range(words):
        y = alive[w]
        while y:
            j = _lowest(y)
            y &= y - one
            i = (w << 6) + j
            for v in range(n_words):
                out[v, n] = masks[v, i] & keep[v]
                total += _popcount(out[v, n])
            out_rid[n] = rid[i]
            n += 1
    if plen >= _want(st):  # checked only where a pattern may be emitted (see _close_mask)
        if not _own_pattern(
            out_rid,
            n,
            last,
            prefix,
            plen,
            total,
            st,
            cnt,
            mark,
            buf,
            ptr0,
            items0,
            hist,
            out_items,
            out_start,
            out_len,
            out_sup,
        ):
            return n, plen, none
    return n, plen, _wide_children(out, n, n_words, _want(st) - plen, k, cnt_w)


@njit(cache=True)
def _wide_children(out, n, n_words, need, k, cnt_w):
    """The children of a wide branch of n records (``out``, cut to its candidates): every item c with k
    records holding need - 1 candidates before it."""
    one = np.uint64(1)
    cnt_w[: n_words * WORD] = 0
    for i in range(n):
        t = 0
        for v in range(n_words):
            x = out[v, i]
            while x:
                if t + 1 >= need:
                    cnt_w[v * WORD + _lowest(x)] += 1
                t += 1
                x &= x - one
    return np.flatnonzero(cnt_w[: n_words * WORD] >= k)


@njit(cache=True)
def _enter_wide(
    masks,
    rid,
    n,
    last,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt_w,
    item_of,
    cols,
    alive,
    want,
):
    """:func:`_enter_mask` for a branch with more than ``WORD`` candidates and at most ``st[WIDE_WORDS]``
    words of them: record i's candidates are the bits of ``masks[:, i]`` (bit 64 w + b of word w = item
    ``item_of[64 w + b]``); peeled on columns, closed and bounded by the items before each child, in
    place. Returns (n, plen, children: bits)."""
    none = np.empty(0, dtype=np.int64)
    if not _visit(st):
        return 0, plen, none
    n_words = masks.shape[0]
    for v in range(n_words):
        _columns(masks[v], n, cols, v * WORD)
    words = _all_in(alive, n)
    keep = np.empty(n_words, dtype=np.uint64)
    keep[:] = ~np.uint64(0)
    n_alive = _peel_wide(masks, cols, alive, words, n, keep, want - plen, st, cnt_w)
    if n_alive == 0:
        return 0, plen, none
    return _close_wide(
        masks,
        rid,
        alive,
        words,
        keep,
        n_alive,
        masks,
        rid,
        last,
        prefix,
        plen,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
        cnt_w,
        item_of,
    )


@njit(cache=True)
def _enter_wide_child(
    pm,
    prid,
    pcols,
    pwords,
    plive,
    c,
    alive,
    n_alive,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt_w,
    item_of,
):
    """:func:`_enter_wide` for the child of bit ``c`` (above 64) of a branch with masks ``pm``, columns
    ``pcols`` (``pwords`` words) and ``plive`` (per word, the bits any of its records holds), its
    ``n_alive`` records in ``alive`` (column c): peeled on its parent's columns and copied only if its
    peel leaves it k records. Returns (masks, rid, n, plen, children: bits)."""
    none = np.empty(0, dtype=np.int64)
    if not _visit(st):
        return np.empty((0, 0), dtype=np.uint64), np.empty(0, dtype=np.int64), 0, plen, none
    one = np.uint64(1)
    n_words = (c + 63) >> 6  # the words of the bits below c
    keep = np.empty(n_words, dtype=np.uint64)
    for v in range(n_words):
        keep[v] = plive[v]
    if c & 63:
        keep[n_words - 1] &= (one << np.uint64(c & 63)) - one
    n_alive = _peel_wide(pm, pcols, alive, pwords, n_alive, keep, _want(st) - plen, st, cnt_w)
    if n_alive == 0:
        return np.empty((0, 0), dtype=np.uint64), np.empty(0, dtype=np.int64), 0, plen, none
    masks = np.empty((n_words, n_alive), dtype=np.uint64)
    rid = np.empty(n_alive, dtype=np.int64)
    st[COPIED] += n_alive
    n, plen, children = _close_wide(
        pm,
        prid,
        alive,
        pwords,
        keep,
        n_alive,
        masks,
        rid,
        item_of[c],
        prefix,
        plen,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
        cnt_w,
        item_of,
    )
    return masks, rid, n, plen, children


@njit(cache=True)
def _enter_bits(
    masks,
    rid,
    n,
    last,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    cnt_w,
    item_of,
    adj,
    classes,
    cols,
    alive,
    want,
):
    """:func:`_enter_mask` for a branch of one word a record, :func:`_enter_wide` for more."""
    if masks.shape[0] == 1:
        return _enter_mask(
            masks[0],
            rid,
            n,
            last,
            prefix,
            plen,
            st,
            cnt,
            mark,
            buf,
            ptr0,
            items0,
            hist,
            out_items,
            out_start,
            out_len,
            out_sup,
            cnt_w[:WORD],
            item_of,
            adj,
            classes,
            cols,
            alive,
            want,
        )
    return _enter_wide(
        masks,
        rid,
        n,
        last,
        prefix,
        plen,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
        cnt_w,
        item_of,
        cols,
        alive,
        want,
    )


@njit(cache=True)
def _dfs_bits(
    masks,
    rid,
    n,
    last,
    prefix,
    plen,
    st,
    cnt,
    mark,
    buf,
    ptr0,
    items0,
    hist,
    out_items,
    out_start,
    out_len,
    out_sup,
    item_of,
    shared,
    halt,
):
    """The search below a branch with at most ``st[WIDE_WORDS]`` words of candidates a record (record i's are the bits
    of ``masks[:, i]``, bit 64 v + b of word v = item ``item_of[64 v + b]``; its branches' candidates are
    among them, so one map serves the whole subtree). A child keeps the words of the bits below its
    own: one word once they fit in one. A child is peeled on this branch's columns, and copied only if it
    lives (see :func:`_enter_child`).

    ``shared`` (two int64, or none): the branch's children are shared with the other threads searching
    it, each on its own copy of the branch, peeled at length ``shared[1]`` so that the copies are the
    same (see :func:`_dfs`). ``shared[0]`` is the lowest bit no thread has taken yet, and
    ``SHARED_DONE`` once a thread has none left: read and then written, so two threads may take the same
    child (found twice, kept once by the caller), but none is skipped that the taker's own children
    hold, since a count past bit c is written only by a thread that takes c or has no child from c on."""
    k = st[K]
    # scratch for every branch below (none has more records than this one)
    cnt_w = np.zeros(masks.shape[0] * WORD, dtype=np.int64)
    adj = np.empty(WORD, dtype=np.uint64)
    classes = np.empty(WORD, dtype=np.uint64)
    cols = np.empty((masks.shape[0] * WORD, (n + 63) >> 6), dtype=np.uint64)
    alive = np.empty((n + 63) >> 6, dtype=np.uint64)
    sharing = len(shared) > 0
    n, plen, children = _enter_bits(
        masks,
        rid,
        n,
        last,
        prefix,
        plen,
        st,
        cnt,
        mark,
        buf,
        ptr0,
        items0,
        hist,
        out_items,
        out_start,
        out_len,
        out_sup,
        cnt_w,
        item_of,
        adj,
        classes,
        cols,
        alive,
        shared[1] if sharing else _want(st),
    )
    if len(children) == 0:
        return
    pcols, plive = _branch_columns(masks, n)
    s_masks = [masks]
    s_n = [n]
    s_rid = [rid]
    s_cols = [pcols]
    s_live = [plive]
    s_children = [children]
    s_plen = [plen]
    s_next = [0]
    while len(s_next) > 0:
        if st[OVERFLOW] or st[STOPPED] or halt[0]:
            halt[0] |= st[OVERFLOW]
            return
        top = len(s_next) - 1
        j = s_next[top]
        children = s_children[top]
        if top == 0 and sharing:  # the next child no thread has taken: this copy's first from shared[0] on
            free = shared[0]
            while j < len(children) and children[j] < free:
                j += 1
            if j < len(children):
                shared[0] = children[j] + 1
            else:
                shared[0] = SHARED_DONE
        if j >= len(children):
            s_masks.pop()
            s_n.pop()
            s_rid.pop()
            s_cols.pop()
            s_live.pop()
            s_children.pop()
            s_plen.pop()
            s_next.pop()
            continue
        s_next[top] = j + 1
        c = children[j]
        plen = s_plen[top]
        want = _want(st)
        if plen + 1 + c < want:  # at most c candidates below bit c
            continue
        pm = s_masks[top]
        pn = s_n[top]
        pr = s_rid[top]
        words = max(1, (c + 63) >> 6)  # the words of the bits below c
        # the child is peeled on this branch's columns, and copied only if it lives
        pcols = s_cols[top]
        pwords = (pn + 63) >> 6
        held = 0  # the child's records: column c
        for w in range(pwords):
            alive[w] = pcols[c, w]
            held += _popcount(alive[w])
        if held < k:
            continue
        prefix[plen] = item_of[c]
        if words == 1:
            child1, child_rid, cn, cplen, cchildren = _enter_child(
                pm[0],
                pr,
                pcols,
                pwords,
                s_live[top][0],
                c,
                alive,
                held,
                prefix,
                plen + 1,
                st,
                cnt,
                mark,
                buf,
                ptr0,
                items0,
                hist,
                out_items,
                out_start,
                out_len,
                out_sup,
                cnt_w[:WORD],
                item_of,
                adj,
                classes,
            )
            child = child1.reshape((1, len(child1)))
        else:
            child, child_rid, cn, cplen, cchildren = _enter_wide_child(
                pm,
                pr,
                pcols,
                pwords,
                s_live[top],
                c,
                alive,
                held,
                prefix,
                plen + 1,
                st,
                cnt,
                mark,
                buf,
                ptr0,
                items0,
                hist,
                out_items,
                out_start,
                out_len,
                out_sup,
                cnt_w,
                item_of,
            )
        if len(cchildren) > 0:
            ccols, clive = _branch_columns(child, cn)
            st[ALIVE] += 1
            s_masks.append(child)
            s_n.append(cn)
            s_rid.append(child_rid)
            s_cols.append(ccols)
            s_live.append(clive)
            s_children.append(cchildren)
            s_plen.append(cplen)
            s_next.append(0)


@njit(cache=True)
def _branch_columns(masks, n):
    """For a branch whose children are peeled on its columns: the columns of its n records (row 64 v + b:
    the records holding bit b of word v) and, per word, the bits any of them holds."""
    n_words = masks.shape[0]
    live = np.zeros(n_words, dtype=np.uint64)
    cols = np.empty((n_words * WORD, (n + 63) >> 6), dtype=np.uint64)
    for v in range(n_words):
        _columns(masks[v], n, cols, v * WORD)
        x = np.uint64(0)
        for i in range(n):
            x |= masks[v, i]
        live[v] = x
    return cols, live


@njit(cache=True)
def _bits(touched, n_touched, cnt, k, frequent):
    """The child's candidates (the touched items k of its records hold) in the items' order, bit b =
    ``item_of[b]``, so that a bit's candidates below it are the items below it; ``cnt`` maps each to
    -(its bit + 1) while the child's masks are made."""
    item_of = np.empty(frequent, dtype=np.int64)
    f = 0
    for t in range(n_touched):
        if cnt[touched[t]] >= k:
            item_of[f] = touched[t]
            f += 1
    item_of.sort()
    for b in range(frequent):
        cnt[item_of[b]] = -(b + 1)
    return item_of


@njit(cache=True, nogil=True)  # the GIL is let go: the other part's thread, progress and heartbeat go on
def _dfs(
    ptr,
    items,
    rid,
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
    reach,
    active,
    counters,
    halt,
):
    """The depth-first search from the root, with an explicit stack (numba cannot cache recursion).

    The root's children are handed out by ``taken[0]``, the next one not yet taken, which the threads
    of one search share: each takes the next free child (an atomic increment) when it is done with one.

    ``limit[c]``: every frequent itemset whose greatest item is c is shorter than this (what earlier
    searches of more of the same records proved, :class:`~veil.engine.longest.LengthBounds`); a root child whose
    limit is
    not above the length wanted is not searched. ``reach[c]`` is set, for each root child taken, to a
    length every closed pattern whose greatest item is c is shorter than: the length wanted when its
    search ended, or one more than the longest pattern it found, whichever is more.

    Once every root child is taken, a thread with nothing left helps another with the one it searches on
    bit masks (``active[p]``: that child of part p, -1 for none, ``PENDING`` while part p takes a child
    and makes its masks, which a thread with none left waits for): it makes its own copy of the child's
    masks at the length the other entered it at (``counters[c, 1]``), so that both copies hold the same
    records and bits and absorb the same items into the pattern, and the two take the child's children
    from one counter (``counters[c, 0]``, see :func:`_dfs_bits`). A child that one copy leaves out holds
    nothing as long as the length its thread wanted then, which is at most the search's, so every
    pattern the search keeps is still found; and each thread's ``reach`` (its own row: the caller takes
    the greatest) bounds what it searched and what it left out."""
    k = st[K]
    m = len(mark)
    ptr0, items0 = ptr, items
    ptr, items, rid, plen, children, holders, where, starts = _enter(
        ptr, items, rid, n, m, prefix, 0, st, cnt, mark, buf, ptr0, items0, hist, out_items, out_start, out_len, out_sup
    )
    st[ROOT_LEN] = plen
    taken[1] = len(children)  # for the progress: root children taken of how many
    if len(children) == 0:
        return
    current = -1  # the root child this thread is searching
    part = st[PART]
    helped = np.zeros(len(children), dtype=np.bool_)  # the root children this thread helped with
    helping = False  # with the root child being searched, which another thread took
    touched = np.empty(m, dtype=np.int32)
    s_ptr = [ptr]
    s_items = [items]
    s_rid = [rid]
    s_children = [children]
    s_holders = [holders]
    s_where = [where]
    s_starts = [starts]
    s_plen = [plen]
    s_next = [0]
    while len(s_next) > 0:
        if st[OVERFLOW] or st[STOPPED] or halt[0]:  # (halt: another thread's store is full)
            halt[0] |= st[OVERFLOW]  # the search runs again with more room: every thread stops
            active[part] = -1  # (no other thread waits for this one)
            return
        top = len(s_next) - 1
        j = s_next[top]
        children = s_children[top]
        if j >= len(children) and top > 0:  # (the root's next child is ``taken[0]``, below)
            s_ptr.pop()
            s_items.pop()
            s_rid.pop()
            s_children.pop()
            s_holders.pop()
            s_where.pop()
            s_starts.pop()
            s_plen.pop()
            s_next.pop()
            continue
        if top == 0:  # the subtree of the child taken before is done
            if current >= 0:
                reach[current] = max(reach[current], _reach(st))
                current = -1
            active[part] = -1
            helping = False
            if taken[0] >= len(children) or st[HELP_FIRST]:  # help another with its root child
                pending = False
                for p in range(len(active)):
                    a = _fetch_add(active, p, 0)  # (read before the length it was entered at)
                    if p != part and a >= 0 and not helped[a] and counters[children[a], 0] < SHARED_DONE:
                        j = a
                        helped[j] = True
                        helping = True
                        st[HELPED] += 1
                        break
                    pending |= p != part and a == PENDING
                if not helping and pending:  # another thread is making its child's masks: wait for them
                    continue
            if not helping:
                if taken[0] >= len(children):  # every root child is taken, and none to help with
                    break
                active[part] = PENDING  # (before the child is taken: a thread with none left waits)
                j = _fetch_add(taken, 0, 1)
                if j >= len(children):  # another thread took the last one
                    continue
                c = children[j]
                if st[ROOT_LEN] == 0 and limit[c] <= max(st[THR], st[FLOOR]):
                    reach[c] = limit[c]
                    st[SKIPPED] += 1
                    s_next[top] = j + 1
                    continue
            current = children[j]
            st[EMAX] = 0
        s_next[top] = j + 1
        ptr, items, rid, plen = s_ptr[top], s_items[top], s_rid[top], s_plen[top]
        starts = s_starts[top]
        c = children[j]
        rows = s_holders[top][starts[j] : starts[j + 1]]
        at_c = s_where[top][starts[j] : starts[j + 1]]
        if len(rows) < k:
            continue
        want = _want(st)
        if top == 0 and helping:  # the length the thread searching it wanted: the same copy of it
            want = counters[c, 1]
        if plen + 1 + c < want:  # at most c items below c
            continue
        # the child's items: those before c in its records, kept only if k of its records hold them
        n_touched = 0
        for q in range(len(rows)):
            for e in range(ptr[rows[q]], at_c[q]):
                it = items[e]
                if cnt[it] == 0:
                    touched[n_touched] = it
                    n_touched += 1
                cnt[it] += 1
        frequent = 0
        for t in range(n_touched):
            if cnt[touched[t]] >= k:
                frequent += 1
        need = want - plen - 1
        if frequent < need:
            for t in range(n_touched):
                cnt[touched[t]] = 0
            continue
        if frequent <= st[WIDE_WORDS] * WORD:  # a few words a record (one for 64 candidates)
            n_words = max(1, (frequent + WORD - 1) // WORD)
            item_of = _bits(touched, n_touched, cnt, k, frequent)
            # one pass a record: its bits are set in the next free column, which a record with fewer than
            # need of them clears again (one spare column, past the records kept, for that)
            masks = np.zeros((n_words, len(rows) + 1), dtype=np.uint64)
            child_rid = np.empty(len(rows), dtype=np.int64)
            row = 0
            for q in range(len(rows)):
                w = 0
                for e in range(ptr[rows[q]], at_c[q]):
                    b = cnt[items[e]]
                    if b < 0:
                        b = -b - 1
                        masks[b >> 6, row] |= np.uint64(1) << np.uint64(b & 63)
                        w += 1
                if w >= need:
                    child_rid[row] = rid[rows[q]]
                    row += 1
                else:
                    masks[:, row] = 0
            for t in range(n_touched):
                cnt[touched[t]] = 0
            if row < k:
                continue
            st[COPIED] += row
            prefix[plen] = c
            shared = counters[c] if top == 0 else np.empty(0, dtype=np.int64)  # a root child's are shared
            if top == 0 and not helping:  # the length it is entered at, then the child, for the others
                counters[c, 1] = want
                _fetch_add(active, part, j - active[part])
            _dfs_bits(
                masks,
                child_rid,
                row,
                c,
                prefix,
                plen + 1,
                st,
                cnt,
                mark,
                buf,
                ptr0,
                items0,
                hist,
                out_items,
                out_start,
                out_len,
                out_sup,
                item_of,
                shared,
                halt,
            )
            if top == 0:
                active[part] = -1
                counters[c, 0] = SHARED_DONE
            continue
        if top == 0:  # searched on item lists, by this thread alone
            active[part] = -1
        size = 0
        kept = 0
        for q in range(len(rows)):
            w = _supported(items, ptr[rows[q]], at_c[q], cnt, k)
            if w >= need:
                size += w
                kept += 1
        if kept < k:
            for t in range(n_touched):
                cnt[touched[t]] = 0
            continue
        st[COPIED] += size
        child_ptr = np.empty(kept + 1, dtype=np.int64)
        child_items = np.empty(size, dtype=np.int32)
        child_rid = np.empty(kept, dtype=np.int64)
        child_ptr[0] = 0
        at = 0
        row = 0
        for q in range(len(rows)):
            if _supported(items, ptr[rows[q]], at_c[q], cnt, k) >= need:
                at = _copy_supported(items, ptr[rows[q]], at_c[q], cnt, k, child_items, at)
                child_rid[row] = rid[rows[q]]
                row += 1
                child_ptr[row] = at
        for t in range(n_touched):
            cnt[touched[t]] = 0
        prefix[plen] = c
        c_ptr, c_items, c_rid, c_plen, c_children, c_holders, c_where, c_starts = _enter(
            child_ptr,
            child_items,
            child_rid,
            kept,
            c,
            prefix,
            plen + 1,
            st,
            cnt,
            mark,
            buf,
            ptr0,
            items0,
            hist,
            out_items,
            out_start,
            out_len,
            out_sup,
        )
        if len(c_children) > 0:
            st[ALIVE] += 1
            s_ptr.append(c_ptr)
            s_items.append(c_items)
            s_rid.append(c_rid)
            s_children.append(c_children)
            s_holders.append(c_holders)
            s_where.append(c_where)
            s_starts.append(c_starts)
            s_plen.append(c_plen)
            s_next.append(0)
    if current >= 0:
        reach[current] = max(reach[current], _reach(st))


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
def _append(out, used, r, seen, distinct):
    """``out[used] = r``, ``out`` doubled first when full, and r counted among the ``distinct`` records
    (``seen``) if it is new; (out, used + 1, distinct)."""
    if used == len(out):
        grown = np.empty(2 * len(out), dtype=np.int64)
        grown[:used] = out[:used]
        out = grown
    out[used] = r
    if not seen[r]:
        seen[r] = True
        distinct += 1
    return out, used + 1, distinct


AND_WALK = 4  # a pattern's records by column bit sets when its items × words < this × its least held item's records


@njit(cache=True, nogil=True)  # the GIL is let go: two threads walk two halves of the patterns
def _holders(ptr, items, col_ptr, col_rows, alive, pat_ptr, pat_items, top, n_items, bit_row, col_bits, alive_bits):
    """(out_ptr, out, spans): the live records holding every item of pattern p are
    ``out[out_ptr[p]:out_ptr[p + 1]]``, ascending; ``spans[p]``: how many records hold any of patterns
    0 … p. Records by ``ptr``/``items`` (each row's items ascending) and ``col_ptr``/``col_rows`` (each
    item's records ascending); ``top``: up to 64 items, each record's holding of which is one bit mask, so
    a pattern's test is one AND for those of its items and a bisection of the row for each other one.
    Each pattern walks the records of its least held item, unless each of its items has a column bit set
    (``col_bits[bit_row[item]]``, over all records; ``alive_bits`` the live ones) and ANDing those costs
    less: a short pattern of popular items, whose least held item is held by tens of thousands of
    records, takes a few thousand word ANDs instead."""
    n_rows = len(ptr) - 1
    bit = np.full(n_items, -1, dtype=np.int64)
    masks = np.zeros(n_rows, dtype=np.uint64)
    for b in range(len(top)):
        bit[top[b]] = b
        for q in range(col_ptr[top[b]], col_ptr[top[b] + 1]):
            masks[col_rows[q]] |= np.uint64(1) << np.uint64(b)
    n_pat = len(pat_ptr) - 1
    out_ptr = np.zeros(n_pat + 1, dtype=np.int64)
    out = np.empty(max(1024, 4 * n_pat), dtype=np.int64)
    used = 0
    seen = np.zeros(n_rows, dtype=np.bool_)
    spans = np.zeros(n_pat, dtype=np.int64)
    distinct = 0
    other = np.empty(n_items, dtype=np.int64)
    acc = np.empty(len(alive_bits), dtype=np.uint64)
    for p in range(n_pat):
        start, end = pat_ptr[p], pat_ptr[p + 1]
        if end == start:  # the empty pattern: every live record
            least = -1
        else:
            least = pat_items[start]
            for e in range(start, end):
                it = pat_items[e]
                if col_ptr[it + 1] - col_ptr[it] < col_ptr[least + 1] - col_ptr[least]:
                    least = it
        pm = np.uint64(0)
        n_other = 0
        for e in range(start, end):
            it = pat_items[e]
            if bit[it] >= 0:
                pm |= np.uint64(1) << np.uint64(bit[it])
            elif it != least:
                other[n_other] = it
                n_other += 1
        lo_q, hi_q = (0, n_rows) if least < 0 else (col_ptr[least], col_ptr[least + 1])
        words = len(alive_bits)
        by_bits = end > start and (end - start) * words < AND_WALK * (hi_q - lo_q)
        for e in range(start, end):
            by_bits &= bit_row[pat_items[e]] >= 0
        if by_bits:  # (records in ascending order, as the walk gives them)
            acc[:] = alive_bits
            for e in range(start, end):
                column = col_bits[bit_row[pat_items[e]]]
                for w in range(words):  # (a loop LLVM vectorises)
                    acc[w] &= column[w]
            for w in range(words):
                x = acc[w]
                while x:
                    out, used, distinct = _append(out, used, (w << 6) + _lowest(x), seen, distinct)
                    x &= x - np.uint64(1)
        else:
            for q in range(lo_q, hi_q):
                r = q if least < 0 else col_rows[q]
                if not alive[r] or (masks[r] & pm) != pm:
                    continue
                held = True
                for t in range(n_other):
                    it = other[t]
                    at = _lower_bound(items, ptr[r], ptr[r + 1], it)
                    if at == ptr[r + 1] or items[at] != it:
                        held = False
                        break
                if held:
                    out, used, distinct = _append(out, used, r, seen, distinct)
        out_ptr[p + 1] = used
        spans[p] = distinct
    return out_ptr, out[:used].copy(), spans


@njit(cache=True)
def _spans(out_ptr, out, n_rows):
    """``spans[p]``: how many records hold any of patterns 0 … p (their records ``out[out_ptr[p]:out_ptr[p + 1]]``)."""
    seen = np.zeros(n_rows, dtype=np.bool_)
    spans = np.zeros(len(out_ptr) - 1, dtype=np.int64)
    distinct = 0
    for p in range(len(out_ptr) - 1):
        for q in range(out_ptr[p], out_ptr[p + 1]):
            if not seen[out[q]]:
                seen[out[q]] = True
                distinct += 1
        spans[p] = distinct
    return spans


HOLDERS_SPLIT = 1_000  # patterns from which their holders are found by several threads (see holders_in_parts)


def holders_in_parts(
    ptr,
    items,
    col_ptr,
    col_rows,
    alive,
    pat_ptr,
    pat_items,
    top,
    n_items,
    bit_row,
    col_bits,
    alive_bits,
    parts: int | None = None,
    options: SearchOptions = SearchOptions(),
):
    """:func:`_holders`, its patterns cut into ``parts`` runs of about as many records walked (each pattern
    walks the column of its least held item), one thread each; the same answer. ``parts``: by default
    the threads ``options`` allow from ``HOLDERS_SPLIT`` patterns on, else one."""
    n_pat = len(pat_ptr) - 1
    if parts is None:
        parts = options.cores if n_pat >= HOLDERS_SPLIT else 1
    args = (ptr, items, col_ptr, col_rows, alive)
    rest = (top, n_items, bit_row, col_bits, alive_bits)
    if parts <= 1 or n_pat < parts:
        return _holders(*args, pat_ptr, pat_items, *rest)
    walked = np.full(n_pat, len(ptr) - 1, dtype=np.int64)  # the empty pattern walks every record
    filled = np.flatnonzero(pat_ptr[1:] > pat_ptr[:-1])
    if len(filled):  # (an empty pattern between two others adds no item to the one before it)
        walked[filled] = np.minimum.reduceat(np.diff(col_ptr)[pat_items], pat_ptr[filled])
    cum = np.cumsum(walked)
    cuts = np.concatenate(([0], np.searchsorted(cum, cum[-1] * np.arange(1, parts) / parts), [n_pat]))

    def one(part):
        a, b = int(cuts[part]), int(cuts[part + 1])
        return _holders(*args, pat_ptr[a : b + 1] - pat_ptr[a], pat_items[pat_ptr[a] : pat_ptr[b]], *rest)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=parts) as pool:
        done = list(pool.map(one, range(parts)))
    sizes = np.concatenate([np.diff(d[0]) for d in done])
    out_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    out = np.concatenate([d[1] for d in done])
    return out_ptr, out, _spans(out_ptr, out, len(ptr) - 1)


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
