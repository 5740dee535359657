"""A column's generalisation hierarchy: shown as a tree, built by kind with a live preview of the
groups it makes on the data (ARX's hierarchy wizard is the reference users know).

The builder itself is the engine's :func:`~veil.engine.build_hierarchy`; this dialog only
collects its parameters, shows the tree and the groups at a chosen level, and hands the hierarchy to
the dataset state when accepted.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from veil.engine import BadInput, Hierarchy, build_hierarchy, preview_groups, write_atomic

from .widgets import ErrorLabel, muted

KIND_WORDS = {
    "intervals": "Intervals of a width (numbers)",
    "quantiles": "Quantile intervals (numbers)",
    "masking": "Masking from the right (codes: HD4 → HD* → *)",
    "dates": "Day → month → year (dates)",
    "grouping": "Grouping chosen values",
    "arx-file": "ARX hierarchy file (CSV)",
}
IN_USE = "in-use"  # the hierarchy methods use now (a release was generalised by it)
TREE_LIMIT = 2000  # nodes shown in the tree; a larger hierarchy is shown in part (its groups stay exact)
EXPAND_LIMIT = 300  # a tree of at most this many nodes opens fully expanded; a larger one, its top levels


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
        self.width = QLineEdit("10")
        self.fanout = QSpinBox(minimum=2, maximum=100, value=2)
        self.start = QLineEdit(placeholderText="the bottom coding, else 0")
        self.bottom = QLineEdit(placeholderText="none")
        self.top = QLineEdit(placeholderText="none")
        for field, tip in (
            (self.width, "the width of the first level's intervals"),
            (self.fanout, "how many neighbouring intervals each level merges"),
            (self.start, "where the intervals start (an edge of every level)"),
            (self.bottom, "bottom coding: every value below this is one group, <value"),
            (self.top, "top coding: every value at or above this is one group, >=value"),
        ):
            field.setToolTip(tip)
        self.bins = QSpinBox(minimum=2, maximum=100, value=4)
        self.groups = QLineEdit(placeholderText="Europe: FR, DE; Asia: JP (none yet: each value under * alone)")
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
        form.addRow("Fan-out", self.fanout)
        form.addRow("Start", self.start)
        form.addRow("Bottom coding", self.bottom)
        form.addRow("Top coding", self.top)
        form.addRow("Quantiles", self.bins)
        form.addRow("Groups", self.groups)
        form.addRow("File", file_row)
        form.addRow("Preview level", self.level)
        self.rows = {
            "width": self.width,
            "fanout": self.fanout,
            "start": self.start,
            "bottom": self.bottom,
            "top": self.top,
            "bins": self.bins,
            "groups": self.groups,
            "file": file_row,
        }
        self.form = form
        self.tree = QTreeView()
        self.tree.setUniformRowHeights(True)
        self.tree.header().setStretchLastSection(False)  # labels are never cut: the tree scrolls instead
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.preview = QTableWidget(0, 2)
        self.preview.setHorizontalHeaderLabels(["Group", "Records"])
        self.preview.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.preview.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.problem = ErrorLabel()
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.save_button = self.buttons.addButton("Save as ARX file…", QDialogButtonBox.ActionRole)
        self.save_button.clicked.connect(self._save)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(self.preview)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.setSizeGripEnabled(True)
        self.resize(900, 680)  # room for the whole tree; the dialog resizes and the tree scrolls
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(
            muted(
                "The tree shows the hierarchy; the table the groups it makes of this column's "
                "records at the preview level (0: the values themselves)."
            )
        )
        layout.addWidget(split, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        for signal in (
            self.kind.currentIndexChanged,
            self.width.textChanged,
            self.fanout.valueChanged,
            self.start.textChanged,
            self.bottom.textChanged,
            self.top.textChanged,
            self.bins.valueChanged,
            self.groups.textChanged,
            self.path.textChanged,
        ):
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
        return "masking" if looks_like_codes(self.values) else "grouping"

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "ARX hierarchy", self.path.text() or self.folder, "CSV (*.csv);;All files (*)"
        )
        if path:
            self.path.setText(path)

    def rebuild(self) -> None:
        """Build the hierarchy from the fields; show its tree and groups, or say what is wrong."""
        kind = self.kind.currentData()
        for key, widget in self.rows.items():
            wanted = {
                "width": ("intervals",),
                "fanout": ("intervals", "quantiles"),
                "start": ("intervals",),
                "bottom": ("intervals",),
                "top": ("intervals",),
                "bins": ("quantiles",),
                "groups": ("grouping",),
                "file": ("arx-file",),
            }[key]
            widget.setVisible(kind in wanted)
            self.form.labelForField(widget).setVisible(kind in wanted)
        try:
            if kind == IN_USE:
                self.hierarchy = self.in_use
            elif kind == "grouping" and not self.groups.text().strip():
                # no group named yet: each value under * alone, a level to add groups to
                self.hierarchy = Hierarchy.flat(self.values.dropna(), name=self.column)
            else:
                numbers = (
                    {
                        "start": _number(self.start, "start"),
                        "bottom": _number(self.bottom, "bottom coding"),
                        "top": _number(self.top, "top coding"),
                    }
                    if kind == "intervals"
                    else {}
                )
                width = _number(self.width, "width") if kind == "intervals" else None
                self.hierarchy = build_hierarchy(
                    kind,
                    self.values,
                    name=self.column,
                    width=width,
                    fanout=self.fanout.value(),
                    bins=self.bins.value(),
                    groups=self.groups.text(),
                    path=self.path.text() or None,
                    **numbers,
                )
            self.hierarchy.check_values(self.values)  # every value must be a leaf (BadInput names one)
        except BadInput as exc:
            self.hierarchy = None
            self.problem.show_message(str(exc))
            self.buttons.button(QDialogButtonBox.Ok).setEnabled(False)
            self.save_button.setEnabled(False)
            self.tree.setModel(QStandardItemModel())
            self.preview.setRowCount(0)
            return
        self.problem.show_message("")
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(True)
        self.save_button.setEnabled(True)
        model = tree_model(self.hierarchy)
        self.tree.setModel(model)
        if _count_nodes(model) <= EXPAND_LIMIT:
            self.tree.expandAll()
        else:
            self.tree.expandToDepth(1)
        self.level.setMaximum(self.hierarchy.height)
        self.level.setValue(min(max(self.level.value(), 1), self.hierarchy.height))
        self._show_groups()

    def _save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save hierarchy (ARX format)", f"hierarchy_{self.column}.csv", "CSV (*.csv)"
        )
        if path:
            self.save_to(path)

    def save_to(self, path: str) -> None:
        """Write the hierarchy shown in ARX's file format (one line per value, `;` between levels)."""
        if self.hierarchy is not None:
            text = self.hierarchy.to_arx_csv()
            write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))

    def _show_groups(self) -> None:
        if self.hierarchy is None:
            return
        groups = preview_groups(self.hierarchy, self.values, self.level.value())
        self.preview.setRowCount(len(groups))
        for i, (label, n) in enumerate(zip(groups["group"], groups["records"])):
            self.preview.setItem(i, 0, QTableWidgetItem(str(label)))
            self.preview.setItem(i, 1, QTableWidgetItem(str(int(n))))


def looks_like_codes(values) -> bool:
    """Whether a column's values read as codes whose right-hand characters can be masked (postcodes,
    ICD codes: HD4 → HD* → *): each holds a digit, and all are equally long. Words (sex, race,
    country) are grouped instead: masking them makes ``Male`` into ``Male**``-like nonsense."""
    import pandas as pd

    text = pd.Series(pd.unique(values.dropna()), dtype=object).astype(str)
    if text.empty:
        return False
    return bool(text.str.contains(r"\d").all() and text.str.len().nunique() == 1)


def _count_nodes(model) -> int:
    count, stack = 0, [model.invisibleRootItem()]
    while stack:
        item = stack.pop()
        count += item.rowCount()
        stack += [item.child(i) for i in range(item.rowCount())]
    return count


def _number(field: QLineEdit, what: str):
    """The number typed in ``field`` (an int when whole), None when it is empty; BadInput otherwise."""
    text = field.text().strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"the {what} must be a number, got {text!r}") from None
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
