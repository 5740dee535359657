"""A column's generalisation hierarchy: shown as a tree, built by kind with a live preview of the
groups it makes on the data (ARX's hierarchy wizard is the reference users know).

The builder itself is the engine's :func:`~veil.engine.build_hierarchy`; this dialog only
collects its parameters, shows the tree and the groups at a chosen level, and hands the hierarchy to
the dataset state when accepted.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLineEdit, QPushButton, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem,
                               QTreeView, QVBoxLayout, QWidget)

from veil.engine import BadInput, Hierarchy, build_hierarchy, preview_groups

from .widgets import ErrorLabel, muted

KIND_WORDS = {"intervals": "Intervals of a width (numbers)", "quantiles": "Quantile intervals (numbers)",
              "masking": "Masking from the right (codes: HD4 → HD* → *)", "dates": "Day → month → year (dates)",
              "grouping": "Grouping chosen values", "arx-file": "ARX hierarchy file (CSV)"}
IN_USE = "in-use"  # the hierarchy methods use now (a release was generalised by it)
TREE_LIMIT = 2000  # nodes shown in the tree; a larger hierarchy is shown in part (its groups stay exact)


def tree_model(hierarchy: Hierarchy) -> QStandardItemModel:
    """The hierarchy as a tree: the root, its children, … down to the leaves (at most TREE_LIMIT nodes)."""
    model = QStandardItemModel()
    model.setHorizontalHeaderLabels(["Node", "Values under it"])
    shown = 0

    def add(parent_item, node):
        nonlocal shown
        for child in hierarchy.children(node):
            if shown >= TREE_LIMIT:
                return
            shown += 1
            item = QStandardItem(child.label)
            item.setEditable(False)
            count = QStandardItem(str(hierarchy.leaf_count(child)))
            count.setEditable(False)
            parent_item.appendRow([item, count])
            add(item, child)

    root = hierarchy.root
    top = QStandardItem(root.label)
    top.setEditable(False)
    total = QStandardItem(str(hierarchy.leaf_count(root)))
    total.setEditable(False)
    model.appendRow([top, total])
    add(top, root)
    return model


class HierarchyDialog(QDialog):
    """Build (or replace) the hierarchy of one column, previewing its groups as parameters change."""

    def __init__(self, table, column: str, parent=None, *, in_use: bool = False, folder: str = ""):
        super().__init__(parent)
        self.folder = folder  # where the file chooser starts (the data's folder, or the last file's)
        self.setWindowTitle(f"Hierarchy of {column}")
        self.values = table.frame[column]
        self.column = column
        self.hierarchy: Hierarchy | None = table.schema[column].hierarchy
        self.in_use = table.hierarchy(column)  # what methods generalise by: attached, else generated
        self.kind = QComboBox()
        self.kind.addItem("In use now (attached, or generated when none is)", IN_USE)
        for kind, words in KIND_WORDS.items():
            self.kind.addItem(words, kind)
        self.width = QSpinBox(minimum=1, maximum=10**9, value=10)
        self.bins = QSpinBox(minimum=2, maximum=100, value=4)
        self.groups = QLineEdit(placeholderText="Europe: FR, DE; Asia: JP")
        self.path = QLineEdit(placeholderText="an ARX hierarchy CSV")
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._browse)
        file_row = QWidget()
        fr = QHBoxLayout(file_row)
        fr.setContentsMargins(0, 0, 0, 0)
        fr.addWidget(self.path, 1)
        fr.addWidget(browse)
        self.level = QSpinBox(minimum=0, maximum=0)
        form = QFormLayout()
        form.addRow("Kind", self.kind)
        form.addRow("Width", self.width)
        form.addRow("Quantiles", self.bins)
        form.addRow("Groups", self.groups)
        form.addRow("File", file_row)
        form.addRow("Preview level", self.level)
        self.rows = {"width": self.width, "bins": self.bins, "groups": self.groups, "file": file_row}
        self.form = form
        self.tree = QTreeView()
        self.preview = QTableWidget(0, 2)
        self.preview.setHorizontalHeaderLabels(["Group", "Records"])
        self.problem = ErrorLabel()
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(self.preview)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(muted("The tree shows the hierarchy; the table the groups it makes of this column's "
                               "records at the preview level (0: the values themselves)."))
        layout.addWidget(split, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        for signal in (self.kind.currentIndexChanged, self.width.valueChanged, self.bins.valueChanged,
                       self.groups.textChanged, self.path.textChanged):
            signal.connect(self.rebuild)
        self.level.valueChanged.connect(self._show_groups)
        attached = table.schema[column].hierarchy is not None  # reopened on it: OK must not replace it
        self.kind.setCurrentIndex(self.kind.findData(IN_USE if in_use or attached else self._suggested_kind()))
        self.rebuild()

    def _suggested_kind(self) -> str:
        import pandas as pd

        if pd.api.types.is_numeric_dtype(self.values):
            return "intervals"
        if pd.api.types.is_datetime64_any_dtype(self.values):
            return "dates"
        return "masking"

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "ARX hierarchy", self.path.text() or self.folder,
                                              "CSV (*.csv);;All files (*)")
        if path:
            self.path.setText(path)

    def rebuild(self) -> None:
        """Build the hierarchy from the fields; show its tree and groups, or say what is wrong."""
        kind = self.kind.currentData()
        for key, widget in self.rows.items():
            wanted = {"width": "intervals", "bins": "quantiles", "groups": "grouping", "file": "arx-file"}[key]
            widget.setVisible(kind == wanted)
            self.form.labelForField(widget).setVisible(kind == wanted)
        try:
            if kind == IN_USE:
                self.hierarchy = self.in_use
            else:
                self.hierarchy = build_hierarchy(kind, self.values, name=self.column, width=self.width.value(),
                                                 bins=self.bins.value(), groups=self.groups.text(),
                                                 path=self.path.text() or None)
            self.hierarchy.check_values(self.values)  # every value must be a leaf (BadInput names one)
        except BadInput as exc:
            self.hierarchy = None
            self.problem.show_message(str(exc))
            self.buttons.button(QDialogButtonBox.Ok).setEnabled(False)
            self.tree.setModel(QStandardItemModel())
            self.preview.setRowCount(0)
            return
        self.problem.show_message("")
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(True)
        self.tree.setModel(tree_model(self.hierarchy))
        self.tree.expandToDepth(0)
        self.level.setMaximum(self.hierarchy.height)
        self.level.setValue(min(max(self.level.value(), 1), self.hierarchy.height))
        self._show_groups()

    def _show_groups(self) -> None:
        if self.hierarchy is None:
            return
        groups = preview_groups(self.hierarchy, self.values, self.level.value())
        self.preview.setRowCount(len(groups))
        for i, (label, n) in enumerate(zip(groups["group"], groups["records"])):
            self.preview.setItem(i, 0, QTableWidgetItem(str(label)))
            self.preview.setItem(i, 1, QTableWidgetItem(str(int(n))))
