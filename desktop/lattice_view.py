"""The solution space of a run that searched a lattice of generalisation levels, as a workspace:
the lattice drawn level by level, each node coloured by what the search knows of it, the frontier
of its solutions (suppressed records against information loss), and beside them the table of the
transformations to sort and filter. Hovering a node shows it, the wheel zooms and the toolbar pans;
clicking a node or a row chooses it; "Release this transformation" runs the method again on that
node alone. Level limits and attribute weights the search honoured are said above the lattice.

Fed only by the engine's typed :class:`~veil.engine.SolutionSpace` on a release: the view knows no
method. Matplotlib is imported when the view first draws.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from veil.engine import NodeStatus, SolutionSpace

from .solution_table import SHOWN, SpaceFilter, SpaceTableModel, nearest

COLOURS = {NodeStatus.SOLUTION: "#2e7d32", NodeStatus.NOT_SOLUTION: "#c62828", NodeStatus.NOT_CHECKED: "#b0b0b0"}
EDGE_LIMIT = 1500  # nodes up to which the lattice's edges (one level up in one column) are drawn
NONE_YET = "Select a finished run whose method searched a lattice of generalisation levels."


def lattice_layout(space: SolutionSpace) -> tuple[np.ndarray, np.ndarray]:
    """Each node's place: its height (the sum of its levels) upwards, and across, its rank among the
    nodes of that height (ordered by their levels), centred and spread to the widest height's width."""
    height = space.height()
    x = np.zeros(space.n_nodes)
    widest = max(int(np.bincount(height).max()), 1) if space.n_nodes else 1
    order = np.lexsort(tuple(space.levels[:, j] for j in range(space.levels.shape[1] - 1, -1, -1)) + (height,))
    for h in np.unique(height):
        rows = order[height[order] == h]
        count = len(rows)
        x[rows] = (np.arange(count) - (count - 1) / 2) * (widest / max(count, 1)) / max(widest, 1)
    return x, height.astype(float)


def lattice_edges(space: SolutionSpace) -> list[tuple[int, int]]:
    """Pairs of listed nodes one level apart in exactly one column."""
    where = {tuple(row): i for i, row in enumerate(space.levels.tolist())}
    edges = []
    for i, row in enumerate(space.levels.tolist()):
        for j in range(len(row)):
            up = list(row)
            up[j] += 1
            k = where.get(tuple(up))
            if k is not None:
                edges.append((i, k))
    return edges


