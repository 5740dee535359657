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
import threading

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
    kernel = compiled() if d and g and exact and (g >= _COMPILED_FROM or loaded()) else None
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


_COMPILED: list = []  # the compiled kernels once made ([None, None] without numba)
_LOCK = threading.Lock()
_WARM = {"started": False, "ready": False}  # warm(): numba and the kernels loaded ahead of any run
_SETTLED = threading.Event()  # set once a warm-up has ended, loaded or not


def compiled():
    """:func:`_merge` compiled by numba (imported here, on first use: registering the plugins never
    imports it), or None when numba is not installed."""
    with _LOCK:  # warm() may be making them on another thread
        if not _COMPILED:
            try:
                from numba import njit
            except ImportError:  # pragma: no cover - exercised where numba is not installed
                _COMPILED.extend([None, None])
            else:
                _COMPILED.extend(njit(cache=True, nogil=True)(f) for f in (_merge, _count_units))
    return _COMPILED[0]


def compiled_units():
    """:func:`_count_units` compiled by numba, or None when numba is not installed."""
    compiled()
    return _COMPILED[1]


def loaded() -> bool:
    """Whether numba is loaded and ready, so that a compiled kernel costs nothing more than loading it
    from numba's cache: :func:`warm` has loaded the kernels, or numba was loaded otherwise (a miner, a
    large roll-up) and no warm-up was started (one that is half-way, or failed, leaves the NumPy
    path). A plugin with a compiled path takes it then."""
    return _WARM["ready"] or ("numba" in sys.modules and not _WARM["started"])


def warm() -> bool:
    """Load numba and the compiled kernels from numba's cache (compiling them when missing), so that
    every later roll-up takes the compiled path: what a long-lived process (the desktop's worker) does
    once, in the background, while its user is still choosing a run (what it costs:
    docs/benchmarks.md#task-6-compiled-and-both-paths-measured). Returns whether the kernels loaded
    (False without numba); a kernel that fails to load raises, and the NumPy path stays."""
    _WARM["started"] = True
    try:
        kernel = compiled()
        if kernel is not None:
            codes = np.zeros((1, 2), dtype=np.int32)
            one = np.ones(2, dtype=np.int64)
            kernel(codes, np.zeros(1, dtype=np.int32), np.array([-1]), np.array([2]), 2, one)
            _COMPILED[1](
                np.zeros(0, dtype=np.int64), np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64), one, 1, 2
            )
            _WARM["ready"] = True
    finally:
        _SETTLED.set()
    return _WARM["ready"]


def settle() -> None:
    """Wait for a warm-up under way to end. Before a fork: the child would inherit numba's and the
    import system's locks as the warming thread holds them, and that thread does not exist in the
    child to release them."""
    if _WARM["started"]:
        _SETTLED.wait()


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


def count_units(
    classes: int, unit_class: np.ndarray, unit_sens: np.ndarray, unit_w: np.ndarray, n_values: int, inverse=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The (class, sensitive value) units of a class table, counted densely: ``unit_class`` holds each
    given unit's class among ``classes`` (or, with ``inverse``, its class of a finer table, whose merged
    class ``inverse`` gives), ``unit_sens`` its value's code (−1 for a blank, counted one place up, a
    unit of its own), ``unit_w`` its records (int64).

    Returns ``(unit_class, unit_sens, unit_w, counts)``: the merged units, value by value and within a
    value class by class, and ``counts``, the (n_values + 1, classes) float64 matrix they were read from
    (row 0 the blanks'). None when there are many more (class, value) cells than units: the caller
    groups them instead."""
    span = n_values + 1
    cells = classes * span
    if cells > 16 * len(unit_class) + (1 << 20):
        return None
    if classes and len(unit_class) and loaded():  # never worth loading numba for: cheaper than merging
        kernel = compiled_units()
        if kernel is not None:
            empty = np.zeros(0, dtype=np.int64)
            return kernel(
                empty if inverse is None else np.ascontiguousarray(inverse, dtype=np.int64),
                np.ascontiguousarray(unit_class, dtype=np.int64),
                np.ascontiguousarray(unit_sens, dtype=np.int64),
                np.ascontiguousarray(unit_w, dtype=np.int64),
                classes,
                span,
            )
    cls = unit_class if inverse is None else inverse[unit_class]
    rows = max(classes, 1)
    key = (unit_sens + 1) * rows
    key += cls
    counts = np.bincount(key, weights=unit_w, minlength=cells).astype(float, copy=False)  # float: units or none
    held = np.flatnonzero(counts != 0)  # faster on booleans than on the counts themselves
    value, where = np.divmod(held, rows)
    value -= 1
    return where, value, counts[held].astype(np.int64), counts.reshape(span, classes)


def _count_units(inverse, unit_class, unit_sens, unit_w, classes, span):
    """:func:`count_units`, compiled: one pass adding the units up (counting the cells it first fills),
    one writing the cells held out. The counts are positive: a cell first filled stays held."""
    counts = np.zeros((span, classes), np.float64)
    mapped = inverse.shape[0] > 0
    n = 0
    for u in range(unit_class.shape[0]):
        c = inverse[unit_class[u]] if mapped else unit_class[u]
        v = unit_sens[u] + 1
        if counts[v, c] == 0:
            n += 1
        counts[v, c] += unit_w[u]
    where = np.empty(n + 1, np.int64)  # a cell not held is written one place on, then overwritten
    value = np.empty(n + 1, np.int64)
    weight = np.empty(n + 1, np.int64)
    n = 0
    for v in range(span):
        for c in range(classes):
            x = counts[v, c]
            where[n], value[n], weight[n] = c, v - 1, np.int64(x)
            n += x != 0  # without a branch: which cells are held follows no pattern
    return where[:n], value[:n], weight[:n], counts


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
