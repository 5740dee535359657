"""Which live records hold each pattern found (the cache of PatternKa revalidates them), by item
lists or by column bit sets, in several threads for many patterns.
"""

from __future__ import annotations

import numpy as np

from .dfs_emit import _lower_bound
from .dfs_masks import _lowest
from .dfs_state import njit
from .options import SearchOptions


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
