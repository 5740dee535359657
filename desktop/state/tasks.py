"""Work the desktop hands to its worker thread, as plain Qt-free functions of a :class:`Context`.

Each function here runs on the worker (see :mod:`veil.desktop.runner`), never on the GUI thread:
reading a file and summarising its columns, one run of a study, writing a release. They return
small immutable records that the GUI thread only has to display.
"""

from __future__ import annotations


import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import (
    choose_importer,
    BadInput,
    BinaryMatrix,
    Context,
    DataSource,
    ExportOptions,
    ImportOptions,
    Kind,
    Outcome,
    Recipe,
    ReportOptions,
    RunResult,
    RunSpec,
    Step,
    Table,
    VeilError,
    __version__,
    export_release,
    read_data,
    read_population,
    set_valued,
    run_planned,
    verify_manifest,
)

from .ranking import reselected
from .setvalued_view import summarise

HISTOGRAM_BINS = 20
TOP_CATEGORIES = 12
PREVIEW_BYTES = 64 * 1024
BINARY_MAGIC = (b"PK\x03\x04", b"PAR1", b"MATLAB", b"\x89HDF", b"\xd0\xcf\x11\xe0")


# -- column summaries ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnStats:
    """What the dataset panel shows of one column: counts and a small histogram."""

    name: str
    distinct: int
    missing: int
    numeric: bool
    bars: tuple[tuple[str, int], ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    mean: float | None = None
    other: int = 0  # rows in categories beyond the ones shown


def column_stats(series: pd.Series, kind: Kind) -> ColumnStats:
    values = series.dropna()
    distinct, missing = int(values.nunique()), int(series.isna().sum())
    numbers = pd.to_numeric(values, errors="coerce") if kind in (Kind.NUMERIC, Kind.BINARY) else None
    if kind is Kind.NUMERIC and numbers is not None and numbers.notna().all() and distinct > TOP_CATEGORIES:
        x = numbers.to_numpy(dtype=float)
        counts, edges = np.histogram(x, bins=HISTOGRAM_BINS)
        bars = tuple((f"{edges[i]:.4g}–{edges[i + 1]:.4g}", int(c)) for i, c in enumerate(counts))
        return ColumnStats(
            str(series.name), distinct, missing, True, bars, float(x.min()), float(x.max()), float(x.mean())
        )
    top = values.value_counts(sort=True).head(TOP_CATEGORIES)
    bars = tuple((str(v), int(c)) for v, c in top.items())
    other = int(len(values) - top.sum())
    lo = hi = mean = None
    if numbers is not None and len(numbers) and numbers.notna().all():
        lo, hi, mean = float(numbers.min()), float(numbers.max()), float(numbers.mean())
    return ColumnStats(str(series.name), distinct, missing, False, bars, lo, hi, mean, other)


def table_stats(table: Table, ctx: Context) -> dict[str, ColumnStats]:
    stats = {}
    for i, col in enumerate(table.schema.columns):
        ctx.progress(i / max(len(table.columns), 1), f"summarising {col.name}")
        stats[col.name] = column_stats(table.frame[col.name], col.kind)
    return stats


# -- binarisation preview -----------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnFeatures:
    """The binary features one recipe step makes, with how many rows have each (or why none)."""

    column: str
    step: Step
    features: tuple[tuple[str, int], ...] = ()
    error: str = ""


def preview_step(table: Table, step: Step) -> ColumnFeatures:
    try:
        matrix = Recipe((step,), None).apply(table)
    except BadInput as exc:
        return ColumnFeatures(step.column, step, (), str(exc))
    counts = matrix.column_counts()
    return ColumnFeatures(step.column, step, tuple((n, int(c)) for n, c in zip(matrix.feature_names, counts)))


def matrix_features(matrix) -> list[ColumnFeatures]:
    """A transaction matrix (or set-valued records) comes with its features, the items: one preview
    entry of all of them."""
    if isinstance(matrix, BinaryMatrix):
        names, counts = matrix.feature_names, matrix.column_counts()
    else:
        names, counts = matrix.item_names, matrix.item_counts()
    feats = tuple((n, int(c)) for n, c in zip(names, counts))
    return [ColumnFeatures("items", Step("items", "binary"), feats)]


# -- loading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    """A dataset read on the worker, with everything the dataset panel shows precomputed."""

    data: object  # Table or BinaryMatrix
    source: DataSource
    stats: dict = field(default_factory=dict)
    previews: dict = field(default_factory=dict)  # Step -> ColumnFeatures
    seconds: float = 0.0
    suggested_roles: bool = False
    sets: object = None  # setvalued_view.SetSummary of set-valued data (what the dataset panel shows of it)


def load(registry, source: DataSource, ctx: Context, *, project=None, suggest_roles: bool = True) -> Loaded:
    """Read ``source`` (or a project's data, checked against its SHA-256 and given its schema);
    summarise the columns and preview the features of the recipe.

    Roles of a plain file are suggested from the column names when ``suggest_roles`` is set.
    """
    started = time.perf_counter()
    name = "the demo data" if source.demo else Path(source.path or source.population or "").name
    ctx.progress(0.0, f"reading {name}")
    data = project.load_data(registry, as_sets=False) if project is not None else source.load(registry)
    ctx.check()
    if not isinstance(data, Table):
        ctx.progress(0.8, "counting the items")
        sets = summarise(data) if set_valued(data) else None
        return Loaded(data, source, {}, {}, time.perf_counter() - started, sets=sets)
    suggested = False
    if project is None and suggest_roles and not source.demo and not source.roles:
        data, suggested = data.with_suggested_roles(), True
    stats = table_stats(data, ctx.child(0.5, 0.8))
    recipe = project.recipe if project is not None and project.recipe is not None else Recipe.default_for(data)
    previews, part = {}, ctx.child(0.8, 1.0)
    for i, step in enumerate(recipe.steps):
        part.progress(i / max(len(recipe.steps), 1), "previewing features")
        previews[step] = preview_step(data, step)
    return Loaded(data, source, stats, previews, time.perf_counter() - started, suggested)


def load_population(registry, source: DataSource, path: str | os.PathLike, ctx: Context):
    """Read the population the data was drawn from, with the data's read options (as ``veil run
    --population`` and a project's data section read it)."""
    ctx.progress(0.0, f"reading the population {Path(path).name}")
    return read_population(registry, source, str(path))


def is_text_file(path: str | os.PathLike) -> bool:
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(BINARY_MAGIC):
        return False
    return b"\x00" not in head or head.startswith((b"\xff\xfe", b"\xfe\xff"))


PREVIEW_RECORDS = 200  # records a binary format's preview reads


def preview(registry, path: str | os.PathLike, options: ImportOptions, max_bytes: int = PREVIEW_BYTES):
    """The first lines of a text file read with ``options`` (the importer sees only a copy of the
    file's head, so a preview of a huge file costs what 64 KB cost). A binary format gives its first
    records when its importer can read them alone (``Importer.head``), None when it is read whole."""
    p = Path(path)
    if not is_text_file(p):  # a binary format previews its first records when its importer reads them cheaply
        return choose_importer(registry, p, options).head(p, options, PREVIEW_RECORDS)
    with open(p, "rb") as f:
        head = f.read(max_bytes + 1)
    if len(head) > max_bytes:
        head = head[: head.rfind(b"\n", 0, max_bytes) + 1] or head[:max_bytes]
    with tempfile.TemporaryDirectory(prefix="veil-preview-") as tmp:
        copy = Path(tmp) / p.name
        copy.write_bytes(head)
        try:
            return read_data(registry, copy, options)
        except BadInput as exc:
            raise BadInput(str(exc).replace(str(copy), p.name)) from None


# -- runs ---------------------------------------------------------------------------------------

RunOutcome = Outcome  # one finished run, as the engine's planner reports it


def run(registry, data, spec: RunSpec, ctx: Context, *, release_household: bool = False) -> RunOutcome:
    """Execute one run through the engine's planner (a failing release is an outcome, not an error);
    ``release_household``: the user agreed to release the household id."""
    return run_planned(registry, data, spec, ctx, version=__version__, release_household=release_household)


# -- export -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exported:
    folder: Path
    manifest: dict
    verified: bool
    verification: str
    reports: tuple[Path, ...] = ()
    committed: bool = True  # the files are in place: a cancel that came after cannot undo them (see runner)


def export(
    registry,
    result: RunResult,
    folder: str | os.PathLike,
    options: ExportOptions,
    ctx: Context,
    *,
    source: DataSource | None = None,
    report: bool = True,
    project: str | os.PathLike | None = None,
    weights=None,
) -> Exported:
    """Write the release, its manifest and its report through the engine, then verify what was
    written (the rules are the engine's: see engine/export.py). A cancel is honoured at every step
    until the files take their names together; then the export is done and is reported as such.

    ``source`` (how the data was read) goes into the manifest, so ``veil report`` can read the input
    again. ``weights`` export a run whose method ranks candidates at other weights than it was made
    with: the top of the ranking at those weights (see :func:`veil.desktop.state.ranking.reselected`).
    """
    folder = Path(folder)
    if weights is not None:
        ctx.progress(0.0, "choosing the subset at these weights")
        result = reselected(registry, result, weights, ctx.child(0.0, 0.1))
    done = export_release(
        registry,
        result,
        folder,
        options,
        report=ReportOptions() if report else None,
        source=source,
        project=project,
        version=__version__,
        ctx=ctx.child(0.1, 0.9),
    )
    reports = tuple(p for p in (done.report_html, done.report_pdf) if p is not None)
    # the files are in place: from here a cancel comes too late, so it is not checked for
    ctx.progress(0.9, "verifying the written files", check=False)
    check = verify_manifest(registry, folder / "manifest.json")
    ctx.progress(1.0, "exported", check=False)
    return Exported(folder, done.manifest, bool(check.holds), check.message, reports)


# -- failures -----------------------------------------------------------------------------------

SUMMARY_CHARS = 160  # a failure's line in a batch's summary box, at most


@dataclass(frozen=True)
class Failure:
    """Why a job failed, in words for the user, with the technical details on demand."""

    message: str
    details: str = ""
    expected: bool = True  # False: a bug (in Veil or a plugin), not the user's input

    @classmethod
    def from_exception(cls, exc: BaseException, details: str | None = None) -> Failure:
        """``details``: the traceback when it was formatted elsewhere (in the worker process)."""
        if details is None:
            details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        if isinstance(exc, VeilError):
            return cls(str(exc), details, True)
        if isinstance(exc, (OSError, MemoryError)):
            return cls(f"{type(exc).__name__}: {exc}", details, True)
        return cls(
            f"an unexpected error ({type(exc).__name__}: {exc}); the details below help whoever maintains the method",
            details,
            False,
        )


def failures_summary(failed, total: int) -> tuple[str, str]:
    """One title and message for the runs of a batch that failed (never one box per run)."""
    title = f"Run #{failed[0].id} failed" if len(failed) == 1 else f"{len(failed)} of {total} runs failed"
    lines = [f"#{e.id} {e.label}: {_first_line(e.failure.message)}" for e in failed[:8]]
    if len(failed) > 8:
        lines.append(f"… and {len(failed) - 8} more (the queue lists them all)")
    return title, "\n".join(lines)


def _first_line(message: str, limit: int = SUMMARY_CHARS) -> str:
    """A failure's message as one short line for a summary (the whole message stays in the run's details)."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    if len(lines) > 1:
        line += " …"
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def details_for_user(failures) -> str:
    """What a dialog's "Show Details" says: never a traceback, but where the log file keeps it."""
    traces = [f.details for f in failures if f.details]
    if not traces:
        return ""
    with tempfile.NamedTemporaryFile("w", prefix="veil-error-", suffix=".log", delete=False, encoding="utf-8") as log:
        log.write("\n\n".join(f"{f.message}\n{f.details}" for f in failures if f.details))
    unexpected = any(not f.expected for f in failures)
    return f"The technical details are in {log.name}" + (
        "; please send that file to whoever maintains the method." if unexpected else "."
    )


def run_details(entry) -> str:
    """Everything about one run, in words: what it is, its verdict with the smallest groups, what
    it released, every metric and the time."""
    lines = [f"Run #{entry.id}: {entry.label}", f"Status: {entry.status_text()}"]
    if entry.failure is not None:
        lines.append(f"Why: {entry.failure.message}")
    spec = entry.planned.spec
    lines.append(f"Method: {spec.method.name} {spec.method.params or ''}".rstrip())
    if spec.then is not None:  # the second step, perturbing the method's release
        lines.append(f"Then: {spec.then.name} {spec.then.params or ''}".rstrip())
    lines.append(f"Privacy model: {spec.model.name} {spec.model.params}" if spec.model else "Privacy model: none")
    lines.append(f"Seed: {spec.seed}")
    outcome = entry.outcome
    if outcome is not None:
        lines.append(f"Verdict: {outcome.verdict}")
        verdict = getattr(outcome.result, "verdict", None)
        for part in verdict.each if verdict is not None else ():
            lines += [
                f"  {part.model} on {column}: {v.measure or 'value'} {v.value:.4g} ({'holds' if v.holds else 'fails'})"
                for column, v in part.by_column
            ]
        if outcome.result is not None:
            lines += _released_lines(outcome.result.release)
        lines.append("Metrics:")
        lines += [f"  {k}: {'—' if v is None or v != v else f'{v:.4g}'}" for k, v in outcome.metrics.items()]
        lines.append("Method time: " + ("—" if outcome.seconds != outcome.seconds else f"{outcome.seconds:.2f} s"))
    elapsed = entry.elapsed()
    if elapsed is not None:
        lines.append(f"Time in the queue, metrics included: {elapsed:.2f} s")
    return "\n".join(lines)


def _released_lines(release) -> list[str]:
    names = (
        list(release.selected_features)
        if release.selected_features is not None
        else [c for c in release.frame.columns if c != release.target]
    )
    shown = ", ".join(map(str, names[:30])) + (f" … ({len(names) - 30} more)" if len(names) > 30 else "")
    lines = [f"Released: {len(names)} columns or features" + (f": {shown}" if names else "")]
    if release.target is not None:
        lines.append(f"Target: {release.target}")
    if release.perturbation is not None:
        lines.append(f"Perturbed: {', '.join(map(str, release.perturbation.columns))}")
    sizes = release.class_sizes()
    if len(sizes):
        group_sizes = pd.Series(sizes).value_counts().sort_index()
        groups = {int(size): int(round(count / size)) for size, count in group_sizes.items()}
        smallest = ", ".join(f"{n:,} group{'s' if n != 1 else ''} of {size}" for size, n in list(groups.items())[:4])
        lines.append(
            f"Groups: {sum(groups.values()):,} (on {len(release.quasi_identifiers)} quasi-identifiers); "
            f"the smallest: {smallest}"
        )
    return lines
