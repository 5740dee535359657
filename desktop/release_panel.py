"""The release preview: the selected run's groups before export, smallest first, sizes coloured, and
the cells a method blanked or aggregated tinted, with a legend."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from veil.engine import CELL_AGGREGATED, CELL_BLANKED

from .state.release_preview import MATCHED, SIZE, GroupPreview, preview
from .widgets import fast_table

SMALL, MIDDLE, LARGE = QColor("#f4c7c3"), QColor("#fce8b2"), QColor("#b7e1cd")
# the cells a method changed one by one: what each tint means, in the legend and the cell's tooltip
CHANGED = {
    CELL_BLANKED: (QColor("#c9daf8"), "blanked by the method (matches any value)"),
    CELL_AGGREGATED: (QColor("#d9d2e9"), "replaced by its group's aggregate (the range shown is the original values')"),
}


def size_colour(size: int, smallest: int, median: float) -> QColor:
    """Red for groups near the smallest, amber up to the median, green above it."""
    if size <= max(smallest * 1.5, smallest + 1):
        return SMALL
    return MIDDLE if size <= median else LARGE


class GroupsModel(QAbstractTableModel):
    """A GroupPreview's rows, read lazily (a release of 100,000 groups formats only what is shown)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.preview: GroupPreview | None = None

    def set_preview(self, value: GroupPreview | None) -> None:
        self.beginResetModel()
        self.preview = value
        if value is not None:  # plain arrays: data() is called for every visible cell on every repaint
            self._text = value.rows.drop(columns=[SIZE]).astype(str).to_numpy(dtype=object)
            self._sizes = value.rows[SIZE].to_numpy()
            self._smallest, self._median = value.smallest, value.median
            self._size_column = list(value.rows.columns).index(SIZE)
            self._numeric = [value.rows[c].dtype.kind in "iuf" for c in value.rows.columns]  # right-aligned
            columns = list(value.rows.columns)
            self._matched_column = columns.index(MATCHED) if MATCHED in columns else -1
            if self._matched_column >= 0:
                matched = value.rows[MATCHED]
                self._matched, self._fewest, self._matched_median = (
                    matched.to_numpy(),
                    int(matched.min()),
                    float(matched.median()),
                )
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self.preview is None else len(self.preview.rows)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self.preview is None else self.preview.rows.shape[1]

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role != Qt.DisplayRole or self.preview is None:
            return None
        if orientation == Qt.Horizontal:
            return str(self.preview.rows.columns[section])
        return str(section + 1)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or self.preview is None:
            return None
        row, column = index.row(), index.column()
        if column == self._matched_column and role == Qt.BackgroundRole:
            return size_colour(int(self._matched[row]), self._fewest, self._matched_median)
        if column != self._size_column:
            if role == Qt.TextAlignmentRole and self._numeric[column]:
                return int(Qt.AlignRight | Qt.AlignVCenter)
            if role in (Qt.BackgroundRole, Qt.ToolTipRole):
                change = CHANGED.get(self.preview.mark(row, column))
                if change is None:
                    return None
                return change[0] if role == Qt.BackgroundRole else f"Some records of this group: {change[1]}"
            text = self._text[row, column - 1 if column > self._size_column else column]
            return str(text) if role == Qt.DisplayRole else None
        size = int(self._sizes[row])
        if role == Qt.DisplayRole:
            return f"{size:,}"
        if role == Qt.BackgroundRole and self._matched_column < 0:  # else the records matched are coloured
            return size_colour(size, self._smallest, self._median)
        if role == Qt.TextAlignmentRole:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None


