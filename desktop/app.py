"""Starting the desktop: the QApplication (high-DPI, names for QSettings), the main window, and
what it opens first: the file or project named on the command line, else the last session, else
the bundled demo data, so a first run needs no file."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from veil.engine import make_registry

from .actions import is_project
from .settings import Settings, options_from_dict
from .window import MainWindow

__all__ = ["MainWindow", "create_app", "open_first", "run_desktop"]


def create_app(argv: Sequence[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        # Fractional scale factors (125 %, 150 %) render sharp rather than rounded (Qt 6 scales by default).
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication(list(argv or [sys.argv[0]]))
    app.setApplicationName("Veil")
    app.setOrganizationName("Veil")
    app.setApplicationDisplayName("Veil")
    return app


def open_first(window: MainWindow, argv: Sequence[str]) -> str:
    """Open what the command line names, else reopen the last session, else the demo data.
    Returns what was opened: "path", "project", "session" or "demo"."""
    c = window.controller
    paths = [a for a in argv if not a.startswith("-")]
    if "--demo" in argv or not paths and window.settings.last_session() is None:
        c.open_demo()
        return "demo"
    if paths:
        if is_project(paths[0]):
            c.open_project(paths[0])
            return "project"
        c.open_path(paths[0])
        return "path"
    last = window.settings.last_session()
    if last["kind"] == "session":
        window.restore_session(last)
    elif last["kind"] == "project":
        c.open_project(last["path"])
    else:
        c.open_path(last["path"], options_from_dict(last.get("options")))
    return "session"


def _excepthook(window: MainWindow):
    def hook(kind, value, tb):
        details = "".join(traceback.format_exception(kind, value, tb))
        print(details, file=sys.stderr)
        window.show_error("Something went wrong", f"Veil hit an internal error ({kind.__name__}: {value}). "
                          "Your data is unchanged; save your project and report the details below.", details)
    return hook


def run_desktop(argv: Sequence[str]) -> int:
    app = create_app()
    window = MainWindow(make_registry(), Settings())
    sys.excepthook = _excepthook(window)
    open_first(window, list(argv))
    window.show()
    return app.exec()
