"""What a blank quasi-identifier means when records are counted in groups (docs/reference.md#blanks).

Two rules, chosen per run:

``any-value`` (sdcMicro's ``freqCalc`` rule)
    a blank matches any value: a record is counted in every group it could join, so the size of a
    record's "group" is the number of records that agree with it on every column where neither is
    blank. A record blank in every quasi-identifier (one Veil suppressed) is left out of the other
    records' groups, as ARX leaves suppressed records out, and its own "group" is the whole table.
``own-value``
    a blank is a value of its own, equal only to another blank; a record Veil suppressed (``*`` in
    every quasi-identifier) still matches any value.

Under ``any-value`` the records' groups overlap, so they are no partition. :func:`blank_view` gives
a privacy model what it judges all the same: one "group" per distinct pattern of quasi-identifier
values, whose size and sensitive counts are those of every record compatible with the pattern. A
blank sensitive value is never a value: counts, diversity and closeness see known values only.

>>> codes = np.array([[0, 0], [0, -1], [1, 0], [0, 0]])
>>> compatible_sizes(codes).tolist()
[3, 3, 1, 3]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..data.generalised import SUPPRESSED
from ..kernels.grouping import group_rows

ANY_VALUE = "any-value"
OWN_VALUE = "own-value"
BLANK_RULES = (ANY_VALUE, OWN_VALUE)
SUPPRESSED_MARK = "*"
BLANK_WORDS = {
    ANY_VALUE: "a blank quasi-identifier matches any value (a record counts in every group it could join)",
    OWN_VALUE: "a blank quasi-identifier is a value of its own; a suppressed record (* throughout) matches any value",
}


def check_rule(rule: str) -> str:
    if rule not in BLANK_RULES:
        raise BadInput(f"a blank means one of {', '.join(BLANK_RULES)}, not {rule!r}")
    return rule


def is_suppressed(series: pd.Series) -> np.ndarray:
    """Cells Veil suppressed: ``*`` as written, or the typed :data:`SUPPRESSED`."""
    if isinstance(series.dtype, pd.CategoricalDtype):  # by the code of its category ``*``, if it has one
        cells = series.array
        at = cells.categories.get_indexer([SUPPRESSED_MARK])[0]
        return np.asarray(cells.codes) == at if at >= 0 else np.zeros(len(series), dtype=bool)
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_object_dtype(series):
        return np.zeros(len(series), dtype=bool)
    typed = pd.api.types.is_object_dtype(series)  # only a column of Python objects can hold SUPPRESSED
    return series.isin([SUPPRESSED_MARK, SUPPRESSED] if typed else [SUPPRESSED_MARK]).to_numpy(dtype=bool)


def suppressed_records(frame: pd.DataFrame, columns) -> np.ndarray:
    """Records written ``*`` in every one of ``columns`` (records Veil suppressed)."""
    out = np.zeros(len(frame), dtype=bool)
    for j, c in enumerate(columns):  # column by column, done once no record is left
        hit = is_suppressed(frame[c])
        out = hit if j == 0 else out & hit
        if not out.any():
            return np.zeros(len(frame), dtype=bool)
    return out


def blank_codes(frame: pd.DataFrame, columns, rule: str) -> np.ndarray:
    """n × m codes of the quasi-identifiers, −1 where a cell matches any value under ``rule``:
    a missing cell under ``any-value``, every cell of a record suppressed throughout under both (a
    single ``*`` cell is a generalised value, the top of its hierarchy, equal to another ``*``)."""
    check_rule(rule)
    out = np.empty((len(frame), len(columns)), dtype=np.int64)
    for j, name in enumerate(columns):
        codes, _ = pd.factorize(frame[name], use_na_sentinel=rule == ANY_VALUE)
        out[:, j] = codes.astype(np.int64)
    out[suppressed_records(frame, columns)] = -1
    return out


def has_blanks(frame: pd.DataFrame, columns, rule: str) -> bool:
    """Whether any quasi-identifier cell matches any value under ``rule``."""
    if rule == ANY_VALUE and any(_any_missing(frame[name]) for name in columns):
        return True
    return bool(suppressed_records(frame, columns).any())


def _any_missing(series: pd.Series) -> bool:
    if isinstance(series.dtype, pd.CategoricalDtype):  # a missing cell's code is −1
        return bool((np.asarray(series.array.codes) < 0).any())
    return bool(series.isna().any())


def _patterns(codes: np.ndarray):
    """(pattern of each record, the distinct patterns' rows, in order of first appearance): records
    equal on every code share one."""
    n, m = codes.shape
    if m == 0:
        return np.zeros(n, dtype=np.int64), np.zeros((1 if n else 0, 0), dtype=np.int64)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, m), dtype=np.int64)
    spans = codes.max(axis=0) + 2  # codes −1 … max, shifted to 0 … max + 1
    inverse, first = group_rows([codes[:, j] + 1 for j in range(m)], spans.tolist())
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse], codes[first[order]]


class CompatibleSums:
    """Sums over compatible patterns: for each of P distinct patterns (rows of codes, −1 matching any
    value), the sum of a mass over every pattern compatible with it (equal on every column where
    neither is blank). A pattern blank everywhere (a suppressed record) is compatible with every
    pattern, but counted in none but its own kind.

    The patterns are split by their mask of blank columns (a few, in practice). Within a mask the
    patterns are distinct, so each is compatible with itself only; for each two masks, the patterns
    of both are numbered by their values on the columns blank in neither (one pass over mixed-radix
    keys, :func:`~veil.engine.group_rows`): two patterns are compatible exactly when they have the
    same number. That numbering is done once; :meth:`sums` then costs one ``bincount`` per pair of
    masks, whatever the mass, so a search that sums the sizes of the same classes again and again
    (global recoding dropping failing classes until none fails) keys them once.

    >>> patterns = np.array([[0, 0], [-1, 0], [1, 0], [1, 1], [-1, -1]])
    >>> CompatibleSums(patterns).sums(np.array([1, 2, 4, 8, 16])).tolist()
    [3, 7, 6, 8, 31]
    """

    def __init__(self, patterns: np.ndarray):
        patterns = np.asarray(patterns)
        n, m = patterns.shape
        self.n = n
        columns = np.ascontiguousarray(patterns.T, dtype=np.int64)  # a column at a time, each in one pass
        blank = columns < 0
        whole = np.logical_and.reduce(blank, axis=0) if m else np.zeros(n, dtype=bool)
        self.whole = np.flatnonzero(whole)  # the patterns blank throughout: compatible with every pattern
        self.pairs: list[tuple] = []  # (patterns of one mask, of another, their numbers, how many numbers)
        if not m or len(self.whole) == n:
            return
        mask_of, first = group_rows(list(blank), [2] * m)
        members = [np.flatnonzero(mask_of == x) for x in range(len(first)) if not whole[first[x]]]
        spans = columns.max(axis=1) + 1
        for x, ia in enumerate(members):
            for ib in members[x + 1 :]:
                free = np.flatnonzero(~(blank[:, ia[0]] | blank[:, ib[0]]))
                if len(free):
                    both = np.concatenate([ia, ib])
                    number, first = group_rows([columns[j][both] for j in free], spans[free].tolist())
                    count = len(first)
                else:  # no column known to both: every pattern of one is compatible with every one of the other
                    number, count = np.zeros(len(ia) + len(ib), dtype=np.int64), 1
                self.pairs.append((ia, ib, number[: len(ia)], number[len(ia) :], count))

    def sums(self, mass: np.ndarray) -> np.ndarray:
        """Per pattern, the sum of ``mass`` (P, or P × c) over every pattern compatible with it."""
        mass = np.asarray(mass)
        rows = mass[:, None] if mass.ndim == 1 else mass
        out = rows.copy()  # each pattern is compatible with itself, and no other pattern of its mask
        if len(self.whole):
            out[self.whole] = rows.sum(axis=0)
        for ia, ib, na, nb, count in self.pairs:
            out[ia] += _by_number(nb, rows[ib], count)[na]
            out[ib] += _by_number(na, rows[ia], count)[nb]
        return out[:, 0] if mass.ndim == 1 else out


def _by_number(number: np.ndarray, rows: np.ndarray, count: int) -> np.ndarray:
    """``rows`` (r × c) summed by ``number`` (0 … count − 1): count × c, in ``rows``' dtype."""
    c = rows.shape[1]
    if c == 1:
        summed = np.bincount(number, weights=rows[:, 0], minlength=count)[:, None]
    else:
        flat = (number[:, None] * c + np.arange(c)).ravel()
        summed = np.bincount(flat, weights=rows.ravel(), minlength=count * c).reshape(count, c)
    return summed.astype(rows.dtype, copy=False)


def compatible_sizes(codes: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Per record, how many records it could share a group with (itself included) when −1 matches
    any value: sdcMicro's frequency count ``fk`` with missing keys."""
    ids, patterns = _patterns(np.asarray(codes))
    w = np.ones(len(ids), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    mass = np.bincount(ids, weights=w, minlength=len(patterns)).astype(np.int64)[:, None]
    return CompatibleSums(patterns).sums(mass)[:, 0][ids]


def blank_view(codes: np.ndarray, base):
    """The view a group-judging model checks under the any-value rule: one group per distinct
    pattern of ``codes`` (n × m, −1 matching any value), its size and sensitive counts those of
    every record compatible with it; ``base`` gives the sensitive codes, Q, weights and survey weights
    (each group's Fk, :meth:`~veil.engine.GroupView.estimates`, the sum over the compatible records)."""
    ids, patterns = _patterns(np.asarray(codes))
    n_groups = len(patterns)
    w = base.weights
    sizes = np.bincount(ids, weights=w, minlength=n_groups).astype(np.int64)
    view = type(base).from_codes(  # a GroupView, as ``base`` is
        ids,
        base.sensitive,
        base.q() if base.sensitive is not None else None,
        base.values,
        base.numeric,
        w,
        base.hierarchy,
        survey=base.survey,
    )
    join = CompatibleSums(patterns)
    view._cache["sizes"] = join.sums(sizes)
    if base.survey is not None:  # Fk: the survey weights of every compatible record (sdcMicro's freqCalc)
        mass = np.bincount(ids, weights=base.survey, minlength=n_groups)
        view._cache["estimates"] = join.sums(mass)
    if base.sensitive is not None:
        s = base.n_values
        known = base.sensitive >= 0
        flat = np.bincount(
            ids[known] * s + base.sensitive[known], weights=None if w is None else w[known], minlength=n_groups * s
        ).astype(np.int64)
        view._cache["counts"] = join.sums(flat.reshape(n_groups, s))
    return view
