"""Mondrian's columns beyond numbers and hierarchies of categories (docs/anonymisation.md#mondrian-and-hierarchies):
a numeric column with a hierarchy attached is cut along it and written as its labels (``numbers=hierarchy``), a
categorical column without one is cut as an ordered set (``categories=set``) or along a generated binary hierarchy
(``categories=hierarchy``). Each against a slow recursive reference written from the definitions, on random
tables; and a hierarchy the run will not use is named before it starts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import (
    BadInput,
    Context,
    GroupView,
    Hierarchy,
    NodeValue,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
    unused_hierarchies,
)
from veil.engine.run.runs import bind_model
from veil.plugins.anonymisation._regions import ordered_hierarchy, set_label, value_order
from veil.plugins.anonymisation.mondrian import Mondrian, partition

REGISTRY = make_registry()
MODELS = ["k-anonymity:k=2", "k-anonymity:k=3", "l-diversity:l=1.5", "t-closeness:t=0.3"]
QIS = ["age", "town", "sex"]


@st.composite
def tables(draw):
    """Ages 20 … 20+s with an interval hierarchy attached; towns and sexes without one."""
    n = draw(st.integers(4, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    top = 20 + draw(st.integers(1, 30))
    towns = ["a", "b", "c", "d", "e", "f", "g"][: draw(st.integers(2, 7))]
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, top + 1, n),
            "town": rng.choice(towns, n, p=rng.dirichlet(np.ones(len(towns)))),
            "sex": rng.choice(["F", "M"], n),
            "dx": rng.choice(["flu", "hiv", "cold"], n, p=[0.5, 0.3, 0.2]),
            "y": rng.choice(["no", "yes"], n),
        }
    )
    table = Table.from_frame(
        frame,
        roles={
            "age": Role.QUASI_IDENTIFIER,
            "town": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "dx": Role.SENSITIVE,
            "y": Role.TARGET,
        },
    )
    width, fanout = draw(st.integers(1, 6)), draw(st.integers(2, 3))
    return table.with_hierarchy("age", Hierarchy.intervals(range(20, top + 1), width=width, fanout=fanout))


# ---------------------------------------------------------------------------------- slow reference
def _order(table, column, how):
    """The column's values in the order the definition gives: most frequent first, or by the share
    of the target's most frequent class, ties by first appearance."""
    values = list(pd.unique(table.frame[column]))
    y = table.frame["y"]
    classes = list(pd.unique(y))
    top = max(classes, key=lambda c: ((y == c).sum(), -classes.index(c)))  # most frequent; ties: first seen

    def key(v):
        rows = table.frame[column] == v
        share = -rows.sum() if how == "frequency" else (y[rows] == top).mean()
        return share, values.index(v)

    return sorted(values, key=key)


def _split_hierarchy(h, values, rows):
    node = h.lca(values)
    if node.level == 0:
        return 0.0, None
    parts = {}
    for r, v in zip(rows, values):
        parts.setdefault(h.generalise(v, node.level - 1), []).append(r)
    return h.leaf_count(node) / len(h.leaves), list(parts.values())


def _split_ranks(ranks, rows, width):
    ordered = sorted(ranks)
    m = ordered[(len(ordered) - 1) // 2]
    left = [r for r, v in zip(rows, ranks) if (v < m if m == max(ranks) else v <= m)]
    return width, [left, [r for r in rows if r not in left]]


def _split(table, rows, qi, params):
    values = [table.frame[qi].iloc[r] for r in rows]
    if qi == "age":
        if params["numbers"] == "hierarchy":
            return _split_hierarchy(table.schema["age"].hierarchy, values, rows)
        span = table.frame["age"].max() - table.frame["age"].min()
        return _split_ranks(values, rows, (max(values) - min(values)) / span if span else 0.0)
    if params["categories"] == "star":
        return _split_hierarchy(table.hierarchy(qi), values, rows)
    order = _order(table, qi, params["order"])
    if params["categories"] == "hierarchy":
        return _split_hierarchy(ordered_hierarchy(order, qi), values, rows)
    ranks = [order.index(v) for v in values]
    lo, hi = min(ranks), max(ranks)
    return _split_ranks(ranks, rows, (hi - lo + 1) / len(order) if hi > lo else 0.0)


def _allowed(table, model, parts):
    labels = np.concatenate([[i] * len(p) for i, p in enumerate(parts)])
    rows = [r for p in parts for r in p]
    view = GroupView.from_labels(labels, table.frame["dx"].iloc[rows].to_numpy(), overall=table.frame["dx"])
    return model.plugin.check_groups(view, model.params).holds


def reference(table, model, params, rows=None):
    rows = list(range(table.n_rows)) if rows is None else rows
    candidates = [(_split(table, rows, qi, params), i) for i, qi in enumerate(QIS)]
    for (width, parts), _ in sorted(candidates, key=lambda c: (-c[0][0], c[1])):
        if width > 0 and len(parts) > 1 and all(parts) and _allowed(table, model, parts):
            return [g for p in parts for g in reference(table, model, params, p)]
    return [sorted(rows)]


def _as_sets(groups):
    return sorted(tuple(np.flatnonzero(groups == g).tolist()) for g in np.unique(groups))


PARAMS = st.fixed_dictionaries(
    {
        "numbers": st.sampled_from(["hierarchy", "median"]),
        "categories": st.sampled_from(["set", "hierarchy", "star"]),
        "order": st.sampled_from(["frequency", "target"]),
    }
)


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from(MODELS), PARAMS)
def test_partitions_equal_the_slow_reference(table, model_text, params):
    model = bind_model(REGISTRY, PluginCall.parse(model_text))
    whole = GroupView.from_labels(np.zeros(table.n_rows), table.frame["dx"])
    if not model.plugin.check_groups(whole, model.params).holds:
        return
    groups = partition(table, model, Context(0), qis=QIS, params=Mondrian.params(params))
    assert _as_sets(groups) == sorted(tuple(g) for g in reference(table, model, params))


