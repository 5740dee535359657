"""Menus, shortcuts, the About and Plugins dialogs, and the export dialog's guard."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QKeySequence

from veil.engine import hookimpl, make_registry

from .helpers import open_window


class _Broken:
    """A third-party plugin whose hook raises: Veil records it and carries on."""

    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        raise RuntimeError("this plugin is broken")


@pytest.mark.parametrize(
    "action, keys", [("open", "Ctrl+O"), ("save", "Ctrl+S"), ("run", "Ctrl+R"), ("cancel", "Esc"), ("export", "Ctrl+E")]
)
def test_shortcuts(window, action, keys):
    assert getattr(window.actions, action).shortcut() == QKeySequence(keys)


def test_menus_and_toolbar(window):
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&File", "&Edit", "&Run", "Re&lease", "&View", "&Help"]
    assert window.actions.run in window.toolbar.actions() and window.actions.export in window.toolbar.actions()


def test_about_lists_plugins_and_versions(window, registry):
    dialog = window.actions.show_about()
    assert dialog.isVisible()
    assert "Python" in dialog.versions.text() and "Qt" in dialog.versions.text()
    model = dialog.table.model()
    assert model.rowCount() == len(registry.all())
    assert {model.data(model.index(r, 1)) for r in range(model.rowCount())} >= {"all-features", "k-anonymity"}
    dialog.close()


def test_plugins_dialog_shows_those_that_failed(qtbot):
    registry = make_registry(modules=[_Broken])
    assert registry.failures
    window = open_window(qtbot, registry)
    dialog = window.actions.show_plugins()
    assert "this plugin is broken" in dialog.failures.toPlainText()
    assert dialog.failures.isVisibleTo(dialog)
    dialog.close()
    window.close()


def test_every_plugin_loaded_says_so(window):
    dialog = window.actions.show_plugins()
    assert not dialog.failures.isVisibleTo(dialog)
    dialog.close()


def test_export_without_a_release_explains(demo_window):
    dialog = demo_window.actions.export_release(None)
    assert dialog.run.count() == 0 and not dialog.save_button.isEnabled()
    dialog.close()


def test_running_an_impossible_configuration_explains(demo_window, qtbot):
    demo_window.config_panel.choose("k-anonymity", [], metrics=[])
    assert not demo_window.config_panel.run_button.isEnabled()
    assert "choose at least one method" in demo_window.config_panel.plan_error.text().lower()
    with qtbot.waitSignal(demo_window.controller.error) as blocker:
        demo_window.actions.run.trigger()  # Ctrl+R still answers, with the reason
    assert blocker.args[0] == "Cannot run yet"
    assert demo_window.last_error.isVisible()
