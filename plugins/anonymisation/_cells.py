"""What the cell-level methods share (microaggregation, local suppression, local recoding): the
columns they work on and the release they make, whose blank or suppressed cells mean what the run's
rule on blanks says (docs/reference.md#blanks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    BLANK_RULES,
    GENERALISED_TABLE,
    SUPPRESSED,
    BadInput,
    Release,
    Role,
    blank_codes,
    blank_view,
    combination_codes,
    combinations_of,
    group_ids,
    grouping_columns,
    is_suppressed,
    param,
    view_of_frame,
)

SUPPRESSED_MARK = "*"  # how a suppressed cell is written (engine/model/blanks.py)


def blanks_param():
    return param(
        ANY_VALUE,
        choices=BLANK_RULES,
        help="what a blank quasi-identifier means when groups are counted: any-value (it matches any value, "
        "sdcMicro's rule) or own-value (a value of its own); a cell the method blanks always matches any value",
    )


@dataclass(frozen=True)
class Columns:
    """The quasi-identifiers a method works on and every sensitive column."""

    quasi_identifiers: list[str]
    sensitive: list[str]

    @classmethod
    def of(cls, table, what: str) -> Columns:
        sensitive = table.schema.by_role(Role.SENSITIVE)
        qis = [c for c in grouping_columns(table) if c not in sensitive]
        if not qis:
            raise BadInput(f"{what} needs quasi-identifiers: mark the columns that identify people")
        return cls(qis, sensitive)


def released_frame(table) -> pd.DataFrame:
    """A copy of every column but the identifiers, in the table's order."""
    return table.frame[table.released_columns()].reset_index(drop=True).copy()


