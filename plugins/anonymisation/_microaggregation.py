"""Microaggregation's kernels: MDAV, its variable-size improvement, aggregation functions and the
information loss statisticians report for it (docs/reference.md#microaggregation).

MDAV (Domingo-Ferrer and Mateo-Sanz 2002; the generic form for several columns together,
Domingo-Ferrer and Torra 2005), on records as points (each numeric column standardised, each
category a one-hot block scaled so that two different categories are at distance 1):

1. while at least 3k records remain: take the record r farthest from the remaining records'
   centroid and the record s farthest from r; r and its k − 1 nearest remaining records form a
   group, then s's point and its k nearest remaining records another;
2. if at least 2k remain: the record farthest from their centroid and its k − 1 nearest form a
   group;
3. the rest (k … 2k − 1 records) form the last group.

Ties are broken by the record's position in the input (the first wins), so a run is a pure
function of its input. The *variable-size* variant starts from MDAV's groups and moves single
records to a neighbouring group whenever that lowers the within-group sum of squares while every
group keeps between k and 2k − 1 records: it is never worse than fixed-size MDAV, by construction.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from veil.engine import BadInput

_PAIRS_PER_CALL = 64  # MDAV steps between two cancel checks (each a few passes over the records)


# ---------------------------------------------------------------------------------------- points
def standardised(frame: pd.DataFrame, numeric: list[str], categorical: list[str] = ()) -> np.ndarray:
    """The records as points: numeric columns centred and divided by their standard deviation
    (a blank at the centre), each categorical column a one-hot block scaled by 1/√2 (two different
    categories at distance 1; the kernel measures categories by their codes, :func:`categories`,
    the same distances without the block). float64, C order."""
    parts = []
    for name in numeric:
        x = frame[name].to_numpy(dtype=float)
        known = ~np.isnan(x)
        mean = x[known].mean() if known.any() else 0.0
        sd = x[known].std(ddof=1) if known.sum() > 1 else 0.0
        z = (x - mean) / (sd if sd > 0 else 1.0)
        parts.append(np.where(known, z, 0.0)[:, None])
    for name in categorical:
        codes, uniques = pd.factorize(frame[name])
        block = np.zeros((len(frame), max(len(uniques), 1)))
        seen = codes >= 0
        block[np.flatnonzero(seen), codes[seen]] = 1 / math.sqrt(2)
        parts.append(block)
    if not parts:
        return np.zeros((len(frame), 0))
    return np.ascontiguousarray(np.hstack(parts), dtype=np.float64)


# ---------------------------------------------------------------------------------------- MDAV
def categories(frame: pd.DataFrame, categorical: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(n × c codes of the categorical columns, a blank its own code; each column's first slot in a
    table of every column's categories, with the total last)."""
    codes = np.zeros((len(frame), len(categorical)), dtype=np.int64)
    offsets = np.zeros(len(categorical) + 1, dtype=np.int64)
    for j, name in enumerate(categorical):
        own, uniques = pd.factorize(frame[name])
        codes[:, j] = np.where(own < 0, len(uniques), own)
        offsets[j + 1] = offsets[j] + len(uniques) + 1
    return codes, offsets


# A point is a record's values (px, pc) or the remaining records' centroid: numbers at their mean
# and each category v at its share p_v, a record of category v then at squared distance
# ½(1 − 2p_v + Σ p²) from it (the one-hot block scaled by 1/√2), held per category in ``table``.
def _distance(x, c, i, px, pc, table, offsets, centroid):
    d = 0.0
    for j in range(x.shape[1]):
        t = x[i, j] - px[j]
        d += t * t
    for j in range(c.shape[1]):
        if centroid:
            d += table[offsets[j] + c[i, j]]
        elif c[i, j] != pc[j]:
            d += 1.0
    return d


def _farthest(x, c, idx, m, px, pc, table, offsets, centroid):
    best, at = -1.0, -1
    for p in range(m):
        i = idx[p]
        d = _distance(x, c, i, px, pc, table, offsets, centroid)
        if d > best or (d == best and i < idx[at]):
            best, at = d, p
    return at


def _nearest(x, c, idx, m, px, pc, table, offsets, k, out_pos, out_dist):
    """The k remaining records nearest the record point (px, pc) (ties: the earlier record), as
    positions in idx."""
    filled = 0
    for p in range(m):
        i = idx[p]
        d = _distance(x, c, i, px, pc, table, offsets, False)
        if filled == k:
            last = out_pos[k - 1]
            if d > out_dist[k - 1] or (d == out_dist[k - 1] and i > idx[last]):
                continue
            q = k - 1
        else:
            q = filled
            filled += 1
        while q > 0 and (out_dist[q - 1] > d or (out_dist[q - 1] == d and idx[out_pos[q - 1]] > i)):
            out_dist[q] = out_dist[q - 1]
            out_pos[q] = out_pos[q - 1]
            q -= 1
        out_dist[q] = d
        out_pos[q] = p


