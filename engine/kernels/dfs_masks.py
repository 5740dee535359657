"""The longest-pattern search on one-word bit masks (at most 64 candidates a branch): popcounts, 64 × 64
bit transposes into columns, the item-pair graph and its colouring, and the peel, closure and
children of a mask branch (:mod:`.longest_dfs`).
"""

from __future__ import annotations

import numpy as np

from .dfs_emit import _own_pattern, _visit, _want
from .dfs_state import COPIED, HAVE_NUMBA, PRUNED, WORD, K, njit


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
