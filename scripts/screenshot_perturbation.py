"""Screenshots of a perturbation in the desktop, for the docs: the method form with a second step
(global recoding, then noise on the length of stay), and the Utility tab on perturbed releases (a
number with noise, a category with PRAM within strata).

Run under a real X server::

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1500x950x24" \
        .venv/bin/python scripts/screenshot_perturbation.py [OUT_DIR]

Settings go to a temporary folder, so the developer's own are neither read nor changed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from screenshot import open_window, pump, shoot, wait  # noqa: E402


def run_and_show(window, method: str, values: dict, column: str) -> None:
    c = window.controller
    window.config_panel.choose(None, [method], values=values, metrics=[])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    c.run()
    wait(c.batch_finished)
    window.runs_panel.select_run(c.runs.entries[-1].id)
    window.tabs.setCurrentWidget(window.utility_panel)
    if window.utility_panel.busy():  # the figures are computed on the worker
        wait(window.utility_panel.computed)
    window.utility_panel.column.setCurrentText(column)
    pump(600)


def shoot_second_step(app, window, out: Path) -> None:
    """Global recoding under 5-anonymity, then noise addition on the length of stay: the form's second
    step, and the run it made in the queue."""
    c, panel = window.controller, window.config_panel
    panel.choose("k-anonymity", ["global-recoding"], values={"k": 5}, metrics=[])
    row = panel.rows["global-recoding"]
    row.then_combo.setCurrentIndex(row.then_combo.findData("noise-addition"))
    row.then_form.field("columns").set("length_of_stay")
    row.then_form.field("level").set(0.3)
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    c.run()
    wait(c.batch_finished)
    window.runs_panel.select_run(c.runs.entries[-1].id)
    pump(1500)  # the first chart drawn at the canvas's final size
    panel.ensureWidgetVisible(row.then_form, 0, 40)
    pump(300)
    shoot(app, out, "second-step-form")


def main(out_dir: str) -> int:
    app, window, out = open_window(out_dir)
    shoot_second_step(app, window, out)
    run_and_show(window, "noise-addition", {"columns": "age;length_of_stay", "level": 0.3}, "age")
    shoot(app, out, "18-perturbed-number")
    run_and_show(window, "pram", {"columns": "marital_status", "strata": "sex", "retention": 0.6}, "marital_status")
    shoot(app, out, "19-pram-transitions")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