@settings(max_examples=40, deadline=None)
@given(tables(), PARAMS)
def test_each_group_is_written_as_what_covers_it(table, params):
    """A hierarchy's lowest node covering the group's values (never a range) where a hierarchy is cut
    along; the set of the group's values, in the chosen order, where a set is cut."""
    result = execute(REGISTRY, table, RunSpec(PluginCall("mondrian", params), PluginCall("k-anonymity", {"k": 2})))
    release = result.release
    assert result.holds
    groups = np.asarray(release.groups)
    order = _order(table, "town", params["order"])
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        ages, towns = table.frame["age"].iloc[rows], table.frame["town"].iloc[rows]
        age_text = str(release.frame["age"].iloc[rows[0]])
        if params["numbers"] == "hierarchy":
            assert age_text == table.schema["age"].hierarchy.lca(ages).label
        else:
            lo, hi = ages.min(), ages.max()
            assert age_text == (str(lo) if lo == hi else f"[{lo}, {hi}]")
        town = release.group_values["town"].iloc[g]
        assert isinstance(town, NodeValue) and set(town.leaves) >= set(towns)
        held = [v for v in order if v in set(towns)]
        if params["categories"] == "set":
            assert town.leaves == tuple(held)
            expected = held[0] if len(held) == 1 else "*" if len(held) == len(order) else set_label(held)
            assert town.label == expected
        elif params["categories"] == "hierarchy":
            assert town.label == ordered_hierarchy(order, "town").lca(towns).label
        else:
            assert town.label == (held[0] if len(held) == 1 else "*")
        assert (release.frame["town"].iloc[rows] == town.label).all()


def test_ordered_hierarchy_halves_the_order_level_by_level():
    h = ordered_hierarchy(["a", "b", "c", "d", "e"], "x")
    assert h.height == 3
    assert [n.label for n in h.nodes(1)] == ["{a, b}", "{c, d}", "e"]
    assert [n.label for n in h.nodes(2)] == ["{a, b, c, d}", "e"]
    assert [n.label for n in h.nodes(3)] == ["*"]
    assert ordered_hierarchy(["a", "b", "c", "d"], "x").height == 2
    assert ordered_hierarchy(["a"], "x").height == 1


def test_value_order_by_frequency_and_by_target():
    frame = pd.DataFrame({"c": ["x", "y", "y", "z", "z", "z", "x", "y"], "t": [1, 0, 0, 1, 1, 0, 1, 1]})
    table = Table.from_frame(frame, roles={"c": Role.QUASI_IDENTIFIER, "t": Role.TARGET})
    labels, ranks = value_order(table, "c", "frequency")
    assert labels == ["y", "z", "x"]  # y and z three times each (y first seen first), x twice
    assert ranks.tolist() == [2, 0, 0, 1, 1, 1, 2, 0]
    labels, _ = value_order(table, "c", "target")  # class 1 (5 of 8) shares: y 1/3, z 2/3, x 1
    assert labels == ["y", "z", "x"]
    frame["t"] = [0, 0, 0, 1, 1, 1, 0, 0]  # class 0 most frequent: x 1, y 1, z 0
    labels, _ = value_order(
        Table.from_frame(frame, roles={"c": Role.QUASI_IDENTIFIER, "t": Role.TARGET}), "c", "target"
    )
    assert labels == ["z", "x", "y"]
    with pytest.raises(BadInput, match="order=target"):
        value_order(Table.from_frame(frame[["c"]], roles={"c": Role.QUASI_IDENTIFIER}), "c", "target")


