"""The layer rule of docs/design.md: engine/ imports no Qt and no plugin; plugins/ use engine's public
API only; desktop/ never imports a plugin module. import-linter checks the first and third in the
test command; this test checks the same by reading the source, plus the public-API rule."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imports_of(folder: str):
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    pkg = {
                        "engine": "veil.engine",
                        "plugins": "veil.plugins",
                        "desktop": "veil.desktop",
                        "cli": "veil.cli",
                    }[folder]
                    parts = path.relative_to(ROOT / folder).parent.parts
                    here = (
                        ".".join([pkg, *parts[: len(parts) - node.level + 1]]) if node.level <= len(parts) + 1 else pkg
                    )
                    yield path, f"{here}.{node.module}" if node.module else here
                else:
                    yield path, node.module


def _top(name: str) -> str:
    return name.split(".")[0]


@pytest.mark.parametrize("folder", ["engine", "cli", "plugins", "desktop"])
def test_sources_parse_and_exist(folder):
    assert list(imports_of(folder)), f"{folder}/ has no imports at all?"


def test_engine_imports_no_qt_and_no_plugin():
    bad = [
        (p.name, m)
        for p, m in imports_of("engine")
        if _top(m) in ("PySide6", "shiboken6", "PyQt5", "PyQt6") or m.startswith(("veil.plugins", "veil.desktop"))
    ]
    assert bad == []


def test_plugins_use_only_the_engine_public_api():
    bad = [
        (p.name, m)
        for p, m in imports_of("plugins")
        if m.startswith("veil.") and m != "veil.engine" and not m.startswith("veil.plugins")
    ]
    bad += [(p.name, m) for p, m in imports_of("plugins") if _top(m) in ("PySide6", "shiboken6")]
    assert bad == [], "plugins must import `from veil.engine import ...` only"


def test_engine_never_imports_the_command_line():
    assert [(p.name, m) for p, m in imports_of("engine") if m.startswith("veil.cli")] == []


def test_desktop_never_imports_a_plugin():
    bad = [(p.name, m) for p, m in imports_of("desktop") if m.startswith("veil.plugins")]
    assert bad == []


def qt_in_the_desktop_state() -> list[tuple[str, str]]:
    """Where a module of the desktop's state (desktop/state/) imports Qt, or a desktop module
    outside the state (every one of which may bring Qt with it)."""
    return [
        (p.name, m)
        for p, m in imports_of("desktop")
        if (ROOT / "desktop" / "state") in p.parents
        and (
            _top(m) in ("PySide6", "shiboken6", "PyQt5", "PyQt6")
            or m.startswith("veil.desktop")
            and not m.startswith("veil.desktop.state")
        )
    ]


def test_the_desktop_state_imports_no_qt():
    """Qt-free by its imports, not by its docstring: the rules of the panels are tested without a window."""
    assert (ROOT / "desktop" / "state" / "__init__.py").is_file()
    assert qt_in_the_desktop_state() == []


def test_the_state_check_finds_qt_and_a_widget_module(tmp_path):
    state = tmp_path / "desktop" / "state"
    state.mkdir(parents=True)
    (state / "bad.py").write_text(
        "from PySide6.QtCore import QObject\nfrom ..widgets import muted\nfrom .events import Event\n"
    )
    (tmp_path / "desktop" / "window.py").write_text("from PySide6.QtWidgets import QWidget\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = qt_in_the_desktop_state()
    finally:
        ROOT = saved
    assert found == [("bad.py", "PySide6.QtCore"), ("bad.py", "veil.desktop.widgets")]


def engine_internals(folder: str) -> list[tuple[str, str]]:
    """Where ``folder`` imports a module inside the engine (``veil.engine.<layer>…``) rather than
    the names ``veil.engine`` publishes."""
    return [(p.name, m) for p, m in imports_of(folder) if m.startswith("veil.engine.")]


def test_desktop_uses_only_the_engine_public_api():
    """The desktop imports ``from veil.engine import …`` only: a name it needs from a layer is
    published in that layer's ``__init__`` table, never reached for in the module that holds it."""
    assert engine_internals("desktop") == []


def test_the_public_api_check_finds_an_engine_submodule(tmp_path):
    fake = tmp_path / "desktop"
    fake.mkdir()
    (fake / "bad.py").write_text(
        "import veil.engine.run.worker\nfrom veil.engine.data.hierarchy import x\n"
        "from veil.engine import Table\nfrom veil import cli\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = engine_internals("desktop")
    finally:
        ROOT = saved
    assert found == [("bad.py", "veil.engine.run.worker"), ("bad.py", "veil.engine.data.hierarchy")]


def test_checker_catches_a_violation(tmp_path):
    """The checker itself can fail: a fake engine module importing Qt is reported."""
    fake = tmp_path / "engine"
    fake.mkdir()
    (fake / "bad.py").write_text("from PySide6 import QtCore\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        bad = [m for _, m in imports_of("engine") if _top(m) == "PySide6"]
    finally:
        ROOT = saved
    assert bad == ["PySide6"]
