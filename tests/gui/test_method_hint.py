"""A method's hint in its form follows the edits: picking the differentially private table release
and editing ε and δ shows the k and β they imply, computed by the method (the desktop only shows
the sentence the method declares)."""

from __future__ import annotations

import math

from veil.desktop.config_panel import MethodRow
from veil.engine import make_registry

REGISTRY = make_registry()


def dp_table_row(qtbot) -> MethodRow:
    (cls,) = [c for c in REGISTRY.classes("algorithm") if c.name == "dp-table"]
    row = MethodRow(cls)
    qtbot.addWidget(row)
    row.check.setChecked(True)
    return row


def shown(row) -> str:
    return row.form.hint.text() if row.form.hint.isVisibleTo(row) else ""


def test_editing_epsilon_and_delta_shows_the_k_and_beta_they_imply(qtbot):
    row = dp_table_row(qtbot)
    qtbot.waitUntil(lambda: "k = 114" in shown(row))  # the defaults: ε = 2, δ = 10⁻⁵
    assert "probability 0.865" in shown(row)
    row.form.field("epsilon").editor.setText("1")
    qtbot.waitUntil(lambda: "k = 62" in shown(row))
    assert f"probability {1 - math.exp(-1):.3f}" in shown(row)
    row.form.field("delta").editor.setText("0.000001")
    qtbot.waitUntil(lambda: "k = 75" in shown(row))


def test_the_data_dependent_mode_shows_the_split_of_epsilon(qtbot):
    row = dp_table_row(qtbot)
    row.form.field("mode").set("data-dependent")
    # ε = 2 with a tenth for the search: k and β from ε = 1.8 (k = 92, β = 1 − e^−1.8 = 0.835)
    qtbot.waitUntil(lambda: "k = 92" in shown(row))
    text = shown(row)
    assert "probability 0.835" in text and "1.8 for sampling" in text and "0.2 for the search" in text


def test_an_invalid_epsilon_hides_the_hint(qtbot):
    row = dp_table_row(qtbot)
    qtbot.waitUntil(lambda: "k = 114" in shown(row))
    row.form.field("epsilon").editor.setText("0")
    qtbot.waitUntil(lambda: shown(row) == "")
    assert row.form.field("epsilon").error.text()
