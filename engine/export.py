"""Writing a release safely, its manifest, and verifying a written release against its manifest.

The rules (DESIGN "Release, export and the report", docs/release.md):

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
report. :func:`write_release` does the first two.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .assessment import ReportOptions, assess, before_release, release_as_written
from .binary import BinaryMatrix
from .datasource import input_path as data_input_path, input_rows as data_input_rows
from .errors import BadInput, PrivacyCheckFailed
from .io import sha256_file
from .parts import as_written, manifest_entry, part_names, part_path, read_parts, with_parts, write_parts
from .jobs import Context
from .params import params_to_dict
from .release import FEATURE_WEIGHTS, Release, Verdict, describe_failures
from .runs import BoundModel, PluginCall, RunResult, bind_model
from .staging import Staging, leftovers
from .table import Role, Table
from .validate import NULL, check_shape, get, read_json_object

MANIFEST_VERSION = 1
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class ExportOptions:
    """How to write a release.

    Attributes
    ----------
    fmt : str
        Exporter name: csv, tsv, xlsx, parquet, spmf (or a plugin's).
    shuffle : bool
        Shuffle the rows (default), so the file's order says nothing about the input's.
    filename : str
        Stem of the released file (``release.csv``).
    shuffle_seed : int, optional
        Seed of the shuffle; the run's seed when omitted. Recorded in the manifest.
    """

    fmt: str | None = None  # None: the registry's preferred exporter
    shuffle: bool = True
    filename: str = "release"
    shuffle_seed: int | None = None


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


def identifier_columns(result: RunResult) -> list[str]:
    """The input's identifier columns (never released)."""
    for data in (result.original, result.data):
        if isinstance(data, Table):
            return data.schema.by_role(Role.IDENTIFIER)
    return []


def released_frame(result: RunResult, shuffle: bool, seed: int) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The frame to write and the shuffle order (``frame.iloc[i]`` is release row ``order[i]``).

    Refuses a release that carries an identifier column: that is a bug in the method, and dropping
    the column silently would hide it.
    """
    frame = result.release.frame
    leaked = [c for c in identifier_columns(result) if c in frame.columns]
    if leaked:
        raise BadInput(f"identifier column {leaked[0]!r} cannot be released")
    order = None
    if shuffle:
        order = np.random.default_rng(seed).permutation(len(frame))
        frame = take_rows(frame, order)
    return frame, order


def take_rows(frame: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """``frame.iloc[order].reset_index(drop=True)``, with each Arrow text column taken through its
    dictionary: the row order is applied to small integer codes and every string is copied from a
    short array of distinct values (2–5× faster than Arrow's take on millions of scattered rows)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pandas' Arrow strings need it
        pa = None
    columns, indices = {}, None
    for i in range(frame.shape[1]):
        s = frame.iloc[:, i]
        values = getattr(s.array, "_pa_array", None)
        if pa is not None and values is not None and (pa.types.is_string(values.type)
                                                      or pa.types.is_large_string(values.type)):
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


NO_RECORDS = ("a feature-weights release holds one row per feature (its weight and rank) and no record, so no "
              "record can be re-identified from it")
NO_RECORDS_UTILITY = "a feature-weights release holds no records to train a classifier on"


def holds_records(release: Release) -> bool:
    """Whether the release is made of records (every kind but feature weights)."""
    return release.kind != FEATURE_WEIGHTS


def with_frame(release: Release, frame: pd.DataFrame) -> Release:
    return dataclasses.replace(release, frame=frame)


def refuse_overwriting(targets, protected) -> None:
    """BadInput when a target is one of the protected files (same file by any path, link or hard link)."""
    for target in targets:
        target = Path(target)
        if not target.exists():
            continue
        for keep in protected:
            if keep and Path(keep).exists() and os.path.samefile(keep, target):
                raise BadInput(f"writing {target.name} would overwrite the input file {Path(keep).name}; "
                               f"choose another output folder")


def write_release(registry, result: RunResult, out_dir: str | os.PathLike, options: ExportOptions = ExportOptions(),
                  *, input_path: str | None = None, input_rows: int | None = None, version: str = "",
                  extra: dict | None = None, source=None, project: str | os.PathLike | None = None,
                  report: ReportOptions | None = None, ctx: Context | None = None,
                  also_writes: tuple[str, ...] = ()) -> dict:
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

    Raises
    ------
    PrivacyCheckFailed
        The release, or the file read back, fails its model; nothing is written.
    BadInput
        An identifier column in the release, or a target that is the input file.
    Cancelled
        ``ctx`` was cancelled; nothing is written.
    """
    return _export(registry, result, out_dir, options, input_path=input_path, input_rows=input_rows, version=version,
                   extra=extra, source=source, project=project, assessment=report, report_files=None, ctx=ctx,
                   also_writes=also_writes).manifest


def export_release(registry, result: RunResult, out_dir: str | os.PathLike, options: ExportOptions = ExportOptions(),
                   *, report: ReportOptions | None = ReportOptions(), source=None,
                   project: str | os.PathLike | None = None, version: str = "", ctx: Context | None = None) -> Export:
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
        A target path is the input or project file, an identifier column would be released, a bad format.
    Cancelled
        ``ctx`` was cancelled before the files took their names: nothing was written.
    """
    data = _input_data(result)
    return _export(registry, result, out_dir, options, input_path=data_input_path(data),
                   input_rows=data_input_rows(data), version=version, source=source, project=project,
                   assessment=report, report_files=report, ctx=ctx)


def _export(registry, result: RunResult, out_dir, options: ExportOptions, *, input_path=None, input_rows=None,
            version="", extra=None, source=None, project=None, assessment: ReportOptions | None = None,
            report_files: ReportOptions | None = None, ctx: Context | None = None,
            also_writes: tuple[str, ...] = ()) -> Export:
    from .report import REPORT_FILES, render_report_files

    ctx = ctx or Context(result.spec.seed)
    ctx.check()
    options = dataclasses.replace(options, fmt=options.fmt or registry.preferred("exporter"))
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise BadInput(f"{out} exists and is not a folder")
    exporter = registry.exporter(options.fmt)
    target = out / f"{options.filename}.{exporter.extension}"
    report_names = tuple(REPORT_FILES[k] for k in ("html", "pdf")
                         if report_files is not None and getattr(report_files, k))
    protected = [input_path or _source_path(result), project]
    part_files = [part_path(target, n).name for n in part_names(result.release)]  # Anatomy's sensitive table, …
    refuse_overwriting([target, out / MANIFEST_NAME, *(out / n for n in (*report_names, *part_files, *also_writes))],
                       protected)
    shuffle_seed = result.spec.seed if options.shuffle_seed is None else options.shuffle_seed
    records = holds_records(result.release)
    if not records:  # one row per feature, in rank order: there is no record order to hide
        options = dataclasses.replace(options, shuffle=False)
    frame, order = released_frame(result, options.shuffle, shuffle_seed)
    model = bind_model(registry, result.spec.models)
    _check_or_refuse(model, result.release, None, "the release")  # in memory, before any byte is written
    sets = result.release.sets
    refused = exporter.refuses(result.release)
    if refused:
        able = [n for n in registry.names("exporter") if not registry.exporter(n).refuses(result.release)]
        raise BadInput(f"{refused}; choose the format {' or '.join(able) or '(none installed)'} instead of "
                       f"{options.fmt}")
    ctx.progress(0.02, "writing the release")
    with Staging(out) as stage:  # leaving it without the commit below deletes everything prepared
        tmp = stage.file(target.name)
        if sets is not None:  # streamed from the group centres in chunks, never a records × items frame
            rows = result.release.groups if order is None else result.release.groups[order]
            exporter.write_sets(sets, rows, tmp, exporter.params())
        else:
            exporter.write(frame, tmp, exporter.params())
        ctx.progress(0.1, "reading the written file back")
        back = exporter.read_back(tmp)
        if sets is not None:  # judged from the file alone: records publishing the same set are a group
            frame, parts = back, {}
            written = release_as_written(back, result.release.roles())
            verdict = _check_or_refuse(model, written, order, "the written release")
        else:
            _check_columns(frame, back, options.fmt)
            parts = write_parts(stage, exporter, result.release, target)
            written = as_written(result.release, back, {n: f for n, (f, _) in parts.items()})
            verdict = _check_or_refuse(model, written, order, "the written release")
        ctx.progress(0.2, "assessing risk and utility")
        figures = assess(registry, result.data, before_release(result.data),
                         release_as_written(back, result.release.roles(), written.parts) if records else None,
                         (assessment or ReportOptions(utility=False)) if records else ReportOptions(utility=False),
                         ctx.child(0.2, 0.75 if report_names else 0.95))
        if not records:
            figures["risk"]["after_note"] = NO_RECORDS
            figures["utility"] = {"before": None, "after": None, "note": NO_RECORDS_UTILITY}
        manifest = build_manifest(result, target, verdict, len(frame), list(frame.columns), options,
                                  input_path=input_path, input_rows=input_rows, version=version, extra=extra,
                                  source=source, project=project, shuffle_seed=shuffle_seed, assessment=figures,
                                  output_sha256=sha256_file(tmp), written=written_names(exporter, frame.columns))
        manifest["export"] = {"id": secrets.token_hex(16), "files": {target.name: manifest["output"]["sha256"]}}
        if parts:
            manifest["output"]["parts"] = manifest_entry(target, parts)
            manifest["export"]["files"].update({e["path"]: e["sha256"] for e in manifest["output"]["parts"].values()})
        paths = {}
        if report_names:
            ctx.progress(0.75, "writing the report")
            paths = render_report_files(registry, manifest, stage, report_files, binding(manifest),
                                        ctx=ctx.child(0.75, 0.98))
            manifest["export"]["files"].update({stage_path.name: sha256_file(stage_path)
                                                for stage_path in paths.values()})
        stage.file(MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, allow_nan=False) + "\n",
                                             encoding="utf-8")
        ctx.progress(0.99, "moving the files into place")  # the last moment to cancel: nothing is in place yet
        keep = {target.name, MANIFEST_NAME, *report_names, *part_files}
        stage.commit(remove=_earlier_members(out, keep, protected), last=MANIFEST_NAME)
    ctx.progress(1.0, "exported", check=False)  # done: a cancel now comes too late to undo anything
    return Export(manifest, target, out / MANIFEST_NAME, *(out / REPORT_FILES[k] if k in paths else None
                                                            for k in ("html", "pdf")))


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
            raise BadInput(f"the {fmt} file cannot hold the column name {name!r} (it {found}); rename the column "
                           f"or export another format; nothing was written")
    raise BadInput(f"the {fmt} file reads back with more columns than were written; nothing was written")


def _earlier_members(out: Path, keep: set, protected) -> tuple[str, ...]:
    """Files of an earlier export in ``out`` that the new export does not replace: its release of
    another format or name, and its reports. They go (with a rollback copy) when the new export
    takes its place, so no file of another export is left beside the new manifest."""
    from .report import REPORT_FILES

    listed = {}  # name -> the SHA-256 the earlier manifest gives it
    try:
        earlier = read_manifest(out / MANIFEST_NAME)
        listed[earlier["output"]["path"]] = earlier["output"]["sha256"]
        listed.update((earlier.get("export") or {}).get("files") or {})
    except (BadInput, OSError):
        pass
    gone = []
    for name in sorted({*listed, *REPORT_FILES.values()}):
        path = out / name
        if name in keep or Path(name).name != name or not path.is_file() or path.is_symlink():
            continue
        if any(keep_safe and Path(keep_safe).exists() and os.path.samefile(keep_safe, path) for keep_safe in protected):
            continue  # never the input or the project file
        # only a file that is provably the earlier export's: as its manifest lists it, or a Veil report
        if (name in listed and sha256_file(path) == listed[name]) or (name in REPORT_FILES.values()
                                                                      and _is_veil_report(path)):
            gone.append(name)
    return tuple(gone)


def _is_veil_report(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(2048)
        if head.startswith(b"%PDF"):
            f.seek(max(0, os.fstat(f.fileno()).st_size - 65536))
            return b"/Creator (Veil)" in f.read()
    return b'<meta name="generator" content="Veil' in head


def manifest_digest(manifest: dict) -> str:
    """SHA-256 of a manifest's content without its ``export.files`` (which lists the report's own
    hash): the hash a report carries to say which manifest it describes."""
    body = {k: v for k, v in manifest.items() if not k.startswith("_")}
    if isinstance(body.get("export"), dict):
        body["export"] = {k: v for k, v in body["export"].items() if k != "files"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def binding(manifest: dict, regenerated: str | None = None) -> dict:
    """What a report carries to tie it to its manifest (see :func:`read_binding`)."""
    b = {"manifest-sha256": manifest_digest(manifest), "export-id": (manifest.get("export") or {}).get("id") or "",
         "export-created": manifest.get("created") or ""}
    if regenerated:
        b["regenerated"] = regenerated
    return b


def binding_text(b: dict) -> str:
    return " ".join(f"veil-{k}={v}" for k, v in b.items() if v)


_BINDING = re.compile(rb"veil-(manifest-sha256|export-id|export-created|regenerated)=([0-9A-Za-z:+\-.]+)")


def read_binding(path: str | os.PathLike) -> dict:
    """The binding a report file carries (HTML: a ``<meta name="veil-binding">`` in its head; PDF: its
    Keywords); ``{}`` when it carries none (a report of an earlier Veil, or not a report)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
            if head.startswith(b"%PDF"):
                f.seek(max(0, os.fstat(f.fileno()).st_size - 65536))  # the info dictionary is near the end
                head = f.read()
    except OSError:
        return {}
    found = {}
    for key, value in _BINDING.findall(head):
        found.setdefault(key.decode(), value.decode())
    return found


def _input_data(result: RunResult):
    """The data as the user gave it (a Table before binarisation)."""
    return result.original if result.original is not None else result.data


def _source_path(result: RunResult) -> str | None:
    return data_input_path(_input_data(result))


def _check_or_refuse(model: BoundModel | None, release: Release, order, what: str) -> Verdict | None:
    """The model's verdict; PrivacyCheckFailed naming the failing records when it does not hold."""
    if model is None:
        return None
    verdict = model.check(release)
    if not verdict.holds:
        rows = order if order is not None else None
        listed = describe_failures(verdict, release, rows=rows)
        raise PrivacyCheckFailed(f"{what} fails {model.name}: {verdict.message}; failing records: {listed}; "
                                 f"nothing was written", verdict)
    return verdict


def build_manifest(result: RunResult, target: Path, verdict: Verdict | None, rows: int, columns: list[str],
                   options: ExportOptions, *, input_path=None, input_rows=None, version="", extra=None,
                   source=None, project=None, shuffle_seed=None, assessment=None, output_sha256=None,
                   written=None) -> dict:
    release = result.release
    prov = release.provenance
    spec = result.spec
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "veil_version": version,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": {"system": platform.system(), "release": platform.release(), "python": platform.python_version(),
                     "machine": platform.machine()},
        "method": {"name": spec.method.name, "params": prov.params if prov else spec.method.params},
        "privacy_model": ({"name": prov.model, "params": prov.model_params} if prov and prov.model
                          else {"name": None, "params": {}, "note": _no_model_note(release)}),
        "seed": spec.seed,
        "shuffled": options.shuffle,
        "shuffle_seed": shuffle_seed if options.shuffle else None,
        "input": _input_entry(result, input_path, input_rows, source),
        "project": _project_entry(project),
        "output": {"path": target.name, "format": options.fmt, "sha256": output_sha256 or sha256_file(target),
                   "rows": rows,
                   "columns": columns,
                   "written_columns": {c: w for c, w in zip(columns, written or columns) if w != c}},
        "roles": release.roles(),
        "removed_identifiers": identifier_columns(result),
        "release_kind": release.kind,
        "verdict": ({"holds": bool(verdict.holds), "value": verdict.to_dict()["value"], "message": verdict.message}
                    if verdict is not None else {"holds": None, "value": None,
                                                 "message": "no privacy model: nothing was checked"}),
        "privacy_models": [dict(m) for m in prov.models] if prov else [],
        "verdicts": [v.to_dict() for v in verdict.each] if verdict is not None else [],
        "privacy_budget": privacy_budget(release),
        "selected_features": list(release.selected_features) if release.selected_features is not None else None,
        "released_sensitive": list(release.details.get("released_sensitive") or []),
        "metrics": {k: _plain(v) for k, v in result.metrics.items()},
        # metrics computed on a seeded sample of the records: {"rows", "of", "seed"} each
        "metric_samples": {k: dict(v) for k, v in result.samples.items()},
        "recipe": _recipe_entry(result),
        "details": json_safe(release.details),
        "notes": list(release.notes),
        "seconds": round(result.seconds, 4),
    }
    if assessment is not None:
        manifest.update(assessment)
    if extra:
        manifest.update(extra)
    return json_safe(manifest)


def _no_model_note(release: Release) -> str:
    if not holds_records(release):
        claim = ("its weights claim differential privacy (see privacy_budget)" if "epsilon_spent" in release.details
                 else "the weights make no privacy claim")
        return f"a feature-weights release holds no records, so no record-level privacy model applies; {claim}"
    if "epsilon_spent" in release.details:
        return "no privacy model was checked: the method claims differential privacy (see privacy_budget)"
    return "no privacy model was chosen: this release makes no privacy claim"


def privacy_budget(release: Release) -> dict | None:
    """``{"epsilon_spent": ε, "assumptions": [...]}`` of a differentially private release, else None
    (the convention of :class:`~veil.engine.release.Release`'s ``details``)."""
    eps = release.details.get("epsilon_spent")
    if eps is None:
        return None
    assumptions = release.details.get("assumptions") or []
    if isinstance(assumptions, str):
        assumptions = [assumptions]
    budget = {"epsilon_spent": _plain(float(eps)), "assumptions": [str(a) for a in assumptions]}
    source = release.details.get("noise_source")  # where the method drew its noise (engine/noise.py)
    if isinstance(source, str) and source:
        budget["noise"] = source
    return budget


def _input_entry(result: RunResult, input_path, input_rows, source) -> dict:
    """Where the input is (an absolute path, so ``veil report`` finds it from anywhere), its hash and
    size, and how to read it again (read options and the schema of kinds and roles)."""
    entry = {"path": _absolute(input_path), "sha256": result.release.provenance.input_sha256
             if result.release.provenance else None, "rows": input_rows}
    if source is not None:
        read = {k: v for k, v in source.to_dict().items() if k not in ("roles", "kinds")}
        entry["read"] = {**read, "path": _absolute(read.get("path"))} if read.get("path") else read
    table = next((d for d in (result.original, result.data) if isinstance(d, Table)), None)
    if table is not None:
        entry["schema"] = table.schema.to_dict()
    return entry


def _absolute(path) -> str | None:
    return str(Path(path).resolve()) if path else None


def _project_entry(project) -> dict | None:
    if not project:
        return None
    p = Path(project)
    return {"path": str(p.resolve()), "sha256": sha256_file(p)}


def _recipe_entry(result: RunResult) -> dict | None:
    """The binarisation as applied (fitted: explicit categories and cut points), when there was one."""
    data = result.data
    if isinstance(data, BinaryMatrix) and isinstance(data.meta.get("recipe"), dict):
        return json_safe(data.meta["recipe"])
    return result.spec.recipe.to_dict() if result.spec.recipe else None


def json_safe(value):
    """``value`` as plain JSON: numpy scalars and arrays, tuples, sets, paths, frames; NaN and ±inf
    become None; anything else its text."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [json_safe(v) for v in items]
    if isinstance(value, pd.DataFrame):
        return json_safe(value.to_dict(orient="records"))
    if isinstance(value, pd.Series):
        return json_safe(value.to_dict())
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_safe(dataclasses.asdict(value))
    if hasattr(value, "to_dict"):
        try:
            return json_safe(value.to_dict())
        except Exception:  # a to_dict that needs arguments: fall back to text
            pass
    return str(value)


def _plain(v):
    return json_safe(v)


_TEXT, _TEXTS, _MAYBE_OBJECT = (str, NULL), ([str], NULL), (dict, NULL)
_FIGURES = ({"columns": _TEXTS, "records": (int, NULL), "groups": (int, NULL), "smallest_group": (int, NULL),
             "max": (float, NULL), "avg": (float, NULL), "at_risk": (float, NULL), "group_sizes": (dict, NULL)}, NULL)
MANIFEST_SHAPE = {
    "manifest_version": (int, NULL), "veil_version": _TEXT, "created": _TEXT,
    "platform": ({"system": _TEXT, "release": _TEXT, "python": _TEXT, "machine": _TEXT}, NULL),
    "method": ({"name": _TEXT, "params": _MAYBE_OBJECT}, NULL),
    "privacy_model": {"name": _TEXT, "params": _MAYBE_OBJECT},
    "seed": (int, NULL), "shuffled": (bool, NULL), "shuffle_seed": (int, NULL),
    "input": ({"path": _TEXT, "sha256": _TEXT, "rows": (int, NULL), "read": _MAYBE_OBJECT,
               "schema": ([dict], NULL)}, NULL),
    "project": ({"path": str, "sha256": _TEXT}, NULL),
    "output": {"path": str, "format": _TEXT, "sha256": str, "rows": (int, NULL), "columns": _TEXTS},
    "roles": {"quasi_identifiers": _TEXTS, "target": _TEXT, "sensitive": _TEXTS, "exact_quasi_identifiers": _TEXTS},
    "removed_identifiers": _TEXTS, "release_kind": _TEXT,
    "verdict": ({"holds": (bool, NULL), "value": (float, NULL), "message": _TEXT}, NULL),
    "privacy_budget": ({"epsilon_spent": (float, NULL), "assumptions": _TEXTS, "noise": _TEXT}, NULL),
    "selected_features": _TEXTS, "metrics": _MAYBE_OBJECT,
    "recipe": _MAYBE_OBJECT, "details": _MAYBE_OBJECT, "notes": _TEXTS, "seconds": (float, NULL),
    "risk": ({"model": _TEXT, "threshold": (float, NULL), "before": _FIGURES, "after": _FIGURES}, NULL),
    "utility": ({"classifier": _TEXT, "target": _TEXT, "before": _MAYBE_OBJECT, "after": _MAYBE_OBJECT,
                 "note": _TEXT}, NULL),
}


def read_manifest(path: str | os.PathLike) -> dict:
    """A manifest whose every field Veil reads has the type Veil wrote (BadInput names the field)."""
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_NAME
    manifest = read_json_object(p, "manifest")
    for key in ("output", "privacy_model", "roles"):
        if key not in manifest:
            raise BadInput(f"{p} is not a Veil manifest (no {key!r})")
    check_shape(manifest, MANIFEST_SHAPE, p.name)
    for key in ("path", "sha256"):
        if key not in manifest["output"]:
            raise BadInput(f"{p.name}.output.{key} is missing")
    export = get(manifest, "export", dict, {}, where=p.name)
    files = get(export, "files", dict, {}, where=f"{p.name} export")
    for name, digest in files.items():
        if Path(name).name != name or name in (".", "..") or not isinstance(digest, str):
            raise BadInput(f"{p} is not a valid manifest: export files must map plain file names to SHA-256 hashes")
    if Path(manifest["output"]["path"]).name != manifest["output"]["path"]:
        raise BadInput(f"{p} is not a valid manifest: output path must be a plain file name")
    manifest["_dir"] = str(p.parent)
    return manifest


@dataclass(frozen=True)
class Verification:
    holds: bool
    message: str
    verdict: Verdict | None
    sha256_matches: bool | None


def read_released(registry, fmt: str, path: str | os.PathLike) -> pd.DataFrame:
    """A released file read back by the exporter of ``fmt``; BadInput when it is damaged or not that format."""
    exporter = registry.exporter(fmt)
    try:
        return exporter.read_back(Path(path))
    except (BadInput, MemoryError, OSError):
        raise
    except Exception as exc:  # each format's reader fails its own way (ArrowInvalid, BadZipFile, ParserError…)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise BadInput(f"{Path(path).name} cannot be read as {fmt}: {reason}") from None


def verify_file(registry, path: str | os.PathLike, fmt: str, model_call, roles: dict,
                parts=None) -> Verification:
    """Re-check a released file, read from disk, against a privacy model (a PluginCall) or several
    (a list of them: every one must hold). ``parts``: the names of the release's further files
    (Anatomy's sensitive table), found beside it.

    Shares nothing with the method that made the file beyond the model's own check: the file is
    read back by its exporter and the roles come from the caller (the manifest or flags).
    """
    frame = read_released(registry, fmt, path)
    found = read_parts(registry.exporter(fmt), Path(path), parts)
    release = with_parts(release_as_written(frame, roles, found), found)
    missing = [c for c in release.quasi_identifiers if c not in frame.columns]
    if missing:
        raise BadInput(f"the file lacks the quasi-identifier column {missing[0]!r}")
    model = bind_model(registry, model_call)
    verdict = model.check(release)
    message = verdict.message
    if not verdict.holds:
        message += f"; failing records: {describe_failures(verdict, release)}"
    return Verification(verdict.holds, message, verdict, None)


def verify_manifest(registry, manifest_path: str | os.PathLike) -> Verification:
    """Re-check the export a manifest describes, as a whole: every member file (the release by its
    SHA-256, each report by the manifest hash it carries), what a killed export left in the folder,
    then the privacy model on the released file.

    A member of another export (a report left by an earlier export, files of a commit that a kill
    cut short) is named as an *incomplete export*, not as a change: nobody tampered with it.
    """
    given = Path(manifest_path)
    notes = []
    for item in leftovers(given if given.is_dir() else given.parent):
        if item.mixed:  # even before the manifest: a half-moved export may have none yet
            return Verification(False, _interrupted(item), None, None)
        notes.append(item.describe())
    manifest = read_manifest(manifest_path)
    folder = Path(manifest["_dir"])
    out = manifest["output"]
    path = folder / out["path"]
    problems = member_problems(folder, manifest)
    matches = None
    if path.exists():
        matches = sha256_file(path) == out.get("sha256")
        if not matches:
            problems.insert(0, f"{path.name} was changed after export: its SHA-256 differs from the manifest")
    note = "".join(f"; note: {n}" for n in notes)
    if problems:
        return Verification(False, "; ".join(problems) + note, None, matches)
    pm = manifest["privacy_model"]
    if not pm.get("name"):
        return Verification(True, f"the files match their manifest; {_unchecked_claim(manifest)}" + note, None, True)
    first = PluginCall(pm["name"], pm.get("params") or {})
    bind_model(registry, first)  # an unknown model or a parameter it refuses is bad input, not tampering
    models = [PluginCall.parse(m) for m in manifest.get("privacy_models") or []] or [first]
    if models[0] != first:
        return Verification(False, "the manifest's privacy_model differs from the first of its privacy_models: "
                                   "it was edited after export", None, True)
    result = verify_file(registry, path, out.get("format") or registry.preferred("exporter"), models,
                         manifest["roles"], parts=list(out.get("parts") or {}))
    return Verification(result.holds, result.message + note, result.verdict, True)


def member_problems(folder: Path, manifest: dict) -> list[str]:
    """What is missing from the export or belongs to another one, in words."""
    from .report import REPORT_FILES

    out = manifest["output"]
    files = dict((manifest.get("export") or {}).get("files") or {})
    files.setdefault(out["path"], out.get("sha256"))
    ours = manifest_digest(manifest) if manifest.get("export") else None
    data_files = {str(e.get("path")) for e in (out.get("parts") or {}).values() if isinstance(e, dict)}
    problems = []
    for name, digest in files.items():
        p = folder / name
        if not p.exists():
            problems.append(f"incomplete export: {name} is missing")
        elif name in data_files:  # a further part of the release (Anatomy's sensitive table)
            if sha256_file(p) != digest:
                problems.append(f"{name} was changed after export: its SHA-256 differs from the manifest")
        elif name != out["path"]:  # a report: whose is it?
            carried = read_binding(p)
            if carried.get("manifest-sha256") != ours:
                problems.append(f"incomplete export: {name} belongs to {_whose(carried, manifest)} export")
            elif sha256_file(p) != digest and not carried.get("regenerated"):
                problems.append(f"{name} was changed after export: its SHA-256 differs from the manifest")
    for name in REPORT_FILES.values():
        p = folder / name
        if name in files or not p.exists():
            continue
        carried = read_binding(p)
        if not ours or carried.get("manifest-sha256") != ours:
            problems.append(f"incomplete export: {name} belongs to {_whose(carried, manifest)} export")
    return problems


def _whose(carried: dict, manifest: dict) -> str:
    """"an earlier", "a later" or "another", comparing the export times (same ISO format, UTC)."""
    theirs, ours = carried.get("export-created") or "", manifest.get("created") or ""
    if not carried or (theirs and ours and theirs < ours):
        return "an earlier"  # a report without a binding is older than bindings
    if theirs and ours and theirs > ours:
        return "a later"
    return "another"


def _interrupted(item) -> str:
    new = sorted(n for n, state in item.members.items() if state == "new")
    earlier = sorted(n for n, state in item.members.items() if state == "earlier")
    missing = sorted(n for n in (item.journal.get("new") or {}) if n not in item.members)
    parts = []
    if new:
        parts.append(f"{_and(new)} {'belongs' if len(new) == 1 else 'belong'} to the interrupted export")
    if earlier:
        parts.append(f"{_and(earlier)} to an earlier one")
    if missing:
        parts.append(f"{_and(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    return (f"incomplete export: {item.describe()}: {', '.join(parts)}; the next export into this folder puts the "
            f"earlier files back first (or export again)")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _unchecked_claim(manifest: dict) -> str:
    """What a release without a record-level privacy model claims, in words for ``veil verify``."""
    budget = manifest.get("privacy_budget") or {}
    weights = manifest.get("release_kind") == FEATURE_WEIGHTS
    if budget.get("epsilon_spent") is not None:
        what = "feature weights claim" if weights else "release claims"
        return (f"the {what} ε = {budget['epsilon_spent']:g} differential privacy under the assumptions in the "
                f"manifest, which cannot be re-checked from the file" + ("; it holds no records" if weights else ""))
    if weights:
        return "a feature-weights release holds no records and makes no privacy claim"
    return "the release makes no privacy claim"


__all__ = ["Export", "ExportOptions", "export_release", "write_release", "read_manifest", "verify_manifest",
           "verify_file", "read_released", "Verification", "json_safe", "params_to_dict", "refuse_overwriting"]
