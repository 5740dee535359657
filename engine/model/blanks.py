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
    if rule == ANY_VALUE and any(frame[name].isna().any() for name in columns):
        return True
    return bool(suppressed_records(frame, columns).any())


def _patterns(codes: np.ndarray):
    """(pattern of each record, the distinct patterns' rows): records equal on every code share one."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64), np.zeros((1 if len(codes) else 0, 0), dtype=np.int64)
    ids = pd.DataFrame(codes).groupby(list(range(codes.shape[1])), sort=False).ngroup().to_numpy(np.int64)
    first = np.full(int(ids.max()) + 1 if len(ids) else 0, -1, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids))[::-1]
    return ids, codes[first]


def _row_keys(rows: np.ndarray) -> np.ndarray:
    if rows.shape[1] == 0:
        return np.zeros(len(rows), dtype=np.int64)
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def _compatible_sums(patterns: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """Per pattern, the sum of ``mass`` (P × c) over every pattern compatible with it: equal on
    every column where neither is blank; a pattern blank everywhere (a suppressed record) is
    compatible with every pattern but counted in none but its own kind. Patterns are compared mask
    by mask: for two masks of blank columns, the patterns of each are keyed on the columns blank in
    neither."""
    blank = patterns < 0
    bits = (
        (blank * (1 << np.arange(blank.shape[1], dtype=np.int64))).sum(axis=1)
        if blank.shape[1]
        else np.zeros(len(patterns), dtype=np.int64)
    )
    masks = np.unique(bits)
    out = np.zeros_like(mass)
    members = {int(m): np.flatnonzero(bits == m) for m in masks}
    everything = (1 << blank.shape[1]) - 1 if blank.shape[1] else -1
    for a in masks:
        ia = members[int(a)]
        for b in masks:
            if b == everything and a != everything:  # a suppressed record joins no other record's group
                continue
            ib = members[int(b)]
            free = ~(blank[ia[0]] | blank[ib[0]])
            keys = _row_keys(np.concatenate([patterns[ia][:, free], patterns[ib][:, free]]))
            ka, kb = keys[: len(ia)], keys[len(ia) :]
            summed = np.zeros((int(keys.max()) + 1, mass.shape[1]), dtype=mass.dtype)
            np.add.at(summed, kb, mass[ib])
            out[ia] += summed[ka]
    return out


def compatible_sizes(codes: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Per record, how many records it could share a group with (itself included) when −1 matches
    any value: sdcMicro's frequency count ``fk`` with missing keys."""
    ids, patterns = _patterns(np.asarray(codes))
    w = np.ones(len(ids), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    mass = np.bincount(ids, weights=w, minlength=len(patterns)).astype(np.int64)[:, None]
    return _compatible_sums(patterns, mass)[:, 0][ids]


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
    view._cache["sizes"] = _compatible_sums(patterns, sizes[:, None])[:, 0]
    if base.survey is not None:  # Fk: the survey weights of every compatible record (sdcMicro's freqCalc)
        mass = np.bincount(ids, weights=base.survey, minlength=n_groups)
        view._cache["estimates"] = _compatible_sums(patterns, mass[:, None])[:, 0]
    if base.sensitive is not None:
        s = base.n_values
        known = base.sensitive >= 0
        flat = np.bincount(
            ids[known] * s + base.sensitive[known], weights=None if w is None else w[known], minlength=n_groups * s
        ).astype(np.int64)
        view._cache["counts"] = _compatible_sums(patterns, flat.reshape(n_groups, s))
    return view
