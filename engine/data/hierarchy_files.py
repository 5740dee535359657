"""Hierarchy files matched to columns by name, for loading a folder of them at once: ARX writes one
file per attribute, ``<dataset>_hierarchy_<column>.csv`` (its ``adult_hierarchy_age.csv``), and a
plain ``<column>.csv`` names its column too. Names are compared ignoring case and treating ``-``,
``_``, ``.`` and spaces alike, so ``marital-status`` finds ``adult_hierarchy_marital_status.csv``.

The desktop's "Load hierarchies from a folder…", ``veil run --hierarchies DIR`` and a data
source's ``"hierarchy_folder"`` all read a folder with :func:`read_hierarchy_folder`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import BadInput
from .hierarchy import Hierarchy

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


@dataclass(frozen=True)
class FolderHierarchy:
    """One matched column: its file, the hierarchy read from it (None when it cannot be used) and
    why not."""

    column: str
    path: Path
    hierarchy: Hierarchy | None
    problem: str = ""

    @property
    def levels(self) -> str:
        return "" if self.hierarchy is None else str(self.hierarchy.height)


@dataclass(frozen=True)
class FolderHierarchies:
    """A folder read for a table: the match, a row per matched column (read and tried on its
    values), and the matched columns whose hierarchy is given otherwise (their file is not read)."""

    match: HierarchyFiles
    rows: tuple[FolderHierarchy, ...] = ()
    given: dict[str, Path] = field(default_factory=dict)

    def usable(self) -> dict[str, Hierarchy]:
        """Column → hierarchy, for each matched file that can be attached."""
        return {r.column: r.hierarchy for r in self.rows if r.hierarchy is not None}

    def describe(self) -> list[str]:
        """What was matched and what was not used, a line each."""
        lines = [f"{r.column} ← {r.path.name} (levels 0–{r.hierarchy.height})" for r in self.rows if r.hierarchy]
        lines += [f"{r.column}: {r.path.name} not used: {r.problem}" for r in self.rows if r.hierarchy is None]
        lines += [f"{c}: {p.name} not used: its hierarchy is given by name" for c, p in self.given.items()]
        for column, others in self.match.passed_over.items():
            taken = self.match.matched[column].name
            lines.append(f"{column}: {', '.join(p.name for p in others)} not used: {taken} is taken")
        if self.match.unmatched:
            lines.append(f"not used, naming no column: {', '.join(p.name for p in self.match.unmatched)}")
        return lines


def read_hierarchy_folder(table, folder: str | Path, skip=(), given=()) -> FolderHierarchies:
    """Each column of ``table`` a file in ``folder`` names (:func:`match_hierarchy_files`), read and
    tried on the column's values (every value must be a leaf); columns in ``given`` have a hierarchy
    named otherwise, and their file is left unread."""
    match = match_hierarchy_files(folder, list(table.schema.names), skip)
    rows, passed = [], {}
    for column, path in match.matched.items():
        if column in given:
            passed[column] = path
            continue
        try:
            hierarchy = Hierarchy.from_arx_csv(path, name=column)
            table.with_hierarchy(column, hierarchy)  # BadInput names a value that is no leaf
        except BadInput as exc:
            rows.append(FolderHierarchy(column, path, None, str(exc)))
            continue
        rows.append(FolderHierarchy(column, path, hierarchy))
    return FolderHierarchies(match, tuple(rows), passed)
