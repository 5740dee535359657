"""Opening other data clears the runs, results, charts and release preview of the
data before (they were runs on it); a project brings back its own results."""

from __future__ import annotations

from .test_flow import run_and_wait


def test_opening_another_file_clears_the_results(demo_window, qtbot, tmp_path):
    window = demo_window
    window.config_panel.choose("k-anonymity", ["all-features"], sweep={"k": "1, 2"}, metrics=["min-group-size"])
    run_and_wait(window, qtbot, 2)
    panel = window.runs_panel
    assert panel.results_model.rowCount() == 2 and panel.runs_model.rowCount() == 2
    window.tabs.setCurrentWidget(window.release_panel)
    window._preview_run(panel.results_model.run_id(0))
    assert window.release_panel.model.rowCount() > 0
    path = tmp_path / "other.csv"
    path.write_text("age,town\n" + "\n".join(f"{20 + i},{'AB'[i % 2]}" for i in range(30)) + "\n", encoding="utf-8")
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        window.controller.open_path(path)
    assert panel.results_model.rowCount() == 0 and panel.runs_model.rowCount() == 0
    assert window.controller.runs.results().empty and window.controller.runs.entries == []
    assert window.release_panel.model.rowCount() == 0
    assert window.release_panel.summary.text().startswith("Select a finished run")
    window.tabs.setCurrentWidget(window.chart_panel)
    window.chart_panel.redraw()
    qtbot.waitUntil(lambda: not window.chart_panel._scheduled)
    assert window.chart_panel.drawn_message  # nothing to draw: the old results are gone
