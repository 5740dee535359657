"""The manifest of an export: what was released, from what, under which guarantee, with the hash
of every file of the export (docs/release.md). :func:`build_manifest` writes it,
:func:`read_manifest` reads one back and refuses any field whose type Veil would not have written,
and :func:`binding` ties a report to the manifest it describes.
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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..base.io import open_regular, sha256_file
from ..base.validate import NULL, check_shape, get, read_json_object
from ..data.binary import BinaryMatrix
from ..data.datasource import input_path as data_input_path
from ..data.table import FILE_LABELS, Role, Table
from ..model.params import params_to_dict
from ..model.release import FEATURE_WEIGHTS, GENERALISED_TABLE, Release, Verdict
from ..run.runs import RunResult
from .staging import plain_name

REPORT_FILES = {"html": "report.html", "pdf": "report.pdf"}


MANIFEST_VERSION = 1


MANIFEST_NAME = "manifest.json"


def manifest_digest(manifest: dict) -> str:
    """SHA-256 of a manifest's content without its ``export.files`` (which lists the report's own
    hash) and its ``signature`` (made last, over everything): the hash a report carries to say which
    manifest it describes."""
    body = {k: v for k, v in manifest.items() if not k.startswith("_") and k != "signature"}
    if isinstance(body.get("export"), dict):
        body["export"] = {k: v for k, v in body["export"].items() if k != "files"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def binding(manifest: dict, regenerated: str | None = None) -> dict:
    """What a report carries to tie it to its manifest (see :func:`read_binding`)."""
    b = {
        "manifest-sha256": manifest_digest(manifest),
        "export-id": (manifest.get("export") or {}).get("id") or "",
        "export-created": manifest.get("created") or "",
    }
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
        with open_regular(path) as f:  # never a FIFO or a device
            head = f.read(4096)
            if head.startswith(b"%PDF"):
                f.seek(max(0, os.fstat(f.fileno()).st_size - 65536))  # the info dictionary is near the end
                head = f.read()
    except (OSError, BadInput):
        return {}
    found = {}
    for key, value in _BINDING.findall(head):
        found.setdefault(key.decode(), value.decode())
    return found


def recorded_inputs(manifest: dict) -> list:
    """The files a manifest says its run read (the input, appended files, hierarchies, the project
    file), as (path, what) pairs for :func:`~veil.engine.release.staging.refuse_overwriting`."""
    found = []

    def source(read) -> None:
        if not isinstance(read, dict):
            return
        if isinstance(read.get("path"), str):
            found.append((read["path"], "input file"))
        hierarchies = read.get("hierarchies")
        for f in hierarchies.values() if isinstance(hierarchies, dict) else ():
            if isinstance(f, str):
                found.append((f, "hierarchy file"))
        for extra in read.get("append") if isinstance(read.get("append"), list) else ():
            source(extra)

    inp = manifest.get("input") if isinstance(manifest.get("input"), dict) else {}
    source({"path": inp.get("path")})
    source(inp.get("read"))
    project = manifest.get("project")
    if isinstance(project, dict) and isinstance(project.get("path"), str):
        found.append((project["path"], "project file"))
    return found


def input_data(result: RunResult):
    """The data as the user gave it (a Table before binarisation)."""
    return result.original if result.original is not None else result.data


def source_path(result: RunResult) -> str | None:
    return data_input_path(input_data(result))


def manifest_header(version: str) -> dict:
    """The fields every manifest opens with: its format, the Veil that wrote it, when and where."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "veil_version": version,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "platform": {
            "system": platform.system(),
            "release": platform.release(),
            "python": platform.python_version(),
            "machine": platform.machine(),
        },
    }


# Every manifest's fields in the one order they are written, each with its value when an export has
# nothing to say about it (a release in parts has no metrics, no recipe, no population, ...).
MANIFEST_LAYOUT = {
    "manifest_version": MANIFEST_VERSION,
    "veil_version": "",
    "created": None,
    "platform": None,
    "method": None,
    "privacy_model": None,
    "seed": None,
    "shuffled": False,
    "shuffle_seed": None,
    "input": None,
    "project": None,
    "output": None,
    "roles": None,
    "sensitive_hierarchies": {},
    "population": None,
    "removed_identifiers": [],
    "release_kind": None,
    "verdict": None,
    "privacy_models": [],
    "verdicts": [],
    "privacy_budget": None,
    "selected_features": None,
    "released_sensitive": [],
    "metrics": {},
    "metric_samples": {},
    "recipe": None,
    "details": {},
    "perturbation": None,
    "notes": [],
    "seconds": None,
}


