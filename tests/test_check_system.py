"""`scripts/check_system.py` names the xcb libraries a real window needs and prints
the exact install line (a warning for the tests, an error for `make run`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_system.py"


@pytest.fixture
def check():
    spec = importlib.util.spec_from_file_location("check_system", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb libraries are Linux's")
@pytest.mark.parametrize("window, code", [(True, 2), (False, 0)])
def test_a_missing_xcb_library_is_named_with_its_install_line(check, capsys, window, code):
    def find(lib):
        return None if lib in ("xcb-cursor", "xcb-icccm") else f"lib{lib}.so"

    assert check.window_check(window, find) == code
    err = capsys.readouterr().err
    assert f"{check.INSTALL} libxcb-cursor0 libxcb-icccm4\n" in err


def test_nothing_is_said_when_every_library_is_there(check, capsys):
    assert check.window_check(True, lambda lib: f"lib{lib}.so") == 0
    assert capsys.readouterr().err == ""
