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


def test_a_project_run_with_a_second_step_says_the_window_leaves_it_out(qtbot, window, tmp_path):
    from veil.engine import load_demo

    data = tmp_path / "small.csv"
    load_demo().frame.head(30).to_csv(data, index=False)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        window.controller.open_path(data)
    path = tmp_path / "chained.veil.json"
    assert window.controller.save_project(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["runs"] = [{"method": {"name": "global-recoding"}, "then": {"name": "pram", "params": {"columns": "sex"}}}]
    path.write_text(json.dumps(saved), encoding="utf-8")
    with qtbot.waitSignal(window.controller.error, timeout=10_000) as blocker:
        window.controller.open_project(path)
    assert blocker.args[0] == "Second steps are not kept" and "global-recoding then pram" in blocker.args[1]
