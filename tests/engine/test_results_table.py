"""The engine's result table over runs of one study or several (the desktop's batches)."""

from __future__ import annotations

import math

from veil.engine import Outcome, PluginCall, RunSpec, outcome_rows, results_table


def _rows(run, method, params, model_k, setting, value=0.5, seed=0):
    spec = RunSpec(PluginCall(method, params), PluginCall("k-anonymity", {"k": model_k}), seed, ("m",))
    return outcome_rows(run, spec, Outcome(True, "holds", None, {"m": value}, 1.5), setting, 0)


def test_a_parameter_named_like_a_result_column_keeps_its_values():
    rows = [r for i, s in enumerate((0.2, 0.4)) for r in _rows(i, "busy", {"seconds": s}, 2, {"seconds": s})]
    frame = results_table(rows, ["seconds"])
    assert frame.attrs["sweep"] == ["seconds (parameter)"]
    assert list(frame["seconds (parameter)"]) == [0.2, 0.4] and list(frame["seconds"]) == [1.5, 1.5]


def test_batches_differing_in_a_fixed_value_get_a_column_and_labels_that_tell_them_apart():
    rows = _rows(0, "a", {"x": 1}, 5, {}) + _rows(1, "a", {"x": 2}, 5, {}) + _rows(2, "b", {}, 5, {})
    rows += _rows(3, "a", {"x": 1}, 5, {}, seed=1)  # a repeat of run 0: no new column, the same label
    frame = results_table(rows, [])
    assert frame.attrs["sweep"] == ["x"] and list(frame["x"][:2]) == [1, 2] and frame["x"].isna().tolist()[2]
    assert frame["label"].tolist() == ["a", "a", "b", "a"]
    assert frame.groupby(["label", "x"], dropna=False)["value"].count().tolist() == [2, 1, 1]
    swept = _rows(0, "a", {"x": 1, "y": 3}, 5, {"x": 1}) + _rows(1, "a", {"x": 1, "y": 4}, 5, {"x": 1})
    widened = results_table(swept, ["x"])
    assert widened["label"].tolist() == ["a · y = 3", "a · y = 4"]  # beyond the x axis: in the label
    assert not math.isnan(widened["value"].sum())
