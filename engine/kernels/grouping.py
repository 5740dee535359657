"""Merging classes: the classes of a coarser partition from those of a finer one, given each class's
code per column and, per column, the map of a code to its coarser code. Global recoding rolls a
transformation's class table up from one of its specialisations this way
(docs/anonymisation.md#global-recoding), thousands of times a search.

Both ways build each class's mixed-radix key of its mapped codes a column at a time, then number
the distinct keys. With numba (``veil[mining]``) one compiled pass over the classes does it a block
at a time, so that the keys never leave the processor's cache (the key itself as the slot when the
key space is small, else open addressing); without numba NumPy does it a column of the whole table
at a time (dense counting, or pandas' hash factorisation).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd


_EMPTY = -1
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing's odd constant, 2⁶⁴ / φ


def merge_classes(
    codes: np.ndarray, maps: list, spans, size: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge the classes whose mapped codes are equal in every column.

    ``codes``: (d, G) integers, each class's code per column; ``maps[j]``: an integer array taking
    column j's codes to the coarser ones, or None to keep them; ``spans[j]``: how many coarser codes
    column j has (0 … spans[j] − 1); ``size``: each class's records.

    Returns ``(inverse, first, merged, merged_size)``: each class's merged class (G,), one class of
    each merged class (C,), the merged classes' codes (d, C) as int32, and their records (C,) as int64.
    The merged classes' order is unspecified.
    """
    codes = np.asarray(codes)
    d, g = codes.shape if codes.ndim == 2 else (0, 0)
    spans = np.maximum(np.asarray(spans, dtype=np.int64), 1)
    dense, exact = _bounds(spans, g)
    kernel = compiled() if d and g and exact and (g >= _COMPILED_FROM or "numba" in sys.modules) else None
    if kernel is None:
        return _merge_numpy(codes, maps, spans, size)
    codes32 = np.ascontiguousarray(codes, dtype=np.int32)
    offsets = np.full(d, -1, dtype=np.int64)
    parts, at = [], 0
    for j, m in enumerate(maps):
        if m is not None:
            offsets[j] = at
            parts.append(np.asarray(m, dtype=np.int32))
            at += len(parts[-1])
    flat = np.concatenate(parts) if parts else np.zeros(1, dtype=np.int32)
    inverse, first, merged, merged_size, count = kernel(
        codes32, flat, offsets, spans, dense, np.ascontiguousarray(size, dtype=np.int64)
    )
    return inverse, first[:count], merged, merged_size[:count]


def _bounds(spans: np.ndarray, rows: int) -> tuple[int, bool]:
    """(the number of mixed-radix keys when small enough to count densely, ≤ 2·rows + 4096, else 0;
    whether the keys fit in 62 bits)."""
    bound, limit = 1, 2 * rows + 4096
    for s in spans:
        bound *= int(s)
    return (bound if bound <= limit else 0), bound < 1 << 62


_COMPILED_FROM = 20_000  # classes from which loading numba (about half a CPU second) pays, unless it is loaded
_BLOCK = 2048  # classes keyed at a time: their keys stay in the processor's nearest cache


_COMPILED: list = []  # the compiled kernel once made (None without numba)


def compiled():
    """:func:`_merge` compiled by numba (imported here, on first use: registering the plugins never
    imports it), or None when numba is not installed."""
    if not _COMPILED:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - exercised where numba is not installed
            _COMPILED.append(None)
        else:
            _COMPILED.append(njit(cache=True, nogil=True)(_merge))
    return _COMPILED[0]


def _merge(codes, flat, offsets, spans, dense, size):
    """A block of classes at a time: their mixed-radix keys of mapped codes, a column at a time
    (``offsets[j]``: where column j's map starts in ``flat``, or −1 for none), then each key's merged
    class, numbered in order of first appearance. ``dense``: the keys are the slots (0 … dense − 1);
    else open addressing on a Fibonacci hash of the key, the table at most half full, each slot
    holding its key and its merged class. Last, the merged classes' codes."""
    d, g = codes.shape
    if dense > 0:
        cap, mask, shift = dense, np.uint64(0), np.uint64(0)
        slots = np.full(cap, _EMPTY, np.int64)
    else:
        cap, bits = 1, 0
        while cap < 2 * g:
            cap *= 2
            bits += 1
        mask, shift = np.uint64(cap - 1), np.uint64(64 - max(bits, 1))
        slots = np.full(2 * cap, _EMPTY, np.int64)
    inverse = np.empty(g, np.int64)
    first = np.empty(g, np.int64)
    merged_size = np.zeros(g, np.int64)
    key = np.empty(_BLOCK, np.int64)
    count = 0
    for start in range(0, g, _BLOCK):
        end = min(start + _BLOCK, g)
        key[: end - start] = 0
        for j in range(d):
            s = spans[j]
            if s == 1:
                continue  # one coarser code: the key is unchanged
            o = offsets[j]
            if o >= 0:
                for i in range(start, end):
                    key[i - start] = key[i - start] * s + flat[o + codes[j, i]]
            else:
                for i in range(start, end):
                    key[i - start] = key[i - start] * s + codes[j, i]
        for i in range(start, end):
            k = key[i - start]
            if dense > 0:
                at = slots[k]
                if at == _EMPTY:
                    at = count
                    slots[k] = at
                    first[at] = i
                    count += 1
            else:
                h = (np.uint64(k) * _MULTIPLIER) >> shift
                while True:
                    at = slots[2 * h + 1]
                    if at == _EMPTY:
                        at = count
                        slots[2 * h] = k
                        slots[2 * h + 1] = at
                        first[at] = i
                        count += 1
                        break
                    if slots[2 * h] == k:
                        break
                    h = (h + np.uint64(1)) & mask
            inverse[i] = at
            merged_size[at] += size[i]
    merged = np.empty((d, count), np.int32)
    for j in range(d):
        o = offsets[j]
        for c in range(count):
            v = codes[j, first[c]]
            merged[j, c] = flat[o + v] if o >= 0 else v
    return inverse, first, merged, merged_size, count


