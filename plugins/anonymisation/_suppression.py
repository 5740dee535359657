"""Local suppression's search: which quasi-identifier cells to blank so that every record can share
a group with at least k records when a blank matches any value (docs/reference.md#local-suppression).

Records equal on every quasi-identifier are one *pattern* (a row of codes, −1 for a blank). A blank
only ever makes records compatible with more records, so a pattern that reaches k stays there: the
greedy search visits the patterns below k once, fewest compatible records first, and blanks one
cell of the pattern's records at a time, the column chosen by the importance order (the least
important first, among the columns whose blank reaches k) or, without one, the column whose blank
adds the most compatible records. The exact search, for small tables, tries every set of cells by
increasing size and returns the first that works: the fewest cells.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from veil.engine import BadInput, compatible_sizes


def _gains(u, w, qi, p, out):
    """(records compatible with pattern p, and per column the records that become compatible when
    p's cell there is blanked) over the patterns ``u`` with weights ``w``. A pattern blank in every
    quasi-identifier (``qi``: which columns are) joins no other pattern's group, and its own is every
    record (engine/model/blanks.py)."""
    n, m = u.shape
    for j in range(m):
        out[j] = 0
    p_full = True
    for j in range(m):
        if qi[j] and u[p, j] >= 0:
            p_full = False
    base = 0
    for q in range(n):
        if w[q] == 0:
            continue
        if p_full:
            base += w[q]
            continue
        q_full = True
        for j in range(m):
            if qi[j] and u[q, j] >= 0:
                q_full = False
        if q_full:
            continue
        mismatches = 0
        col = -1
        for j in range(m):
            a = u[p, j]
            b = u[q, j]
            if a >= 0 and b >= 0 and a != b:
                mismatches += 1
                col = j
                if mismatches > 1:
                    break
        if mismatches == 0:
            base += w[q]
        elif mismatches == 1:
            out[col] += w[q]
    return base


_COMPILED: list = []


def gains_kernel():
    if not _COMPILED:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - where numba is not installed
            _COMPILED.append(_gains)
        else:
            _COMPILED.append(njit(cache=True, nogil=True)(_gains))
    return _COMPILED[0]


def greedy(
    patterns: np.ndarray,
    weights: np.ndarray,
    k: int,
    rank: np.ndarray,
    blankable: np.ndarray,
    by_importance: bool,
    check: Callable[[float], None] = lambda f: None,
    qi: np.ndarray | None = None,
) -> np.ndarray:
    """Blank cells of the patterns (in place, −1) until every pattern has at least k compatible
    records; returns the records blanked per column. ``rank[j]``: column j's importance (higher is
    more important, blanked later); ``blankable[j]``: whether column j may be blanked (not a stratum);
    ``qi[j]``: whether column j is a quasi-identifier (a pattern blank in all of them is suppressed).
    A pattern suppressed late leaves the groups it counted in, which the models' check afterwards
    catches (local_suppression blanks further cells where a model fails)."""
    kernel = gains_kernel()
    m = patterns.shape[1]
    qi = np.ones(m, dtype=np.bool_) if qi is None else np.asarray(qi, dtype=np.bool_)
    blanked = np.zeros(m, dtype=np.int64)
    sizes = compatible_sizes(patterns, weights)
    order = [int(p) for p in np.lexsort((np.arange(len(sizes)), sizes)) if sizes[p] < k and weights[p] > 0]
    gain = np.zeros(m, dtype=np.int64)
    for step, p in enumerate(order):
        if step % 64 == 0:
            check(step / max(len(order), 1))
        while True:
            base = kernel(patterns, weights, qi, p, gain)
            if base >= k:
                break
            open_ = [j for j in range(m) if patterns[p, j] >= 0 and blankable[j]]
            if not open_:
                raise BadInput(
                    f"a record cannot share a group with {k} records even with every quasi-identifier it may lose "
                    f"blanked (the strata hold fewer than k records): relax k or use fewer strata"
                )
            j = _choose(open_, base, gain, k, rank, by_importance)
            patterns[p, j] = -1
            blanked[j] += weights[p]
    return blanked


def _choose(open_: list, base: int, gain: np.ndarray, k: int, rank: np.ndarray, by_importance: bool) -> int:
    if by_importance:
        enough = [j for j in open_ if base + gain[j] >= k]
        pool = enough or open_
        return min(pool, key=lambda j: (rank[j], -gain[j], j))
    return max(open_, key=lambda j: (gain[j], -rank[j], -j))


def exact(codes: np.ndarray, holds: Callable[[np.ndarray], bool], blankable: np.ndarray, limit: int) -> np.ndarray:
    """The fewest cells to blank (−1) for ``holds(codes)`` to be true, trying every set of cells by
    increasing size (ties: the first set in row-major order). ``limit``: the most cells tried."""
    cells = [(i, j) for i in range(codes.shape[0]) for j in range(codes.shape[1]) if codes[i, j] >= 0 and blankable[j]]
    if len(cells) > limit:
        raise BadInput(
            f"the exact search tries every set of cells and takes at most {limit} cells; this table has "
            f"{len(cells)}: use search=greedy"
        )
    for size in range(len(cells) + 1):
        for chosen in itertools.combinations(cells, size):
            trial = codes.copy()
            for i, j in chosen:
                trial[i, j] = -1
            if holds(trial):
                return trial
    raise BadInput("the privacy model fails even with every quasi-identifier blanked: relax its parameters")
