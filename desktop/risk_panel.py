"""The Risk tab: the input's and the selected run's release's risk as statisticians measure it, side
by side (docs/guide.md, "Compare on charts"): the distribution of individual risk, the records above a
threshold (a sortable table of the riskiest), global risk, expected re-identifications, sample
uniques, household risk, SUDA's contribution per quasi-identifier when the user asks for it, and
the ranking of the input's combinations of quasi-identifiers by separation and distinction, from
which a combination can be marked as the quasi-identifiers.

The figures are the engine's, the same ``veil risk`` prints; what is shown is decided in
:mod:`.state.risk`. The work runs on the tab's own worker thread (a :class:`Runner`), so a batch of
runs never holds it up: the figures when the tab is shown, SUDA and the ranking when asked, with
progress and cancel.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from veil.engine import BadInput, Role, available_memory, format_bytes

from .state.risk import (
    APPROX,
    COLUMNS,
    DISTINCTION,
    EXACT,
    INPUT,
    NUMBERS,
    RANKED,
    RECORD,
    RELEASE,
    SEPARATION,
    SIDES,
    RiskState,
    input_side,
    marking,
    measure,
    measure_ranking,
    measure_suda,
    release_side,
    sort_order,
)
from .models import FRACTION
from .widgets import FigureArea, ProgressDelegate, fast_table

COLOURS = {INPUT: "#7f8c8d", RELEASE: "#2e86c1"}
BLANKS = ("a blank matches any value", "a blank is a value of its own")
_RIGHT, _LEFT = Qt.AlignRight | Qt.AlignVCenter, Qt.AlignLeft | Qt.AlignVCenter


class RiskiestModel(QAbstractTableModel):
    """The records above the threshold, read lazily and sorted by any column (header click)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table = pd.DataFrame()
        self._order = np.zeros(0, dtype=np.int64)

    def set_table(self, table: pd.DataFrame) -> None:
        self.beginResetModel()
        self.table = table
        self._order = np.arange(len(table))
        self._cells = [table[c].to_numpy() for c in table.columns]
        self._numbers = [c in NUMBERS for c in table.columns]
        self.endResetModel()

    def rows(self) -> pd.DataFrame:
        """The table in the order shown."""
        return self.table.iloc[self._order]

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.table.columns)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role != Qt.DisplayRole:
            return None
        return str(self.table.columns[section]) if orientation == Qt.Horizontal else str(section + 1)

    def data(self, index, role=Qt.DisplayRole):
        if role == Qt.DisplayRole:
            value = self._cells[index.column()][self._order[index.row()]]
            return _cell(value, self.table.columns[index.column()])
        if role == Qt.TextAlignmentRole:
            return _RIGHT if self._numbers[index.column()] else _LEFT
        return None

    def sort(self, column: int, order=Qt.AscendingOrder) -> None:
        if not 0 <= column < len(self.table.columns):
            return
        self.layoutAboutToBeChanged.emit()
        self._order = sort_order(self.table, self.table.columns[column], order == Qt.DescendingOrder)
        self.layoutChanged.emit()


