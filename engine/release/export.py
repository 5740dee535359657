"""Writing a release safely, its manifest, and verifying a written release against its manifest.

The rules (docs/design.md, "The export transaction"; docs/release.md):

* the release is checked against its privacy model from the materialised data before anything is
  written, and again *as read back from the written file* before it takes its final name; a
  release that fails is never written, and the message lists the failing records and why;
* an export is one transaction (:mod:`veil.engine.staging`): its files are prepared in a private
  folder beside the target and take their names together, or none does; a cancel, a failure or
  an interrupt leaves the folder as it was, and a killed one is named by ``veil verify`` and
  undone by the next export into the folder;
* the manifest lists every file of the export with its SHA-256, each report carries the hash of
  its manifest, and :func:`verify_manifest` checks the whole set;
* the input file (and the project file) is never written to: a target that is the same file, by
  any path or link, is refused;
* identifier columns never reach the output;
* rows are shuffled with a recorded seed (``shuffle_seed``) unless turned off;
* spreadsheet formulas are escaped by the CSV, TSV and Excel exporters, in header cells too (the
  written names are recorded in the manifest).

:func:`export_release` is the one call the desktop and ``veil run`` make: release, manifest and
report. :func:`write_release` does the first two. Both state an :class:`ExportRequest` and call
:func:`export`; a release in parts (:mod:`.partitioned`) states one too, and every export ends in
the same :func:`finish` (its id, the report, the signed manifest, the commit).
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.errors import BadInput, PrivacyCheckFailed
from ..base.io import missing_reason, sha256_file
from ..data.missing import keep_integers
from ..data.table import CELL_CODES, FILE_LABELS
from ..data.datasource import input_path as data_input_path, input_rows as data_input_rows
from ..model.bound import BoundModel, CombinedModel
from ..model.release import Release, Verdict, describe_failures
from ..run.jobs import Context
from ..run.memory import check_memory, estimate_export
from ..run.runs import RunResult, bind_model
from .assessment import ReportOptions, assess, before_release, release_as_written
from .manifest import (
    MANIFEST_NAME,
    REPORT_FILES,
    ExportOptions,
    IntoTable,
    binding,
    build_manifest,
    holds_records,
    identifier_columns,
    input_data,
    manifest_digest,
    manifest_text,
    read_binding,
    read_manifest,
    source_path,
)
from .parts import as_written, manifest_entry, part_names, part_path, write_parts
from .report import render_report_files
from .signing import made_here, sign, signer
from .staging import Staging, plain_name, refuse_overwriting


@dataclass(frozen=True)
class Export:
    """What :func:`export_release` wrote."""

    manifest: dict
    release: Path
    manifest_path: Path
    report_html: Path | None = None
    report_pdf: Path | None = None

    @property
    def folder(self) -> Path:
        return self.manifest_path.parent


def released_frame(
    result: RunResult, shuffle: bool, seed: int, keeps_order: bool = False
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The frame to write and the shuffle order (``frame.iloc[i]`` is release row ``order[i]``).

    A labelled file's labels go to the exporter in ``frame.attrs[FILE_LABELS]``; when the method
    ``keeps_order`` (:attr:`~veil.engine.Algorithm.keeps_record_order`), each user-missing cell the
    release left blank goes with its own code in ``frame.attrs[CELL_CODES]`` (:func:`kept_cell_codes`).

    Refuses a release that carries an identifier column: that is a bug in the method, and dropping
    the column silently would hide it.
    """
    frame = result.release.frame
    leaked = [c for c in identifier_columns(result) if c in frame.columns]
    if leaked:
        raise BadInput(f"identifier column {leaked[0]!r} cannot be released")
    source = getattr(result.data, "frame", None)
    if isinstance(source, pd.DataFrame):  # integers with blanks are written as integers, not floats
        frame = keep_integers(frame, source)
    order = None
    if shuffle:
        order = shuffle_order(seed, len(frame))
        frame = take_rows(frame, order)
    labels = (getattr(result.data, "meta", None) or {}).get(FILE_LABELS) or {}
    kept = {str(c): labels[str(c)] for c in frame.columns if str(c) in labels}
    cells = kept_cell_codes(result, frame, order) if keeps_order and kept else {}
    if kept:  # a labelled file's labels, for a format that writes them (each keeps only the released values')
        frame = frame.copy(deep=False)
        frame.attrs = {FILE_LABELS: kept, **({CELL_CODES: cells} if cells else {})}
    return frame, order


