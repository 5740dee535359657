"""Issue 13 item 17: the window paints before matplotlib, scikit-learn or SciPy's statistics are
imported (they come when a chart first draws). The time to the window is measured in
benchmarks/bench_window.py; here only what cannot fail by load: what was imported at first paint."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = """
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
from veil.desktop import app as desktop_app

class Watch(QObject):
    done = False
    def eventFilter(self, obj, event):
        if not Watch.done and event.type() == QEvent.Type.Paint and obj.isWidgetType() and obj.window().isVisible():
            Watch.done = True
            late = [m for m in ("matplotlib", "sklearn", "scipy.stats") if m in sys.modules]
            window = obj.window()
            print("painted", window.windowTitle(), "|", ",".join(late) or "-", flush=True)
            QTimer.singleShot(0, QApplication.instance().quit)
        return False

watch = Watch()
real = desktop_app.create_app
def create_app(*args, **kwargs):
    app = real(*args, **kwargs)
    app.installEventFilter(watch)
    return app
desktop_app.create_app = create_app
sys.exit(desktop_app.run_desktop(["--demo"]))
"""


def test_the_demo_window_paints_before_plotting_or_learning_is_imported(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "VEIL_SETTINGS_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300, env=env)
    lines = [line for line in out.stdout.splitlines() if line.startswith("painted")]
    assert lines, out.stderr[-3000:]
    title, late = lines[0].removeprefix("painted ").split(" | ")
    assert "Veil" in title  # the main window, with the demo data open
    assert late == "-", f"imported before the window painted: {late}"
