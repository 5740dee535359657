"""Edit ▸ Undo (Ctrl+Z) and Redo (Ctrl+Shift+Z) for roles, kinds, feature rules,
the configuration and the results list."""

from __future__ import annotations

from PySide6.QtCore import Qt

from veil.engine import Role


def press(window, qtbot, key, modifiers):
    with qtbot.waitActive(window):
        window.activateWindow()
    qtbot.keyClick(window, key, modifiers)


def test_roles_kinds_and_rules_undo_and_redo_with_the_keys(demo_window, qtbot):
    window, dataset = demo_window, demo_window.controller.dataset
    actions = window.actions
    assert not actions.undo.isEnabled()  # a freshly opened dataset has nothing to undo
    before = dataset.column("age").role
    dataset.set_roles(["age"], Role.SENSITIVE)
    dataset.set_rule("length_of_stay", "equal-width", bins=3)
    assert actions.undo.isEnabled() and "feature rule" in actions.undo.text()
    press(window, qtbot, Qt.Key_Z, Qt.ControlModifier)
    assert dataset.step("length_of_stay").rule != "equal-width" or dataset.step("length_of_stay").bins != 3
    assert dataset.column("age").role is Role.SENSITIVE
    press(window, qtbot, Qt.Key_Z, Qt.ControlModifier)
    assert dataset.column("age").role is before
    assert window.dataset_panel.table_model.headerData(0, Qt.Horizontal) is not None
    press(window, qtbot, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert dataset.column("age").role is Role.SENSITIVE
    actions.redo.trigger()
    assert dataset.step("length_of_stay").bins == 3
    assert not actions.redo.isEnabled()
    kind = dataset.column("age").kind  # numbers, which can be read as categories and back
    dataset.set_kind("age", "categorical" if kind.value != "categorical" else "numeric")
    assert dataset.column("age").kind is not kind
    actions.undo.trigger()
    assert dataset.column("age").kind is kind


def test_the_configuration_undoes_into_the_panel(demo_window, qtbot):
    window, config = demo_window, demo_window.controller.config
    window.config_panel.choose("k-anonymity", ["greedy-hamdist"], metrics=["sfc"])
    window.controller.history.reset()
    window.config_panel.choose("k-ac", ["greedy-distcnt"], metrics=["sfc"])
    assert config.model == "k-ac"
    while window.actions.undo.isEnabled():
        window.actions.undo.trigger()
    assert config.model == "k-anonymity" and config.selected == ["greedy-hamdist"]
    assert window.config_panel.model_combo.currentData() == "k-anonymity"
    assert window.config_panel.rows["greedy-hamdist"].check.isChecked()
    assert not window.config_panel.rows["greedy-distcnt"].check.isChecked()
    while window.actions.redo.isEnabled():
        window.actions.redo.trigger()
    assert config.model == "k-ac" and window.config_panel.model_combo.currentData() == "k-ac"


def test_clearing_the_results_can_be_undone(demo_window, qtbot):
    window = demo_window
    window.config_panel.choose("k-anonymity", ["greedy-hamdist"], sweep={"k": "3, 5"}, metrics=["sfc"])
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()
    results = window.runs_panel.results_model
    assert results.rowCount() == 2
    window.runs_panel.clear_results.click()
    assert results.rowCount() == 0 and "clear results" in window.actions.undo.text()
    window.actions.undo.trigger()
    assert results.rowCount() == 2
    window.actions.redo.trigger()
    assert results.rowCount() == 0
