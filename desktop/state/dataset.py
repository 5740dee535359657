"""The dataset panel's state: the open data, its kinds and roles, its column summaries and the
feature rules (one target column; identifiers never become features).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

import pandas as pd

from veil.engine import (
    BadInput,
    BinaryMatrix,
    DataSource,
    Kind,
    Recipe,
    Role,
    SetValued,
    Step,
    Table,
    column_sets,
    set_valued,
)

from .events import Event
from .setvalued_view import SetSummary, itemset_columns, summarise
from .tasks import ColumnFeatures, ColumnStats, Loaded, column_stats, matrix_features, preview_step

LEAVE_OUT = "leave out"
RULES_BY_KIND = {
    Kind.NUMERIC: ("quantile", "equal-width", "cuts", "positive", "one-hot", LEAVE_OUT),
    Kind.CATEGORICAL: ("one-hot", LEAVE_OUT),
    Kind.BINARY: ("binary", "one-hot", LEAVE_OUT),
    Kind.DATE: ("one-hot", LEAVE_OUT),
    Kind.ITEMSET: ("one-hot", LEAVE_OUT),
}
DEFAULT_BINS = 4


class DatasetState:
    """The open data, its kinds and roles, its column summaries and the binarisation recipe.

    ``changed`` is emitted with ``"data"`` (new data), ``"schema"`` (kinds or roles) or
    ``"recipe"`` (a rule).
    """

    def __init__(self):
        self.data: Table | BinaryMatrix | SetValued | None = None
        self.source: DataSource | None = None
        self.sets: SetSummary | None = None  # the summary of set-valued data (None for a table)
        self._column_sets: dict[str, SetSummary] = {}  # item-set columns of a table, summarised when shown
        self.origin: Table | None = None  # the table whose item-set column became the data (use_sets)
        self.stats: dict[str, ColumnStats] = {}
        self.rules: dict[str, Step | None] = {}  # the user's rules; None leaves the column out
        self._defaults: dict[str, Step] = {}
        self._previews: dict[Step, ColumnFeatures] = {}
        self.release_sensitive: set[str] = set()  # columns marked sensitive the user agreed to release
        self.release_household = False  # the user agreed to release the column marked household
        self.changed = Event()

    @property
    def table(self) -> Table | None:
        return self.data if isinstance(self.data, Table) else None

    @property
    def household(self) -> str | None:
        """The column marked household, if the data is a table marking one."""
        return self.table.schema.household if self.table is not None else None

    @property
    def releases_household(self) -> bool:
        """Whether runs release the household id: the user agreed and a column is marked so."""
        return self.release_household and self.household is not None

    def set_release_household(self, agreed: bool) -> None:
        """The user's answer to releasing the household id (kept in the project)."""
        self.release_household = bool(agreed)
        self.changed.emit("household")

    @property
    def name(self) -> str:
        if self.source is None:
            return ""
        if self.source.demo:
            return "demo hospital admissions"
        if not self.source.path and self.source.subset_column:  # the records a column marks in the population
            return f"{_file_name(self.source.population)} where {self.source.subset_column} = 1"
        return _file_name(self.source.path)

    def load(self, loaded: Loaded, recipe: Recipe | None = None) -> None:
        """Show freshly read data; a project's ``recipe`` becomes the rules of its columns."""
        self.data, self.source = loaded.data, loaded.source
        self.sets, self._column_sets, self.origin = loaded.sets, {}, None
        self.stats = dict(loaded.stats)
        self._previews = dict(loaded.previews)
        self._refresh_defaults()
        self.rules = rules_from(recipe, self.binarisable())
        self.release_sensitive = set()
        self.release_household = False
        self.changed.emit("data")

    def keep_schema(self, previous, rules: Mapping) -> list[str]:
        """After the same file is read again with other read options: give its columns back the
        kinds, roles, hierarchies and rules they had (``previous`` is the schema before). A numeric
        kind whose column now holds text is not kept, nor a hierarchy its values no longer fit;
        returns those columns whose hierarchy could not be kept."""
        table = self.table
        if table is None:
            return []
        names = set(table.schema.names)
        cols = [c for c in previous.columns if c.name in names]
        kinds = {
            c.name: c.kind
            for c in cols
            if c.kind != table.schema[c.name].kind
            and (c.kind is not Kind.NUMERIC or pd.api.types.is_numeric_dtype(table.frame[c.name]))
        }
        data = dataclasses.replace(
            table, schema=table.schema.with_kinds(kinds).with_roles({c.name: c.role for c in cols})
        )
        lost = []
        for c in cols:
            if c.hierarchy is not None:
                try:
                    data = data.with_hierarchy(c.name, c.hierarchy)
                except BadInput:
                    lost.append(c.name)
        self.data = data
        for name in kinds:
            self.stats[name] = column_stats(data.frame[name], kinds[name])
        self._refresh_defaults()
        self.rules = {
            c: r for c, r in rules.items() if c in names and (r is None or r.rule in RULES_BY_KIND[data.schema[c].kind])
        }
        self.changed.emit("schema")
        self.changed.emit("recipe")
        return lost

    def missing(self) -> dict[str, int]:
        """Records with a missing value, per column of the open table that has any."""
        if self.table is None:
            return {}
        return {name: st.missing for name, st in self.stats.items() if st is not None and st.missing}

    # -- kinds and roles ----------------------------------------------------------------------
    def set_roles(self, names: Iterable[str], role: Role | str) -> None:
        """Give ``names`` the role; a new target displaces the old one (there is only one)."""
        table, role, names = self._require_table(), Role(role), list(names)
        roles: dict[str, Role] = dict.fromkeys(names, role)
        if role is Role.TARGET:
            if len(names) != 1:
                raise BadInput("only one column can be the target; choose a single column")
            old = table.schema.target
            if old is not None and old != names[0]:
                roles[old] = Role.INSENSITIVE
        self.assign_roles(roles)

    def assign_roles(self, roles: Mapping[str, Role | str]) -> None:
        """Give each column named in ``roles`` its role, as one change (one step to undo)."""
        table = self._require_table()
        marked = table.with_roles({name: Role(role) for name, role in roles.items()})
        if len(marked.schema.by_role(Role.TARGET)) > 1:
            raise BadInput("only one column can be the target; choose a single column")
        self.data = marked
        self._refresh_defaults()
        self.changed.emit("schema")

    def set_kind(self, name: str, kind: Kind | str) -> None:
        table, kind = self._require_table(), Kind(kind)
        table.with_kinds({name: kind})  # BadInput naming a value the column cannot take as that kind
        self.data = dataclasses.replace(table, schema=table.schema.with_kinds({name: kind}))
        self.stats[name] = column_stats(table.frame[name], kind)
        if name in self.rules and self.rules[name] is not None and self.rules[name].rule not in RULES_BY_KIND[kind]:
            del self.rules[name]
        self._refresh_defaults()
        self.changed.emit("schema")

    def restore(self, schema, rules: Mapping) -> None:
        """Take back a schema (kinds and roles) and rules as they were (undo and redo)."""
        table = self._require_table()
        kinds_changed = [c.name for c in schema.columns if c.kind != table.schema[c.name].kind]
        self.data = dataclasses.replace(table, schema=schema)
        for name in kinds_changed:
            self.stats[name] = column_stats(table.frame[name], schema[name].kind)
        self.rules = dict(rules)
        self._refresh_defaults()
        self.changed.emit("schema")
        self.changed.emit("recipe")

    def column(self, name: str):
        return self._require_table().schema[name]

    # -- set-valued data ------------------------------------------------------------------------
    @property
    def set_valued(self) -> bool:
        """Whether the open data is records of item sets (an SPMF/FIMI file, or a column's sets)."""
        return set_valued(self.data)

    def itemset_columns(self) -> list[str]:
        return itemset_columns(self.table)

    def set_summary(self, column: str | None = None) -> SetSummary | None:
        """What the item-sets view shows: the open set-valued data, or a table's item-set ``column``
        (summarised once, in O(items held))."""
        if self.table is None:
            return self.sets
        if column is None or column not in self.itemset_columns():
            return None
        if column not in self._column_sets:
            self._column_sets[column] = summarise(self.table, column)
        return self._column_sets[column]

    def use_sets(self, column: str) -> None:
        """Work on a table's item-set ``column`` as set-valued records (the target, if marked, as
        their labels): the methods for set-valued data are offered for it from now on."""
        table = self._require_table()
        self.data, self.origin = column_sets(table, column), table
        self.sets, self._column_sets = summarise(self.data, column), {}
        self.stats, self.rules, self._previews = {}, {}, {}
        self._refresh_defaults()
        self.changed.emit("data")

    # -- the population the data was drawn from ---------------------------------------------------
    @property
    def population(self):
        """The population opened beside the data (δ-presence, k-map judge against it), or None."""
        table = self.table
        return None if table is None else table.population

    @property
    def population_text(self) -> str:
        """What the dataset panel shows of the population: its file's name and size."""
        population = self.population
        if population is None:
            return ""
        marked = f", the data marked by {population.subset_column}" if population.subset_column else ""
        return f"{_file_name(population.source)}, {population.n_rows:,} records{marked}"

    def set_population(self, population) -> None:
        """Hold ``population`` with the data, so runs judge against it and a saved project names it;
        None lets it go. BadInput, in one line, when it cannot hold the data as a sample of it (a
        quasi-identifier missing, fewer people than records with some values)."""
        table = self._require_table()
        if self.source is not None and self.source.subset_column:
            raise BadInput(
                f"the data is the records {self.source.subset_column!r} marks in the population; open the "
                f"data's own file to judge it against another population or none"
            )
        if population is not None:
            attached = table.with_population(population)
            attached.population.check_covers(attached, attached.schema.by_role(Role.QUASI_IDENTIFIER))
            table = attached
        else:
            table = table.with_population(None)
        self.data = table
        if self.source is not None:
            self.source = dataclasses.replace(
                self.source, population=population.source if population else None, subset_column=None
            )
        self.changed.emit("population")

    def set_hierarchy(self, name: str, hierarchy) -> None:
        """Attach a generalisation hierarchy to a column (kept in the project file and manifest)."""
        self.set_hierarchies({name: hierarchy})

    def set_hierarchies(self, hierarchies: Mapping) -> None:
        """Attach several hierarchies at once (all or, when one does not fit its column, none)."""
        table = self._require_table()
        for name, hierarchy in hierarchies.items():
            table = table.with_hierarchy(name, hierarchy)
        self.data = table
        self.changed.emit("schema")

    def _require_table(self) -> Table:
        if self.table is None:
            raise BadInput("open a table first (transaction data has no columns)")
        return self.table

    # -- the recipe ---------------------------------------------------------------------------
    def _refresh_defaults(self) -> None:
        table = self.table
        self._defaults = {} if table is None else {s.column: s for s in Recipe.default_for(table).steps}

    def binarisable(self) -> list[str]:
        """Columns that can become features: every column but identifiers and the target."""
        return list(self._defaults)

    def step(self, column: str) -> Step | None:
        return self.rules[column] if column in self.rules else self._defaults.get(column)

    def steps(self) -> list[Step]:
        return [s for c in self.binarisable() if (s := self.step(c)) is not None]

    def set_rule(self, column: str, rule: str, *, bins: int | None = None, cuts=None) -> None:
        """Choose how ``column`` becomes features (``LEAVE_OUT`` drops it); raises BadInput."""
        if column not in self._defaults:
            raise BadInput(f"column {column!r} is an identifier or the target and never becomes a feature")
        if rule == LEAVE_OUT:
            self.rules[column] = None
        else:
            if rule in ("equal-width", "quantile"):
                bins = bins or _bins_of(self.step(column)) or DEFAULT_BINS
            if rule == "cuts" and not cuts:
                raise BadInput(f"give the cut points for {column!r}, e.g. 30, 50, 70")
            self.rules[column] = Step(
                column,
                rule,
                bins=bins if rule in ("equal-width", "quantile") else None,
                cuts=tuple(float(c) for c in cuts) if rule == "cuts" else None,
            )
        self.changed.emit("recipe")

    def recipe(self) -> Recipe | None:
        table = self.table
        return None if table is None else Recipe(tuple(self.steps()), table.schema.target)

    def features(self) -> list[ColumnFeatures]:
        """The features each step makes (computed once per step, most while the data loaded)."""
        if self.set_valued:
            return matrix_features(self.data)
        out = []
        for step in self.steps():
            if step not in self._previews:
                self._previews[step] = preview_step(self.table, step)
            out.append(self._previews[step])
        return out


def _file_name(path: str | None) -> str:
    return (path or "").replace("\\", "/").rsplit("/", 1)[-1]


def _bins_of(step: Step | None) -> int | None:
    return step.bins if step is not None else None


def rules_for(kind: Kind) -> tuple[str, ...]:
    return RULES_BY_KIND.get(kind, ("one-hot", LEAVE_OUT))


def rules_from(recipe: Recipe | None, binarisable: Iterable[str]) -> dict[str, Step | None]:
    """The dataset panel's rules that rebuild ``recipe`` (columns it leaves out are left out)."""
    if recipe is None:
        return {}
    rules: dict[str, Step | None] = {s.column: s for s in recipe.steps}
    for column in binarisable:
        rules.setdefault(column, None)
    return rules
