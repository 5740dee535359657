"""Qt item models over the engine's objects and the panels' state. They read lazily: a view asks
for the cells it shows, and nothing is copied into Qt (no QStandardItemModel anywhere)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor

from veil.engine import FILE_LABELS, BadInput, BinaryMatrix, Kind, Role, Table

from .state import LEAVE_OUT, DatasetState, RunsState, rules_for

ROLE_COLOURS = {
    Role.IDENTIFIER: QColor("#f4c7c3"),
    Role.QUASI_IDENTIFIER: QColor("#fce8b2"),
    Role.SENSITIVE: QColor("#d7c6f2"),
    Role.TARGET: QColor("#b7e1cd"),
    Role.INSENSITIVE: None,
    Role.WEIGHT: QColor("#c6dafc"),
    Role.HOUSEHOLD: QColor("#f6c7e4"),
}
INK = QColor("#202124")  # text on a coloured cell stays dark under a dark theme too
HOLDS, FAILS = QColor("#d4edda"), QColor("#f8d7da")
_DISPLAY, _ALIGN, _BACKGROUND, _FOREGROUND = Qt.DisplayRole, Qt.TextAlignmentRole, Qt.BackgroundRole, Qt.ForegroundRole
_RIGHT, _LEFT = int(Qt.AlignRight | Qt.AlignVCenter), int(Qt.AlignLeft | Qt.AlignVCenter)
CHOICES = Qt.UserRole + 1  # the values an editable cell may take (for the combo-box delegate)
FRACTION = Qt.UserRole + 2  # a run's progress in [0, 1] (for the progress-bar delegate)


def format_value(value) -> str:
    """A cell as text: missing is empty, floats with six significant digits."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, np.datetime64):
        return "" if np.isnat(value) else str(pd.Timestamp(value))
    return str(value)


def _coloured(role: Qt.ItemDataRole, colour: QColor | None):
    if colour is None:
        return None
    if role == Qt.BackgroundRole:
        return colour
    if role == Qt.ForegroundRole:
        return INK
    return None


class TableModel(QAbstractTableModel):
    """A read-only view of a Table; a cell is formatted only when the view paints it."""

    def __init__(self, table: Table | None = None, parent=None):
        super().__init__(parent)
        self._table: Table | None = None
        self._columns: list[np.ndarray] = []
        self._numeric: list[bool] = []
        self._colours: list[QColor | None] = []
        if table is not None:
            self.set_table(table)

    @property
    def table(self) -> Table | None:
        return self._table

    def set_table(self, table: Table | None) -> None:
        """Show ``table``; a new schema over the same frame (roles, kinds) keeps the view's place."""
        if table is not None and self._table is not None and table.frame is self._table.frame:
            self._table = table
            self._style()
            self.headerDataChanged.emit(Qt.Horizontal, 0, len(self._columns) - 1)
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(self._columns) - 1))
            return
        self.beginResetModel()
        self._table = table
        self._columns = [] if table is None else [table.frame[c].to_numpy() for c in table.columns]
        self._style()
        self.endResetModel()

    def _style(self) -> None:
        cols = [] if self._table is None else self._table.schema.columns
        self._colours = [ROLE_COLOURS[c.role] for c in cols]
        self._numeric = [c.kind in (Kind.NUMERIC, Kind.BINARY) for c in cols]

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self._table is None else self._table.n_rows

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index, role=Qt.DisplayRole):
        # the hottest function of the desktop (a few calls per visible cell per paint): no work
        # for the roles it does not answer, and nothing computed twice
        if role == _DISPLAY:
            return format_value(self._columns[index.column()][index.row()])
        if role == _ALIGN:
            return _RIGHT if self._numeric[index.column()] else _LEFT
        if role == _BACKGROUND:
            return self._colours[index.column()]
        if role == _FOREGROUND:
            return INK if self._colours[index.column()] is not None else None
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if self._table is None:
            return None
        if orientation == Qt.Horizontal:
            if not 0 <= section < len(self._columns):
                return None
            col = self._table.schema.columns[section]
            if role == Qt.DisplayRole:
                return col.name
            if role == Qt.ToolTipRole:
                label = variable_label(self._table, col.name)
                return f"{col.name}{f' ({label})' if label else ''}: {col.kind.value}, {col.role.value}"
            return _coloured(role, self._colours[section])
        if role == Qt.DisplayRole:
            return str(section + 1)
        return None


