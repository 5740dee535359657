"""The metric charts tell what the runs did: a (method, x) slot with no run is empty (never "fails
its privacy model"), only a run that failed says so; runs whose settings differ, in a parameter or
in the hierarchies and roles of their data, are never averaged as repeats and the legend says what
differs; charts are offered only for results they apply to, and the first chart after a run is
the one its method declares."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from veil.engine import (
    Hierarchy,
    Outcome,
    PluginCall,
    Role,
    RunSpec,
    Table,
    data_setting,
    draw_chart,
    first_chart,
    fitting_charts,
    make_registry,
    outcome_rows,
    results_table,
)

REGISTRY = make_registry()


def _row(run, label, value, *, metric="loss", holds=True, settings="{}", repeat=0, **params):
    return {
        "run": run,
        "label": label,
        "method": label,
        "model": "k-anonymity",
        **params,
        "repeat": repeat,
        "seed": repeat,
        "settings": settings,
        "holds": holds,
        "metric": metric,
        "value": value,
        "seconds": 0.1,
        "error": "" if holds is not False else "fails",
    }


def _frame(rows, sweep=()):
    frame = pd.DataFrame(rows)
    frame.attrs["sweep"] = list(sweep)
    return frame


def _draw(results, name="metric-bars", **params):
    figure = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(figure)
    draw_chart(REGISTRY, PluginCall(name, {"metric": "loss", **params}), results, figure)
    return figure.axes[0]


def _bars(ax):
    """{legend label: [bar heights]} of a bar chart."""
    from matplotlib.container import BarContainer

    return {c.get_label(): [p.get_height() for p in c.patches] for c in ax.containers if isinstance(c, BarContainer)}


def _fails(ax):
    return [t for t in ax.texts if "fails" in t.get_text()]


def test_a_slot_with_no_run_is_empty_not_a_failure():
    # a at k = 2 and 5; b at k = 5 only; every run holds
    rows = [_row(1, "a", 0.2, k=2), _row(2, "a", 0.4, k=5), _row(3, "b", 0.3, k=5)]
    ax = _draw(_frame(rows, ["k"]))
    assert _fails(ax) == []
    assert _bars(ax) == {"a": [0.2, 0.4], "b": [0.3]}  # no bar of b at k = 2


def test_only_a_run_that_fails_its_model_is_marked():
    rows = [_row(1, "a", 0.2, k=2), _row(2, "a", 0.4, k=5, holds=False), _row(3, "b", 0.3, k=5)]
    ax = _draw(_frame(rows, ["k"]))
    marks = _fails(ax)
    assert len(marks) == 1
    # the mark stands over a's bar at k = 5 (the second slot, left of centre)
    assert marks[0].xy[0] < 1 and marks[0].xy[0] > 0.5 and marks[0].xy[1] == 0.4


def test_a_run_without_the_x_parameter_sits_at_not_set_and_is_not_a_failure():
    rows = [_row(1, "a", 0.2, k=2), _row(2, "b", 0.3, k=np.nan, holds=None)]
    ax = _draw(_frame(rows, ["k"]))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "(not set)"]
    assert _fails(ax) == []


def test_repeats_are_averaged_and_different_settings_never_are():
    same = json.dumps({"hierarchy": "one"})
    other = json.dumps({"hierarchy": "two"})
    repeats = [_row(1, "a", 0.2, repeat=0, settings=same), _row(2, "a", 0.4, repeat=1, settings=same)]
    ax = _draw(_frame(repeats))
    assert np.allclose(_bars(ax)["a"], [0.3])
    apart = [_row(1, "a", 0.2, settings=same), _row(2, "a", 0.4, settings=other)]
    bars = _bars(_draw(_frame(apart)))
    assert sorted(bars) == ["a [1]", "a [2]"]
    assert sorted(h for v in bars.values() for h in v if h) == [0.2, 0.4]


def _table(hierarchy_widths) -> Table:
    frame = pd.DataFrame({"age": [21, 25, 33, 38, 41, 47], "dx": list("xyxyxy")})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE})
    return table.with_hierarchy("age", Hierarchy.intervals(frame["age"], widths=hierarchy_widths))


def _run_rows(run, table, value):
    spec = RunSpec(PluginCall("global-recoding", {}), models=[PluginCall.parse("k-anonymity:k=2")], metrics=("loss",))
    outcome = Outcome(True, "holds", 2.0, {"loss": value}, 0.1)
    return outcome_rows(run, spec, outcome, {}, 0, data_setting(table))


def test_runs_on_different_hierarchies_are_told_apart_in_the_legend():
    rows = _run_rows(1, _table([5, 10]), 0.2) + _run_rows(2, _table([10, 20, 40]), 0.5)
    results = results_table(rows)
    labels = set(results["label"]) | set(results.get("hierarchy of age", []))
    assert any("hierarchy of age" in str(x) or "levels" in str(x) for x in labels)
    ax = _draw(results)
    heights = sorted(h for v in _bars(ax).values() for h in v if h)
    assert heights == [0.2, 0.5]  # two bars, not one averaged with an error bar
    shown = " ".join([*_bars(ax), *(t.get_text() for t in ax.get_xticklabels()), ax.get_xlabel()])
    assert "hierarchy of age" in shown


def test_runs_on_the_same_data_remain_repeats():
    rows = _run_rows(1, _table([5, 10]), 0.2) + _run_rows(2, _table([5, 10]), 0.4)
    results = results_table(rows)
    assert results["label"].nunique() == 1
    assert np.allclose(_bars(_draw(results))["global-recoding"], [0.3])


def test_charts_that_do_not_apply_are_not_offered():
    rows = [_row(1, "mondrian", 0.2, k=2), _row(1, "mondrian", 0.1, metric="ploss", k=2)]
    rows += [_row(2, "mondrian", 0.3, k=5), _row(2, "mondrian", 0.05, metric="ploss", k=5)]
    offered = set(fitting_charts(REGISTRY, _frame(rows, ["k"])))
    assert {"metric-bars", "metric-lines", "privacy-utility"} <= offered
    assert not offered & {"accuracy-vs-epsilon", "accuracy-vs-features", "privacy-aware-es", "privacy-aware-regions"}
    assert fitting_charts(REGISTRY, _frame([_row(1, "mondrian", 0.2)])) == ["metric-bars"]
    assert fitting_charts(REGISTRY, pd.DataFrame()) == ["metric-bars"]


def test_the_first_chart_answers_the_methods_question():
    recoding = [
        _row(1, "global-recoding", 0.3, metric="loss"),
        _row(1, "global-recoding", 0.02, metric="suppressed"),
        _row(1, "global-recoding", 4.0, metric="average-class-size"),
    ]
    call = first_chart(REGISTRY, _frame(recoding))
    assert call == PluginCall("privacy-utility", {"privacy": "suppressed", "utility": "loss"})
    one_mondrian = [_row(1, "mondrian", 0.2, metric="uloss"), _row(1, "mondrian", 0.1, metric="ploss")]
    assert first_chart(REGISTRY, _frame(one_mondrian)) is None  # one point answers nothing: the bars stay
    sweep = one_mondrian + [_row(2, "mondrian", 0.3, metric="uloss"), _row(2, "mondrian", 0.05, metric="ploss")]
    assert first_chart(REGISTRY, _frame(sweep)) == PluginCall(
        "privacy-utility", {"privacy": "ploss", "utility": "uloss"}
    )


def test_frontier_labels_show_even_when_no_setting_differs():
    rows = []
    for run, (p, u) in enumerate([(0.1, 0.5), (0.3, 0.2)], start=1):
        rows += [_row(run, "m", p, metric="ploss"), _row(run, "m", u, metric="uloss")]
    figure = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(figure)
    draw_chart(REGISTRY, PluginCall("privacy-utility", {"privacy": "ploss", "utility": "uloss"}), _frame(rows), figure)
    texts = {t.get_text() for t in figure.axes[0].texts}
    assert texts == {"#1", "#2"}


def test_long_x_labels_are_wrapped_and_never_overlap():
    long = [f"hierarchy of native-country = {n} levels #a{n}b{n}" for n in range(2, 7)]
    rows = [_row(i, "m", 0.1 * i, setting=v) for i, v in enumerate(long, start=1)]
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    draw_chart(
        REGISTRY, PluginCall("metric-bars", {"metric": "loss", "x": "setting"}), _frame(rows, ["setting"]), figure
    )
    figure.canvas.draw()
    ticks = figure.axes[0].get_xticklabels()
    assert all(max(len(line) for line in t.get_text().split("\n")) <= 16 for t in ticks)
    boxes = [t.get_window_extent() for t in ticks]
    assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))
    page = figure.bbox
    assert all(page.x0 <= b.x0 and b.x1 <= page.x1 for b in boxes)  # inside the figure
