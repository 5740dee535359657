"""Forms generated from a plugin's parameter declaration."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from veil.desktop.forms import ParamForm, parse_list
from veil.engine import Algorithm, BadInput, param, param_specs


@dataclass(frozen=True)
class Params:
    k: int = param(5, minimum=2, maximum=50, help="smallest group")
    epsilon: float = param(1.0, minimum=0.0, exclusive_minimum=True, help="privacy budget")
    mode: str = param("skip", choices=("skip", "stop"), help="on a violation")
    strict: bool = param(False, help="be strict")
    label: str = param("", help="a free text")
    top: int | None = param(None, minimum=1, help="at most this many")
    fixed: int = param(3, minimum=0, sweepable=False, help="not sweepable")


class Plugin(Algorithm):
    name = "form-test"
    title = "Form test"
    Params = Params


@pytest.fixture
def form(qtbot):
    f = ParamForm(Plugin)
    qtbot.addWidget(f)
    return f


def test_each_type_gets_its_editor_with_defaults_bounds_and_help(form):
    k = form.field("k").editor
    assert isinstance(k, QSpinBox) and (k.minimum(), k.maximum(), k.value()) == (2, 50, 5)
    assert isinstance(form.field("epsilon").editor, QLineEdit) and form.field("epsilon").editor.text() == "1"
    mode = form.field("mode").editor
    assert isinstance(mode, QComboBox) and [mode.itemText(i) for i in range(mode.count())] == ["skip", "stop"]
    assert isinstance(form.field("strict").editor, QCheckBox)
    assert isinstance(form.field("label").editor, QLineEdit)
    assert form.field("top").editor.placeholderText() == "none"
    assert "smallest group" in k.toolTip() and "≥ 2" in k.toolTip()
    assert form.values() == {s.name: s.default for s in param_specs(Params)}
    assert form.errors() == {}


def test_only_sweepable_numbers_get_a_sweep_field(form):
    assert form.field("k").sweep is not None and form.field("epsilon").sweep is not None
    assert form.field("mode").sweep is None and form.field("fixed").sweep is None


def test_a_bad_value_shows_the_engines_sentence_next_to_the_field(form, qtbot):
    with qtbot.waitSignal(form.changed):
        form.field("epsilon").editor.setText("0")
    error = form.field("epsilon").error
    assert error.isVisibleTo(form) and error.text() == "parameter 'epsilon' must be > 0.0, got 0.0"
    assert "epsilon" in form.errors() and "epsilon" not in form.values()
    form.field("epsilon").editor.setText("abc")
    assert "must be a number" in error.text()
    form.field("epsilon").editor.setText("0.001")
    assert not error.isVisibleTo(form) and form.values()["epsilon"] == 0.001


def test_a_sweep_list_is_parsed_checked_and_replaces_the_single_value(form):
    form.set_sweep("k", "5, 8, 11")
    assert form.sweeps() == {"k": [5, 8, 11]}
    assert not form.field("k").editor.isEnabled()
    form.set_sweep("k", "5, 1")
    assert "sweep: parameter 'k' must be ≥ 2" in form.field("k").error.text() and form.sweeps() == {}
    form.set_sweep("epsilon", "0.1; 1; 10")
    assert form.sweeps()["epsilon"] == [0.1, 1.0, 10.0]
    form.set_sweep("k", "")
    assert form.field("k").editor.isEnabled() and "k" not in form.sweeps()


def test_set_values_round_trips(form):
    form.set_values(
        {"k": 9, "epsilon": 0.5, "mode": "stop", "strict": True, "label": "x", "top": 4}, {"epsilon": [0.1, 0.2]}
    )
    assert form.values() == {"k": 9, "epsilon": 0.5, "mode": "stop", "strict": True, "label": "x", "top": 4, "fixed": 3}
    assert form.sweeps() == {"epsilon": [0.1, 0.2]}


def test_parse_list_refuses_what_the_parameter_refuses():
    spec = next(s for s in param_specs(Params) if s.name == "k")
    assert parse_list("5, 8,, 5", spec) == [5, 8]
    with pytest.raises(BadInput, match="must be a whole number"):
        parse_list("5, eight", spec)


def test_a_plugin_without_parameters_says_so(qtbot):
    class Bare(Algorithm):
        name = "bare"
        title = "Bare"

    form = ParamForm(Bare)
    qtbot.addWidget(form)
    assert form.values() == {} and form.errors() == {} and form.names() == []


class Hinted(Algorithm):
    name = "hint-test"
    title = "Hint test"
    Params = Params

    @classmethod
    def hint(cls, params) -> str:
        return f"k² = {params.k**2}"


def test_a_plugins_hint_of_the_values_follows_the_edits(qtbot):
    f = ParamForm(Hinted)
    qtbot.addWidget(f)
    f.show()
    qtbot.waitUntil(lambda: f.hint.isVisible() and f.hint.text() == "k² = 25")
    f.field("k").editor.setValue(7)
    qtbot.waitUntil(lambda: f.hint.text() == "k² = 49")
    f.field("epsilon").editor.setText("-1")  # invalid: no hint
    qtbot.waitUntil(lambda: not f.hint.isVisible())


def test_a_plugin_without_a_hint_shows_none(form, qtbot):
    form.show()
    form.field("k").editor.setValue(7)
    qtbot.waitUntil(lambda: not form._hint_timer.isActive())  # the hint was asked for, and is empty
    assert not form.hint.isVisible()
