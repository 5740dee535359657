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
