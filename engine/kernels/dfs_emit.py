"""What a branch of the longest-pattern search wants and may reach, whether its pattern is its own
(closed, and not another branch's: the closure checks) and how the patterns found are recorded
(:mod:`.longest_dfs`).
"""

from __future__ import annotations

from .dfs_state import DEEP, EMAX, FLOOR, MAX_NODES, MAXIMAL, N_OUT, NODES, OVERFLOW, STOPPED, THR, USED, K, R, njit


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