class MatrixModel(QAbstractTableModel):
    """Set-valued data (a transaction BinaryMatrix or a SetValued): one row per record with its
    items (and its label), read from the sparse rows (never a dense records × items table)."""

    MAX_ITEMS = 30

    def __init__(self, matrix, parent=None):
        super().__init__(parent)
        self._matrix = matrix
        if isinstance(matrix, BinaryMatrix):  # column-wise: the rows once, O(items held)
            csr = matrix.to_sparse().tocsr()
            self._indptr, self._indices, self._names = csr.indptr, csr.indices, matrix.feature_names
        else:
            self._indptr, self._indices, self._names = matrix.indptr, matrix.indices, matrix.item_names

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self._matrix.n_rows

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else (2 if self._matrix.labels is not None else 1)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or role != Qt.DisplayRole:
            return None
        row = index.row()
        if index.column() == 1:
            return format_value(self._matrix.labels[row])
        items = self._indices[self._indptr[row] : self._indptr[row + 1]]
        text = ", ".join(self._names[j] for j in items[: self.MAX_ITEMS])
        return text + (f", … ({len(items)} items)" if len(items) > self.MAX_ITEMS else "")

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role != Qt.DisplayRole:
            return None
        if orientation == Qt.Horizontal:
            return ("items", "label")[section] if section < 2 else None
        return str(section + 1)


class ColumnsModel(QAbstractTableModel):
    """The schema: a row per column with its kind and role (both editable) and its counts."""

    HEADERS = ("column", "kind", "role", "distinct", "missing", "label")
    KIND, ROLE, LABEL = 1, 2, 5  # label: a labelled file's variable label ("Age at interview, years")
    problem = Signal(str)

    def __init__(self, dataset: DatasetState, parent=None):
        super().__init__(parent)
        self._dataset = dataset
        dataset.changed.connect(self._on_changed)

    def _on_changed(self, what: str) -> None:
        if what == "data":
            self.beginResetModel()
            self.endResetModel()
        elif what == "schema" and self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(self.HEADERS) - 1))

    def _columns(self):
        table = self._dataset.table
        return () if table is None else table.schema.columns

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._columns())

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        col = self._columns()[index.row()]
        stats = self._dataset.stats.get(col.name)
        c = index.column()
        if role in (Qt.DisplayRole, Qt.EditRole):
            return (
                col.name,
                col.kind.value,
                col.role.value,
                f"{stats.distinct:,}" if stats else "",
                f"{stats.missing:,}" if stats else "",
                variable_label(self._dataset.table, col.name),
            )[c]
        if role == CHOICES:
            return [k.value for k in Kind] if c == self.KIND else [r.value for r in Role] if c == self.ROLE else None
        if role == Qt.TextAlignmentRole and c in (3, 4):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role in (Qt.BackgroundRole, Qt.ForegroundRole) and c in (0, self.ROLE):
            return _coloured(role, ROLE_COLOURS[col.role])
        if role == Qt.ToolTipRole and c in (self.KIND, self.ROLE):
            return "Click to change"
        if c == 0 and col.hierarchy is not None and role in (Qt.DecorationRole, Qt.ToolTipRole):
            # which columns have a hierarchy, at a glance: a mark before the name (never elided)
            return (
                hierarchy_icon()
                if role == Qt.DecorationRole
                else f"{col.name}: {_hierarchy_words(col.hierarchy)} (right-click to see or replace it)"
            )
        if c == 0 and role == Qt.ToolTipRole:
            return f"{col.name}: no hierarchy attached; methods that generalise make one (right-click to build one)"
        return None

    def flags(self, index):
        base = super().flags(index)
        return base | Qt.ItemIsEditable if index.column() in (self.KIND, self.ROLE) else base

    def setData(self, index, value, role=Qt.EditRole):
        if role != Qt.EditRole or index.column() not in (self.KIND, self.ROLE):
            return False
        name = self._columns()[index.row()].name
        try:
            if index.column() == self.KIND:
                self._dataset.set_kind(name, value)
            else:
                self._dataset.set_roles([name], value)
        except (BadInput, ValueError) as exc:
            self.problem.emit(str(exc))
            return False
        return True

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.HEADERS[section]
        return None

    def name(self, row: int) -> str:
        return self._columns()[row].name


