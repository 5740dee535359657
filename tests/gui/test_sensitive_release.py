"""Before a run that may release a column marked sensitive, which no chosen privacy model protects,
the desktop asks, naming the columns; the answer is kept in the project, so it is asked once."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from .helpers import open_window


def click_run(window, qtbot):
    qtbot.mouseClick(window.config_panel.run_button, Qt.LeftButton)


def test_cancelling_the_question_runs_nothing_and_it_is_asked_again(demo_window, qtbot):
    window = demo_window
    window.config_panel.choose(None, ["all-features"], metrics=["sfc"])
    click_run(window, qtbot)
    box = window.sensitive_box
    assert box is not None and box.isVisible() and box.objectName() == "release-sensitive"
    assert "diagnosis_group" in box.text()
    box.button(QMessageBox.Cancel).click()
    assert window.controller.runs.active == [] and not window.controller.runs.records()
    assert window.controller.dataset.release_sensitive == set()
    window.actions.run.trigger()  # Ctrl+R asks the same question
    assert window.sensitive_box is not box and window.sensitive_box.isVisible()
    window.sensitive_box.button(QMessageBox.Cancel).click()


def test_agreeing_runs_and_the_project_remembers(demo_window, qtbot, registry, tmp_path):
    window = demo_window
    window.config_panel.choose(None, ["all-features"], metrics=["sfc"])
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        click_run(window, qtbot)
        window.sensitive_release_button.click()
    assert len(window.controller.runs.records()) == 1
    assert window.controller.history.dirty  # the answer is part of the project
    asked = window.sensitive_box
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        click_run(window, qtbot)  # asked once: the second run starts at once
    assert window.sensitive_box is asked and len(window.controller.runs.records()) == 2

    path = tmp_path / "p.veil.json"
    assert window.controller.save_project(path)
    assert json.loads(path.read_text(encoding="utf-8"))["release_sensitive"] == ["diagnosis_group"]
    other = open_window(qtbot, registry)
    try:
        with qtbot.waitSignal(other.controller.data_loaded, timeout=20_000):
            other.controller.open_project(path)
        assert other.controller.sensitive_to_confirm() == []
        with qtbot.waitSignal(other.controller.batch_finished, timeout=60_000):
            click_run(other, qtbot)
        assert other.sensitive_box is None
    finally:
        other.close()


def test_no_question_when_nothing_sensitive_can_be_released(demo_window, qtbot):
    """Mondrian under l-diversity releases the sensitive column as the attribute the model judges;
    and a column that is no longer marked sensitive is not asked about."""
    window = demo_window
    window.config_panel.choose("l-diversity", ["mondrian"], values={"l": 2}, metrics=["sfc"])
    assert window.controller.sensitive_to_confirm() == []
    window.config_panel.choose("k-anonymity", ["mondrian"], metrics=["sfc"])
    assert window.controller.sensitive_to_confirm() == ["diagnosis_group"]  # k alone leaves its values as they are
    window.controller.dataset.set_roles(["diagnosis_group"], "insensitive")
    assert window.controller.sensitive_to_confirm() == []