def _take(x, c, idx, m, px, pc, table, offsets, k, labels, group, sums, freq, pos, dist):
    """Group the record point's k nearest remaining records as ``group``; return how many remain."""
    _nearest(x, c, idx, m, px, pc, table, offsets, k, pos, dist)
    chosen = np.sort(pos[:k])[::-1]  # remove from the end first, so positions stay valid
    for q in chosen:
        i = idx[q]
        labels[i] = group
        for j in range(x.shape[1]):
            sums[j] -= x[i, j]
        for j in range(c.shape[1]):
            freq[offsets[j] + c[i, j]] -= 1
        m -= 1
        idx[q] = idx[m]
        idx[m] = i
    return m


def _centroid(sums, freq, offsets, m, centre, table):
    for j in range(sums.shape[0]):
        centre[j] = sums[j] / m
    for j in range(offsets.shape[0] - 1):
        squares = 0.0
        for v in range(offsets[j], offsets[j + 1]):
            share = freq[v] / m
            squares += share * share
        for v in range(offsets[j], offsets[j + 1]):
            table[v] = 0.5 * (1.0 - 2.0 * freq[v] / m + squares)


def _mdav_steps(x, c, offsets, idx, m, labels, group, sums, freq, k, pairs):
    """Up to ``pairs`` steps of MDAV's loop from the given state; returns (remaining, next group).
    The last groups (steps 2 and 3) are made once fewer than 3k records remain."""
    pos = np.empty(k, dtype=np.int64)
    dist = np.empty(k, dtype=np.float64)
    centre = np.empty(x.shape[1], dtype=np.float64)
    table = np.zeros(offsets[-1], dtype=np.float64)
    none = np.zeros(c.shape[1], dtype=np.int64)
    done = 0
    while m >= 3 * k and done < pairs:
        _centroid(sums, freq, offsets, m, centre, table)
        r = idx[_farthest(x, c, idx, m, centre, none, table, offsets, True)]
        rx, rc = x[r].copy(), c[r].copy()
        s = idx[_farthest(x, c, idx, m, rx, rc, table, offsets, False)]
        sx, sc = x[s].copy(), c[s].copy()
        m = _take(x, c, idx, m, rx, rc, table, offsets, k, labels, group, sums, freq, pos, dist)
        m = _take(x, c, idx, m, sx, sc, table, offsets, k, labels, group + 1, sums, freq, pos, dist)
        group += 2
        done += 1
    if m < 3 * k:
        if m >= 2 * k:
            _centroid(sums, freq, offsets, m, centre, table)
            r = idx[_farthest(x, c, idx, m, centre, none, table, offsets, True)]
            rx, rc = x[r].copy(), c[r].copy()
            m = _take(x, c, idx, m, rx, rc, table, offsets, k, labels, group, sums, freq, pos, dist)
            group += 1
        for p in range(m):
            labels[idx[p]] = group
        if m:
            group += 1
        m = 0
    return m, group


_COMPILED: dict = {}


def _kernel(name: str):
    """The numba-compiled kernel (cached beside this module), or the Python one without numba."""
    if not _COMPILED:
        fns = {
            "distance": _distance,
            "farthest": _farthest,
            "nearest": _nearest,
            "take": _take,
            "centroid": _centroid,
            "steps": _mdav_steps,
            "moves": _moves,
        }
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - where numba is not installed
            _COMPILED.update(fns)
        else:
            g = globals()
            for key, fn in fns.items():  # compiled callees first: each kernel calls the compiled ones
                compiled = njit(cache=True, nogil=True)(fn)
                g[fn.__name__] = compiled
                _COMPILED[key] = compiled
    return _COMPILED[name]


