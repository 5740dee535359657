"""The Utility tab shows the engine's figures for the selected run, and `veil utility` prints the
same numbers for the exported release."""

from __future__ import annotations

import json
import math

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