class RankingModel(QAbstractTableModel):
    """The ranking of the combinations of quasi-identifiers, sorted by any column (header click); the
    separation and distinction cells are drawn as bars (their ``FRACTION``)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.set_ranking(None)

    def set_ranking(self, ranking) -> None:
        """Show ``ranking`` (a :class:`~.state.risk.Ranking`, or None: nothing), most separating first."""
        self.beginResetModel()
        self.table = ranking.table() if ranking is not None else pd.DataFrame(columns=list(RANKED))
        self._combinations = [c.columns for c in ranking.combinations] if ranking is not None else []
        self._order = np.arange(len(self.table))
        self._cells = [self.table[c].to_numpy() for c in RANKED]
        self.endResetModel()

    def rows(self) -> pd.DataFrame:
        """The ranking in the order shown."""
        return self.table.iloc[self._order]

    def combination(self, row: int) -> list[str]:
        """The quasi-identifiers of the combination shown in ``row``."""
        return list(self._combinations[self._order[row]])

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(RANKED)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole:
            return RANKED[section] if orientation == Qt.Horizontal else str(section + 1)
        if role == Qt.ToolTipRole and orientation == Qt.Horizontal:
            return _RANKING_TIPS.get(RANKED[section])
        return None

    def data(self, index, role=Qt.DisplayRole):
        column = RANKED[index.column()]
        value = self._cells[index.column()][self._order[index.row()]]
        if role == Qt.DisplayRole:
            return f"{value:.4f}" if column in (SEPARATION, DISTINCTION) else str(value)
        if role == FRACTION and column in (SEPARATION, DISTINCTION):
            return float(value)
        if role == Qt.TextAlignmentRole:
            return _LEFT if column == COLUMNS else _RIGHT
        return None

    def sort(self, column: int, order=Qt.AscendingOrder) -> None:
        if not 0 <= column < len(RANKED):
            return
        self.layoutAboutToBeChanged.emit()
        self._order = sort_order(self.table, RANKED[column], order == Qt.DescendingOrder)
        self.layoutChanged.emit()


_RANKING_TIPS = {
    COLUMNS: "The quasi-identifiers of the combination",
    SEPARATION: "The share of pairs of records whose values on these columns differ",
    DISTINCTION: "Distinct combinations of values on these columns / records",
    "uniques": "Records whose values on these columns no other record has",
}


class RiskPanel(QWidget):
    computed = Signal(str)  # a side's figures arrived, or could not be computed
    idle = Signal()  # no work of the tab is left

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.state = RiskState()
        self._runner = None  # made at the first job
        self._jobs: dict[int, tuple] = {}  # job -> (kind, side name, the Side, the rules of a "risk" job)
        self._input_of = None  # the (frame, roles) the input side was made from
        self._release_of = None  # the release the release side was made from
        self._suda_said = ""  # how the last SUDA ended, when it did not finish
        self._rank_said = ""  # how the last ranking ended, when it did not finish
        self._draw_due = False
        self.summary = QLabel(wordWrap=True)
        self._controls()
        self.figures = QTableWidget(0, 3)
        self.figures.setHorizontalHeaderLabels(["figure", "input", "release"])
        self.figures.verticalHeader().hide()
        self.figures.verticalHeader().setDefaultSectionSize(self.figures.fontMetrics().height() + 6)
        self.figures.setWordWrap(False)
        self.riskiest = QTabWidget()
        self.models, self.views = {}, {}
        for name in SIDES:
            model = RiskiestModel(self)
            view = fast_table(QTableView())
            view.setModel(model)
            view.setSortingEnabled(True)
            view.horizontalHeader().setSortIndicator(-1, Qt.DescendingOrder)  # shown riskiest first
            self.models[name], self.views[name] = model, view
            self.riskiest.addTab(view, name.capitalize())
        self.riskiest.addTab(self._ranking_pane(), "Quasi-identifier ranking")
        self._plot_area = FigureArea((9, 3.4))
        bottom = QSplitter(Qt.Horizontal)
        bottom.addWidget(self.figures)
        bottom.addWidget(self.riskiest)
        bottom.setSizes([480, 640])
        split = QSplitter(Qt.Vertical)
        split.addWidget(self._plot_area)
        split.addWidget(bottom)
        split.setSizes([380, 360])
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(self._top)
        layout.addLayout(self._suda_row)
        layout.addWidget(split, 1)
        self.state.changed.connect(self._state_changed)
        controller.dataset.changed.connect(self._dataset_changed)
        self._dataset_changed("data")
        self._show()
        self._ranking_controls()

    def _controls(self) -> None:
        self.threshold = QDoubleSpinBox(decimals=4, minimum=0.0, maximum=1.0, singleStep=0.01)
        self.threshold.setValue(self.state.threshold)
        self.threshold.setToolTip(
            "A record whose individual risk exceeds this is at risk (sdcMicro's local suppression uses 0.15)"
        )
        self.threshold.valueChanged.connect(self.state.set_threshold)
        self.blanks = QComboBox()
        self.blanks.addItems(BLANKS)
        self.blanks.setToolTip("How a blank (missing or suppressed) counts in fk and Fk; sdcMicro: it matches any")
        self.method = QComboBox()
        self.method.addItems([APPROX, EXACT])
        self.method.setToolTip(
            "Individual risk of keys seen 3 or more times, with weights: sdcMicro's approximation or the exact "
            "value (one integral per distinct fk and Fk: slow on large tables)"
        )
        for box in (self.blanks, self.method):
            box.currentIndexChanged.connect(self._rules_changed)
        self._top = QHBoxLayout()
        for label, widget in (("Threshold", self.threshold), ("Blanks", self.blanks), ("Estimator", self.method)):
            self._top.addWidget(QLabel(label))
            self._top.addWidget(widget)
        self._top.addStretch(1)
        self.suda_size = QSpinBox(minimum=1, maximum=1)
        self.suda_size.setToolTip("The largest minimal sample unique SUDA searches, in quasi-identifiers")
        self.suda_size.valueChanged.connect(self._suda_size_changed)
        self.suda_button = QPushButton("Compute SUDA")
        self.suda_button.setToolTip("Find every record's minimal sample uniques and each column's contribution")
        self.suda_button.clicked.connect(self.compute_suda)
        self.suda_cost = QLabel()
        self.progress = QProgressBar(maximumWidth=260, textVisible=True)
        self.progress.hide()
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop SUDA, and figures still being computed")
        self.cancel.clicked.connect(self.stop)
        self.cancel.hide()
        self._suda_row = QHBoxLayout()
        self._suda_row.addWidget(QLabel("SUDA up to"))
        self._suda_row.addWidget(self.suda_size)
        self._suda_row.addWidget(QLabel("columns"))
        self._suda_row.addWidget(self.suda_button)
        self._suda_row.addWidget(self.suda_cost, 1)
        self._suda_row.addWidget(self.progress)
        self._suda_row.addWidget(self.cancel)

    def _ranking_pane(self) -> QWidget:
        """The input's combinations of quasi-identifiers ranked, with the controls that rank and mark them."""
        self.rank_size = QSpinBox(minimum=1, maximum=1)
        self.rank_size.setToolTip("The largest combination of quasi-identifiers ranked, in columns")
        self.rank_size.valueChanged.connect(self._rank_size_changed)
        self.rank_button = QPushButton("Rank combinations")
        self.rank_button.setToolTip(
            "Distinction and separation of every combination of the input's quasi-identifiers (as `veil risk`)"
        )
        self.rank_button.clicked.connect(self.compute_ranking)
        self.rank_cost = QLabel(wordWrap=True)
        self.ranking_model = RankingModel(self)
        self.ranking_view = fast_table(QTableView(), stretch_last=False)
        self.ranking_view.setModel(self.ranking_model)
        self.ranking_view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.ranking_view.setSortingEnabled(True)
        self.ranking_view.horizontalHeader().setSortIndicator(-1, Qt.DescendingOrder)  # most separating first
        bars = ProgressDelegate(self.ranking_view)
        for column in (SEPARATION, DISTINCTION):
            self.ranking_view.setItemDelegateForColumn(RANKED.index(column), bars)
        header = self.ranking_view.horizontalHeader()
        header.resizeSection(0, 200)
        for column, width in ((1, 40), (2, 120), (3, 120), (4, 64)):
            header.resizeSection(column, width)
        self.ranking_view.selectionModel().selectionChanged.connect(lambda *_: self._mark_controls())
        self.mark_button = QPushButton("Mark these as quasi-identifiers")
        self.mark_button.setToolTip(
            "Make the selected combination's columns the quasi-identifiers (the others marked so become insensitive)"
        )
        self.mark_button.clicked.connect(self.ask_mark)
        self.mark_said = QLabel(wordWrap=True)
        row = QHBoxLayout()
        row.addWidget(QLabel("Rank up to"))
        row.addWidget(self.rank_size)
        row.addWidget(QLabel("columns"))
        row.addWidget(self.rank_button)
        row.addStretch(1)
        marks = QHBoxLayout()
        marks.addWidget(self.mark_button)
        marks.addWidget(self.mark_said, 1)
        pane = QWidget()
        layout = QVBoxLayout(pane)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.rank_cost)
        layout.addWidget(self.ranking_view, 1)
        layout.addLayout(marks)
        return pane

    # -- what is measured ---------------------------------------------------------------------------
    def _dataset_changed(self, what: str) -> None:
        if what not in ("data", "schema"):
            return
        data, table = self.controller.dataset.data, self.controller.dataset.table
        key = None if table is None else (table.frame, table.schema)
        self.state.forget_ranking(None if table is None else table.frame)
        if key is not None and self._input_of is not None and _same_roles(self._input_of, key):
            return  # kinds or other roles changed: the figures stand
        self._input_of = key
        self.state.set_side(INPUT, input_side(table if table is not None else data))

    def show_release(self, title: str, original, release) -> None:
        """Measure the selected run's ``release`` beside the input (when the tab is shown)."""
        if release is self._release_of:
            return
        self._release_of = release
        self.state.set_side(RELEASE, release_side(title, original, release))

    def clear(self, why: str) -> None:
        """No release to measure, and why."""
        self._release_of = None
        self.state.set_side(RELEASE, why)

    def _rules_changed(self, *_) -> None:
        self.state.set_rules(self.blanks.currentIndex() == 0, self.method.currentText())

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.state.resume()
        self._measure()
        self._draw()

    # -- the work -----------------------------------------------------------------------------------
    def _runner_made(self):
        if self._runner is None:
            from .runner import Runner

            self._runner = Runner(self, registry_recipe=self.controller.registry.recipe)
            self._runner.job_progress.connect(self._on_progress)
            self._runner.job_finished.connect(self._on_finished)
            self._runner.job_failed.connect(self._on_failed)
            self._runner.job_cancelled.connect(self._on_cancelled)
            self._runner.idle.connect(self._on_idle)
        return self._runner

    def busy(self) -> bool:
        return bool(self._jobs)

    def _rules(self) -> tuple[bool, str]:
        return self.state.blanks_match_any, self.state.method

    def _submit(self, kind: str, name: str, side, work) -> int:
        job = self._runner_made().submit(f"{kind} of the {name}", work, kind=kind)
        self._jobs[job] = (kind, name, side, self._rules() if kind == "risk" else None)
        self.progress.setRange(0, 0)  # moving until the job reports how far it is
        self.progress.setFormat("")
        self.progress.show()
        self.cancel.show()
        return job

    def _measure(self) -> None:
        """Compute the figures of the sides that lack them (only while the tab is shown)."""
        if not self.isVisible():
            return
        running = {(name, id(side), rules) for kind, name, side, rules in self._jobs.values() if kind == "risk"}
        for name in self.state.to_measure():
            side = self.state.side(name)
            if (name, id(side), self._rules()) not in running:
                work = functools.partial(measure, side, *self._rules())
                self._submit("risk", name, side, work)

    def compute_suda(self) -> list[int]:
        """Start SUDA on the sides that lack it, after saying what it needs; returns the jobs."""
        sides = [(n, self.state.side(n)) for n in self.state.to_suda()]
        if not sides:
            return []
        need = max(side.suda_memory(self.state.suda_max_size) for _, side in sides)
        free, where = available_memory()
        if need > free:
            self.suda_cost.setText(
                f"SUDA needs about {format_bytes(need)} and {format_bytes(free)} is {where}: search fewer columns."
            )
            return []
        self._suda_said = ""
        jobs = [
            self._submit("suda", name, side, functools.partial(measure_suda, side, self.state.suda_max_size))
            for name, side in sides
        ]
        self.suda_button.setEnabled(False)
        return jobs

    def compute_ranking(self) -> int | None:
        """Start ranking the combinations of the input's quasi-identifiers; returns the job."""
        side = self.state.side(INPUT)
        if side is None or not self.state.to_rank() or any(j[0] == "rank" for j in self._jobs.values()):
            return None
        size, source = self.state.rank_size(), self.state.ranking_source
        self._rank_said = ""
        job = self._submit("rank", INPUT, side, functools.partial(measure_ranking, side, size))
        self._jobs[job] = ("rank", INPUT, side, (source, size))
        self._ranking_controls()
        return job

    def ask_mark(self) -> QMessageBox | None:
        """Ask before making the selected combination's columns the quasi-identifiers (the box is kept
        as ``mark_box``; Yes marks them)."""
        rows = self.ranking_view.selectionModel().selectedRows()
        table = self.controller.dataset.table
        if not rows or table is None:
            return None
        chosen, demoted = marking(table.schema, self.ranking_model.combination(rows[0].row()))
        missing = [c for c in chosen if c not in table.schema.names]
        if missing:
            self.mark_said.setText(f"The open table has no column {missing[0]!r}.")
            return None
        if not demoted and set(chosen) == set(table.schema.by_role(Role.QUASI_IDENTIFIER)):
            self.mark_said.setText(f"{_listed(chosen)} {'is' if len(chosen) == 1 else 'are'} marked so already.")
            return None
        box = QMessageBox(
            QMessageBox.Question,
            "Mark quasi-identifiers",
            f"Mark {_listed(chosen)} as the quasi-identifiers?",
            QMessageBox.Yes | QMessageBox.Cancel,
            self,
        )
        box.setObjectName("mark-quasi")
        box.setInformativeText(
            f"{_listed(demoted)}, marked quasi-identifier now, "
            f"{'becomes' if len(demoted) == 1 else 'become'} insensitive."
            if demoted
            else "No other column is marked quasi-identifier."
        )
        box.setDefaultButton(QMessageBox.Yes)
        box.finished.connect(
            lambda _: self.mark(chosen, demoted) if box.clickedButton() is box.button(QMessageBox.Yes) else None
        )
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.mark_box = box
        return box

    def mark(self, chosen: list[str], demoted: list[str]) -> None:
        """Make ``chosen`` the quasi-identifiers and ``demoted`` insensitive, as the role menu marks
        columns (through the dataset's roles: one step to undo)."""
        roles = {**dict.fromkeys(demoted, Role.INSENSITIVE), **dict.fromkeys(chosen, Role.QUASI_IDENTIFIER)}
        try:
            self.controller.dataset.assign_roles(roles)
        except BadInput as exc:
            self.mark_said.setText(str(exc))
            return
        self.mark_said.setText(f"Quasi-identifiers now: {_listed(chosen)}.")

    def stop(self) -> None:
        """Stop the tab's work: SUDA, and figures still being computed (the exact risk of a large table)."""
        for job, (kind, name, side, _) in list(self._jobs.items()):
            if kind == "risk":
                self.state.stop(name, side)
            self._runner.cancel(job)

    def shutdown(self) -> bool:
        """Stop the tab's worker (the window is closing)."""
        return True if self._runner is None else self._runner.shutdown()

    def _on_progress(self, job: int, fraction: float, message: str) -> None:
        if job in self._jobs:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(100 * fraction))
            self.progress.setFormat(message[:40] or "%p %")

    def _on_finished(self, job: int, value) -> None:
        kind, name, side, rules = self._jobs.pop(job, (None,) * 4)
        if kind == "risk":
            self.state.record(name, side, value)
        elif kind == "suda":
            self.state.record_suda(name, side, value)
        elif kind == "rank":
            self.state.record_ranking(rules[0], side, rules[1], value)
        if kind is not None:
            self.computed.emit(name)

    def _on_failed(self, job: int, failure) -> None:
        kind, name, side, _ = self._jobs.pop(job, (None,) * 4)
        if kind == "risk":
            self.state.fail(name, side, failure.message)
        elif kind == "suda":
            self._suda_said = f"SUDA of the {name} failed: {failure.message}"
        elif kind == "rank":
            self._rank_said = f"Ranking failed: {failure.message}"
        if kind is not None:
            self.computed.emit(name)

    def _on_cancelled(self, job: int) -> None:
        kind, *_ = self._jobs.pop(job, (None,) * 4)
        if kind == "suda":
            self._suda_said = "SUDA was cancelled."
        elif kind == "rank":
            self._rank_said = "The ranking was cancelled."

    def _on_idle(self) -> None:
        self.progress.hide()
        self.cancel.hide()
        self._suda_controls()
        self._ranking_controls()
        self.idle.emit()

    # -- showing ------------------------------------------------------------------------------------
    def _state_changed(self, what: str) -> None:
        if what in ("sides", "settings", "ranking"):
            self._cancel_outdated()
            self._measure()
            self._suda_controls()
            self._ranking_controls()
        if what == "ranking":
            self._show_ranking()
            return
        self._show()

    def _cancel_outdated(self) -> None:
        """Cancel the work on sides no longer measured, and figures computed under rules no longer chosen."""
        for job, (kind, name, side, rules) in list(self._jobs.items()):
            if kind == "rank":  # a ranking is of the frame's values, whatever the roles now
                outdated = rules[0] is not self.state.ranking_source
            else:
                outdated = self.state.sides.get(name) is not side or (kind == "risk" and rules != self._rules())
            if outdated:
                self._runner.cancel(job)

    def _suda_size_changed(self, value: int) -> None:
        widest = self.suda_size.maximum()
        self.state.suda_max_size = None if value >= widest else value
        self._suda_controls()

    def _suda_controls(self) -> None:
        sides = [self.state.side(n) for n in SIDES if self.state.side(n) is not None]
        widest = max((len(s.quasi) for s in sides), default=1)
        self.suda_size.blockSignals(True)
        at_most = self.suda_size.value() >= self.suda_size.maximum()
        self.suda_size.setMaximum(widest)
        if at_most or self.state.suda_max_size is None:
            self.suda_size.setValue(widest)
        self.suda_size.blockSignals(False)
        todo = [self.state.side(n) for n in self.state.to_suda()]
        running = any(job[0] == "suda" for job in self._jobs.values())
        self.suda_button.setEnabled(bool(todo) and not running)
        if running:
            return
        said = f"{self._suda_said} " if self._suda_said else ""
        if not todo:
            self.suda_cost.setText(said + ("SUDA's figures are shown." if sides else ""))
            return
        size = self.state.suda_max_size
        combos = sum(s.suda_combinations(size) for s in todo)
        need = max(s.suda_memory(size) for s in todo)
        which = " and ".join(s.name for s in todo)
        self.suda_cost.setText(
            f"{said}SUDA of the {which} searches {combos:,} combinations of quasi-identifiers "
            f"(about {format_bytes(need)} of memory)."
        )

    def _rank_size_changed(self, value: int) -> None:
        self.state.ranking_max_size = value
        self._ranking_controls()

    def _ranking_controls(self) -> None:
        side = self.state.side(INPUT)
        widest = len(side.quasi) if side is not None else 1
        self.rank_size.blockSignals(True)
        self.rank_size.setMaximum(widest)
        self.rank_size.setValue(self.state.rank_size() or widest)
        self.rank_size.blockSignals(False)
        running = any(job[0] == "rank" for job in self._jobs.values())
        self.rank_button.setEnabled(self.state.to_rank() and not running)
        self._mark_controls()
        if running:
            return
        said = f"{self._rank_said} " if self._rank_said else ""
        ranking = self.state.ranking
        if side is None:
            shown = f"Ranked: {_listed(ranking.columns)}." if ranking is not None else ""
            self.rank_cost.setText(said + (shown or "Mark quasi-identifiers to rank their combinations."))
        elif not self.state.to_rank():
            self.rank_cost.setText(
                f"{said}{len(ranking.combinations):,} combinations of {_listed(ranking.columns)}, most separating "
                "first: select one to mark its columns as the quasi-identifiers."
            )
        else:
            count = side.suda_combinations(self.state.rank_size())
            shown = f" Shown: the ranking of {_listed(ranking.columns)}." if ranking is not None else ""
            self.rank_cost.setText(f"{said}Ranking {_listed(side.quasi)} computes {count:,} combinations.{shown}")

    def _mark_controls(self) -> None:
        selected = self.ranking_view.selectionModel().hasSelection()
        self.mark_button.setEnabled(selected and self.controller.dataset.table is not None)

    def _show_ranking(self) -> None:
        ranking = self.state.ranking
        self.ranking_model.set_ranking(ranking)
        self.ranking_view.horizontalHeader().setSortIndicator(-1, Qt.DescendingOrder)
        self._mark_controls()

    def _show(self) -> None:
        self.summary.setText(self._summary_text())
        self._fill_figures()
        for name in SIDES:
            measured = self.state.measured.get(name)
            table = measured.riskiest(self.state.threshold) if measured is not None else pd.DataFrame()
            self.models[name].set_table(table)
            self.views[name].horizontalHeader().setSortIndicator(-1, Qt.DescendingOrder)
            above = "" if measured is None else f" ({len(table):,} above {self.state.threshold:g})"
            self.riskiest.setTabText(SIDES.index(name), f"{name.capitalize()}{above}")
        if not self._draw_due:  # one drawing for the changes of one turn of the event loop
            self._draw_due = True
            QTimer.singleShot(0, self, self._draw)

    def _summary_text(self) -> str:
        parts = []
        for name in SIDES:
            side, why = self.state.side(name), self.state.why_not(name)
            if why:
                parts.append(f"{name.capitalize()}: {why}")
            elif side is not None:
                words = f"{side.records:,} records on {', '.join(side.quasi)}"
                words += f"; weights {side.weight}" if side.weight else "; no weights (1 / fk)"
                if side.household:
                    words += f"; households {side.household}"
                if side.note:
                    words += f"; {side.note}"
                title = "" if name == INPUT else f" ({side.title})"
                state = "" if name in self.state.measured else " (computing…)"
                parts.append(f"{name.capitalize()}{title}: {words}{state}.")
        blanks = BLANKS[0 if self.state.blanks_match_any else 1]
        parts.append(
            f"Individual risk {self.state.method} with weights, 1 / fk without; {blanks}; the records above "
            f"the threshold are listed riskiest first (click a header to sort)."
        )
        return "\n".join(parts)

    def _fill_figures(self) -> None:
        t = self.state.threshold
        columns = {n: m.figures(t) for n, m in self.state.measured.items()}
        names = list(dict.fromkeys(k for n in SIDES for k in columns.get(n, {})))
        self.figures.setRowCount(len(names))
        for row, key in enumerate(names):
            self.figures.setItem(row, 0, QTableWidgetItem(key))
            for col, name in enumerate(SIDES, start=1):
                item = QTableWidgetItem(_figure(columns.get(name, {}).get(key), key))
                item.setTextAlignment(_RIGHT)
                self.figures.setItem(row, col, item)
        self.figures.resizeColumnsToContents()

    # -- drawing ------------------------------------------------------------------------------------
    def _plot(self):
        return self._plot_area.plot()

    @property
    def figure(self):
        return self._plot()[0]

    def _draw(self) -> None:
        self._draw_due = False
        if not self.isVisible():
            return  # drawn when next shown (showEvent)
        figure, canvas = self._plot()
        figure.clear()
        left, right = figure.subplots(1, 2, width_ratios=(3, 2))
        self._draw_histogram(left)
        self._draw_contributions(right)
        canvas.draw_idle()

    def _draw_histogram(self, ax) -> None:
        measured = {n: m for n, m in self.state.measured.items()}
        ax.set_title("Records by individual risk", fontsize=9)
        ax.set_ylabel("records")
        if not measured:
            ax.text(0.5, 0.5, "no figures yet", ha="center", va="center", transform=ax.transAxes, color="grey")
            ax.set_xticks([])
            return
        bins = next(iter(measured.values())).histogram()
        x = np.arange(len(bins))
        width = 0.8 / len(measured)
        for i, (name, m) in enumerate(measured.items()):
            counts = [b["records"] for b in m.histogram()]
            bars = ax.bar(x + (i - (len(measured) - 1) / 2) * width, counts, width, color=COLOURS[name], label=name)
            ax.bar_label(bars, labels=[f"{c:,}" if c else "" for c in counts], fontsize=6)
        labels = [f"≤ {b['to']:g}" if not b["from"] else f"{b['from']:g}–{b['to']:g}" for b in bins]
        ax.set_xticks(x, labels, fontsize=7)
        ax.margins(y=0.12)  # room for the counts above the bars
        ax.set_xlabel("individual risk", fontsize=8)
        position = _bin_position(self.state.threshold, bins)
        ax.axvline(position, color="#c0392b", linestyle="--", linewidth=1)
        ax.text(position, 0.97, f" threshold {self.state.threshold:g}", color="#c0392b", fontsize=7,
                transform=ax.get_xaxis_transform(), va="top")  # fmt: skip
        ax.legend(fontsize=7, loc="upper right")

    def _draw_contributions(self, ax) -> None:
        found = {n: m.contributions() for n, m in self.state.measured.items() if m.suda is not None}
        ax.set_title("SUDA: contribution of each quasi-identifier (%)", fontsize=9)
        if not found:
            ax.text(0.5, 0.5, "Compute SUDA to see which columns\nmake records unique", ha="center",
                    va="center", transform=ax.transAxes, color="grey")  # fmt: skip
            ax.set_xticks([])
            ax.set_yticks([])
            return
        columns = list(dict.fromkeys(c for d in found.values() for c in d))
        y = np.arange(len(columns))
        height = 0.8 / len(found)
        for i, (name, shares) in enumerate(found.items()):
            values = [shares.get(c, 0.0) for c in columns]
            label = name if any(values) else f"{name}: no record has a minimal sample unique"
            ax.barh(y + (i - (len(found) - 1) / 2) * height, values, height, color=COLOURS[name], label=label)
        ax.set_yticks(y, columns, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("% of the SUDA scores the column takes part in", fontsize=8)
        ax.legend(fontsize=7, loc="best")


def _same_roles(before, now) -> bool:
    """Whether the input side made from ``before`` (frame, schema) measures what ``now`` would."""
    (frame_a, schema_a), (frame_b, schema_b) = before, now
    if frame_a is not frame_b:
        return False

    def roles(schema):
        return schema.by_role(Role.QUASI_IDENTIFIER), schema.weight, schema.household

    return roles(schema_a) == roles(schema_b)


def _listed(columns) -> str:
    columns = list(columns)
    return columns[0] if len(columns) == 1 else f"{', '.join(columns[:-1])} and {columns[-1]}"


def _bin_position(value: float, bins: list[dict]) -> float:
    """Where ``value`` falls on an axis whose bin i is drawn from i − 0.5 to i + 0.5."""
    for i, b in enumerate(bins):
        if value <= b["to"]:
            span = b["to"] - b["from"]
            return i - 0.5 + ((value - b["from"]) / span if span else 0.0)
    return len(bins) - 0.5


def _figure(value, key: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if key.startswith("share"):
        return f"{100 * value:.2f} %"
    if "expected" in key:
        return f"{value:,.2f}"
    return f"{value:.4g}"


def _cell(value, column: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if column == RECORD:
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)
