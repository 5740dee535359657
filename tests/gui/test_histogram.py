"""The column summary's bars show short category values whole, never "…"."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics

from veil.desktop.widgets import Histogram, fitted_label

SHORT = [str(i) for i in range(100)] + ["F", "M", "yes", "no", "?", "A1", "HD4", "ab", "11", "1.5"]


def test_a_label_that_fits_is_never_elided(qtbot):
    widget = Histogram()
    qtbot.addWidget(widget)
    fm = QFontMetrics(widget.font())
    for label in SHORT:
        assert fitted_label(fm, label, fm.horizontalAdvance(label)) == label
    assert fitted_label(fm, "a much longer category name", 30).endswith("…")
