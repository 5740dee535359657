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
    BadInput,
    Release,
    Role,
    grouping_columns,
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


def cell_release(table, frame, columns: Columns, blanks: str, *, groups=None, details=None, notes=()) -> Release:
    """The release of a cell-level method: ``frame`` as it is written, its blanks meaning ``blanks``."""
    published = tuple(c for c in columns.sensitive if c in frame.columns)
    return Release(
        GENERALISED_TABLE,
        frame,
        tuple(columns.quasi_identifiers),
        target=table.schema.target,
        sensitive=published,
        groups=None if groups is None else np.asarray(groups, dtype=np.int64),
        details=dict(details or {}),
        notes=tuple(notes),
        blanks=blanks,
    )


def group_summary(groups: np.ndarray) -> dict:
    sizes = np.bincount(groups)
    sizes = sizes[sizes > 0]
    return {
        "groups": int(len(sizes)),
        "smallest_group": int(sizes.min()) if len(sizes) else 0,
        "largest_group": int(sizes.max()) if len(sizes) else 0,
        "average_group_size": float(sizes.mean()) if len(sizes) else 0.0,
    }
