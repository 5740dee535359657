"""Re-identification risk computed by the engine (ARX's prosecutor, journalist and marketer)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import (
    PluginCall,
    Recipe,
    RunSpec,
    execute,
    load_demo,
    make_registry,
    reidentification_risk,
    release_risk,
)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=60), st.floats(0.0, 1.0), st.integers(0, 3))
def test_risk_against_its_definitions_group_by_group(groups, threshold, extra):
    """Oracle: walk the groups one by one (sizes f in the release, F = f + extra in a population)."""
    labels = pd.Series(groups)
    f = labels.map(labels.value_counts()).to_numpy()
    population = f + extra
    r = reidentification_risk(f, threshold=threshold, population_sizes=population)
    n = len(groups)
    per_group = labels.value_counts()
    assert r.prosecutor_max == pytest.approx(1 / per_group.min())
    assert r.prosecutor_avg == pytest.approx(len(per_group) / n)
    assert r.records_at_risk == pytest.approx(sum(c for c in per_group if 1 / c > threshold) / n)
    assert r.journalist_max == pytest.approx(1 / (per_group.min() + extra))
    assert r.marketer == pytest.approx(sum(c / (c + extra) for c in per_group) / n)
    same = reidentification_risk(f, threshold=threshold)
    assert same.journalist_max == same.prosecutor_max and same.marketer == pytest.approx(same.prosecutor_avg)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=60), st.floats(0.0, 1.0))
def test_one_entry_per_group_weighted_by_its_size_gives_the_per_record_figures(groups, threshold):
    """What a release in parts is assessed from (its classes counted): the report's every risk figure."""
    from veil.engine.release.assessment import class_risk, risk_figures

    labels = pd.Series(groups)
    per_record = labels.map(labels.value_counts()).to_numpy()
    classes = labels.value_counts().to_numpy()
    got, expected = class_risk(classes, ["q"], threshold), risk_figures(per_record, ["q"], threshold)
    assert got.pop("group_sizes") == pytest.approx(expected.pop("group_sizes"))
    assert got.pop("columns") == expected.pop("columns") == ["q"]
    assert got == pytest.approx(expected)
    by_class = reidentification_risk(np.r_[classes, 7], threshold=threshold, weights=np.r_[classes, 0])
    assert by_class.to_dict() == pytest.approx(reidentification_risk(per_record, threshold=threshold).to_dict())


def test_a_population_smaller_than_the_release_is_refused():
    with pytest.raises(ValueError):
        reidentification_risk([2, 2], population_sizes=[1, 2])


def test_the_risk_metrics_and_the_report_agree_with_the_engine():
    registry = make_registry()
    result = execute(registry, load_demo(), RunSpec(PluginCall("all-features")))
    r = release_risk(result.release, threshold=0.2)
    for name, value in (
        ("prosecutor-risk-max", r.prosecutor_max),
        ("prosecutor-risk-avg", r.prosecutor_avg),
        ("records-at-risk", r.records_at_risk),
    ):
        metric = registry.metric(name)
        assert metric.compute(result.data, result.release, metric.params(), None) == pytest.approx(value)
    assert np.isnan(reidentification_risk([]).prosecutor_max)


def test_the_target_keeps_its_column_name_in_a_binary_release_and_verify_finds_it(tmp_path):
    from veil.cli import main

    registry = make_registry()
    for method in ("greedy-hamdist", "all-features"):
        spec = RunSpec(
            PluginCall(method),
            PluginCall("k-ac", {"k": 5}) if method != "all-features" else None,
            recipe=Recipe.default_for(load_demo()),
        )  # both on the recipe's binary features
        result = execute(registry, load_demo(), spec)
        assert result.release.target == "readmitted_30d" and "readmitted_30d" in result.release.frame.columns
    out = tmp_path / "out"
    assert (
        main(["run", "--demo", "--method", "greedy-hamdist", "--model", "k-ac:k=5", "--no-report", "--out", str(out)])
        == 0
    )
    assert main(["verify", str(out / "release.csv"), "--target", "readmitted_30d", "--model", "k-ac:k=5"]) == 0
