"""The main window: it assembles the four panels (docs/design.md, "The desktop's start") and nothing more.

It can paint before there is anything to put in it: ``MainWindow(None)`` is the
frame alone (menus, toolbar, tabs and docks saying what they are waiting for, the status bar), built
from Qt and a few light modules, and :meth:`MainWindow.attach` builds the panels into it once the
plugin registry is there (see ``app.run_desktop``, which shows the frame first). ``MainWindow(registry)``
does both at once.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMessageBox, QProgressBar, QTabWidget, QToolBar

from .actions import Actions, import_options
from .settings import Settings

# the tabs and docks of the frame before the panels are built: (title, what it waits for)
TABS = (("Dataset", "Loading the data…"), ("Charts", "Loading the charts…"), ("Release preview", "Loading…"))
WAITING_DOCKS = {"Configuration": "Loading the privacy models and methods…", "Runs": "Loading…"}


def window_title(name: str) -> str:
    """The window's title for the open file: "ward.csv — Veil". Qt appends the application's name
    to a title unless it already ends with it, so a title starting with "Veil" read "Veil — ward.csv
    — Veil"."""
    return f"{name} — Veil"


def waiting_label(text: str) -> QLabel:
    label = QLabel(text, alignment=Qt.AlignCenter, objectName="waiting")
    label.setEnabled(False)  # greyed: a hint, not content
    return label


