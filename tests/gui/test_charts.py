"""The chart panel: any registered chart draws the results; charts save as PNG/SVG, data as CSV."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.engine import BadInput


@pytest.fixture
def with_results(demo_window, qtbot):
    c = demo_window.controller
    c.dataset.set_roles(["age", "postcode_district", "admission_month"], "insensitive")
    demo_window.config_panel.choose(
        "k-anonymity", ["all-features"], sweep={"k": "2, 5, 300"}, metrics=["sfc", "min-group-size"]
    )
    with qtbot.waitSignal(c.batch_finished, timeout=20_000):
        c.run()
    return demo_window


def drawn(panel, qtbot):
    qtbot.waitUntil(lambda: not panel._scheduled)
    return panel.figure.axes[0] if panel.figure.axes else None


def _offered(panel) -> list[str]:
    return [panel.chooser.itemData(i) for i in range(panel.chooser.count())]


def test_the_chooser_offers_the_charts_that_apply(window, registry):
    assert _offered(window.chart_panel) == ["metric-bars"]  # nothing to set against anything yet


def test_after_runs_only_fitting_charts_are_offered(with_results, registry):
    offered = _offered(with_results.chart_panel)
    assert {"metric-bars", "metric-lines", "privacy-utility"} <= set(offered)  # a sweep of k, two metrics
    for name in set(registry.names("chart")) - set(offered):  # each chart left out says why
        assert registry.get("chart", name).fits(with_results.controller.runs.results())


def test_no_results_yet_says_so(window, qtbot):
    panel = window.chart_panel
    panel.schedule()
    assert drawn(panel, qtbot) is None
    assert "Run a configuration" in panel.figure.texts[0].get_text()


def test_bars_lines_and_the_frontier(with_results, qtbot):
    panel = with_results.chart_panel
    assert panel.form.values()["metric"] == "sfc"  # auc was not computed: the first utility metric that was
    panel.form.field("metric").set("min-group-size")
    ax = drawn(panel, qtbot)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "5", "300"]
    assert any("fails" in t.get_text() for t in ax.texts)  # k = 300 fails: said on the chart, not blank
    panel.chooser.setCurrentIndex(panel.chooser.findData("metric-lines"))
    ax = drawn(panel, qtbot)
    assert len(ax.lines) == 1 and list(ax.lines[0].get_xdata()) == [2, 5, 300]
    panel.chooser.setCurrentIndex(panel.chooser.findData("privacy-utility"))
    panel.form.field("utility").set("sfc")
    ax = drawn(panel, qtbot)
    assert panel.drawn_message == ""
    assert "efficient frontier" in [t.get_text() for t in ax.get_legend().get_texts()]
    # every holding run's point is named by its setting, on the window's own canvas (data far from [0, 1])
    assert panel.figure.veil_hidden_labels == 0
    assert {t.get_text() for t in ax.texts} >= {"k=2", "k=5"}


def test_a_chart_error_is_shown_on_the_canvas(with_results, qtbot):
    panel = with_results.chart_panel
    panel.form.field("x").set("no-such-parameter")
    drawn(panel, qtbot)
    assert "no parameter 'no-such-parameter'" in panel.drawn_message
    assert panel.figure.texts and "no-such-parameter" in panel.figure.texts[0].get_text()


def test_save_chart_and_data(with_results, qtbot, tmp_path):
    panel = with_results.chart_panel
    drawn(panel, qtbot)
    png, svg, csv = tmp_path / "c.png", tmp_path / "c.svg", tmp_path / "c.csv"
    panel.save_chart(png)
    panel.save_chart(svg)
    panel.save_data(csv)
    assert png.read_bytes().startswith(b"\x89PNG") and b"<svg" in svg.read_bytes()[:400]
    data = pd.read_csv(csv)
    assert sorted(data["k"].unique()) == [2, 5, 300] and set(data["metric"]) == {
        "sfc",
        "min-group-size",
        "privacy-value",
    }
    with pytest.raises(BadInput, match="png or .svg"):
        panel.save_chart(tmp_path / "c.bmp")


def test_the_save_buttons_ask_for_a_file(with_results, qtbot, tmp_path, monkeypatch):
    panel = with_results.chart_panel
    drawn(panel, qtbot)
    target = tmp_path / "bars"
    monkeypatch.setattr(
        "veil.desktop.chart_panel.QFileDialog.getSaveFileName", lambda *a: (str(target), "SVG drawing (*.svg)")
    )
    panel.save_chart_button.click()
    assert (tmp_path / "bars.svg").exists()
    panel.save_data_button.click()
    assert (tmp_path / "bars.csv").exists()


def test_clicking_a_frontier_point_selects_its_run(with_results, qtbot):
    from matplotlib.backend_bases import MouseEvent, PickEvent

    panel = with_results.chart_panel
    panel.chooser.setCurrentIndex(panel.chooser.findData("privacy-utility"))
    panel.form.field("utility").set("sfc")
    drawn(panel, qtbot)
    artist, runs = panel.figure.veil_runs[-1]
    mouse = MouseEvent("button_press_event", panel.canvas, 0, 0)
    with qtbot.waitSignal(panel.run_picked) as picked:
        panel.canvas.callbacks.process("pick_event", PickEvent("pick_event", panel.canvas, mouse, artist, ind=[0]))
    assert picked.args == [runs[0]]
    assert with_results.runs_panel.selected_run() == runs[0]


def test_a_resized_chart_is_drawn_again_at_its_new_size(with_results, qtbot):
    """The frontier places its labels by measuring them: after a resize the chart is drawn anew."""
    panel = with_results.chart_panel
    panel.chooser.setCurrentIndex(panel.chooser.findData("privacy-utility"))
    panel.form.field("utility").set("sfc")
    drawn(panel, qtbot)
    first = panel.figure.axes[0]
    size = panel.canvas.size()
    panel.canvas.resize(size.width() // 2 + 50, size.height() // 2 + 50)
    qtbot.waitUntil(lambda: panel.figure.axes and panel.figure.axes[0] is not first, timeout=5_000)
    assert drawn(panel, qtbot) is not first


def test_after_global_recoding_the_chart_is_loss_against_suppression(demo_window, qtbot):
    c, panel = demo_window.controller, demo_window.chart_panel
    demo_window.config_panel.choose(
        "k-anonymity", ["global-recoding"], values={"k": 5, "suppression": 0.05}, metrics=["loss", "suppressed"]
    )
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    qtbot.waitUntil(lambda: panel.chooser.currentData() == "privacy-utility")
    assert panel.form.values()["privacy"] == "suppressed" and panel.form.values()["utility"] == "loss"
    ax = drawn(panel, qtbot)
    assert panel.drawn_message == "" and ax.get_xlabel().startswith("suppressed (lower is better)")
    # a chart the user chose stays chosen when more runs arrive
    panel.chooser.setCurrentIndex(panel.chooser.findData("metric-bars"))
    panel.chooser.activated.emit(panel.chooser.currentIndex())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    qtbot.waitUntil(lambda: not panel._scheduled)
    assert panel.chooser.currentData() == "metric-bars"
