"""Writing a release safely, its manifest, and verifying a written release against its manifest.

The rules (DESIGN "Release, export and the report", docs/release.md):

* the release is checked against its privacy model from the materialised data before anything is
  written, and again *as read back from the written file* before it takes its final name; a
  release that fails is never written, and the message lists the failing records and why;
* writes are atomic (temporary file beside the target, fsync, rename): a killed export leaves the
  target path as it was;
* the input file (and the project file) is never written to: a target that is the same file, by
  any path or link, is refused;
* identifier columns never reach the output;
* rows are shuffled with a recorded seed (``shuffle_seed``) unless turned off;
* spreadsheet formulas are escaped by the CSV, TSV and Excel exporters.

:func:`export_release` is the one call the desktop and ``veil run`` make: release, manifest and
report. :func:`write_release` does the first two.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .assessment import ReportOptions, assess, before_release, release_as_written
from .binary import BinaryMatrix
from .datasource import input_path as data_input_path, input_rows as data_input_rows
from .errors import BadInput, PrivacyCheckFailed
from .io import atomic_path, sha256_file, write_text_atomic
from .jobs import Context
from .params import params_to_dict
from .release import Release, Verdict, describe_failures
from .runs import BoundModel, PluginCall, RunResult, bind_model
from .table import Role, Table
from .validate import get, read_json_object

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

    fmt: str = "csv"
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
        frame = frame.iloc[order].reset_index(drop=True)
    return frame, order


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
    """Write ``DIR/<filename>.<ext>`` and ``DIR/manifest.json``; return the manifest.

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
    """
    ctx = ctx or Context(result.spec.seed)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise BadInput(f"{out} exists and is not a folder")
    exporter = registry.exporter(options.fmt)
    target = out / f"{options.filename}.{exporter.extension}"
    protected = [input_path or _source_path(result), project]
    refuse_overwriting([target, out / MANIFEST_NAME, *(out / n for n in also_writes)], protected)
    shuffle_seed = result.spec.seed if options.shuffle_seed is None else options.shuffle_seed
    frame, order = released_frame(result, options.shuffle, shuffle_seed)
    model = bind_model(registry, result.spec.model)
    _check_or_refuse(model, result.release, None, "the release")
    sets = result.release.sets
    if sets is not None and not exporter.writes_sets:
        able = [n for n in registry.names("exporter") if registry.exporter(n).writes_sets]
        raise BadInput(f"a set-valued release is written one item set per line; choose the format "
                       f"{' or '.join(able) or '(none installed)'} instead of {options.fmt}")
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:  # nothing below may leave a file at target unless all of it succeeds
        if sets is not None:  # streamed from the group centres in chunks, never a records × items frame
            rows = result.release.groups if order is None else result.release.groups[order]
            exporter.write_sets(sets, rows, tmp, exporter.params())
        else:
            exporter.write(frame, tmp, exporter.params())
        ctx.progress(0.1, "reading the written file back")
        back = exporter.read_back(tmp)
        if sets is not None:  # judged from the file alone: records publishing the same set are a group
            verdict = _check_or_refuse(model, release_as_written(back, result.release.roles()), order,
                                       "the written release")
            frame = back
        else:
            verdict = _check_or_refuse(model, with_frame(result.release, back), order, "the written release")
        ctx.progress(0.2, "assessing risk and utility")
        assessment = assess(registry, result.data, before_release(result.data),
                            release_as_written(back, result.release.roles()),
                            report or ReportOptions(utility=False), ctx.child(0.2, 0.95))
        manifest = build_manifest(result, target, verdict, len(frame), list(frame.columns), options,
                                  input_path=input_path, input_rows=input_rows, version=version, extra=extra,
                                  source=source, project=project, shuffle_seed=shuffle_seed, assessment=assessment,
                                  output_sha256=sha256_file(tmp))
    write_text_atomic(out / MANIFEST_NAME, json.dumps(manifest, indent=2, allow_nan=False) + "\n")
    return manifest


def export_release(registry, result: RunResult, out_dir: str | os.PathLike, options: ExportOptions = ExportOptions(),
                   *, report: ReportOptions | None = ReportOptions(), source=None,
                   project: str | os.PathLike | None = None, version: str = "", ctx: Context | None = None) -> Export:
    """Export a run: the released file, ``manifest.json`` and (unless ``report`` is None) ``report.html``
    and ``report.pdf``, all in ``out_dir``. This is what the desktop's Export and ``veil run`` call.

    Takes seconds on large data when the report trains its classifier: call it from a worker
    thread with a :class:`Context` for progress and cancellation.

    Raises
    ------
    PrivacyCheckFailed
        The release fails its privacy model: nothing was written (the message lists failing records).
    BadInput
        A target path is the input or project file, an identifier column would be released, a bad format.
    """
    from .report import REPORT_FILES, write_report

    ctx = ctx or Context(result.spec.seed)
    data = _input_data(result)
    names = tuple(REPORT_FILES.values()) if report is not None else ()
    manifest = write_release(registry, result, out_dir, options, input_path=data_input_path(data),
                             input_rows=data_input_rows(data), version=version, source=source, project=project,
                             report=report, ctx=ctx.child(0.0, 0.8), also_writes=names)
    out = Path(out_dir)
    paths = {}
    if report is not None:
        ctx.progress(0.8, "writing the report")
        paths = write_report(registry, manifest, out, report)
    ctx.progress(1.0, "exported")
    return Export(manifest, out / manifest["output"]["path"], out / MANIFEST_NAME, paths.get("html"),
                  paths.get("pdf"))


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
                   source=None, project=None, shuffle_seed=None, assessment=None, output_sha256=None) -> dict:
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
                          else {"name": None, "params": {},
                                "note": ("no privacy model was checked: the method claims differential privacy "
                                         "(see privacy_budget)" if "epsilon_spent" in release.details else
                                         "no privacy model was chosen: this release makes no privacy claim")}),
        "seed": spec.seed,
        "shuffled": options.shuffle,
        "shuffle_seed": shuffle_seed if options.shuffle else None,
        "input": _input_entry(result, input_path, input_rows, source),
        "project": _project_entry(project),
        "output": {"path": target.name, "format": options.fmt, "sha256": output_sha256 or sha256_file(target),
                   "rows": rows,
                   "columns": columns},
        "roles": release.roles(),
        "removed_identifiers": identifier_columns(result),
        "release_kind": release.kind,
        "verdict": ({"holds": bool(verdict.holds), "value": verdict.to_dict()["value"], "message": verdict.message}
                    if verdict is not None else {"holds": None, "value": None,
                                                 "message": "no privacy model: nothing was checked"}),
        "privacy_budget": privacy_budget(release),
        "selected_features": list(release.selected_features) if release.selected_features is not None else None,
        "metrics": {k: _plain(v) for k, v in result.metrics.items()},
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


def privacy_budget(release: Release) -> dict | None:
    """``{"epsilon_spent": ε, "assumptions": [...]}`` of a differentially private release, else None
    (the convention of :class:`~veil.engine.release.Release`'s ``details``)."""
    eps = release.details.get("epsilon_spent")
    if eps is None:
        return None
    assumptions = release.details.get("assumptions") or []
    if isinstance(assumptions, str):
        assumptions = [assumptions]
    return {"epsilon_spent": _plain(float(eps)), "assumptions": [str(a) for a in assumptions]}


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


def read_manifest(path: str | os.PathLike) -> dict:
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_NAME
    manifest = read_json_object(p, "manifest")
    for key in ("output", "privacy_model", "roles"):
        if key not in manifest:
            raise BadInput(f"{p} is not a Veil manifest (no {key!r})")
        get(manifest, key, dict, where=p.name)
    get(manifest["output"], "path", str, where=f"{p.name} output", required=True)
    get(manifest["output"], "sha256", str, where=f"{p.name} output", required=True)
    get(manifest["privacy_model"], "params", dict, {}, where=f"{p.name} privacy_model")
    manifest["_dir"] = str(p.parent)
    return manifest


@dataclass(frozen=True)
class Verification:
    holds: bool
    message: str
    verdict: Verdict | None
    sha256_matches: bool | None


def verify_file(registry, path: str | os.PathLike, fmt: str, model_call: PluginCall, roles: dict) -> Verification:
    """Re-check a released file, read from disk, against a privacy model.

    Shares nothing with the method that made the file beyond the model's own check: the file is
    read back by its exporter and the roles come from the caller (the manifest or flags).
    """
    exporter = registry.exporter(fmt)
    frame = exporter.read_back(Path(path))
    release = release_as_written(frame, roles)
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
    """Re-check the file a manifest describes: its hash, then its privacy model."""
    manifest = read_manifest(manifest_path)
    out = manifest["output"]
    path = Path(manifest["_dir"]) / out["path"]
    if not path.exists():
        raise BadInput(f"the released file {path} is missing")
    actual = sha256_file(path)
    matches = actual == out.get("sha256")
    pm = manifest["privacy_model"]
    if not matches:
        return Verification(False, f"{path.name} was changed after export: its SHA-256 differs from the manifest",
                            None, False)
    if not pm.get("name"):
        return Verification(True, "the file matches its manifest; the release makes no privacy claim", None, True)
    result = verify_file(registry, path, out.get("format", "csv"), PluginCall(pm["name"], pm.get("params") or {}),
                         manifest["roles"])
    return Verification(result.holds, result.message, result.verdict, True)


__all__ = ["Export", "ExportOptions", "export_release", "write_release", "read_manifest", "verify_manifest",
           "verify_file", "Verification", "json_safe", "params_to_dict", "refuse_overwriting"]
