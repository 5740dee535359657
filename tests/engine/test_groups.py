"""Typed generalised values, group views and set-valued data: the engine's group-based release core."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import (
    SUPPRESSED,
    BadInput,
    GroupView,
    Interval,
    NodeValue,
    SetValued,
    Table,
    convert,
    format_value,
    parse_value,
    table_to_items,
    view_of_frame,
)


@given(st.integers(-(10**6), 10**6), st.integers(0, 10**6), st.booleans())
def test_integer_intervals_round_trip(lo, width, closed):
    iv = Interval(lo, lo + width, closed)
    text = format_value(iv)
    back = parse_value(text)
    if width == 0 and closed:
        assert back == str(lo)  # a one-value interval is written as the value
    else:
        assert back == iv


@given(st.floats(-1e9, 1e9, allow_nan=False), st.floats(0, 1e9, allow_nan=False))
def test_float_intervals_round_trip(lo, width):
    hi = lo + width
    iv = Interval(lo, hi)
    back = parse_value(format_value(iv))
    if lo == hi:
        return
    assert (
        isinstance(back, Interval)
        and back.lo == pytest.approx(lo, rel=1e-12)
        and back.hi == pytest.approx(hi, rel=1e-12)
    )


def test_arx_notations_and_plain_values():
    assert parse_value("[20, 30[") == Interval(20, 30, closed=False)
    assert parse_value("[20-29]") == Interval(20, 29)
    assert parse_value("*") is SUPPRESSED and format_value(SUPPRESSED) == "*"
    assert parse_value("Europe") == "Europe" and format_value(NodeValue("Europe", ("FR", "DE"))) == "Europe"
    assert parse_value("[a, b]") == "[a, b]"  # not numbers: plain text
    with pytest.raises(ValueError):
        Interval(3, 2)


def _brute_counts(groups, sens):
    gs, ss = sorted(set(groups)), list(dict.fromkeys(sens))
    return {(g, s): sum(1 for a, b in zip(groups, sens) if a == g and b == s) for g in gs for s in ss}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from("abcd")), min_size=1, max_size=40))
def test_group_view_counts_match_brute_force(records):
    groups, sens = zip(*records)
    view = GroupView.from_labels(list(groups), list(sens))
    brute = _brute_counts(groups, sens)
    labels = list(dict.fromkeys(groups))  # factorize keeps first appearance
    counts = view.counts()
    for (g, s), c in brute.items():
        assert counts[labels.index(g), view.values.index(s)] == c
    assert view.sizes.sum() == len(records)
    assert np.allclose(view.distributions().sum(axis=1), 1)
    assert np.allclose(view.q(), [sens.count(v) / len(sens) for v in view.values])


def test_view_of_a_part_uses_the_whole_tables_q():
    whole = pd.Series(["a"] * 8 + ["b"] * 2)
    view = GroupView.from_labels([0, 0, 1], ["a", "a", "a"], overall=whole)
    assert view.q().tolist() == [0.8, 0.2] and view.counts().tolist() == [[2, 0], [1, 0]]
    with pytest.raises(BadInput):
        GroupView.from_labels([0], ["zzz"], overall=whole)


def test_view_of_frame_groups_on_quasi_identifiers_only():
    frame = pd.DataFrame(
        {
            "age": ["[20, 29]", "[20, 29]", "[30, 39]"],
            "zip": ["1*", "1*", "1*"],
            "other": [1, 2, 3],
            "dx": ["flu", "hiv", "flu"],
        }
    )
    view = view_of_frame(frame, ["age", "zip"], "dx")
    assert view.sizes.tolist() == [2, 1]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sets(st.sampled_from(["a", "b", "c", "d", "e"])), max_size=30))
def test_set_valued_round_trips_through_binary(sets):
    s = SetValued.from_sets(sets)
    assert s.nnz == sum(len(x) for x in sets)
    b = s.to_binary()
    back = SetValued.from_binary(b)
    assert [set(np.array(back.item_names)[r]) for r in back.rows()] == [set(x) for x in sets]
    lines = [line for chunk in s.iter_chunks(chunk=7) for line in chunk]
    assert [set(line.split()) for line in lines] == [set(x) for x in sets]
    assert convert(b, ("sets",)).fingerprint() == back.fingerprint()


def test_iter_chunks_maps_records_to_group_centres():
    centres = SetValued.from_sets([["a", "b"], ["c"]])
    lines = [line for chunk in centres.iter_chunks(np.array([1, 0, 0, 1]), chunk=3) for line in chunk]
    assert lines == ["c", "a b", "a b", "c"]


def test_table_to_items_buckets_numbers_and_orders_categories():
    frame = pd.DataFrame({"age": [0, 10, 20, 100], "sex": ["M", "F", "F", "M"], "y": [0, 1, 0, 1]})
    table = Table.from_frame(frame).with_roles({"age": "quasi-identifier", "sex": "quasi-identifier", "y": "target"})
    items = table_to_items(table, buckets=10)
    names = np.array(items.item_names)
    rows = [sorted(names[r]) for r in items.rows()]
    assert rows == [["age=0", "sex=M"], ["age=1", "sex=F"], ["age=2", "sex=F"], ["age=9", "sex=M"]]
    assert items.labels.tolist() == [0, 1, 0, 1]
    with pytest.raises(BadInput):
        table_to_items(table, buckets=0)


def test_a_releases_view_is_made_once_and_judges_as_a_fresh_one():
    """Every privacy model of a run asks for the view of the release's records: the one kept with the
    release is the view made from its frame afresh, and a release of another length gets its own."""
    from veil.engine import GENERALISED_TABLE, Release
    from veil.engine.model.groups import views_of_release

    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "age": rng.choice(["<30", "30-60", ">60"], 200),
            "zip": rng.choice(["130**", "148**"], 200),
            "disease": rng.choice(["flu", "cold", "ulcer", None], 200),
        }
    )
    release = Release(GENERALISED_TABLE, frame, ("age", "zip"), sensitive=("disease",))
    first = views_of_release(release, needs_sensitive=True)[0][1]
    again = views_of_release(release, needs_sensitive=False)[0][1]
    assert first is again
    fresh = view_of_frame(frame, ["age", "zip"], "disease")
    assert np.array_equal(first.counts(), fresh.counts()) and np.array_equal(first.q(), fresh.q())
    assert np.array_equal(first.groups, fresh.groups) and first.values == fresh.values
    shorter = Release(GENERALISED_TABLE, frame.iloc[:150], ("age", "zip"), sensitive=("disease",))
    assert views_of_release(shorter, needs_sensitive=True)[0][1].n_records == 150
