"""The Utility tab draws a perturbed release's columns before and after from what the release declares
(``Release.perturbation``): a number's histograms on shared bins and its records' original against
perturbed values, a category's counts and its transition matrices as heat maps."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd


def _finished(window, qtbot, method, values):
    c = window.controller
    window.config_panel.choose(None, [method], values=values, metrics=[])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    window.runs_panel.select_run(entry.id)
    with qtbot.waitSignal(window.utility_panel.computed, timeout=60_000):  # computed on the worker
        window.tabs.setCurrentWidget(window.utility_panel)
    return entry.outcome.result


def test_a_perturbed_number_and_a_perturbed_category_drawn_before_and_after(demo_window, qtbot, tmp_path):
    window, panel = demo_window, demo_window.utility_panel
    table = window.controller.dataset.table.frame

    result = _finished(window, qtbot, "noise-addition", {"columns": "age;length_of_stay", "level": 0.5})
    released = result.release.frame
    assert list(panel.shifts.columns) == ["age", "length_of_stay"]
    assert panel.column.currentText() == "age"  # the first perturbed column is shown first
    left, right = panel.figure.axes[:2]
    shift = panel.shifts.columns["age"]
    # the input's histogram as drawn is numpy's on the shared bins, counted here afresh
    drawn = left.patches[0].get_path().vertices[:, 1].max()
    assert drawn == np.histogram(table["age"], bins=shift.edges)[0].max()
    assert shift.after.sum() == released["age"].notna().sum()
    # each point of the scatter is one record's input value against its released one
    points = right.collections[0].get_offsets()
    pairs = pd.DataFrame({"x": table["age"].to_numpy(float), "y": released["age"].to_numpy(float)})
    assert len(points) == min(len(pairs), 2_000)
    assert set(map(tuple, np.asarray(points))) <= set(map(tuple, pairs.to_numpy()))
    assert f"r = {shift.correlation:.4g}" in right.get_title()

    result = _finished(window, qtbot, "pram", {"columns": "marital_status", "strata": "sex", "retention": 0.6})
    transitions = result.release.perturbation.transitions
    assert len(transitions) == table["sex"].nunique()
    assert panel.column.currentText() == "marital_status" and panel.stratum.isVisibleTo(panel)
    for index, t in enumerate(transitions):
        panel.stratum.setCurrentIndex(index)
        bars, heat = panel.figure.axes[:2]
        assert np.allclose(heat.images[0].get_array(), t.matrix)
        assert t.stratum_text in heat.get_title()
    shift = panel.shifts.columns["marital_status"]
    counts = table["marital_status"].astype(str).value_counts()
    assert shift.before.tolist() == [int(counts.get(k, 0)) for k in shift.categories]
    heights = [p.get_height() for p in bars.patches]
    assert heights[: len(shift.categories)] == shift.before.tolist()
    assert heights[len(shift.categories) :] == shift.after.tolist()
    # invariant PRAM: the expected counts are the input's
    assert np.allclose(shift.expected, shift.before)
    names = {p.name for p in panel.save_csv(tmp_path / "csv")}
    assert {"perturbed-categories.csv", "perturbed-transitions.csv"} <= names

    panel.column.setCurrentText("age")  # a column the run left alone: the usual bars
    assert not panel.stratum.isVisibleTo(panel) and "as it was" in panel.loss.text()


def test_a_second_step_chosen_in_the_form_runs_is_exported_saved_and_reopened(qtbot, window, tmp_path):
    """The method form offers, as a second step, the methods that declare they perturb; the run, its
    details, its export and the project keep it, and reopening the project shows it again."""
    from veil.engine import PluginCall, load_demo
    from veil.desktop.state.tasks import run_details
    from veil.engine import ExportOptions

    data = tmp_path / "small.csv"
    frame = load_demo().frame.head(60)[["mrn", "age", "sex", "marital_status", "diagnosis_group", "length_of_stay"]]
    frame.to_csv(data, index=False)
    c, panel = window.controller, window.config_panel
    with qtbot.waitSignal(c.data_loaded, timeout=10_000):
        c.open_path(data)
    panel.choose("k-anonymity", ["global-recoding"], values={"k": 2}, metrics=[])
    row = panel.rows["global-recoding"]
    offered = {row.then_combo.itemData(i) for i in range(1, row.then_combo.count())}
    assert offered == {cls.name for cls in c.registry.classes("algorithm") if cls.perturbs}
    row.then_combo.setCurrentIndex(row.then_combo.findData("noise-addition"))
    row.then_form.field("columns").set("length_of_stay")
    row.then_form.field("level").set(0.5)
    then = PluginCall("noise-addition", {"columns": "length_of_stay", "level": 0.5})
    assert c.config.then["global-recoding"].name == "noise-addition"
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    assert entry.planned.spec.then == then and "global-recoding then noise-addition" in entry.label
    released = entry.outcome.result.release.frame["length_of_stay"].to_numpy(float)
    assert (released != frame["length_of_stay"].to_numpy(float)).all()  # noise on every record
    header, rows = c.runs.table()
    assert rows[-1][header.index("method")] == "global-recoding then noise-addition"
    details = run_details(entry)
    assert "Then: noise-addition" in details and "Perturbed: length_of_stay" in details

    out = tmp_path / "release"
    with qtbot.waitSignal(c.exported, timeout=60_000) as blocker:
        c.export(entry.id, out, ExportOptions(fmt="csv"), report=False)
    method = blocker.args[0].manifest["method"]
    assert method["name"] == "global-recoding" and method["then"]["name"] == "noise-addition"

    path = tmp_path / "chained.veil.json"
    assert c.save_project(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [PluginCall.parse(r["then"]) for r in saved["runs"]] == [then]
    row.then_combo.setCurrentIndex(0)  # changed after saving: reopening brings the saved step back
    assert "global-recoding" not in c.config.then
    with qtbot.waitSignal(c.data_loaded, timeout=10_000):
        c.open_project(path)
    header, rows = c.runs.table()  # the kept result names both steps too
    assert [r[header.index("method")] for r in rows] == ["global-recoding then noise-addition"]
    row = panel.rows["global-recoding"]
    assert row.then_combo.currentData() == "noise-addition"
    assert row.then_form.values()["columns"] == "length_of_stay" and row.then_form.values()["level"] == 0.5
    assert c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())[0].spec.then == then
