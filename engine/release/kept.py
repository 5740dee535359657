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

A kept run does not hold its input. The input's large parts (a table's records, its population's
records: :func:`input_parts`) are left out of each pickle by name, with a fingerprint of their
contents in the signed index; reopening puts the project's own data back in their place when its
contents are those the run was made from, and restores nothing of that run otherwise. So a kept
file holds the release, its verdict, metrics and solution space, and grows with the release, not
with the input.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..base.io import write_atomic, write_text_atomic
from ..data.table import Table
from . import signing

KEPT_VERSION = 2
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


def input_parts(data) -> dict[str, object]:
    """The large parts of the input ``data`` that kept runs leave out, by name: a table's records
    and its population's records, or the whole of other data (a binary matrix, item sets)."""
    if data is None:
        return {}
    if not isinstance(data, Table):
        return {"records": data}
    parts: dict[str, object] = {"records": data.frame}
    if data.population is not None:
        parts["population"] = data.population.frame
    return parts


def keep_results(
    project: str | os.PathLike,
    results: Mapping[int, object],
    *,
    input_sha256: str | None,
    version: str,
    inputs: Mapping[str, object] | None = None,
) -> Path | None:
    """Write each run's ``results[run]`` beside the project file (replacing what was kept before) and
    the signed index naming them. Each object of ``inputs`` (:func:`input_parts`) is left out of the
    pickles wherever they refer to it, and its fingerprint goes into the index. Without results, an
    earlier folder's index is removed (its pickles are no longer the project's). Returns the folder,
    or None when there was nothing to keep."""
    folder = kept_folder(project)
    if not results:
        if (folder / INDEX).exists():
            (folder / INDEX).unlink()
            _remove_pickles(folder, keep=set())
        return None
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    inputs = dict(inputs or {})
    runs, referred = {}, set()
    for run_id, value in sorted(results.items()):
        data, refers = _dumps(value, inputs)
        referred |= refers
        name = f"run-{int(run_id)}.pickle"
        write_atomic(folder / name, lambda tmp, data=data: tmp.write_bytes(data))
        runs[str(int(run_id))] = {"file": name, "sha256": hashlib.sha256(data).hexdigest(), "inputs": sorted(refers)}
    index = {
        "veil_kept_results": KEPT_VERSION,
        "veil_version": version,
        "input_sha256": input_sha256,
        "inputs": {name: fingerprint(inputs[name]) for name in sorted(referred)},
        "runs": runs,
    }
    signing.sign(index)
    write_text_atomic(folder / INDEX, json.dumps(index, indent=2, sort_keys=True) + "\n")
    _remove_pickles(folder, keep={r["file"] for r in runs.values()})
    return folder


class _LeavingOut(pickle.Pickler):
    """A pickler that writes a reference by name in place of each of ``parts`` (the very objects)."""

    def __init__(self, file, parts: Mapping[str, object]):
        super().__init__(file, protocol=PICKLE_PROTOCOL)
        self.parts = dict(parts)
        self.names = {id(v): k for k, v in self.parts.items()}
        self.referred: set[str] = set()

    def persistent_id(self, obj):
        name = self.names.get(id(obj))
        if name is None or self.parts[name] is not obj:
            return None
        self.referred.add(name)
        return name


class _PuttingBack(pickle.Unpickler):
    """An unpickler that puts ``parts`` back where a pickle refers to them by name."""

    def __init__(self, file, parts: Mapping[str, object]):
        super().__init__(file)
        self.parts = parts

    def persistent_load(self, pid):
        if pid not in self.parts:
            raise pickle.UnpicklingError(f"the kept result refers to input {pid!r}, which is not given")
        return self.parts[pid]


def _dumps(value, parts: Mapping[str, object]) -> tuple[bytes, set[str]]:
    buffer = io.BytesIO()
    pickler = _LeavingOut(buffer, parts)
    pickler.dump(value)
    return buffer.getvalue(), pickler.referred


def fingerprint(value) -> str:
    """The SHA-256 of a left-out input's contents: a frame's column names, types and every cell
    (pandas' own hash of each row), an array's bytes, anything else's pickle."""
    digest = hashlib.sha256()
    if isinstance(value, pd.DataFrame):
        digest.update(repr([(str(c), str(t)) for c, t in value.dtypes.items()]).encode())
        try:
            rows = pd.util.hash_pandas_object(value, index=True).to_numpy()
        except TypeError:  # cells pandas cannot hash (item sets as Python sets): their pickle
            digest.update(pickle.dumps(value, protocol=PICKLE_PROTOCOL))
        else:
            digest.update(rows.tobytes())
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    else:
        digest.update(pickle.dumps(value, protocol=PICKLE_PROTOCOL))
    return digest.hexdigest()


def _remove_pickles(folder: Path, keep: set[str]) -> None:
    for path in folder.glob("run-*.pickle"):
        if path.name not in keep:
            path.unlink(missing_ok=True)


def restore_results(
    project: str | os.PathLike,
    *,
    input_sha256: str | None,
    version: str,
    inputs: Mapping[str, object] | None = None,
) -> Restored:
    """The kept results of the project file ``project`` that can be trusted (see the module's text),
    with ``inputs`` (:func:`input_parts` of the project's data) put back where they were left out;
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
    inputs = dict(inputs or {})
    kept_prints = index.get("inputs") if isinstance(index.get("inputs"), dict) else {}
    matching = {name: name in inputs and fingerprint(inputs[name]) == kept_prints.get(name) for name in kept_prints}
    results, lost, changed = {}, [], []
    for key, entry in index["runs"].items():
        refers = entry.get("inputs", []) if isinstance(entry, dict) else []
        if not all(matching.get(name, False) for name in refers):
            changed.append(key)
            continue
        try:
            data = (folder / str(entry["file"])).read_bytes()
        except (OSError, KeyError, TypeError):
            lost.append(key)
            continue
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            lost.append(key)
            continue
        try:  # signed by this workstation, checked above
            results[int(key)] = _PuttingBack(io.BytesIO(data), inputs).load()
        except Exception:  # a class that no longer loads: that run is run again
            lost.append(key)
    why = []
    if changed:
        why.append(
            f"the records run {_runs(changed)} was made from differ from the data's now: run again to show and "
            "export their releases"
        )
    if lost:
        why.append(f"the kept results of run {_runs(lost)} are missing or damaged: run again to show and export them")
    return Restored(results, "; ".join(why))


def _runs(keys) -> str:
    return ", ".join(f"#{k}" for k in sorted(keys, key=int))
