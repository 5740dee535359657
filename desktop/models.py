"""Qt item models over engine objects. They read lazily: nothing is copied into Qt."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QColor

from veil.engine import Role, Table

ROLE_COLOURS = {
    Role.IDENTIFIER: QColor("#f4c7c3"),
    Role.QUASI_IDENTIFIER: QColor("#fce8b2"),
    Role.SENSITIVE: QColor("#d7c6f2"),
    Role.TARGET: QColor("#b7e1cd"),
    Role.INSENSITIVE: None,
}


class TableModel(QAbstractTableModel):
    """A read-only view of a Table; cells are formatted only when Qt asks for them."""

    def __init__(self, table: Table | None = None, parent=None):
        super().__init__(parent)
        self._table = table
        self._columns: list[np.ndarray] = []
        if table is not None:
            self.set_table(table)

    def set_table(self, table: Table) -> None:
        self.beginResetModel()
        self._table = table
        self._columns = [table.frame[c].to_numpy() for c in table.columns]
        self.endResetModel()

    @property
    def table(self) -> Table | None:
        return self._table

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self._table is None else self._table.n_rows

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self._table is None else len(self._columns)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or self._table is None:
            return None
        if role == Qt.DisplayRole:
            value = self._columns[index.column()][index.row()]
            return "" if _missing(value) else str(value)
        if role == Qt.BackgroundRole:
            return ROLE_COLOURS[self._table.schema.columns[index.column()].role]
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if self._table is None:
            return None
        if orientation == Qt.Horizontal:
            col = self._table.schema.columns[section]
            if role == Qt.DisplayRole:
                return col.name
            if role == Qt.ToolTipRole:
                return f"{col.name}: {col.kind.value}, {col.role.value}"
            if role == Qt.BackgroundRole:
                return ROLE_COLOURS[col.role]
        elif role == Qt.DisplayRole:
            return str(section + 1)
        return None


def _missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
