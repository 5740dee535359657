"""The Utility tab: the selected run's release beside its input, column by column (ARX's utility
perspective). The figures are the engine's (``veil.engine.release_utility``), the same that
``veil utility`` prints: the two distributions drawn side by side, the summary statistics, the
column's loss, and the contingency table of any two columns before and after; every number can be
saved as CSV. For a column the release declares perturbed (``Release.perturbation``, whatever the
method), the figures of ``veil.engine.perturbation_figures`` instead: a number's input and release
histograms overlaid and its original against its perturbed values; a category's counts before,
after and as the transition matrices expect, and each matrix as a heat map.

The figures are computed on a worker (a release of a million noisy numbers takes seconds), with
progress and a Cancel button as the Risk tab's SUDA has; the window stays usable meanwhile.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .widgets import FigureArea

NONE_YET = "Select a finished run to compare its release with the input, column by column."
MOST_BARS = 40  # more values than this are drawn as the most frequent ones, the rest said in the title


class UtilityPanel(QWidget):
    computed = Signal()  # the shown run's figures are computed and shown
    idle = Signal()  # no computation is running (finished, failed or cancelled)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._runner = None  # made on the first computation
        self._job: int | None = None  # the computation running, if any
        self._job_of = None  # (title, input, release) it computes
        self._stopped = None  # a cancelled comparison, which "Compare" starts again
        self.figures = None  # the engine's Utility of the shown run
        self.shifts = None  # the engine's PerturbationFigures, for a release declaring perturbed columns
        self._pending = None  # (title, input, release) to compare when the tab is next shown
        self._before: pd.DataFrame | None = None
        self._after: pd.DataFrame | None = None
        self._hierarchies: dict = {}
        self.summary = QLabel(NONE_YET, wordWrap=True)
        self.column = QComboBox()
        self.column.setToolTip("The released column to compare with the input")
        self.column.currentIndexChanged.connect(self._show_column)
        self.loss = QLabel()
        self.stratum = QComboBox()
        self.stratum.setToolTip("The stratum whose transition matrix is drawn")
        self.stratum.currentIndexChanged.connect(self._show_column)
        self.stratum.hide()
        self.save = QPushButton("Save as CSV…")
        self.save.setToolTip("Write the statistics, the distributions and the contingency tables as CSV files")
        self.save.setEnabled(False)
        self.save.clicked.connect(self._save_dialog)
        self.progress = QProgressBar(maximumWidth=260, textVisible=True)
        self.progress.hide()
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop computing the figures of this release")
        self.cancel.clicked.connect(self.stop)
        self.cancel.hide()
        self.again = QPushButton("Compare")
        self.again.setToolTip("Compute the figures of the selected run's release")
        self.again.clicked.connect(self._compare_again)
        self.again.hide()
        working = QHBoxLayout()
        working.addWidget(self.progress)
        working.addWidget(self.cancel)
        working.addWidget(self.again)
        working.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(QLabel("Column"))
        top.addWidget(self.column, 1)
        top.addWidget(self.loss, 2)
        top.addWidget(self.stratum, 1)
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
        self._plot_area = FigureArea((9, 3.6))
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
        layout.addLayout(working)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    # -- what is shown --------------------------------------------------------------------------
    def clear(self, text: str = NONE_YET) -> None:
        self._cancel_job()
        self._stopped = None
        self.again.hide()
        self.figures = self.shifts = self._before = self._after = self._pending = None
        self.stratum.hide()
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
        self._plot_area.clear()

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
        """Start computing the pending release's figures on the worker (the previous computation,
        of a run no longer shown, is cancelled)."""
        if self._pending is None:
            return
        title, original, release = self._pending
        self._pending = None
        before = getattr(original, "frame", None)
        if before is None or release is None or release.frame is None:
            self.clear(f"{title}: its release has no records to compare with a table.")
            return
        columns = [c for c in release.frame.columns if c in before.columns]
        if not columns:
            self.clear(f"{title}: its release keeps none of the input's columns.")
            return
        self._cancel_job()
        self._stopped = None
        self.again.hide()
        self.summary.setText(f"{title}: comparing the release with the input, column by column…")
        work = functools.partial(compare, original, release, columns)
        self._job_of = (title, original, release)
        self._job = self._runner_made().submit(f"utility of {title}", work, kind="utility")
        self.progress.setRange(0, 0)  # moving until the job reports how far it is
        self.progress.setFormat("")
        self.progress.show()
        self.cancel.show()

    def busy(self) -> bool:
        return self._job is not None

    def stop(self) -> None:
        """Cancel the computation (the tab then offers to compare again)."""
        if self._job is not None:
            self._stopped = self._job_of
            self._cancel_job()
            self.summary.setText(f"{self._stopped[0]}: the comparison was cancelled.")
            self.again.show()
            self._ended()

    def shutdown(self) -> bool:
        """Stop the tab's worker (the window is closing)."""
        return True if self._runner is None else self._runner.shutdown()

    def _compare_again(self) -> None:
        if self._stopped is not None:
            self._pending, self._stopped = self._stopped, None
            self._compute()

    def _cancel_job(self) -> None:
        if self._job is not None and self._runner is not None:
            self._runner.cancel(self._job)
        self._job = self._job_of = None

    def _runner_made(self):
        if self._runner is None:
            from .runner import Runner

            self._runner = Runner(self)
            self._runner.job_progress.connect(self._on_progress)
            self._runner.job_finished.connect(self._on_finished)
            self._runner.job_failed.connect(self._on_failed)
        return self._runner

    def _on_progress(self, job: int, fraction: float, message: str) -> None:
        if job == self._job:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(100 * fraction))
            self.progress.setFormat(message[:40] or "%p %")

    def _on_failed(self, job: int, failure) -> None:
        if job == self._job:
            title = self._job_of[0]
            self._job = self._job_of = None
            self.clear(f"{title}: the comparison failed: {failure.message}")
            self._ended()

    def _ended(self) -> None:
        self.progress.hide()
        self.cancel.hide()
        self.idle.emit()

    def _on_finished(self, job: int, value) -> None:
        if job != self._job:
            return  # a run no longer shown
        title, original, release = self._job_of
        self._job = self._job_of = None
        self._ended()
        self.figures, self.shifts = value
        before = original.frame
        hierarchies = {c.name: c.hierarchy for c in original.schema.columns if c.hierarchy is not None}
        self._before, self._after, self._hierarchies = before, release.frame, hierarchies
        columns = list(self.figures.columns)
        perturbed = list(self.shifts.columns) if self.shifts is not None else []
        generalised = [n for n, c in self.figures.columns.items() if c.generalised and n not in perturbed]
        said = f", {len(perturbed)} perturbed ({', '.join(perturbed)})" if perturbed else ""
        self.summary.setText(
            f"{title}: {self.figures.rows_before:,} records in the input, {self.figures.rows_after:,} released; "
            f"{len(columns)} columns, {len(generalised)} generalised{said}. Bars: records per value, the input on "
            "the left, the release on the right (suppressed records counted apart)"
            + (
                "; a perturbed column: before and after on one axis, and each record's value against its own."
                if perturbed
                else "."
            )
        )
        shown = self.column.currentText()
        for box, names in ((self.column, columns), (self.first, columns), (self.second, columns)):
            box.blockSignals(True)
            box.clear()
            box.addItems(names)
            box.blockSignals(False)
        first = (perturbed or generalised or columns)[0]
        kept = shown in columns and (not perturbed or shown in perturbed)  # a perturbed release opens on one
        self.column.setCurrentText(shown if kept else first)
        # the pair: columns of few values (a perturbed number's contingency has a row per record)
        few = [c for c in columns if not (self.figures.columns[c].numeric and c in perturbed)] or columns
        pair = next((c for c in generalised if c in few), few[0])
        self.first.setCurrentText(pair)
        self.second.setCurrentText(next((c for c in [*generalised, *few] if c != pair), few[min(1, len(few) - 1)]))
        self.save.setEnabled(True)
        self._show_column()
        self._show_pair()
        self.computed.emit()

    def _show_column(self, *_) -> None:
        if self.figures is None or self.column.currentText() not in self.figures.columns:
            return
        c = self.figures.columns[self.column.currentText()]
        how = "generalised" if c.generalised else "as it was"
        shift = self.shifts.columns.get(c.name) if self.shifts is not None else None
        if shift is not None:
            how = "perturbed"
        self.loss.setText(f"attribute loss {c.loss:.4f} · {c.suppressed:,} suppressed · {how}")
        keys = list(dict.fromkeys([*c.summary_before, *c.summary_after]))
        rows = [(key, _show(c.summary_before.get(key)), _show(c.summary_after.get(key))) for key in keys]
        if shift is not None and shift.numeric and shift.paired:  # how far each record moved
            rows.append(("r with the input", "1", _show(shift.correlation)))
            rows.append(("mean |change|", "0", _show(shift.mean_abs_change)))
        self.stats.setRowCount(len(rows))
        for row, texts in enumerate(rows):
            for col, value in enumerate(texts):
                self.stats.setItem(row, col, QTableWidgetItem(value))
        if shift is None:
            self.stratum.hide()
            self._draw(c)
        elif shift.numeric:
            self.stratum.hide()
            self._draw_numbers(shift)
        else:
            self._draw_categories(shift)

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
        return self._plot_area.plot()

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

    def _draw_numbers(self, shift) -> None:
        """A perturbed number: both histograms on the shared bins, and each record's original value
        against its perturbed one (a seeded sample of the records beyond the engine's PAIRS)."""
        figure, canvas = self._plot()
        figure.clear()
        left, right = figure.subplots(1, 2)
        left.stairs(shift.before, shift.edges, fill=True, color="#7f8c8d", alpha=0.55, label="input")
        left.stairs(shift.after, shift.edges, color="#2e86c1", linewidth=1.6, label="release")
        left.set_title(f"{shift.name}: records per bin, input and release", fontsize=9)
        left.set_ylabel("records")
        left.legend(fontsize=8)
        if not shift.paired or not len(shift.original):
            right.set_axis_off()
            right.set_title("the records cannot be paired: the release has another number of them", fontsize=9)
            canvas.draw_idle()
            return
        right.scatter(shift.original, shift.perturbed, s=6, alpha=0.5, color="#2e86c1", linewidths=0)
        lo = float(min(shift.original.min(), shift.perturbed.min()))
        hi = float(max(shift.original.max(), shift.perturbed.max()))
        right.plot([lo, hi], [lo, hi], color="#c0392b", linewidth=0.8)
        shown = (
            f"{len(shift.original):,} of {shift.records:,} records"
            if len(shift.original) < shift.records
            else (f"{shift.records:,} records")
        )
        right.set_title(
            f"{shift.name}: each record's input and release, {shown}; r = {_show(shift.correlation)}", fontsize=9
        )
        right.set_xlabel("input")
        right.set_ylabel("release")
        canvas.draw_idle()

    def _draw_categories(self, shift) -> None:
        """A perturbed category: its counts before, after and as expected, and the transition matrix
        of the chosen stratum as a heat map."""
        figure, canvas = self._plot()
        labels = [t.stratum_text for t in shift.transitions]
        if [self.stratum.itemText(i) for i in range(self.stratum.count())] != labels:
            self.stratum.blockSignals(True)
            self.stratum.clear()
            self.stratum.addItems(labels)
            self.stratum.blockSignals(False)
        self.stratum.setVisible(len(labels) > 1)
        figure.clear()
        left, right = figure.subplots(1, 2)
        x = np.arange(len(shift.categories))
        left.bar(x - 0.2, shift.before, width=0.4, color="#7f8c8d", label="input")
        left.bar(x + 0.2, shift.after, width=0.4, color="#2e86c1", label="release")
        if shift.expected is not None:
            left.scatter(x + 0.2, shift.expected, marker="_", s=200, color="#c0392b", label="expected", zorder=3)
        left.set_xticks(x, [_short(k) for k in shift.categories], rotation=60, ha="right", fontsize=7)
        left.set_ylabel("records")
        left.legend(fontsize=8)
        left.set_title(f"{shift.name}: records per category", fontsize=9)
        if not shift.transitions:
            right.set_axis_off()
            right.set_title("the release declares no transition matrix for this column", fontsize=9)
            canvas.draw_idle()
            return
        t = shift.transitions[max(self.stratum.currentIndex(), 0)]
        image = right.imshow(t.matrix, cmap="Blues", vmin=0.0, vmax=1.0)
        ticks = range(len(t.categories))
        names = [_short(k, 12) for k in t.categories]
        right.set_xticks(ticks, names, rotation=60, ha="right", fontsize=7)
        right.set_yticks(ticks, names, fontsize=7)
        right.set_xlabel("published as")
        right.set_ylabel("original")
        if len(t.categories) <= 12:
            for i in ticks:
                for j in ticks:
                    v = t.matrix[i, j]
                    right.text(
                        j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v > 0.6 else "black"
                    )
        figure.colorbar(image, ax=right, shrink=0.8, label="probability")
        right.set_title(f"transition matrix: {t.stratum_text} ({t.records:,} records)", fontsize=9)
        canvas.draw_idle()

    # -- CSV ------------------------------------------------------------------------------------
    def _save_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save the utility figures as CSV into")
        if folder:
            self.save_csv(Path(folder))

    def save_csv(self, folder: Path) -> list[Path]:
        """Write summary.csv, distributions.csv, the shown pair's contingency tables and a perturbed
        release's figures into ``folder`` (the files ``veil utility --csv`` writes)."""
        if self.figures is None:
            return []
        written = self.figures.write_csv(folder, getattr(self, "contingency_tables", None))
        return written + (self.shifts.write_csv(folder) if self.shifts is not None else [])


def compare(original, release, columns: list[str], ctx):
    """The worker's job: the engine's figures of ``release`` beside ``original`` (a Table), the
    numbers' kind read from its schema, and a perturbed release's before-and-after figures."""
    from veil.engine import numeric_columns, perturbation_figures, release_utility

    before = original.frame
    hierarchies = {c.name: c.hierarchy for c in original.schema.columns if c.hierarchy is not None}
    perturbation = getattr(release, "perturbation", None)
    figures = release_utility(
        before,
        release.frame,
        hierarchies,
        columns,
        numeric_columns(original.schema),
        lambda f, m: ctx.progress(0.9 * f, m),
        perturbation.columns if perturbation is not None else (),
    )
    ctx.progress(0.9, "the perturbed columns")
    shifts = None if perturbation is None else perturbation_figures(before, release.frame, perturbation)
    return figures, shifts


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