class ReleasePanel(QWidget):
    """Shows one run's release as groups: the generalised values, each group's size, the smallest,
    and each quasi-identifier's hierarchy at hand (a column header's double-click, or the chooser)."""

    hierarchy_requested = Signal(str)  # a quasi-identifier whose hierarchy the user wants to see

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = QLabel("Select a finished run to preview its release.")
        self.summary.setWordWrap(True)
        self.legend = QLabel()  # what the tints of changed cells mean; hidden when none is shown
        self.legend.setTextFormat(Qt.RichText)
        self.legend.setWordWrap(True)
        self.legend.hide()
        self.model = GroupsModel(self)
        self.table = fast_table(QTableView())
        self.table.setModel(self.model)
        self.smallest = QListWidget()
        self.smallest.setToolTip("The smallest groups: where the release is weakest")
        self.largest = QListWidget()
        self.largest.setToolTip("The largest groups: where the release generalises (or suppresses) most")
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.table)
        ends = QSplitter(Qt.Horizontal)
        for title, widget in (("Smallest groups", self.smallest), ("Largest groups", self.largest)):
            box = QWidget()
            inner = QVBoxLayout(box)
            inner.setContentsMargins(0, 0, 0, 0)
            inner.addWidget(QLabel(title))
            inner.addWidget(widget)
            ends.addWidget(box)
        split.addWidget(ends)
        split.setSizes([500, 160])
        self.hierarchy_column = QComboBox()
        self.hierarchy_column.setToolTip("A quasi-identifier of this release")
        self.hierarchy_button = QPushButton("Show hierarchy…")
        self.hierarchy_button.setToolTip(
            "Open the generalisation hierarchy of the chosen quasi-identifier: the nodes its values were generalised to"
        )
        self.hierarchy_button.clicked.connect(self._request_hierarchy)
        self.table.horizontalHeader().sectionDoubleClicked.connect(self._header_double_clicked)
        self.hierarchy_row = QWidget()  # shown only for a release with generalised quasi-identifiers
        hierarchies = QHBoxLayout(self.hierarchy_row)
        hierarchies.setContentsMargins(0, 0, 0, 0)
        hierarchies.addWidget(QLabel("Hierarchy of"))
        hierarchies.addWidget(self.hierarchy_column)
        hierarchies.addWidget(self.hierarchy_button)
        hierarchies.addStretch(1)
        self._set_columns([])
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.legend)
        layout.addWidget(self.hierarchy_row)
        layout.addWidget(split)

    def _set_columns(self, columns: list[str]) -> None:
        self.hierarchy_column.clear()
        self.hierarchy_column.addItems(columns)
        self.hierarchy_column.setEnabled(bool(columns))
        self.hierarchy_button.setEnabled(bool(columns))
        self.hierarchy_row.setHidden(not columns)  # nothing to choose (item sets, chosen features): no empty control

    def _request_hierarchy(self) -> None:
        if self.hierarchy_column.currentText():
            self.hierarchy_requested.emit(self.hierarchy_column.currentText())

    def _header_double_clicked(self, section: int) -> None:
        if self.model.preview is None:
            return
        column = str(self.model.preview.rows.columns[section])
        if self.hierarchy_column.findText(column) >= 0:
            self.hierarchy_requested.emit(column)

    def clear(self) -> None:
        """Show no release (other data was opened: the runs previewed here are gone)."""
        self.model.set_preview(None)
        self.smallest.clear()
        self.largest.clear()
        self._set_columns([])
        self.legend.hide()
        self.summary.setText("Select a finished run to preview its release.")

    def show_absent(self, text: str) -> None:
        """Show no release, saying why (the selected run has none)."""
        self.clear()
        self.summary.setText(text)

    def show_release(self, label: str, release, columns=None) -> None:
        """Preview ``release``; ``columns`` (the data's columns) limits the hierarchy chooser to
        quasi-identifiers the data has (a bucketised release's ``group`` column has no hierarchy)."""
        shown = preview(release)
        self.model.set_preview(shown)
        self.smallest.clear()
        self.largest.clear()
        self.legend.hide()
        qis = [] if shown is None else [str(c) for c in shown.rows.columns if c != SIZE]
        self._set_columns([c for c in qis if columns is None or c in columns])
        if shown is None:
            self.summary.setText(f"{label}: this release has no groups of records to preview.")
            return
        centres = (
            f" Each record publishes its group's centre, the items every member holds: "
            f"{shown.mean_centre:.2f} items a record on average."
            if shown.sets
            else ""
        )
        matched = (
            f" A blank matches any value, so a record is counted in every group it could join: each "
            f"matches at least {shown.fewest_matched:,} records on all the quasi-identifiers together ('{MATCHED}', "
            f"coloured; the weakest first)."
            if shown.matched
            else ""
        )
        self.summary.setText(
            f"{label}: {shown.n_records:,} records in {shown.n_groups:,} groups; smallest group "
            f"{shown.smallest:,}, median {shown.median:,.0f}, largest {shown.largest:,}.{centres}{matched} "
            f"Red: groups near the smallest; green: above the median."
        )
        self.smallest.addItems(shown.smallest_groups(10))
        self.largest.addItems(shown.largest_groups(10))
        self._set_legend(shown)

    def _set_legend(self, shown: GroupPreview) -> None:
        """A swatch and its meaning for each change some shown cell carries."""
        parts = []
        for code, (colour, words) in CHANGED.items():
            count = shown.marked(code)
            if count:
                swatch = f'<span style="background-color:{colour.name()}">&nbsp;&nbsp;&nbsp;&nbsp;</span>'
                parts.append(f"{swatch} {words}: {count:,} group cell{'s' if count != 1 else ''}")
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(parts))
        self.legend.setVisible(bool(parts))
