"""Hierarchies loaded from a folder at once: ARX's files (``*_hierarchy_<column>.csv``) and plain
``<column>.csv`` matched to the table's columns by name and each read and tried on its column's
values (the engine's :func:`~veil.engine.read_hierarchy_folder`, as ``veil run --hierarchies``
does), shown with what was matched before any is attached."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from veil.engine import FolderHierarchies, Hierarchy


class HierarchyFolderDialog(QDialog):
    """What a folder's files match, a row per column (ticked when it can be attached); Attach
    attaches the ticked ones."""

    COLUMNS = ("Column", "File", "Levels", "")

    def __init__(self, found: FolderHierarchies, parent=None):
        super().__init__(parent)
        rows, match = list(found.rows), found.match
        self.setWindowTitle(f"Hierarchies in {match.folder.name}")
        self.setSizeGripEnabled(True)
        self.rows = rows
        usable = sum(r.hierarchy is not None for r in rows)
        intro = QLabel(
            f"{len(rows)} of the files in {match.folder} name a column of the data"
            + (f"; {usable} can be attached" if usable != len(rows) else "")
            + ". Untick any you do not want."
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(len(rows), len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        for i, row in enumerate(rows):
            name = QTableWidgetItem(row.column)
            name.setFlags(Qt.ItemIsUserCheckable | (Qt.ItemIsEnabled if row.hierarchy is not None else Qt.NoItemFlags))
            name.setCheckState(Qt.Checked if row.hierarchy is not None else Qt.Unchecked)
            self.table.setItem(i, 0, name)
            self.table.setItem(i, 1, QTableWidgetItem(row.path.name))
            self.table.setItem(i, 2, QTableWidgetItem(row.levels))
            status = QTableWidgetItem(row.problem or "ready")
            status.setToolTip(row.problem or f"{row.column} ← {row.path}")
            self.table.setItem(i, 3, status)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        others = [f"{c}: also {', '.join(p.name for p in ps)} (not used)" for c, ps in match.passed_over.items()]
        if match.unmatched:
            others.append(f"No column for {', '.join(p.name for p in match.unmatched)}.")
        self.others = QLabel("\n".join(others))
        self.others.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Attach")
        buttons.button(QDialogButtonBox.Ok).setEnabled(usable > 0)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.others)
        layout.addWidget(buttons)
        self.resize(760, 420)

    def chosen(self) -> dict[str, Hierarchy]:
        """The ticked columns' hierarchies."""
        return {
            row.column: row.hierarchy
            for i, row in enumerate(self.rows)
            if row.hierarchy is not None and self.table.item(i, 0).checkState() == Qt.Checked
        }