def variable_label(table, name: str) -> str:
    """A column's variable label from a labelled file (SPSS, Stata, SAS), "" without one."""
    entry = ((getattr(table, "meta", None) or {}).get(FILE_LABELS) or {}).get(name) or {}
    return entry.get("label") or ""


def has_variable_labels(table) -> bool:
    return any(e.get("label") for e in ((getattr(table, "meta", None) or {}).get(FILE_LABELS) or {}).values())


def _hierarchy_words(hierarchy) -> str:
    return f"a hierarchy of {hierarchy.height} level{'s' if hierarchy.height != 1 else ''} is attached"


def hierarchy_icon():
    """The mark of a column with a hierarchy attached: a small tree (the style's list-view icon)."""
    from PySide6.QtWidgets import QApplication, QStyle

    return QApplication.style().standardIcon(QStyle.SP_FileDialogListView)


class StepsModel(QAbstractTableModel):
    """The binarisation recipe: a row per column that can become features, its rule editable."""

    HEADERS = ("column", "rule", "bins", "cut points", "features")
    RULE, BINS, CUTS, COUNT = 1, 2, 3, 4
    problem = Signal(str)

    def __init__(self, dataset: DatasetState, parent=None):
        super().__init__(parent)
        self._dataset = dataset
        self._names: list[str] = []
        self._counts: dict[str, str] = {}
        dataset.changed.connect(self._on_changed)

    def _on_changed(self, what: str) -> None:
        names = self._dataset.binarisable()
        counts = {f.column: "error" if f.error else str(len(f.features)) for f in self._dataset.features()}
        if what != "data" and names == self._names:
            # the same rows: repaint them, so the view keeps its scroll position, selection and editor
            self._counts = counts
            if self.rowCount():
                self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(self.HEADERS) - 1))
            return
        self.beginResetModel()
        self._names, self._counts = names, counts
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._names)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        name, c = self._names[index.row()], index.column()
        step = self._dataset.step(name)
        kind = self._dataset.column(name).kind
        if role in (Qt.DisplayRole, Qt.EditRole):
            if c == 0:
                return name
            if c == self.RULE:
                return step.rule if step else LEAVE_OUT
            if c == self.BINS:
                return (step.bins or "") if step and step.rule in ("quantile", "equal-width") else ""
            if c == self.CUTS:
                return ", ".join(f"{x:g}" for x in step.cuts) if step and step.rule == "cuts" and step.cuts else ""
            return self._counts.get(name, "0") if step else "—"
        if role == CHOICES and c == self.RULE:
            return list(rules_for(kind))
        if role == Qt.ToolTipRole and c == 0:
            return f"{name}: {kind.value}"
        if role == Qt.TextAlignmentRole and c == self.COUNT:
            return _RIGHT
        if role == Qt.ForegroundRole and not step:
            return QColor("#888888")
        return None

    def flags(self, index):
        base = super().flags(index)
        if index.column() == self.RULE:
            return base | Qt.ItemIsEditable
        step = self._dataset.step(self._names[index.row()])
        if index.column() == self.BINS and step and step.rule in ("quantile", "equal-width"):
            return base | Qt.ItemIsEditable
        if index.column() == self.CUTS and step and step.rule == "cuts":
            return base | Qt.ItemIsEditable
        return base

    def setData(self, index, value, role=Qt.EditRole):
        if role != Qt.EditRole:
            return False
        name = self._names[index.row()]
        step = self._dataset.step(name)
        try:
            if index.column() == self.RULE:
                cuts = step.cuts if step and step.cuts else None
                if value == "cuts" and not cuts:
                    cuts = _default_cuts(self._dataset, name)
                self._dataset.set_rule(name, str(value), cuts=cuts)
            elif index.column() == self.BINS:
                self._dataset.set_rule(name, step.rule, bins=int(value))
            elif index.column() == self.CUTS:
                cuts = [float(x) for x in str(value).replace(";", ",").split(",") if x.strip()]
                self._dataset.set_rule(name, "cuts", cuts=sorted(cuts))
            else:
                return False
        except (BadInput, ValueError) as exc:
            self.problem.emit(str(exc))
            return False
        return True

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.HEADERS[section]
        return None


