"""Tests of engine/hierarchy.py: ARX files, tree queries against brute force, generated intervals."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.engine.base.errors import BadInput
from veil.engine.data.hierarchy import ROOT, Hierarchy, Node, value_label

DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"
ADULT = DATASETS / "adult_arx"

# rows / levels per file, from adult_arx/SOURCE.md ("Verified counts")
ARX_FILES = {
    "age": (100, 5),
    "education": (16, 4),
    "marital-status": (7, 3),
    "native-country": (41, 3),
    "occupation": (14, 3),
    "race": (5, 2),
    "salary-class": (2, 2),
    "sex": (2, 2),
    "workclass": (8, 3),
}


def arx_path(attribute: str) -> Path:
    if not DATASETS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{DATASETS} is missing on CI")
        pytest.skip(f"shared datasets not present at {DATASETS}")
    return ADULT / f"adult_hierarchy_{attribute}.csv"


def arx(attribute: str) -> Hierarchy:
    return Hierarchy.from_arx_csv(arx_path(attribute), name=attribute)


# --------------------------------------------------------------------------------- ARX files
@pytest.mark.dataset
@pytest.mark.parametrize("attribute", sorted(ARX_FILES))
def test_arx_file_round_trips(attribute):
    path = arx_path(attribute)
    text = path.read_text(encoding="utf-8")
    h = Hierarchy.from_arx_csv(path, name=attribute)
    rows, levels = ARX_FILES[attribute]
    assert (len(h.leaves), h.height + 1) == (rows, levels)
    assert h.root == Node(levels - 1, "*")
    assert h.to_arx_csv() == text.rstrip("\n") + "\n"  # native-country lacks the final newline
    assert Hierarchy.from_arx_csv(h.to_arx_csv(), name=attribute) == h
    assert Hierarchy.from_dict(json.loads(json.dumps(h.to_dict()))) == h


@pytest.mark.dataset
def test_arx_age_facts():
    h = arx("age")
    assert [h.generalise(39, level) for level in range(5)] == ["39", "35-39", "30-39", "20-39", "*"]
    # ARX's file is shifted by one against its labels: 36..40 sit under "35-39", 96..100 under "95-99"
    assert [h.generalise(v, 1) for v in (1, 5, 6, 35, 36, 40, 41, 100)] == [
        "0-4",
        "0-4",
        "5-9",
        "30-34",
        "35-39",
        "35-39",
        "40-44",
        "95-99",
    ]
    assert h.children(Node(3, "20-39")) == (Node(2, "20-29"), Node(2, "30-39"))
    assert h.parent("35-39") == Node(2, "30-39")
    assert h.leaves_under("30-39") == tuple(str(v) for v in range(31, 41))
    assert h.lca([31, 39]) == Node(2, "30-39")
    assert h.ncp([31, 39]) == pytest.approx(10 / 100)
    assert h.ncp([25, 39]) == pytest.approx(20 / 100)
    assert h.ncp([39, 39]) == 0.0
    assert h.ncp([1, 100]) == 1.0


@pytest.mark.dataset
def test_arx_categorical_facts():
    edu = arx("education")
    assert edu.node_of("Masters", 1) == Node(1, "Graduate")
    assert edu.generalise("Masters", 2) == "Higher education"
    assert edu.children("Higher education") == (
        Node(1, "Undergraduate"),
        Node(1, "Professional Education"),
        Node(1, "Graduate"),
    )
    assert edu.lca(["Bachelors", "Masters"]) == Node(2, "Higher education")
    assert edu.ncp(["Bachelors", "Masters"]) == pytest.approx(7 / 16)
    assert edu.ncp(["Bachelors", "Preschool"]) == 1.0
    country = arx("native-country")
    assert len(country.leaves_under("Europe")) == 12
    assert country.leaf_count(Node(1, "Europe")) == 12
    assert country.generalise("Holand-Netherlands", 1) == "Europe"  # the last line, no final newline
    assert arx("workclass").leaves_under("Unemployed") == ("Without-pay", "Never-worked")


@pytest.mark.dataset
def test_every_adult_value_is_in_its_hierarchy():
    frame = pd.read_csv(arx_path("age").parent / "adult.csv", sep=";")
    for attribute in ARX_FILES:
        h = arx(attribute)
        top = h.generalise_series(frame[attribute], h.height)
        assert (top == "*").all() and len(top) == 30162
    age = arx("age").generalise_series(frame["age"], 2)
    assert age.index.equals(frame.index) and age.name == "age"
    assert (age == "30-39").sum() == frame["age"].between(31, 40).sum()  # ARX's labels are shifted by one


@pytest.mark.dataset
def test_interval_builder_groups_like_arx_age():
    theirs = arx("age")
    ours = Hierarchy.intervals(range(1, 101), widths=[5, 10, 20], start=1)  # ARX's groups begin at 1, 6, 11 ...
    assert ours.leaves == theirs.leaves and ours.height == theirs.height
    for level in range(1, theirs.height):
        groups = {tuple(theirs.leaves_under(node)) for node in theirs.nodes(level)}
        assert {tuple(ours.leaves_under(node)) for node in ours.nodes(level)} == groups
    assert ours.generalise(39, 1) == "36-40" and theirs.generalise(39, 1) == "35-39"  # labels tell the truth


@pytest.mark.dataset
def test_arx_in_order_groups_every_node():
    for attribute in ARX_FILES:
        assert_contiguous(arx(attribute))


# --------------------------------------------------------------------------------- random trees
@st.composite
def trees(draw):
    """Random rows (leaf, ..., root); labels n0, n1 ... repeat across levels on purpose."""
    height = draw(st.integers(1, 4))
    n = draw(st.integers(1, 25))
    below = list(range(n))  # node id at the current level, per leaf
    columns = [[f"v{i}" for i in range(n)]]
    for _ in range(1, height):
        k = len(set(below))
        parent = draw(st.lists(st.integers(0, max(0, k // 2)), min_size=k, max_size=k))
        ids = {b: parent[j] for j, b in enumerate(sorted(set(below)))}
        below = [ids[b] for b in below]
        columns.append([f"n{b}" for b in below])
    columns.append([ROOT] * n)
    rows = [list(r) for r in zip(*columns)]
    order = draw(st.permutations(range(n)))
    return [rows[i] for i in order]


def chain(rows, leaf):
    row = next(r for r in rows if r[0] == leaf)
    return [(level, label) for level, label in enumerate(row)]


def brute_lca(rows, leaves):
    chains = [chain(rows, leaf) for leaf in leaves]
    return next(node for node in chains[0] if all(node in c for c in chains))


def brute_ncp(rows, leaves):
    if len(set(leaves)) == 1:
        return 0.0
    node = brute_lca(rows, leaves)
    return sum(node in chain(rows, r[0]) for r in rows) / len(rows)


def assert_contiguous(h: Hierarchy):
    order = h.in_order()
    assert sorted(order) == sorted(h.leaves)
    position = {leaf: i for i, leaf in enumerate(order)}
    for level in range(h.height + 1):
        for node in h.nodes(level):
            spots = sorted(position[leaf] for leaf in h.leaves_under(node))
            assert spots == list(range(spots[0], spots[0] + len(spots))), node


@settings(max_examples=80, deadline=None)
@given(rows=trees(), data=st.data())
def test_lca_and_ncp_match_brute_force(rows, data):
    h = Hierarchy(rows)
    leaves = [r[0] for r in rows]
    subset = data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=8))
    assert h.lca(subset) == Node(*brute_lca(rows, subset))
    assert h.ncp(subset) == pytest.approx(brute_ncp(rows, subset))
    assert h.ncp(pd.Series(subset)) == h.ncp(reversed(subset))


@settings(max_examples=80, deadline=None)
@given(rows=trees())
def test_tree_queries_agree(rows):
    h = Hierarchy(rows)
    assert_contiguous(h)
    assert h.to_arx_csv() == "".join(";".join(r) + "\n" for r in rows)
    assert h.parent(h.root) is None
    for level in range(1, h.height + 1):
        for node in h.nodes(level):
            kids = h.children(node)
            assert kids and all(h.parent(k) == node for k in kids)
            assert sorted(h.leaves_under(node)) == sorted(leaf for k in kids for leaf in h.leaves_under(k))
            assert h.leaf_count(node) == len(h.leaves_under(node))
    for row in rows:
        assert [h.generalise(row[0], level) for level in range(h.height + 1)] == row


# --------------------------------------------------------------------------------- intervals
INT_LABEL = re.compile(r"(-?\d+)-(-?\d+)")
FLOAT_LABEL = re.compile(r"\[(\S+), (\S+)([)\]])")


def int_bounds(label):
    lo, hi = INT_LABEL.fullmatch(label).groups()
    return int(lo), int(hi)


def float_bounds(label):
    lo, hi, close = FLOAT_LABEL.fullmatch(label).groups()
    return Decimal(lo), Decimal(hi), close


def assert_interval_shape(h: Hierarchy, values):
    assert sorted(float(leaf) for leaf in h.leaves) == sorted(set(float(v) for v in values))
    assert h.nodes(h.height) == (Node(h.height, ROOT),)
    for level in range(1, h.height):
        assert len(h.nodes(level)) > 1  # a level with one interval would repeat the root


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=40),
    width=st.integers(1, 50),
    fanout=st.integers(2, 4),
    start=st.integers(-50, 50),
)
def test_integer_intervals_contain_and_nest(values, width, fanout, start):
    h = Hierarchy.intervals(values, width=width, fanout=fanout, start=start)
    assert_interval_shape(h, values)
    for v in set(values):
        previous = (v, v)
        for level in range(1, h.height):
            lo, hi = int_bounds(h.generalise(v, level))
            w = width * fanout ** (level - 1)
            assert lo <= v <= hi and hi - lo + 1 == w and (lo - start) % w == 0
            assert lo <= previous[0] and previous[1] <= hi  # the child interval nests in its parent
            previous = (lo, hi)
    if h.height > 2:  # the level below the top interval level was still narrower than the range
        assert width * fanout ** (h.height - 3) <= max(values) - min(values)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.floats(-1000, 1000, allow_nan=False), min_size=1, max_size=40),
    width=st.sampled_from([0.1, 0.25, 0.5, 1.0, 2.5, 7.0]),
    fanout=st.integers(2, 3),
)
def test_float_intervals_contain_and_nest(values, width, fanout):
    h = Hierarchy.intervals(values, width=width, fanout=fanout)
    assert_interval_shape(h, values)
    for v in set(values):
        previous = None
        for level in range(1, h.height):
            lo, hi, close = float_bounds(h.generalise(v, level))
            assert close == ")" and lo <= Decimal(repr(v)) < hi
            assert hi - lo == Decimal(repr(width)) * fanout ** (level - 1)
            if previous:
                assert lo <= previous[0] and previous[1] <= hi
            previous = (lo, hi)


def test_decimal_edges_and_labels():
    h = Hierarchy.intervals([0.1, 0.2, 0.3, 0.35], width=0.1)
    assert [h.generalise(v, 1) for v in (0.1, 0.2, 0.3, 0.35)] == [
        "[0.1, 0.2)",
        "[0.2, 0.3)",
        "[0.3, 0.4)",
        "[0.3, 0.4)",
    ]
    around_zero = Hierarchy.intervals([-7, -3, 0, 12], width=5)
    assert [around_zero.generalise(-7, level) for level in range(around_zero.height + 1)] == [
        "-7",
        "-10--6",
        "-10--1",
        "-20--1",
        "*",
    ]  # stops at the first level wider than the range
    ages = Hierarchy.intervals(range(17, 91), width=5)  # anchored at 0, like ARX's age file
    assert [ages.generalise(39, level) for level in range(ages.height + 1)] == [
        "39",
        "35-39",
        "30-39",
        "20-39",
        "0-39",
        "0-79",
        "*",
    ]
    explicit = Hierarchy.intervals([1, 2, 3], widths=[10])
    assert explicit.height == 2 and explicit.generalise(2, 1) == "0-9"


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.integers(0, 60), min_size=1, max_size=80), bins=st.integers(1, 6), fanout=st.integers(2, 3))
def test_quantile_intervals_contain_and_nest(values, bins, fanout):
    h = Hierarchy.quantile_intervals(values, bins, fanout=fanout)
    assert_interval_shape(h, values)
    if h.height > 1:
        assert len(h.nodes(1)) <= bins
    for v in set(values):
        previous = (v, v)
        for level in range(1, h.height):
            lo, hi = int_bounds(h.generalise(v, level))
            assert lo <= v <= hi and lo <= previous[0] and previous[1] <= hi
            previous = (lo, hi)


def test_quantile_bins_hold_equal_counts():
    values = np.random.default_rng(0).permutation(np.arange(40) * 0.5)
    h = Hierarchy.quantile_intervals(values, 4)
    counts = h.generalise_series(pd.Series(values), 1).value_counts()
    assert sorted(counts) == [10, 10, 10, 10]
    assert h.generalise(19.5, 1) == "[15.0, 19.5]" and h.generalise(0.0, 1) == "[0.0, 5.0)"
    tied = Hierarchy.quantile_intervals([0] * 10 + list(range(1, 11)), 4)  # two cuts fall on 0 and 1
    assert [tied.generalise(v, 1) for v in (0, 1, 5, 6, 10)] == ["0-0", "1-5", "1-5", "6-10", "6-10"]
    assert [tied.generalise(v, 2) for v in (0, 5, 6)] == ["0-5", "0-5", "6-10"]


# --------------------------------------------------------------------------------- lookups
def small() -> Hierarchy:
    return Hierarchy.from_levels({39: ["35-39", "*"], 40: ["40-44", "*"], "x": ["other", "*"]}, name="age")


def test_numbers_find_their_leaves():
    h = small()
    for v in (39, np.int64(39), 39.0, np.float64(39.0), "39"):
        assert h.generalise(v, 1) == "35-39"
    with pytest.raises(BadInput, match="several leaves"):
        Hierarchy([["39", "*"], ["39.0", "*"]]).generalise(39, 1)
    with pytest.raises(BadInput, match=r"'39.0'.*column 'age'"):
        h.generalise("39.0", 1)  # a string is matched exactly
    series = pd.Series([40, 39, 40], index=[7, 8, 9], name="age")
    out = h.generalise_series(series, 1)
    assert out.tolist() == ["40-44", "35-39", "40-44"] and out.index.tolist() == [7, 8, 9] and out.name == "age"
    assert h.generalise_series(series, 0).tolist() == ["40", "39", "40"]


def test_unknown_and_missing_values_are_refused():
    h = small()
    with pytest.raises(BadInput, match=r"value '41' is not in the hierarchy of column 'age'"):
        h.generalise(41, 1)
    with pytest.raises(BadInput, match=r"'41' \(and 1 other values\)"):
        h.generalise_series(pd.Series([39, 41, 42]), 1)
    with pytest.raises(BadInput, match="missing value"):
        h.generalise_series(pd.Series([39.0, np.nan]), 1)
    with pytest.raises(BadInput, match=r"levels run from 0 to 2"):
        h.generalise(39, 3)
    with pytest.raises(BadInput, match="not in the hierarchy$|fix the data"):
        Hierarchy.flat(["a"]).generalise("b", 1)
    with pytest.raises(BadInput, match="not a node"):
        h.children("nowhere")
    with pytest.raises(BadInput, match="levels"):
        Hierarchy([["a", "a", "*"]]).parent("a")  # "a" is a node on two levels
    with pytest.raises(BadInput, match="no values"):
        h.lca([])


def test_flat_and_from_levels():
    h = Hierarchy.flat(["b", "a", None, "b"], name="sex")
    assert h.leaves == ("b", "a") and h.height == 1 and h.ncp(["a", "b"]) == 1.0
    assert h.children(h.root) == (Node(0, "b"), Node(0, "a"))
    g = Hierarchy.from_levels({"a": ["x", "*"], "b": ["x", "*"], "c": ["y", "*"]})
    assert g.lca(["a", "b"]) == Node(1, "x") and g.ncp(["a", "b"]) == pytest.approx(2 / 3)
    assert g.lca(["c"]) == Node(0, "c") and g.ncp(["c", "c"]) == 0.0


def test_value_semantics():
    h = small()
    assert h == Hierarchy.from_dict(h.to_dict()) and hash(h) == hash(Hierarchy.from_dict(h.to_dict()))
    assert h != h.with_name("other") and h.with_name("other").name == "other"
    with pytest.raises(AttributeError):
        h.name = "changed"
    with pytest.raises(ValueError):
        h._codes[0][0] = 5  # internal arrays are read-only
    assert value_label(39.0) == "39" and value_label(0.1) == "0.1" and value_label(np.int32(7)) == "7"


# --------------------------------------------------------------------------------- malformed input
@pytest.mark.parametrize(
    "text, message",
    [
        ("a;x;*\nb;*\n", r"line 2: 2 levels, but line 1 has 3"),
        ("a;x;*\nb;x;*\na;y;*\n", r"line 3: the value 'a' is already listed on line 1"),
        ("a;x;p;*\nb;x;q;*\n", r"line 2: 'x' at level 1 has parent 'q', but line 1 gives it parent 'p'"),
        ("a;x;*\nb;y;ALL\n", r"line 2: the top level holds 'ALL'.*single root"),
        ("a;x;*\n\nb;;*\n", r"line 3: level 1 is empty"),
        ("\n\n", r"no hierarchy rows"),
        ('a;"x;*\nb;x;*\n', r"line \d"),
    ],
)
def test_malformed_text_is_refused(text, message):
    with pytest.raises(BadInput, match=message):
        Hierarchy.from_arx_csv(text)


def test_malformed_file_names_the_file(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a;x;*\nb;x\n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"bad\.csv, line 2"):
        Hierarchy.from_arx_csv(path)
    with pytest.raises(BadInput, match="cannot read hierarchy file"):
        Hierarchy.from_arx_csv(tmp_path / "missing.csv")
    path.write_bytes("\ufeffé;*\r\nb;*\r\n".encode())
    assert Hierarchy.from_arx_csv(str(path)).leaves == ("é", "b")  # BOM dropped, CRLF accepted


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Hierarchy.from_dict({"format": "other", "rows": []}),
        lambda: Hierarchy.from_dict({"format": "veil.hierarchy", "version": 9, "rows": []}),
        lambda: Hierarchy.from_dict({"format": "veil.hierarchy", "version": 1, "rows": "a;*"}),
        lambda: Hierarchy([]),
        lambda: Hierarchy.intervals(["a", "b"], width=5),
        lambda: Hierarchy.intervals([1, 2], width=0),
        lambda: Hierarchy.intervals([1, 2], widths=[5, 7]),
        lambda: Hierarchy.intervals([1, 2], width=5, widths=[5]),
        lambda: Hierarchy.intervals([1, 2], width=5, fanout=1),
        lambda: Hierarchy.intervals([np.nan], width=5),
        lambda: Hierarchy.quantile_intervals([1, 2], 0),
    ],
)
def test_bad_parameters_are_refused(bad):
    with pytest.raises(BadInput):
        bad()


def test_table_attaches_and_generates_hierarchies(datasets_dir):
    from veil.engine import Role, Table

    frame = pd.read_csv(datasets_dir / "adult_arx" / "adult.csv", sep=";")
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER})
    arx = Hierarchy.from_arx_csv(datasets_dir / "adult_arx" / "adult_hierarchy_age.csv")
    attached = table.with_hierarchy("age", arx)
    assert attached.hierarchy("age").generalise(39, 1) == "35-39"
    generated = table.hierarchy("age")
    assert generated.height >= 2 and set(frame["age"].astype(str)) <= set(generated.leaves)
    flat = table.hierarchy("sex")
    assert flat.height == 1 and flat.generalise("Male", 1) == "*"
    with pytest.raises(BadInput, match="not in the hierarchy"):
        table.with_hierarchy("age", Hierarchy.flat([39, 50]))


@pytest.mark.parametrize("sep, said", [(",", "','"), ("\t", "a tab")])
def test_a_hierarchy_with_another_separator_says_so(sep, said):
    """A hierarchy saved with commas (or tabs) reads as one column a row: the message names the
    separator the file seems to use, not a missing root."""
    text = "\n".join(sep.join(row) for row in (["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"])) + "\n"
    with pytest.raises(BadInput, match=f"seems to use {said}"):
        Hierarchy.from_arx_csv(text)
    one = Hierarchy.from_arx_csv("a;*\nb;*\n")  # what the same file holds with ';'
    assert one.height == 1
