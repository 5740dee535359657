"""A screenshot of the differentially private table release's form in the configuration panel, its
hint showing the k and β that ε and δ imply (data-dependent mode, ε = 1.5), for the docs.

Run under a real X server::

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1500x950x24" .venv/bin/python scripts/screenshot_dp_hint.py [OUT_DIR]

Settings go to a temporary folder, so the developer's own are neither read nor changed.
"""

from __future__ import annotations

import os
import sys
import tempfile

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from screenshot import open_window, pump, shoot  # noqa: E402


METHOD = "dp-table"


def main(out_dir: str) -> int:
    app, window, out = open_window(out_dir)
    panel = window.config_panel
    panel.choose(None, [METHOD], values={"epsilon": 1.5, "mode": "data-dependent"})
    pump(600)  # the hint follows a pause in the edits
    panel.ensureWidgetVisible(panel.rows[METHOD].form.hint, 0, 40)
    shoot(app, out, "22-dp-table-hint")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
