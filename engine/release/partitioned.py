"""A release written in parts: a table larger than this process holds (docs/design.md#tables-larger-than-memory).

A method that reads its input files itself (:meth:`~veil.engine.Algorithm.run_parts`, e.g. global
recoding on Spark) writes its release as part files into the export's staging folder. The engine
then, before anything takes its final name:

* names the parts ``release.part-00000.csv``, ``release.part-00001.csv``, … and hashes each;
* reads them back (on the method's executor or here, a chunk at a time) to count the records of
  every part and of every combination of quasi-identifier and sensitive values, and judges those
  groups with each privacy model's own ``check_groups``: a release that fails is never written;
* writes ``report.html`` and ``report.pdf`` from the class counts (:func:`.part_counts.parts_assessment`: risk
  after from the parts' classes, before from the input's when the method counted them) and the
  manifest, which lists every part with its SHA-256 and its records and every report with its
  hash, and commits the whole export as one transaction (:mod:`.staging`).

``veil verify`` checks every part's hash and records and judges the groups again
(:func:`.part_counts.verify_parts`), on the executor asked for. Groups are records equal on every written
quasi-identifier, values compared as the text written, as in a release of one file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import secrets
from pathlib import Path

from ..base.errors import BadInput, PrivacyCheckFailed
from ..base.io import sha256_file
from ..model.bound import bind_models
from ..model.params import params_to_dict
from ..data.table import Role
from ..model.release import GENERALISED_TABLE, PartsRelease
from ..model.roles import refusal
from .assessment import ReportOptions
from .part_counts import count_parts, judge_counts, parts_assessment
from .manifest import MANIFEST_NAME, MANIFEST_VERSION, binding, json_safe, read_manifest
from .report import render_report_files
from .signing import made_here, sign, signer
from .staging import Staging, plain_name

PART_NAME = "release.part-{:05d}.{}"


def export_parts(
    registry,
    spec,
    source,
    ctx,
    target: str | os.PathLike,
    *,
    version: str = "",
    release_sensitive=(),
    report: ReportOptions | None = ReportOptions(),
) -> dict:
    """Run ``spec``'s method on the files of ``source`` (it reads them itself) and export its release
    in parts with a manifest (module docstring) and, unless ``report`` is None, ``report.html`` and
    ``report.pdf`` (:func:`parts_assessment`); PrivacyCheckFailed, with nothing written, when the
    parts read back fail a model. A column marked sensitive that no model protects is released only
    when ``release_sensitive`` names it, as for a release in one file. Returns the manifest."""
    method = registry.algorithm(spec.method.name)
    params = method.params(spec.method.params)
    if not method.reads_files(params):
        raise BadInput(f"method {spec.method.name} with these parameters does not read its input files itself")
    model = bind_models(registry, spec.models)
    if model is None:
        raise BadInput(f"method {spec.method.name} needs a privacy model: give --model")
    marked = [c for c, r in source.roles.items() if r == Role.SENSITIVE]
    for column in release_sensitive:
        if column not in marked:
            raise BadInput(f"cannot acknowledge releasing {column!r}: it is not a column marked sensitive")
    # a method releasing sensitive values under a model that reads them judges every column marked
    # sensitive (checked once its parts say which it judged), as for a release in one file
    protected = marked if method.releases_sensitive and model.needs_sensitive else []
    refused = [c for c in marked if c not in protected and c not in release_sensitive]
    if refused:
        raise BadInput(refusal(refused, spec.method.name, before=True))
    target = Path(target)
    _refuse_inputs_inside(source, target)
    with Staging(target) as stage:
        scratch = stage.path / "scratch"
        scratch.mkdir(mode=0o700)
        result: PartsRelease = method.run_parts(source, model, params, ctx, scratch)
        unjudged = [
            c for c in protected if c in result.columns and c not in result.sensitive and c not in release_sensitive
        ]
        if unjudged:
            raise BadInput(refusal(unjudged, spec.method.name, before=False))
        extension = registry.exporter(result.fmt).extension  # BadInput for a format no exporter reads
        staged = []
        for i, path in enumerate(result.files):
            name = PART_NAME.format(i, extension)
            os.replace(path, stage.file(name))
            staged.append(stage.file(name))
        ctx.check()
        ctx.progress(0.95, "reading the release back to check it")
        qis, sensitive = list(result.quasi_identifiers), list(result.sensitive)
        counts, rows = count_parts(registry, staged, result.fmt, qis + sensitive, result.counter)
        if sum(rows) != result.records:
            raise BadInput(
                f"the release's parts hold {sum(rows):,} records, not the {result.records:,} written: "
                f"nothing was released"
            )
        verdict = judge_counts(model, counts, qis, sensitive)
        if not verdict.holds:
            raise PrivacyCheckFailed(
                f"the release as written fails {model.name}: {verdict.message}; nothing was written"
            )
        parts = [{"path": p.name, "sha256": sha256_file(p), "rows": int(r)} for p, r in zip(staged, rows)]
        manifest = _manifest(spec, method, params, model, source, result, parts, verdict, version)
        manifest.update(parts_assessment(counts, qis, result.input_classes, (report or ReportOptions()).risk_threshold))
        manifest["export"] = {"id": secrets.token_hex(16), "files": {p["path"]: p["sha256"] for p in parts}}
        manifest["signed_by"] = signer()  # the report shows the key's fingerprint
        if report is not None and (report.html or report.pdf):
            ctx.progress(0.97, "writing the report")
            written = render_report_files(
                registry, manifest, stage, report, binding(manifest), ctx=ctx.child(0.97, 0.99)
            )
            manifest["export"]["files"].update({p.name: sha256_file(p) for p in written.values()})
        sign(manifest)  # last: it covers every field, the parts' and the reports' hashes included
        manifest_file = stage.file(MANIFEST_NAME)
        manifest_file.write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
        ctx.check()
        stage.commit(remove=_earlier(target, {p["path"] for p in parts}), last=MANIFEST_NAME)
    return manifest


def _refuse_inputs_inside(source, target: Path) -> None:
    """An export never writes where its input lies (nor removes an input file as an earlier release)."""
    folder = target.resolve()
    for name in source.files():
        path = Path(name).resolve()
        if path == folder or folder in path.parents:
            raise BadInput(f"the output folder {target} holds the input {name}; choose another output folder")


def _earlier(target: Path, keep: set) -> tuple[str, ...]:
    """The files of the earlier export in ``target`` that this one replaces: those its manifest lists
    (its release, in one file or in parts, their further parts and its reports), nothing else, and
    only when this workstation's key signed that manifest, unchanged since, and each file still has
    the SHA-256 it lists (a manifest planted in the folder, or edited, names nothing to remove)."""
    path = target / MANIFEST_NAME
    if not path.is_file():
        return ()
    try:
        earlier = read_manifest(path)
    except (BadInput, OSError):
        return ()  # not a Veil manifest: it is replaced, and nothing else is touched
    if not made_here(earlier):
        return ()
    out = earlier["output"]
    listed = dict((earlier.get("export") or {}).get("files") or {})  # name -> its SHA-256
    listed[out.get("path")] = out.get("sha256")
    for p in [*(out.get("parts_of") or []), *(out.get("parts") or {}).values()]:
        if isinstance(p, dict):
            listed[p.get("path")] = p.get("sha256")
    return tuple(
        sorted(
            n
            for n, digest in listed.items()
            if isinstance(n, str)
            and plain_name(n)
            and n not in keep
            and n != MANIFEST_NAME
            and (target / n).is_file()
            and not (target / n).is_symlink()
            and sha256_file(target / n, follow_symlinks=False) == digest
        )
    )


def input_digest(path) -> str | None:
    """The input's fingerprint: a file's SHA-256; a folder's (a table in parts), the SHA-256 of its
    files' relative names and SHA-256s, one per line in name order, so that it changes when any file
    does, is added or goes; None without a path."""
    if not path:
        return None
    path = Path(path)
    if not path.is_dir():
        return sha256_file(path)
    h = hashlib.sha256()
    for file in sorted(f for f in path.rglob("*") if f.is_file()):
        h.update(f"{file.relative_to(path).as_posix()}\t{sha256_file(file)}\n".encode())
    return h.hexdigest()


def _manifest(spec, method, params, model, source, result: PartsRelease, parts, verdict, version) -> dict:
    first = model.models[0]
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "veil_version": version,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "platform": {
            "system": platform.system(),
            "release": platform.release(),
            "python": platform.python_version(),
            "machine": platform.machine(),
        },
        "method": {"name": spec.method.name, "params": params_to_dict(params)},
        "privacy_model": {"name": first.name, "params": params_to_dict(first.params)},
        "privacy_models": [m.to_dict() for m in model.models],
        "seed": spec.seed,
        "shuffled": False,
        "shuffle_seed": None,
        "input": {
            "path": str(Path(source.path).resolve()) if source.path else None,
            "rows": result.input_rows,
            "sha256": input_digest(source.path),
        },
        "output": {
            "path": parts[0]["path"],
            "format": result.fmt,
            "sha256": parts[0]["sha256"],
            "rows": int(sum(p["rows"] for p in parts)),
            "columns": list(result.columns),
            "parts_of": parts,
        },
        "roles": {
            "quasi_identifiers": list(result.quasi_identifiers),
            "target": result.target,
            "sensitive": list(result.sensitive),
        },
        "removed_identifiers": [c for c, r in source.roles.items() if r == Role.IDENTIFIER and c not in result.columns],
        "released_sensitive": [c for c in result.sensitive if c in result.columns],  # the report names them
        "release_kind": GENERALISED_TABLE,
        "verdict": {"holds": verdict.holds, "value": None, "message": verdict.message},
        "verdicts": list(verdict.each),
        "details": result.details,
        "notes": list(result.notes),
    }
    return json_safe(manifest)