class MainWindow(QMainWindow):
    attached = Signal()  # the panels are built and work (attach)

    def __init__(self, registry=None, settings: Settings | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Veil")
        self.setObjectName("veil-main")
        self.registry = None
        self.controller = None  # the session, once the panels are built (attach)
        self.settings = settings or Settings()
        self.last_error = None  # the error dialog shown last
        self.confirm_unsaved = True  # ask before unsaved changes are left behind (tests of other things turn it off)
        self._closing = False  # the user already answered the unsaved-changes question
        self._unsaved_at_close = False
        self._last_answer = None
        self.sensitive_box = None  # the question about releasing columns marked sensitive, while it is open
        self.tabs = QTabWidget()
        for title, waiting in TABS:
            self.tabs.addTab(waiting_label(waiting), title)
        self.setCentralWidget(self.tabs)
        self.config_dock = self._dock(
            "Configuration", waiting_label(WAITING_DOCKS["Configuration"]), Qt.RightDockWidgetArea
        )
        self.runs_dock = self._dock("Runs", waiting_label(WAITING_DOCKS["Runs"]), Qt.BottomDockWidgetArea)
        self.toolbar = QToolBar("Toolbar", objectName="toolbar")
        self.toolbar.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.addToolBar(self.toolbar)
        self.actions = Actions(self)
        self._status_bar()
        self.setAcceptDrops(True)
        self.resize(1360, 860)
        self.resizeDocks([self.config_dock], [430], Qt.Horizontal)
        self.resizeDocks([self.runs_dock], [230], Qt.Vertical)
        geometry, state = self.settings.window()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        if registry is not None:
            self.attach(registry)

    def attach(self, registry) -> None:
        """Build the panels into the frame; from here on the window is the whole desktop."""
        from .chart_panel import ChartPanel
        from .config_panel import ConfigPanel
        from .controller import Controller
        from .dataset_panel import DatasetPanel
        from .lattice_view import SolutionSpaceView
        from .ranking_panel import RankingPanel
        from .release_panel import ReleasePanel
        from .risk_panel import RiskPanel
        from .runs_panel import RunsPanel
        from .utility_panel import UtilityPanel

        if self.controller is not None:
            raise RuntimeError("the window's panels are already built")
        self.registry = registry
        self.controller = Controller(registry, self)
        self.controller.config.cluster = str(self.settings.get("cluster/master") or "")
        self.dataset_panel = DatasetPanel(self.controller.dataset)
        self.dataset_panel.release_household_box.clicked.connect(self.controller.set_release_household)
        self.chart_panel = ChartPanel(self.controller)
        self.config_panel = ConfigPanel(self.controller)
        self.runs_panel = RunsPanel(self.controller)
        self.ranking_panel = RankingPanel(self.controller)
        self.release_panel = ReleasePanel()
        self.lattice_view = SolutionSpaceView()
        self.utility_panel = UtilityPanel()
        self.risk_panel = RiskPanel(self.controller)
        self.lattice_view.apply_requested.connect(self._release_node)
        self._shown_entry = None  # the run the release preview and the solution space show
        self.release_panel.hierarchy_requested.connect(lambda column: self.dataset_panel.edit_hierarchy(column, True))
        current = self.tabs.currentIndex()
        self.tabs.setUpdatesEnabled(False)
        waiting = [self.tabs.widget(i) for i in range(self.tabs.count())]
        self.tabs.clear()
        for w in waiting:
            w.deleteLater()
        self.tabs.addTab(self.dataset_panel, "Dataset")
        self.tabs.addTab(self.chart_panel, "Charts")
        self.tabs.addTab(self.ranking_panel, self.controller.ranking.title())
        self.tabs.addTab(self.release_panel, "Release preview")
        self.tabs.addTab(self.utility_panel, "Utility")
        self.tabs.addTab(self.risk_panel, "Risk")
        self.tabs.addTab(self.lattice_view, "Solution space")
        self.tabs.setTabVisible(self.tabs.indexOf(self.lattice_view), False)  # until a run searched a lattice
        self._ranking_offered()
        if current > 0:  # the tab the user picked while the panels were being built
            self.tabs.setCurrentWidget((self.chart_panel, self.release_panel)[current - 1])
        self.tabs.setUpdatesEnabled(True)
        for dock, panel in ((self.config_dock, self.config_panel), (self.runs_dock, self.runs_panel)):
            waiting = dock.widget()
            dock.setWidget(panel)
            waiting.deleteLater()
        self._connect()
        self.actions.attach()
        self.attached.emit()

    def _dock(self, title: str, widget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower()}")
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable | QDockWidget.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        return dock

    def _status_bar(self) -> None:
        self.data_label = QLabel()
        self.busy = QProgressBar(maximumWidth=220, textVisible=True)
        bar = self.statusBar()
        bar.addPermanentWidget(self.busy)
        bar.addPermanentWidget(self.data_label)
        # showing the progress bar must not change the window's layout (a relayout repaints
        # every panel and redraws the chart while a run is going)
        bar.setFixedHeight(max(bar.sizeHint().height(), self.busy.sizeHint().height() + 6))
        self.busy.hide()
        self._ticker = QTimer(self, interval=250)
        self._ticker.timeout.connect(self._runs_progress)

    def _connect(self) -> None:
        c = self.controller
        c.error.connect(self.show_error)
        c.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        c.data_loaded.connect(self._data_loaded)
        c.schema_offered.connect(self.ask_keep_schema)
        c.data_loaded.connect(c.history.reset)  # after every panel has shown the new data
        c.load_progress.connect(self._load_progress)
        c.export_progress.connect(self._export_progress)
        c.busy_changed.connect(self._busy)
        c.batch_finished.connect(self._batch_finished)
        c.project_saved.connect(lambda p: self.settings.add_recent(p, "project"))
        c.ranking.changed.connect(self._ranking_offered)
        self.config_panel.run_requested.connect(lambda: self.confirm_sensitive(c.run))
        self.runs_panel.export_requested.connect(self.actions.export_release)
        self.dataset_panel.population_requested.connect(self.actions.open_population_file)
        self.dataset_panel.population_closed.connect(c.close_population)
        self.dataset_panel.subset_marked.connect(c.mark_subset)
        self.dataset_panel.aggregates_of = lambda: c.config.aggregates  # what the column menu shows ticked
        self.dataset_panel.aggregate_chosen.connect(c.config.set_aggregate)
        self.chart_panel.run_picked.connect(self.runs_panel.select_run)
        self.runs_panel.run_selected.connect(self._preview_run)
        self.runs_panel.details_requested.connect(self.show_run_details)

    # -- reactions ------------------------------------------------------------------------------
    def show_error(self, title: str, message: str, details: str = ""):
        from .dialogs import show_error

        self.last_error = show_error(self, title, message, details)
        return self.last_error

    def show_run_details(self, entry):
        from .state import tasks
        from .dialogs import RunDetailsDialog

        text = tasks.run_details(entry)
        if entry.failure is not None and entry.failure.details:
            text += "\n" + tasks.details_for_user([entry.failure])
        dialog = RunDetailsDialog(f"Run #{entry.id}", text, self)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.open()
        self.last_details = dialog
        return dialog

    def _preview_run(self, run_id) -> None:
        """The release preview and the solution space show the selected run, or say why they cannot."""
        entry = self.controller.runs.entry(run_id) if run_id is not None else None
        result = entry.outcome.result if entry is not None and entry.outcome is not None else None
        self._shown_entry = entry if result is not None else None
        if result is None:
            why = self._no_release(run_id, entry)
            self.release_panel.show_absent(why)
            self.utility_panel.clear(why)
            self.risk_panel.clear(why)
            self.lattice_view.show_space("", None)
            self.lattice_view.summary.setText(why)
            return
        title = f"Run #{entry.id} {entry.label}"
        self.release_panel.show_release(
            title, result.release, list(getattr(self.controller.dataset.data, "columns", []))
        )
        self.lattice_view.show_space(title, result.release.solution_space)
        original = result.original if result.original is not None else self.controller.dataset.table
        self.utility_panel.show_release(title, original, result.release)
        self.risk_panel.show_release(title, original, result.release)
        if result.release.solution_space is not None:
            self.tabs.setTabVisible(self.tabs.indexOf(self.lattice_view), True)

    def _no_release(self, run_id, entry) -> str:
        """Why the selected run (or none) has no release to show."""
        if run_id is None:
            return "Select a finished run to see its release."
        if entry is None:  # a row of a reopened project whose result could not be kept or trusted
            why = self.controller.not_restored or "its release was not kept with the project"
            return f"Run #{run_id} has no release in memory: {why}."
        if not entry.finished:
            return f"Run #{run_id} is {entry.status}: its release shows here when it finishes."
        if entry.failure is not None:
            return f"Run #{run_id} failed: {entry.failure.message}"
        if entry.outcome is not None and entry.outcome.holds is False:
            return f"Run #{run_id}'s release fails its privacy model, so it is not kept: {entry.outcome.verdict}"
        return f"Run #{run_id} has no release ({entry.status})."

    def _release_node(self, params: dict) -> None:
        """Run the shown run's method again on the transformation chosen in its solution space."""
        if self._shown_entry is not None:
            self.controller.run_with(self._shown_entry, params)

    def _data_loaded(self) -> None:
        from .state.setvalued_view import shape_text

        c, data = self.controller, self.controller.dataset.data
        name = c.project_path.name if c.project_path else c.dataset.name
        self.setWindowTitle(window_title(name))
        shape = shape_text(data)
        self.data_label.setText(shape)
        self.tabs.setCurrentWidget(self.dataset_panel)
        # the runs previewed were on the data before: show the selected run of these (a reopened
        # project's, restored with its release) or say there is none
        self._preview_run(self.runs_panel.selected_run())
        source = c.dataset.source
        if c.project_path is not None and c.project_path.resolve() == self.settings.session_file().resolve():
            pass  # the last session reopening: not a file the user chose
        elif c.project_path is not None:
            self.settings.add_recent(c.project_path, "project")
            self.settings.remember_session("project", c.project_path)
        elif source.demo:
            self.settings.remember_session("demo")
        elif source.path:  # (not the records a column marks in a population: that file is already recent)
            self.settings.add_recent(source.path, "data", import_options(source))
            self.settings.remember_session("data", source.path, import_options(source))
            if not (source.drop_missing or source.fill_missing) and c.dataset.missing():
                self.ask_missing(c.dataset.missing())

    def ask_keep_schema(self, previous: str) -> QMessageBox:
        """The data just opened has the columns of ``previous``: offer to keep what was set on them."""
        c = self.controller
        box = QMessageBox(
            QMessageBox.Question,
            "Same columns",
            f"{c.dataset.name} has the columns of {previous}. Keep their roles, kinds and hierarchies?",
            QMessageBox.Yes | QMessageBox.No,
            self,
        )
        box.setObjectName("keep-schema")
        box.setInformativeText(
            "Yes gives every column the role, kind, hierarchy and feature rule it had in "
            f"{previous}; No keeps the roles suggested for the new file."
        )
        box.setDefaultButton(QMessageBox.Yes)
        box.finished.connect(
            lambda _: c.keep_offered_schema() if box.clickedButton() is box.button(QMessageBox.Yes) else None
        )
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.keep_schema_box = box
        return box

    def ask_missing(self, counts: dict[str, int]) -> QMessageBox:
        """The file has missing values: name every column holding some, and offer the ways to deal
        with them (the file is read again, its columns keeping their roles, kinds and hierarchies)."""
        from veil.engine import describe_missing

        from .dialogs import MISSING_BUTTONS

        which = "column" if len(counts) == 1 else f"{len(counts)} columns"
        box = QMessageBox(
            QMessageBox.Question,
            "Missing values",
            f"{self.controller.dataset.name} has missing values in {which}: {describe_missing(counts)}.",
            QMessageBox.NoButton,
            self,
        )
        box.setObjectName("missing-values")
        box.setInformativeText(
            "Anonymisation methods cannot place a missing value in a group: a run on these "
            "columns would be refused. Drop the records holding one, keep a blank as a value "
            "of its own, or impute it (a number by its column's median, any other value by "
            "the most frequent one). The file is read again; its columns keep their roles, "
            "kinds and hierarchies."
        )
        buttons = {}
        for label, choice in MISSING_BUTTONS:
            buttons[box.addButton(label, QMessageBox.AcceptRole)] = choice
        keep = box.addButton("Leave them", QMessageBox.RejectRole)
        box.setDefaultButton(keep)
        box.finished.connect(lambda _: self.controller.reread_missing(buttons.get(box.clickedButton())))
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.missing_box = box
        return box

    def _batch_finished(self) -> None:
        from .state.ranking import run_ranking

        if any(
            run_ranking(e, self.controller.registry) is not None for e in self.controller.batch
        ):  # candidates to weigh
            self.tabs.setCurrentWidget(self.ranking_panel)
        elif self.controller.runs.metric_names():  # something to draw: show it
            self.tabs.setCurrentWidget(self.chart_panel)

    def _ranking_offered(self) -> None:
        """The ranking tab is there while a run whose method declares a ranker can be ranked, titled
        by that ranker."""
        index, title = self.tabs.indexOf(self.ranking_panel), self.controller.ranking.title()
        if self.tabs.tabText(index) != title:
            self.tabs.setTabText(index, title)
        self.tabs.setTabVisible(index, bool(self.controller.ranking.entries()))

    def _export_progress(self, fraction: float, message: str) -> None:
        self._load_progress(fraction, message)
        self.statusBar().showMessage(f"Exporting: {message}" if message else "Exporting…")

    def _load_progress(self, fraction: float, message: str) -> None:
        self.busy.setRange(0, 100)
        self.busy.setValue(int(100 * fraction))
        self.busy.setFormat(message[:28] or "%p %")
        self.busy.show()

    def _busy(self, busy: bool) -> None:
        if busy:
            self.busy.setRange(0, 0)  # moving until a job reports progress
            self.busy.show()
            self._ticker.start()
        else:
            self._ticker.stop()
            self.busy.hide()

    def _runs_progress(self) -> None:
        batch = self.controller.batch
        if not batch or all(e.finished for e in batch):
            return
        done = sum(1.0 if e.finished else e.fraction for e in batch)
        self.busy.setRange(0, 100)
        self.busy.setValue(int(100 * done / len(batch)))
        self.busy.setFormat(f"run {min(sum(1 for e in batch if e.finished) + 1, len(batch))} of {len(batch)}")
        self.busy.show()

    # -- window events --------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if self.controller is not None and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.actions.open_any(Path(paths[0]))

    # -- unsaved changes and the last session ---------------------------------------------------
    def confirm_discard(self, then) -> bool:
        """Run ``then`` now when nothing is unsaved; else ask first (Save, Discard or Cancel).
        Returns whether ``then`` ran at once."""
        c = self.controller
        if not (self.confirm_unsaved and c.history.dirty) or c.dataset.data is None:
            then()
            return True
        # the question names what Save writes: the project file, never the data file (which Veil never changes)
        question = (
            f"Save the changes to the project {c.project_path.name} first?"
            if c.project_path
            else f"Save your work on {c.dataset.name} as a project first?"
        )
        box = QMessageBox(
            QMessageBox.Question,
            "Unsaved changes",
            question,
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel,
            self,
        )
        box.setObjectName("unsaved-changes")
        kept = (
            "Discard leaves the project file as it was"
            if c.project_path
            else "Save asks where to write a project file; Discard writes nothing"
        )
        box.setInformativeText(
            "Roles, feature rules, the configuration or the results changed since they were "
            f"last saved. The data file itself is never changed. {kept} (Veil still reopens "
            "your work as it is now at its next start)."
        )

        def answered(button: int) -> None:
            self._last_answer = button
            if button == QMessageBox.Save:
                self.actions.save_project()
                if c.history.dirty:  # saving was cancelled or failed: stay
                    return
            elif button == QMessageBox.Discard:
                c.history.mark_clean()
            else:
                return
            then()

        box.finished.connect(answered)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.unsaved_box = box
        return False

    # -- columns marked sensitive ------------------------------------------------------------------
    def confirm_sensitive(self, then) -> bool:
        """Run ``then`` now unless the configured runs may release columns marked sensitive that no
        chosen privacy model protects and the user has not agreed to release; then ask first,
        naming them (the answer is kept in the project, so it is asked once). Returns whether
        ``then`` ran at once."""
        columns = self.controller.sensitive_to_confirm()
        if not columns:
            then()
            return True
        many = len(columns) > 1
        names = ", ".join(columns)
        box = QMessageBox(
            QMessageBox.Warning,
            "Release columns marked sensitive?",
            f"The run may release the column{'s' if many else ''} marked sensitive: {names}.",
            QMessageBox.Cancel,
            self,
        )
        box.setObjectName("release-sensitive")
        box.setInformativeText(
            f"No chosen privacy model protects {'them' if many else 'it'}: the release would show "
            f"{'their' if many else 'its'} values (or features made from {'them' if many else 'it'}) as they are. "
            "Release anyway? The answer is kept in the project. To withhold it instead, cancel and change the "
            "column's role, or leave it out of the features, under Dataset ▸ Columns."
        )
        release = box.addButton("Release and run", QMessageBox.AcceptRole)
        box.setDefaultButton(QMessageBox.Cancel)
        self.sensitive_release_button = release

        def answered(_result: int) -> None:
            if box.clickedButton() is release:
                self.controller.acknowledge_sensitive(columns)
                then()

        box.finished.connect(answered)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.sensitive_box = box
        return False

    def restore_session(self, last: dict) -> None:
        """Reopen the last session as it was when the window closed, saved or not."""
        c = self.controller
        project, dirty = last.get("project"), bool(last.get("dirty"))

        def loaded() -> None:
            c.data_loaded.disconnect(loaded)
            c.project_path = Path(project) if project else None
            self.setWindowTitle(window_title(c.project_path.name if c.project_path else c.dataset.name))
            if dirty:
                c.history.mark_dirty()

        c.data_loaded.connect(loaded)
        c.open_project(last["path"])

    def _keep_session(self) -> None:
        c = self.controller
        saved = c.save_session(self.settings.session_file())
        if saved is not None:
            self.settings.remember_session(
                "session",
                saved,
                project=str(c.project_path) if c.project_path else None,
                dirty=c.history.dirty or self._unsaved_at_close,
            )

    def closeEvent(self, event) -> None:
        if self.controller is None:  # closed while starting: nothing opened yet, nothing to keep
            self.settings.save_window(self.saveGeometry(), self.saveState())
            self.settings.sync()
            super().closeEvent(event)
            return
        if (
            self.confirm_unsaved
            and self.controller.history.dirty
            and self.controller.dataset.data is not None
            and not self._closing
        ):
            event.ignore()

            def close_now():
                self._closing = True
                self._unsaved_at_close = self._last_answer == QMessageBox.Discard  # the session keeps them
                self.close()

            self.confirm_discard(close_now)
            return
        self._keep_session()
        self.settings.save_window(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.risk_panel.shutdown()
        self.utility_panel.shutdown()
        self.controller.shutdown()
        super().closeEvent(event)
