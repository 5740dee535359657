"""Menus, the toolbar, shortcuts and the dialogs they open (open, project, export, about).

The flows here only gather the user's choices; the work itself is the controller's. The actions
exist as soon as the window does (its menus and toolbar paint with it); they are enabled once the
window's panels are built (:meth:`Actions.attach`), and the dialogs are imported when first opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QStyle

from veil.engine import ImportOptions

from .settings import options_from_dict

if TYPE_CHECKING:
    from .dialogs import AboutDialog, ExportDialog, ImportDialog, PluginsDialog

PROJECT_SUFFIX = ".veil.json"
PROJECT_FILTER = f"Veil project (*{PROJECT_SUFFIX} *.json)"


def is_project(path: str | Path) -> bool:
    return str(path).lower().endswith(PROJECT_SUFFIX)


class Actions(QObject):
    """Every QAction of the main window, and the slots behind them."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.settings = window.settings
        self.dialog = None  # the dialog opened last (tests reach it here)
        self.message_box = None  # the last "exported" message
        style = window.style()

        def act(text, slot, shortcut=None, icon=None, tip=""):
            a = QAction(text, window)
            if shortcut is not None:
                a.setShortcut(shortcut)
            if icon is not None:
                a.setIcon(style.standardIcon(icon))
            a.setStatusTip(tip)
            a.triggered.connect(slot)
            return a

        self.open = act(
            "&Open data…",
            self.open_file,
            QKeySequence.Open,
            QStyle.SP_DialogOpenButton,
            "Open a data file (CSV, Excel, Parquet, ARFF, transactions, …)",
        )
        self.open_demo = act(
            "Open the &demo data",
            lambda: self.window.confirm_discard(self.controller.open_demo),
            None,
            None,
            "The bundled synthetic hospital admissions",
        )
        self.open_population = act(
            "Open p&opulation…",
            self.open_population_file,
            None,
            None,
            "Open the population the data was drawn from, read like the data: δ-presence "
            "and k-map judge each released group against it",
        )
        self.load_hierarchies = act(
            "Load &hierarchies from a folder…",
            lambda: self.window.dataset_panel.load_hierarchy_folder(),
            None,
            None,
            "Attach every hierarchy file of a folder whose name matches a column (ARX's "
            "<data>_hierarchy_<column>.csv, or <column>.csv), after showing what matched",
        )
        self.open_project = act("Open &project…", self.open_project_file, QKeySequence("Ctrl+Shift+O"))
        self.save = act(
            "&Save project",
            self.save_project,
            QKeySequence.Save,
            QStyle.SP_DialogSaveButton,
            "Save data source, roles, recipe, configuration and results",
        )
        self.save_as = act("Save project &as…", self.save_project_as, QKeySequence("Ctrl+Shift+S"))
        self.quit = act("&Quit", window.close, QKeySequence.Quit)
        self.run = act(
            "&Run",
            lambda: self.window.confirm_sensitive(self.controller.run),
            QKeySequence("Ctrl+R"),
            QStyle.SP_MediaPlay,
            "Queue every run of the configuration",
        )
        self.cancel = act(
            "&Cancel runs",
            lambda: self.controller.cancel_all(),
            QKeySequence(Qt.Key_Escape),
            QStyle.SP_BrowserStop,
            "Cancel the running and queued jobs",
        )
        self.cancel.setEnabled(False)
        self.export = act(
            "&Export…",
            lambda: self.export_release(None),
            QKeySequence("Ctrl+E"),
            QStyle.SP_ArrowDown,
            "Write a release, its manifest and report",
        )
        self.undo = act(
            "&Undo", lambda: self.controller.history.undo(), QKeySequence.Undo, None, "Take back the last change"
        )
        self.redo = act(
            "&Redo", lambda: self.controller.history.redo(), QKeySequence("Ctrl+Shift+Z"), None, "Make the change again"
        )
        self.redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.about = act("&About Veil", self.show_about)
        self.guide = act(
            "&User guide",
            self.show_guide,
            QKeySequence.HelpContents,
            None,
            "The workflow, every privacy model and method in plain words, a glossary",
        )
        self.plugins = act("&Plugins…", self.show_plugins)
        self.preferences = act(
            "&Settings…",
            self.show_settings,
            QKeySequence.Preferences,
            None,
            "Where runs go: this computer, or a Spark master",
        )
        self.recent_menu = QMenu("Open &recent", window)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._menus()
        self._toolbar()
        # every action but Quit waits for the panels (attach); the recent files' menu too
        self._waiting = [
            self.open,
            self.open_demo,
            self.open_population,
            self.open_project,
            self.save,
            self.save_as,
            self.run,
            self.export,
            self.undo,
            self.redo,
            self.about,
            self.guide,
            self.plugins,
            self.preferences,
            self.recent_menu.menuAction(),
        ]
        for a in self._waiting:
            a.setEnabled(False)
        if window.controller is not None:
            self.attach()

    @property
    def controller(self):
        return self.window.controller

    def attach(self) -> None:
        """The window's controller exists: the actions work from now on."""
        for a in self._waiting:
            a.setEnabled(True)
        self._waiting = []
        self.controller.history.changed.connect(self._history_changed)
        self._history_changed()
        self.controller.busy_changed.connect(self.cancel.setEnabled)
        self.controller.exported.connect(self._exported)

    def _menus(self) -> None:
        bar = self.window.menuBar()
        file = bar.addMenu("&File")
        for a in (self.open, self.open_demo):
            file.addAction(a)
        file.addMenu(self.recent_menu)
        file.addAction(self.open_population)
        file.addAction(self.load_hierarchies)
        file.addSeparator()
        for a in (self.open_project, self.save, self.save_as):
            file.addAction(a)
        file.addSeparator()
        file.addAction(self.quit)
        edit = bar.addMenu("&Edit")
        edit.addAction(self.undo)
        edit.addAction(self.redo)
        edit.addSeparator()
        edit.addAction(self.preferences)
        run = bar.addMenu("&Run")
        run.addAction(self.run)
        run.addAction(self.cancel)
        release = bar.addMenu("Re&lease")
        release.addAction(self.export)
        view = bar.addMenu("&View")
        for dock in self.window.findChildren(type(self.window.config_dock)):
            view.addAction(dock.toggleViewAction())
        view.addAction(self.window.toolbar.toggleViewAction())
        help_ = bar.addMenu("&Help")
        help_.addAction(self.guide)
        help_.addAction(self.plugins)
        help_.addAction(self.about)

    def _toolbar(self) -> None:
        tb = self.window.toolbar
        for a in (self.open, self.save, None, self.run, self.cancel, None, self.export):
            tb.addSeparator() if a is None else tb.addAction(a)

    # -- opening --------------------------------------------------------------------------------
    def open_file(self) -> None:
        self.window.confirm_discard(self._open_file)

    def _open_file(self) -> None:
        from .dialogs import file_filter

        start = self.settings.get("folders/open") or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open data", start, file_filter(self.controller.registry) + f";;{PROJECT_FILTER}"
        )
        if path:
            self.settings.set("folders/open", str(Path(path).parent))
            self._open_any(path)

    def open_population_file(self) -> None:
        """Choose the population the open data was drawn from (any file the importers read)."""
        from .dialogs import file_filter

        if self.controller.dataset.table is None:
            self.controller.error.emit(
                "Cannot open a population", "open the data first: a population is opened beside a table of records", ""
            )
            return
        start = self.settings.get("folders/open") or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open the population the data was drawn from", start, file_filter(self.controller.registry)
        )
        if path:
            self.controller.open_population(path)

    def open_any(self, path: str | Path) -> None:
        """A project opens as it was saved; a data file through the import dialog (unsaved changes
        are asked about first)."""
        self.window.confirm_discard(lambda: self._open_any(path))

    def _open_any(self, path: str | Path) -> None:
        if is_project(path):
            self.controller.open_project(path)
        else:
            self.ask_import(path)

    def ask_import(self, path: str | Path) -> ImportDialog:
        from .dialogs import ImportDialog

        dialog = ImportDialog(self.controller.registry, path, self.window)
        dialog.accepted.connect(lambda: self.controller.open_path(path, dialog.options()))
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        entries = self.settings.recent()
        for e in entries:
            a = self.recent_menu.addAction(Path(e["path"]).name)
            a.setToolTip(e["path"])
            a.triggered.connect(lambda _=False, e=e: self.open_recent(e))
        if entries:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear the list", self.settings.clear_recent)
        else:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def open_recent(self, entry: dict) -> None:
        self.window.confirm_discard(lambda: self._open_recent(entry))

    def _open_recent(self, entry: dict) -> None:
        if not Path(entry["path"]).is_file():
            self.window.show_error("Cannot open the file", f"{entry['path']} no longer exists")
            return
        if entry.get("kind") == "project":
            self.controller.open_project(entry["path"])
        else:
            self.controller.open_path(entry["path"], options_from_dict(entry.get("options")))

    # -- projects -------------------------------------------------------------------------------
    def open_project_file(self) -> None:
        self.window.confirm_discard(self._open_project_file)

    def _open_project_file(self) -> None:
        start = self.settings.get("folders/open") or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self.window, "Open project", start, PROJECT_FILTER)
        if path:
            self.controller.open_project(path)

    def save_project(self) -> None:
        if self.controller.project_path is None:
            self.save_project_as()
        else:
            self.controller.save_project(self.controller.project_path)

    def save_project_as(self) -> None:
        name = Path(self.controller.dataset.name or "project").stem + PROJECT_SUFFIX
        start = str(Path(self.settings.get("folders/open") or Path.home()) / name)
        path, _ = QFileDialog.getSaveFileName(self.window, "Save project", start, PROJECT_FILTER)
        if path:
            if not path.lower().endswith(".json"):
                path += PROJECT_SUFFIX
            self.controller.save_project(path)

    # -- export ---------------------------------------------------------------------------------
    def export_release(self, run_id: int | None) -> ExportDialog:
        from .dialogs import ExportDialog, default_export_folder

        run_id = run_id if run_id is not None else self.window.runs_panel.selected_run()
        stem = Path(self.controller.dataset.name or "release").stem.replace(" ", "-")
        last = self.settings.get("folders/export")
        base = Path(last) if last else default_export_folder("")
        dialog = ExportDialog(
            self.controller.registry,
            self.controller.runs,
            run_id,
            base,
            self.window,
            stem=stem,
            describe=self.controller.ranking.export_note,
            not_restored=self.controller.not_restored,
        )
        dialog.accepted.connect(lambda: self._export_chosen(dialog))
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _export_chosen(self, dialog: ExportDialog) -> None:
        folder = Path(dialog.folder.text()).expanduser()
        self.settings.set("folders/export", str(folder.parent))
        if dialog.run_id() is not None:
            self.controller.export(dialog.run_id(), folder, dialog.options(), report=dialog.report.isChecked())

    def _exported(self, exported) -> None:
        m = exported.manifest
        verdict = m["verdict"]["message"]
        lines = [
            (
                f"Wrote the table {m['output']['table']} of {m['output']['path']} ({m['output']['rows']:,} rows), "
                f"and manifest.json to"
                if m["output"].get("table")
                else f"Wrote {m['output']['path']} ({m['output']['rows']:,} rows) and manifest.json to"
            ),
            str(exported.folder),
            "",
            f"Privacy: {verdict}",
            f"Verified from the written file: {exported.verification}",
        ]
        if exported.reports:
            lines.append("Report: " + ", ".join(p.name for p in exported.reports))
        box = QMessageBox(QMessageBox.Information, "Release exported", "\n".join(lines), QMessageBox.Ok, self.window)
        box.setObjectName("export-done")
        show = box.addButton("Show folder", QMessageBox.ActionRole)
        show.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(exported.folder))))
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.message_box = box

    # -- help -----------------------------------------------------------------------------------
    def _history_changed(self) -> None:
        history = self.controller.history
        self.undo.setEnabled(history.can_undo())
        self.redo.setEnabled(history.can_redo())
        self.undo.setText(f"&Undo {history.undo_text()}".rstrip())
        self.redo.setText(f"&Redo {history.redo_text()}".rstrip())

    def show_guide(self):
        from .guide import GuideDialog

        self.dialog = GuideDialog(self.controller.registry, self.window)
        self.dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialog.open()
        return self.dialog

    def show_about(self) -> AboutDialog:
        from .dialogs import AboutDialog

        self.dialog = AboutDialog(self.controller.registry, self.window)
        self.dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialog.open()
        return self.dialog

    def show_settings(self):
        """The settings dialog; on OK the cluster's master URL is kept and planned runs go there."""
        from .dialogs import SettingsDialog

        self.dialog = SettingsDialog(self.controller.registry, self.controller.config.cluster, self.window)
        self.dialog.setAttribute(Qt.WA_DeleteOnClose)

        def accepted():
            url = self.dialog.value()
            self.window.settings.set("cluster/master", url)
            self.controller.config.cluster = url
            self.controller.config.changed.emit()  # the plan shows where its runs go

        self.dialog.accepted.connect(accepted)
        self.dialog.open()
        return self.dialog

    def show_plugins(self) -> PluginsDialog:
        from .dialogs import PluginsDialog

        self.dialog = PluginsDialog(self.controller.registry, self.window)
        self.dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialog.open()
        return self.dialog


def import_options(source) -> ImportOptions:
    return source.options() if source is not None else ImportOptions()
