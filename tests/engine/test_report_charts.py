"""The report's two charts as vector drawings (engine/release/report_charts.py): every title, axis
label, tick, legend entry and value the matplotlib charts showed is there; the bars are as long as
their figures; a side without figures says so; the same drawing is the HTML's SVG and the PDF's
shapes and text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from veil.engine.release import pdf as pdfdoc
from veil.engine.release import report_charts as rc
from veil.engine.release.assessment import GROUP_SIZE_BINS

from test_report_pdf import page_texts  # noqa: E402 (beside this file)

RISK = {
    "threshold": 0.2,
    "before": {
        "max": 1.0,
        "avg": 0.43,
        "at_risk": 0.71,
        "group_sizes": {"1": 0.3, "2": 0.2, "3-4": 0.2, "5-9": 0.1, "10-19": 0.1, "20+": 0.1},
    },
    "after": {"max": 0.1, "avg": 0.03, "at_risk": 0.0, "group_sizes": {"10-19": 0.6, "20+": 0.4}},
}
UTILITY = {
    "titles": {"auc": "AUC (LinearSVC)", "accuracy": "Accuracy (LinearSVC)"},
    "before": {"auc": 0.906, "accuracy": 0.852},
    "after": {"auc": 0.821, "accuracy": 0.787},
}


def bars(d: rc.Drawing, colour: str) -> list[tuple]:
    """The bars of one colour (the legend's swatch, 14 × 7 points at the top, left out)."""
    return [item[1:5] for item in d.items if item[0] == "rect" and item[5] == colour and item[2] > 20]


def test_nice_ticks_are_the_round_values_within_the_limits():
    assert rc.nice_ticks(0, 118) == [0, 20, 40, 60, 80, 100]
    assert rc.nice_ticks(0, 105) == [0, 20, 40, 60, 80, 100]
    assert rc.tick_labels(rc.nice_ticks(0, 1.1)) == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert rc.tick_labels(rc.nice_ticks(0, 118)) == ["0", "20", "40", "60", "80", "100"]
    assert rc.tick_labels(rc.nice_ticks(0, 1.4)) == ["0.00", "0.25", "0.50", "0.75", "1.00", "1.25"]
    assert rc.tick_labels(rc.nice_ticks(0, 14)) == ["0.0", "2.5", "5.0", "7.5", "10.0", "12.5"]
    assert rc.nice_ticks(0, 6) == [0, 1, 2, 3, 4, 5, 6] and rc.nice_ticks(0, 7) == [0, 2, 4, 6]  # at most 7


def test_the_risk_chart_shows_its_titles_axes_legend_and_values():
    d = rc.draw_risk(RISK)
    texts = d.texts()
    for label in (
        "before (the input)",
        "after (the release)",
        "Highest risk",
        "Average risk",
        "Records at risk",
        "re-identification risk (%)",
        "threshold 20 %",
        "records sharing their values (size of the group)",
        "share of records (%)",
        "100.0 %",
        "43.0 %",
        "71.0 %",
        "10.0 %",
        "3.0 %",
        "0.0 %",
        *(b[2] for b in GROUP_SIZE_BINS),
        *("0", "20", "40", "60", "80", "100"),
    ):
        assert label in texts, label
    assert [t for t in d.items if t[0] == "text" and t[8]][0][3] == "share of records (%)"  # the one turned
    # three before-bars of risk, proportional to 1.0, 0.43, 0.71 (horizontal: their widths)
    left_before = [b for b in bars(d, rc.BEFORE) if b[0] < d.width / 2]  # the left panel's
    widths = sorted(b[2] for b in left_before)
    assert (
        len(left_before) == 3
        and widths[0] / widths[2] == pytest.approx(0.43)
        and widths[1] / widths[2] == pytest.approx(0.71)
    )
    # the group sizes (vertical bars): 6 before, and after only its two non-empty bins, 60 % and 40 %
    upright = [b for b in bars(d, rc.AFTER) if b[0] > d.width / 2]
    assert len(upright) == 2 and upright[0][3] / upright[1][3] == pytest.approx(0.6 / 0.4)
    assert len([b for b in bars(d, rc.BEFORE) if b[0] > d.width / 2]) == 6
    dashed = [item for item in d.items if item[0] == "line" and item[7]]
    assert len(dashed) == 1 and dashed[0][5] == rc.THRESHOLD and dashed[0][1] == dashed[0][3]


def test_a_side_without_figures_says_so():
    d = rc.draw_risk({**RISK, "before": None})
    assert "before (the input): not available" in d.texts() and d.texts().count("—") == 3
    assert bars(d, rc.BEFORE) == []
    u = rc.draw_utility({**UTILITY, "after": None})
    assert "trained on the release: not available" in u.texts() and u.texts().count("—") == 2


def test_the_utility_chart_shows_each_figure_before_and_after():
    d = rc.draw_utility(UTILITY)
    for label in (
        "trained on the original",
        "trained on the release",
        "AUC (LinearSVC)",
        "Accuracy (LinearSVC)",
        "0.906",
        "0.852",
        "0.821",
        "0.787",
        "score (1.0 is perfect; an AUC of 0.5 is guessing)",
        "0.0",
        "0.2",
        "1.0",
    ):
        assert label in d.texts(), label
    before, after = sorted(b[2] for b in bars(d, rc.BEFORE)), sorted(b[2] for b in bars(d, rc.AFTER))
    assert after[1] / before[1] == pytest.approx(0.821 / 0.906) and after[0] / before[0] == pytest.approx(0.787 / 0.852)


def test_every_text_stays_inside_the_drawing():
    for d in (rc.draw_risk(RISK), rc.draw_utility(UTILITY), rc.draw_risk({**RISK, "before": None})):
        for _, x, y, s, size, _, anchor, weight, rotated in (i for i in d.items if i[0] == "text"):
            w = rc.text_width(s, size, weight)
            if rotated:
                lo, hi = y - w / 2, y + w / 2
                assert 0 <= x - size / 2 and lo >= 0 and hi <= d.height, s
            else:
                start = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
                assert start >= 0 and start + w <= d.width and size / 2 <= y <= d.height - size / 2, s


def test_the_svg_and_the_pdf_hold_the_same_drawing():
    d = rc.draw_risk(RISK)
    root = ET.fromstring(rc.svg(d, "Risk <before> & after"))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text == "Risk <before> & after"
    assert [t.text for t in root.iter(f"{ns}text")] == d.texts()
    assert len(root.findall(f"{ns}rect")) == 1 + sum(i[0] == "rect" for i in d.items)  # and the white ground
    assert len(root.findall(f"{ns}line")) == sum(i[0] == "line" for i in d.items)
    doc = pdfdoc.Document(595, 842)
    doc.new_page()
    rc.to_pdf(d, doc, 50, 60, 0.75)
    assert page_texts(doc.to_bytes({"Title": "chart"}))[0].splitlines() == d.texts()


def test_turned_text_in_the_pdf_reads_upwards_centred_on_its_point():
    doc = pdfdoc.Document(200, 200)
    doc.new_page()
    width = doc.text(100, 50, "share", 10, align="center", angle=90)
    op = doc.pages[0][-1].decode()
    a, b, c, d_, x, y = (float(v) for v in op.split(" Tf ")[1].split(" Tm")[0].split())
    f = pdfdoc.font("sans")
    assert (a, b, c, d_) == (0, 1, -1, 0)  # anticlockwise by a quarter turn
    assert x == pytest.approx(100 + 10 * f.ascent / f.units, abs=1e-3)  # the baseline right of the line's top
    assert y == pytest.approx(200 - 50 - width / 2, abs=1e-3)  # centred on the point, reading upwards
