"""Hierarchy files matched to columns by name, for loading a folder of them at once: ARX writes one
file per attribute, ``<dataset>_hierarchy_<column>.csv`` (its ``adult_hierarchy_age.csv``), and a
plain ``<column>.csv`` names its column too. Names are compared ignoring case and treating ``-``,
``_``, ``.`` and spaces alike, so ``marital-status`` finds ``adult_hierarchy_marital_status.csv``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import BadInput

ARX_INFIX = "_hierarchy_"  # ARX's export: <dataset>_hierarchy_<attribute>.csv
SUFFIXES = (".csv", ".txt")


def _key(name: str) -> str:
    return re.sub(r"[\s\-_.]+", "_", name.strip().lower())


@dataclass(frozen=True)
class HierarchyFiles:
    """What a folder holds for a table's columns: each matched column's file, the files matching
    no column, and for a column two files name, the one taken and the others (an ARX-named file
    wins over a plain one)."""

    folder: Path
    matched: dict[str, Path] = field(default_factory=dict)
    unmatched: tuple[Path, ...] = ()
    passed_over: dict[str, tuple[Path, ...]] = field(default_factory=dict)

    def describe(self) -> str:
        """The match in words, one line per column and a line for the files left aside."""
        lines = [f"{column} ← {path.name}" for column, path in self.matched.items()]
        for column, others in self.passed_over.items():
            lines.append(f"{column}: also {', '.join(p.name for p in others)}, not used")
        if self.unmatched:
            lines.append(f"no column for {', '.join(p.name for p in self.unmatched)}")
        return "\n".join(lines)


def match_hierarchy_files(folder: str | Path, columns, skip=()) -> HierarchyFiles:
    """The hierarchy files in ``folder`` (not its subfolders) matched to ``columns`` by name;
    ``skip``: files to leave out (the data file itself, when it lies beside its hierarchies).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("adult_hierarchy_age.csv", "sex.csv", "notes.csv"): _ = (d / name).write_text("a;*")
    >>> sorted(match_hierarchy_files(d, ["age", "sex", "race"]).matched)
    ['age', 'sex']
    """
    where = Path(folder)
    if not where.is_dir():
        raise BadInput(f"{where} is not a folder")
    by_key = {_key(c): c for c in columns}
    found: dict[str, list[tuple[int, Path]]] = {}
    unmatched = []
    skipped = {Path(p).resolve() for p in skip}
    files = [p for p in where.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES and p.resolve() not in skipped]
    for path in sorted(files):
        stem = path.stem
        lowered = stem.lower()
        column, rank = None, 1
        if ARX_INFIX in lowered:  # ARX's name: what follows the last _hierarchy_ is the attribute
            column, rank = by_key.get(_key(stem[lowered.rindex(ARX_INFIX) + len(ARX_INFIX) :])), 0
        if column is None:
            column, rank = by_key.get(_key(stem)), 1
        if column is None:
            unmatched.append(path)
        else:
            found.setdefault(column, []).append((rank, path))
    matched, passed_over = {}, {}
    for column in columns:
        if column in found:
            ranked = sorted(found[column], key=lambda rp: (rp[0], rp[1].name))
            matched[column] = ranked[0][1]
            if len(ranked) > 1:
                passed_over[column] = tuple(p for _, p in ranked[1:])
    return HierarchyFiles(where, matched, tuple(unmatched), passed_over)
