"""The interval hierarchy builder (ARX's wizard: intervals of a width from a start, merged level by level
with a fan-out, bottom and top coding): brute force over random values and settings — at every level each
value falls in exactly one interval, the interval its label names, and each level's intervals nest in the
next; the text spec of the command line and study files; ``veil hierarchy`` writing ARX's format."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings, strategies as st

from veil.engine import BadInput, Hierarchy, hierarchy_from_spec, is_hierarchy_spec

_RANGE = re.compile(r"^(-?\d+)-(-?\d+)$")
_HALF_OPEN = re.compile(r"^\[(\S+), (\S+)\)$")


def interval_of(label: str):
    """(lo, hi, hi_closed) of a label as numbers; -inf / inf for the codings' open ends."""
    if label.startswith(">="):
        return Fraction(label[2:]), math.inf, False
    if label.startswith("<"):
        return -math.inf, Fraction(label[1:]), False
    m = _RANGE.match(label)
    if m:
        return Fraction(m[1]), Fraction(m[2]), True
    m = _HALF_OPEN.match(label)
    assert m, label
    return Fraction(m[1]), Fraction(m[2]), False


def contains(interval, x) -> bool:
    lo, hi, closed = interval
    return lo <= x and (x <= hi if closed else x < hi)


def inside(inner, outer) -> bool:
    """Whether every number of ``inner`` lies in ``outer``: for integer ranges, as sets of integers."""
    lo, hi, closed = inner
    olo, ohi, oclosed = outer
    if closed and oclosed:
        return olo <= lo and hi <= ohi
    if closed:  # integers lo … hi inside a half-open outer
        return olo <= lo and hi < ohi
    return olo <= lo and (hi <= ohi if not oclosed else hi <= ohi + 1)


@st.composite
def settings_(draw):
    integer = draw(st.booleans())
    if integer:
        values = draw(st.lists(st.integers(-30, 130), min_size=1, max_size=60))
        width = draw(st.integers(1, 25))
        start = draw(st.one_of(st.none(), st.integers(-20, 40)))
        bottom = draw(st.one_of(st.none(), st.integers(-10, 60)))
        top = draw(st.one_of(st.none(), st.integers(0, 140)))
    else:
        values = draw(st.lists(st.integers(-300, 1300).map(lambda v: v / 10), min_size=1, max_size=60))
        width = draw(st.sampled_from([0.5, 1, 2.5, 7.5, 10]))
        start = draw(st.one_of(st.none(), st.sampled_from([-5, 0, 0.5, 12.5])))
        bottom = draw(st.one_of(st.none(), st.sampled_from([-1.5, 0, 20, 33.3])))
        top = draw(st.one_of(st.none(), st.sampled_from([10, 50.5, 90, 120])))
    assume(bottom is None or top is None or bottom < top)
    return values, {"width": width, "fanout": draw(st.integers(2, 4)), "start": start, "bottom": bottom, "top": top}


@settings(max_examples=300, deadline=None)
@given(settings_())
def test_every_value_in_exactly_one_interval_per_level_and_levels_nest(case):
    values, kw = case
    h = Hierarchy.intervals(values, **kw)
    assert h.nodes(h.height) == (h.root,) and h.root.label == "*"
    for level in range(1, h.height):
        intervals = {node.label: interval_of(node.label) for node in h.nodes(level)}
        for v in set(values):
            x = Fraction(str(v))
            holding = [label for label, iv in intervals.items() if contains(iv, x)]
            assert holding == [h.generalise(v, level)], (v, level, holding)  # exactly one, the one it is put in
            if kw["bottom"] is not None and x < Fraction(str(kw["bottom"])):
                assert holding[0].startswith("<")
            if kw["top"] is not None and x >= Fraction(str(kw["top"])):
                assert holding[0].startswith(">=")
        if level + 1 < h.height:  # each interval lies inside its parent's
            for node in h.nodes(level):
                assert inside(intervals[node.label], interval_of(h.parent(node).label)), (node, h.parent(node))
    if kw["bottom"] is None and kw["top"] is None:
        assert not any(node.label[0] in "<>" for level in range(1, h.height) for node in h.nodes(level))


