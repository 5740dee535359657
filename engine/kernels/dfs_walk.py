"""The depth-first walks of the longest-pattern search: the item-list walk from the root (:func:`_dfs`,
its threads sharing the root's children) and the bit-mask walk below a branch that fits in masks
(:func:`_dfs_bits`) (:mod:`.longest_dfs`).
"""

from __future__ import annotations

import numpy as np

from .dfs_emit import _reach, _want
from .dfs_lists import _copy_supported, _enter, _supported
from .dfs_masks import _columns, _enter_child, _enter_mask, _fetch_add, _popcount
from .dfs_state import (
    ALIVE,
    COPIED,
    EMAX,
    FLOOR,
    HELP_FIRST,
    HELPED,
    OVERFLOW,
    PART,
    PENDING,
    ROOT_LEN,
    SHARED_DONE,
    SKIPPED,
    STOPPED,
    THR,
    WIDE_WORDS,
    WORD,
    K,
    njit,
)
from .dfs_wide import _enter_wide, _enter_wide_child


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
