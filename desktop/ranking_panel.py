"""The ranking of a run's candidates at other weights: linked weight sliders, the ranking table and
the method's charts. Moving a slider re-ranks and redraws here, on the GUI thread: ranking is the
method's ranker's ``rerank``, which computes no classifier. Everything shown comes from what the
method's :class:`~veil.engine.Ranker` declares (its title, help, weights and charts) and from the
typed :class:`~veil.engine.Ranking` the run's release carries (its columns, candidates and places),
never from the method's name or its own keys."""

from __future__ import annotations

import html
import re
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from veil.engine import BadInput, PluginCall, draw_chart, write_atomic

from .models import HOLDS, INK
from .state.ranking import SCALE, RankingState, rebalance, same_weights, show_weights, weighted_methods
from .widgets import ErrorLabel, fast_table, fit_columns, muted

RERANK_NOTE = "Moving a weight re-ranks the run's candidates: the method does not run again."


class WeightSliders(QWidget):
    """w1, w2, w3 as sliders that always sum to 1: moving one rescales the other two in proportion.
    ``moved`` carries the new weights; :meth:`show_weights` sets them without emitting."""

    moved = Signal(object)  # (w1, w2, w3)

    def __init__(self, cls, *, across: bool = False, parent=None):
        super().__init__(parent)
        self.cls = cls
        weights = cls.ranker.weights if cls is not None and cls.ranker is not None else ()
        names = tuple(w.param for w in weights) or ("w1", "w2", "w3")
        labels = tuple(w.label for w in weights) or tuple(f"weight {i + 1}" for i in range(3))
        self._weights = (1 / 3, 1 / 3, 1 / 3)
        self.sliders: list[QSlider] = []
        self.labels: list[QLabel] = []
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(2)
        width = self.fontMetrics().horizontalAdvance("0.000") + 6
        for i, (name, factor) in enumerate(zip(names, labels)):
            slider = QSlider(Qt.Horizontal, objectName=f"slider-{name}")
            slider.setRange(0, SCALE)
            slider.setSingleStep(10)
            slider.setPageStep(100)
            slider.setToolTip(
                f"{name}: the weight of {factor}; the other two weights follow so that the three sum to 1"
            )
            value = QLabel(objectName=f"weight-{name}")
            value.setFixedWidth(width)
            value.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
            title = QLabel(f"{name} {factor}")
            title.setBuddy(slider)
            row, col = (0, 3 * i) if across else (i, 0)
            grid.addWidget(title, row, col)
            grid.addWidget(slider, row, col + 1)
            grid.addWidget(value, row, col + 2)
            grid.setColumnStretch(col + 1, 1)
            slider.valueChanged.connect(lambda v, i=i: self._slid(i, v))
            self.sliders.append(slider)
            self.labels.append(value)
        self.show_weights(self._weights)

    def weights(self) -> tuple[float, float, float]:
        return self._weights

    def show_weights(self, weights) -> None:
        self._weights = tuple(float(w) for w in weights)
        for slider, label, w in zip(self.sliders, self.labels, self._weights):
            with QSignalBlocker(slider):
                slider.setValue(round(w * SCALE))
            label.setText(f"{w:.3f}")

    def _slid(self, index: int, value: int) -> None:
        weights = rebalance(self._weights, index, value / SCALE)
        self.show_weights(weights)
        self.moved.emit(weights)


class RankingModel(QAbstractTableModel):
    """The ranking, best first: its place, the candidate's label, the columns the run's ranking
    declares and what the candidate releases."""

    PLACE = "Place"

    def __init__(self, state: RankingState, parent=None):
        super().__init__(parent)
        self._state = state
        self._rows: list = []  # RankedCandidate, best first
        self.columns: tuple = ()  # the ranking's RankingColumns
        self.headers: tuple[str, ...] = ()

    def refresh(self) -> None:
        self.beginResetModel()
        ranking = self._state.ranking
        self._rows = self._state.rows()
        self.columns = tuple(ranking.columns) if ranking is not None else ()
        self.headers = (
            (self.PLACE, ranking.label_header, *(c.header for c in self.columns), ranking.subset_header)
            if ranking is not None
            else ()
        )
        self.endResetModel()

    def row(self, i: int):
        """The :class:`~veil.engine.RankedCandidate` in row ``i``."""
        return self._rows[i]

    def cell(self, r, col: int):
        """The value of column ``col`` of ranked candidate ``r``."""
        if col == 0:
            return r.place
        if col == 1:
            return r.label
        if col == len(self.headers) - 1:
            return r.subset
        return r.value(self.columns[col - 2].key)

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.headers)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        r, col = self._rows[index.row()], index.column()
        value = self.cell(r, col)
        if role == Qt.DisplayRole:
            return show_cell(value)
        if role == Qt.ToolTipRole:
            return "\n".join(f"{header}: {show_cell(self.cell(r, i))}" for i, header in enumerate(self.headers))
        if role == Qt.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if r.place == 1:
            if role == Qt.BackgroundRole:
                return HOLDS
            if role == Qt.ForegroundRole:
                return INK
            if role == Qt.FontRole:
                font = QFont()
                font.setBold(True)
                return font
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.headers[section]
        return None


