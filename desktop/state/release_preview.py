"""What the release preview shows, without Qt: one row per equivalence group of a release.

A generalised release gives each group's typed values (ranges, hierarchy nodes) from
``release.group_values``; a bucketised one its exact records grouped by the ``group`` column; any
other release with groups (or quasi-identifiers) its distinct written combinations; a set-valued
release each group's centre (the item set every member publishes) from its sparse centres. Rows are
sorted smallest group first, since the smallest groups are where a release is weakest. Where a
method changed cells one by one (``release.cell_changes``: local suppression's blanks,
microaggregation's aggregates), each shown cell carries the change of its group's records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import CELL_AGGREGATED, CELL_BLANKED, compatible_sizes, format_value, group_ids

SIZE = "records in group"
MATCHED = "records it matches"  # where a blank matches any value: the fewest records a member of the group matches
CENTRE_SIZE = "items in centre"
CENTRE = "centre (the items every member holds)"
MAX_CENTRE_ITEMS = 200  # a centre longer than this is shown by its first items and its length


@dataclass(frozen=True)
class GroupPreview:
    """Groups of a release, smallest first, with their size; None when a release has no groups."""

    rows: pd.DataFrame  # columns: SIZE, then the quasi-identifiers as written (CENTRE_SIZE, CENTRE for sets)
    n_groups: int
    n_records: int
    sets: bool = False  # a set-valued release: each row is a group's centre
    # per row and column of ``rows``: CELL_BLANKED where the method blanked the cell of some record of
    # the group, CELL_AGGREGATED where it replaced it by the group's aggregate, else 0; None: no such cells
    marks: np.ndarray | None = None

    def mark(self, row: int, column: int) -> int:
        return 0 if self.marks is None else int(self.marks[row, column])

    @property
    def matched(self) -> bool:
        """Whether a blank matches any value here: the rows then give the records each group's members match."""
        return MATCHED in self.rows.columns

    @property
    def fewest_matched(self) -> int:
        return int(self.rows[MATCHED].min()) if self.matched and len(self.rows) else 0

    def marked(self, code: int) -> int:
        """How many shown cells carry the change ``code``."""
        return 0 if self.marks is None else int((self.marks == code).sum())

    @property
    def largest(self) -> int:
        return int(self.rows[SIZE].max()) if len(self.rows) else 0

    @property
    def mean_centre(self) -> float:
        """Items each record publishes, on average (set-valued releases)."""
        if not self.sets or not self.n_records:
            return 0.0
        return float((self.rows[SIZE] * self.rows[CENTRE_SIZE]).sum() / self.n_records)

    @property
    def smallest(self) -> int:
        return int(self.rows[SIZE].min()) if len(self.rows) else 0

    @property
    def median(self) -> float:
        return float(self.rows[SIZE].median()) if len(self.rows) else 0.0

    def smallest_groups(self, count: int = 10) -> list[str]:
        """The ``count`` smallest groups in words: ``"12 records: age [20, 29], sex *"``."""
        return [self._words(row) for _, row in self.rows.head(count).iterrows()]

    def largest_groups(self, count: int = 10) -> list[str]:
        """The ``count`` largest groups in words, largest first."""
        return [self._words(row) for _, row in self.rows.tail(count).iloc[::-1].iterrows()]

    def _words(self, row) -> str:
        size = f"{int(row[SIZE]):,} record{'s' if row[SIZE] != 1 else ''}"
        if self.sets:
            n = int(row[CENTRE_SIZE])
            return (
                f"{size} publish {{{row[CENTRE]}}} ({n} item{'s' if n != 1 else ''})"
                if n
                else f"{size} publish the empty set (every item suppressed)"
            )
        values = ", ".join(f"{c} {row[c] if row[c] != '' else 'blank'}" for c in self.rows.columns if c != SIZE)
        return f"{size}: {values}"


def preview(release) -> GroupPreview | None:
    """The groups of ``release`` (None when it has neither groups nor quasi-identifiers)."""
    if release is None:
        return None
    if release.sets is not None and release.groups is not None:
        return _sets_preview(release)
    groups = release.groups
    qis = [c for c in release.quasi_identifiers if c in release.frame.columns]
    if groups is None:
        if not qis:
            return None
        groups = group_ids(release.frame[qis])
    groups = np.asarray(groups)
    sizes = np.bincount(groups)
    if release.group_values is not None:
        table = release.group_values.map(_shown)
    else:
        first = pd.Series(np.arange(len(groups))).groupby(groups).first().to_numpy()
        shown = qis if qis else []
        table = release.frame.iloc[first][shown].reset_index(drop=True).astype(str)
    table.insert(0, SIZE, sizes)  # first: the column a reader scans
    order = np.argsort(sizes, kind="stable")
    blanks = release.blank_codes() if hasattr(release, "blank_codes") else None
    if blanks is not None:  # a blank matches any value: a group's members match more records than it holds
        fewest = np.full(len(sizes), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(fewest, groups, compatible_sizes(blanks))
        table.insert(1, MATCHED, fewest)
        order = np.lexsort((sizes, fewest))  # the weakest first: the fewest records matched
    marks = _marks(release, groups, list(table.columns), len(sizes))
    return GroupPreview(
        table.iloc[order].reset_index(drop=True),
        int(len(sizes)),
        int(len(groups)),
        marks=None if marks is None else marks[order],
    )


def _marks(release, groups: np.ndarray, columns: list, n_groups: int) -> np.ndarray | None:
    """Per group and shown column, the change the method made to the cells of its records (a group
    holding a blanked cell shows it blanked; otherwise aggregated where one was)."""
    changes = getattr(release, "cell_changes", None) or {}
    if not any(np.any(v) for v in changes.values()):
        return None
    out = np.zeros((n_groups, len(columns)), dtype=np.int8)
    for j, name in enumerate(columns):
        change = changes.get(name)
        if change is None:
            continue
        change = np.asarray(change)
        for code in (CELL_AGGREGATED, CELL_BLANKED):  # blanked last: it wins
            held = np.bincount(groups[change == code], minlength=n_groups) > 0
            out[held, j] = code
    return out


def _shown(value) -> str:
    """A group's value as an exporter writes it; a blank as an empty cell."""
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else format_value(value)


def centre_text(names, items) -> str:
    """A centre's items by name, in the order of the data's items (the first MAX_CENTRE_ITEMS)."""
    shown = ", ".join(str(names[j]) for j in items[:MAX_CENTRE_ITEMS])
    return shown + (f", … ({len(items)} items)" if len(items) > MAX_CENTRE_ITEMS else "")


def _sets_preview(release) -> GroupPreview:
    """A set-valued release: one row per group with its size and centre, read from the sparse
    centres (one row per group), never from a records × items frame."""
    centres, groups = release.sets, np.asarray(release.groups)
    sizes = np.bincount(groups, minlength=centres.n_rows)
    names = centres.item_names
    texts = [centre_text(names, centres.row(g)) for g in range(centres.n_rows)]
    table = pd.DataFrame({SIZE: sizes, CENTRE_SIZE: centres.row_lengths(), CENTRE: texts})
    order = np.argsort(sizes, kind="stable")
    return GroupPreview(table.iloc[order].reset_index(drop=True), int(len(sizes)), int(len(groups)), sets=True)
