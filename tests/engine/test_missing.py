"""Missing values at reading: every column with blanks named, and the two ways of
filling them, checked against a plain recomputation on random frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    MISSING_VALUE,
    BadInput,
    DataSource,
    fill_missing,
    make_registry,
    missing_counts,
    missing_message,
    Table,
)


def random_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    frame = pd.DataFrame(
        {
            "x": rng.integers(0, 9, n).astype(float),
            "c": rng.choice(list("abcd"), n).astype(object),
            "full": rng.integers(0, 3, n),
        }
    )
    for col in ("x", "c"):
        frame.loc[rng.random(n) < 0.3, col] = np.nan
    return frame


@pytest.mark.parametrize("seed", range(30))
def test_impute_is_the_median_and_the_smallest_most_frequent_value(seed):
    frame = random_frame(seed)
    before = frame.copy()
    filled = fill_missing(frame, "impute")
    pd.testing.assert_frame_equal(frame, before)  # the input is not modified
    for col in ("x", "c"):
        present = [v for v in frame[col] if not pd.isna(v)]
        if not present:
            assert filled[col].isna().all()
            continue
        if col == "x":
            expected = float(np.median(present))
        else:
            top = max(present.count(v) for v in set(present))
            expected = min(v for v in set(present) if present.count(v) == top)
        for old, new in zip(frame[col], filled[col]):
            assert new == (expected if pd.isna(old) else old)
    assert missing_counts(filled) == {} or all(frame[c].isna().all() for c in missing_counts(filled))
    assert (filled["full"] == frame["full"]).all()


@pytest.mark.parametrize("seed", range(10))
def test_value_makes_a_blank_its_own_value_and_numbers_stay_numbers(seed):
    frame = random_frame(seed)
    filled = fill_missing(frame, "value")
    for old, new in zip(frame["c"], filled["c"]):
        assert new == (MISSING_VALUE if pd.isna(old) else old)
    # a numeric column keeps its blanks as blanks: never a word that would make it text
    assert pd.api.types.is_float_dtype(filled["x"])
    assert filled["x"].isna().tolist() == frame["x"].isna().tolist()
    assert missing_counts(filled).keys() <= {"x"}


def test_a_kind_a_column_cannot_take_is_refused_with_its_value():
    table = Table.from_frame(pd.DataFrame({"age": ["30", "missing", "41", None]}))
    with pytest.raises(BadInput, match="'age' cannot be numeric.*'missing'"):
        table.with_kinds({"age": "numeric"})
    fine = Table.from_frame(pd.DataFrame({"age": ["30", None, "41"]})).with_kinds({"age": "numeric"})
    assert fine.schema["age"].kind.value == "numeric"
    assert fine.frame["age"].tolist()[::2] == [30.0, 41.0] and fine.frame["age"].isna().tolist() == [False, True, False]


def test_the_message_names_every_column_that_has_blanks_and_only_those():
    frame = pd.DataFrame({"a": [1, None, None], "b": ["x", "y", "z"], "c": [None, "q", "r"]})
    assert missing_counts(frame) == {"a": 2, "c": 1}
    message = missing_message(frame, ["a", "b", "c"])
    assert "'a' (2 records) and 'c' (1 record)" in message and "'b'" not in message
    assert missing_message(frame, ["b"]) is None
    with pytest.raises(BadInput):
        fill_missing(frame, "mean")


def test_a_data_source_fills_on_reading_and_keeps_the_choice(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"age": [30, None, 50, 50], "job": ["a", "b", None, "b"]}).to_csv(path, index=False)
    source = DataSource(path=str(path), fill_missing="impute")
    assert DataSource.from_dict(source.to_dict()) == source
    table = source.load(make_registry())
    assert table.frame["age"].tolist() == [30, 50, 50, 50] and table.frame["job"].tolist() == ["a", "b", "b", "b"]
    assert path.read_text().count("\n") == 5  # the file is untouched
    with pytest.raises(BadInput, match="not both"):
        DataSource(path=str(path), fill_missing="value", drop_missing=True).load(make_registry())


def test_a_sensitive_column_keeps_its_blanks_whatever_the_fill(tmp_path):
    frame = pd.DataFrame({"age": [30, 40, None, 50], "dx": ["flu", None, "hiv", None], "job": ["a", None, "b", "c"]})
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    for how in ("value", "impute"):
        table = DataSource(path=str(path), fill_missing=how, roles={"dx": "sensitive"}).load(make_registry())
        assert table.frame["dx"].isna().tolist() == [False, True, False, True]  # never the word or a mode
        assert table.frame["job"].notna().all()