class SolutionSpaceView(QWidget):
    """The lattice and the frontier of one run's solution space, a node chosen by clicking."""

    node_selected = Signal(int)  # the row of the node chosen
    apply_requested = Signal(object)  # method parameters that release the chosen node

    def __init__(self, parent=None):
        super().__init__(parent)
        self.space: SolutionSpace | None = None
        self.selected: int | None = None
        self._figure = self._canvas = None
        self._points: dict = {}  # matplotlib artist -> the node rows it draws
        self._where: dict = {}  # axes -> (node rows, their x, their y) for hovering
        self._syncing = False  # the table's selection is being set from a chosen node
        self.summary = QLabel(NONE_YET)
        self.summary.setWordWrap(True)
        self.node_text = QLabel("")
        self.node_text.setWordWrap(True)
        self.apply_button = QPushButton("Release this transformation")
        self.apply_button.setToolTip("Run the method again on the chosen node alone, with the same data and models")
        self.apply_button.setEnabled(False)
        self.apply_button.clicked.connect(self._apply)
        self._plot_layout = QVBoxLayout()
        self._plot_layout.setContentsMargins(0, 0, 0, 0)
        plot = QWidget()
        plot.setLayout(self._plot_layout)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(plot)
        self.splitter.addWidget(self._table_panel())
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 1)
        self._sized = False  # the splitter's first sizes are set when the view is first shown
        bottom = QHBoxLayout()
        bottom.addWidget(self.node_text, 1)
        bottom.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._sized:  # two thirds for the plots, a third for the table
            self._sized = True
            width = max(self.width(), 900)
            self.splitter.setSizes([2 * width // 3, width // 3])

    def _table_panel(self) -> QWidget:
        """The transformations as a table: sorted by clicking a header, filtered by status and text."""
        self.model = SpaceTableModel(self)
        self.proxy = SpaceFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
        self.table.horizontalHeader().sortIndicatorChanged.connect(lambda *_: self._sync_table(self.selected))
        self.status_filter = QComboBox()
        self.status_filter.addItems(list(SHOWN))
        self.status_filter.setToolTip("Show only the transformations the search found to be solutions, or not")
        self.status_filter.currentTextChanged.connect(self._filtered)
        self.text_filter = QLineEdit()
        self.text_filter.setPlaceholderText("filter, e.g. age 2")
        self.text_filter.setToolTip("Keep the rows whose levels or description contain this text")
        self.text_filter.setClearButtonEnabled(True)
        self.text_filter.setMinimumWidth(140)
        self.text_filter.textChanged.connect(self._filtered)
        self.shown = QLabel("")
        top = QHBoxLayout()
        top.addWidget(self.status_filter)
        top.addWidget(self.text_filter, 1)
        top.addWidget(self.shown)
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        return panel

    def _filtered(self, *_) -> None:
        self.proxy.set_statuses(self.status_filter.currentText())
        self.proxy.set_text(self.text_filter.text())
        self._count()
        self._sync_table(self.selected)  # the chosen node's row stays in sight

    def _count(self) -> None:
        total = self.model.rowCount()
        self.shown.setText(f"{self.proxy.rowCount():,} of {total:,}")

    def _row_chosen(self, current, _previous) -> None:
        if current.isValid() and not self._syncing:
            self.select(self.proxy.source_row(current.row()))

    # -- what is shown --------------------------------------------------------------------------
    def show_space(self, title: str, space: SolutionSpace | None) -> None:
        """Show ``space`` (None: the run searched no lattice)."""
        self.space, self.selected = space, None
        self.model.set_space(space)  # the table keeps the sort and filter the user chose
        self._count()
        if space is None:
            self.summary.setText(
                NONE_YET if not title else f"{title}: its method searched no lattice of generalisation levels."
            )
            self.node_text.setText("")
            self.apply_button.setEnabled(False)
            if self._figure is not None:
                self._figure.clear()
                self._canvas.draw_idle()
            return
        counts = np.bincount(space.status.astype(np.int64), minlength=3)
        listed = "" if space.complete else f" (the {space.n_nodes:,} it evaluated are drawn)"
        limits = space.limits_text()
        self.summary.setText(
            f"{title}: {space.lattice_nodes:,} transformations{listed}: {counts[NodeStatus.SOLUTION]:,} solutions, "
            f"{counts[NodeStatus.NOT_SOLUTION]:,} not solutions, {counts[NodeStatus.NOT_CHECKED]:,} not checked "
            f"(pruned: none of them can beat the optimum on {space.metric})."
            + (f" Searched within: {limits}." if limits else "")
            + " Hover a node to see it, click it or a row to choose it; the wheel zooms."
        )
        optimum = space.index(space.optimum) if space.optimum is not None else None
        self.select(optimum) if optimum is not None else self._draw()

    def select(self, row: int | None) -> None:
        """Choose a node (its row in the space): describe it, enable releasing it, mark it."""
        space = self.space
        if space is None:
            return
        self.selected = row
        self._sync_table(row)
        if row is None:
            self.node_text.setText("")
            self.apply_button.setEnabled(False)
        else:
            self.node_text.setText(space.describe(row))
            self.apply_button.setEnabled(int(space.status[row]) != NodeStatus.NOT_SOLUTION)
            self.node_selected.emit(row)
        self._draw()

    def _sync_table(self, row: int | None) -> None:
        """Select the chosen node's row in the table (when the filter shows it)."""
        where = None if row is None else self.proxy.proxy_row(row)
        self._syncing = True
        try:
            if where is None:
                self.table.clearSelection()
            else:
                self.table.selectRow(where)
                self.table.scrollTo(self.proxy.index(where, 0))
        finally:
            self._syncing = False

    def _apply(self) -> None:
        if self.space is not None and self.selected is not None:
            self.apply_requested.emit(self.space.params_for(self.space.levels[self.selected]))

    # -- drawing --------------------------------------------------------------------------------
    @property
    def figure(self):
        return self._plot()[0]

    def _plot(self):
        if self._canvas is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg, NavigationToolbar2QT
            from matplotlib.figure import Figure

            self._figure = Figure(figsize=(9, 4.5), layout="constrained")
            self._canvas = FigureCanvasQTAgg(self._figure)
            self.toolbar = NavigationToolbar2QT(self._canvas, self)  # pan, zoom to a box, back home
            self._plot_layout.addWidget(self.toolbar)
            self._plot_layout.addWidget(self._canvas, 1)
            self._canvas.mpl_connect("pick_event", self._picked)
            self._canvas.mpl_connect("motion_notify_event", self._hovered)
            self._canvas.mpl_connect("scroll_event", self._scrolled)
        return self._figure, self._canvas

    def _draw(self) -> None:
        figure, canvas = self._plot()
        figure.clear()
        self._points, self._where = {}, {}
        space = self.space
        if space is None or not space.n_nodes:
            canvas.draw_idle()
            return
        lattice, frontier = figure.subplots(1, 2, width_ratios=[3, 2])
        self._draw_lattice(lattice, space)
        self._draw_frontier(frontier, space)
        canvas.draw_idle()

    def _draw_lattice(self, ax, space: SolutionSpace) -> None:
        x, y = lattice_layout(space)
        self._where[ax] = (np.arange(space.n_nodes), x, y)
        if space.n_nodes <= EDGE_LIMIT:
            for a, b in lattice_edges(space):
                ax.plot([x[a], x[b]], [y[a], y[b]], color="#dddddd", linewidth=0.6, zorder=1)
        solutions = space.status == NodeStatus.SOLUTION
        loss = space.loss[solutions]
        span = float(np.nanmax(loss) - np.nanmin(loss)) if len(loss) else 0.0
        small = 14 if space.n_nodes > 2000 else 36
        for status in NodeStatus:
            rows = np.flatnonzero(space.status == status)
            if not len(rows):
                continue
            size = np.full(len(rows), float(small))
            if status is NodeStatus.SOLUTION and span > 0:  # less loss, larger point
                size = small * (1.0 + 2.0 * (np.nanmax(loss) - space.loss[rows]) / span)
            points = ax.scatter(
                x[rows],
                y[rows],
                s=size,
                c=COLOURS[status],
                label=status.words,
                zorder=2,
                picker=True,
                pickradius=4,
                edgecolors="none",
            )
            self._points[points] = rows
        self._mark(ax, x, y, space)
        ax.set_ylabel("height (sum of the levels)")
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # heights are whole numbers
        ax.set_xticks([])
        limited = space.lowest is not None and (space.lowest, space.highest) != (
            (0,) * len(space.columns),
            space.heights,
        )
        ax.set_title("Lattice of transformations" + (" (levels limited)" if limited else ""), fontsize=10)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=3, fontsize=8, frameon=False)

    def _draw_frontier(self, ax, space: SolutionSpace) -> None:
        rows = np.flatnonzero(space.status == NodeStatus.SOLUTION)
        x, y = space.suppressed.astype(float), space.loss
        self._where[ax] = (rows, x[rows], y[rows])
        if len(rows):
            points = ax.scatter(
                x[rows],
                y[rows],
                s=18,
                c=COLOURS[NodeStatus.SOLUTION],
                alpha=0.6,
                picker=True,
                pickradius=4,
                edgecolors="none",
                label="solutions",
            )
            self._points[points] = rows
            best = space.frontier()
            ax.step(x[best], y[best], where="post", color="#1b5e20", linewidth=1.2, label="frontier")
        self._mark(ax, x, y, space)
        ax.set_xlabel("records suppressed")
        ax.set_ylabel(f"{space.metric} (lower keeps more)")
        ax.set_title("Solutions and their frontier", fontsize=10)
        ax.legend(loc="upper right", fontsize=8, frameon=False)

    def _mark(self, ax, x, y, space: SolutionSpace) -> None:
        optimum = space.index(space.optimum) if space.optimum is not None else None
        if optimum is not None:
            ax.scatter(
                [x[optimum]],
                [y[optimum]],
                s=220,
                marker="*",
                c="#f9a825",
                edgecolors="black",
                linewidths=0.8,
                zorder=4,
                label="optimum",
            )
        if self.selected is not None:
            ax.scatter(
                [x[self.selected]],
                [y[self.selected]],
                s=160,
                facecolors="none",
                edgecolors="#1565c0",
                linewidths=2.0,
                zorder=5,
                label="chosen",
            )

    def _hovered(self, event) -> None:
        """Show the node under the pointer (within a few pixels) as a tooltip."""
        row = self._node_at(event)
        if row is None:
            QToolTip.hideText()
            return
        QToolTip.showText(QCursor.pos(), self.space.describe(row), self._canvas)

    def _node_at(self, event) -> int | None:
        where = self._where.get(event.inaxes)
        if where is None or self.space is None or event.x is None:
            return None
        rows, x, y = where
        xy = event.inaxes.transData.transform(np.column_stack([x, y]).astype(float))
        i = nearest(xy, event.x, event.y, 5 * self._figure.dpi / 72)
        return None if i is None else int(rows[i])

    def _scrolled(self, event) -> None:
        """Zoom the axes under the pointer about it: up zooms in, down out."""
        ax = event.inaxes
        if ax is None or event.xdata is None:
            return
        factor = 0.8 if event.button == "up" else 1.25
        for get, set_, at in ((ax.get_xlim, ax.set_xlim, event.xdata), (ax.get_ylim, ax.set_ylim, event.ydata)):
            lo, hi = get()
            set_(at - (at - lo) * factor, at + (hi - at) * factor)
        self._canvas.draw_idle()

    def _picked(self, event) -> None:
        rows = self._points.get(event.artist)
        indices = getattr(event, "ind", None)
        if rows is None or indices is None or not len(indices):
            return
        self.select(int(rows[int(indices[0])]))
