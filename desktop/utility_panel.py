"""The Utility tab: the selected run's release beside its input, column by column (ARX's utility
perspective). The figures are the engine's (``veil.engine.release_utility``), the same that
``veil utility`` prints: the two distributions drawn side by side, the summary statistics, the
column's loss, and the contingency table of any two columns before and after; every number can be
saved as CSV.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

NONE_YET = "Select a finished run to compare its release with the input, column by column."
MOST_BARS = 40  # more values than this are drawn as the most frequent ones, the rest said in the title


class UtilityPanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.figures = None  # the engine's Utility of the shown run
        self._pending = None  # (title, input, release) to compare when the tab is next shown
        self._before: pd.DataFrame | None = None
        self._after: pd.DataFrame | None = None
        self._hierarchies: dict = {}
        self._figure = self._canvas = None
        self.summary = QLabel(NONE_YET, wordWrap=True)
        self.column = QComboBox()
        self.column.setToolTip("The released column to compare with the input")
        self.column.currentIndexChanged.connect(self._show_column)
        self.loss = QLabel()
        self.save = QPushButton("Save as CSV…")
        self.save.setToolTip("Write the statistics, the distributions and the contingency tables as CSV files")
        self.save.setEnabled(False)
        self.save.clicked.connect(self._save_dialog)
        top = QHBoxLayout()
        top.addWidget(QLabel("Column"))
        top.addWidget(self.column, 1)
        top.addWidget(self.loss, 2)
        top.addWidget(self.save)
        self.stats = QTableWidget(0, 3)
        self.stats.setHorizontalHeaderLabels(["statistic", "input", "release"])
        self.stats.verticalHeader().hide()
        self.stats.horizontalHeader().setStretchLastSection(True)
        self.first = QComboBox()
        self.second = QComboBox()
        for box in (self.first, self.second):
            box.currentIndexChanged.connect(self._show_pair)
        pair = QHBoxLayout()
        pair.addWidget(QLabel("Contingency of"))
        pair.addWidget(self.first, 1)
        pair.addWidget(QLabel("×"))
        pair.addWidget(self.second, 1)
        self.pair_tabs = QTabWidget()
        self.before_table, self.after_table = QTableWidget(), QTableWidget()
        self.pair_tabs.addTab(self.before_table, "Input")
        self.pair_tabs.addTab(self.after_table, "Release")
        self._plot_area = QWidget()
        self._plot_layout = QVBoxLayout(self._plot_area)
        self._plot_layout.setContentsMargins(0, 0, 0, 0)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addLayout(pair)
        lower_layout.addWidget(self.pair_tabs, 1)
        bottom = QSplitter(Qt.Horizontal)
        bottom.addWidget(self.stats)
        bottom.addWidget(lower)
        bottom.setSizes([380, 700])
        split = QSplitter(Qt.Vertical)
        split.addWidget(self._plot_area)
        split.addWidget(bottom)
        split.setSizes([420, 330])
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    # -- what is shown --------------------------------------------------------------------------
    def clear(self, text: str = NONE_YET) -> None:
        self.figures = self._before = self._after = self._pending = None
        self.summary.setText(text)
        for box in (self.column, self.first, self.second):
            box.blockSignals(True)
            box.clear()
            box.blockSignals(False)
        self.loss.setText("")
        self.stats.setRowCount(0)
        for table in (self.before_table, self.after_table):
            table.clear()
            table.setRowCount(0)
            table.setColumnCount(0)
        self.save.setEnabled(False)
        if self._figure is not None:
            self._figure.clear()
            self._canvas.draw_idle()

    def show_release(self, title: str, original, release) -> None:
        """Compare ``release`` with ``original`` (the Table the run read): at once when the tab is
        shown, else when it next is (the figures cost a pass over every released column)."""
        self._pending = (title, original, release)
        if self.isVisible():
            self._compute()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._compute()

    def _compute(self) -> None:
        from veil.engine import release_utility

        if self._pending is None:
            return
        title, original, release = self._pending
        self._pending = None

        before = getattr(original, "frame", None)
        if before is None or release is None or release.frame is None:
            self.clear(f"{title}: its release has no records to compare with a table.")
            return
        hierarchies = {c.name: c.hierarchy for c in original.schema.columns if c.hierarchy is not None}
        columns = [c for c in release.frame.columns if c in before.columns]
        if not columns:
            self.clear(f"{title}: its release keeps none of the input's columns.")
            return
        self._before, self._after, self._hierarchies = before, release.frame, hierarchies
        self.figures = release_utility(before, release.frame, hierarchies, columns)
        generalised = [n for n, c in self.figures.columns.items() if c.generalised]
        self.summary.setText(
            f"{title}: {self.figures.rows_before:,} records in the input, {self.figures.rows_after:,} released; "
            f"{len(columns)} columns, {len(generalised)} generalised. Bars: records per value, the input on "
            "the left, the release on the right (suppressed records counted apart)."
        )
        shown = self.column.currentText()
        for box, names in ((self.column, columns), (self.first, columns), (self.second, columns)):
            box.blockSignals(True)
            box.clear()
            box.addItems(names)
            box.blockSignals(False)
        first = generalised[0] if generalised else columns[0]
        self.column.setCurrentText(shown if shown in columns else first)
        self.first.setCurrentText(first)
        self.second.setCurrentText(next((c for c in generalised if c != first), columns[min(1, len(columns) - 1)]))
        self.save.setEnabled(True)
        self._show_column()
        self._show_pair()

    def _show_column(self, *_) -> None:
        if self.figures is None or self.column.currentText() not in self.figures.columns:
            return
        c = self.figures.columns[self.column.currentText()]
        how = "generalised" if c.generalised else "as it was"
        self.loss.setText(f"attribute loss {c.loss:.4f} · {c.suppressed:,} suppressed · {how}")
        keys = list(dict.fromkeys([*c.summary_before, *c.summary_after]))
        self.stats.setRowCount(len(keys))
        for row, key in enumerate(keys):
            for col, value in enumerate((key, _show(c.summary_before.get(key)), _show(c.summary_after.get(key)))):
                self.stats.setItem(row, col, QTableWidgetItem(value))
        self._draw(c)

    def _show_pair(self, *_) -> None:
        if self.figures is None or not self.first.currentText() or not self.second.currentText():
            return
        from veil.engine import contingency

        before, after = contingency(self._before, self._after, self.first.currentText(), self.second.currentText())
        for table, frame in ((self.before_table, before), (self.after_table, after)):
            _fill(table, frame)
        self.contingency_tables = (before, after)

    # -- drawing --------------------------------------------------------------------------------
    def _plot(self):
        if self._canvas is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
            from matplotlib.figure import Figure

            self._figure = Figure(figsize=(9, 3.6), layout="constrained")
            self._canvas = FigureCanvasQTAgg(self._figure)
            self._plot_layout.addWidget(self._canvas, 1)
        return self._figure, self._canvas

    @property
    def figure(self):
        return self._plot()[0]

    def _draw(self, c) -> None:
        figure, canvas = self._plot()
        figure.clear()
        left, right = figure.subplots(1, 2, sharey=c.numeric and len(c.before) > MOST_BARS)
        if c.numeric and len(c.before) > MOST_BARS and self._before is not None:
            self._draw_spread(left, right, c)
            canvas.draw_idle()
            return
        after = c.after.copy()
        if c.suppressed:
            after["*"] = c.suppressed
        for ax, counts, side, colour in ((left, c.before, "input", "#7f8c8d"), (right, after, "release", "#2e86c1")):
            shown = counts if len(counts) <= MOST_BARS else counts.sort_values(ascending=False).head(MOST_BARS)
            if len(counts) > MOST_BARS:  # the most frequent, back in the values' order
                shown = counts[counts.index.isin(shown.index)]
            colours = ["#c0392b" if k == "*" and side == "release" else colour for k in shown.index]
            ax.bar(range(len(shown)), shown.to_numpy(), color=colours)
            ax.set_xticks(range(len(shown)), [_short(k) for k in shown.index], rotation=60, ha="right", fontsize=7)
            more = f", the {len(shown)} most frequent of {len(counts):,} values" if len(counts) > len(shown) else ""
            ax.set_title(f"{c.name}: {side}{more}", fontsize=9)
            ax.set_ylabel("records")
        canvas.draw_idle()

    def _draw_spread(self, left, right, c) -> None:
        """A number with many values: histograms on one axis, each released interval's records
        spread evenly over it (the suppressed ones said in the title)."""
        from veil.engine import released_value

        values = pd.to_numeric(self._before[c.name], errors="coerce").dropna().to_numpy(dtype=float)
        edges = np.histogram_bin_edges(values, bins=30)
        left.hist(values, bins=edges, color="#7f8c8d")
        left.set_title(f"{c.name}: input, {len(values):,} records", fontsize=9)
        left.set_ylabel("records")
        heights = np.zeros(len(edges) - 1)
        for text, count in c.after.items():
            v = released_value(text, True)
            lo, hi = (float(v.lo), float(v.hi)) if hasattr(v, "lo") else (float(v), float(v))
            if hi > lo:
                overlap = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None) / (hi - lo)
            else:
                overlap = np.zeros(len(heights))
                overlap[min(max(np.searchsorted(edges, lo, side="right") - 1, 0), len(heights) - 1)] = 1.0
            heights += count * overlap
        right.bar(edges[:-1], heights, width=np.diff(edges), align="edge", color="#2e86c1")
        right.set_title(
            f"{c.name}: release, each interval's records spread over it; suppressed: {c.suppressed:,}", fontsize=9
        )

    # -- CSV ------------------------------------------------------------------------------------
    def _save_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save the utility figures as CSV into")
        if folder:
            self.save_csv(Path(folder))

    def save_csv(self, folder: Path) -> list[Path]:
        """Write summary.csv, distributions.csv and the shown pair's contingency tables into ``folder``
        (the files ``veil utility --csv`` writes)."""
        if self.figures is None:
            return []
        return self.figures.write_csv(folder, getattr(self, "contingency_tables", None))


def _fill(table: QTableWidget, frame: pd.DataFrame) -> None:
    table.clear()
    table.setRowCount(len(frame.index))
    table.setColumnCount(len(frame.columns))
    table.setHorizontalHeaderLabels([str(c) for c in frame.columns])
    table.setVerticalHeaderLabels([str(r) for r in frame.index])
    values = frame.to_numpy()
    for r in range(values.shape[0]):
        for c in range(values.shape[1]):
            item = QTableWidgetItem(f"{int(values[r, c]):,}")
            item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            table.setItem(r, c, item)


def _short(text: str, most: int = 18) -> str:
    text = str(text)
    return text if len(text) <= most else text[: most - 1] + "…"


def _show(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "—" if value != value else f"{value:.4g}"
    return str(value)
