"""A screenshot of the Risk tab, for the docs: sdcMicro's ``testdata`` (survey weights
``sampling_weight``, households ``ori_hid``) on the keys urbrur, water, sex and age, beside its
release by local suppression (k = 3), SUDA computed for both, the input's combinations of
quasi-identifiers ranked and one selected.

Run under a real X server, from the repository (the data are read from ../shared/datasets)::

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1500x950x24" .venv/bin/python scripts/screenshot_risk.py [OUT_DIR]

Settings go to a temporary folder, so the developer's own are neither read nor changed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from screenshot import open_window, pump, shoot, wait  # noqa: E402

from veil.engine import Role  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "sdcmicro" / "testdata.csv"
KEYS = ["urbrur", "water", "sex", "age"]


def main(out_dir: str) -> int:
    app, window, out = open_window(out_dir, demo=False)
    c = window.controller
    c.open_path(DATA)
    wait(c.data_loaded)
    d = c.dataset
    d.set_roles(d.table.schema.names, Role.INSENSITIVE)
    d.set_roles(KEYS, Role.QUASI_IDENTIFIER)
    d.set_roles(["sampling_weight"], Role.WEIGHT)
    d.set_roles(["ori_hid"], Role.HOUSEHOLD)
    window.config_panel.choose("k-anonymity", ["local-suppression"], values={"k": 3})
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    c.run()
    wait(c.batch_finished)
    window.runs_panel.select_run(c.runs.entries[-1].id)
    panel = window.risk_panel
    window.tabs.setCurrentWidget(panel)
    if panel.busy():
        wait(panel.idle)
    panel.threshold.setValue(0.02)
    panel.compute_suda()
    wait(panel.idle)
    panel.compute_ranking()
    wait(panel.idle)
    panel.riskiest.setCurrentIndex(panel.riskiest.count() - 1)
    panel.ranking_view.selectRow(3)
    pump(600)
    shoot(app, out, "risk-tab")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