def _default_cuts(dataset: DatasetState, column: str) -> list[float]:
    """Three cut points at a quarter, half and three quarters of the range; whole numbers on a
    column of whole numbers (a cut at 38.5 years reads as a mistake)."""
    stats = dataset.stats.get(column)
    if stats and stats.minimum is not None and stats.maximum is not None and stats.maximum > stats.minimum:
        lo, hi = stats.minimum, stats.maximum
        cuts = [float(f"{lo + (hi - lo) * q:.3g}") for q in (0.25, 0.5, 0.75)]
        if _whole_numbers(dataset, column):
            cuts = [
                float(c) for c in dict.fromkeys(round(lo + (hi - lo) * q) for q in (0.25, 0.5, 0.75)) if lo < c <= hi
            ]
        return cuts or [float(hi)]
    return [0.5]


def _whole_numbers(dataset: DatasetState, column: str) -> bool:
    import numpy as np

    table = dataset.table
    if table is None or column not in table.columns:
        return False
    values = table.frame[column].dropna()
    try:
        x = values.to_numpy(dtype=float)
    except (TypeError, ValueError):
        return False
    return bool(len(x)) and bool(np.all(np.isfinite(x) & (x == np.round(x))))


class FeaturesModel(QAbstractTableModel):
    """The live preview of the recipe: every feature it makes, with how many rows have it."""

    HEADERS = ("feature", "from column", "rows with it", "share")

    def __init__(self, dataset: DatasetState, parent=None):
        super().__init__(parent)
        self._dataset = dataset
        self._rows: list[tuple[str, str, int | None, str]] = []
        self.errors: list[str] = []
        dataset.changed.connect(self._on_changed)

    def _on_changed(self, what: str = "") -> None:
        self.beginResetModel()
        n = getattr(self._dataset.data, "n_rows", 0) or 1
        self._rows, self.errors = [], []
        for group in self._dataset.features():
            if group.error:
                self.errors.append(group.error)
                self._rows.append((f"⚠ {group.error}", group.column, None, ""))
            for name, ones in group.features:
                self._rows.append((name, group.column, ones, f"{100 * ones / n:.1f} %"))
        self.endResetModel()

    @property
    def n_features(self) -> int:
        return sum(1 for r in self._rows if r[2] is not None)

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if role == Qt.DisplayRole:
            value = row[index.column()]
            return "" if value is None else f"{value:,}" if isinstance(value, int) else value
        if role == Qt.ForegroundRole and row[2] is None:
            return QColor("#b00020")
        if role == Qt.TextAlignmentRole and index.column() >= 2:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.HEADERS[section]
        return None


