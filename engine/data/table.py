"""The relational data model: a pandas DataFrame with a schema of column kinds and roles.

See docs/design.md, "Releases, groups and typed values" and "Roles and sensitive columns". A :class:`Table` never
modifies the frame it was given: it keeps a private copy, and every change returns a new Table.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..base.validate import NULL, check_shape


class Kind(str, enum.Enum):
    """What the values of a column are."""

    NUMERIC = "numeric"
    CATEGORICAL = "categorical"
    BINARY = "binary"
    DATE = "date"
    ITEMSET = "itemset"


class Role(str, enum.Enum):
    """What a column means for privacy (ARX's attribute types plus the class to predict)."""

    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    TARGET = "target"
    INSENSITIVE = "insensitive"
    # survey microdata: how many people of the population a record stands for, and the household a
    # record belongs to (an identifier: never released, see :meth:`Table.released_columns`)
    WEIGHT = "weight"
    HOUSEHOLD = "household"


WITHHELD = (Role.IDENTIFIER, Role.HOUSEHOLD)  # roles whose columns no release contains


@dataclass(frozen=True)
class Column:
    """Schema entry of one column."""

    name: str
    kind: Kind
    role: Role = Role.INSENSITIVE
    hierarchy: object | None = None  # a veil.engine.hierarchy.Hierarchy, where one applies

    def to_dict(self) -> dict:
        d = {"name": self.name, "kind": self.kind.value, "role": self.role.value}
        if self.hierarchy is not None:  # first-class: kept in project files and manifests
            d["hierarchy"] = self.hierarchy.to_dict()
        return d


@dataclass(frozen=True)
class Schema:
    """Kinds and roles of a table's columns, in the table's column order."""

    columns: tuple[Column, ...]

    def __post_init__(self):
        names = [c.name for c in self.columns]
        check_column_names(names)
        targets = [c.name for c in self.columns if c.role is Role.TARGET]
        if len(targets) > 1:
            raise BadInput(f"only one column can be the target, got {', '.join(targets)}")
        for role in (Role.WEIGHT, Role.HOUSEHOLD):
            marked = [c.name for c in self.columns if c.role is role]
            if len(marked) > 1:
                raise BadInput(f"only one column can be the {role.value} column, got {', '.join(marked)}")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def __getitem__(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise BadInput(f"no column named {name!r}; columns are {', '.join(self.names)}")

    def with_roles(self, roles: Mapping[str, Role | str]) -> Schema:
        """Return a schema whose columns named in ``roles`` take the given roles."""
        unknown = set(roles) - set(self.names)
        if unknown:
            raise BadInput(f"no column named {sorted(unknown)[0]!r}; columns are {', '.join(self.names)}")
        cols = tuple(dataclasses.replace(c, role=Role(roles[c.name])) if c.name in roles else c for c in self.columns)
        return Schema(cols)

    def with_kinds(self, kinds: Mapping[str, Kind | str]) -> Schema:
        cols = tuple(dataclasses.replace(c, kind=Kind(kinds[c.name])) if c.name in kinds else c for c in self.columns)
        return Schema(cols)

    def by_role(self, role: Role) -> list[str]:
        return [c.name for c in self.columns if c.role is role]

    @property
    def target(self) -> str | None:
        found = self.by_role(Role.TARGET)
        return found[0] if found else None

    @property
    def weight(self) -> str | None:
        """The column of survey weights, if one is marked."""
        found = self.by_role(Role.WEIGHT)
        return found[0] if found else None

    @property
    def household(self) -> str | None:
        """The column of household ids, if one is marked."""
        found = self.by_role(Role.HOUSEHOLD)
        return found[0] if found else None

    def to_dict(self) -> list[dict]:
        return [c.to_dict() for c in self.columns]

    @classmethod
    def from_dict(cls, entries: Iterable[Mapping], where: str = "schema") -> Schema:
        check_shape(entries, [{"name": str, "kind": str, "role": (str, NULL)}], where)
        try:
            return cls(
                tuple(
                    Column(e["name"], Kind(e["kind"]), Role(e.get("role") or "insensitive"), hierarchy=_hierarchy_of(e))
                    for e in entries
                )
            )
        except (KeyError, ValueError) as exc:
            raise BadInput(f"{where}: malformed entry: {exc}") from None


def check_column_names(names: list) -> None:
    """Refuse empty or duplicate column names with a message naming them."""
    for i, n in enumerate(names):
        if not isinstance(n, str) or not n.strip():
            raise BadInput(f"column {i + 1} has an empty name; give every column a name")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise BadInput(f"column name {n!r} appears more than once; column names must be unique")
        seen.add(n)


_ID_HINTS = ("name", "id", "ssn", "record", "mrn", "email", "phone", "address", "number")
_QI_HINTS = ("age", "sex", "gender", "zip", "postcode", "post", "birth", "race", "marital", "country", "city")
_TARGET_HINTS = ("class", "label", "target", "income", "readmit", "outcome", "y")


def _nice_width(raw: float) -> float:
    """The smallest of 1, 2, 5 × 10^k not below ``raw``."""
    if raw <= 0:
        return 1.0
    exp = np.floor(np.log10(raw))
    for m in (1, 2, 5, 10):
        if m * 10**exp >= raw:
            w = m * 10**exp
            return float(int(w)) if w >= 1 else float(w)
    return float(10 ** (exp + 1))


def detect_kind(series: pd.Series) -> Kind:
    """Guess a column's kind from its values."""
    s = series.dropna()
    if len(s) == 0:
        return Kind.CATEGORICAL
    if pd.api.types.is_bool_dtype(s):
        return Kind.BINARY
    if pd.api.types.is_numeric_dtype(s):
        values = pd.unique(s)
        if len(values) <= 2 and set(np.asarray(values, dtype=float)) <= {0.0, 1.0}:
            return Kind.BINARY
        return Kind.NUMERIC
    if pd.api.types.is_datetime64_any_dtype(s):
        return Kind.DATE
    return Kind.CATEGORICAL


def suggest_role(name: str, series: pd.Series, kind: Kind) -> Role:
    """Suggest a role from the column name and how unique its values are (a hint for the user)."""
    low = name.lower().replace("-", "_").replace(" ", "_")
    tokens = set(low.split("_"))
    n = len(series)
    distinct = series.nunique(dropna=True)
    if n and distinct == n and kind is not Kind.NUMERIC:
        return Role.IDENTIFIER
    if tokens & set(_ID_HINTS) and distinct > 0.9 * n:
        return Role.IDENTIFIER
    if tokens & set(_TARGET_HINTS) or any(t.startswith(h) for t in tokens for h in _TARGET_HINTS if len(h) > 3):
        return Role.TARGET
    if tokens & set(_QI_HINTS) or any(low.startswith(h) for h in _QI_HINTS):
        return Role.QUASI_IDENTIFIER
    return Role.INSENSITIVE


FILE_LABELS = "labels"
"""The key of ``Table.meta`` holding what a labelled file (SPSS, Stata, SAS, R) says of each column:
column → ``{"label", "values", "coded", "missing"}`` (docs/formats.md, "Labelled files"). The export
hands the released columns' entries to the exporter in ``frame.attrs[FILE_LABELS]``."""


CELL_CODES = "missing codes"
"""The key of ``Table.meta`` holding each user-missing cell's own code, as a labelled file stored it:
``{"rows": n, "columns": {column: (rows, codes)}}`` — the table's row count, and per column the
int64 array of the rows whose cell held a declared missing code (read as missing) with those codes.
:meth:`Table.take` and the reshaping of a data source keep it aligned with the rows; the export
writes each code back where the release kept the cell (docs/formats.md, "Labelled files")."""


def cell_codes_taken(meta: dict, rows: np.ndarray) -> dict:
    """``meta`` with its :data:`CELL_CODES` for the table of ``rows`` (old row numbers, in the new
    order; a row given twice keeps its codes twice; a row past the old table holds none)."""
    found = meta.get(CELL_CODES)
    if not found:
        return meta
    rows = np.asarray(rows, dtype=np.int64)
    old = int(found["rows"])
    inside = (rows >= 0) & (rows < old)
    columns = {}
    for name, (where, codes) in found["columns"].items():
        index = np.full(old, -1, dtype=np.int64)  # old row -> its code's place
        index[np.asarray(where, dtype=np.int64)] = np.arange(len(where))
        place = np.full(len(rows), -1, dtype=np.int64)
        place[inside] = index[rows[inside]]
        new = np.flatnonzero(place >= 0)
        if len(new):
            columns[name] = (new, [codes[j] for j in place[new]])
    return {**meta, CELL_CODES: {"rows": len(rows), "columns": columns}}


@dataclass(frozen=True)
class Table:
    """A DataFrame with a :class:`Schema`.

    Parameters
    ----------
    frame : pandas.DataFrame
        The data; copied, never modified.
    schema : Schema, optional
        Kinds and roles; detected from the values when omitted (all roles insensitive).
    source : str, optional
        Where the data came from (a path), for provenance.
    """

    form = "table"  # the dataset protocol (veil.engine.data)

    frame: pd.DataFrame
    schema: Schema
    source: str | None = None
    sha256: str | None = None
    meta: dict = field(default_factory=dict)
    # the population the data was drawn from (a veil.engine.Population), for δ-presence and k-map
    population: object | None = None

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        schema: Schema | None = None,
        *,
        source=None,
        sha256=None,
        roles: Mapping[str, Role | str] | None = None,
    ) -> Table:
        names = list(frame.columns)
        check_column_names(names)
        frame = frame.copy()
        if schema is None:
            schema = Schema(tuple(Column(str(c), detect_kind(frame[c])) for c in names))
        elif schema.names != [str(c) for c in names]:
            raise BadInput("the schema's columns do not match the table's columns")
        if roles:
            schema = schema.with_roles(roles)
        return cls(frame, schema, source, sha256)

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def columns(self) -> list[str]:
        return self.schema.names

    def with_roles(self, roles: Mapping[str, Role | str]) -> Table:
        return dataclasses.replace(self, schema=self.schema.with_roles(roles))

    def with_suggested_roles(self) -> Table:
        roles = {c.name: suggest_role(c.name, self.frame[c.name], c.kind) for c in self.schema.columns}
        targets = [n for n, r in roles.items() if r is Role.TARGET]
        for extra in targets[:-1]:  # at most one target: keep the last (usually the class column)
            roles[extra] = Role.INSENSITIVE
        return self.with_roles(roles)

    def with_kinds(self, kinds: Mapping[str, Kind | str]) -> Table:
        """The table with the given columns read as the given kinds; a numeric column's values become
        numbers (blanks stay blank). BadInput names a value a column cannot take as its kind."""
        frame = self.frame
        for name, kind in kinds.items():
            if Kind(kind) is not Kind.NUMERIC or name not in frame.columns:
                continue
            series = frame[name]
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                continue
            numbers = pd.to_numeric(series, errors="coerce")
            wrong = series[numbers.isna() & series.notna()]
            if len(wrong):
                first = wrong.iloc[0]
                raise BadInput(
                    f"column {name!r} cannot be numeric: {len(wrong):,} record{'s' if len(wrong) != 1 else ''} "
                    f"hold{'s' if len(wrong) == 1 else ''} values that are not numbers, such as {first!r}; keep the "
                    f"column categorical, or have such values read as blanks (a missing-value marker when "
                    f"opening the file) and keep the blanks rather than filling them with a word"
                )
            frame = frame.assign(**{name: numbers.astype(float)})
        return dataclasses.replace(self, frame=frame, schema=self.schema.with_kinds(kinds))

    def with_hierarchy(self, column: str, hierarchy) -> Table:
        """Attach a generalisation hierarchy (e.g. ``Hierarchy.from_arx_csv(path)``) to a column."""
        col = self.schema[column]
        hierarchy = hierarchy.with_name(column)
        hierarchy._positions(self.frame[column].dropna())  # every value must be a leaf (BadInput names one)
        cols = tuple(dataclasses.replace(c, hierarchy=hierarchy) if c is col else c for c in self.schema.columns)
        table = dataclasses.replace(self, schema=Schema(cols))
        return table.with_population(self.population) if self.population is not None else table

    def hierarchy(self, column: str):
        """The column's hierarchy: the one attached, else a generated one (intervals of a tenth of
        the range for numeric columns, day → month → year → ``*`` for dates, one level to ``*`` for
        others)."""
        from .hierarchy import Hierarchy
        from .missing import holds_integers

        col = self.schema[column]
        if col.hierarchy is not None:
            return col.hierarchy
        values = self.frame[column].dropna()
        if pd.api.types.is_float_dtype(values) and holds_integers(self.frame[column]):
            values = values.astype(np.int64)  # integers read as floats because of their blanks: labelled as integers
        if col.kind is Kind.NUMERIC and values.nunique() > 1:
            low, high = float(values.min()), float(values.max())
            with np.errstate(over="ignore", invalid="ignore"):
                span = high - low
            if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(span) and np.isfinite(span / 10 * 10)):
                raise BadInput(
                    f"column {column!r} runs from {low:g} to {high:g}, too wide for intervals of a tenth of "
                    f"its range (the width is not a finite number); give it a hierarchy (--hierarchy "
                    f"{column}=FILE) or read it as categorical (--kind {column}=categorical)"
                )
            width = _nice_width(span / 10)
            return Hierarchy.intervals(values, width=width, name=column)
        if col.kind is Kind.DATE and values.nunique() > 1:  # day → month → year → *
            return Hierarchy.dates(values, name=column)
        return Hierarchy.flat(values, name=column)

    def attached_hierarchies(self) -> dict:
        """Column → the hierarchy attached to it (generated ones are not listed)."""
        return {c.name: c.hierarchy for c in self.schema.columns if c.hierarchy is not None}

    def with_population(self, population) -> Table:
        """The table with the population it was drawn from (a :class:`~veil.engine.Population`), which
        reads the labels of the hierarchies attached to the table's columns."""
        if population is not None:
            population = population.with_hierarchies(self.attached_hierarchies())
        return dataclasses.replace(self, population=population)

    def take(self, rows) -> Table:
        """The table of the given rows (in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        frame = self.frame.iloc[rows].reset_index(drop=True)
        return dataclasses.replace(self, frame=frame, meta=cell_codes_taken(self.meta, rows))

    def labels(self) -> np.ndarray | None:
        """The target column as an array, or None when no column is the target."""
        t = self.schema.target
        return None if t is None else self.frame[t].to_numpy()

    def released_columns(self) -> list[str]:
        """Every column except direct identifiers and the household id (an identifier too: to release
        it, the user gives it another role)."""
        return [c.name for c in self.schema.columns if c.role not in WITHHELD]

    def summary(self) -> pd.DataFrame:
        """Per column: kind, suggested role, distinct values and missing values."""
        rows = []
        for c in self.schema.columns:
            s = self.frame[c.name]
            rows.append(
                {
                    "column": c.name,
                    "kind": c.kind.value,
                    "role": c.role.value,
                    "distinct": int(s.nunique(dropna=True)),
                    "missing": int(s.isna().sum()),
                }
            )
        return pd.DataFrame(rows)


def _hierarchy_of(entry: Mapping):
    """The hierarchy a schema entry keeps (None without one)."""
    if not entry.get("hierarchy"):
        return None
    from .hierarchy import Hierarchy

    return Hierarchy.from_dict(entry["hierarchy"]).with_name(entry["name"])