def _no_categories(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((n, 0), dtype=np.int64), np.zeros(1, dtype=np.int64)


def mdav(
    x: np.ndarray,
    k: int,
    check: Callable[[float], None] = lambda f: None,
    codes: np.ndarray | None = None,
    offsets: np.ndarray | None = None,
) -> np.ndarray:
    """Each record's MDAV group (numbered in the order MDAV forms them) for numeric points ``x``
    (n × d) and categorical ``codes`` with their ``offsets`` (:func:`categories`);
    ``check(fraction done)`` is called between steps (and stops the run on a cancel)."""
    n = len(x)
    if n < k:
        raise BadInput(f"microaggregation needs at least k = {k} records, the data has {n}")
    if codes is None:
        codes, offsets = _no_categories(n)
    steps = _kernel("steps")
    x = np.ascontiguousarray(x, dtype=np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    idx = np.arange(n, dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    sums = x.sum(axis=0)
    freq = np.zeros(int(offsets[-1]), dtype=np.int64)
    for j in range(codes.shape[1]):
        freq[offsets[j] : offsets[j + 1]] = np.bincount(codes[:, j], minlength=int(offsets[j + 1] - offsets[j]))
    m, group = n, 0
    while m:
        m, group = steps(x, codes, offsets, idx, m, labels, group, sums, freq, k, _PAIRS_PER_CALL)
        check(1 - (m / n) ** 2)
    return labels


def blocks(x: np.ndarray, size: int) -> list[np.ndarray]:
    """The records cut into blocks of at most ``size`` (≥ 2k) by halving at the median of the
    widest numeric coordinate (a k-d tree), so MDAV can run block by block on very large tables."""
    out, todo = [], [np.arange(len(x))]
    while todo:
        rows = todo.pop()
        if len(rows) <= size:
            out.append(rows)
            continue
        part = x[rows]
        half = len(rows) // 2
        if part.shape[1]:
            axis = int(np.argmax(part.max(axis=0) - part.min(axis=0)))
            order = np.argpartition(part[:, axis], half, kind="introselect")
        else:
            order = np.arange(len(rows))
        todo += [rows[order[half:]], rows[order[:half]]]
    return out


def mdav_blocks(
    x: np.ndarray,
    k: int,
    size: int,
    check: Callable[[float], None] = lambda f: None,
    codes: np.ndarray | None = None,
    offsets: np.ndarray | None = None,
) -> np.ndarray:
    """MDAV on the whole table when it holds at most ``size`` records, else within each block of
    :func:`blocks`; group ids 0 … G − 1."""
    if codes is None:
        codes, offsets = _no_categories(len(x))
    if len(x) <= size:
        return mdav(x, k, check, codes, offsets)
    labels = np.empty(len(x), dtype=np.int64)
    done, offset = 0, 0
    for rows in blocks(x, size):
        own = mdav(x[rows], k, codes=codes[rows], offsets=offsets)
        labels[rows] = own + offset
        offset += int(own.max()) + 1
        done += len(rows)
        check(done / len(x))
    return labels


# ------------------------------------------------------------------------------ variable size
def _moves(x, labels, sums, sizes, candidates, k, passes):
    """Move single records to a candidate group while the sum of squares falls and every group
    keeps k … 2k − 1 records; returns how many moves were made."""
    n, d = x.shape
    moved = 0
    for _ in range(passes):
        changed = 0
        for i in range(n):
            a = labels[i]
            na = sizes[a]
            if na <= k:
                continue
            da = 0.0
            for j in range(d):
                t = x[i, j] - sums[a, j] / na
                da += t * t
            gain_out = na / (na - 1.0) * da
            best, best_b = -1e-12, -1
            for c in range(candidates.shape[1]):
                b = candidates[a, c]
                if b == a or b < 0 or sizes[b] >= 2 * k - 1:
                    continue
                nb = sizes[b]
                db = 0.0
                for j in range(d):
                    t = x[i, j] - sums[b, j] / nb
                    db += t * t
                delta = nb / (nb + 1.0) * db - gain_out
                if delta < best:
                    best, best_b = delta, b
            if best_b >= 0:
                for j in range(d):
                    sums[a, j] -= x[i, j]
                    sums[best_b, j] += x[i, j]
                sizes[a] -= 1
                sizes[best_b] += 1
                labels[i] = best_b
                changed += 1
        moved += changed
        if changed == 0:
            break
    return moved


def improve(x: np.ndarray, labels: np.ndarray, k: int, neighbours: int = 6, passes: int = 8) -> np.ndarray:
    """MDAV's groups improved by single-record moves between neighbouring groups (each group's
    ``neighbours`` nearest centroids): every move lowers the sum of squares and keeps every group
    between k and 2k − 1 records, so the result is never worse than ``labels``."""
    from scipy.spatial import cKDTree

    labels = labels.copy()
    g = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=g).astype(np.int64)
    sums = np.zeros((g, x.shape[1]))
    np.add.at(sums, labels, x)
    if g < 2 or x.shape[1] == 0:
        return labels
    q = min(neighbours + 1, g)
    _, near = cKDTree(sums / sizes[:, None]).query(sums / sizes[:, None], k=q)
    candidates = np.ascontiguousarray(np.asarray(near, dtype=np.int64).reshape(g, q))
    _kernel("moves")(x, labels, sums, sizes, candidates, k, passes)
    return renumber(labels)


def renumber(labels: np.ndarray) -> np.ndarray:
    """Group ids 0 … G − 1 in order of each group's first record."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


# ------------------------------------------------------------------------------- information loss
def sse(x: np.ndarray, labels: np.ndarray) -> float:
    """Within-group sum of squared distances to each group's centroid."""
    g = int(labels.max()) + 1 if len(labels) else 0
    sizes = np.bincount(labels, minlength=g)
    sums = np.zeros((g, x.shape[1]))
    np.add.at(sums, labels, x)
    return float(((x - (sums / np.maximum(sizes, 1)[:, None])[labels]) ** 2).sum())


def sst(x: np.ndarray) -> float:
    """Total sum of squared distances to the centroid of all records."""
    return float(((x - x.mean(axis=0)) ** 2).sum()) if len(x) else 0.0