def kept_cell_codes(result: RunResult, frame: pd.DataFrame, order: np.ndarray | None) -> dict:
    """Column → (written rows, codes): each cell of the written ``frame`` that held a user-missing
    code in the input and is still blank in the release, with that code, for a release whose row i
    is input row i (``order``: the shuffle, ``frame.iloc[i]`` is release row ``order[i]``).

    A quasi-identifier's cells are left out: their codes would tell apart records the privacy model
    judged alike (all blank), so they stay plain blanks. Nothing is linked when the rows do not
    line up (the codes recorded for another number of rows)."""
    data = result.data
    found = (getattr(data, "meta", None) or {}).get(CELL_CODES)
    release = result.release
    n = len(release.frame)
    if not found or found.get("rows") != n or len(getattr(data, "frame", ())) != n:
        return {}
    grouped = {*release.quasi_identifiers, *release.exact_quasi_identifiers}
    written_at = np.arange(n) if order is None else np.argsort(order)  # input row r is written at row written_at[r]
    out = {}
    for column, (rows, codes) in found["columns"].items():
        if column in grouped or column not in frame.columns:
            continue
        rows = np.asarray(rows, dtype=np.int64)
        at = written_at[rows]
        blank = frame[column].isna().to_numpy()[at]  # a cell the method filled or changed keeps its new value
        if blank.any():
            out[column] = (at[blank], [c for c, b in zip(codes, blank) if b])
    return out


def shuffle_order(seed: int, rows: int) -> np.ndarray:
    """The order an export writes ``rows`` records in with the shuffle ``seed`` (written row i is
    release row ``order[i]``): what the manifest's ``shuffle_seed`` reproduces."""
    return np.random.default_rng(seed).permutation(rows)


