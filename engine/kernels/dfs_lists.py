"""The longest-pattern search on branches kept as item lists (a record's candidate items, ascending):
the peel to a fixpoint, the closure checks and the entering of a child (:mod:`.longest_dfs`).
"""

from __future__ import annotations

import numpy as np

from .dfs_emit import _own_pattern, _visit, _want
from .dfs_state import K, njit


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
