"""Screenshots of the differentially private table release's form in the configuration panel, its
hint showing the k and β that ε and δ imply (data-dependent mode, ε = 1.5); then with ε typed as 5,
whose k takes a moment to compute: the form says "computing…" while the window stays usable.

Run under a real X server::

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1500x950x24" .venv/bin/python scripts/screenshot_dp_hint.py [OUT_DIR]

Settings go to a temporary folder, so the developer's own are neither read nor changed.
"""

from __future__ import annotations

import os
import sys
import tempfile

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from screenshot import open_window, shoot, wait_until  # noqa: E402

from veil.desktop.forms import COMPUTING  # noqa: E402


METHOD = "dp-table"


def main(out_dir: str) -> int:
    app, window, out = open_window(out_dir)
    panel = window.config_panel
    panel.choose(None, [METHOD], values={"epsilon": 1.5, "mode": "data-dependent"})
    form = panel.rows[METHOD].form
    wait_until(lambda: "k = " in form.hint.text())  # the hint follows a pause in the edits
    panel.ensureWidgetVisible(form.hint, 0, 40)
    shoot(app, out, "22-dp-table-hint")
    form.field("epsilon").editor.setText("5")
    wait_until(lambda: form.hint.text() == COMPUTING, 10)
    app.primaryScreen().grabWindow(0).save(str(out / "23-dp-table-hint-computing.png"))
    print(out / "23-dp-table-hint-computing.png", repr(form.hint.text()))
    wait_until(lambda: "k = " in form.hint.text())
    shoot(app, out, "24-dp-table-hint-computed")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
