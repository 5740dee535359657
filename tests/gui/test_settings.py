"""Settings: kept where VEIL_SETTINGS_DIR says, versioned; the window layout and the last session
come back; with nothing to reopen, Veil opens the demo data."""

from __future__ import annotations

from pathlib import Path

from veil.desktop.app import open_first
from veil.desktop.settings import VERSION, Settings

from .helpers import open_window


def test_settings_live_in_the_test_folder_never_the_users(fresh_settings):
    settings = Settings()
    settings.add_recent(__file__)
    settings.sync()
    assert Path(settings.path).is_relative_to(fresh_settings) and Path(settings.path).exists()


def test_settings_of_another_version_are_dropped(fresh_settings):
    settings = Settings()
    settings.add_recent(__file__)
    settings.q.setValue("version", VERSION + 1)
    settings.sync()
    assert Settings().recent() == []


def test_undeclared_settings_are_refused():
    try:
        Settings().set("no/such/key", 1)
    except KeyError as exc:
        assert "undeclared" in str(exc)
    else:
        raise AssertionError("an undeclared key was accepted")


def test_first_start_opens_the_demo_then_the_last_session(qtbot, registry, tmp_path):
    first = open_window(qtbot, registry)
    with qtbot.waitSignal(first.controller.data_loaded, timeout=10_000):
        assert open_first(first, []) == "demo"
    assert first.controller.dataset.source.demo

    data = tmp_path / "small.csv"
    data.write_text("sex,zip\nF,1\nM,2\n", encoding="utf-8")
    with qtbot.waitSignal(first.controller.data_loaded, timeout=10_000):
        first.controller.open_path(data)
    first.resize(first.width(), 650)  # the offscreen screen is 800 × 800: restoring clamps wider windows
    first.close()

    second = open_window(qtbot, registry)
    assert second.height() == 650
    with qtbot.waitSignal(second.controller.data_loaded, timeout=10_000):
        assert open_first(second, []) == "session"
    assert second.controller.dataset.source.path == str(data.resolve())
    second.close()

    data.unlink()  # gone: nothing to reopen, so the demo again
    third = open_window(qtbot, registry)
    with qtbot.waitSignal(third.controller.data_loaded, timeout=10_000):
        assert open_first(third, []) == "demo"
    third.close()


def test_a_path_on_the_command_line_wins(qtbot, registry, tmp_path):
    data = tmp_path / "given.csv"
    data.write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    window = open_window(qtbot, registry)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        assert open_first(window, [str(data)]) == "path"
    assert window.controller.dataset.table.n_rows == 2
    window.close()
