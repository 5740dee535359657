"""The longest-pattern search on branches of several words a record (at most
``SearchOptions.mask_words`` × 64 candidates): their peel, closure and children (:mod:`.longest_dfs`).
"""

from __future__ import annotations

import numpy as np

from .dfs_emit import _own_pattern, _visit, _want
from .dfs_masks import _all_in, _columns, _held_by, _lowest, _popcount
from .dfs_state import COPIED, WORD, K, njit


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
