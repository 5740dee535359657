"""The runs panel: the queue (progress bar, elapsed time and cancel per run; a failure's details
on demand) beside the results table (method, parameters, privacy verdict, metrics)."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from .models import ResultsModel, RunsModel
from .widgets import ProgressDelegate, fast_table, fit_columns


def _header(title: str, *buttons: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    label = QLabel(f"<b>{title}</b>")
    row.addWidget(label)
    row.addStretch(1)
    for b in buttons:
        row.addWidget(b)
    return row


class RunsPanel(QWidget):
    details_requested = Signal(object)  # a RunEntry
    export_requested = Signal(object)  # a run id, or None for the dialog's choice
    run_selected = Signal(object)  # the run id of the selected result row

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        runs = controller.runs
        self.runs_model = RunsModel(runs)
        self.queue_view = fast_table(QTableView())
        self.queue_view.setModel(self.runs_model)
        self.queue_view.setItemDelegateForColumn(RunsModel.PROGRESS, ProgressDelegate(self.queue_view))
        self.queue_view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.queue_view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.queue_view.verticalHeader().hide()
        self.queue_view.clicked.connect(self._queue_clicked)
        self.queue_view.doubleClicked.connect(self._queue_double_clicked)
        for col, width in ((0, 210), (1, 170), (2, 100), (3, 60)):
            self.queue_view.setColumnWidth(col, width)
        self.cancel_all = QPushButton("Cancel all")
        self.cancel_all.setToolTip("Cancel the running and queued runs (Esc)")
        self.cancel_all.clicked.connect(controller.cancel_all)
        self.clear = QPushButton("Clear finished")
        self.clear.clicked.connect(runs.clear_finished)
        self.details = QPushButton("Details…")
        self.details.setToolTip("Everything about the selected run: what it released, its verdict, metrics, time")
        self.details.setEnabled(False)
        self.details.clicked.connect(self._show_details)
        self.results_model = ResultsModel(runs)
        self.results_view = fast_table(QTableView())
        self.results_view.setModel(self.results_model)
        self.results_view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.results_view.setSelectionBehavior(QAbstractItemView.SelectRows)  # a click selects the run
        self.results_view.verticalHeader().hide()
        self.results_view.doubleClicked.connect(lambda ix: self._export_row(ix.row()))
        self.results_view.clicked.connect(self._result_clicked)
        self._chosen_run: int | None = None
        self.results_view.selectionModel().selectionChanged.connect(
            lambda *_: self.run_selected.emit(self.selected_run())
        )
        self.export = QPushButton("Export…")
        self.export.setToolTip("Write the selected run's release with its manifest (Ctrl+E)")
        self.export.clicked.connect(self._export_selected)
        self.clear_results = QPushButton("Clear results")
        self.clear_results.clicked.connect(runs.clear_results)
        runs.results_changed.connect(self._results_changed)
        left, right = QWidget(), QWidget()
        lv, rv = QVBoxLayout(left), QVBoxLayout(right)
        for v in (lv, rv):
            v.setContentsMargins(4, 2, 4, 2)
        lv.addLayout(_header("Queue", self.details, self.clear, self.cancel_all))
        lv.addWidget(self.queue_view)
        rv.addLayout(_header("Results", self.clear_results, self.export))
        rv.addWidget(self.results_view)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([560, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.queue_view.selectionModel().selectionChanged.connect(self._selection_changed)
        runs.changed.connect(lambda _e: self._selection_changed())
        self._ticker = QTimer(self)
        self._ticker.setInterval(250)
        self._ticker.timeout.connect(self.runs_model.tick)
        controller.busy_changed.connect(lambda busy: self._ticker.start() if busy else self._ticker.stop())

    def _selected_entry(self):
        rows = self.queue_view.selectionModel().selectedRows()
        return self.runs_model.entry(rows[0].row()) if rows else None

    def _selection_changed(self, *_):
        entry = self._selected_entry()
        self.details.setEnabled(entry is not None and entry.finished)

    def _show_details(self) -> None:
        entry = self._selected_entry()
        if entry is not None and entry.finished:
            self.details_requested.emit(entry)

    def _queue_clicked(self, index) -> None:
        entry = self.runs_model.entry(index.row())
        if index.column() == RunsModel.CANCEL and not entry.finished:
            self.controller.cancel(entry)

    def _queue_double_clicked(self, index) -> None:
        entry = self.runs_model.entry(index.row())
        if entry.failure is not None:
            self.details_requested.emit(entry)
        elif entry.outcome is not None and entry.outcome.result is not None:
            self.export_requested.emit(entry.id)

    def _results_changed(self) -> None:
        chosen = self._chosen_run  # the user's choice survives new results arriving
        fit_columns(self.results_view, max_width=140)
        rows = self.results_model.rowCount()
        if not rows:
            return
        row = next((r for r in range(rows) if self.results_model.run_id(r) == chosen), rows - 1)
        self.results_view.selectRow(row)
        self._chosen_run = chosen

    def _result_clicked(self, index) -> None:
        self._chosen_run = self.results_model.run_id(index.row())

    def selected_run(self) -> int | None:
        """The run selected in the results table (a clicked cell selects its run)."""
        rows = self.results_view.selectionModel().selectedRows()
        if not rows and self.results_view.currentIndex().isValid():
            rows = [self.results_view.currentIndex()]
        return self.results_model.run_id(rows[0].row()) if rows else None

    def select_run(self, run_id: int) -> None:
        """Select a run's row in the results table (a point clicked on a chart)."""
        for row in range(self.results_model.rowCount()):
            if self.results_model.run_id(row) == run_id:
                self.results_view.selectRow(row)
                self.results_view.scrollTo(self.results_model.index(row, 0))
                return

    def _export_row(self, row: int) -> None:
        self.export_requested.emit(self.results_model.run_id(row))

    def _export_selected(self) -> None:
        self.export_requested.emit(self.selected_run())