def take_rows(frame: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``frame.iloc[order].reset_index(drop=True)``, with each Arrow text column taken through its
    dictionary: the row order is applied to small integer codes and every string is copied from a
    short array of distinct values (cheaper than Arrow's take on many scattered rows)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pandas' Arrow strings need it
        pa = None
    columns, indices = {}, None
    for i in range(frame.shape[1]):
        s = frame.iloc[:, i]
        values = getattr(s.array, "_pa_array", None)
        if (
            pa is not None
            and values is not None
            and (pa.types.is_string(values.type) or pa.types.is_large_string(values.type))
        ):
            indices = pa.array(order) if indices is None else indices
            encoded = (values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values).dictionary_encode()
            taken = encoded.dictionary.take(encoded.indices.take(indices))
            columns[i] = pd.Series(type(s.array)(pa.chunked_array([taken]), dtype=s.dtype), copy=False)
        else:
            columns[i] = s.take(order).reset_index(drop=True)
    out = pd.DataFrame(columns, index=pd.RangeIndex(len(order)))
    out.columns = frame.columns
    out.attrs = dict(frame.attrs)
    return out


NO_RECORDS = (
    "a feature-weights release holds one row per feature (its weight and rank) and no record, so no "
    "record can be re-identified from it"
)
NO_RECORDS_UTILITY = "a feature-weights release holds no records to train a classifier on"


def with_frame(release: Release, frame: pd.DataFrame) -> Release:
    return dataclasses.replace(release, frame=frame)


@dataclass(frozen=True)
class ExportRequest:
    """What one export writes, where, and which files of the run it must never write over: a release
    in one file (:func:`export`) or in parts (:func:`~veil.engine.release.partitioned.export_parts`,
    which uses ``out_dir``, ``report``, ``version``, ``source`` and ``ctx``).

    ``assessment`` says what the manifest measures (None: re-identification risk only, no
    classifier); ``report`` which report files are written (None: none). ``input_path`` and
    ``input_rows`` describe the input when the run's data does not (a library caller's own data).
    """

    out_dir: Path
    options: ExportOptions = ExportOptions()
    assessment: ReportOptions | None = None
    report: ReportOptions | None = None
    input_path: str | None = None
    input_rows: int | None = None
    version: str = ""
    extra: dict | None = None
    source: object = None  # the DataSource the input was read with, recorded so `veil report` reads it again
    project: str | os.PathLike | None = None
    ctx: Context | None = None
    also_writes: tuple[str, ...] = ()  # other files the caller will write in out_dir
    inputs: tuple = ()  # other files the run read (a file of column names)

    @property
    def report_names(self) -> tuple[str, ...]:
        """The report files this export writes."""
        return tuple(REPORT_FILES[k] for k in ("html", "pdf") if self.report is not None and getattr(self.report, k))

    def protected(self, result: RunResult | None = None) -> list:
        """The files of the run an export never writes over, each with what it is."""
        given = (self.input_path or source_path(result)) if result is not None else None
        return [
            given,
            (self.project, "project file"),
            *_source_files(self.source),
            *((f, "input file") for f in self.inputs),
        ]


def write_release(
    registry,
    result: RunResult,
    out_dir: str | os.PathLike,
    options: ExportOptions = ExportOptions(),
    *,
    input_path: str | None = None,
    input_rows: int | None = None,
    version: str = "",
    extra: dict | None = None,
    source=None,
    project: str | os.PathLike | None = None,
    report: ReportOptions | None = None,
    ctx: Context | None = None,
    also_writes: tuple[str, ...] = (),
    inputs: tuple = (),
) -> dict:
    """Write ``DIR/<filename>.<ext>`` and ``DIR/manifest.json`` (no report); return the manifest.

    Parameters
    ----------
    source : DataSource, optional
        How the input was read; recorded so ``veil report`` can read it again.
    project : path, optional
        The project file the run came from; its path and SHA-256 go into the manifest.
    report : ReportOptions, optional
        With it, the manifest also holds utility before and after (the classifier runs); without
        it only re-identification risk is assessed.
    also_writes : names of other files the caller will write in ``DIR`` (refused when one is the input).
    inputs : other files the run read (a file of column names): never written over, like the input,
        the project file and ``source``'s files (appended data, hierarchies).

    Raises
    ------
    PrivacyCheckFailed
        The release, or the file read back, fails its model; nothing is written.
    BadInput
        An identifier column in the release, or a target that is the input file.
    Cancelled
        ``ctx`` was cancelled; nothing is written.
    """
    request = ExportRequest(
        Path(out_dir),
        options,
        assessment=report,
        input_path=input_path,
        input_rows=input_rows,
        version=version,
        extra=extra,
        source=source,
        project=project,
        ctx=ctx,
        also_writes=also_writes,
        inputs=inputs,
    )
    return export(registry, result, request).manifest


def export_release(
    registry,
    result: RunResult,
    out_dir: str | os.PathLike,
    options: ExportOptions = ExportOptions(),
    *,
    report: ReportOptions | None = ReportOptions(),
    source=None,
    project: str | os.PathLike | None = None,
    version: str = "",
    ctx: Context | None = None,
    inputs: tuple = (),
) -> Export:
    """Export a run: the released file, ``manifest.json`` and (unless ``report`` is None) ``report.html``
    and ``report.pdf``, all in ``out_dir``. This is what the desktop's Export and ``veil run`` call.

    The export is one transaction (:mod:`veil.engine.staging`): every file is prepared in a private
    folder beside the target and they take their names together at the end; a failure, a cancel or
    an interrupt before that leaves the folder as it was (an earlier export in it stays intact).

    Takes seconds on large data when the report trains its classifier: call it from a worker
    thread with a :class:`Context` for progress and cancellation (checked at every step).

    Raises
    ------
    PrivacyCheckFailed
        The release fails its privacy model: nothing was written (the message lists failing records).
    BadInput
        A target path is a file the run read (the input, a hierarchy, the project file, any of ``inputs``),
        an identifier column would be released, a bad format.
    Cancelled
        ``ctx`` was cancelled before the files took their names: nothing was written.
    """
    data = input_data(result)
    request = ExportRequest(
        Path(out_dir),
        options,
        assessment=report,
        report=report,
        input_path=data_input_path(data),
        input_rows=data_input_rows(data),
        version=version,
        source=source,
        project=project,
        ctx=ctx,
        inputs=inputs,
    )
    return export(registry, result, request)


def export(registry, result: RunResult, request: ExportRequest) -> Export:
    """The export of ``result`` as ``request`` says (see :func:`export_release` for what it raises):
    the release in one file (and its further parts), checked in memory and as read back, then
    :func:`finish` (the export's id, the report, the signed manifest, the commit)."""
    ctx = request.ctx or Context(result.spec.seed)
    ctx.check()
    options = dataclasses.replace(request.options, fmt=request.options.fmt or registry.preferred("exporter"))
    out = request.out_dir
    check_output_folder(out)
    exporter = registry.exporter(options.fmt)
    protected = request.protected(result)
    into = options.into
    if into is not None:  # a new table of an existing database, not a file of the folder
        target = _database(registry, exporter, into, protected, result.release)
        protected = [*protected, (target, "database")]  # an earlier export's file it may be: never removed
        part_files = []
    else:
        target = out / f"{options.filename}.{exporter.extension}"
        part_files = [part_path(target, n).name for n in part_names(result.release)]  # Anatomy's sensitive table, …
    refuse_overwriting(
        [
            *([] if into is not None else [target]),
            out / MANIFEST_NAME,
            *(out / n for n in (*request.report_names, *part_files, *request.also_writes)),
        ],
        protected,
    )
    shuffle_seed = result.spec.seed if options.shuffle_seed is None else options.shuffle_seed
    records = holds_records(result.release)
    if not records:  # one row per feature, in rank order: there is no record order to hide
        options = dataclasses.replace(options, shuffle=False)
    check_memory(estimate_export(result.release))  # before the frame is copied, written and read back
    keeps_order = getattr(registry.get("algorithm", result.spec.method.name), "keeps_record_order", False)
    frame, order = released_frame(result, options.shuffle, shuffle_seed, keeps_order)
    model = run_model(registry, result)
    _check_or_refuse(model, result.release, None, "the release")  # in memory, before any byte is written
    sets = result.release.sets
    refused = exporter.refuses(result.release)
    if refused:
        able = [n for n in registry.names("exporter") if not registry.exporter(n).refuses(result.release)]
        raise BadInput(
            f"{refused}; choose the format {' or '.join(able) or '(none installed)'} instead of {options.fmt}"
        )
    ctx.progress(0.02, "writing the release")
    with Staging(out, ctx.holding) as stage, _table_write(exporter, into, target) as table:
        # leaving it without the commit below deletes everything prepared and writes nothing in the database
        tmp = None
        if table is not None:
            table.write(frame)
            ctx.progress(0.1, "reading the written table back")
            back = table.read_back()
        elif sets is not None:  # streamed from the group centres in chunks, never a records × items frame
            tmp = stage.file(target.name)
            rows = result.release.groups if order is None else result.release.groups[order]
            exporter.write_sets(sets, rows, tmp, exporter.params())
        else:
            tmp = stage.file(target.name)
            exporter.write(frame, tmp, exporter.params())
        if tmp is not None:
            ctx.progress(0.1, "reading the written file back")
            back = exporter.read_back(tmp)
        if sets is not None:  # judged from the file alone: records publishing the same set are a group
            frame, parts = back, {}
            written = release_as_written(back, result.release.roles(), hierarchies=result.release.hierarchies)
            verdict = _check_or_refuse(model, written, order, "the written release")
        else:
            _check_columns(frame, back, options.fmt)
            parts = write_parts(stage, exporter, result.release, target) if table is None else {}
            written = as_written(result.release, back, {n: f for n, (f, _) in parts.items()})
            verdict = _check_or_refuse(model, written, order, "the written release")
        ctx.progress(0.2, "assessing risk and utility")
        figures = assess(
            registry,
            result.data,
            before_release(result.data),
            dataclasses.replace(
                release_as_written(back, result.release.roles(), written.parts, result.release.hierarchies),
                population=result.release.population,
            )
            if records
            else None,
            (request.assessment or ReportOptions(utility=False)) if records else ReportOptions(utility=False),
            ctx.child(0.2, 0.75 if request.report_names else 0.95),
        )
        if not records:
            figures["risk"]["after_note"] = NO_RECORDS
            figures["utility"] = {"before": None, "after": None, "note": NO_RECORDS_UTILITY}
        part_entries = manifest_entry(target, parts) if parts else None
        manifest = build_manifest(
            result,
            target,
            verdict,
            len(frame),
            list(frame.columns),
            options,
            input_path=request.input_path,
            input_rows=request.input_rows,
            version=request.version,
            extra=request.extra,
            source=request.source,
            project=request.project,
            shuffle_seed=shuffle_seed,
            assessment=figures,
            output_sha256=sha256_file(tmp) if table is None else table.sha256(),
            written=written_names(exporter, frame.columns),
            parts=part_entries,
        )
        if table is not None:  # the database by its absolute path, the table by name, its content's digest
            manifest["output"].update({"path": str(target), "table": into.table})
            files = {}
        else:
            files = {target.name: manifest["output"]["sha256"]}
        files.update({e["path"]: e["sha256"] for e in (part_entries or {}).values()})
        keep = {*files, MANIFEST_NAME, *request.report_names, *part_files}
        paths = finish(
            registry,
            stage,
            manifest,
            files,
            request.report,
            ctx,
            keep=keep,
            protected=protected,
            report_at=0.75,
            then=table.commit if table is not None else None,
        )
    ctx.progress(1.0, "exported", check=False)  # done: a cancel now comes too late to undo anything
    return Export(
        manifest, target, out / MANIFEST_NAME, *(out / REPORT_FILES[k] if k in paths else None for k in ("html", "pdf"))
    )


def run_model(registry, result: RunResult) -> BoundModel | CombinedModel | None:
    """The privacy model of the run, as :func:`~veil.engine.execute` bound it (a result made without
    it, by a library caller, binds its spec's models here)."""
    if result.model is not None or not result.spec.models:
        return result.model
    return bind_model(registry, result.spec.models)


def finish(
    registry,
    stage: Staging,
    manifest: dict,
    files: dict[str, str],
    report: ReportOptions | None,
    ctx: Context,
    *,
    keep: set,
    protected=(),
    report_at: float = 0.75,
    then=None,
) -> dict[str, Path]:
    """The last steps of every export, a release in one file or in parts, once its files are staged
    and checked and ``manifest`` is complete (:func:`~veil.engine.release.manifest.complete_manifest`):

    1. the export's id and the files it wrote (name → SHA-256, ``files``), and the signing key;
    2. the report files ``report`` asks for, bound to this manifest, and their hashes;
    3. the signature, last, over every field, the files' hashes included;
    4. ``manifest.json`` (:func:`~veil.engine.release.manifest.manifest_text`);
    5. the commit: every staged file takes its name, the manifest last, and the files of an earlier
       export in the folder that this one does not replace (:func:`_earlier_members`) go; ``then``
       (a release written into a database: its transaction's commit) runs once they are in place,
       and when it fails they are put back.

    Returns the report files written, by kind (``"html"``, ``"pdf"``)."""
    manifest["export"] = {"id": secrets.token_hex(16), "files": dict(files)}
    manifest["signed_by"] = signer()  # the report shows the key's fingerprint
    paths = {}
    if report is not None and (report.html or report.pdf):
        ctx.progress(report_at, "writing the report")
        paths = render_report_files(
            registry, manifest, stage, report, binding(manifest), ctx=ctx.child(report_at, 0.98)
        )
        manifest["export"]["files"].update({p.name: sha256_file(p) for p in paths.values()})
    sign(manifest)
    stage.file(MANIFEST_NAME).write_text(manifest_text(manifest), encoding="utf-8")
    ctx.progress(0.99, "moving the files into place")  # the last moment to cancel: nothing is in place yet
    stage.commit(remove=_earlier_members(stage.folder, keep, protected), last=MANIFEST_NAME, then=then)
    return paths


def _database(registry, exporter, into: IntoTable, protected, release: Release | None) -> Path:
    """The existing database a release is written into, resolved; BadInput when the format cannot
    write a table, the file is not there, it is a file the run read, or the release is not one table."""
    if not exporter.writes_tables:
        able = [n for n in registry.names("exporter") if registry.exporter(n).writes_tables]
        raise BadInput(
            f"the format {exporter.name} cannot write a release into a database; choose "
            f"{' or '.join(able) or '(none installed)'}, or write a file"
        )
    if not str(into.database).strip():
        raise BadInput("name the database to write the release into")
    path = Path(into.database)
    if not path.is_file():
        raise BadInput(
            f"the database {missing_reason(path, 'file')}; a release is written into an existing database "
            f"(to make a new one, write the format as a file)"
        )
    for keep in protected:
        keep, what = keep if isinstance(keep, tuple) else (keep, "input file")
        if keep and os.path.exists(keep) and os.path.samefile(keep, path):
            raise BadInput(
                f"the database {path} is the {what} {keep}: a release is never written into a file the run "
                f"read; write it into another database"
            )
    if release is not None and (release.parts or release.sets is not None):
        raise BadInput("this release is not one table (it has further parts or item sets); write it as files")
    return path.resolve()


def check_into(registry, fmt: str, into: IntoTable, protected=()) -> None:
    """BadInput when a release in format ``fmt`` could not be written as ``into`` says (the format
    writes no table, the database is missing or a file the run reads, the name is not one a table may
    have, or a table of that name is there and not to be replaced): asked before a run, so the user
    is not told after it. Writes nothing (the transaction it opens is rolled back)."""
    exporter = registry.exporter(fmt)
    database = _database(registry, exporter, into, protected, None)
    exporter.open_table(database, into.table, into.replace).close()


@contextmanager
def _table_write(exporter, into: IntoTable | None, database: Path):
    """The transaction adding the release's table (None when the release is a file); closed, and
    so rolled back unless committed, on leaving."""
    if into is None:
        yield None
        return
    with exporter.open_table(database, into.table, into.replace) as table:
        yield table


def check_output_folder(out: Path) -> None:
    """BadInput when ``out`` cannot be an output folder: a file, a link to nothing or a link loop."""
    if out.is_symlink() and not out.exists():
        raise BadInput(f"the output folder {missing_reason(out, 'folder')}; choose another output folder")
    if out.exists() and not out.is_dir():
        raise BadInput(f"{out} exists and is not a folder")


def refuse_inputs_in_output(
    out_dir: str | os.PathLike, *, source=None, project=None, inputs: tuple = (), filename: str = "release"
) -> None:
    """BadInput when a file of the run (the data, an appended file, a hierarchy, the project file, any
    of ``inputs``) is one an export into ``out_dir`` may write over: ``manifest.json``, a report, or
    ``<filename>.*`` in any format (the release, its parts). Called *before* the method runs, since
    the release's format and parts are known only after; :func:`export_release` checks again, exactly."""
    out = Path(out_dir)
    check_output_folder(out)
    try:
        names = os.listdir(out) if out.is_dir() else []
    except OSError:
        return  # the export says why it cannot write there
    members = {MANIFEST_NAME, *REPORT_FILES.values()}
    targets = [out / n for n in names if n in members or n.startswith(f"{filename}.")]
    refuse_overwriting(
        targets, [(project, "project file"), *_source_files(source), *((f, "input file") for f in inputs)]
    )


def _source_files(source) -> list[tuple]:
    """The files a DataSource reads, each with what it is (for the message refusing to write over one)."""
    if source is None or not hasattr(source, "files"):
        return []
    hierarchies = set((getattr(source, "hierarchies", None) or {}).values())
    return [(f, "hierarchy file" if f in hierarchies else "input file") for f in source.files()]


def written_names(exporter, columns) -> list[str]:
    """The column names as ``exporter`` writes them in its file (a spreadsheet format escapes
    names that would run as formulas); the plain names when the exporter does not say."""
    return [str(n) for n in exporter.header([str(c) for c in columns])]


def _check_columns(frame: pd.DataFrame, back: pd.DataFrame, fmt: str) -> None:
    """BadInput when the file does not read back with the release's column names."""
    wrote, got = [str(c) for c in frame.columns], [str(c) for c in back.columns]
    if wrote == got:
        return
    for i, name in enumerate(wrote):
        if i >= len(got) or got[i] != name:
            found = f"reads back as {got[i]!r}" if i < len(got) else "is missing when read back"
            raise BadInput(
                f"the {fmt} file cannot hold the column name {name!r} (it {found}); rename the column "
                f"or export another format; nothing was written"
            )
    raise BadInput(f"the {fmt} file reads back with more columns than were written; nothing was written")


def _earlier_members(out: Path, keep: set, protected) -> tuple[str, ...]:
    """Files of an earlier export in ``out`` that the new export does not replace: its release of
    another format or name, its parts and its reports. They go (with a rollback copy) when the new
    export takes its place, so no file of another export is left beside the new manifest.

    Only files an export made here: the earlier manifest must be signed by this workstation's key
    and unchanged since (a manifest planted in the folder, or edited, names nothing to remove), and
    each file must still have the SHA-256 it lists (a report regenerated by ``veil report``: the
    binding to that very manifest it carries). Anything else in the folder is left alone."""

    try:
        earlier = read_manifest(out / MANIFEST_NAME)
    except (BadInput, OSError):
        return ()
    if not made_here(earlier):
        return ()
    listed = dict((earlier.get("export") or {}).get("files") or {})  # name -> its SHA-256
    listed[earlier["output"]["path"]] = earlier["output"]["sha256"]
    for part in earlier["output"].get("parts_of") or []:  # a release in parts: each part with its hash
        if isinstance(part, dict) and isinstance(part.get("path"), str):
            listed[part["path"]] = part.get("sha256")
    digest = manifest_digest(earlier)
    gone = []
    for name in sorted(listed):
        path = out / name
        if name in keep or name == MANIFEST_NAME or not plain_name(name) or not path.is_file() or path.is_symlink():
            continue
        inputs = (k[0] if isinstance(k, tuple) else k for k in protected)
        if any(keep_safe and os.path.exists(keep_safe) and os.path.samefile(keep_safe, path) for keep_safe in inputs):
            continue  # never the input or the project file
        if sha256_file(path, follow_symlinks=False) == listed[name]:
            gone.append(name)
        elif name in REPORT_FILES.values() and read_binding(path).get("manifest-sha256") == digest:
            gone.append(name)  # regenerated for that manifest by `veil report`
    return tuple(gone)


def _check_or_refuse(model: BoundModel | None, release: Release, order, what: str) -> Verdict | None:
    """The model's verdict; PrivacyCheckFailed naming the failing records when it does not hold."""
    if model is None:
        return None
    verdict = model.check(release)
    if not verdict.holds:
        rows = order if order is not None else None
        listed = describe_failures(verdict, release, rows=rows)
        raise PrivacyCheckFailed(
            f"{what} fails {model.name}: {verdict.message}; failing records: {listed}; nothing was written", verdict
        )
    return verdict
