"""Mondrian's partitioning compiled, for models that judge a group by its size alone (k-anonymity):
docs/anonymisation.md#mondrian.

It makes the same cuts as the NumPy rounds of ``mondrian.py`` and numbers the partitions the same
way, one round per call (the caller checks for a cancel and reports progress between calls): every
open partition, in the order of its number, measures each attribute it has not tried (a number's
range over its global range, a set's share of the column's values, a category's leaves under the
lowest common ancestor of its values over all leaves), takes the widest, and cuts there — a number
or a set at the weighted lower median m of its codes (``x ≤ m`` against ``x > m``, or ``x < m``
against ``x ≥ m`` when m is the partition's largest code), a category into the children of that
ancestor. The cut stands when it makes two parts at least and each part holds k records (by
weight); its parts are numbered after every partition made before them, in the order of their
codes. A partition that fails tries its next attribute in the next round; one with no width left is
final, and so is one of fewer than 2k records at once (every attempt of it would fail, and a partition
never cut takes no number from the cuts).

The units of a partition are one run of a permutation of all units, so a cut reorders that run
(into the other of two copies; a counting sort by part, or two cursors for a cut at a median) and
each part is again one run: a round reads each open unit once for the cut and once per attribute
for its parts' extents. An attribute holding one value throughout the partition (no width) is never
read again below it, so its codes are not moved and its extent is the partition's.
"""

from __future__ import annotations

import numpy as np

OPEN, FINAL, SPLIT = 1, 0, 2
NUMBER, VALUE_SET, CATEGORY = 0, 1, 2


def columns_for_kernel(cols) -> dict:
    """The quasi-identifiers' codes and what measuring them needs, packed in flat arrays for the
    kernel: per column its kind, its number of codes, a number's distinct values and range, a
    category's ancestors (level by level) and each node's width (by the node's place in the levels)."""
    d = len(cols)
    kind = np.zeros(d, dtype=np.int64)
    n_codes = np.zeros(d, dtype=np.int64)
    span = np.zeros(d, dtype=np.float64)
    levels = np.zeros(d, dtype=np.int64)
    value_at, ancestor_at, width_at, offset_at = (np.zeros(d, dtype=np.int64) for _ in range(4))
    values, ancestors, widths, offsets = [], [], [], []
    sizes = [0, 0, 0, 0]
    for j, col in enumerate(cols):
        n_codes[j] = col.n_codes
        value_at[j], ancestor_at[j], width_at[j], offset_at[j] = sizes
        if col.categorical:
            kind[j] = CATEGORY
            levels[j] = col.ancestors.shape[0]
            ancestors.append(col.ancestors.astype(np.int64).ravel())
            level = np.repeat(np.arange(levels[j]), np.diff(np.r_[col.offsets, len(col.flat_sizes)]))
            node = np.arange(len(col.flat_sizes)) - col.offsets[level]
            widths.append(col.width(level, node).astype(np.float64))  # the width the NumPy rounds compute
            offsets.append(np.asarray(col.offsets, dtype=np.int64))
        elif getattr(col, "sets", False):
            kind[j] = VALUE_SET
        else:
            kind[j] = NUMBER
            values.append(col.uniques.astype(float))
            span[j] = col.span
        sizes = [
            sizes[0] + (len(values[-1]) if kind[j] == NUMBER else 0),
            sizes[1] + (len(ancestors[-1]) if kind[j] == CATEGORY else 0),
            sizes[2] + (len(widths[-1]) if kind[j] == CATEGORY else 0),
            sizes[3] + (len(offsets[-1]) if kind[j] == CATEGORY else 0),
        ]

    def flat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(1, dtype=dtype)

    return {
        "codes": np.ascontiguousarray(np.vstack([col.codes for col in cols]), dtype=np.int64),
        "kind": kind,
        "n_codes": n_codes,
        "span": span,
        "levels": levels,
        "values": flat(values, np.float64),
        "value_at": value_at,
        "ancestors": flat(ancestors, np.int64),
        "ancestor_at": ancestor_at,
        "widths": flat(widths, np.float64),
        "width_at": width_at,
        "offsets": flat(offsets, np.int64),
        "offset_at": offset_at,
    }


