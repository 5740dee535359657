"""Helpers shared by the GUI tests."""

from __future__ import annotations

from veil.desktop.window import MainWindow


def open_window(qtbot, registry) -> MainWindow:
    window = MainWindow(registry)
    qtbot.addWidget(window)
    window.show()
    return window


def load_demo_into(window, qtbot) -> None:
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        window.controller.open_demo()