class RunsModel(QAbstractTableModel):
    """The queue: a row per run with its status, progress bar, elapsed time and a cancel cell."""

    HEADERS = ("run", "status", "progress", "elapsed", "")
    STATUS, PROGRESS, ELAPSED, CANCEL = 1, 2, 3, 4

    def __init__(self, runs: RunsState, parent=None):
        super().__init__(parent)
        self._runs = runs
        runs.changed.connect(self._on_changed)

    def _on_changed(self, entry) -> None:
        if entry is None:
            self.beginResetModel()
            self.endResetModel()
            return
        row = self._runs.entries.index(entry) if entry in self._runs.entries else -1
        if row >= 0:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))

    def tick(self) -> None:
        """Progress and elapsed time of running entries move on (a GUI timer calls this a few
        times a second: fewer repaints, and fewer calls into Python while a job holds the GIL)."""
        for row, e in enumerate(self._runs.entries):
            if e.status == "running":
                self.dataChanged.emit(self.index(row, self.STATUS), self.index(row, self.ELAPSED))

    def entry(self, row: int):
        return self._runs.entries[row]

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._runs.entries)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        e, c = self._runs.entries[index.row()], index.column()
        if role == Qt.DisplayRole:
            if c == 0:
                return f"#{e.id} {e.label}"
            if c == self.STATUS:
                return e.status_text()
            if c == self.PROGRESS:
                return f"{100 * e.fraction:.0f} %"
            if c == self.ELAPSED:
                s = e.elapsed()
                return "" if s is None else f"{s:.1f} s"
            return "" if e.finished else "✕ cancel"
        if role == FRACTION and c == self.PROGRESS:
            return e.fraction
        if role == Qt.ToolTipRole:
            if c == self.STATUS and e.failure is not None:
                return e.failure.message + "\n\nDouble-click for the details."
            if c == self.CANCEL and not e.finished:
                return "Cancel this run (Esc cancels all)"
            if c == self.STATUS and e.outcome is not None:
                return e.outcome.verdict
            if c == self.STATUS and e.status == "running" and e.message:
                return e.message  # the whole of a long progress line the column cuts
        if role == Qt.ForegroundRole and c == self.STATUS:
            if e.status == "failed" or (e.outcome is not None and e.outcome.holds is False):
                return QColor("#b00020")
            if e.status == "cancelled":
                return QColor("#777777")
        if role == Qt.ForegroundRole and c == self.CANCEL:
            return QColor("#b00020")
        if role == Qt.TextAlignmentRole and c == self.ELAPSED:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.HEADERS[section]
        return None


class ResultsModel(QAbstractTableModel):
    """One row per finished run: method, parameters, privacy verdict, metrics."""

    def __init__(self, runs: RunsState, parent=None):
        super().__init__(parent)
        self._runs = runs
        self._header: list[str] = []
        self._rows: list[list] = []
        runs.results_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        self.beginResetModel()
        self._header, self._rows = self._runs.table()
        self.endResetModel()

    @property
    def header(self) -> list[str]:
        return list(self._header)

    def run_id(self, row: int) -> int:
        return int(self._rows[row][0])

    def value(self, row: int, column: str):
        return self._rows[row][self._header.index(column)]

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._header)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        value, name = self._rows[index.row()][index.column()], self._header[index.column()]
        if role == Qt.DisplayRole:
            if name == "run":
                return f"#{value}"
            if name == "seconds":
                return "" if value is None or math.isnan(value) else f"{value:.2f}"
            if name == "verdict":
                return value.split(":")[0] if value else ""
            if isinstance(value, float):
                return "—" if math.isnan(value) else f"{value:.4g}"
            return format_value(value)
        if role == Qt.ToolTipRole and name == "verdict":
            return value
        if role == Qt.BackgroundRole and name == "verdict" and value:
            return HOLDS if value.startswith("holds") else FAILS if value.startswith("fails") else None
        if role == Qt.ForegroundRole and name == "verdict" and value and value.startswith(("holds", "fails")):
            return INK
        if role == Qt.TextAlignmentRole and isinstance(value, (int, float)) and name != "run":
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self._header[section]
        return None


class PluginsModel(QAbstractTableModel):
    """Every loaded plugin: kind, name, title, where it came from and its version."""

    HEADERS = ("kind", "name", "title", "source", "version")

    def __init__(self, registry, parent=None):
        super().__init__(parent)
        self._infos = registry.all()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._infos)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        info = self._infos[index.row()]
        if role == Qt.DisplayRole:
            return (
                info.cls.kind,
                info.cls.name,
                info.cls.title,
                "built-in" if info.builtin else info.source,
                info.version,
            )[index.column()]
        if role == Qt.ToolTipRole:
            return info.cls.description or info.cls.title
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.HEADERS[section]
        return None
