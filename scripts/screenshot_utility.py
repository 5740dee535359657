"""Screenshots of the Utility tab and of a reopened project showing its kept run, for the docs.

Run under a real X server::

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1500x950x24" .venv/bin/python scripts/screenshot_utility.py [OUT_DIR]

Settings go to a temporary folder, so the developer's own are neither read nor changed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from screenshot import pump, shoot, wait  # noqa: E402

from veil.desktop.app import MainWindow, create_app  # noqa: E402
from veil.engine import make_registry  # noqa: E402


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = create_app([])
    registry = make_registry()
    window = MainWindow(registry)
    window.confirm_unsaved = False
    window.resize(1500, 950)
    window.show()
    c = window.controller
    c.open_demo()
    wait(c.data_loaded)
    window.config_panel.choose("k-anonymity", ["mondrian"], values={"k": 5}, metrics=["loss"])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    c.run()
    wait(c.batch_finished)
    entry = c.runs.entries[-1]
    window.runs_panel.select_run(entry.id)
    window.tabs.setCurrentWidget(window.utility_panel)
    if window.utility_panel.busy():  # the figures are computed on the worker
        wait(window.utility_panel.computed)
    window.utility_panel.column.setCurrentText("age")
    window.utility_panel.first.setCurrentText("marital_status")
    window.utility_panel.second.setCurrentText("sex")
    window.utility_panel.pair_tabs.setCurrentIndex(1)
    pump(600)
    shoot(app, out, "utility-tab")

    project = Path(tempfile.mkdtemp(prefix="veil-shots-project-")) / "ward.veil.json"
    c.save_project(project)
    window.close()
    again = MainWindow(registry)
    again.confirm_unsaved = False
    again.resize(1500, 950)
    again.show()
    again.controller.open_project(project)
    wait(again.controller.data_loaded)
    again.runs_panel.select_run(entry.id)
    again.tabs.setCurrentWidget(again.release_panel)
    pump(600)
    shoot(app, out, "reopened-project")
    again.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
