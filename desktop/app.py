"""The desktop application: QApplication set-up and the main window."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QFileDialog, QLabel, QMainWindow, QMessageBox, QTableView,
                               QTabWidget, QTextEdit)

from veil.engine import BadInput, Table, __version__, load_demo, make_registry, read_data

from .models import TableModel


class MainWindow(QMainWindow):
    """Assembles the panels; holds no logic of its own."""

    def __init__(self, registry, parent=None):
        super().__init__(parent)
        self.registry = registry
        self.setWindowTitle("Veil")
        self.resize(1200, 760)
        self.model = TableModel()
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 6)
        self.plugins_text = QTextEdit(readOnly=True)
        tabs = QTabWidget()
        tabs.addTab(self.view, "Dataset")
        tabs.addTab(self.plugins_text, "Plugins")
        self.setCentralWidget(tabs)
        self.status = QLabel()
        self.statusBar().addPermanentWidget(self.status)
        self._menus()
        self._show_plugins()

    def _menus(self):
        file_menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open…", self, shortcut=QKeySequence.Open, triggered=self.open_dialog)
        demo_action = QAction("Open &demo data", self, triggered=self.open_demo)
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close)
        for a in (open_action, demo_action, quit_action):
            file_menu.addAction(a)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(QAction("&About Veil", self, triggered=self.about))

    def _show_plugins(self):
        lines = [f"{i.cls.kind:<14} {i.cls.name:<22} {i.cls.title}" for i in self.registry.all()]
        lines += [f"FAILED  {f.source}: {f.error}" for f in self.registry.failures]
        self.plugins_text.setPlainText("\n".join(lines))
        self.plugins_text.setLineWrapMode(QTextEdit.NoWrap)

    def set_table(self, table: Table) -> None:
        self.model.set_table(table)
        name = Path(table.source).name if table.source else "data"
        self.setWindowTitle(f"Veil — {name}")
        self.status.setText(f"{table.n_rows:,} rows × {len(table.columns)} columns")

    def open_demo(self):
        self.set_table(load_demo())

    def open_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, "Open data", "", "Data files (*.csv *.tsv *.txt *.data *.dat "
                                              "*.xlsx *.parquet *.arff *.svm *.libsvm *.mat);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str):
        try:
            data = read_data(self.registry, path)
        except BadInput as exc:
            QMessageBox.warning(self, "Cannot open the file", str(exc))
            return
        if not isinstance(data, Table):
            QMessageBox.information(self, "Transaction data",
                                    f"{Path(path).name}: {data.n_rows:,} transactions, {data.n_features:,} items.")
            return
        self.set_table(data.with_suggested_roles())

    def about(self):
        QMessageBox.about(self, "About Veil", f"Veil {__version__}\nRelease sensitive tables safely.\n"
                          f"{len(self.registry.all())} plugins loaded, {len(self.registry.failures)} failed.")


def run_desktop(argv: Sequence[str]) -> int:
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("Veil")
    app.setOrganizationName("Veil")
    window = MainWindow(make_registry())
    paths = [a for a in argv if not a.startswith("-")]
    if paths:
        window.open_path(paths[0])
    else:
        window.open_demo()
    window.show()
    return app.exec()
