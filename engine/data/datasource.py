"""Where a run's data comes from: a file with read options and column roles, or the demo data."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.errors import BadInput, printable
from ..base.io import ImportOptions, read_data, sha256_file
from .hierarchy import Hierarchy, hierarchy_from_spec, is_hierarchy_spec
from .hierarchy_files import FolderHierarchies, read_hierarchy_folder
from .missing import FILL_CHOICES, fill_missing
from .table import Kind, Role, Schema, Table, cell_codes_taken
from ..base.validate import get

DEMO_CSV = "demo_hospital.csv"
DEMO_SCHEMA = "demo_hospital.json"


def demo_path() -> Path:
    return Path(str(resources.files("veil.resources") / DEMO_CSV))


def load_demo() -> Table:
    """The bundled synthetic hospital-admissions table with its roles."""
    import pandas as pd

    path = demo_path()
    if not path.exists():
        raise BadInput("the demo data is missing; run `make demo-data` (scripts/make_demo_data.py)")
    meta = json.loads((path.parent / DEMO_SCHEMA).read_text(encoding="utf-8"))
    frame = pd.read_csv(path)
    schema = Schema.from_dict(meta["columns"])
    return Table.from_frame(frame, schema, source=str(path), sha256=sha256_file(path))


@dataclass(frozen=True)
class DataSource:
    """A file (or the demo data) plus how to read it and the roles of its columns."""

    path: str | None = None
    demo: bool = False
    names: tuple[str, ...] | None = None
    fmt: str | None = None
    delimiter: str | None = None
    encoding: str | None = None
    header: bool | None = None
    skip_rows: int = 0
    sheet: str | None = None
    query: str | None = None  # a database's rows as a read-only SELECT gives them (instead of a table)
    roles: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)
    append: tuple = ()  # further DataSources with the same columns, their rows appended (adult.data + adult.test)
    missing: tuple[str, ...] = ()  # cell texts that mean "missing" (UCI's "?")
    drop_missing: bool = False  # drop every record with a missing value in any column (before `columns`)
    fill_missing: str | None = None  # or fill them: "value" or "impute" (veil.engine.data.missing)
    columns: tuple[str, ...] | None = None  # keep only these columns, in this order
    hierarchies: dict = field(
        default_factory=dict
    )  # column -> ARX hierarchy file, or a spec generating one (intervals:width=10)
    # a folder of hierarchy files matched to the columns by name (ARX's <data>_hierarchy_<column>.csv
    # or <column>.csv); a column ``hierarchies`` names takes that one instead
    hierarchy_folder: str | None = None
    recode: dict = field(default_factory=dict)  # column -> {cell text: new text} (adult.test's "<=50K." is "<=50K")
    # the population the data was drawn from (δ-presence, k-map), read with the same options; with
    # subset_column and no path, that column of the population marks the data's records
    population: str | None = None
    subset_column: str | None = None

    def options(self) -> ImportOptions:
        return ImportOptions(
            encoding=self.encoding,
            delimiter=self.delimiter,
            header=self.header,
            names=self.names,
            fmt=self.fmt,
            skip_rows=self.skip_rows,
            sheet=self.sheet,
            query=self.query,
            drop_missing=self.drop_missing,
            fill_missing=self.fill_missing,
        )

    @classmethod
    def from_options(cls, path: str | Path, options: ImportOptions) -> DataSource:
        """A file read with every one of ``options`` (nothing chosen in a dialog is dropped)."""
        return cls(
            path=str(path),
            names=options.names,
            fmt=options.fmt,
            delimiter=options.delimiter,
            encoding=options.encoding,
            header=options.header,
            skip_rows=options.skip_rows,
            sheet=options.sheet,
            query=options.query,
            drop_missing=options.drop_missing,
            fill_missing=options.fill_missing,
        )

    def load(self, registry):
        if self.population or self.subset_column:
            if not self.population:
                raise BadInput(
                    "a subset column marks the data's records in a population: name the population's file too"
                )
            from .population import load_with_population

            bare = dataclasses.replace(self, population=None, subset_column=None)
            return load_with_population(registry, bare, self.population, self.subset_column)
        if self.demo:
            data = load_demo()
        elif self.path:
            data = read_data(registry, self.path, self.options())
        else:
            raise BadInput("no data: give a file or choose the demo data")
        if self.drop_missing and self.fill_missing:
            raise BadInput("records with a missing value are either dropped or filled, not both")
        if self.fill_missing is not None and self.fill_missing not in FILL_CHOICES:
            raise BadInput(f"missing values are filled by one of {', '.join(FILL_CHOICES)}, not {self.fill_missing!r}")
        if isinstance(data, Table) and (
            self.append or self.missing or self.drop_missing or self.fill_missing or self.columns or self.recode
        ):
            data = self._reshaped(registry, data)
        if isinstance(data, Table):
            for column, path in self.hierarchies.items():
                if column not in data.frame.columns:
                    raise BadInput(
                        f"a hierarchy is given for {column!r}, but the data has no such column; columns "
                        f"are {', '.join(map(str, data.frame.columns))}"
                    )
                hierarchy = (
                    hierarchy_from_spec(path, data.frame[column], name=column)
                    if is_hierarchy_spec(path)
                    else Hierarchy.from_arx_csv(path, name=column)
                )
                data = data.with_hierarchy(column, hierarchy)
            found = self.folder_hierarchies(data)
            for column, hierarchy in (found.usable() if found is not None else {}).items():
                data = data.with_hierarchy(column, hierarchy)
            if self.kinds:
                _check_kinds(data.frame, self.kinds)
                data = Table(data.frame, data.schema, data.source, data.sha256, dict(data.meta)).with_kinds(self.kinds)
            if self.roles:
                data = data.with_roles(self.roles)
        elif self.roles:
            raise BadInput("transaction data has no columns to give roles to")
        return data

    def folder_hierarchies(self, table: Table) -> FolderHierarchies | None:
        """The hierarchy folder read for ``table``'s columns (None without one): what is attached,
        and what is not used and why (:meth:`FolderHierarchies.describe`)."""
        if not self.hierarchy_folder:
            return None
        skip = [f for f in (self.path, self.population) if f]
        return read_hierarchy_folder(table, self.hierarchy_folder, skip, given=set(self.hierarchies))

    def _reshaped(self, registry, table: Table) -> Table:
        """The table with the appended files' rows, values recoded, missing values dropped or filled and
        columns kept."""
        frames, hashes = [table.frame], [table.sha256 or ""]
        for extra in self.append:
            names = self.names or (tuple(table.frame.columns) if extra.header is False else None)
            extra = extra if extra.names or not names else dataclasses.replace(extra, names=names)
            more = extra.load(registry)
            if not isinstance(more, Table) or list(more.frame.columns) != list(table.frame.columns):
                raise BadInput(
                    f"{extra.path}: its columns differ from {self.path}'s; appended files need the same columns"
                )
            frames.append(more.frame)
            hashes.append(more.sha256 or "")
        frame = pd.concat(frames, ignore_index=True)
        for column, mapping in self.recode.items():
            if column not in frame.columns:
                raise BadInput(f"recode: no column named {column!r}; columns are {', '.join(frame.columns)}")
            frame[column] = frame[column].replace(mapping)
        if self.missing:
            frame = frame.mask(frame.isin(list(self.missing)))
        rows = np.arange(len(frame))  # each row's place in the first file (a labelled file's missing codes)
        if self.drop_missing:
            complete = frame.notna().all(axis=1).to_numpy()
            frame, rows = frame[complete].reset_index(drop=True), rows[complete]
        elif self.fill_missing:  # a blank is never a sensitive value: those columns keep their blanks
            sensitive = [c for c, r in self.roles.items() if str(getattr(r, "value", r)) == "sensitive"]
            frame = fill_missing(frame, self.fill_missing, keep=sensitive)
        if self.columns:
            missing_cols = [c for c in self.columns if c not in frame.columns]
            if missing_cols:
                raise BadInput(f"no column named {missing_cols[0]!r}; columns are {', '.join(frame.columns)}")
            frame = frame[list(self.columns)]
        sha = table.sha256 if len(hashes) == 1 else hashlib.sha256("\n".join(hashes).encode()).hexdigest()
        reshaped = Table.from_frame(frame, source=table.source, sha256=sha)
        # a labelled file's labels stay, its cells' missing codes on the rows they belong to
        return dataclasses.replace(reshaped, meta=cell_codes_taken(dict(table.meta), rows))

    def files(self) -> tuple[str, ...]:
        """Every file this source reads (the data, the files appended to it, the hierarchy files):
        what an export must never write over."""
        found = [self.path] if self.path and not self.demo else []
        for extra in self.append:
            found += extra.files()
        found += [f for f in self.hierarchies.values() if f and not is_hierarchy_spec(f)]
        if self.population:
            found.append(self.population)
        return tuple(found)

    def to_dict(self) -> dict:
        d = {
            "path": self.path,
            "demo": self.demo,
            "names": list(self.names) if self.names else None,
            "fmt": self.fmt,
            "delimiter": self.delimiter,
            "encoding": self.encoding,
            "header": self.header,
            "skip_rows": self.skip_rows or None,
            "sheet": self.sheet,
            "query": self.query,
            "roles": dict(self.roles),
            "kinds": dict(self.kinds),
            "append": [a.to_dict() for a in self.append] or None,
            "missing": list(self.missing) or None,
            "drop_missing": self.drop_missing or None,
            "fill_missing": self.fill_missing,
            "columns": list(self.columns) if self.columns else None,
            "hierarchies": dict(self.hierarchies),
            "hierarchy_folder": self.hierarchy_folder,
            "recode": {c: dict(m) for c, m in self.recode.items()},
            "population": {"path": self.population, "subset_column": self.subset_column} if self.population else None,
        }
        kept = {k: v for k, v in d.items() if v is not None and v != {} and v is not False}
        if self.header is False:
            kept["header"] = False
        return kept | {"demo": self.demo}

    @classmethod
    def from_dict(cls, d: Mapping, base: Path | None = None) -> DataSource:
        if not isinstance(d, Mapping):
            raise BadInput(f"'data' must be an object such as {{\"path\": \"file.csv\"}}, got {d!r}")
        path = d.get("path")
        if path is not None and not isinstance(path, str):
            raise BadInput(f"the data path must be text, got {path!r}")
        if path and base is not None and not Path(path).is_absolute():
            path = str((base / path).resolve())
        roles = _roles(d)
        kinds = dict(get(d, "kinds", dict, {}, where="data"))
        for k in kinds.values():
            Kind(k) if k in {x.value for x in Kind} else _bad_kind(k)
        names = _text_list(d, "names")
        append = get(d, "append", list, [], where="data")
        hierarchies = get(d, "hierarchies", dict, {}, where="data")
        for column, file in hierarchies.items():
            if not isinstance(file, str):
                raise BadInput(f"the hierarchy of {column!r} must be a file name, got {file!r}")
        hierarchies = {
            c: str((base / f).resolve())
            if base is not None and not Path(f).is_absolute() and not is_hierarchy_spec(f)
            else f
            for c, f in hierarchies.items()
        }
        folder = get(d, "hierarchy_folder", str, where="data") or None
        if folder and base is not None and not Path(folder).is_absolute():
            folder = str((base / folder).resolve())
        missing = get(d, "missing", list, [], where="data")
        recode = get(d, "recode", dict, {}, where="data")
        for column, mapping in recode.items():
            if not isinstance(mapping, Mapping) or not all(isinstance(v, str) for v in (*mapping, *mapping.values())):
                raise BadInput(
                    f"recode of {column!r} must map cell texts to texts, such as "
                    f"{{\"<=50K.\": \"<=50K\"}}, got {mapping!r}"
                )
        columns = get(d, "columns", list, None, where="data")
        population, subset_column = _population(d, base)
        return cls(
            path=path,
            demo=bool(get(d, "demo", bool, False, where="data")),
            names=tuple(names) if names else None,
            fmt=get(d, "fmt", str, where="data"),
            delimiter=get(d, "delimiter", str, where="data"),
            encoding=get(d, "encoding", str, where="data"),
            header=get(d, "header", bool, where="data"),
            skip_rows=_skip_rows(d.get("skip_rows")),
            sheet=_sheet(d.get("sheet")),
            query=get(d, "query", str, where="data"),
            roles=roles,
            kinds=kinds,
            append=tuple(cls.from_dict(a, base) for a in append),
            missing=tuple(str(m) for m in missing),
            drop_missing=bool(get(d, "drop_missing", bool, False, where="data")),
            fill_missing=get(d, "fill_missing", str, where="data"),
            columns=tuple(str(c) for c in columns) if columns else None,
            hierarchies=hierarchies,
            hierarchy_folder=folder,
            recode={str(c): dict(m) for c, m in recode.items()},
            population=population,
            subset_column=subset_column,
        )


def _population(d: Mapping, base: Path | None) -> tuple[str | None, str | None]:
    """The data section's ``"population": {"path": FILE, "subset_column": NAME}`` (a bare file name
    is the path), the path resolved against ``base`` as the data's is."""
    given = d.get("population")
    if given is None:
        return None, None
    if isinstance(given, str):
        given = {"path": given}
    if not isinstance(given, Mapping):
        raise BadInput(f"'population' must be an object such as {{\"path\": \"population.csv\"}}, got {given!r}")
    unknown = sorted(set(given) - {"path", "subset_column"})
    if unknown:
        raise BadInput(f"population: unknown key {unknown[0]!r}; a population takes \"path\" and \"subset_column\"")
    path = get(given, "path", str, where="population")
    if not path:
        raise BadInput("population: give its file as \"path\"")
    if base is not None and not Path(path).is_absolute():
        path = str((base / path).resolve())
    return path, get(given, "subset_column", str, where="population") or None


