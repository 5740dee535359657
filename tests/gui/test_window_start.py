"""`veil --demo` paints its window before the data libraries, the plugin registry
or the panels are there (they come right after, app.Starter), and before matplotlib, scikit-learn
or SciPy's statistics are imported (they come when a chart first draws). The time to the window
is measured in benchmarks/bench_window.py; here only what cannot fail by load: what was imported
at first paint, and that the demo data then arrives in the same window."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = """
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
from veil.desktop import app as desktop_app

FIRST = ("pandas", "numpy", "pyarrow", "scipy", "veil.engine.model.registry", "veil.desktop.state.config",
         "veil.desktop.config_panel", "matplotlib", "sklearn")
LATE = ("matplotlib", "sklearn", "scipy.stats")

class Watch(QObject):
    done = False
    def eventFilter(self, obj, event):
        if not Watch.done and event.type() == QEvent.Type.Paint and obj.isWidgetType() and obj.window().isVisible():
            Watch.done = True
            window = obj.window()
            loaded = [m for m in FIRST if m in sys.modules]
            print("painted", window.windowTitle(), "|", ",".join(loaded) or "-", flush=True)
            window.attached.connect(lambda: window.controller.data_loaded.connect(lambda: data(window)))
        return False

def data(window):
    late = [m for m in LATE if m in sys.modules]
    print("data", window.windowTitle(), "|", ",".join(late) or "-", flush=True)
    QTimer.singleShot(0, QApplication.instance().quit)

watch = Watch()
real = desktop_app.create_app
def create_app(*args, **kwargs):
    app = real(*args, **kwargs)
    app.installEventFilter(watch)
    return app
desktop_app.create_app = create_app
from veil.desktop.launcher import main
sys.exit(main(["--demo"]))
"""


def test_the_demo_window_paints_before_anything_heavy_is_imported_then_the_data_arrives(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "VEIL_SETTINGS_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300, env=env)
    lines = [line for line in out.stdout.splitlines() if line.startswith(("painted", "data"))]
    assert [line.split()[0] for line in lines] == ["painted", "data"], out.stdout + out.stderr[-3000:]
    title, loaded = lines[0].removeprefix("painted ").split(" | ")
    assert title == "Veil"  # the main window, before anything is open
    assert loaded == "-", f"imported before the window painted: {loaded}"
    title, late = lines[1].removeprefix("data ").split(" | ")
    assert title == "demo hospital admissions — Veil"  # the same window, with the demo data
    assert late == "-", f"imported before a chart was drawn: {late}"
