"""``veil verify``: re-check a release against its privacy models, from its manifest or as a bare file."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from veil.engine.base.errors import BadInput
from veil.engine.base.io import missing_reason

from .arguments import columns, hierarchies, hierarchy_flag, models
from .common import EXIT_OK, EXIT_PRIVACY, Stop

NAME = "verify"
HELP = "re-check a released file against its privacy model"


def add_arguments(v: argparse.ArgumentParser) -> None:
    v.add_argument("path", help="a manifest.json (or its folder), or a released file with --model")
    v.add_argument(
        "--model",
        action="append",
        help="privacy model for a bare file, NAME[:key=value,...] (repeat it to check several)",
    )
    v.add_argument(
        "--public-key",
        help="the signer's public key (a release-signing-key.pub): refuse a manifest this key did not sign",
    )
    v.add_argument(
        "--require-signature",
        action="store_true",
        help="fail (exit 1) unless the manifest is signed by this workstation's key or the one given with "
        "--public-key; without it an unsigned or foreign-signed manifest is said to be so and may pass",
    )
    v.add_argument("--format", help="format of a bare file (default from its extension)")
    v.add_argument(
        "--with-parts",
        action="store_true",
        help="for a bare file: read its parts beside it as one release (a bucketised release's "
        "NAME.sensitive.EXT); never read otherwise",
    )
    v.add_argument("--target", help="the target column of a bare file")
    v.add_argument(
        "--sensitive",
        action="extend",
        type=columns,
        default=[],
        help="sensitive columns of a bare file (comma-separated)",
    )
    v.add_argument(
        "--weight",
        help="for a bare file: its column of survey weights, which the individual-risk model judges groups by",
    )
    v.add_argument(
        "--population", metavar="FILE", help="for a bare file: the population it was drawn from (δ-presence, k-map)"
    )
    v.add_argument(
        "--quasi", action="extend", type=columns, help="quasi-identifier columns (default: all but target/sensitive)"
    )
    v.add_argument(
        "--hierarchy",
        action="append",
        type=hierarchy_flag,
        default=[],
        help="for a bare file: a column's hierarchy as COLUMN=FILE (ARX's CSV format, repeatable): a "
        "sensitive column's for t-closeness with distance=hierarchical or ordered; with "
        "--population, a quasi-identifier's, whose labels the file shows",
    )
    v.add_argument(
        "--executor",
        default="in-process",
        help="where a release in parts is read back and counted (default in-process; spark: on Apache "
        "Spark, with --master)",
    )
    v.add_argument(
        "--master",
        help="the master URL of the executor's cluster, e.g. local[2] or spark://host:7077 "
        "(default: the executor's own)",
    )


@dataclass(frozen=True)
class Options:
    """The flags of ``veil verify``."""

    path: str
    model: list[str] | None
    public_key: str | None
    require_signature: bool
    format: str | None
    with_parts: bool
    target: str | None
    sensitive: list[str]
    weight: str | None
    population: str | None
    quasi: list[str] | None
    hierarchy: list[tuple[str, str]]
    executor: str
    master: str | None


def execute(options: Options, registry, stop: Stop) -> int:
    path = Path(options.path)
    if not path.exists():
        raise BadInput(missing_reason(path, "manifest" if path.suffix == ".json" else "file"))
    if path.is_dir() or path.suffix == ".json":
        result = _verify_manifest(registry, path, options)
    else:
        result = _verify_bare_file(registry, path, options)
    message = result.message
    for word in ("holds:", "fails:"):  # the models' messages start with their verdict; "OK:" already says it
        if message.lower().startswith(word):
            message = message[len(word) :].strip()
    print(("OK: " if result.holds else "FAILED: ") + message)
    return EXIT_OK if result.holds else EXIT_PRIVACY


def _verify_manifest(registry, path: Path, options: Options):
    """A release checked against what its manifest names (and signed by ``--public-key``, when given)."""
    from veil.engine.release.verify import verify_manifest
    from veil.engine.run.executors import make_executor

    if options.model:
        raise BadInput("a manifest names its own privacy model; drop --model or verify the data file")
    if options.population or options.hierarchy:
        raise BadInput(
            "a manifest names its own population and hierarchies; drop --population and --hierarchy "
            "or verify the data file"
        )
    key = None
    if options.public_key is not None:
        from veil.engine.release.signing import read_public_key

        key = read_public_key(_existing(options.public_key, "public key"))
    if options.master and options.executor == "in-process":
        raise BadInput("--master names a cluster's master: give it with --executor spark (or another cluster executor)")
    executor = make_executor(options.executor, registry, **({"master": options.master} if options.master else {}))
    return verify_manifest(registry, path, key, executor, require_signature=options.require_signature)


def _verify_bare_file(registry, path: Path, options: Options):
    """A released file with no manifest, checked against the ``--model`` flags, its columns' roles
    given by ``--target``, ``--sensitive`` and ``--quasi``."""
    from veil.engine import Hierarchy
    from veil.engine.release.parts import part_path, parts_beside, read_parts
    from veil.engine.release.verify import read_released, verify_file

    if not options.model:
        raise BadInput("a bare file needs --model NAME[:key=value,...] to check against")
    if options.public_key is not None or options.require_signature:
        flag = "--public-key" if options.public_key is not None else "--require-signature"
        raise BadInput(f"{flag} checks a manifest's signature; a bare file has none (verify its folder)")
    if not path.exists():
        raise BadInput(missing_reason(path))
    fmt = options.format or _format_of(registry, path)
    frame_cols = list(read_released(registry, fmt, path).columns)
    beside = parts_beside(path)
    if options.with_parts and not beside:
        raise BadInput(f"--with-parts: no part file lies beside {path.name} ({part_path(path, 'sensitive').name})")
    names = beside if options.with_parts else []
    part_cols = [c for part in read_parts(registry.exporter(fmt), path, names).values() for c in part.columns]
    quasi_given = options.quasi or []
    _check_verify_roles(options.target, options.sensitive, quasi_given)
    excluded = {options.target, *options.sensitive, options.weight}
    for col in [options.target, *options.sensitive, *quasi_given, options.weight]:
        if col and col not in frame_cols and (col not in part_cols or col in quasi_given):
            part = part_path(path, "sensitive").name
            hint = (
                ""
                if part_cols or col in quasi_given
                else f"; {part} lies beside it: give --with-parts to read the two as one release"
                if beside
                else (
                    f", and no part file beside it holds it (a bucketised release keeps its sensitive values in "
                    f"{part}, which is not there)"
                )
            )
            raise BadInput(f"{path.name} has no column {col!r}{hint}")
    quasi = quasi_given or [c for c in frame_cols if c not in excluded]
    from veil.engine.model.blanks import OWN_VALUE

    # a record Veil suppressed (* in every quasi-identifier) matches any value, whatever the run's rule
    # on other blanks (docs/reference.md#blanks): own-value is the stricter rule for every other blank
    roles = {"quasi_identifiers": quasi, "target": options.target, "sensitive": options.sensitive, "blanks": OWN_VALUE}
    if options.weight:
        roles["weight"] = options.weight
    sensitive_hierarchies = {}
    for column, file in hierarchies(options.hierarchy).items():
        if column not in options.sensitive and not options.population:
            raise BadInput(
                f"--hierarchy names {column!r}, which is not a sensitive column given by --sensitive "
                f"(a quasi-identifier's hierarchy is read only with --population)"
            )
        if not Path(file).is_file():
            raise BadInput(missing_reason(Path(file), "hierarchy file"))
        if column in options.sensitive:
            sensitive_hierarchies[column] = Hierarchy.from_arx_csv(file, name=column)
    result = verify_file(
        registry,
        path,
        fmt,
        models(options.model),
        roles,
        parts=names,
        hierarchies=sensitive_hierarchies,
        population=_bare_population(registry, options),
    )
    unread = [part_path(path, n).name for n in beside if n not in names]
    if unread:  # never read silently, never left unsaid: whoever hands over a file may ship one beside it
        result = dataclasses.replace(
            result,
            message=f"{result.message}; note: {', '.join(unread)} lies beside it and was not read "
            f"(--with-parts reads it as part of the release)",
        )
    return result


def _bare_population(registry, options: Options):
    """The population ``veil verify`` counts a bare file's groups in (None without --population)."""
    from veil.engine.data.datasource import DataSource
    from veil.engine.data.hierarchy import Hierarchy
    from veil.engine.data.population import Population

    if not options.population:
        return None
    if not Path(options.population).is_file():
        raise BadInput(missing_reason(Path(options.population)))
    table = DataSource(path=options.population).load(registry)
    quasi_hierarchies = {
        c: Hierarchy.from_arx_csv(f, name=c)
        for c, f in hierarchies(options.hierarchy).items()
        if c not in options.sensitive
    }
    return Population(table.frame, options.population, table.sha256, quasi_hierarchies)


def _existing(text: str, what: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise BadInput(missing_reason(path, what))
    return path


def _check_verify_roles(target, sensitive, quasi) -> None:
    """A column named by two of --target, --sensitive and --quasi is refused, naming both."""
    seen: dict[str, str] = {}
    for role, names in (("target", [target] if target else []), ("sensitive", sensitive), ("quasi", quasi)):
        for column in names:
            if seen.get(column, role) != role:
                raise BadInput(
                    f"column {column!r} is given two roles, --{seen[column]} and --{role}; give each column one role"
                )
            seen[column] = role


def _format_of(registry, path: Path) -> str:
    ext = path.suffix.lstrip(".").lower()
    for name in registry.names("exporter"):
        if registry.get("exporter", name).extension == ext:
            return name
    raise BadInput(f"cannot tell the format of {path.name}; give --format")
