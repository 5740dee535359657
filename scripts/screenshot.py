"""Take a screenshot of the main window (run under a real X server, e.g. xvfb-run)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from veil.desktop.app import MainWindow
from veil.engine import make_registry


def main(out: str) -> int:
    app = QApplication([sys.argv[0]])
    window = MainWindow(make_registry())
    window.open_demo()
    window.show()

    def shoot():
        app.primaryScreen().grabWindow(0).save(out)
        app.quit()

    QTimer.singleShot(1500, shoot)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots/main-window.png"))
