"""A privacy model judged on every combination of a few quasi-identifiers, one combination at a
time (docs/models.md#k-anonymity-on-every-m-quasi-identifiers): the guarantee against an intruder
who knows at most m of the quasi-identifiers, which sdcMicro's ``kAnon(…, combs = m)`` makes.

On each combination the release's groups are the records compatible on those columns under the
release's rule on blanks (engine/model/blanks.py). A record blank in every column of the combination
matches any value there and counts in every group; only a record suppressed throughout (blank in
every quasi-identifier) joins no other record's group, as on all of them together. So a release
k-anonymous on all the quasi-identifiers is k-anonymous on every combination, and a blank never
takes a record out of a group. (sdcMicro's ``freqCalc`` on the combination's keys leaves a record
blank in all of them out of the other groups instead.) A record's value is its worst over the
combinations, and it fails where any combination fails it.
"""

from __future__ import annotations

import dataclasses
import itertools
import numpy as np

from ..base.errors import BadInput
from .blanks import OWN_VALUE, blank_codes, blank_view
from .survey_risk import combinations_count

MAX_COMBINATIONS = 20_000  # judged one after another; more would take minutes on a large table


def combinations_of(columns: int, size: int) -> list[tuple[int, ...]]:
    """Every combination of at most ``size`` of ``columns`` column indices, the largest first (all of
    them together when ``size`` reaches ``columns``)."""
    size = min(size, columns)
    count = combinations_count(columns, size)
    if count > MAX_COMBINATIONS:
        raise BadInput(
            f"every combination of at most {size} of {columns} quasi-identifiers is {count:,} combinations to "
            f"judge, more than {MAX_COMBINATIONS:,}: choose a smaller number of combined columns"
        )
    return [c for m in range(size, 0, -1) for c in itertools.combinations(range(columns), m)]


def combination_codes(codes: np.ndarray, combination) -> np.ndarray:
    """The codes (n × m, −1 matching any value) on a combination of the columns, as its groups are
    counted: with one more column, −1 for the records blank in every column (suppressed: they join no
    other group) and 0 for the rest, when the combination leaves a column out — so that a record
    blank throughout the combination alone still counts in every group."""
    combination = list(combination)
    if len(combination) == codes.shape[1]:
        return codes[:, combination]
    suppressed = (codes < 0).all(axis=1)
    return np.column_stack([codes[:, combination], np.where(suppressed, -1, 0)])


def check_combinations(model, params, release, size: int):
    """The model's :class:`~veil.engine.Verdict` on every combination of at most ``size`` of the
    release's quasi-identifiers, each judged by ``model.check_groups`` on its own."""
    from .groups import GroupVerdict, view_of_frame
    from .release import verdict_from_groups

    qis = list(release.quasi_identifiers)
    frame = release.frame
    codes = blank_codes(frame, qis, release.blanks or OWN_VALUE)
    base = view_of_frame(frame, [], None, groups=np.zeros(len(frame), dtype=np.int64))
    higher = model.higher_is_safer
    values = ok = worst_columns = None
    worst = None
    for combination in combinations_of(len(qis), size):
        view = blank_view(combination_codes(codes, combination), base)
        gv = model.check_groups(view, params)
        per_record = view.per_record(gv.values)
        passing = view.per_record(gv.ok)
        if values is None:
            values, ok = per_record.copy(), passing.copy()
        else:
            values = np.minimum(values, per_record) if higher else np.maximum(values, per_record)
            ok &= passing
        if len(gv.values) and (worst is None or (gv.worst < worst if higher else gv.worst > worst)):
            worst, worst_columns = gv.worst, combination
    everyone = view_of_frame(frame, [], None, groups=np.arange(len(frame), dtype=np.int64))
    verdict = verdict_from_groups(model, params, everyone, GroupVerdict(values, ok, higher_is_safer=higher))
    if worst_columns is not None and len(qis) > 1:
        names = " + ".join(qis[j] for j in worst_columns)
        verdict = dataclasses.replace(verdict, message=f"{verdict.message}; the least safe combination: {names}")
    return verdict
