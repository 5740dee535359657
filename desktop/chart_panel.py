"""The chart panel: a chart plugin chosen from the registry draws the results table on a
matplotlib canvas (QtAgg) with its navigation toolbar; the chart saves as PNG or SVG and its data
as CSV. Matplotlib is touched only here, on the GUI thread, and redrawn with ``draw_idle``; it is
imported when the panel first draws, not when the window opens (the window shows sooner)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from veil.engine import BadInput, draw_chart, first_chart, fitting_charts, picked_run, write_atomic

from .forms import ParamForm

METRIC_PARAMS = ("metric", "privacy", "utility")  # chart parameters that name a metric
AXIS_PARAMS = ("x",)  # chart parameters that name a swept parameter


class ChartPanel(QWidget):
    run_picked = Signal(int)  # a point of the chart was clicked: the run it draws

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.registry = controller.registry
        self.state = controller.chart
        self.runs = controller.runs
        self._figure = self._canvas = self._toolbar = None  # made on first use (see _plot)
        self._plot_layout = QVBoxLayout()
        self._plot_layout.setContentsMargins(0, 0, 0, 0)
        self.chooser = QComboBox()
        self.chooser.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.setMinimumContentsLength(30)
        self._offered: list[str] = []  # the charts in the chooser: those that apply to the results
        self._seen_runs: set[int] = set()  # runs drawn before: new ones may call for their own chart
        self._by_hand = False  # the user chose the chart: runs arriving no longer choose it
        self.form_holder = QHBoxLayout()
        self.form: ParamForm | None = None
        self.save_chart_button = QPushButton("Save chart…")
        self.save_chart_button.setToolTip("Save the chart as PNG or SVG")
        self.save_data_button = QPushButton("Save data…")
        self.save_data_button.setToolTip("Save the results the chart draws as CSV")
        self.save_chart_button.clicked.connect(self._ask_save_chart)
        self.save_data_button.clicked.connect(self._ask_save_data)
        top = QHBoxLayout()
        top.addWidget(QLabel("Chart"))
        top.addWidget(self.chooser)
        top.addLayout(self.form_holder, 1)
        top.addWidget(self.save_chart_button)
        top.addWidget(self.save_data_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(self._plot_layout, 1)
        self._scheduled = False
        self._drawn_message = ""
        self._pending = False  # a draw asked for before the canvas existed, while the panel was hidden
        self._offer(self.runs.results())
        self.chooser.currentIndexChanged.connect(self._chosen)
        self.chooser.activated.connect(self._chosen_by_hand)
        self.runs.results_changed.connect(self._results_changed)
        i = self.chooser.findData(self.state.name)
        self.chooser.setCurrentIndex(max(i, 0))
        self._chosen()

    # -- which charts apply ---------------------------------------------------------------------
    def _offer(self, results) -> None:
        """Fill the chooser with the charts that apply to ``results`` (as each declares), keeping
        the current one chosen when it still applies."""
        offered = fitting_charts(self.registry, results) or list(self.registry.names("chart"))
        if offered == self._offered:
            return
        current = self.chooser.currentData()
        self._offered = offered
        blocked = self.chooser.blockSignals(True)
        self.chooser.clear()
        for name in offered:
            cls = self.registry.get("chart", name)
            self.chooser.addItem(cls.title or cls.name, cls.name)
            self.chooser.setItemData(self.chooser.count() - 1, cls.description, 3)  # 3 = Qt.ToolTipRole
        keep = self.chooser.findData(current)
        preferred = self.chooser.findData(self.registry.preferred("chart"))
        self.chooser.setCurrentIndex(keep if keep >= 0 else max(preferred, 0))
        self.chooser.blockSignals(blocked)
        if self.form is not None and self.chooser.currentData() != current:
            self._chosen()

    def _chosen_by_hand(self, *_) -> None:
        self._by_hand = True

    def _results_changed(self) -> None:
        """Offer the charts that apply; when new runs arrived and the user has not chosen a chart,
        show the one that answers what they decide (their method's declared trade-off)."""
        results = self.runs.results()
        runs = set(results["run"]) if len(results) else set()
        new, self._seen_runs = runs - self._seen_runs, runs
        if not runs:
            self._by_hand = False
        self._offer(results)
        call = first_chart(self.registry, results, new) if new and not self._by_hand else None
        if call is not None:
            self.state.values[call.name] = {**self.state.values.get(call.name, {}), **call.params}
            i = self.chooser.findData(call.name)
            if i >= 0 and i != self.chooser.currentIndex():
                self.chooser.setCurrentIndex(i)  # _chosen takes the values just set
            elif i >= 0:
                self.form.set_values(self.state.values[call.name])
                self.state.set(call.name, self.form.values())
        self.schedule()

    # -- the matplotlib canvas, made on first use -------------------------------------------------
    @property
    def figure(self):
        return self._plot()[0]

    @property
    def canvas(self):
        return self._plot()[1]

    @property
    def toolbar(self):
        return self._plot()[2]

    def _plot(self):
        if self._canvas is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg, NavigationToolbar2QT
            from matplotlib.figure import Figure

            self._figure = Figure(figsize=(7, 4.5), layout="constrained")
            self._canvas = FigureCanvasQTAgg(self._figure)
            self._toolbar = NavigationToolbar2QT(self._canvas, self)
            self._plot_layout.addWidget(self._toolbar)
            self._plot_layout.addWidget(self._canvas, 1)
            self._canvas.mpl_connect("pick_event", self._picked)
            # charts that place things by measuring them (the frontier's labels) are drawn again at the new size
            self._canvas.mpl_connect("resize_event", lambda _event: self.schedule())
            if self._pending:
                self.redraw()
        return self._figure, self._canvas, self._toolbar

    @property
    def drawn_message(self) -> str:
        """Why the chart could not be drawn ("" when it was)."""
        if self._pending:
            self._plot()
        return self._drawn_message

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._pending:  # once the panel is laid out: a canvas made inside showEvent has no size yet
            QTimer.singleShot(0, lambda: self._plot() if self._pending else None)

    # -- choosing -------------------------------------------------------------------------------
    def _chosen(self, *_):
        name = self.chooser.currentData()
        if name is None:
            return
        if self.form is not None:
            self.form.setParent(None)
            self.form.deleteLater()
        cls = self.registry.get("chart", name)
        self.form = ParamForm(cls, sweep=False, suggestions=self._suggestions(cls))
        saved = self.state.values.get(name)
        if saved:
            self.form.set_values(saved)
        self.form.changed.connect(self._form_changed)
        self.form_holder.addWidget(self.form)
        self.state.set(name, self.form.values())
        self.schedule()

    def _suggestions(self, cls) -> dict[str, list[str]]:
        metrics = self.runs.metric_names()
        axes = ["", *self.runs.sweep_keys(), "method"]
        return {
            s.name: (metrics if s.name in METRIC_PARAMS else axes)
            for s in cls.param_specs()
            if s.type is str and s.name in METRIC_PARAMS + AXIS_PARAMS
        }

    def _form_changed(self) -> None:
        self.state.set(self.state.name, self.form.values())
        self.schedule()

    def _fit_to_results(self) -> None:
        """Offer the metrics the results have; a metric they lack gives way to one they have."""
        metrics = self.runs.metric_names()
        for name, items in self._suggestions(self.form.plugin).items():
            self.form.set_suggestions(name, items)
            value = self.form.values().get(name)
            if name in METRIC_PARAMS and metrics and value not in metrics:
                self.form.field(name).set(self._preferred(metrics, "privacy" if name == "privacy" else "utility"))
        self.state.set(self.state.name, self.form.values())

    def _preferred(self, metrics: list[str], category: str) -> str:
        """The first computed metric of the category (the privacy model's own value for privacy)."""
        if category == "privacy" and "privacy-value" in metrics:
            return "privacy-value"
        for text in metrics:
            name = text.split(":")[0]
            if name in self.registry.names("metric") and self.registry.get("metric", name).category == category:
                return text
        return metrics[0]

    # -- drawing --------------------------------------------------------------------------------
    def schedule(self) -> None:
        """Redraw once the event loop is free (several changes in a row draw once)."""
        if not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(0, self.redraw)

    def redraw(self) -> None:
        self._scheduled = False
        if self.form is None:
            return
        self._fit_to_results()
        if self._canvas is None:
            # not drawn yet: draw when the panel is shown or its figure is asked for, so opening the
            # window does not wait for matplotlib
            self._pending = True
            if self.isVisible():
                self._pending = False
                self._plot()
                self.schedule()  # drawn once the new canvas is laid out
            return
        self._pending = False
        results = self.runs.results()
        self.figure.clear()
        try:
            draw_chart(self.registry, self.state.call(), results, self.figure)
            self._drawn_message = ""
        except BadInput as exc:
            self.figure.clear()
            self._drawn_message = str(exc)
            text = "Run a configuration to see its results here." if results.empty else str(exc)
            self.figure.text(0.5, 0.5, text, ha="center", va="center", color="#5f6368", wrap=True)
        self.canvas.draw_idle()

    def _picked(self, event) -> None:
        indices = getattr(event, "ind", None)
        if indices is None or not len(indices):
            return
        run = picked_run(self.figure, event.artist, int(indices[0]))
        if run is not None:
            self.run_picked.emit(run)

    # -- saving ---------------------------------------------------------------------------------
    def _ask_save_chart(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Save chart", f"{self.state.name}.png", "PNG image (*.png);;SVG drawing (*.svg)"
        )
        if path:
            if not path.lower().endswith((".png", ".svg")):
                path += ".svg" if "SVG" in chosen else ".png"
            self._saving(self.save_chart, path)

    def _ask_save_data(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the chart's data", f"{self.state.name}.csv", "CSV (*.csv)")
        if path:
            self._saving(self.save_data, path if path.lower().endswith(".csv") else path + ".csv")

    def _saving(self, save, path: str) -> None:
        try:
            save(path)
        except (BadInput, OSError) as exc:
            self.controller.error.emit("Cannot save", str(exc), "")
            return
        self.controller.message.emit(f"Saved {Path(path).name}")

    def save_chart(self, path: str | Path) -> Path:
        p = Path(path)
        fmt = p.suffix.lstrip(".").lower() or "png"
        if fmt not in ("png", "svg"):
            raise BadInput(f"save the chart as .png or .svg, not .{fmt}")
        return write_atomic(p, lambda tmp: self.figure.savefig(tmp, format=fmt, dpi=150))

    def save_data(self, path: str | Path) -> Path:
        return write_atomic(Path(path), lambda tmp: self.runs.results().to_csv(tmp, index=False))
