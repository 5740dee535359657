"""The utility perspective's figures, checked against a computation by hand on small tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from veil.engine import contingency, release_utility

BEFORE = pd.DataFrame({"age": [20, 25, 30, 35, 40, 45], "sex": ["M", "M", "F", "F", "M", "F"]})
AFTER = pd.DataFrame(
    {
        "age": ["[20, 30]", "[20, 30]", "[20, 30]", "[35, 45]", "[35, 45]", "*"],
        "sex": ["M", "M", "F", "F", "M", "*"],
    }
)


def test_a_generalised_number_by_hand():
    age = release_utility(BEFORE, AFTER).columns["age"]
    assert age.numeric and age.generalised and age.suppressed == 1
    assert dict(age.after) == {"[20, 30]": 3, "[35, 45]": 2}
    assert dict(age.before) == {"20": 1, "25": 1, "30": 1, "35": 1, "40": 1, "45": 1}
    # the input: numbers (mean, sample standard deviation: Σ(x − 32.5)² = 437.5 over 5)
    b = age.summary_before
    assert (b["count"], b["distinct"], b["mode"], b["median"], b["min"], b["max"], b["range"]) == (
        6,
        6,
        20,
        32.5,
        20,
        45,
        25,
    )
    assert b["mean"] == 32.5 and math.isclose(b["std"], math.sqrt(437.5 / 5))
    # the release: ARX's ordinal statistics of the intervals, the suppressed record left out, no mean
    assert age.summary_after == {
        "count": 5,
        "distinct": 2,
        "mode": "[20, 30]",
        "median": "[20, 30]",
        "min": "[20, 30]",
        "max": "[35, 45]",
    }
    # loss: each interval covers 3 of the 6 input values, (3 − 1) / (6 − 1) = 0.4 a record; * is 1
    assert math.isclose(age.loss, (5 * 0.4 + 1) / 6)


def test_an_even_count_has_a_median_only_when_the_two_middle_values_agree():
    after = pd.DataFrame({"age": ["[20, 30]", "[20, 30]", "[35, 45]", "[35, 45]"]})
    before = BEFORE.iloc[:4]
    assert release_utility(before, after).columns["age"].summary_after["median"] is None
    after = pd.DataFrame({"age": ["[20, 30]", "[20, 30]", "[20, 30]", "[35, 45]"]})
    assert release_utility(before, after).columns["age"].summary_after["median"] == "[20, 30]"


def test_a_category_and_records_left_out_count_as_suppressed():
    sex = release_utility(BEFORE, AFTER).columns["sex"]
    assert not sex.numeric and not sex.generalised and sex.suppressed == 1
    assert sex.summary_after == {"count": 5, "distinct": 2, "mode": "M"}
    assert math.isclose(sex.loss, 1 / 6)
    shorter = release_utility(BEFORE, AFTER.iloc[:4]).columns["sex"]  # two records not released at all
    assert shorter.suppressed == 2 and math.isclose(shorter.loss, 2 / 6)


def test_a_set_of_categories_covers_its_members():
    before = pd.DataFrame({"city": ["a", "b", "c", "d", "e"]})
    after = pd.DataFrame({"city": ["{a, b}", "{a, b}", "c", "{d, e}", "{d, e}"]})
    city = release_utility(before, after).columns["city"]
    assert city.generalised and math.isclose(city.loss, 4 * (2 - 1) / (5 - 1) / 5)


def test_contingency_before_and_after_by_hand():
    before, after = contingency(BEFORE, AFTER, "age", "sex")
    assert before.shape == (6, 2) and before.to_numpy().sum() == 6
    assert before.loc["20", "M"] == 1 and before.loc["30", "F"] == 1
    assert list(after.index) == ["[20, 30]", "[35, 45]", "*"] and list(after.columns) == ["F", "M", "*"]
    assert after.to_numpy().tolist() == [[1, 2, 0], [1, 1, 0], [0, 0, 1]]


def test_a_pair_naming_no_column_is_refused():
    from veil.engine import BadInput

    with pytest.raises(BadInput, match="no column 'height'"):
        contingency(BEFORE, AFTER, "age", "height")


def test_the_csv_tables_hold_the_figures():
    figures = release_utility(BEFORE, AFTER)
    summary = figures.summary_table()
    assert summary.query("column == 'age' and statistic == 'attribute loss'")["after"].item() == pytest.approx(0.5)
    dist = figures.distribution_table()
    assert dist.query("column == 'sex' and side == 'after' and value == '*'")["records"].item() == 1
    assert dist.query("side == 'before'")["records"].sum() == 12
