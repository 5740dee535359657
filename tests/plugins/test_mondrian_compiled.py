"""Mondrian's compiled rounds (models judging a group by its size alone) against its NumPy rounds
and the slow reference, and the release built once per distinct value against the release built
group by group (docs/anonymisation.md#mondrian)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import (
    CancelToken,
    Cancelled,
    Context,
    Hierarchy,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    format_value,
)
from veil.engine.run.runs import bind_model
from veil.plugins.anonymisation import _median_cuts, _regions, mondrian
from veil.plugins.anonymisation._median_cuts import kernels
from veil.plugins.anonymisation.mondrian import MondrianParams, partition

from test_mondrian import QIS, REGISTRY, _as_sets, reference_mondrian, tables

pytestmark = pytest.mark.skipif(kernels() is None, reason="numba is not installed")


class _Rounds:
    def __init__(self, compiled):
        self.compiled = compiled

    def __enter__(self):
        self.real = mondrian._compiled
        mondrian._compiled = lambda units: self.compiled

    def __exit__(self, *exc):
        mondrian._compiled = self.real


@st.composite
def mixed_tables(draw):
    """Numbers narrow and wide (a wide one's medians come from a sort), categories with and without
    a hierarchy, repeated records (units of weight above one)."""
    n = draw(st.integers(2, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    leaves = list("abcdefgh")[: draw(st.integers(1, 8))]
    mids = rng.integers(0, draw(st.integers(1, 3)), len(leaves))
    base = pd.DataFrame(
        {
            "age": rng.integers(0, draw(st.integers(1, 40)), n),
            "income": rng.integers(0, 10**6, n) * draw(st.sampled_from([1, 0])),
            "town": rng.choice(leaves, n),
            "job": rng.choice(list("pqrstuvw")[: draw(st.integers(1, 8))], n),
            "score": rng.normal(size=n).round(draw(st.integers(0, 3))),
        }
    )
    frame = base.iloc[rng.integers(0, n, n + draw(st.integers(0, n)))].reset_index(drop=True)
    table = Table.from_frame(frame, roles=dict.fromkeys(frame.columns, Role.QUASI_IDENTIFIER))
    hierarchy = Hierarchy.from_levels({leaf: [f"m{m}", "*"] for leaf, m in zip(leaves, mids)})
    return table.with_hierarchy("town", hierarchy)


@settings(max_examples=40, deadline=None)
@given(mixed_tables(), st.integers(1, 6), st.sampled_from(["set", "hierarchy", "star"]))
def test_compiled_rounds_cut_and_number_as_the_numpy_rounds(table, k, categories):
    """The same partition with the same group numbers."""
    if k > table.n_rows:
        return
    model = bind_model(REGISTRY, PluginCall("k-anonymity", {"k": k}))
    params = MondrianParams(categories=categories)
    with _Rounds(False):
        expected = partition(table, model, Context(0), params=params)
    with _Rounds(True):
        got = partition(table, model, Context(0), params=params)
    assert np.array_equal(got, expected)


@settings(max_examples=20, deadline=None)
@given(tables(), st.integers(1, 5))
def test_compiled_rounds_equal_the_slow_reference(table, k):
    model = bind_model(REGISTRY, PluginCall("k-anonymity", {"k": k}))
    if k > table.n_rows:
        return
    with _Rounds(True):
        groups = partition(table, model, Context(0), qis=QIS)
    assert _as_sets(groups) == sorted(tuple(g) for g in reference_mondrian(table, model))


def test_a_model_reading_more_than_sizes_takes_the_numpy_rounds():
    """l-diversity judges the sensitive values: the compiled rounds, which count sizes only, never run."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"age": rng.integers(0, 60, 200), "dx": rng.choice(["a", "b", "c"], 200)})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE})
    asked = []
    with _Rounds(True), pytest.MonkeyPatch.context() as patch:
        patch.setattr(mondrian, "run_rounds", lambda *a: asked.append(a))
        execute(REGISTRY, table, RunSpec(PluginCall("mondrian"), PluginCall("l-diversity", {"l": 2})))
        assert not asked
        with pytest.raises(TypeError):  # k-anonymity does reach them (the stand-in returns nothing)
            execute(REGISTRY, table, RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 2})))
        assert asked