class State:
    """The partitions so far: the units' rows (codes and weight) grouped so that each partition's is one
    run, and per partition its run, size, extents, tried attributes and whether it is open, final or cut."""

    def __init__(self, packed: dict, weights: np.ndarray):
        self.packed = packed
        d, u = packed["codes"].shape
        cap = 2 * u + 1  # a cut of a partition of s units makes at most s parts: at most 2u − 1 in all
        # two copies of the units' codes (attribute × unit), their unit and weight: a cut reads its
        # partition's run from one and writes its parts' runs to the other (``side``: which one)
        self.rows = np.zeros((2, d, u), dtype=np.int32)
        self.rows[0] = packed["codes"]
        self.unit = np.zeros((2, u), dtype=np.int64)
        self.unit[0] = np.arange(u)
        self.weights = np.zeros((2, u), dtype=np.int64)
        self.weights[0] = weights
        self.side = np.zeros(cap, dtype=np.int8)
        self.lo = np.zeros((cap, d), dtype=np.int64)  # a number's or a set's lowest code; a category's LCA level
        self.hi = np.zeros((cap, d), dtype=np.int64)  # its highest code; the LCA's node
        self.tried = np.zeros((cap, d), dtype=np.bool_)
        self.state = np.zeros(cap, dtype=np.int8)
        self.start = np.zeros(cap, dtype=np.int64)
        self.end = np.zeros(cap, dtype=np.int64)
        self.size = np.zeros(cap, dtype=np.int64)
        self.count = np.zeros(1, dtype=np.int64)  # partitions made so far
        widest = int(max(packed["n_codes"].max(), 1)) + 2
        self.part = np.zeros(u, dtype=np.int64)  # each unit's part under the cut being tried, then its place
        self.per_code = np.zeros(widest, dtype=np.int64)  # per code or node: records, then rank
        self.present = np.zeros(widest, dtype=np.int64)
        self.at = np.zeros(widest, dtype=np.int64)
        self.sorting = np.zeros(u, dtype=np.int64)

    def args(self):
        p = self.packed
        return (
            p["kind"], p["n_codes"], p["span"], p["levels"], p["values"], p["value_at"], p["ancestors"],
            p["ancestor_at"], p["widths"], p["width_at"], p["offsets"], p["offset_at"],
            self.rows, self.unit, self.weights, self.side, self.lo, self.hi, self.tried, self.state, self.start,
            self.end, self.size, self.count, self.part, self.per_code, self.present, self.at, self.sorting,
        )  # fmt: skip


def _category_extent(p, j, n_codes, levels, ancestors, ancestor_at, lo, hi):
    """Turn partition p's first and last leaf on category j (in lo, hi) into their lowest common
    ancestor's (level, node)."""
    a, b = lo[p, j], hi[p, j]
    base = ancestor_at[j]
    leaves = n_codes[j]
    level = levels[j] - 1
    for lv in range(levels[j]):
        if ancestors[base + lv * leaves + a] == ancestors[base + lv * leaves + b]:
            level = lv
            break
    lo[p, j] = level
    hi[p, j] = ancestors[base + level * leaves + a]


def _width(p, j, kind, n_codes, span, values, value_at, widths, width_at, offsets, offset_at, lo, hi):
    """Partition p's normalised width on attribute j, as the NumPy rounds compute it."""
    a, b = lo[p, j], hi[p, j]
    if kind[j] == NUMBER:
        if span[j] <= 0:
            return 0.0
        return (values[value_at[j] + b] - values[value_at[j] + a]) / span[j]
    if kind[j] == VALUE_SET:
        if b > a:
            return (b - a + 1) / max(n_codes[j], 1)
        return 0.0
    return widths[width_at[j] + offsets[offset_at[j] + a] + b]


def _median(p, j, rows, weights, start, end, size, lo, hi, per_code, sorting):  # one side's rows and weights
    """The weighted lower median of partition p's codes on attribute j: the smallest code whose
    running count passes (size − 1) // 2."""
    below = (size[p] - 1) // 2
    a, b = lo[p, j], hi[p, j]
    m = end[p] - start[p]
    if b - a + 1 > 4 * m + 64:  # a wide range: a sort of the partition's codes
        for i in range(m):
            sorting[i] = rows[j, start[p] + i]
        order = np.argsort(sorting[:m], kind="mergesort")
        running = 0
        for i in range(m):
            running += weights[start[p] + order[i]]
            if running > below:
                return sorting[order[i]]
        return b
    for i in range(start[p], end[p]):  # a count per code of the partition's range (all 0 before and after)
        per_code[rows[j, i] - a] += weights[i]
    running, median = 0, b
    for c in range(b - a + 1):
        running += per_code[c]
        if running > below:
            median = a + c
            break
    if b - a + 1 <= m:  # all 0 again: over the range or over the records, whichever is shorter
        for c in range(b - a + 1):
            per_code[c] = 0
    else:
        for i in range(start[p], end[p]):
            per_code[rows[j, i] - a] = 0
    return median