def written_groups(frame: pd.DataFrame, qis: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """(each record's group of equal written quasi-identifiers, each group's typed values): ``*`` is
    :data:`SUPPRESSED`, a blank stays blank (the metrics charge it as suppressed under the any-value
    rule), any other value itself."""
    groups = group_ids(frame[qis])
    first = np.full(int(groups.max()) + 1 if len(groups) else 0, -1, dtype=np.int64)
    first[groups[::-1]] = np.arange(len(groups))[::-1]
    values = frame.iloc[first][qis].reset_index(drop=True)
    for c in qis:
        out = values[c].astype(object)
        values[c] = out.where(~is_suppressed(out), SUPPRESSED).where(out.notna(), None)
    return groups, values


def cell_release(
    table,
    frame,
    columns: Columns,
    blanks: str,
    *,
    groups=None,
    group_values=None,
    details=None,
    notes=(),
    cell_changes=None,
) -> Release:
    """The release of a cell-level method: ``frame`` as it is written, its blanks meaning ``blanks``;
    without ``groups``, the records equal on the written quasi-identifiers, each group's values typed;
    ``cell_changes``: per column, each record's change (:data:`CELL_BLANKED`, …), for the preview."""
    published = tuple(c for c in columns.sensitive if c in frame.columns)
    if groups is None:
        groups, group_values = written_groups(frame, columns.quasi_identifiers)
    return Release(
        GENERALISED_TABLE,
        frame,
        tuple(columns.quasi_identifiers),
        target=table.schema.target,
        sensitive=published,
        groups=np.asarray(groups, dtype=np.int64),
        group_values=group_values,
        details=dict(details or {}),
        notes=tuple(notes),
        blanks=blanks,
        cell_changes=dict(cell_changes or {}),
    )


def changed_cells(before: pd.Series, after: pd.Series, code: int) -> np.ndarray:
    """Each record's ``code`` where its cell differs from before (a blank equal only to a blank), else 0."""
    equal = before.eq(after).to_numpy(dtype=bool, na_value=False)  # a nullable column's blank compares as <NA>
    same = equal | (before.isna() & after.isna()).to_numpy(dtype=bool)
    return np.where(same, 0, code).astype(np.int8)


def group_summary(groups: np.ndarray) -> dict:
    sizes = np.bincount(groups)
    sizes = sizes[sizes > 0]
    return {
        "groups": int(len(sizes)),
        "smallest_group": int(sizes.min()) if len(sizes) else 0,
        "largest_group": int(sizes.max()) if len(sizes) else 0,
        "average_group_size": float(sizes.mean()) if len(sizes) else 0.0,
    }


class Judge:
    """The run's models judged on codes directly (the any-value view of each sensitive column), the
    way the engine judges the release: what local suppression asks after every change, and what
    :func:`suppress_failing` asks of a release with blanks."""

    def __init__(self, frame: pd.DataFrame, columns: Columns, model, keys: list[str], survey=None):
        self.model = model
        self.qis = [keys.index(c) for c in columns.quasi_identifiers]
        everyone = np.zeros(len(frame), dtype=np.int64)
        sensitive = [c for c in columns.sensitive if c in frame.columns] or [None]
        # ``survey``: each record's survey weight when a model reads them (each pattern's Fk then sums
        # the weights of every compatible record, as sdcMicro's freqCalc does)
        self.bases = {c: view_of_frame(frame, [], c, groups=everyone).with_survey(survey) for c in sensitive}

    def failing(self, codes: np.ndarray) -> np.ndarray | None:
        """The records of the failing groups of the first model that fails (fewest compatible records
        first), or None when every model holds."""
        found = self.failing_on(codes)
        return None if found is None else found[0]

    def failing_on(self, codes: np.ndarray) -> tuple[np.ndarray, list[int]] | None:
        """(the records :meth:`failing` gives, the key columns they fail on): every quasi-identifier,
        or the combination a model judging combinations of them finds failing first."""
        qi_codes = codes[:, self.qis]
        for bound in self.model.models:
            columns = list(self.bases) if bound.plugin.needs_sensitive else list(self.bases)[:1]
            for combination in self.combinations(bound):
                judged = combination_codes(qi_codes, combination)
                for column in columns:
                    view = blank_view(judged, self.bases[column])
                    bad = bound.check_groups(view).failing_groups
                    if len(bad):
                        bad = bad[np.argsort(view.sizes[bad], kind="stable")]
                        return np.flatnonzero(np.isin(view.groups, bad)), [self.qis[j] for j in combination]
        return None

    def combinations(self, bound) -> list[tuple[int, ...]]:
        """The quasi-identifiers (their positions) the model judges together: all of them, or each
        combination of at most m of them (engine/model/combinations.py), the largest first."""
        size = bound.combined_columns
        if size is None or size >= len(self.qis):
            return [tuple(range(len(self.qis)))]
        return combinations_of(len(self.qis), size)


def suppress_failing(frame: pd.DataFrame, columns: Columns, model, survey, check) -> np.ndarray:
    """The records to write ``*`` in every quasi-identifier so that ``frame`` (a release whose blank
    quasi-identifiers match any value) meets ``model``: the records of the groups failing it, again
    and again until none fails, as global recoding suppresses under the any-value rule
    (docs/reference.md#blanks). A record suppressed throughout joins no other record's group, and
    its own group is the whole table."""
    qis = columns.quasi_identifiers
    judge = Judge(frame, columns, model, qis, survey)
    codes = blank_codes(frame, qis, ANY_VALUE)
    out = np.zeros(len(frame), dtype=bool)
    while True:
        check()
        bad = judge.failing(codes)
        if bad is None:
            return out
        new = bad[~out[bad]]
        if not len(new):  # only the suppressed records fail: their group is the whole table
            raise BadInput(
                f"the whole table fails {model.name}: no release of it can satisfy the model; relax its parameters"
            )
        codes[new] = -1
        out[new] = True


def suppressed_throughout(frame: pd.DataFrame, qis, where: np.ndarray) -> pd.DataFrame:
    """``frame`` with the records ``where`` written ``*`` in every one of ``qis``."""
    out = frame.copy()
    for name in qis:
        s = out[name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            if SUPPRESSED_MARK not in s.cat.categories:
                s = s.cat.add_categories([SUPPRESSED_MARK])
        else:
            s = s.astype(object)
        s = s.copy()
        s[where] = SUPPRESSED_MARK
        out[name] = s
    return out