def test_a_cancel_between_rounds_stops_the_compiled_run():
    """The run checks for a cancel before each round: cancelled during the third, it runs no fourth."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(0, 90, 3000), "town": rng.choice(list("abcdefgh"), 3000)})
    table = Table.from_frame(frame, roles=dict.fromkeys(frame.columns, Role.QUASI_IDENTIFIER))
    token = CancelToken()
    compiled = dict(_median_cuts.kernels())
    ran = []

    def one_round(*args):
        ran.append(1)
        if len(ran) == 3:
            token.cancel()
        return compiled["_round"](*args)

    spec = RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 2}))
    with _Rounds(True), pytest.MonkeyPatch.context() as patch:
        patch.setattr(_median_cuts, "kernels", lambda: {**compiled, "_round": one_round})
        with pytest.raises(Cancelled):
            execute(REGISTRY, table, spec, Context(0, token=token))
    assert len(ran) == 3


@st.composite
def released_tables(draw):
    """Tables with blanks, many values (sets past 62 values) and hierarchies."""
    n = draw(st.integers(2, 120))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    many = [f"v{i}" for i in range(draw(st.integers(1, 90)))]
    frame = pd.DataFrame(
        {
            "age": rng.integers(0, draw(st.integers(1, 50)), n).astype(float),
            "word": rng.choice(many, n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    if draw(st.booleans()):
        frame.loc[rng.random(n) < 0.15, "age"] = np.nan
        frame.loc[rng.random(n) < 0.15, "word"] = None
    return Table.from_frame(frame, roles=dict.fromkeys(frame.columns, Role.QUASI_IDENTIFIER))


@settings(max_examples=40, deadline=None)
@given(released_tables(), st.sampled_from(["set", "hierarchy", "star"]), st.integers(1, 4))
def test_the_release_built_once_per_value_is_the_release_built_group_by_group(table, categories, k):
    """group_values' distinct values, formatted once each, against formatting every group's value
    (the path Hilbert and relational PatternKa take), and the sets' bit keys against their sorted
    (group, rank) pairs."""
    qis = list(table.frame.columns)
    cols = _regions.qi_columns(table, qis, categories=categories, blanks=True)
    groups = np.random.default_rng(k).integers(0, max(1, table.n_rows // k), table.n_rows)
    groups = pd.factorize(groups)[0]
    distinct: dict = {}
    values = _regions.group_values(cols, groups, distinct=distinct)
    once = _regions.generalised(table, qis, None, groups, values, distinct=distinct)
    each = _regions.generalised(table, qis, None, groups, values)
    assert once.frame.to_csv() == each.frame.to_csv()
    for c in qis:
        assert list(once.frame[c].cat.categories) == list(each.frame[c].cat.categories)
        assert once.frame[c].dtype == each.frame[c].dtype
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_regions, "small_table", lambda count, span, n: False)
        assert _regions.group_values(cols, groups).equals(values)


@settings(max_examples=40, deadline=None)
@given(mixed_tables(), st.integers(1, 6), st.sampled_from(["set", "hierarchy", "star"]))
def test_the_groups_values_from_the_compiled_rounds_extents_are_those_of_their_records(table, k, categories):
    """The compiled rounds give each group's extent (a number's codes, a category's lowest common
    ancestor); its values built from them are the values built from the group's records."""
    if k > table.n_rows:
        return
    model = bind_model(REGISTRY, PluginCall("k-anonymity", {"k": k}))
    params = MondrianParams(categories=categories)
    qis = list(table.frame.columns)
    with _Rounds(True):
        groups, cols, extents = mondrian._partition(table, model, Context(0), qis, [], params)
    assert extents is not None and len(extents[0]) == groups.max() + 1
    given = _regions.group_values(cols, groups, extents=extents)
    read = _regions.group_values(cols, groups)
    assert given.equals(read)
    assert [[format_value(v) for v in given[c]] for c in given] == [[format_value(v) for v in read[c]] for c in read]
    with _Rounds(False):
        assert mondrian._partition(table, model, Context(0), qis, [], params)[2] is None  # the NumPy rounds: read
