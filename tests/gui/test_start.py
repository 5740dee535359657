"""The window is on screen before the plugin registry and the data libraries are
loaded (app.Starter); the panels and the data arrive afterwards, and the window then works as a
window built with its registry does (the other GUI tests build it that way)."""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMessageBox

from veil.desktop.app import Starter
from veil.desktop.settings import Settings
from veil.desktop.window import TABS, WAITING_DOCKS, MainWindow


class FirstPaint(QObject):
    """Notes, at the window's first paint, whether its panels were built yet."""

    def __init__(self, window, events):
        super().__init__()
        self.window, self.events = window, events

    def eventFilter(self, obj, event):
        if (
            event.type() == QEvent.Type.Paint
            and obj.isWidgetType()
            and obj.window() is self.window
            and "paint" not in self.events
        ):
            self.events.append("paint")
            self.events.append("panels" if self.window.controller is not None else "frame")
        return False


def start(qtbot, argv, load):
    window = MainWindow(None, Settings())
    window.confirm_unsaved = False
    qtbot.addWidget(window)
    starter = Starter(window, argv, load=load)
    window.show()
    return window, starter


def test_the_frame_paints_first_then_the_registry_panels_and_data_arrive(qtbot, registry):
    events = []

    def load():
        events.append("load on a thread" if threading.current_thread() is not threading.main_thread() else "load")
        return registry

    watch = FirstPaint(None, events)
    window, starter = start(qtbot, ["--demo"], lambda: load())
    watch.window = window
    QApplication.instance().installEventFilter(watch)
    # the frame: no session yet; every tab and dock says what it waits for; only Quit works
    assert window.controller is None and window.registry is None
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [t for t, _ in TABS]
    assert [window.tabs.widget(i).text() for i in range(window.tabs.count())] == [w for _, w in TABS]
    assert window.config_dock.widget().text() == WAITING_DOCKS["Configuration"]
    assert window.busy.isVisible() and window.statusBar().currentMessage() == "Starting Veil…"
    assert window.actions.quit.isEnabled()
    assert not any(
        a.isEnabled()
        for a in (
            window.actions.run,
            window.actions.open,
            window.actions.save,
            window.actions.export,
            window.actions.undo,
        )
    )
    titles = []
    window.attached.connect(lambda: window.controller.data_loaded.connect(lambda: titles.append(window.windowTitle())))
    with qtbot.waitSignal(starter.finished, timeout=60_000):
        pass
    QApplication.instance().removeEventFilter(watch)
    assert events == ["paint", "frame", "load on a thread"]  # painted before anything was loaded
    assert window.registry is registry and starter.opened == "demo"
    assert window.config_dock.widget() is window.config_panel
    assert window.runs_dock.widget() is window.runs_panel
    assert [window.tabs.widget(i) for i in range(window.tabs.count())] == [
        window.dataset_panel,
        window.chart_panel,
        window.ranking_panel,
        window.release_panel,
        window.utility_panel,
        window.risk_panel,
        window.lattice_view,
    ]
    assert not window.tabs.isTabVisible(window.tabs.indexOf(window.ranking_panel))  # nothing ranked yet
    assert not window.tabs.isTabVisible(window.tabs.indexOf(window.lattice_view))  # no lattice searched yet
    assert not [w for w in window.findChildren(QObject, "waiting") if w.isVisible()]
    assert window.actions.run.isEnabled() and window.actions.open.isEnabled()
    qtbot.waitUntil(lambda: bool(titles), timeout=30_000)
    assert titles == ["demo hospital admissions — Veil"]
    assert window.controller.dataset.table.n_rows == 5000
    assert window.config_panel.model_combo.count() > 0  # the privacy models are offered
    # the one chosen is the model its plugin declares preferred, not the first by name
    preferred = [c.name for c in registry.classes("privacy-model") if c.preferred]
    assert len(preferred) == 1 and preferred[0] != registry.names("privacy-model")[0]
    assert window.config_panel.model_combo.currentData() == preferred[0]
    window.close()


def test_the_last_session_reopens_through_the_start(qtbot, registry):
    first, starter = start(qtbot, ["--demo"], lambda: registry)
    with qtbot.waitSignal(starter.finished, timeout=60_000):
        pass
    qtbot.waitUntil(lambda: first.controller.dataset.data is not None, timeout=30_000)
    first.controller.dataset.set_roles(["age"], "sensitive")  # something to find again
    first.close()  # keeps the session
    again, starter = start(qtbot, [], lambda: registry)
    reopened = []
    again.attached.connect(lambda: again.controller.data_loaded.connect(lambda: reopened.append(True)))
    with qtbot.waitSignal(starter.finished, timeout=60_000):
        pass
    assert starter.opened == "session"
    qtbot.waitUntil(lambda: bool(reopened), timeout=30_000)
    assert again.controller.dataset.column("age").role == "sensitive"
    again.close()


def test_a_failing_start_says_so_and_closing_while_starting_opens_nothing(qtbot):
    def broken():
        raise ImportError("no module named 'a_plugin_dependency'")

    window, starter = start(qtbot, ["--demo"], broken)
    with qtbot.waitSignal(starter.loaded, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: isinstance(window.last_error, QMessageBox), timeout=10_000)
    assert window.last_error.windowTitle() == "Veil could not start"
    assert "a_plugin_dependency" in window.last_error.text()
    assert window.controller is None and not window.busy.isVisible()
    window.last_error.close()
    window.close()

    gate = threading.Event()
    closed, starter = start(qtbot, ["--demo"], lambda: gate.wait(30) and None)
    qtbot.waitUntil(lambda: starter.thread is not None, timeout=30_000)  # painted: the load waits for the gate
    closed.close()
    with qtbot.waitSignal(starter.loaded, timeout=30_000):
        gate.set()
    qtbot.waitUntil(lambda: not starter.thread.is_alive(), timeout=10_000)
    assert closed.controller is None  # nothing was built or opened in the closed window


def test_the_lighter_pyside_import_check_answers_as_pysides_own():
    import sys

    from veil.desktop.app import names_pyside

    feature = sys.modules["shibokensupport.feature"]
    own = feature._mod_uses_pyside
    if own is names_pyside:  # already swapped in this process: nothing to compare against
        return
    import veil.engine.data.table  # noqa: F401

    named = [
        "veil.desktop.app",
        "veil.desktop.window",
        "veil.engine.data.table",
        "json",
        "sys",
        "pandas.core.frame",
        "numpy",
        "PySide6.QtCore",
        "shiboken6",
    ]
    modules = [sys.modules[n] for n in named] + [
        m for name, m in list(sys.modules.items()) if name.startswith(("veil.", "pandas.core.", "numpy."))
    ][:100]
    answers = {m.__name__: names_pyside(m) for m in modules}
    assert answers == {m.__name__: own(m) for m in modules}
    assert answers["veil.desktop.app"] and not answers["veil.engine.data.table"] and not answers["json"]