def complete_manifest(fields: dict, assessment: dict | None = None, extra: dict | None = None) -> dict:
    """The manifest of an export, in one place for a release in one file and in parts: ``fields`` laid
    out in :data:`MANIFEST_LAYOUT`'s order, every field present (its empty value where the export
    gives none), then the assessment's figures (``risk``, ``utility``) and ``extra``, as plain JSON.
    What only the export's last steps know (its id, the reports' hashes, the signature) is added by
    :func:`veil.engine.release.export.finish`."""
    unknown = set(fields) - set(MANIFEST_LAYOUT)
    if unknown:  # a field outside the layout would be written in no agreed place
        raise ValueError(f"not a manifest field: {', '.join(sorted(unknown))}")
    manifest = {key: fields.get(key, empty) for key, empty in MANIFEST_LAYOUT.items()}
    if assessment is not None:
        manifest.update(assessment)
    if extra:
        manifest.update(extra)
    return json_safe(manifest)


def variable_labels(data, columns) -> dict:
    """Column → variable label, for the ``columns`` a labelled input file gave one
    (:data:`~veil.engine.data.table.FILE_LABELS`)."""
    labels = ((getattr(data, "meta", None) or {}).get(FILE_LABELS)) or {}
    return {str(c): labels[str(c)]["label"] for c in columns if (labels.get(str(c)) or {}).get("label")}


def build_manifest(
    result: RunResult,
    target: Path,
    verdict: Verdict | None,
    rows: int,
    columns: list[str],
    options: ExportOptions,
    *,
    input_path=None,
    input_rows=None,
    version="",
    extra=None,
    source=None,
    project=None,
    shuffle_seed=None,
    assessment=None,
    output_sha256=None,
    written=None,
    parts=None,
) -> dict:
    """The manifest of a release in one file (``parts``: its further files, e.g. Anatomy's sensitive
    table, as :func:`veil.engine.release.parts.manifest_entry` lists them)."""
    release = result.release
    prov = release.provenance
    spec = result.spec
    output = {
        "path": target.name,
        "format": options.fmt,
        "sha256": output_sha256 or sha256_file(target),
        "rows": rows,
        "columns": columns,
        "written_columns": {c: w for c, w in zip(columns, written or columns) if w != c},
    }
    labels = variable_labels(result.data, columns)
    if labels:  # a labelled file's variable labels of the released columns (never a value's label)
        output["variable_labels"] = labels
    if parts:
        output["parts"] = parts
    fields = {
        **manifest_header(version),
        "method": {
            "name": spec.method.name,
            "params": prov.params if prov else spec.method.params,
            # a second step that perturbed the method's release: {"name", "params"}
            **({"then": dict(prov.then)} if prov is not None and prov.then else {}),
        },
        "privacy_model": (
            {"name": prov.model, "params": prov.model_params}
            if prov and prov.model
            else {"name": None, "params": {}, "note": _no_model_note(release)}
        ),
        "seed": spec.seed,
        "shuffled": options.shuffle,
        "shuffle_seed": shuffle_seed if options.shuffle else None,
        "input": _input_entry(result, input_path, input_rows, source),
        "project": _project_entry(project),
        "output": output,
        "roles": release.roles(),
        # the hierarchies declared for sensitive columns: a model's distance may follow one, and the
        # file is verified from the manifest alone
        "sensitive_hierarchies": {c: h.to_dict() for c, h in release.hierarchies.items()},
        # the population the groups were judged against (δ-presence, k-map), read again by veil verify
        "population": release.population.to_dict() if getattr(release, "population", None) is not None else None,
        "removed_identifiers": identifier_columns(result),
        "release_kind": release.kind,
        "verdict": (
            {
                "holds": bool(verdict.holds),
                "value": verdict.to_dict()["value"],
                "message": verdict.message,
                **({"by_column": verdict.columns_dict()} if verdict.by_column else {}),
            }
            if verdict is not None
            else {"holds": None, "value": None, "message": "no privacy model: nothing was checked"}
        ),
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
        # the columns perturbed record for record and the transition matrices used (typed, whatever the method)
        "perturbation": release.perturbation.to_dict() if release.perturbation is not None else None,
        "notes": list(release.notes),
        "seconds": round(result.seconds, 4),
    }
    return complete_manifest(fields, assessment, extra)