def _text_list(d: Mapping, key: str) -> list[str]:
    """``d[key]`` as a list of column names (one name may be given as text)."""
    value = get(d, key, (list, str), [], where="data")
    items = [value] if isinstance(value, str) else value
    for item in items:
        if not isinstance(item, str):
            raise BadInput(f"data: {key!r} must list column names as text, got {item!r}")
    return list(items)


def _roles(d: Mapping) -> dict:
    """Column → role from ``roles`` and the ``target``/``sensitive``/``identifiers``/``quasi_identifiers``/
    ``weight``/``household`` shorthands; a column given two different roles is refused, naming both."""
    given = get(d, "roles", dict, {}, where="data")
    roles: dict = {}

    def assign(column: str, role: str) -> None:
        if column in roles and roles[column] != role:
            raise BadInput(
                f"column {column!r} is given two roles, {roles[column]} and {role}; give each column one role"
            )
        roles[column] = role

    for column, role in given.items():
        role if isinstance(role, str) and role in {x.value for x in Role} else _bad_role(role)
        assign(column, role)
    target = get(d, "target", str, where="data")
    if target:
        assign(target, Role.TARGET.value)
    for key, role in (
        ("sensitive", Role.SENSITIVE),
        ("identifiers", Role.IDENTIFIER),
        ("quasi_identifiers", Role.QUASI_IDENTIFIER),
        ("weight", Role.WEIGHT),
        ("household", Role.HOUSEHOLD),
    ):
        for column in _text_list(d, key):
            assign(column, role.value)
    return roles


