"""Writing a release safely, its manifest, and verifying a written release against its manifest.

The rules (DESIGN "Release, export and the report"): the release is re-checked from the
materialised data *as read back from the written file* before it takes its final name; a release
that fails is never written; writes are atomic; identifier columns never reach the output; rows are
shuffled (seeded, recorded) unless turned off; the input file is never the output.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import BadInput, PrivacyCheckFailed
from .io import atomic_path, sha256_file, write_text_atomic
from .params import params_to_dict
from .release import Release, Verdict
from .runs import BoundModel, RunResult, bind_model, PluginCall
from .table import Role, Table
from .validate import get

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class ExportOptions:
    fmt: str = "csv"
    shuffle: bool = True
    filename: str = "release"


def released_frame(result: RunResult, shuffle: bool, seed: int) -> tuple[pd.DataFrame, list[int] | None]:
    """The frame to write: identifiers removed, rows shuffled with ``seed`` unless turned off."""
    frame = result.release.frame
    data = result.data
    if isinstance(data, Table):
        ids = [c for c in data.schema.by_role(Role.IDENTIFIER) if c in frame.columns]
        if ids:
            raise BadInput(f"identifier column {ids[0]!r} cannot be released")
    order = None
    if shuffle:
        order = np.random.default_rng(seed).permutation(len(frame))
        frame = frame.iloc[order].reset_index(drop=True)
    return frame, order


def with_frame(release: Release, frame: pd.DataFrame) -> Release:
    import dataclasses

    return dataclasses.replace(release, frame=frame)


def write_release(registry, result: RunResult, out_dir: str | os.PathLike, options: ExportOptions = ExportOptions(),
                  *, input_path: str | None = None, input_rows: int | None = None, version: str = "",
                  extra: dict | None = None) -> dict:
    """Write ``DIR/release.<ext>`` and ``DIR/manifest.json``; return the manifest.

    Raises PrivacyCheckFailed (and writes nothing) when the file read back fails its model.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise BadInput(f"{out} exists and is not a folder")
    exporter = registry.exporter(options.fmt)
    target = out / f"{options.filename}.{exporter.extension}"
    if input_path and Path(input_path).exists() and target.exists() and os.path.samefile(input_path, target):
        raise BadInput("the output file would overwrite the input file; choose another folder")
    seed = result.spec.seed
    frame, _ = released_frame(result, options.shuffle, seed)
    model = bind_model(registry, result.spec.model)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        exporter.write(frame, tmp, exporter.params())
        verdict = _recheck(exporter, tmp, result.release, model)
        if verdict is not None and not verdict.holds:
            raise PrivacyCheckFailed(f"the written release fails {model.name}: {verdict.message}; nothing was written",
                                     verdict)
        written_rows = len(frame)
    manifest = build_manifest(result, target, verdict, written_rows, list(frame.columns), options,
                              input_path=input_path, input_rows=input_rows, version=version, extra=extra)
    write_text_atomic(out / "manifest.json", json.dumps(manifest, indent=2, default=_json_default) + "\n")
    return manifest


def _recheck(exporter, path: Path, release: Release, model: BoundModel | None) -> Verdict | None:
    if model is None:
        return None
    back = exporter.read_back(path)
    return model.check(with_frame(release, back))


def build_manifest(result: RunResult, target: Path, verdict: Verdict | None, rows: int, columns: list[str],
                   options: ExportOptions, *, input_path=None, input_rows=None, version="", extra=None) -> dict:
    release = result.release
    prov = release.provenance
    spec = result.spec
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "veil_version": version,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": {"system": platform.system(), "python": platform.python_version(), "machine": platform.machine()},
        "method": {"name": spec.method.name, "params": prov.params if prov else spec.method.params},
        "privacy_model": ({"name": prov.model, "params": prov.model_params} if prov and prov.model
                          else {"name": None, "params": {},
                                "note": "no privacy model was chosen: this release makes no privacy claim"}),
        "seed": spec.seed,
        "shuffled": options.shuffle,
        "input": {"path": input_path, "sha256": prov.input_sha256 if prov else None, "rows": input_rows},
        "output": {"path": target.name, "format": options.fmt, "sha256": sha256_file(target), "rows": rows,
                   "columns": columns},
        "roles": release.roles(),
        "release_kind": release.kind,
        "verdict": ({"holds": bool(verdict.holds), "value": verdict.to_dict()["value"], "message": verdict.message}
                    if verdict is not None else {"holds": None, "value": None,
                                                 "message": "no privacy model: nothing was checked"}),
        "selected_features": list(release.selected_features) if release.selected_features is not None else None,
        "metrics": {k: _plain(v) for k, v in result.metrics.items()},
        "recipe": spec.recipe.to_dict() if spec.recipe else None,
        "notes": list(release.notes),
        "seconds": round(result.seconds, 4),
    }
    if extra:
        manifest.update(extra)
    return manifest


def _plain(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    return str(o)


def read_manifest(path: str | os.PathLike) -> dict:
    p = Path(path)
    if p.is_dir():
        p = p / "manifest.json"
    try:
        manifest = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"manifest not found: {p}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{p} is not a valid manifest: {exc}") from None
    if not isinstance(manifest, dict):
        raise BadInput(f"{p} is not a Veil manifest")
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
    """Re-check a released file, read from disk, against a privacy model."""
    exporter = registry.exporter(fmt)
    frame = exporter.read_back(Path(path))
    release = Release("file", frame, tuple(roles.get("quasi_identifiers") or ()), target=roles.get("target"),
                      sensitive=tuple(roles.get("sensitive") or ()))
    missing = [c for c in release.quasi_identifiers if c not in frame.columns]
    if missing:
        raise BadInput(f"the file lacks the quasi-identifier column {missing[0]!r}")
    model = bind_model(registry, model_call)
    verdict = model.check(release)
    return Verification(verdict.holds, verdict.message, verdict, None)


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


__all__ = ["ExportOptions", "write_release", "read_manifest", "verify_manifest", "verify_file", "Verification",
           "params_to_dict"]
