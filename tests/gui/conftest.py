"""GUI fixtures: a fresh settings folder per test, a main window that is closed (and its worker
joined) afterwards, and a check that no test leaves a thread running."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).parent

if importlib.util.find_spec("PySide6") is None:  # the engine's tests still run without Qt
    collect_ignore_glob = ["test_*.py", "helpers.py"]
else:
    from veil.desktop.runner import live_workers

    from .helpers import load_demo_into, open_window


def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.gui)
            # matplotlib's Qt backend reads a Qt attribute that Qt 6 deprecates: not Veil's warning
            item.add_marker(
                pytest.mark.filterwarnings(
                    "ignore:Enum value .Qt..ApplicationAttribute.AA_UseHighDpiPixmaps.:DeprecationWarning"
                )
            )


@pytest.fixture(autouse=True)
def fresh_settings(tmp_path, monkeypatch):
    """Every test starts with empty settings of its own (never the developer's)."""
    folder = tmp_path / "settings"
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_thread_left():
    """Fail a test that leaves a worker QThread or a Python thread running."""
    before = set(threading.enumerate())
    yield
    assert live_workers() == [], "a Veil worker thread is still running"
    extra = [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not isinstance(t, threading._DummyThread)
    ]
    assert extra == [], f"threads left running: {extra}"


@pytest.fixture(scope="session")
def demo_table():
    from veil.engine import load_demo

    return load_demo()


@pytest.fixture
def window(qtbot, registry):
    w = open_window(qtbot, registry)
    yield w
    w.close()
    assert live_workers() == []


@pytest.fixture
def demo_window(window, qtbot):
    load_demo_into(window, qtbot)
    return window
