"""The solution space of a global-recoding run: the lattice and the frontier drawn from the release's
typed SolutionSpace, a node chosen by clicking it, and that node released as a new run."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from veil.engine import NodeStatus


def _run(window, qtbot, **values):
    c = window.controller
    window.config_panel.choose("k-anonymity", ["global-recoding"], values=values, metrics=["min-group-size"])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    return entry


def _pick(view, qtbot, row: int) -> None:
    """Click the point that draws node ``row``, as matplotlib reports a click on it."""
    from matplotlib.backend_bases import MouseEvent, PickEvent

    artist, rows = next((a, r) for a, r in view._points.items() if row in r)
    mouse = MouseEvent("button_press_event", view._canvas, 0, 0)
    with qtbot.waitSignal(view.node_selected) as chosen:
        view._canvas.callbacks.process(
            "pick_event",
            PickEvent("pick_event", view._canvas, mouse, artist, ind=[int(np.flatnonzero(rows == row)[0])]),
        )
    assert chosen.args == [row]


def test_the_lattice_is_shown_and_a_chosen_node_is_released(demo_window, qtbot, tmp_path):
    window = demo_window
    entry = _run(window, qtbot, k=5, suppression=0.05)
    window.runs_panel.select_run(entry.id)
    view = window.lattice_view
    space = entry.outcome.result.release.solution_space
    assert view.space is space and space is not None
    assert window.tabs.isTabVisible(window.tabs.indexOf(view))  # shown once a run searched a lattice
    gen = entry.outcome.result.release.details["generalisation"]
    assert space.optimum == tuple(gen["levels"][c] for c in space.columns)
    assert view.selected == space.index(space.optimum) and "(the optimum)" in view.node_text.text()
    assert f"{space.lattice_nodes:,} transformations" in view.summary.text()
    lattice, frontier = view.figure.axes
    assert sum(len(rows) for rows in view._points.values()) == space.n_nodes + int(
        (space.status == NodeStatus.SOLUTION).sum()
    )  # every node on the lattice, every solution on the frontier
    window.tabs.setCurrentWidget(view)
    window.resize(1500, 950)
    view.grab().save(str(tmp_path / "solution-space.png"))

    others = [r for r in np.flatnonzero(space.status == NodeStatus.SOLUTION) if r != view.selected]
    assert others, "the demo's lattice has more than one solution"
    chosen = int(max(others, key=lambda r: space.loss[r]))  # the worst solution: clearly not the optimum
    _pick(view, qtbot, chosen)
    assert view.node_text.text() == space.describe(chosen) and view.apply_button.isEnabled()
    with qtbot.waitSignal(window.controller.batch_finished, timeout=120_000):
        qtbot.mouseClick(view.apply_button, Qt.LeftButton)
    again = window.controller.runs.entries[-1]
    assert again.id != entry.id and again.outcome is not None and again.outcome.result is not None
    release = again.outcome.result.release
    levels = release.details["generalisation"]["levels"]
    assert tuple(levels[c] for c in space.columns) == tuple(int(x) for x in space.levels[chosen])
    assert release.details["generalisation"]["loss"] == space.loss[chosen]
    assert release.details["generalisation"]["suppressed_records"] == space.suppressed[chosen]
    window.runs_panel.select_run(again.id)
    assert view.space is None and "searched no lattice" in view.summary.text()


def test_a_node_that_is_no_solution_cannot_be_released(demo_window, qtbot):
    entry = _run(demo_window, qtbot, k=5, suppression=0.0)
    demo_window.runs_panel.select_run(entry.id)
    view = demo_window.lattice_view
    bad = np.flatnonzero(view.space.status == NodeStatus.NOT_SOLUTION)
    assert len(bad)
    _pick(view, qtbot, int(bad[0]))
    assert "not a solution" in view.node_text.text() and not view.apply_button.isEnabled()


def test_the_transformations_table_sorts_filters_and_chooses(demo_window, qtbot):
    from matplotlib.backend_bases import MouseEvent

    entry = _run(demo_window, qtbot, k=5, suppression=0.05, min_levels="", max_levels="")
    demo_window.runs_panel.select_run(entry.id)
    view = demo_window.lattice_view
    space = view.space
    assert view.proxy.rowCount() == space.n_nodes  # every node a row
    headers = view.model.headers()
    assert headers[-len(space.columns) :] == list(space.columns)
    assert {"status", space.metric, "suppressed records", "levels summed"} <= set(headers)
    # sorted by the loss: the solutions' losses in order, the optimum first
    loss_column = headers.index(space.metric)
    view.table.sortByColumn(loss_column, Qt.AscendingOrder)
    view.status_filter.setCurrentText("solutions")
    solutions = np.flatnonzero(space.status == NodeStatus.SOLUTION)
    assert view.proxy.rowCount() == len(solutions)
    shown = [float(space.loss[view.proxy.source_row(r)]) for r in range(view.proxy.rowCount())]
    assert shown == sorted(shown) and shown[0] == min(space.loss[solutions])
    # the text filter keeps the nodes with that level
    column = space.columns[0]
    view.status_filter.setCurrentText("all transformations")
    view.text_filter.setText(f"{column} 1")
    assert view.proxy.rowCount() == int((space.levels[:, 0] == 1).sum())
    # a row chooses its node; choosing a node selects its row
    row = view.proxy.source_row(0)
    view.table.selectRow(0)
    assert view.selected == row and view.node_text.text() == space.describe(row)
    view.text_filter.clear()
    view.select(int(solutions[-1]))
    assert view.proxy.source_row(view.table.currentIndex().row()) == int(solutions[-1])
    # hovering a node finds it
    view.figure.canvas.draw()
    lattice = view.figure.axes[0]
    rows, x, y = view._where[lattice]
    px, py = lattice.transData.transform((x[3], y[3]))
    event = MouseEvent("motion_notify_event", view._canvas, px, py)
    assert view._node_at(event) == int(rows[3])


def test_level_limits_and_weights_are_shown(demo_window, qtbot):
    entry = _run(demo_window, qtbot, k=5, suppression=0.05)
    space = entry.outcome.result.release.solution_space
    column = space.columns[0]
    limited = _run(demo_window, qtbot, k=5, suppression=0.05, min_levels=f"{column}:1", weights=f"{column}:3")
    demo_window.runs_panel.select_run(limited.id)
    view = demo_window.lattice_view
    assert view.space.lowest[0] == 1 and (view.space.levels[:, 0] >= 1).all()
    assert f"{column} levels 1–{space.heights[0]}" in view.summary.text()
    assert f"{column} 3" in view.summary.text()
    assert view.space.n_nodes == space.n_nodes * space.heights[0] // (space.heights[0] + 1)
