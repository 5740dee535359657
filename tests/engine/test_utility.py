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


@pytest.mark.parametrize("seed", range(6))
def test_a_perturbed_number_has_quartiles_not_a_mode_as_numpy_computes_them(seed):
    """Noise on a column of numbers: both sides give the quartiles (numpy's and R's default quantile),
    mean, sample deviation, min and max of the values present, never a mode; blanks are suppressed."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    before = pd.DataFrame({"x": rng.integers(0, 6, n)})
    noisy = before["x"] + rng.normal(0, 1, n).round(int(rng.integers(0, 3)))  # ties now and then
    blanks = rng.random(n) < 0.2
    after = pd.DataFrame({"x": noisy.where(~blanks)})
    c = release_utility(before, after, perturbed=["x"]).columns["x"]  # as the release declares it
    kept = noisy[~blanks].to_numpy()
    assert c.numeric and not c.generalised and c.suppressed == int(blanks.sum())
    assert "mode" in release_utility(before, after).columns["x"].summary_before  # undeclared: ARX's figures
    for summary, values in ((c.summary_before, before["x"].to_numpy(float)), (c.summary_after, kept)):
        if not len(values):
            continue
        assert "mode" not in summary and summary["count"] == len(values)
        q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
        assert (summary["q1"], summary["median"], summary["q3"]) == pytest.approx((q1, median, q3))
        assert (summary["min"], summary["max"], summary["mean"]) == pytest.approx(
            (values.min(), values.max(), values.mean())
        )
        if len(values) > 1:
            assert summary["std"] == pytest.approx(values.std(ddof=1))
    # the released values as released, each with its records
    counts = pd.Series(kept).value_counts()
    assert dict(c.after) == {str(float(v)): int(k) for v, k in counts.items()}


def test_the_kind_makes_a_column_of_numbers_held_as_text_a_number():
    """A column the schema calls numeric stays a number whatever its cells' type: declared perturbed,
    it has a number's figures; its type alone would make it a category with a mode."""
    before = pd.DataFrame({"x": ["1", "2", "3", "4"]})
    after = pd.DataFrame({"x": [1.5, 2.25, 2.75, 4.5]})
    assert "mode" in release_utility(before, after).columns["x"].summary_after  # read as a category
    c = release_utility(before, after, numeric=["x"], perturbed=["x"]).columns["x"]
    assert c.numeric and not c.generalised and "mode" not in c.summary_after
    # mean 2.75, the quartiles between order statistics: (n − 1)·0.25 = 0.75 → 1.5 + 0.75·0.75
    assert c.summary_after["mean"] == 2.75 and c.summary_after["q1"] == pytest.approx(2.0625)
    assert c.summary_before["median"] == 2.5 and c.loss == 0.0


def test_progress_is_told_per_column_and_may_stop_the_computation():
    said = []
    release_utility(BEFORE, AFTER, progress=lambda f, m: said.append((f, m)))
    assert [m for _, m in said if m.startswith("column")] == ["column age", "column sex"]
    assert said[-1][0] == 1.0 and all(a <= b for (a, _), (b, _) in zip(said, said[1:]))

    class Stop(Exception):
        pass

    def stop(fraction, message):
        if message == "column sex":
            raise Stop

    with pytest.raises(Stop):
        release_utility(BEFORE, AFTER, progress=stop)
