"""The efficient frontier chart: orientation from declared metrics, dominated points hollow in their
method's colour, runs tagged, labels that never overlap."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from matplotlib.figure import Figure

from veil.engine import BadInput, PluginCall, draw_chart, make_registry
from veil.plugins.charts.basic import efficient_frontier


def _results(points, metrics=("ploss", "uloss")):
    rows = []
    for run, (px, py) in enumerate(points):
        for metric, value in zip(metrics, (px, py)):
            rows.append(
                {
                    "run": run,
                    "label": "mondrian",
                    "method": "mondrian",
                    "model": "k-anonymity",
                    "k": 10 * run,
                    "repeat": 0,
                    "seed": 0,
                    "holds": True,
                    "metric": metric,
                    "value": value,
                    "seconds": 0.1,
                    "error": "",
                }
            )
    return pd.DataFrame(rows)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=12), st.booleans(), st.booleans())
def test_the_frontier_is_exactly_the_undominated_points(points, mx, my):
    pts = np.array(points, dtype=float)
    front = set(efficient_frontier(pts, (mx, my)).tolist())
    sign = np.array([1 if mx else -1, 1 if my else -1])
    for i, p in enumerate(pts * sign):
        dominated = any((q >= p).all() and (q > p).any() for j, q in enumerate(pts * sign) if j != i)
        assert (i in front) == (not dominated)


def test_losses_are_minimised_as_the_metrics_declare():
    registry = make_registry()
    # (ploss, uloss): lower is better on both; (0.1, 0.1) dominates (0.2, 0.2) and (0.3, 0.1)
    figure = Figure()
    draw_chart(
        registry,
        PluginCall("privacy-utility", {"privacy": "ploss", "utility": "uloss"}),
        _results([(0.1, 0.1), (0.2, 0.2), (0.3, 0.1), (0.05, 0.3)]),
        figure,
    )
    tagged = [tuple(runs) for _, runs in figure.veil_runs]
    assert tagged == [(0, 3), (1, 2)]  # the frontier, then the dominated runs (hollow)
    dots, rings = (artist for artist, _ in figure.veil_runs)
    assert rings.get_facecolor().size == 0 or rings.get_facecolor()[:, 3].max() == 0  # hollow
    assert (dots.get_facecolor()[0][:3] == rings.get_edgecolor()[0][:3]).all()  # the method's colour
    ax = figure.axes[0]
    assert "lower is more private" in ax.get_xlabel() and "lower is better" in ax.get_ylabel()
    assert {t.get_text() for t in ax.texts} == {"k=0", "k=10", "k=20", "k=30"}  # every point named


def test_an_undeclared_orientation_asks_the_user():
    registry = make_registry()
    with pytest.raises(BadInput, match="not declared"):
        draw_chart(
            registry,
            PluginCall("privacy-utility", {"privacy": "mystery", "utility": "uloss"}),
            _results([(1, 2)], metrics=("mystery", "uloss")),
            Figure(),
        )
    figure = Figure()
    draw_chart(
        registry,
        PluginCall("privacy-utility", {"privacy": "mystery", "utility": "uloss", "privacy_better": "higher"}),
        _results([(1, 2), (2, 2)], metrics=("mystery", "uloss")),
        figure,
    )
    assert [runs for _, runs in figure.veil_runs] == [[1], [0]]  # higher is more private: run 1 on the frontier


def test_runs_that_fail_their_model_are_never_on_the_frontier():
    registry = make_registry()
    results = _results([(0.1, 0.1), (0.2, 0.2), (0.0, 0.0)])
    results.loc[results["run"] == 2, "holds"] = False  # the best point fails its model: it cannot be chosen
    results["settings"] = '{"a long": "json"}'
    figure = Figure()
    draw_chart(registry, PluginCall("privacy-utility", {"privacy": "ploss", "utility": "uloss"}), results, figure)
    tagged = [runs for _, runs in figure.veil_runs]
    assert tagged == [[0], [1], [2]]  # the frontier; dominated; failing (its own marker)
    assert {t.get_text() for t in figure.axes[0].texts} == {"k=0", "k=10"}  # settings JSON never labels a point


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=40), st.sampled_from([1, 300]))
def test_labels_never_overlap_and_every_point_is_labelled_or_counted(points, scale):
    registry = make_registry()
    figure = Figure(figsize=(7, 4.5))
    draw_chart(
        registry,
        PluginCall("privacy-utility", {"privacy": "ploss", "utility": "uloss"}),
        _results([(x * scale, y * scale) for x, y in points]),
        figure,
    )  # data far outside [0, 1] too
    renderer = figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in figure.axes[0].texts]
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    assert len(boxes) + figure.veil_hidden_labels == len(points)
    axes = figure.axes[0].get_window_extent(renderer)
    assert all(axes.x0 <= b.x0 and b.x1 <= axes.x1 and axes.y0 <= b.y0 and b.y1 <= axes.y1 for b in boxes)


@pytest.mark.parametrize(
    "points",
    [
        [(0.0, 1.0), (1.0, 0.0)],
        [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0)],
        [(0.1, 0.2), (0.1, 0.2), (0.1, 0.2)],
        [(5, 13), (20, 45), (106, 241)],
    ],
)
def test_a_few_points_are_all_labelled(points):
    """Points in the corners, on one line, on top of one another, far from [0, 1]: each named."""
    figure = Figure(figsize=(7, 4.5))
    draw_chart(
        make_registry(),
        PluginCall("privacy-utility", {"privacy": "ploss", "utility": "uloss"}),
        _results(points),
        figure,
    )
    assert figure.veil_hidden_labels == 0
    assert sorted(t.get_text() for t in figure.axes[0].texts) == sorted(f"k={10 * i}" for i in range(len(points)))
