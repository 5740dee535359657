"""No network, proven for the desktop: its start-up (application, main window, the demo data
loaded on the worker thread) with socket creation blocked."""

from __future__ import annotations

from veil.desktop.app import MainWindow, create_app, open_first
from veil.desktop.settings import Settings
from veil.engine import make_registry


def test_the_desktop_starts_with_the_network_blocked(qtbot, no_network):
    create_app()
    window = MainWindow(make_registry(), Settings())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        assert open_first(window, []) == "demo"
        window.show()
    assert window.controller.dataset.name  # the demo data really loaded
    window.close()
    assert no_network == []
