"""The desktop's session: the panels' state, the Runner, and the few actions that start work.

The controller lives on the GUI thread. It turns a user's request (open this file, run this
configuration, export that run) into jobs for the Runner, and the Runner's reports into changes
of the panels' state. Its own signals are the ones tests wait on: they are always emitted on the
GUI thread.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from veil.engine import (
    BadInput,
    DataSource,
    ExportOptions,
    ImportOptions,
    PluginCall,
    Project,
    Remote,
    RunSpec,
    __version__,
    input_parts,
    keep_results,
    restore_results,
)

from .state import tasks
from .state.history import History
from .state.ranking import RankingState
from .runner import Runner
from .state.setvalued_view import shape_text
from .state import (
    ChartState,
    ConfigState,
    DatasetState,
    PlannedRun,
    RunEntry,
    RunsState,
    project_of,
    sensitive_to_confirm,
)
from .state.project import input_key, kept_form, restored_form
from .state.tasks import Failure, Loaded


class Controller(QObject):
    data_loaded = Signal()
    load_progress = Signal(float, str)
    batch_finished = Signal()
    population_opened = Signal()  # a population is held with the data
    schema_offered = Signal(str)  # other data with the same columns opened: keep the setup of (file name)?
    exported = Signal(object)  # tasks.Exported
    export_progress = Signal(float, str)  # what the export is doing
    project_saved = Signal(str)
    error = Signal(str, str, str)  # title, message, details: shown as a dialog
    message = Signal(str)  # a line for the status bar
    busy_changed = Signal(bool)

    def __init__(self, registry, parent: QObject | None = None):
        super().__init__(parent)
        self.registry = registry
        self.dataset = DatasetState()
        self.config = ConfigState()
        self.runs = RunsState()
        self.history = History(self.dataset, self.config, self.runs)
        self.chart = ChartState(registry.preferred("chart") if registry.names("chart") else None)
        self.ranking = RankingState(registry, self.config, self.runs)
        self.project_path: Path | None = None
        self.chosen: list[RunSpec] = []  # transformations released one by one: runs of the project too
        self.not_restored = ""  # why the reopened project's runs have no release in memory (empty: they do)
        self.runner = Runner(self, registry_recipe=registry.recipe)
        self._loads: dict[int, Project | None] = {}
        self._rereads: dict[int, tuple] = {}  # load job -> (schema, rules, released sensitive) to keep
        self._related: dict[int, tuple] = {}  # load job -> (name, schema, rules) of the data open before it
        self.offered: tuple | None = None  # (name, schema, rules) the user may keep on the data just opened
        self._populations: dict[int, DataSource] = {}  # jobs reading a population -> the data it is for
        self._runs: dict[int, RunEntry] = {}
        self._run_sources: dict[int, DataSource | None] = {}  # run id -> where its data was read from
        self._exports: dict[int, Path] = {}
        self._batch = False
        self.batch: list[RunEntry] = []  # the runs queued since the runner was last idle
        self.runner.job_started.connect(self._on_started)
        self.runner.job_progress.connect(self._on_progress)
        self.runner.job_finished.connect(self._on_finished)
        self.runner.job_failed.connect(self._on_failed)
        self.runner.job_cancelled.connect(self._on_cancelled)
        self.runner.idle.connect(self._on_idle)

    # -- opening data ---------------------------------------------------------------------------
    def open_demo(self) -> int:
        return self.open_source(DataSource(demo=True))

    def open_path(self, path: str | Path, options: ImportOptions | None = None) -> int:
        return self.open_source(DataSource.from_options(path, options or ImportOptions()))

    def open_source(self, source: DataSource, project: Project | None = None) -> int:
        """Read on the worker; a new load replaces one still waiting or running. The same file read
        again (other read options, another choice for its missing values) keeps what the user set
        on its columns: kinds, roles, hierarchies and rules."""
        self.runner.cancel_all(kind="load")
        self.runner.cancel_all(kind="population")  # a population is opened beside the data it was read for
        label = "demo data" if source.demo else Path(source.path or source.population or "").name
        job = self.runner.submit(
            f"open {label}", functools.partial(tasks.load, self.registry, source, project=project), kind="load"
        )
        self._loads[job] = project
        if project is None and self._same_file(source) and self.dataset.table is not None:
            self._rereads[job] = (
                self.dataset.table.schema,
                dict(self.dataset.rules),
                set(self.dataset.release_sensitive),
            )
        elif project is None and self.dataset.table is not None:  # another file: its columns may be these
            self._related[job] = (self.dataset.name, self.dataset.table.schema, dict(self.dataset.rules))
        self.busy_changed.emit(True)
        self.message.emit(f"Opening {label}…")
        return job

    def _same_file(self, source: DataSource) -> bool:
        now = self.dataset.source
        if now is None or now.demo or source.demo or not now.path or not source.path:
            return False
        try:
            return Path(now.path).resolve() == Path(source.path).resolve()
        except OSError:
            return False

    def reread_missing(self, choice: str | None) -> int | None:
        """Read the open file again, its missing values dropped (``"drop"``) or filled (``"value"``,
        ``"impute"``); its columns keep their kinds, roles and hierarchies."""
        import dataclasses

        source = self.dataset.source
        if source is None or choice is None:
            return None
        return self.open_source(
            dataclasses.replace(
                source, drop_missing=choice == "drop", fill_missing=None if choice == "drop" else choice
            )
        )

    def open_population(self, path: str | Path) -> int | None:
        """Read the population the data was drawn from (read like the data) on the worker; when it
        can hold the data as a sample, runs judge against it (δ-presence, k-map)."""
        if self.dataset.table is None or self.dataset.source is None:
            self.error.emit(
                "Cannot open a population", "open the data first: a population is opened beside a table of records", ""
            )
            return None
        if self.dataset.source.subset_column:
            self.error.emit(
                "Cannot open a population",
                f"the data is the records {self.dataset.source.subset_column!r} marks in the population already open",
                "",
            )
            return None
        self.runner.cancel_all(kind="population")
        job = self.runner.submit(
            f"open population {Path(path).name}",
            functools.partial(tasks.load_population, self.registry, self.dataset.source, path),
            kind="population",
        )
        self._populations[job] = self.dataset.source
        self.busy_changed.emit(True)
        self.message.emit(f"Opening the population {Path(path).name}…")
        return job

    def mark_subset(self, column: str) -> int | None:
        """The open file is the population; its 1/0 ``column`` marks the data's records (read again
        on the worker, the roles and kinds kept, the column itself dropped from the data)."""
        table, source = self.dataset.table, self.dataset.source
        if table is None or source is None or source.demo or not source.path:
            self.error.emit(
                "Cannot mark the data's records",
                "open the population's file first: a subset column marks the data's records in it",
                "",
            )
            return None
        kept = [c for c in table.schema.columns if c.name != column]
        marked = dataclasses.replace(
            source,
            path=None,
            population=source.path,
            subset_column=column,
            roles={c.name: c.role.value for c in kept},
            kinds={c.name: c.kind.value for c in kept},
        )
        return self.open_source(marked)

    def close_population(self) -> None:
        """Runs no longer judge against a population."""
        if self.dataset.population is not None:
            try:
                self.dataset.set_population(None)
            except BadInput as exc:
                self.error.emit("Cannot close the population", str(exc), "")
                return
            self.history.mark_dirty()
            self.message.emit("The population is closed")

    def _population_read(self, population) -> None:
        try:
            self.dataset.set_population(population)
        except BadInput as exc:
            self.error.emit("Cannot use the population", str(exc), "")
            return
        self.history.mark_dirty()
        self.message.emit(f"Population: {self.dataset.population_text}")
        self.population_opened.emit()

    def open_project(self, path: str | Path) -> int | None:
        try:
            project = Project.load(path)
        except BadInput as exc:
            self.error.emit("Cannot open the project", str(exc), "")
            return None
        self.project_path = Path(path)
        return self.open_source(project.data, project)

    def save_session(self, path: str | Path) -> Path | None:
        """Everything as it is now (saved or not) in ``path``, to reopen at the next start."""
        if self.dataset.data is None or self.dataset.source is None:
            return None
        try:
            saved = project_of(self.registry, self.dataset, self.config, self.runs, self.chosen).save(path)
            self._keep(saved)
            return saved
        except (BadInput, OSError):
            return None  # a session that cannot be kept is not worth an error at closing time

    def save_project(self, path: str | Path) -> bool:
        try:
            project = project_of(self.registry, self.dataset, self.config, self.runs, self.chosen)
            saved = project.save(path)
            self._keep(saved)
        except (BadInput, OSError) as exc:
            self.error.emit("Cannot save the project", str(exc), "")
            return False
        self.project_path = Path(saved)
        self.history.mark_clean()
        self.project_saved.emit(str(saved))
        self.message.emit(f"Saved {Path(saved).name}")
        return True

    def _keep(self, project_file: Path) -> None:
        """Keep the finished runs' results beside the project file, so reopening it shows their
        releases, solution spaces and exports without running them again."""
        kept = {run: (planned, kept_form(outcome)) for run, (planned, outcome) in self.runs.kept().items()}
        keep_results(
            project_file,
            kept,
            input_sha256=input_key(self.dataset),
            version=__version__,
            inputs=input_parts(self.dataset.data),
        )

    def _restore(self, project_file: Path) -> None:
        """Bring back the runs kept beside the project file that can be trusted; say why not otherwise."""
        restored = restore_results(
            project_file,
            input_sha256=input_key(self.dataset),
            version=__version__,
            inputs=input_parts(self.dataset.data),
        )
        for run_id, (planned, outcome) in sorted(restored.results.items()):
            self.runs.adopt(run_id, planned, restored_form(self.registry, outcome))
            self._run_sources[run_id] = self.dataset.source
        self.not_restored = restored.why_not

    # -- running --------------------------------------------------------------------------------
    def run(self) -> list[RunEntry]:
        """Queue every run of the configuration; explain instead when it cannot run."""
        try:
            planned = self.config.plan(self.registry, self.dataset.data, self.dataset.recipe())
        except BadInput as exc:
            self.error.emit("Cannot run yet", str(exc), "")
            return []
        entries = self._queue(planned)
        self.message.emit(self.config.describe(planned) + " queued")
        return entries

    def run_with(self, entry: RunEntry, params: dict) -> list[RunEntry]:
        """Queue ``entry``'s run again with these method parameters (a transformation chosen in its
        solution space): the same data, models, seed and metrics."""
        spec = entry.planned.spec
        method = PluginCall(spec.method.name, {**spec.method.params, **params})
        again = dataclasses.replace(spec, method=method)  # its second step, if any, too
        chosen = tuple(f"{k} = {v}" for k, v in params.items())
        planned = PlannedRun(
            again,
            dict(entry.planned.setting),
            entry.planned.repeat,
            (*entry.planned.fixed, *chosen),
            entry.planned.data,
        )
        entries = self._queue([planned])
        self.chosen.append(again)  # the project repeats it (veil run)
        self.history.mark_dirty()
        self.message.emit(f"Run #{entries[0].id} queued: {', '.join(chosen)}")
        return entries

    def _queue(self, planned) -> list[RunEntry]:
        data = self.dataset.data
        entries = self.runs.add(planned)
        self.batch = (self.batch if self._batch else []) + entries
        for entry in entries:
            spec = entry.planned.spec
            job = self.runner.submit(
                entry.label,
                Remote(tasks.run, (data, spec), {"release_household": self.dataset.releases_household}),
                kind="run",
                seed=spec.seed,
            )
            self._runs[job] = entry
            self._run_sources[entry.id] = self.dataset.source
        self._batch = True
        self.busy_changed.emit(True)
        return entries

    def sensitive_to_confirm(self) -> list[str]:
        """Columns marked sensitive the configured runs may release that the user has not agreed to."""
        return sensitive_to_confirm(self.registry, self.dataset, self.config)

    def acknowledge_sensitive(self, columns) -> None:
        """The user agreed to release ``columns`` (kept in the project: asked once)."""
        self.dataset.release_sensitive |= set(columns)
        self.history.mark_dirty()

    def set_release_household(self, agreed: bool) -> None:
        """The user's answer to releasing the household id (kept in the project)."""
        self.dataset.set_release_household(agreed)
        self.history.mark_dirty()

    def cancel(self, entry: RunEntry) -> None:
        for job, e in list(self._runs.items()):
            if e is entry:
                self.runner.cancel(job)

    def cancel_all(self) -> None:
        self.runner.cancel_all()

    # -- exporting ------------------------------------------------------------------------------
    def export(self, run_id: int, folder: str | Path, options: ExportOptions, *, report: bool = True) -> int | None:
        entry = self.runs.entry(run_id)
        if entry is None or entry.outcome is None or entry.outcome.result is None:
            self.error.emit(
                "Cannot export",
                f"run #{run_id} has no release to write (only finished runs whose "
                "release holds, or makes no privacy claim, can be exported)",
                "",
            )
            return None
        work = Remote(
            tasks.export,
            (entry.outcome.result, Path(folder), options),
            dict(
                source=self._run_sources.get(run_id),
                report=report,
                project=self.project_path,
                weights=self.ranking.export_weights(run_id),
            ),
        )
        job = self.runner.submit(f"export run #{run_id}", work, kind="export")
        self._exports[job] = Path(folder)
        self.busy_changed.emit(True)
        return job

    def shutdown(self) -> bool:
        return self.runner.shutdown()

    # -- the Runner's reports -------------------------------------------------------------------
    @Slot(int)
    def _on_started(self, job: int) -> None:
        if job in self._runs:
            self.runs.start(self._runs[job])

    @Slot(int, float, str)
    def _on_progress(self, job: int, fraction: float, message: str) -> None:
        if job in self._runs:
            self.runs.progress(self._runs[job], fraction, message)
        elif job in self._loads:
            self.load_progress.emit(fraction, message)
        elif job in self._exports:
            self.export_progress.emit(fraction, message)

    @Slot(int, object)
    def _on_finished(self, job: int, value: object) -> None:
        if job in self._runs:
            self.runs.finish(self._runs.pop(job), value)
        elif job in self._loads:
            self._loaded(self._loads.pop(job), value, self._rereads.pop(job, None))
            self._offer_schema(self._related.pop(job, None))
        elif job in self._populations:
            if _same_data(self._populations.pop(job), self.dataset.source):
                self._population_read(value)  # else other data was opened meanwhile: it is not theirs
        elif job in self._exports:
            self._exports.pop(job)
            self.exported.emit(value)

    def _loaded(self, project: Project | None, loaded: Loaded, kept: tuple | None = None) -> None:
        self._forget_runs()
        self.dataset.load(loaded, project.recipe if project is not None else None)
        lost = []
        if kept is not None:
            schema, rules, released = kept
            lost = self.dataset.keep_schema(schema, rules)
            if self.dataset.table is not None:
                self.dataset.release_sensitive = released & set(self.dataset.table.schema.names)
        if project is not None:
            if project.item_sets is not None:  # the project worked on a column's item sets: so again
                try:
                    self.dataset.use_sets(project.item_sets)
                except BadInput as exc:
                    self.error.emit("Cannot use the project's item sets", str(exc), "")
            self.dataset.release_sensitive = set(project.release_sensitive)
            if project.release_household:
                self.dataset.set_release_household(True)
            self.config.load_runs(project.runs)
            self.chosen = list(project.chosen)
            self.runs.restore(project.results)
            if self.project_path is not None:
                self._restore(self.project_path)
        else:
            self.project_path = None
        data = self.dataset.data  # a project's item sets, when it worked on a column's
        shape = shape_text(data)
        if self.dataset.origin is not None:
            shape += f", the item sets of column {data.meta.get('item_column')!r}"
        hint = (
            "; roles were suggested from the column names: check them under Columns" if loaded.suggested_roles else ""
        )
        if kept is not None:
            hint = "; the columns keep their kinds, roles and hierarchies"
            if lost:
                hint += f" (not the hierarchy of {', '.join(map(repr, lost))}, which its values no longer fit)"
        if self.not_restored:
            hint += f"; {self.not_restored}"
        self.message.emit(f"Opened {self.dataset.name}: {shape}{hint}")
        self.data_loaded.emit()

    def _offer_schema(self, related: tuple | None) -> None:
        """Other data whose columns are those of the data open before: offer to keep the kinds, roles,
        hierarchies and rules set on them (a sample beside its population, this year's extract
        beside last year's)."""
        self.offered = None
        table = self.dataset.table
        if related is None or table is None:
            return
        name, schema, rules = related
        if set(schema.names) != set(table.schema.names) or schema == table.schema:
            return
        self.offered = related
        self.schema_offered.emit(name)

    def keep_offered_schema(self) -> list[str]:
        """Give the data just opened the kinds, roles, hierarchies and rules of the data open before
        (the offer of :attr:`schema_offered`); returns the columns whose hierarchy did not fit."""
        if self.offered is None:
            return []
        name, schema, rules = self.offered
        self.offered = None
        lost = self.dataset.keep_schema(schema, rules)
        self.history.mark_dirty()
        text = f"The columns keep the kinds, roles and hierarchies they had in {name}"
        if lost:
            text += f" (not the hierarchy of {', '.join(map(repr, lost))}, which its values no longer fit)"
        self.message.emit(text)
        return lost

    def _forget_runs(self) -> None:
        """New data: the runs on the data before are cancelled and their results leave the tables and
        charts (a project brings back its own)."""
        for job in list(self._runs):
            self.runner.cancel(job)
        self._runs.clear()
        self._run_sources.clear()
        self.batch, self._batch = [], False
        self.chosen, self.not_restored = [], ""
        self.runs.reset()

    @Slot(int, object)
    def _on_failed(self, job: int, failure: Failure) -> None:
        if job in self._runs:  # said once for the whole batch, when it ends (see _on_idle)
            self.runs.fail(self._runs.pop(job), failure)
        elif job in self._loads:
            self._loads.pop(job)
            self._rereads.pop(job, None)
            self._related.pop(job, None)
            self.error.emit("Cannot open the data", failure.message, tasks.details_for_user([failure]))
        elif job in self._populations:
            self._populations.pop(job)
            self.error.emit("Cannot open the population", failure.message, tasks.details_for_user([failure]))
        elif job in self._exports:
            self._exports.pop(job)
            self.error.emit("The release was not exported", failure.message, tasks.details_for_user([failure]))

    @Slot(int)
    def _on_cancelled(self, job: int) -> None:
        if job in self._runs:
            self.runs.cancel(self._runs.pop(job))
        elif job in self._loads:
            self._loads.pop(job)
            self._rereads.pop(job, None)
            self._related.pop(job, None)
            self.message.emit("Opening cancelled")
        elif job in self._populations:
            self._populations.pop(job)
            self.message.emit("Opening the population cancelled")
        elif job in self._exports:
            self._exports.pop(job)
            self.message.emit("Export cancelled: nothing was written")

    @Slot()
    def _on_idle(self) -> None:
        self.busy_changed.emit(False)
        if self._batch:
            self._batch = False
            failed = [e for e in self.batch if e.failure is not None]
            if failed:
                title, message = tasks.failures_summary(failed, len(self.batch))
                self.error.emit(title, message, tasks.details_for_user([e.failure for e in failed]))
            done = sum(1 for e in self.runs.entries if e.status == "done")
            self.message.emit(f"Runs finished ({done} with results)")
            self.batch_finished.emit()


def _same_data(a: DataSource | None, b: DataSource | None) -> bool:
    """Whether two sources read the same data (whatever population each names)."""
    if a is None or b is None:
        return False
    return dataclasses.replace(a, population=None, subset_column=None) == dataclasses.replace(
        b, population=None, subset_column=None
    )