def _skip_rows(value) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInput(f"skip_rows must be a whole number ≥ 0, got {value!r}")
    return value


def _sheet(value) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise BadInput(f"sheet must be a sheet's name or number, got {value!r}")


def _bad_role(r):
    raise BadInput(f"unknown role {r!r}; roles are {', '.join(x.value for x in Role)}")


def _bad_kind(k):
    raise BadInput(f"unknown column kind {k!r}; kinds are {', '.join(x.value for x in Kind)}")


def input_rows(data) -> int:
    """The input's records: a table's rows, a matrix's or set-valued data's records, a sequence's length."""
    return data.n_rows if hasattr(data, "n_rows") else len(data)


def input_path(data) -> str | None:
    return data.source if isinstance(data, Table) else data.meta.get("source")


def _check_kinds(frame, kinds: Mapping) -> None:
    """Each kind the user sets names a column of the data, and a binary one holds only 0 and 1
    (missing ones aside; a numeric one is checked by :meth:`Table.with_kinds`): BadInput naming the
    first value that is not."""
    for column, given in kinds.items():
        if column not in frame.columns:
            raise BadInput(
                f"a kind is given for {column!r}, but the data has no such column; columns are "
                f"{', '.join(map(str, frame.columns))}"
            )
        if Kind(given) is Kind.BINARY:
            values = frame[column].dropna()
            numbers = pd.to_numeric(values, errors="coerce")
            wrong = values[~numbers.isin((0, 1))]
            if len(wrong):
                raise BadInput(
                    f"column {column!r} is given the kind binary, but it holds {printable(str(wrong.iloc[0]))!r}, "
                    f"which is not 0 or 1"
                )
