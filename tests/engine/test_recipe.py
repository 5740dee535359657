"""Binarisation recipes: each rule against a direct computation, and fitted recipes reproduce."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.engine import BadInput, Recipe, Role, Step, Table, binarise


@pytest.fixture
def table():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "id": range(200),
            "age": rng.integers(18, 90, 200),
            "sex": rng.choice(["F", "M"], 200),
            "dose": rng.normal(0, 1, 200).round(3),
            "flag": rng.integers(0, 2, 200),
            "y": rng.choice(["yes", "no"], 200),
        }
    )
    return Table.from_frame(frame, roles={"id": Role.IDENTIFIER, "y": Role.TARGET})


def test_one_hot(table):
    m = binarise(table, [{"column": "sex", "rule": "one-hot"}])
    assert m.feature_names == ["sex=F", "sex=M"]
    assert np.array_equal(m.to_dense()[:, 0], (table.frame["sex"] == "F").to_numpy())
    assert m.labels.tolist() == table.frame["y"].tolist()


def test_cuts_are_right_open(table):
    m = binarise(table, [{"column": "age", "rule": "cuts", "cuts": [30, 60]}])
    age = table.frame["age"].to_numpy()
    d = m.to_dense()
    assert np.array_equal(d[:, 0], age < 30) and np.array_equal(d[:, 1], (age >= 30) & (age < 60))
    assert np.array_equal(d[:, 2], age >= 60) and np.all(d.sum(axis=1) == 1)


@pytest.mark.parametrize("rule", ["quantile", "equal-width"])
def test_intervals_partition_the_rows(table, rule):
    m = binarise(table, [{"column": "dose", "rule": rule, "bins": 4}])
    assert m.n_features == 4 and np.all(m.to_dense().sum(axis=1) == 1)
    if rule == "quantile":
        assert m.column_counts().min() >= 45


def test_positive_and_binary(table):
    m = binarise(table, [{"column": "dose", "rule": "positive"}, {"column": "flag", "rule": "binary"}])
    d = m.to_dense()
    assert np.array_equal(d[:, 0], table.frame["dose"] > 0) and np.array_equal(d[:, 1], table.frame["flag"])


def test_fitted_recipe_round_trips_through_json(table):
    fitted = Recipe.default_for(table).fit(table)
    again = Recipe.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert again.fitted
    a, b = fitted.apply(table), again.apply(table)
    assert a.feature_names == b.feature_names and a.fingerprint() == b.fingerprint()
    assert "id" not in {f.source for f in a.features}, "identifiers never become features"


def test_bad_recipes(table):
    with pytest.raises(BadInput, match="must be binary"):
        binarise(table, [{"column": "age", "rule": "binary"}])
    with pytest.raises(BadInput, match="needs numbers"):
        binarise(table, [{"column": "sex", "rule": "quantile", "bins": 3}])
    with pytest.raises(BadInput, match="identifier"):
        binarise(table, [{"column": "id", "rule": "positive"}])
    with pytest.raises(BadInput, match="unknown binarisation rule"):
        Step("age", "bogus")
    with pytest.raises(BadInput, match="does not have"):
        binarise(table, [{"column": "nope", "rule": "one-hot"}])


def test_star_step_covers_every_other_column(table):
    m = binarise(table, [{"column": "sex", "rule": "one-hot"}, {"column": "*", "rule": "positive"}])
    assert [f.source for f in m.features] == ["sex", "sex", "age", "dose", "flag"]  # no id, no target
    fitted = Recipe.from_dict({"target": "y", "steps": [{"column": "*", "rule": "positive"}]}).fit(table)
    assert [s.column for s in fitted.steps] == ["age", "sex", "dose", "flag"] and fitted.fitted