# ---------------------------------------------------------------------------------- hierarchies never ignored silently
def _adult_like():
    frame = pd.DataFrame(
        {
            "age": [23, 37, 41, 58, 23, 37],
            "edu": ["a", "b", "a", "b", "a", "b"],
            "dx": ["flu", "hiv", "flu", "cold", "hiv", "flu"],
        }
    )
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "edu": Role.INSENSITIVE, "dx": Role.SENSITIVE})
    table = table.with_hierarchy("age", Hierarchy.intervals(range(0, 100), width=10, fanout=2))
    return table.with_hierarchy("edu", Hierarchy.flat(["a", "b"]))


def test_every_unused_hierarchy_is_named_before_the_run():
    table = _adult_like()
    notes = unused_hierarchies(REGISTRY, table, PluginCall("mondrian"))
    assert notes == ("the hierarchy given for 'edu' is not used: only quasi-identifiers are generalised",)
    median = unused_hierarchies(REGISTRY, table, PluginCall("mondrian", {"numbers": "median"}))
    assert len(median) == 2 and "numeric column 'age' is not used" in median[1]
    for method in ("hilbert", "patternka-relational", "global-recoding"):
        assert unused_hierarchies(REGISTRY, table, PluginCall(method)) == notes
    assert unused_hierarchies(REGISTRY, table, PluginCall("all-features")) == (
        "method 'all-features' does not generalise along hierarchies: the hierarchy given for 'age', 'edu' is not used",
    )
    bare = Table.from_frame(table.frame, roles={"age": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE})
    assert unused_hierarchies(REGISTRY, bare, PluginCall("all-features")) == ()


def test_the_command_line_says_so_before_it_runs(tmp_path, capsys):
    from veil.cli import main

    data = tmp_path / "t.csv"
    rows = ["age,sex,dx"] + [f"{20 + i % 30},{'FM'[i % 2]},{['flu', 'hiv'][i % 3 == 0]}" for i in range(60)]
    data.write_text("\n".join(rows) + "\n")
    hierarchy = tmp_path / "age.csv"
    hierarchy.write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(0, 100)))
    common = [
        "run",
        "--data",
        str(data),
        "--quasi",
        "age,sex",
        "--hierarchy",
        f"age={hierarchy}",
        "--model",
        "k-anonymity:k=3",
        "--no-report",
    ]
    assert main([*common, "--method", "mondrian:numbers=median", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: method 'mondrian' with these parameters generalises numbers to ranges")
    assert main([*common, "--method", "mondrian", "--out", str(tmp_path / "b")]) == 0
    assert "note:" not in capsys.readouterr().err
    released = pd.read_csv(next((tmp_path / "b").glob("*.csv")), dtype=str)
    labels = {f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in range(100)} | {str(a) for a in range(100)} | {"*"}
    assert set(released["age"]) <= labels


def test_a_study_names_the_unused_hierarchy_once_before_its_runs(tmp_path, capsys):
    import json

    from veil.cli import main

    data = tmp_path / "t.csv"
    data.write_text("age,sex\n" + "".join(f"{20 + i % 30},{'FM'[i % 2]}\n" for i in range(60)))
    study = tmp_path / "s.json"
    study.write_text(
        json.dumps(
            {
                "data": {
                    "path": "t.csv",
                    "quasi_identifiers": ["age", "sex"],
                    "hierarchies": {"age": "intervals:width=10,fanout=2,bottom=25"},
                },
                "model": "k-anonymity",
                "sweep": {"k": [2, 3]},
                "metrics": ["ncp"],
                "methods": [{"name": "mondrian", "params": {"numbers": "median"}}, "mondrian"],
            }
        )
    )
    assert main(["study", str(study), "--out", str(tmp_path / "out")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: method 'mondrian' with these parameters generalises numbers to ranges of their values: "
        "the hierarchy given for the numeric column 'age' is not used"
    ]


@pytest.mark.parametrize("method", ["hilbert", "patternka-relational", "mondrian"])
def test_the_relational_methods_write_a_numeric_hierarchy_s_labels(method):
    """Every method that generalises along hierarchies uses one attached to a numeric column: each
    group's age is its lowest hierarchy node covering the group's ages, never a range."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(18, 90, 200), "sex": rng.choice(["F", "M"], 200)})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    h = Hierarchy.intervals(range(0, 100), width=5, fanout=2, bottom=20, top=80)
    table = table.with_hierarchy("age", h)
    release = execute(REGISTRY, table, RunSpec(PluginCall(method), PluginCall("k-anonymity", {"k": 4}))).release
    groups = np.asarray(release.groups)
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        assert set(release.frame["age"].iloc[rows].astype(str)) == {h.lca(frame["age"].iloc[rows]).label}