def _round(
    kind, n_codes, span, levels, values, value_at, ancestors, ancestor_at, widths, width_at, offsets, offset_at,
    both_rows, both_units, both_weights, side, lo, hi, tried, state, start, end, size, count, part, per_code, present,
    at, sorting, k,
):  # fmt: skip
    """One attempt for every open partition made before this round; returns the records (by weight)
    whose partition became final."""
    d = both_rows.shape[1]
    made = count[0]
    final = 0
    for p in range(made):
        if state[p] != OPEN:
            continue
        if size[p] < 2 * k:  # no cut can leave k records on each side: every attempt would fail
            state[p] = FINAL
            final += size[p]
            continue
        best, most = -1, -1.0
        for j in range(d):
            if not tried[p, j]:
                w = _width(p, j, kind, n_codes, span, values, value_at, widths, width_at, offsets, offset_at, lo, hi)
                if w > most:
                    best, most = j, w
        if best < 0 or most <= 0:
            state[p] = FINAL
            final += size[p]
            continue
        j = best
        rows, weights = both_rows[side[p]], both_weights[side[p]]
        first = count[0]
        if kind[j] == CATEGORY:
            # each row's part, and per part its records (per_code): the children of the LCA (their
            # node numbers)
            parts = 0
            base = ancestor_at[j] + (lo[p, j] - 1) * n_codes[j]
            for i in range(start[p], end[p]):
                node = ancestors[base + rows[j, i]]
                part[i] = node
                if per_code[node] == 0:
                    present[parts] = node
                    parts += 1
                per_code[node] += weights[i]
            present[:parts].sort()
            ok = parts >= 2
            for r in range(parts):
                if per_code[present[r]] < k:
                    ok = False
            if not ok:
                for r in range(parts):
                    per_code[present[r]] = 0
                tried[p, j] = True
                continue
            # the cut stands: each part a new partition, numbered after every one made before, in
            # the order of its code; a counting sort of the run by part
            for r in range(parts):
                size[first + r] = per_code[present[r]]
                per_code[present[r]] = r  # now the part's rank
                at[r] = 0
            for i in range(start[p], end[p]):
                at[per_code[part[i]]] += 1
            offset = start[p]
            for r in range(parts):
                held = at[r]
                start[first + r] = offset
                at[r] = offset
                offset += held
                end[first + r] = offset
            for i in range(start[p], end[p]):
                r = per_code[part[i]]
                part[i] = at[r]  # where the unit goes
                at[r] += 1
            for r in range(parts):
                per_code[present[r]] = 0
        else:
            # a number or a set: the records above the median (at or above it when it is the
            # largest code) form part 1, the others part 0, each part's records counted as they go
            median = _median(p, j, rows, weights, start, end, size, lo, hi, per_code, sorting)
            above = median if median == hi[p, j] else median + 1
            upper_records, upper_units = 0, 0
            for i in range(start[p], end[p]):
                upper = 1 if rows[j, i] >= above else 0
                part[i] = upper
                upper_records += weights[i] * upper
                upper_units += upper
            lower_records = size[p] - upper_records
            if lower_records <= 0 or upper_records <= 0 or lower_records < k or upper_records < k:
                tried[p, j] = True
                continue
            # the cut stands: the two parts new partitions, numbered after every one made before,
            # the lower first; the run split stably by part
            parts = 2
            size[first] = lower_records
            size[first + 1] = upper_records
            start[first] = start[p]
            end[first] = start[first + 1] = end[p] - upper_units
            end[first + 1] = end[p]
            lower, upper_at = start[first], start[first + 1]
            for i in range(start[p], end[p]):
                if part[i] == 1:
                    part[i] = upper_at  # where the unit goes
                    upper_at += 1
                else:
                    part[i] = lower
                    lower += 1
        for r in range(parts):
            c = first + r
            state[c] = OPEN
            for jj in range(d):
                tried[c, jj] = False
        there = 1 - side[p]
        unit, moved, moved_unit, moved_weight = (
            both_units[side[p]],
            both_rows[there],
            both_units[there],
            both_weights[there],
        )
        for i in range(start[p], end[p]):
            moved_unit[part[i]] = unit[i]
            moved_weight[part[i]] = weights[i]
        for jj in range(d):
            if lo[p, jj] == hi[p, jj] if kind[jj] != CATEGORY else lo[p, jj] == 0:
                continue  # one value throughout: never read again (no width), so not moved
            for i in range(start[p], end[p]):
                moved[jj, part[i]] = rows[jj, i]
        for r in range(parts):  # the parts' extents: their lowest and highest codes
            c = first + r
            side[c] = there
            for jj in range(d):
                if lo[p, jj] == hi[p, jj] if kind[jj] != CATEGORY else lo[p, jj] == 0:
                    lo[c, jj] = lo[p, jj]  # the partition's one value (a category's leaf: level 0)
                    hi[c, jj] = hi[p, jj]
                    continue
                a, b = moved[jj, start[c]], moved[jj, start[c]]
                for i in range(start[c] + 1, end[c]):
                    x = moved[jj, i]
                    a = min(a, x)
                    b = max(b, x)
                lo[c, jj] = a
                hi[c, jj] = b
                if kind[jj] == CATEGORY:
                    _category_extent(c, jj, n_codes, levels, ancestors, ancestor_at, lo, hi)
        count[0] = first + parts
        state[p] = SPLIT
    return final


