"""Verifying a written release against its manifest: every file's hash, the release re-read from
its own file and judged again by the privacy model(s) the manifest claims (``veil verify``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..base.errors import BadInput
from ..base.io import check_regular, sha256_file
from ..data.hierarchy import Hierarchy
from ..data.datasource import DataSource
from ..data.population import Population
from ..data.table import Schema
from ..model.blanks import BLANK_WORDS
from ..model.release import FEATURE_WEIGHTS, Verdict, describe_failures
from ..run.runs import PluginCall, bind_model
from .assessment import release_as_written
from .manifest import MANIFEST_NAME, REPORT_FILES, manifest_digest, read_binding, read_manifest
from .parts import KNOWN_PARTS, read_parts, with_parts
from .signing import PublicKey, workstation_key
from .signing import check as check_signature
from .staging import leftovers


@dataclass(frozen=True)
class Verification:
    holds: bool
    message: str
    verdict: Verdict | None
    sha256_matches: bool | None


def read_released(registry, fmt: str, path: str | os.PathLike, table: str | None = None) -> pd.DataFrame:
    """A released file read back by the exporter of ``fmt`` (``table``: the release is that table of
    the database at ``path``); BadInput when it is damaged or not that format."""
    exporter = registry.exporter(fmt)
    check_regular(path)  # a FIFO would block the reader, a device would never end
    try:
        if table is not None:
            return exporter.read_table(Path(path), table)
        return exporter.read_back(Path(path))
    except (BadInput, MemoryError, OSError):
        raise
    except Exception as exc:  # each format's reader fails its own way (ArrowInvalid, BadZipFile, ParserError…)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise BadInput(f"{Path(path).name} cannot be read as {fmt}: {reason}") from None


def read_output(registry, manifest: dict) -> pd.DataFrame:
    """The release a manifest (as :func:`~veil.engine.read_manifest` returns it) describes, read
    back: its file beside the manifest, or its table in a database."""
    out = manifest["output"]
    fmt = out.get("format") or registry.preferred("exporter")
    return read_released(registry, fmt, Path(manifest["_dir"]) / out["path"], out.get("table"))


def table_problem(registry, out: dict) -> str:
    """What is wrong with a release written as a table of a database ("" when its content has the
    SHA-256 its manifest records): the database or the table gone, or the content changed."""
    path, table = Path(out["path"]), out["table"]
    if not path.is_file():
        return f"the database {path} holding the release is missing"
    check_regular(path)
    exporter = registry.exporter(out.get("format") or registry.preferred("exporter"))
    try:
        digest = exporter.table_sha256(path, table)
    except BadInput as exc:
        return f"the release's table is missing: {exc}"
    if digest != out.get("sha256"):
        return (
            f"the table {table!r} of {path.name} was changed after export: the SHA-256 of its content differs "
            f"from the manifest"
        )
    return ""


def verify_file(
    registry,
    path: str | os.PathLike,
    fmt: str,
    model_call,
    roles: dict,
    parts=None,
    hierarchies=None,
    population=None,
    table: str | None = None,
) -> Verification:
    """Re-check a released file, read from disk, against a privacy model (a PluginCall) or several
    (a list of them: every one must hold). ``parts``: the names of the release's further files
    (Anatomy's sensitive table), found beside it; ``hierarchies``: those declared for sensitive
    columns (column → Hierarchy), for a model whose distance follows one; ``population``: the
    population the groups are counted in (δ-presence, k-map); ``table``: the release is that table of
    the database at ``path``.

    Shares nothing with the method that made the file beyond the model's own check: the file is
    read back by its exporter and the roles come from the caller (the manifest or flags).
    """
    frame = read_released(registry, fmt, path, table)
    found = read_parts(registry.exporter(fmt), Path(path), parts) if table is None else {}
    release = with_parts(release_as_written(frame, roles, found, hierarchies), found)
    if population is not None:  # the population models count each group's matches in it
        release = dataclasses.replace(release, population=population)
    missing = [c for c in release.quasi_identifiers if c not in frame.columns]
    if missing:
        raise BadInput(f"the file lacks the quasi-identifier column {missing[0]!r}")
    model = bind_model(registry, model_call)
    verdict = model.check(release)
    message = verdict.message
    if release.blanks is not None and release.blank_codes() is not None:  # say how groups were counted
        message += f"; groups counted by the {release.blanks} rule: {BLANK_WORDS[release.blanks]}"
    if not verdict.holds:
        message += f"; failing records: {describe_failures(verdict, release)}"
    return Verification(verdict.holds, message, verdict, None)


def verify_manifest(
    registry,
    manifest_path: str | os.PathLike,
    public_key: PublicKey | None = None,
    executor=None,
    require_signature: bool = False,
) -> Verification:
    """Re-check the export a manifest describes, as a whole: its signature (whose key made it: this
    workstation's, ``public_key``, or another; any edit since fails), every member file (the release
    by its SHA-256, each report by the manifest hash it carries), what a killed export left in the
    folder, then the privacy model on the released file.

    A member of another export (a report left by an earlier export, files of a commit that a kill
    cut short) is named as an *incomplete export*, not as a change: nobody tampered with it.
    ``require_signature``: an unsigned manifest, or one signed by a key that is neither this
    workstation's nor ``public_key``, fails instead of being said to be so.

    A release in parts (:mod:`.partitioned`) is checked part by part, its groups counted on
    ``executor`` when it counts tables (a cluster's), else here a chunk at a time.
    """
    given = Path(manifest_path)
    notes = []
    for item in leftovers(given if given.is_dir() else given.parent):
        if item.mixed:  # even before the manifest: a half-moved export may have none yet
            return Verification(False, _interrupted(item), None, None)
        notes.append(item.describe())
    if given.is_dir() and notes and not (given / MANIFEST_NAME).exists() and not (given / MANIFEST_NAME).is_symlink():
        raise BadInput(
            f"{given} holds no manifest: {'; '.join(notes)}; export into it again (the next export "
            f"removes what was left), or remove what was left to use the folder"
        )
    manifest = read_manifest(manifest_path)
    folder = Path(manifest["_dir"])
    out = manifest["output"]
    path = folder / out["path"]
    signed, trusted = _signature(manifest, public_key, require_signature)
    if not trusted:
        return Verification(False, signed, None, None)
    strays = stray_files(folder, manifest)
    if strays:  # whatever reads the folder's parts (Spark does) would take them in
        return Verification(False, "; ".join(strays), None, None)
    if executor is not None and getattr(executor, "name", "in-process") != "in-process" and "parts_of" not in out:
        raise BadInput(
            f"--executor {executor.name} counts a release in parts; {folder} holds a release of one file, "
            f"checked here: drop --executor"
        )
    if "parts_of" in out:
        from .part_counts import verify_parts

        note = "".join(f"; note: {n}" for n in notes)
        holds, message = verify_parts(registry, manifest, executor)
        problems = member_problems(folder, manifest) if holds else []  # the reports, by the manifest they carry
        if problems:
            return Verification(False, "; ".join(problems) + note, None, None)
        return Verification(holds, f"{message}; {signed}" + note, None, None)
    problems = member_problems(folder, manifest)
    matches = None
    if out.get("table") is not None:  # a table of a database: its content's digest
        problem = table_problem(registry, out)
        matches = not problem
        if problem:
            problems.insert(0, problem)
    elif path.exists():
        matches = sha256_file(path) == out.get("sha256")
        if not matches:
            problems.insert(0, f"{path.name} was changed after export: its SHA-256 differs from the manifest")
    note = "".join(f"; note: {n}" for n in notes)
    if problems:
        return Verification(False, "; ".join(problems) + note, None, matches)
    pm = manifest["privacy_model"]
    if not pm.get("name"):
        return Verification(
            True, f"the files match their manifest; {_unchecked_claim(manifest)}; {signed}" + note, None, True
        )
    first = PluginCall(pm["name"], pm.get("params") or {})
    bind_model(registry, first)  # an unknown model or a parameter it refuses is bad input, not tampering
    models = [PluginCall.parse(m) for m in manifest.get("privacy_models") or []] or [first]
    if models[0] != first:
        return Verification(
            False,
            "the manifest's privacy_model differs from the first of its privacy_models: it was edited after export",
            None,
            True,
        )
    declared = manifest.get("sensitive_hierarchies") or {}
    hierarchies = {c: Hierarchy.from_dict(h) for c, h in declared.items()}
    population, problem = manifest_population(registry, manifest)
    if problem:
        return Verification(False, problem + note, None, True)
    result = verify_file(
        registry,
        path,
        out.get("format") or registry.preferred("exporter"),
        models,
        manifest["roles"],
        parts=list(out.get("parts") or {}),
        hierarchies=hierarchies,
        population=population,
        table=out.get("table"),
    )
    return Verification(result.holds, f"{result.message}; {signed}" + note, result.verdict, True)


def manifest_population(registry, manifest: dict):
    """(the population a manifest's run counted in, or None; what is wrong with it, or ""): the file
    read again with the data's read options, its SHA-256 checked, the data's hierarchies attached."""
    entry = manifest.get("population")
    if not entry:
        return None, ""
    path = Path(entry.get("path") or "")
    if not path.is_file():
        return None, f"the population {path} the release was judged against is missing"
    if entry.get("sha256") and sha256_file(path) != entry["sha256"]:
        return None, f"the population {path.name} has changed since the export: its SHA-256 differs from the manifest"
    read = dict((manifest.get("input") or {}).get("read") or {})
    source = DataSource.from_dict({k: v for k, v in read.items() if k not in ("hierarchies", "append", "columns")})
    table = dataclasses.replace(source, path=str(path), demo=False, roles={}).load(registry)
    frame = table.frame.drop(columns=[c for c in [entry.get("subset_column")] if c and c in table.frame.columns])
    schema = Schema.from_dict((manifest.get("input") or {}).get("schema") or [])
    hierarchies = {c.name: c.hierarchy for c in schema.columns if c.hierarchy is not None}
    recorded = entry.get("hierarchies") if isinstance(entry.get("hierarchies"), dict) else {}
    hierarchies |= {c: Hierarchy.from_dict(h).with_name(c) for c, h in recorded.items()}  # generated ones too
    return Population(frame, str(path), entry.get("sha256"), hierarchies, entry.get("subset_column")), ""


def _signature(manifest: dict, public_key: PublicKey | None, required: bool = False) -> tuple[str, bool]:
    """Whose key signed the manifest, in words, and whether that is acceptable: an edit since it was
    signed never is, nor, when ``public_key`` is given, a manifest that key did not sign, nor, when
    ``required``, a manifest unsigned or signed by a key neither this workstation's nor given."""
    result = check_signature(manifest)
    if result.state == "invalid":
        return result.why, False
    if result.state == "unsigned":
        if public_key is not None:
            return (
                f"the manifest is not signed, so the given key ({public_key.fingerprint}) cannot have signed it"
            ), False
        if required:
            return "the manifest is not signed, and --require-signature asks for a signature", False
        return "the manifest is not signed (made by a Veil that did not sign, or its signature was taken out)", True
    if public_key is not None:
        if public_key.raw != result.key.raw:
            return (
                f"the manifest was signed by the key {result.key.fingerprint}, not by the given key "
                f"{public_key.fingerprint}"
            ), False
        return f"signed by the given key {public_key.fingerprint}", True
    mine = workstation_key()
    if mine is not None and mine.raw == result.key.raw:
        return f"signed by this workstation's key {mine.fingerprint}", True
    if required:
        return (
            f"the manifest was signed by the key {result.key.fingerprint}, which is not this workstation's, and "
            f"--require-signature accepts only this workstation's key or the one given with --public-key"
        ), False
    return (
        f"signed by the key {result.key.fingerprint}, which is not this workstation's (give its public key "
        f"with --public-key to check whose it is)"
    ), True


def stray_files(folder: Path, manifest: dict) -> list[str]:
    """Files named like the release's own (``release.EXT``, ``release.part-N.EXT``,
    ``release.sensitive.EXT``: the release in another format, a part, a part file) that its manifest
    does not list, in words: a reader of the folder's parts would take them in."""
    out = manifest["output"]
    if out.get("table") is not None:  # the release is a table of a database, not a file of the folder
        return []
    listed = set((manifest.get("export") or {}).get("files") or {}) | {out.get("path")}
    for entry in [*(out.get("parts_of") or []), *((out.get("parts") or {}).values())]:
        if isinstance(entry, dict):
            listed.add(entry.get("path"))
    stem = str(out.get("path") or "").split(".")[0]
    if not stem:
        return []
    named = re.compile(re.escape(stem) + r"(\.part-\d+|" + "".join(rf"|\.{p}" for p in KNOWN_PARTS) + r")\.[^.]+")
    strays = sorted(n for n in os.listdir(folder) if named.fullmatch(n) and n not in listed)
    return [
        f"{name} lies beside the release but is not part of the export (its manifest does not list it): "
        f"whatever reads the folder's files would take it in; remove it"
        for name in strays
    ]


def member_problems(folder: Path, manifest: dict) -> list[str]:
    """What is missing from the export or belongs to another one, in words."""

    out = manifest["output"]
    files = dict((manifest.get("export") or {}).get("files") or {})
    if isinstance(out.get("parts_of"), list):  # a release in parts: verify_parts checks every part
        for part in out["parts_of"]:
            files.pop(part.get("path") if isinstance(part, dict) else None, None)
    elif out.get("table") is None:  # a table of a database is checked by its content's digest
        files.setdefault(out["path"], out.get("sha256"))
    ours = manifest_digest(manifest) if manifest.get("export") else None
    data_files = {str(e.get("path")) for e in (out.get("parts") or {}).values() if isinstance(e, dict)}
    problems = []
    for name, digest in files.items():
        p = folder / name
        if not p.exists():
            problems.append(f"incomplete export: {name} is missing")
            continue
        check_regular(p)  # BadInput for a FIFO, a socket or a device: never opened
        if name in data_files:  # a further part of the release (Anatomy's sensitive table)
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
        check_regular(p)
        carried = read_binding(p)
        if not ours or carried.get("manifest-sha256") != ours:
            problems.append(f"incomplete export: {name} belongs to {_whose(carried, manifest)} export")
    return problems


def _whose(carried: dict, manifest: dict) -> str:
    """ "an earlier", "a later" or "another", comparing the export times (same ISO format, UTC)."""
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
    return (
        f"incomplete export: {item.describe()}: {', '.join(parts)}; the next export into this folder puts the "
        f"earlier files back first (or export again)"
    )


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _unchecked_claim(manifest: dict) -> str:
    """What a release without a record-level privacy model claims, in words for ``veil verify``."""
    budget = manifest.get("privacy_budget") or {}
    weights = manifest.get("release_kind") == FEATURE_WEIGHTS
    if budget.get("epsilon_spent") is not None:
        what = "feature weights claim" if weights else "release claims"
        return (
            f"the {what} ε = {budget['epsilon_spent']:g} differential privacy under the assumptions in the "
            f"manifest, which cannot be re-checked from the file" + ("; it holds no records" if weights else "")
        )
    if weights:
        return "a feature-weights release holds no records and makes no privacy claim"
    return "the release makes no privacy claim"
