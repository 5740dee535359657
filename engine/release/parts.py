"""Releases in several files: Anatomy's sensitive table beside its quasi-identifier table.

A release with ``parts`` (e.g. ``{"sensitive": DataFrame(group, SA)}``) is written as the main file
plus one file per part, named after it: ``release.csv`` and ``release.sensitive.csv``. Each part is
written by the same exporter and read back; the privacy model is checked on the release rebuilt
from all the files, and ``veil verify`` rebuilds it from the files alone (a bare file's parts
beside it only when ``--with-parts`` asks: a file shipped beside it never changes its check).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pandas as pd

from ..base.errors import BadInput
from ..base.io import check_regular, sha256_file

GROUP_COLUMN = "group"  # the column joining a part to the main table


def part_path(target: Path, name: str) -> Path:
    """``release.csv`` → ``release.<name>.csv``."""
    target = Path(target)
    return target.with_name(f"{target.stem}.{name}{target.suffix}")


def part_names(release) -> tuple[str, ...]:
    return tuple(release.parts) if release.parts else ()


def write_parts(stage, exporter, release, target: Path) -> dict:
    """Write every part of ``release`` into the export's staging folder (``stage.file(name)`` gives
    the path; the export commits them with the main file or not at all) and return
    ``{name: (frame read back, staged path)}``."""
    written = {}
    for name, frame in (release.parts or {}).items():
        tmp = stage.file(part_path(target, name).name)
        exporter.write(frame, tmp, exporter.params())
        written[name] = (exporter.read_back(tmp), tmp)
    return written


def manifest_entry(target: Path, written: dict) -> dict:
    return {
        name: {"path": part_path(target, name).name, "sha256": sha256_file(tmp)} for name, (_, tmp) in written.items()
    }


def with_parts(release, parts: dict):
    """The release with the given part frames, its groups read from the main frame's group column."""
    if not parts:
        return release
    groups = release.groups
    if GROUP_COLUMN in release.frame.columns:
        groups = pd.factorize(release.frame[GROUP_COLUMN])[0]
    return dataclasses.replace(release, parts=dict(parts), groups=groups)


def as_written(release, frame: pd.DataFrame, parts: dict):
    """``release`` as read back from its files: the frame and parts read back and, for a generalised
    or bucketised table, groups from the files alone (the group column, else equality on the
    written quasi-identifiers), never the in-memory ids, which the shuffle no longer lines up with."""
    from ..model.release import BUCKETISED_TABLE, GENERALISED_TABLE

    read = dataclasses.replace(release, frame=frame)
    if release.kind in (GENERALISED_TABLE, BUCKETISED_TABLE):
        read = dataclasses.replace(read, groups=None)
    return with_parts(read, parts)


KNOWN_PARTS = ("sensitive",)  # the parts a bare file may have beside it (Anatomy's sensitive table)


def parts_beside(path: Path) -> list[str]:
    """The known parts whose ``<stem>.<name><suffix>`` lies beside ``path`` (read only when asked:
    whoever hands over a file must not change its check by shipping a file beside it)."""
    return [n for n in KNOWN_PARTS if os.path.lexists(part_path(Path(path), n))]


def read_parts(exporter, path: Path, names=None) -> dict:
    """The part files beside ``path`` that ``names`` lists (each must exist); none when None."""
    path = Path(path)
    parts = {}
    for name in names or ():
        p = part_path(path, name)
        if not p.exists():
            raise BadInput(f"the release's part {p.name} is missing beside {path.name}")
        check_regular(p)
        parts[name] = exporter.read_back(p)
    return parts
