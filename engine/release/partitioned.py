"""A release written in parts: a table larger than this process holds (docs/design.md#tables-larger-than-memory).

A method that reads its input files itself (:meth:`~veil.engine.Algorithm.run_parts`, e.g. global
recoding on Spark) writes its release as part files into the export's staging folder. The engine
then, before anything takes its final name:

* names the parts ``release.part-00000.csv``, ``release.part-00001.csv``, … and hashes each;
* reads them back (on the method's executor or here, a chunk at a time) to count the records of
  every part and of every combination of quasi-identifier and sensitive values, and judges those
  groups with each privacy model's own ``check_groups``: a release that fails is never written;
* builds the manifest (:func:`.manifest.build_parts_manifest`, laid out as every manifest is), which
  lists every part with its SHA-256 and its records, with the risk figures from the class counts
  (:func:`.part_counts.parts_assessment`: risk after from the parts' classes, before from the
  input's when the method counted them);
* finishes as a release in one file does (:func:`.export.finish`): the export's id, ``report.html``
  and ``report.pdf`` with their hashes, the signature, ``manifest.json``, and the commit of the
  whole export as one transaction (:mod:`.staging`).

``veil verify`` checks every part's hash and records and judges the groups again
(:func:`.part_counts.verify_parts`), on the executor asked for. Groups are records equal on every written
quasi-identifier, values compared as the text written, as in a release of one file.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..base.errors import BadInput, PrivacyCheckFailed
from ..base.io import sha256_file
from ..data.table import Role
from ..model.bound import bind_models
from ..model.release import PartsRelease
from ..model.roles import refusal
from .assessment import ReportOptions
from .export import ExportRequest, finish
from .manifest import build_parts_manifest, input_digest
from .part_counts import count_parts, judge_counts, parts_assessment
from .staging import Staging

__all__ = ["PART_NAME", "export_parts", "input_digest"]

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
    when ``release_sensitive`` names it, as for a release in one file. Returns the manifest.

    The export's last steps are those of a release in one file (:func:`.export.finish`)."""
    request = ExportRequest(Path(target), report=report, version=version, source=source, ctx=ctx)
    method = registry.algorithm(spec.method.name)
    params = method.params(spec.method.params)
    if not method.reads_files(params):
        raise BadInput(f"method {spec.method.name} with these parameters does not read its input files itself")
    model = bind_models(registry, spec.models)  # once: the method runs under it and the parts are judged by it
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
    out = request.out_dir
    _refuse_inputs_inside(source, out)
    with Staging(out, ctx.holding) as stage:
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
        figures = parts_assessment(counts, qis, result.input_classes, (report or ReportOptions()).risk_threshold)
        manifest = build_parts_manifest(spec, params, model, source, result, parts, verdict, figures, version=version)
        finish(
            registry,
            stage,
            manifest,
            {p["path"]: p["sha256"] for p in parts},
            request.report,
            ctx,
            keep={p["path"] for p in parts},
            protected=request.protected(),
            report_at=0.97,
        )
    return manifest


def _refuse_inputs_inside(source, target: Path) -> None:
    """An export never writes where its input lies (nor removes an input file as an earlier release)."""
    folder = target.resolve()
    for name in source.files():
        path = Path(name).resolve()
        if path == folder or folder in path.parents:
            raise BadInput(f"the output folder {target} holds the input {name}; choose another output folder")