def test_arx_style_age_hierarchy_with_codings():
    h = Hierarchy.intervals(range(0, 100), width=10, fanout=2, bottom=20, top=80)
    assert [n.label for n in h.nodes(1)] == ["<20", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", ">=80"]
    assert [n.label for n in h.nodes(2)] == ["<20", "20-39", "40-59", "60-79", ">=80"]
    assert h.generalise(7, 3) == "<20" and h.generalise(99, 2) == ">=80" and h.generalise(45, 2) == "40-59"
    cut = Hierarchy.intervals(range(0, 100), width=10, top=87)  # the interval under the top coding is cut
    assert cut.generalise(86, 1) == "80-86" and cut.generalise(87, 1) == ">=87"
    assert Hierarchy.intervals(range(0, 100), width=10, bottom=25).generalise(25, 1) == "25-34"  # start = bottom


def test_codings_are_checked():
    with pytest.raises(BadInput, match="bottom coding .* must lie below top coding"):
        Hierarchy.intervals(range(10), width=2, bottom=5, top=5)


def test_the_text_spec():
    assert is_hierarchy_spec("intervals:width=10") and is_hierarchy_spec("masking")
    assert not is_hierarchy_spec("hierarchies/age.csv") and not is_hierarchy_spec("C:/data/age.csv")
    h = hierarchy_from_spec("intervals:width=10,fanout=2,bottom=20,top=80", range(0, 100), name="age")
    assert h == Hierarchy.intervals(range(0, 100), width=10, fanout=2, bottom=20, top=80, name="age")
    assert hierarchy_from_spec("quantiles:bins=4", range(100)).height >= 2
    for bad, words in [
        ("intervals:fanout=2", "give the width"),
        ("intervals:width=10,widht=3", "not a setting"),
        ("intervals:width=ten", "must be a number"),
        ("intervals:width=10,width=5", "given twice"),
        ("intervals:width=10,fanout=2.5", "whole number"),
        ("spirals:width=1", "unknown kind"),
    ]:
        with pytest.raises(BadInput, match=words):
            hierarchy_from_spec(bad, range(100))


def test_veil_hierarchy_writes_arx_format_and_run_generates_one(tmp_path, capsys):
    from veil.cli import main

    data = tmp_path / "t.csv"
    data.write_text("age,sex\n" + "".join(f"{15 + i % 80},{'FM'[i % 2]}\n" for i in range(200)))
    out = tmp_path / "age.csv"
    spec = "intervals:width=5,fanout=2,bottom=20,top=80"
    assert main(["hierarchy", str(data), "--column", "age", "--build", spec, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out) and "level 1:" in captured.err
    written = Hierarchy.from_arx_csv(out, name="age")
    assert written == Hierarchy.intervals(range(15, 95), width=5, fanout=2, bottom=20, top=80, name="age")
    assert main(["hierarchy", str(data), "--column", "agee", "--build", spec]) == 2
    assert "no column named 'agee'" in capsys.readouterr().err
    assert main(["hierarchy", str(data), "--column", "age", "--build", spec, "--out", str(data)]) == 2
    assert data.read_text().startswith("age,sex\n")  # the input is never written over
    release = tmp_path / "r"
    assert (
        main(
            [
                "run",
                "--data",
                str(data),
                "--quasi",
                "age,sex",
                "--hierarchy",
                f"age={spec}",
                "--method",
                "global-recoding",
                "--model",
                "k-anonymity:k=5",
                "--no-report",
                "--out",
                str(release),
            ]
        )
        == 0
    )
    ages = {line.split(",")[0] for line in next(release.glob("*.csv")).read_text().splitlines()[1:]}
    assert ages <= {n.label for level in range(written.height + 1) for n in written.nodes(level)}
