"""What the release preview shows, without Qt: one row per equivalence group of a release.

A generalised release gives each group's typed values (ranges, hierarchy nodes) from
``release.group_values``; a bucketised one its exact records grouped by the ``group`` column; any
other release with groups (or quasi-identifiers) its distinct written combinations. Rows are
sorted smallest group first, since the smallest groups are where a release is weakest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import format_value, group_ids

SIZE = "records in group"


@dataclass(frozen=True)
class GroupPreview:
    """Groups of a release, smallest first, with their size; None when a release has no groups."""

    rows: pd.DataFrame  # columns: SIZE, then the quasi-identifiers as written
    n_groups: int
    n_records: int

    @property
    def smallest(self) -> int:
        return int(self.rows[SIZE].iloc[0]) if len(self.rows) else 0

    @property
    def median(self) -> float:
        return float(self.rows[SIZE].median()) if len(self.rows) else 0.0

    def smallest_groups(self, count: int = 10) -> list[str]:
        """The ``count`` smallest groups in words: ``"12 records: age [20, 29], sex *"``."""
        qis = [c for c in self.rows.columns if c != SIZE]
        out = []
        for _, row in self.rows.head(count).iterrows():
            values = ", ".join(f"{c} {row[c]}" for c in qis)
            out.append(f"{int(row[SIZE])} record{'s' if row[SIZE] != 1 else ''}: {values}")
        return out


def preview(release) -> GroupPreview | None:
    """The groups of ``release`` (None when it has neither groups nor quasi-identifiers)."""
    if release is None:
        return None
    groups = release.groups
    qis = [c for c in release.quasi_identifiers if c in release.frame.columns]
    if groups is None:
        if not qis:
            return None
        groups = group_ids(release.frame[qis])
    groups = np.asarray(groups)
    sizes = np.bincount(groups)
    if release.group_values is not None:
        table = release.group_values.map(format_value)
    else:
        first = pd.Series(np.arange(len(groups))).groupby(groups).first().to_numpy()
        shown = qis if qis else []
        table = release.frame.iloc[first][shown].reset_index(drop=True).astype(str)
    table.insert(0, SIZE, sizes)  # first: the column a reader scans
    order = np.argsort(sizes, kind="stable")
    return GroupPreview(table.iloc[order].reset_index(drop=True), int(len(sizes)), int(len(groups)))
