"""Run results kept beside a project file, so a reopened project shows its releases without running
them again (docs/guide.md, "Projects").

A project ``study.veil.json`` keeps its runs' results in the folder ``study.veil.json.results``:
one pickle per run (``run-3.pickle``) and ``index.json``, which names the Veil version that wrote
them, the SHA-256 of the input they were made from, and each pickle's SHA-256, signed with this
workstation's key (:mod:`.signing`). Reading a pickle runs code, so a result is restored only when
all of this holds:

* the index is signed by this workstation's key and unchanged since;
* each pickle's SHA-256 is the one the index signed;
* the Veil version is this one (a result made by another version may differ from what this one
  makes, and its classes may no longer load);
* the input's SHA-256 is the one the results were made from.

Otherwise nothing is unpickled and :func:`restore_results` says why in one sentence; the project's
result table still shows the saved figures and the runs can be run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import BadInput
from ..base.io import write_atomic, write_text_atomic
from . import signing

KEPT_VERSION = 1
INDEX = "index.json"
PICKLE_PROTOCOL = 5


def kept_folder(project: str | os.PathLike) -> Path:
    """Where the results of the project file ``project`` are kept."""
    p = Path(project)
    return p.with_name(p.name + ".results")


@dataclass(frozen=True)
class Restored:
    """What :func:`restore_results` found: each run's object by run number, and when nothing could be
    restored (or not everything), why."""

    results: dict[int, object] = field(default_factory=dict)
    why_not: str = ""


def keep_results(
    project: str | os.PathLike, results: Mapping[int, object], *, input_sha256: str | None, version: str
) -> Path | None:
    """Write each run's ``results[run]`` beside the project file (replacing what was kept before) and
    the signed index naming them. Without results, an earlier folder's index is removed (its pickles
    are no longer the project's). Returns the folder, or None when there was nothing to keep."""
    folder = kept_folder(project)
    if not results:
        if (folder / INDEX).exists():
            (folder / INDEX).unlink()
            _remove_pickles(folder, keep=set())
        return None
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    runs = {}
    for run_id, value in sorted(results.items()):
        data = pickle.dumps(value, protocol=PICKLE_PROTOCOL)
        name = f"run-{int(run_id)}.pickle"
        write_atomic(folder / name, lambda tmp, data=data: tmp.write_bytes(data))
        runs[str(int(run_id))] = {"file": name, "sha256": hashlib.sha256(data).hexdigest()}
    index = {"veil_kept_results": KEPT_VERSION, "veil_version": version, "input_sha256": input_sha256, "runs": runs}
    signing.sign(index)
    write_text_atomic(folder / INDEX, json.dumps(index, indent=2, sort_keys=True) + "\n")
    _remove_pickles(folder, keep={r["file"] for r in runs.values()})
    return folder


def _remove_pickles(folder: Path, keep: set[str]) -> None:
    for path in folder.glob("run-*.pickle"):
        if path.name not in keep:
            path.unlink(missing_ok=True)


def restore_results(project: str | os.PathLike, *, input_sha256: str | None, version: str) -> Restored:
    """The kept results of the project file ``project`` that can be trusted (see the module's text);
    ``why_not`` says why the others, or all, were not restored (empty when there were none to find)."""
    folder = kept_folder(project)
    path = folder / INDEX
    if not path.is_file():
        return Restored()
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Restored(why_not=f"{path.name} in {folder.name} cannot be read: the runs must be run again")
    if not isinstance(index, dict) or not isinstance(index.get("runs"), dict):
        return Restored(why_not=f"{folder.name} does not hold results Veil kept: the runs must be run again")
    try:
        here = signing.made_here(index)
    except BadInput:
        here = False
    if not here:
        return Restored(
            why_not=f"the results in {folder.name} were not kept by this workstation (or were changed since): "
            "they are not opened, and the runs must be run again"
        )
    if index.get("veil_version") != version:
        return Restored(
            why_not=f"the results were made by Veil {index.get('veil_version')}, this is Veil {version}: "
            "the runs must be run again to show and export their releases"
        )
    if input_sha256 is None or index.get("input_sha256") != input_sha256:
        return Restored(
            why_not="the data has changed since the results were kept (its SHA-256 differs): "
            "the runs must be run again to show and export their releases"
        )
    results, lost = {}, []
    for key, entry in index["runs"].items():
        try:
            data = (folder / str(entry["file"])).read_bytes()
        except (OSError, KeyError, TypeError):
            lost.append(key)
            continue
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            lost.append(key)
            continue
        try:
            results[int(key)] = pickle.loads(data)  # noqa: S301 - signed by this workstation, checked above
        except Exception:  # a class that no longer loads: that run is run again
            lost.append(key)
    why = ""
    if lost:
        which = ", ".join(f"#{k}" for k in sorted(lost, key=int))
        why = f"the kept results of run {which} are missing or damaged: run again to show and export them"
    return Restored(results, why)