def _start(
    kind, n_codes, levels, ancestors, ancestor_at, both_rows, both_weights, lo, hi, state, start, end, size, count
):
    """The whole table as partition 0 (on side 0)."""
    rows, weights = both_rows[0], both_weights[0]
    d, u = rows.shape
    start[0] = 0
    end[0] = u
    size[0] = weights.sum()
    state[0] = OPEN
    count[0] = 1
    for j in range(d):
        a, b = rows[j, 0], rows[j, 0]
        for i in range(1, u):
            a = min(a, rows[j, i])
            b = max(b, rows[j, i])
        lo[0, j] = a
        hi[0, j] = b
    for j in range(d):
        if kind[j] == CATEGORY:
            _category_extent(0, j, n_codes, levels, ancestors, ancestor_at, lo, hi)


def _groups(both_units, side, state, start, end, count):
    """Each unit's final partition, the final partitions numbered in the order they were made."""
    out = np.empty(both_units.shape[1], dtype=np.int64)
    g = 0
    for p in range(count[0]):
        if state[p] == FINAL:
            for i in range(start[p], end[p]):
                out[both_units[side[p], i]] = g
            g += 1
    return out


_COMPILED: dict = {}


def kernels():
    """The compiled kernels (numba, cached beside this module), or None without numba."""
    if not _COMPILED:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - where numba is not installed
            _COMPILED[None] = None
        else:
            g = globals()
            for fn in (_category_extent, _width, _median):  # the callees, inlined where called
                g[fn.__name__] = njit(cache=True, nogil=True, inline="always")(fn)
            for fn in (_round, _start, _groups):
                g[fn.__name__] = njit(cache=True, nogil=True)(fn)
                _COMPILED[fn.__name__] = g[fn.__name__]
    return None if None in _COMPILED else _COMPILED


def run_rounds(packed: dict, weights: np.ndarray, k: int, each_round):
    """Every unit's final partition (dense ids), how many partitions were made, and the final
    partitions' extents (lowest and highest code of a number or a set, level and node of a
    category's lowest common ancestor: partition × attribute, in the order of the ids);
    ``each_round(records final so far, partitions made)`` is called before each round (progress, and
    a cancel stops the run there)."""
    compiled = kernels()
    state = State(packed, weights)
    compiled["_start"](
        packed["kind"], packed["n_codes"], packed["levels"], packed["ancestors"], packed["ancestor_at"],
        state.rows, state.weights, state.lo, state.hi, state.state, state.start, state.end, state.size, state.count,
    )  # fmt: skip
    args = state.args()
    done = 0
    open_now = True
    while open_now:
        each_round(done, int(state.count[0]))
        done += compiled["_round"](*args, k)
        open_now = bool((state.state[: state.count[0]] == OPEN).any())
    made = int(state.count[0])
    final = np.flatnonzero(state.state[:made] == FINAL)  # numbered in this order (_groups)
    groups = compiled["_groups"](state.unit, state.side, state.state, state.start, state.end, state.count)
    return groups, made, (state.lo[final], state.hi[final])
