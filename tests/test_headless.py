"""The engine, every plugin and every headless command work without Qt installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_engine_plugins_and_cli_run_with_qt_blocked(tmp_path):
    script = textwrap.dedent(f"""
        import sys, importlib.abc

        class NoQt(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("PySide6", "shiboken6", "PyQt5", "PyQt6"):
                    raise ImportError("Qt is blocked for this test")
                return None

        sys.meta_path.insert(0, NoQt())
        from veil.engine import make_registry
        registry = make_registry()
        assert not registry.failures, registry.failures
        from veil.cli import main
        code = main(["run", "--demo", "--release-sensitive", "diagnosis_group", "--method", "all-features",
                     "--metrics", "sfc", "--out", {str(tmp_path)!r}])
        assert code == 0, code
        assert not [m for m in sys.modules if m.startswith("PySide6")]
        from veil.desktop.launcher import main as launch
        assert launch([]) == 2  # the desktop explains that it needs PySide6
        print("headless ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "headless ok" in proc.stdout
    assert "needs PySide6" in proc.stderr
    assert (tmp_path / "release.csv").exists()
