"""The Utility tab shows the engine's figures for the selected run, and `veil utility` prints the
same numbers for the exported release."""

from __future__ import annotations

import json
import math

import numpy as np

import pytest

from veil.cli import main as cli_main
from veil.engine import ExportOptions


@pytest.mark.parametrize("method", ["mondrian", "global-recoding"])
def test_the_desktop_and_the_cli_show_the_same_utility(demo_window, qtbot, tmp_path, capsys, method):
    window, c = demo_window, demo_window.controller
    window.config_panel.choose("k-anonymity", [method], values={"k": 5}, metrics=["loss"])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    window.runs_panel.select_run(entry.id)
    panel = window.utility_panel
    with qtbot.waitSignal(panel.computed, timeout=60_000):  # computed on the worker
        window.tabs.setCurrentWidget(panel)
    figures = panel.figures
    assert figures is not None and figures.rows_before == len(c.dataset.table.frame)
    release = entry.outcome.result.release
    qis = list(release.quasi_identifiers)
    assert any(figures.columns[q].generalised or figures.columns[q].suppressed for q in qis)
    # the loss per attribute is the `loss` metric's share: their mean over the quasi-identifiers is the metric
    mean = sum(figures.columns[q].loss for q in qis) / len(qis)
    assert math.isclose(mean, entry.outcome.metrics["loss"], rel_tol=1e-9, abs_tol=1e-12)
    if method == "mondrian":
        window.resize(1500, 950)
        panel.column.setCurrentText("age")
        panel.grab().save(str(tmp_path / "utility.png"))

    out = tmp_path / "release"
    with qtbot.waitSignal(c.exported, timeout=120_000):
        c.export(entry.id, out, ExportOptions(fmt="csv"), report=False)
    capsys.readouterr()
    assert cli_main(["utility", str(out), "--json", "--pair", f"{qis[0]},sex"]) == 0
    printed = json.loads(capsys.readouterr().out)
    for name, column in figures.columns.items():
        cli = printed["columns"][name]
        assert cli["attribute_loss"] == pytest.approx(column.loss), name
        assert cli["after"] == {k: int(v) for k, v in column.after.items()}, name
        assert cli["suppressed_records"] == column.suppressed, name
        assert cli["summary_after"] == pytest.approx(column.summary_after, nan_ok=True), name
    panel.first.setCurrentText(qis[0])
    panel.second.setCurrentText("sex")
    assert printed["contingency"]["after"]["records"] == panel.contingency_tables[1].to_numpy().tolist()
    written = panel.save_csv(tmp_path / "csv")
    assert {p.name for p in written} == {
        "summary.csv",
        "distributions.csv",
        "contingency-before.csv",
        "contingency-after.csv",
    }


def test_the_tab_says_why_when_the_selected_run_has_no_release(demo_window):
    demo_window.runs_panel.run_selected.emit(7)
    assert "Run #7 has no release" in demo_window.utility_panel.summary.text()


def test_a_noisy_number_is_compared_on_the_worker_with_cancel_and_a_numbers_figures(window, qtbot, tmp_path):
    """The tab computes its figures on a worker: Cancel stops them and says so, Compare starts them
    again; a perturbed number's statistics are a number's (quartiles, mean, deviation, the records'
    correlation with their input), never a category's mode."""
    from veil.engine import load_demo

    data = tmp_path / "small.csv"
    load_demo().frame.head(60)[["mrn", "age", "sex", "length_of_stay"]].to_csv(data, index=False)
    c, panel = window.controller, window.utility_panel
    with qtbot.waitSignal(c.data_loaded, timeout=10_000):
        c.open_path(data)
    window.config_panel.choose(None, ["noise-addition"], values={"columns": "length_of_stay", "level": 0.5}, metrics=[])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    window.runs_panel.select_run(entry.id)
    with qtbot.waitSignal(panel.idle, timeout=10_000):
        window.tabs.setCurrentWidget(panel)  # starts the computation on the worker
        assert panel.busy() and panel.cancel.isVisibleTo(panel)
        panel.stop()
    assert panel.figures is None and "cancelled" in panel.summary.text() and panel.again.isVisibleTo(panel)
    with qtbot.waitSignal(panel.computed, timeout=60_000):
        panel.again.click()
    assert not panel.busy() and not panel.progress.isVisibleTo(panel) and not panel.again.isVisibleTo(panel)
    panel.column.setCurrentText("length_of_stay")
    shown = {panel.stats.item(r, 0).text(): panel.stats.item(r, 2).text() for r in range(panel.stats.rowCount())}
    assert "mode" not in shown and {"q1", "median", "q3", "mean", "std", "r with the input"} <= set(shown)
    released = entry.outcome.result.release.frame["length_of_stay"].to_numpy(float)
    assert float(shown["q3"]) == pytest.approx(np.quantile(released, 0.75), rel=1e-3)
    assert float(shown["mean"]) == pytest.approx(released.mean(), rel=1e-3)
    original = c.dataset.table.frame["length_of_stay"].to_numpy(float)
    assert float(shown["r with the input"]) == pytest.approx(np.corrcoef(original, released)[0, 1], rel=1e-3)
