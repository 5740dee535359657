"""The checked transformations of a solution space as a table to sort and filter: one row per node
(what the search knows of it, its loss, the second loss where measured, its suppressed records, its
height, then its level in each column). The model reads the engine's typed
:class:`~veil.engine.SolutionSpace` lazily, cell by cell; a proxy sorts by the numbers and filters by
status and by text."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt

from veil.engine import NodeStatus, SolutionSpace

SORT_ROLE = Qt.UserRole + 1  # the raw number a column sorts by
ALL = "all transformations"
SHOWN = {  # what the status filter offers: the statuses each choice keeps
    ALL: None,
    "solutions": {NodeStatus.SOLUTION},
    "not solutions": {NodeStatus.NOT_SOLUTION},
    "checked": {NodeStatus.SOLUTION, NodeStatus.NOT_SOLUTION},
    "not checked": {NodeStatus.NOT_CHECKED},
}


class SpaceTableModel(QAbstractTableModel):
    """The nodes of a solution space, one row each (row i is node i of the space)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.space: SolutionSpace | None = None
        self._optimum: int | None = None

    def set_space(self, space: SolutionSpace | None) -> None:
        self.beginResetModel()
        self.space = space
        self._optimum = space.index(space.optimum) if space is not None and space.optimum is not None else None
        self.endResetModel()

    def headers(self) -> list[str]:
        space = self.space
        if space is None:
            return []
        extra = [space.also_metric] if space.also is not None else []
        return ["status", space.metric, *extra, "suppressed records", "levels summed", *space.columns]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() or self.space is None else self.space.n_nodes

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.headers())

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role != Qt.DisplayRole:
            return None
        if orientation == Qt.Horizontal:
            headers = self.headers()
            return headers[section] if section < len(headers) else None
        return None

    def value(self, row: int, column: int):
        """The raw value of a cell (a number, or the status as a NodeStatus)."""
        space = self.space
        first = len(self.headers()) - len(space.columns)  # the columns' levels come last
        if column >= first:
            return int(space.levels[row, column - first])
        name = self.headers()[column]
        if name == "status":
            return NodeStatus(int(space.status[row]))
        if name == "suppressed records":
            return int(space.suppressed[row])
        if name == "levels summed":
            return int(space.levels[row].sum())
        return float(space.loss[row] if column == 1 else space.also[row])

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or self.space is None:
            return None
        value = self.value(index.row(), index.column())
        if role == SORT_ROLE:
            if isinstance(value, NodeStatus):
                return int(value)
            return -math.inf if isinstance(value, float) and math.isnan(value) else value
        if role == Qt.ToolTipRole:
            return self.space.describe(index.row())
        if role == Qt.TextAlignmentRole and not isinstance(value, NodeStatus):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.FontRole and index.row() == self._optimum:
            from PySide6.QtGui import QFont

            font = QFont()
            font.setBold(True)
            return font
        if role != Qt.DisplayRole:
            return None
        if isinstance(value, NodeStatus):
            return value.words + (" (the optimum)" if index.row() == self._optimum else "")
        if isinstance(value, float):
            return "" if math.isnan(value) else f"{value:.4g}"
        if self.headers()[index.column()] == "suppressed records" and value < 0:
            return ""
        return f"{value:,}"


class SpaceFilter(QSortFilterProxyModel):
    """Sorts by each column's number and keeps the rows of the chosen statuses whose text holds the
    filter text (e.g. "age 2" keeps the nodes with age at level 2)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.statuses: set | None = None
        self.text = ""

    def set_statuses(self, choice: str) -> None:
        self._refilter(lambda: setattr(self, "statuses", SHOWN[choice]))

    def set_text(self, text: str) -> None:
        self._refilter(lambda: setattr(self, "text", " ".join(text.lower().split())))

    def _refilter(self, change) -> None:
        """Apply ``change`` to what the filter keeps, telling the views (Qt 6.9's filter-change
        calls where they exist, else the older invalidation)."""
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()
            change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - Qt before 6.9
            change()
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent) -> bool:
        model: SpaceTableModel = self.sourceModel()
        space = model.space
        if space is None:
            return False
        if self.statuses is not None and NodeStatus(int(space.status[row])) not in self.statuses:
            return False
        if not self.text:
            return True
        words = " ".join(f"{c} {int(l)}" for c, l in zip(space.columns, space.levels[row]))
        return self.text in f"{words} {space.describe(row)}".lower()

    def source_row(self, proxy_row: int) -> int:
        return self.mapToSource(self.index(proxy_row, 0)).row()

    def proxy_row(self, source_row: int) -> int | None:
        index = self.mapFromSource(self.sourceModel().index(source_row, 0))
        return index.row() if index.isValid() else None


def nearest(xy: np.ndarray, x: float, y: float, within: float) -> int | None:
    """The index of the point of ``xy`` (display coordinates) nearest (x, y), if within ``within``."""
    if not len(xy):
        return None
    distance = np.hypot(xy[:, 0] - x, xy[:, 1] - y)
    i = int(np.argmin(distance))
    return i if distance[i] <= within else None
