"""Closing or opening other data with unsaved changes asks first, and the next
start reopens the last session as it was, not as it was last saved."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from veil.desktop.app import open_first
from veil.desktop.runner import live_workers
from veil.engine import Role

from .helpers import open_window


@pytest.fixture(autouse=True)
def asking(demo_window):
    demo_window.confirm_unsaved = True


def answer(window, qtbot, button):
    qtbot.waitUntil(lambda: getattr(window, "unsaved_box", None) is not None and window.unsaved_box.isVisible())
    window.unsaved_box.button(button).click()


def test_closing_with_unsaved_changes_asks_and_cancel_keeps_the_window(demo_window, qtbot):
    window = demo_window
    assert not window.controller.history.dirty
    window.controller.dataset.set_roles(["age"], Role.SENSITIVE)
    assert window.controller.history.dirty
    assert not window.close()  # asked first
    qtbot.waitUntil(lambda: getattr(window, "unsaved_box", None) is not None and window.unsaved_box.isVisible())
    # what Save writes is a project, never the data file
    assert window.unsaved_box.text() == "Save your work on demo hospital admissions as a project first?"
    assert "The data file itself is never changed" in window.unsaved_box.informativeText()
    answer(window, qtbot, QMessageBox.Cancel)
    assert window.isVisible()
    window.close()
    answer(window, qtbot, QMessageBox.Discard)
    qtbot.waitUntil(lambda: not window.isVisible())


def test_saving_makes_it_clean_and_opening_other_data_asks(demo_window, qtbot, tmp_path):
    window, c = demo_window, demo_window.controller
    c.dataset.set_roles(["age"], Role.SENSITIVE)
    assert c.save_project(tmp_path / "p.veil.json") and not c.history.dirty
    c.dataset.set_rule("length_of_stay", "equal-width", bins=3)
    opened = []
    c.data_loaded.connect(lambda: opened.append(True))
    window.actions.open_demo.trigger()
    qtbot.waitUntil(lambda: window.unsaved_box is not None and window.unsaved_box.isVisible())
    assert window.unsaved_box.text() == "Save the changes to the project p.veil.json first?"
    answer(window, qtbot, QMessageBox.Cancel)
    assert not opened and c.dataset.step("length_of_stay").bins == 3
    window.actions.open_demo.trigger()
    with qtbot.waitSignal(c.data_loaded, timeout=20_000):
        answer(window, qtbot, QMessageBox.Discard)
    assert not c.history.dirty


def test_the_last_session_comes_back_as_it_was(demo_window, qtbot, registry):
    window, c = demo_window, demo_window.controller
    c.dataset.set_roles(["age"], Role.SENSITIVE)
    c.dataset.set_rule("length_of_stay", "equal-width", bins=3)
    window.config_panel.choose("k-anonymity", ["greedy-hamdist"], metrics=["sfc"])
    window.close()
    answer(window, qtbot, QMessageBox.Discard)
    qtbot.waitUntil(lambda: not window.isVisible())
    assert live_workers() == []

    again = open_window(qtbot, registry, confirm_unsaved=True)
    with qtbot.waitSignal(again.controller.data_loaded, timeout=20_000):
        assert open_first(again, []) == "session"
    d = again.controller.dataset
    qtbot.waitUntil(lambda: again.controller.project_path is None)
    assert d.source.demo and d.column("age").role is Role.SENSITIVE
    assert d.step("length_of_stay").rule == "equal-width" and d.step("length_of_stay").bins == 3
    assert again.controller.config.model == "k-anonymity" and "greedy-hamdist" in again.controller.config.selected
    assert again.controller.history.dirty  # still not saved anywhere the user chose
    assert not any("last-session" in e["path"] for e in again.settings.recent())
    again.controller.history.mark_clean()
    again.close()