def group_rows(columns: list[np.ndarray], spans: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Rows equal on every column (column j holding 0 … spans[j] − 1): each row's group and one row of
    each group."""
    key, bound = _key(columns, spans)
    if key is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return _group_keys(key, bound)


def _merge_numpy(codes, maps, spans, size):
    """:func:`merge_classes` in NumPy (when numba is not loaded): when the key space fits in 62 bits,
    each class's mixed-radix key (the same keys :func:`_key` builds) summed a column at a time from
    its mapped code times the column's stride, a column of one coarser code left out; the distinct
    keys numbered; the merged classes' codes taken from one class of each (the source's int32
    codes, mapped). Each operation is on one column of the table: the tables are small and many."""
    spans = [max(int(s), 1) for s in spans]
    bound, rows = math.prod(spans), len(size)
    if len(maps) and rows and bound < 1 << 62:
        key, part, stride = None, None, 1
        for j in range(len(maps) - 1, -1, -1):  # the last column's stride is 1
            if spans[j] > 1:
                col = codes[j] if maps[j] is None else np.asarray(maps[j])[codes[j]]
                if key is None:
                    key = np.multiply(col, stride, dtype=np.int64)
                else:
                    part = np.multiply(col, stride, dtype=np.int64, out=part)
                    key += part
            stride *= spans[j]
        inverse, first = _group_keys(np.zeros(rows, dtype=np.int64) if key is None else key, bound)
        merged = codes.take(first, axis=1).astype(np.int32, copy=False)
        for j, m in enumerate(maps):
            if m is not None:
                merged[j] = np.asarray(m)[merged[j]]
        merged_size = np.bincount(inverse, weights=size, minlength=len(first)).astype(np.int64)
        return inverse, first, merged, merged_size
    columns = (codes[j] if m is None else np.asarray(m)[codes[j]] for j, m in enumerate(maps))
    key, bound = _key(columns, [int(s) for s in spans])
    if key is None:  # no column: one class of everything, or nothing
        key, bound = np.zeros(len(size), dtype=np.int64), 1
    inverse, first = _group_keys(key, bound)
    merged = np.empty((len(maps), len(first)), dtype=np.int32)
    for j, m in enumerate(maps):
        merged[j] = codes[j][first] if m is None else np.asarray(m)[codes[j][first]]
    merged_size = np.bincount(inverse, weights=size, minlength=len(first)).astype(np.int64)
    return inverse, first, merged, merged_size


def _key(columns, spans: list[int]):
    """Mixed-radix keys of rows (column j holds 0 … spans[j] − 1), equal exactly when the rows are;
    ``columns`` yields one column at a time. Renumbered densely whenever the key space nears 2⁶²."""
    key, bound = None, 1
    for col, span in zip(columns, spans):
        span = max(int(span), 1)
        if key is None:
            key, bound = np.array(col, dtype=np.int64), span  # a copy: the key is built in place
            continue
        if bound * span >= 1 << 62:
            uniq, key = np.unique(key, return_inverse=True)
            key, bound = key.astype(np.int64, copy=False), len(uniq)
        key *= span
        key += col
        bound *= span
    return key, bound


def _group_keys(key: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group (0 … G−1) of equal keys and one row of each group: dense counting when the key
    space is small (groups in key order), hashing otherwise (in order of first appearance)."""
    rows = len(key)
    if bound <= 2 * rows + 4096:
        held = np.zeros(bound, dtype=bool)
        held[key] = True
        rank = np.cumsum(held)  # a key's group, plus one
        inverse = rank[key]
        inverse -= 1
        count = int(rank[-1]) if bound else 0
    else:
        inverse, uniq = pd.factorize(key)
        inverse = inverse.astype(np.int64, copy=False)
        count = len(uniq)
    first = np.empty(count, dtype=np.int64)
    first[inverse] = np.arange(rows)
    return inverse, first
