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
    group_ids,
    grouping_columns,
    is_suppressed,
    param,
)


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