def show_cell(value) -> str:
    """A ranking cell: lists joined, whole numbers as they are, other numbers with three decimals."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.0f}"
    return "" if value is None else str(value)


class RankingPanel(QWidget):
    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.registry = controller.registry
        self.state: RankingState = controller.ranking
        self.run = QComboBox()
        self.run.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.run.currentIndexChanged.connect(lambda _i: self.state.choose(self.run.currentData()))
        self.summary = QLabel(wordWrap=True)
        self.reset = QPushButton("The run's weights")
        self.reset.setToolTip("Set the sliders back to the weights the run was made with")
        self.reset.clicked.connect(self._reset_weights)
        self.save_charts_button = QPushButton("Save charts…")
        self.save_charts_button.setToolTip("Save the charts as PNG or SVG")
        self.save_charts_button.clicked.connect(self._ask_save_charts)
        self.save_data_button = QPushButton("Save data…")
        self.save_data_button.setToolTip("Save the candidate table (with the values at these weights) as CSV")
        self.save_data_button.clicked.connect(self._ask_save_data)
        self.sliders = self._sliders(self.state.method)
        self.problem = ErrorLabel()
        self.model = RankingModel(self.state, self)
        self.table = fast_table(QTableView())
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.help = muted("")
        self._charts = QSplitter(Qt.Vertical)
        self._plots: list | None = None  # (figure, canvas) per chart, made on first use (the window opens sooner)
        self._pending = False  # a draw asked for before the canvases existed, while the panel was hidden
        self._layout()
        self._scheduled = False
        self.state.changed.connect(self._on_state)
        self._on_state()

    def _sliders(self, cls) -> WeightSliders:
        sliders = WeightSliders(cls, across=True)
        sliders.moved.connect(self.state.set_weights)
        return sliders

    @staticmethod
    def _canvas():
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
        from matplotlib.figure import Figure

        figure = Figure(figsize=(6, 3), layout="constrained")
        canvas = FigureCanvasQTAgg(figure)
        canvas.setMinimumHeight(160)
        return figure, canvas

    def charts(self) -> tuple[str, ...]:
        """The chart plugins the shown run's ranker declares."""
        ranker = self.state.ranker
        return tuple(ranker.charts) if ranker is not None else ()

    def _plot(self) -> list:
        """One (figure, canvas) per declared chart, made on first use and when the charts change."""
        wanted = len(self.charts())
        if self._plots is None or len(self._plots) != wanted:
            for _figure, canvas in self._plots or ():
                canvas.setParent(None)
                canvas.deleteLater()
            self._plots = [self._canvas() for _ in range(wanted)]
            for _figure, canvas in self._plots:
                self._charts.addWidget(canvas)
            if self._pending:
                self.redraw()
        return self._plots

    @property
    def figures(self) -> list:
        """The figures of the declared charts, in their order."""
        return [figure for figure, _ in self._plot()]

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._pending:  # once the panel is laid out: a canvas made inside showEvent has no size yet
            QTimer.singleShot(0, lambda: self._plot() if self._pending else None)

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("Run"))
        top.addWidget(self.run)
        top.addStretch(1)
        for b in (self.reset, self.save_charts_button, self.save_data_button):
            top.addWidget(b)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.table, 1)
        lv.addWidget(self.help)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(self._charts)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([380, 560])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.sliders)
        layout.addWidget(self.summary)
        layout.addWidget(self.problem)
        layout.addWidget(split, 1)
        self._outer = layout

    # -- the state changed ----------------------------------------------------------------------
    def _on_state(self) -> None:
        self._offer_runs()
        method = self.state.method
        if method is not self.sliders.cls:  # another method's run: its own weights
            sliders = self._sliders(method)
            self._outer.replaceWidget(self.sliders, sliders)
            self.sliders.deleteLater()
            self.sliders = sliders
        ranker = self.state.ranker
        help_text = ((ranker.help + " ") if ranker is not None and ranker.help else "") + RERANK_NOTE
        if help_text != self.help.text():
            self.help.setText(help_text)
        self.sliders.show_weights(self.state.weights())
        self.model.refresh()
        fit_columns(self.table, max_width=90)
        self.problem.show_message(self.state.problem)
        self.summary.setText(self._summary())
        run_weights = self.state.run_weights()
        self.reset.setEnabled(run_weights is not None and not same_weights(run_weights, self.state.weights()))
        self.schedule()

    def _offer_runs(self) -> None:
        entries = self.state.entries()
        wanted = [(f"#{e.id} {e.label}", e.id) for e in entries]
        shown = [(self.run.itemText(i), self.run.itemData(i)) for i in range(self.run.count())]
        if wanted != shown:
            with QSignalBlocker(self.run):
                self.run.clear()
                for text, run_id in wanted:
                    self.run.addItem(text, run_id)
        i = self.run.findData(self.state.run_id)
        if i != self.run.currentIndex():
            with QSignalBlocker(self.run):
                self.run.setCurrentIndex(i)

    def _summary(self) -> str:
        run = self.state.run_ranking()
        if run is None:
            titles = " or ".join(c.title for c in weighted_methods(self.registry))
            return f"Run {titles or 'a method whose choice can be re-weighted'} to rank its candidates here."
        if not self.model.rowCount():
            return ""
        best = self.model.row(0)
        shown = [
            (c.header, best.value(c.key))
            for c in self.model.columns
            if not isinstance(best.value(c.key), (list, tuple))
        ]
        text = f"Released at these weights: <b>{html.escape(best.label)}</b>, " + ", ".join(
            f"{html.escape(header)} {show_cell(value)}" for header, value in shown
        )
        if best.label != run.chosen.label:
            text += f" (the run chose {html.escape(run.chosen.label)} at w = {show_weights(run.weights)})"
        return text + "." + (f" {html.escape(run.about)}" if run.about else "")

    def _reset_weights(self) -> None:
        weights = self.state.run_weights()
        if weights is not None:
            self.state.set_weights(weights)

    # -- drawing --------------------------------------------------------------------------------
    def schedule(self) -> None:
        """Redraw once the event loop is free (a slider dragged fast draws once per pause)."""
        if not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(0, self.redraw)

    def redraw(self) -> None:
        self._scheduled = False
        frame = self.state.frame()
        charts = self.charts()
        if self._plots is None:
            # nothing drawn yet: the canvases (and matplotlib) wait until there is something to draw
            # and the panel is shown, or a figure is asked for, so the window opens sooner
            self._pending = bool(charts)
            if charts and self.isVisible():
                self._pending = False
                self._plot()
                self.schedule()  # drawn once the new canvases are laid out (a canvas without a size cannot draw)
            return
        self._pending = False
        for name, (figure, canvas) in zip(charts, self._plot()):
            figure.clear()
            if frame is not None and not self.state.problem and name in self.registry.names("chart"):
                try:
                    draw_chart(self.registry, PluginCall(name, {"weights": self.state.weights_text()}), frame, figure)
                except BadInput as exc:
                    figure.clear()
                    figure.text(0.5, 0.5, str(exc), ha="center", va="center", color="#5f6368", wrap=True)
            canvas.draw_idle()

    # -- saving ---------------------------------------------------------------------------------
    def _stem(self) -> str:
        """A file name from the ranking's title ("E(S) ranking" → "e-s-ranking")."""
        return re.sub(r"[^a-z0-9]+", "-", self.state.title().lower()).strip("-") or "ranking"

    def _ask_save_charts(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Save the charts", f"{self._stem()}.png", "PNG image (*.png);;SVG drawing (*.svg)"
        )
        if path:
            if not path.lower().endswith((".png", ".svg")):
                path += ".svg" if "SVG" in chosen else ".png"
            self._saving(self.save_charts, path)

    def _ask_save_data(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the candidate table", f"{self._stem()}.csv", "CSV (*.csv)")
        if path:
            self._saving(self.save_data, path if path.lower().endswith(".csv") else path + ".csv")

    def _saving(self, save, path: str) -> None:
        try:
            written = save(path)
        except (BadInput, OSError) as exc:
            self.controller.error.emit("Cannot save", str(exc), "")
            return
        names = ", ".join(p.name for p in (written if isinstance(written, list) else [written]))
        self.controller.message.emit(f"Saved {names}")

    def save_charts(self, path: str | Path) -> list[Path]:
        """``stem-CHART.ext`` beside ``path`` for each chart the method declares."""
        p = Path(path)
        fmt = p.suffix.lstrip(".").lower() or "png"
        if fmt not in ("png", "svg"):
            raise BadInput(f"save the charts as .png or .svg, not .{fmt}")
        if self.state.frame() is None:
            raise BadInput("there is no ranking to save yet")
        if not self.charts():
            raise BadInput(f"the {self.state.title()} has no charts to save")
        self.redraw()
        return [
            write_atomic(
                p.with_name(f"{p.stem}-{part}.{fmt}"), lambda tmp, f=figure: f.savefig(tmp, format=fmt, dpi=150)
            )
            for part, figure in zip(self.charts(), self.figures)
        ]

    def save_data(self, path: str | Path) -> Path:
        data = self.state.data()
        if data is None:
            raise BadInput("there is no ranking to save yet")
        return write_atomic(Path(path), lambda tmp: data.to_csv(tmp, index=False))
