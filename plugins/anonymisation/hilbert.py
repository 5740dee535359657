"""Hilbert-curve k-anonymity (Ghinita et al. 2007), the relational baseline of paper 002
(docs/reference.md#set-valued-data).

Each record's quasi-identifiers are a point of a grid: a number by its rank among the column's
distinct values, a category by its leaf's position in the in-order traversal of its hierarchy
(neighbouring leaves share ancestors), each axis stretched to the grid's 2^b cells. The records
are ordered along the grid's Hilbert curve (ties keep the input order) and that sequence is cut
optimally into runs of k … 2k−1 consecutive records: dynamic programming minimises
Σ_runs |run|·NCP(run), with the NCP of docs/reference.md#set-valued-data (a number's range over its column's range, a
category's leaves under the lowest common ancestor over all leaves, summed over attributes). An
optimal 1-D k-anonymous grouping never needs a group of 2k or more records (split it), so the
restriction loses nothing.

Cost: the run costs for every end and every length come in blocks of ends with NumPy
(running minima and maxima over the reversed windows), O(n·k·d); the recursion is one pass.
The release generalises each quasi-identifier to its run's range or hierarchy node, exactly as
Mondrian's, so ``veil verify`` checks k-anonymity from the file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from veil.engine import TABLE, Algorithm, BadInput, HierarchyUse, Judgement, hookimpl, param

from ._regions import generalised, group_values, qi_columns, qis_and_sensitive, relational_gcp

PAPER = "002_aa8a8f08b56f3f6d"
BLOCK_CELLS = 1 << 21  # run costs computed per block of ends: ends × window cells at a time


# ------------------------------------------------------------------------------------ the curve
def hilbert_order(points: np.ndarray, bits: int) -> np.ndarray:
    """The permutation that sorts integer ``points`` (n × d, each coordinate in [0, 2^bits)) along
    the d-dimensional Hilbert curve; equal points keep their input order.

    Skilling's transform (AIP Conf. Proc. 707, 2004), vectorised over the points: the coordinates
    become the curve's index in "transposed" form, whose bits read from the most significant bit of
    the first coordinate onwards are the index; the order is a lexicographic sort of those bits."""
    x = np.array(points, dtype=np.uint64, copy=True)
    n, d = x.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if bits < 1 or (x >> np.uint64(bits)).any():
        raise BadInput(f"Hilbert coordinates must lie in [0, 2^{bits})")
    top = np.uint64(1) << np.uint64(bits - 1)
    q = top
    while q > 1:  # inverse undo
        p = q - np.uint64(1)
        for i in range(d):
            high = (x[:, i] & q) != 0
            x[high, 0] ^= p
            t = np.where(high, np.uint64(0), (x[:, 0] ^ x[:, i]) & p)
            x[:, 0] ^= t
            x[:, i] ^= t
        q >>= np.uint64(1)
    for i in range(1, d):  # Gray encode
        x[:, i] ^= x[:, i - 1]
    t = np.zeros(n, dtype=np.uint64)
    q = top
    while q > 1:
        t ^= np.where((x[:, d - 1] & q) != 0, q - np.uint64(1), np.uint64(0))
        q >>= np.uint64(1)
    x ^= t[:, None]
    # the index's bits, most significant first: bit b of coordinate 0, 1, …, d−1, then bit b−1 …
    keys = [(x[:, i] >> np.uint64(b)) & np.uint64(1) for b in range(bits - 1, -1, -1) for i in range(d)]
    return np.lexsort([np.arange(n)] + keys[::-1])


def grid_points(cols, bits: int | None = None) -> tuple[np.ndarray, int]:
    """Each record as a grid point: its rank codes stretched to the 2^bits cells of every axis."""
    tops = [int(col.codes.max()) if len(col.codes) else 0 for col in cols]
    if bits is None:
        bits = max(1, max(t.bit_length() for t in tops))
    cells = (1 << bits) - 1
    pts = np.empty((len(cols[0].codes), len(cols)), dtype=np.uint64)
    for j, (col, t) in enumerate(zip(cols, tops)):
        pts[:, j] = (col.codes * cells) // t if t else 0
    return pts, bits


# ------------------------------------------------------------------------------ optimal runs
def run_costs(cols, order: np.ndarray, ends: np.ndarray, k: int) -> np.ndarray:
    """cost[e, s − k] = s·NCP of the run of the ``s`` records before position ``ends[e]`` of
    ``order`` (s = k … 2k−1); inf where the run would start before the first record."""
    w = 2 * k - 1
    out = np.zeros((len(ends), k))
    for col in cols:
        v = col.codes[order]
        pad = np.concatenate([np.zeros(w, dtype=v.dtype), v])
        win = sliding_window_view(pad, w)[ends][:, ::-1]  # row e: the w values before ends[e], nearest first
        lo = np.minimum.accumulate(win, axis=1)[:, k - 1 :]
        hi = np.maximum.accumulate(win, axis=1)[:, k - 1 :]
        if col.categorical:
            width = col.width(*col.lca(lo.ravel(), hi.ravel())).reshape(lo.shape)
        else:
            width = col.width(lo.ravel(), hi.ravel()).reshape(lo.shape)
        out += width
    sizes = np.arange(k, w + 1)
    out *= sizes
    out[ends[:, None] < sizes[None, :]] = np.inf
    return out


def optimal_runs(cols, order: np.ndarray, k: int, check=None) -> np.ndarray:
    """Every position's run (0 … G−1 along ``order``) of the cheapest cut into runs of k … 2k−1."""
    n = len(order)
    if k < 1:
        raise BadInput("k must be at least 1")
    if n < k:
        raise BadInput(f"k = {k} is larger than the number of records ({n})")
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    length = np.zeros(n + 1, dtype=np.int64)
    sizes = np.arange(k, 2 * k)
    block = max(1, BLOCK_CELLS // (2 * k))
    for start in range(k, n + 1, block):
        if check is not None:
            check()
        ends = np.arange(start, min(n + 1, start + block))
        cost = run_costs(cols, order, ends, k)
        for e, i in enumerate(ends.tolist()):
            prev = i - sizes
            ok = prev >= 0
            total = np.full(k, np.inf)
            total[ok] = best[prev[ok]] + cost[e, ok]
            s = int(np.argmin(total))  # ties: the shortest run
            best[i], length[i] = total[s], k + s
    runs = np.empty(n, dtype=np.int64)
    i, g = n, []
    while i > 0:
        g.append((i - length[i], i))
        i -= length[i]
    for gid, (a, b) in enumerate(reversed(g)):
        runs[a:b] = gid
    return runs


def hilbert_groups(table, k: int, *, qis=None, check=None) -> np.ndarray:
    """Every record's group by Hilbert order and optimal runs (groups numbered along the curve)."""
    qis = list(qis if qis is not None else [])
    if not qis:
        raise BadInput("the Hilbert method needs quasi-identifiers: mark the columns that identify people")
    cols = qi_columns(table, qis)
    points, bits = grid_points(cols)
    order = hilbert_order(points, bits)
    runs = optimal_runs(cols, order, k, check)
    groups = np.empty(len(order), dtype=np.int64)
    groups[order] = runs
    return groups


# ---------------------------------------------------------------------------------- plugin
@dataclass(frozen=True)
class HilbertParams:
    bits: int = param(
        0,
        minimum=0,
        maximum=20,
        help="grid cells per axis as a power of two (0: just enough for the column with the most distinct values)",
    )


class HilbertCurve(Algorithm):
    name = "hilbert"
    keeps_record_order = True  # every record, in the input's order
    title = "Hilbert curve (1-D optimal)"
    paper = PAPER
    description = (
        "Orders the records along a Hilbert curve through the quasi-identifier space and cuts the "
        "order optimally (dynamic programming) into groups of k to 2k−1 records; each quasi-identifier "
        "is generalised to its group's range or hierarchy node (Ghinita et al. 2007)."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUP_SIZE,)  # groups of k to 2k−1 records
    releases_sensitive = True
    Params = HilbertParams
    uses_hierarchies = HierarchyUse.ALL  # numbers too, where a hierarchy is attached

    def run(self, data, model, params, ctx):
        qis, sensitive = qis_and_sensitive(data)
        if not qis:
            raise BadInput("the Hilbert method needs quasi-identifiers: mark the columns that identify people")
        cols = qi_columns(data, qis)
        ctx.progress(0.0, "Hilbert: ordering the records")
        points, bits = grid_points(cols, params.bits or None)
        order = hilbert_order(points, bits)
        ctx.progress(0.2, "Hilbert: cutting the order into groups")
        runs = optimal_runs(cols, order, model.params.k, ctx.check)
        groups = np.empty(len(order), dtype=np.int64)
        groups[order] = runs
        # number groups by first appearance in the input, as Mondrian's
        _, first = np.unique(groups, return_index=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first)] = np.arange(len(first))
        groups = rank[groups]
        release = generalised(data, qis, sensitive, groups, group_values(cols, groups))
        release.details.update({"gcp": relational_gcp(cols, groups), "bits": bits})
        return release


@hookimpl
def veil_register_algorithms():
    return [HilbertCurve]
