"""Helpers shared by the GUI tests."""

from __future__ import annotations

from veil.desktop.window import MainWindow


def open_window(qtbot, registry, *, confirm_unsaved: bool = False) -> MainWindow:
    """A main window; it asks about unsaved changes only for the tests of that (test_unsaved.py)."""
    window = MainWindow(registry)
    window.confirm_unsaved = confirm_unsaved
    qtbot.addWidget(window)
    window.show()
    return window


def load_demo_into(window, qtbot) -> None:
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        window.controller.open_demo()
