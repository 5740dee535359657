"""Starting the desktop: the QApplication (high-DPI, names for QSettings), the main window, and
what it opens first: the file or project named on the command line, else the last session, else
the bundled demo data, so a first run needs no file.

The window is on screen first: :func:`run_desktop` shows the main window's
frame, built from Qt alone, and only after its first paint does :class:`Starter` import the data
libraries and make the plugin registry on a thread (the frame's busy bar moves meanwhile), build the
panels into the window (:meth:`MainWindow.attach`) and open what :func:`open_first` chooses.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from .actions import is_project
from .settings import Settings, options_from_dict
from .window import MainWindow

__all__ = ["MainWindow", "Starter", "create_app", "open_first", "run_desktop"]


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
        window.show_error(
            "Something went wrong",
            f"Veil hit an internal error ({kind.__name__}: {value}). "
            "Your data is unchanged; save your project and report the details below.",
            details,
        )

    return hook


def load_registry(plugins: Sequence[str] = ()):
    """What the panels need and Qt does not: the data libraries, the Qt-free modules of the desktop
    and the plugin registry, with the plugins being tried out (``veil --plugin``, ``VEIL_PLUGINS``).
    Touches no Qt object, so it may run on a thread."""
    from veil.engine import WorkerProcess, make_registry, plugins_to_try  # noqa: F401  (WorkerProcess: the Runner's)

    from .state import history, ranking, tasks  # noqa: F401  (Qt-free; the panels import them)
    from .data_libraries import import_data_libraries

    import_data_libraries()
    return make_registry(extra=plugins_to_try(plugins, os.environ.get("VEIL_PLUGINS", "")))


class Starter(QObject):
    """Brings the window's content in after the window's first paint (or ``FALLBACK_MS`` after it
    was shown, whichever comes first): the registry on a thread, then the panels and the data on
    the GUI thread. ``finished`` is emitted once the panels are built and the opening is queued."""

    FALLBACK_MS = 1000
    loaded = Signal(object)  # the registry, or the exception that stopped it (from the thread)
    finished = Signal()

    def __init__(self, window: MainWindow, argv: Sequence[str], load=load_registry):
        super().__init__(window)
        self.window, self.argv, self._load = window, list(argv), load
        self.thread: threading.Thread | None = None
        self.opened: str | None = None  # what open_first opened
        self.loaded.connect(self._attach)  # queued: emitted on the thread, received on the GUI thread
        self._waiting_paint = True
        QApplication.instance().installEventFilter(self)
        QTimer.singleShot(self.FALLBACK_MS, self, self.begin)  # not after the window is gone
        window.statusBar().showMessage("Starting Veil…")
        window.busy.setRange(0, 0)
        window.busy.setFormat("starting")
        window.busy.show()

    def eventFilter(self, obj, event) -> bool:
        if (
            self._waiting_paint
            and event.type() == QEvent.Type.Paint
            and obj.isWidgetType()
            and obj.window() is self.window
        ):
            self._waiting_paint = False
            QTimer.singleShot(0, self, self.begin)
        return False

    def begin(self) -> None:
        if self.thread is not None:
            return
        self._waiting_paint = False
        QApplication.instance().removeEventFilter(self)
        self.thread = threading.Thread(target=self._run, name="veil-start", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            result = self._load()
        except BaseException as exc:  # reported on the GUI thread, as a dialog
            result = exc
        try:
            self.loaded.emit(result)
        except RuntimeError:
            pass  # the window was closed (and deleted) while starting

    def _attach(self, result) -> None:
        self.thread.join()
        window = self.window
        if not window.isVisible():  # closed while starting: nothing to build, nothing to open
            return
        window.busy.hide()
        window.statusBar().clearMessage()
        if isinstance(result, BaseException):
            details = "".join(traceback.format_exception(result))
            print(details, file=sys.stderr)
            box = QMessageBox(
                QMessageBox.Critical,
                "Veil could not start",
                f"Loading the plugins failed ({type(result).__name__}: {result}).",
                QMessageBox.Ok,
                window,
            )
            box.setDetailedText(details)
            box.open()
            window.last_error = box
            return
        window.attach(result)
        self.opened = open_first(window, self.argv)
        self.finished.emit()


def names_pyside(module) -> bool:
    """Whether ``module``'s source file contains "PySide6": PySide6's own test (feature.py's
    ``_mod_uses_pyside``), reading the file directly rather than through ``inspect``."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) if spec is not None else getattr(module, "__file__", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return False  # built in, compiled, or without source: inspect cannot read it either
    try:
        return b"PySide6" in Path(origin).read_bytes()
    except OSError:
        return False


def lighten_pyside_import_hook() -> bool:
    """PySide6 checks every module imported after it for the word "PySide6" in its source (to know
    which may use its ``__feature__`` switches, which Veil does not). It reads the source through
    ``inspect``, whose module lookup walks all of ``sys.modules`` at every call: about 0.2 s of CPU
    for the data libraries and plugins the desktop imports after its window shows. Swap in the same
    test reading the file directly. Returns whether it applied (another PySide6 is left alone)."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    feature._mod_uses_pyside = names_pyside
    return True


def run_desktop(argv: Sequence[str], plugins: Sequence[str] = ()) -> int:
    app = create_app()
    lighten_pyside_import_hook()
    window = MainWindow(None, Settings())
    sys.excepthook = _excepthook(window)
    window.starter = Starter(window, argv, functools.partial(load_registry, tuple(plugins)))
    window.show()
    return app.exec()
