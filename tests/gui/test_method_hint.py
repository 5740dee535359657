"""A method's hint in its form follows the edits: picking the differentially private table release
and editing ε and δ shows the k and β they imply, computed by the method (the desktop only shows
the sentence the method declares). The hint is computed off the GUI thread: a slow one leaves the
window responsive, says "computing…", and a hint for values since edited never shows."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import pytest
from PySide6.QtCore import QTimer

from veil.desktop.config_panel import MethodRow
from veil.desktop.forms import COMPUTING, ParamForm, hint_pool
from veil.engine import TABLE, Algorithm, make_registry, param

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


# -- the hint is computed off the GUI thread ---------------------------------------------------
class _Gates:
    """Each value's hint waits for its gate, opened by the test: the test, not the clock, decides
    when a hint is done. ``asked`` lists the values whose hint was computed, in order."""

    def __init__(self):
        self.opened: dict[float, threading.Event] = {}
        self.asked: list[float] = []

    def gate(self, x: float) -> threading.Event:
        return self.opened.setdefault(float(x), threading.Event())


GATES = _Gates()


@dataclass(frozen=True)
class _SlowParams:
    x: float = param(1.0, help="a number whose hint takes as long as the test wants")


class _SlowHint(Algorithm):
    name = "slow-hint-test"
    title = "A method whose hint is slow"
    description = "Test-only."
    accepts = (TABLE,)
    Params = _SlowParams

    @classmethod
    def hint(cls, params) -> str:
        GATES.asked.append(params.x)
        GATES.gate(params.x).wait(30)
        return f"x is {params.x:g}"

    def run(self, data, model, params, ctx):  # never run
        raise NotImplementedError


@pytest.fixture
def slow_form(qtbot):
    GATES.opened.clear()
    GATES.asked.clear()
    form = ParamForm(_SlowHint)
    qtbot.addWidget(form)
    shown_texts: list[str] = []
    form.hint_shown.connect(shown_texts.append)
    yield form, shown_texts
    for event in list(GATES.opened.values()):  # nothing is left waiting on the hints' thread
        event.set()
    assert hint_pool().waitForDone(30_000)


def test_a_slow_hint_runs_off_the_gui_thread_which_says_computing_meanwhile(qtbot, slow_form):
    form, texts = slow_form
    with qtbot.waitSignal(form.hint_shown, check_params_cb=lambda text: text == COMPUTING):
        pass  # x = 1's hint is blocked on its gate; the form says so rather than waiting
    assert GATES.asked == [1.0]
    ran = []
    QTimer.singleShot(0, lambda: ran.append(True))  # the GUI thread's event loop still turns
    qtbot.waitUntil(lambda: ran == [True])
    form.field("x").editor.setText("2")  # and the form still takes edits, checked at once
    assert form.values() == {"x": 2.0} and form.hint.text() == COMPUTING
    GATES.gate(2).set()
    with qtbot.waitSignal(form.hint_shown, check_params_cb=lambda text: text == "x is 2"):
        GATES.gate(1).set()
    assert "x is 1" not in texts  # the first values' hint came after the edit: dropped


def test_a_stale_hint_never_overwrites_a_newer_one_and_is_skipped_when_not_started(qtbot, slow_form):
    form, texts = slow_form
    qtbot.waitUntil(lambda: GATES.asked == [1.0])  # x = 1's hint is running, blocked
    form.field("x").editor.setText("2")
    qtbot.waitUntil(lambda: not form._hint_timer.isActive())  # x = 2's hint asked for, queued behind
    form.field("x").editor.setText("3")
    qtbot.waitUntil(lambda: not form._hint_timer.isActive())  # and x = 3's
    GATES.gate(3).set()
    with qtbot.waitSignal(form.hint_shown, check_params_cb=lambda text: text == "x is 3"):
        GATES.gate(1).set()  # x = 1's result arrives first, stale; x = 2's turn is skipped
    assert GATES.asked == [1.0, 3.0]
    assert "x is 1" not in texts and "x is 2" not in texts
    assert form.hint.text() == "x is 3"
