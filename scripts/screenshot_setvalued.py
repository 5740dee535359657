"""Screenshots of set-valued data in the desktop (docs/setvalued.md): BMS-WebView-1 opened (the
Item sets view), a PatternKa k-sweep's release preview (groups with their centres) and GCP
against k. Reads ../shared/datasets (see its README); nothing is copied into the repo.

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1500x940x24" .venv/bin/python scripts/screenshot_setvalued.py
    [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from screenshot import pump, shoot, wait  # noqa: E402

from veil.desktop.app import MainWindow, create_app  # noqa: E402
from veil.desktop.state import model_for  # noqa: E402
from veil.engine import SETS, make_registry  # noqa: E402

DATA = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "datasets"
    / "bms_webview_1"
    / "BMS1_itemset_mining.space-separated.txt"
)
SWEEP = "250, 500, 1000"


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = create_app()
    registry = make_registry()
    window = MainWindow(registry)
    window.confirm_unsaved = False
    window.resize(1500, 940)
    window.show()
    c = window.controller
    c.open_path(DATA)
    wait(c.data_loaded)
    shoot(app, out, "12-setvalued-data")
    method = next(m for m in registry.classes("algorithm") if SETS in m.accepts)
    model = model_for(registry, c.dataset.data, None)  # the model the desktop shows for item sets
    window.config_panel.choose(model, [method.name], sweep={"k": SWEEP}, metrics=["gcp"])
    c.run()
    wait(c.batch_finished, 1_800_000)
    window.runs_panel.select_run(c.batch[1].id)
    window.tabs.setCurrentWidget(window.release_panel)
    shoot(app, out, "13-setvalued-release-preview")
    charts = window.chart_panel
    window.tabs.setCurrentWidget(charts)
    charts.chooser.setCurrentIndex(charts.chooser.findData("privacy-utility"))
    charts.form.field("privacy").set("privacy-value")
    charts.form.field("utility").set("gcp")
    pump()
    shoot(app, out, "14-setvalued-gcp-against-k")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