def build_parts_manifest(
    spec, params, model, source, result, parts: list[dict], verdict, assessment: dict, *, version: str = ""
) -> dict:
    """The manifest of a release in parts (:mod:`veil.engine.release.partitioned`): ``result`` a
    :class:`~veil.engine.PartsRelease`, ``parts`` each part's ``{"path", "sha256", "rows"}``,
    ``verdict`` the models' judgement of the groups counted from the parts."""
    first = model.models[0]
    fields = {
        **manifest_header(version),
        "method": {"name": spec.method.name, "params": params_to_dict(params)},
        "privacy_model": {"name": first.name, "params": params_to_dict(first.params)},
        "seed": spec.seed,
        "input": {
            "path": _absolute(source.path),
            "sha256": input_digest(source.path),
            "rows": result.input_rows,
        },
        "output": {
            "path": parts[0]["path"],
            "format": result.fmt,
            "sha256": parts[0]["sha256"],
            "rows": int(sum(p["rows"] for p in parts)),
            "columns": list(result.columns),
            "written_columns": {},
            "parts_of": parts,
        },
        "roles": {
            "quasi_identifiers": list(result.quasi_identifiers),
            "target": result.target,
            "sensitive": list(result.sensitive),
        },
        "removed_identifiers": [
            c for c, r in source.roles.items() if r in (Role.IDENTIFIER, Role.HOUSEHOLD) and c not in result.columns
        ],
        "release_kind": GENERALISED_TABLE,
        "verdict": {"holds": verdict.holds, "value": None, "message": verdict.message},
        "privacy_models": [m.to_dict() for m in model.models],
        "verdicts": list(verdict.each),
        "released_sensitive": [c for c in result.sensitive if c in result.columns],  # the report names them
        "details": result.details,
        "notes": list(result.notes),
    }
    return complete_manifest(fields, assessment)


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


def manifest_text(manifest: dict) -> str:
    """The manifest file's text, for every export alike: two-space indents, ASCII (other characters
    escaped), no NaN, one closing newline."""
    return json.dumps(manifest, indent=2, allow_nan=False) + "\n"


def _no_model_note(release: Release) -> str:
    if not holds_records(release):
        claim = (
            "its weights claim differential privacy (see privacy_budget)"
            if "epsilon_spent" in release.details
            else "the weights make no privacy claim"
        )
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
    entry = {
        "path": _absolute(input_path),
        "sha256": result.release.provenance.input_sha256 if result.release.provenance else None,
        "rows": input_rows,
    }
    if source is not None:
        # the population is recorded on its own ("population"), with its hash and size
        read = {k: v for k, v in source.to_dict().items() if k not in ("roles", "kinds", "population")}
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


_FIGURES = (
    {
        "columns": _TEXTS,
        "records": (int, NULL),
        "groups": (int, NULL),
        "smallest_group": (int, NULL),
        "max": (float, NULL),
        "avg": (float, NULL),
        "at_risk": (float, NULL),
        "group_sizes": (dict, NULL),
    },
    NULL,
)


