"""Where a run's data comes from: a file with read options and column roles, or the demo data."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .binary import BinaryMatrix
from .errors import BadInput
from .io import ImportOptions, read_data, sha256_file
from .table import Kind, Role, Schema, Table

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
    roles: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)
    append: tuple[dict, ...] = ()  # more files of the same columns, e.g. UCI's adult.test: {"path", "skip_rows"}
    drop_missing: bool = False  # remove every row with a missing value (after appending)
    hierarchies: dict = field(default_factory=dict)  # column → ARX hierarchy file (";"-separated)

    def options(self) -> ImportOptions:
        return ImportOptions(encoding=self.encoding, delimiter=self.delimiter, header=self.header,
                             names=self.names, fmt=self.fmt, skip_rows=self.skip_rows)

    def load(self, registry):
        if self.demo:
            data = load_demo()
        elif self.path:
            data = read_data(registry, self.path, self.options())
        else:
            raise BadInput("no data: give a file or choose the demo data")
        if isinstance(data, Table):
            data = self._combined(registry, data)
            if self.kinds:
                data = Table(data.frame, data.schema.with_kinds(self.kinds), data.source, data.sha256)
            if self.roles:
                data = data.with_roles(self.roles)
        elif self.roles or self.hierarchies or self.append:
            raise BadInput("transaction data has no columns to give roles, hierarchies or appended files to")
        if self.hierarchies:
            from .hierarchy import Hierarchy

            for column, path in self.hierarchies.items():
                data = data.with_hierarchy(column, Hierarchy.from_arx_csv(Path(path), name=column))
        return data

    def _combined(self, registry, table: Table) -> Table:
        """The table with the appended files' rows and without rows holding a missing value."""
        import dataclasses

        import pandas as pd

        frames = [table.frame]
        for extra in self.append:
            options = dataclasses.replace(self.options(), skip_rows=_skip_rows(extra.get("skip_rows")))
            more = read_data(registry, extra["path"], options)
            if not isinstance(more, Table) or list(more.frame.columns) != list(table.frame.columns):
                raise BadInput(f"{Path(extra['path']).name} does not have the columns of {Path(self.path).name}")
            frame = more.frame
            for column, strip in (extra.get("strip_suffix") or {}).items():  # "<=50K." → "<=50K"
                frame = frame.assign(**{column: frame[column].astype(str).str.removesuffix(strip)})
            frames.append(frame.astype(table.frame.dtypes.to_dict(), errors="ignore"))
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else table.frame
        if self.drop_missing:
            frame = frame.dropna().reset_index(drop=True)
        if frame is table.frame:
            return table
        return Table(frame, table.schema, table.source, table.sha256, dict(table.meta))

    def to_dict(self) -> dict:
        d = {"path": self.path, "demo": self.demo, "names": list(self.names) if self.names else None,
             "fmt": self.fmt, "delimiter": self.delimiter, "encoding": self.encoding, "header": self.header,
             "skip_rows": self.skip_rows or None,
             "roles": dict(self.roles), "kinds": dict(self.kinds), "append": [dict(a) for a in self.append] or None,
             "drop_missing": self.drop_missing or None, "hierarchies": dict(self.hierarchies) or None}
        return {k: v for k, v in d.items() if v not in (None, {}, False)} | {"demo": self.demo}

    @classmethod
    def from_dict(cls, d: Mapping, base: Path | None = None) -> DataSource:
        if not isinstance(d, Mapping):
            raise BadInput(f"'data' must be an object such as {{\"path\": \"file.csv\"}}, got {d!r}")
        path = d.get("path")
        if path is not None and not isinstance(path, str):
            raise BadInput(f"the data path must be text, got {path!r}")
        if path and base is not None and not Path(path).is_absolute():
            path = str((base / path).resolve())
        roles = dict(d.get("roles") or {})
        for key, role in (("target", Role.TARGET), ("sensitive", Role.SENSITIVE)):
            if d.get(key):
                roles[d[key]] = role.value
        for ident in d.get("identifiers") or ():
            roles[ident] = Role.IDENTIFIER.value
        for qi in d.get("quasi_identifiers") or ():
            roles[qi] = Role.QUASI_IDENTIFIER.value
        for r in roles.values():
            Role(r) if r in {x.value for x in Role} else _bad_role(r)
        kinds = dict(d.get("kinds") or {})
        for k in kinds.values():
            Kind(k) if k in {x.value for x in Kind} else _bad_kind(k)
        append = []
        for extra in d.get("append") or ():
            if not isinstance(extra, Mapping) or not isinstance(extra.get("path"), str):
                raise BadInput(f"each appended file needs a path, as {{\"path\": \"more.csv\"}}, got {extra!r}")
            append.append({**extra, "path": _resolve(extra["path"], base)})
        hierarchies = d.get("hierarchies") or {}
        if not isinstance(hierarchies, Mapping) or not all(isinstance(v, str) for v in hierarchies.values()):
            raise BadInput("'hierarchies' maps column names to hierarchy files, as {\"age\": \"age.csv\"}")
        return cls(path=path, demo=bool(d.get("demo")), names=tuple(d["names"]) if d.get("names") else None,
                   fmt=d.get("fmt"), delimiter=d.get("delimiter"), encoding=d.get("encoding"),
                   header=d.get("header"), skip_rows=_skip_rows(d.get("skip_rows")), roles=roles, kinds=kinds,
                   append=tuple(append), drop_missing=bool(d.get("drop_missing")),
                   hierarchies={str(k): _resolve(v, base) for k, v in hierarchies.items()})


def _resolve(path: str, base: Path | None) -> str:
    if base is not None and not Path(path).is_absolute():
        return str((base / path).resolve())
    return path


def _skip_rows(value) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInput(f"skip_rows must be a whole number ≥ 0, got {value!r}")
    return value


def _bad_role(r):
    raise BadInput(f"unknown role {r!r}; roles are {', '.join(x.value for x in Role)}")


def _bad_kind(k):
    raise BadInput(f"unknown column kind {k!r}; kinds are {', '.join(x.value for x in Kind)}")


def input_rows(data) -> int:
    return data.n_rows if isinstance(data, (Table, BinaryMatrix)) else len(data)


def input_path(data) -> str | None:
    return data.source if isinstance(data, Table) else data.meta.get("source")