MANIFEST_SHAPE = {
    "manifest_version": (int, NULL),
    "veil_version": _TEXT,
    "created": _TEXT,
    "platform": ({"system": _TEXT, "release": _TEXT, "python": _TEXT, "machine": _TEXT}, NULL),
    "method": ({"name": _TEXT, "params": _MAYBE_OBJECT, "then": ({"name": str, "params": _MAYBE_OBJECT}, NULL)}, NULL),
    "privacy_model": {"name": _TEXT, "params": _MAYBE_OBJECT},
    "seed": (int, NULL),
    "shuffled": (bool, NULL),
    "shuffle_seed": (int, NULL),
    "input": (
        {"path": _TEXT, "sha256": _TEXT, "rows": (int, NULL), "read": _MAYBE_OBJECT, "schema": ([dict], NULL)},
        NULL,
    ),
    "project": ({"path": str, "sha256": _TEXT}, NULL),
    "output": {
        "path": str,
        "format": _TEXT,
        "sha256": str,
        "rows": (int, NULL),
        "columns": _TEXTS,
        "table": _TEXT,  # a release written as a table of a database: path is the database's absolute path
    },
    "roles": {
        "quasi_identifiers": _TEXTS,
        "target": _TEXT,
        "sensitive": _TEXTS,
        "exact_quasi_identifiers": _TEXTS,
        "weight": _TEXT,
        "household": _TEXT,
    },
    "population": (
        {"path": _TEXT, "sha256": _TEXT, "rows": (int, NULL), "subset_column": _TEXT, "hierarchies": _MAYBE_OBJECT},
        NULL,
    ),
    "removed_identifiers": _TEXTS,
    "release_kind": _TEXT,
    "sensitive_hierarchies": _MAYBE_OBJECT,
    "verdict": ({"holds": (bool, NULL), "value": (float, NULL), "message": _TEXT, "by_column": _MAYBE_OBJECT}, NULL),
    "privacy_budget": ({"epsilon_spent": (float, NULL), "assumptions": _TEXTS, "noise": _TEXT}, NULL),
    "selected_features": _TEXTS,
    "metrics": _MAYBE_OBJECT,
    "recipe": _MAYBE_OBJECT,
    "details": _MAYBE_OBJECT,
    "perturbation": ({"columns": [str], "transitions": [dict]}, NULL),
    "notes": _TEXTS,
    "seconds": (float, NULL),
    "risk": (
        {"model": _TEXT, "threshold": (float, NULL), "before": _FIGURES, "after": _FIGURES, "sample": _MAYBE_OBJECT},
        NULL,
    ),
    "utility": (
        {"classifier": _TEXT, "target": _TEXT, "before": _MAYBE_OBJECT, "after": _MAYBE_OBJECT, "note": _TEXT},
        NULL,
    ),
    "signed_by": ({"algorithm": _TEXT, "public_key": _TEXT, "fingerprint": _TEXT}, NULL),
    "signature": _TEXT,
}


def read_manifest(path: str | os.PathLike) -> dict:
    """A manifest whose every field Veil reads has the type Veil wrote (BadInput names the field)."""
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_NAME
    manifest = read_json_object(p, "manifest")
    if "_dir" in manifest:  # Veil sets it on reading, to the manifest's folder
        raise BadInput(f"{p} is not a valid manifest: it holds '_dir', a field Veil never writes")
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
        if not plain_name(name) or not isinstance(digest, str):
            raise BadInput(f"{p} is not a valid manifest: export files must map plain file names to SHA-256 hashes")
    if manifest["output"].get("table") is not None:  # a table of a database, which lies where its path says
        if not Path(manifest["output"]["path"]).is_absolute() or manifest["output"].get("parts"):
            raise BadInput(f"{p} is not a valid manifest: a table's database must be an absolute path, without parts")
    elif not plain_name(manifest["output"]["path"]):
        raise BadInput(f"{p} is not a valid manifest: output path must be a plain file name")
    parts = get(manifest["output"], "parts", dict, {}, where=f"{p.name} output")
    for name, entry in parts.items():  # each part is read as release.NAME.EXT beside the release
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not isinstance(entry, dict):
            raise BadInput(f"{p} is not a valid manifest: output parts must map plain words to their files")
        if not plain_name(entry.get("path")):
            raise BadInput(f"{p} is not a valid manifest: a part's path must be a plain file name")
    manifest["_dir"] = str(p.parent)
    return manifest


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
    into : IntoTable, optional
        Write the release as a new table of an existing database (an exporter that ``writes_tables``)
        instead of a file beside the manifest.
    """

    fmt: str | None = None  # None: the registry's preferred exporter
    shuffle: bool = True
    filename: str = "release"
    shuffle_seed: int | None = None
    into: IntoTable | None = None  # the release as a new table of an existing database, not a file


@dataclass(frozen=True)
class IntoTable:
    """Where a release written into an existing database goes: the database file, the table's name,
    and whether a table of that name already there is replaced (refused unless ``replace``)."""

    database: str | os.PathLike
    table: str = "release"
    replace: bool = False


def identifier_columns(result: RunResult) -> list[str]:
    """The input's identifier columns, the household id among them unless the user agreed to release
    it (the release then names it, :attr:`Release.household`)."""
    for data in (result.original, result.data):
        if isinstance(data, Table):
            return [
                c.name
                for c in data.schema.columns
                if c.role is Role.IDENTIFIER or (c.role is Role.HOUSEHOLD and c.name != result.release.household)
            ]
    return []


def holds_records(release: Release) -> bool:
    """Whether the release is made of records (every kind but feature weights)."""
    return release.kind != FEATURE_WEIGHTS
