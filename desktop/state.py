"""Panel state of the desktop, free of Qt: the widgets bind to these objects thinly.

Each panel has one state object. It holds what the user chose, knows the domain rules (one target
column, identifiers never become features, which methods take the data, how a sweep becomes runs)
and announces changes through a tiny :class:`Event`. Nothing here imports Qt, so the rules are
tested without a window and the widgets stay a thin layer of display and input.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from veil.engine import (
    BINARY,
    SETS,
    TABLE,
    TRANSACTIONS,
    BadInput,
    BinaryMatrix,
    DataSource,
    Judgement,
    Kind,
    PluginCall,
    Project,
    Recipe,
    Role,
    RunSpec,
    SetValued,
    Step,
    Study,
    Table,
    available_memory,
    bind_models,
    check_memory,
    column_sets,
    estimate_runs,
    format_bytes,
    may_release_sensitive,
    outcome_rows,
    results_table,
    unacknowledged_sensitive,
)

from .events import Event
from .setvalued_view import SetSummary, is_set_valued, itemset_columns, summarise
from .tasks import ColumnFeatures, ColumnStats, Failure, Loaded, RunOutcome, column_stats, matrix_features, preview_step

LEAVE_OUT = "leave out"
RULES_BY_KIND = {
    Kind.NUMERIC: ("quantile", "equal-width", "cuts", "positive", "one-hot", LEAVE_OUT),
    Kind.CATEGORICAL: ("one-hot", LEAVE_OUT),
    Kind.BINARY: ("binary", "one-hot", LEAVE_OUT),
    Kind.DATE: ("one-hot", LEAVE_OUT),
    Kind.ITEMSET: ("one-hot", LEAVE_OUT),
}
DEFAULT_BINS = 4


# -- the dataset panel --------------------------------------------------------------------------


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
        self.changed = Event()

    @property
    def table(self) -> Table | None:
        return self.data if isinstance(self.data, Table) else None

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
        self.data = table.with_roles(roles)
        self._refresh_defaults()
        self.changed.emit("schema")

    def set_kind(self, name: str, kind: Kind | str) -> None:
        table, kind = self._require_table(), Kind(kind)
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
        return is_set_valued(self.data)

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
        self.data = self._require_table().with_hierarchy(name, hierarchy)
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


# -- the configuration panel --------------------------------------------------------------------


def takes(algorithm, data) -> bool:
    """Whether ``algorithm`` fits ``data``: it accepts the data's form (a Table is binarised for
    binary methods; records of item sets are taken as sets or as a transaction matrix), and a method
    that needs labels gets them (set-valued records cannot be given a target afterwards)."""
    accepts = algorithm.accepts
    if isinstance(data, Table):
        return TABLE in accepts or BINARY in accepts
    if is_set_valued(data):
        if algorithm.needs_labels and data.labels is None:
            return False
        return SETS in accepts or BINARY in accepts or TRANSACTIONS in accepts
    return False


def native_to_sets(algorithm) -> bool:
    """Whether ``algorithm`` declares it works on item sets as they are (not only on a binary matrix)."""
    return SETS in algorithm.accepts or TRANSACTIONS in algorithm.accepts


def model_fits(model, data) -> bool:
    """Whether privacy model ``model`` (a class) can judge a release of ``data``: one that needs a
    sensitive column cannot judge set-valued records, which have no columns."""
    return not (is_set_valued(data) and model.needs_sensitive)


def model_for(registry, data, current: str | None) -> str | None:
    """The privacy model to show for newly opened data. Tables keep ``current``: their models depend
    on the roles. For set-valued records, of the models the methods taking item sets as they are
    work under (by the kinds of judgement they share), the one most particular to those methods:
    the one judging the fewest kinds those methods do not make (``current`` when it is as
    particular); without such a method, ``current`` when it can judge the records."""
    if not is_set_valued(data):
        return current
    natives = [c for c in offered_methods(registry, data) if native_to_sets(c) and c.satisfies]
    made = {Judgement(j) for c in natives for j in c.satisfies}

    def beyond(name: str) -> int:  # the kinds the model judges that no such method makes
        return len({Judgement(j) for j in registry.get("privacy-model", name).judges} - made)

    fitting = [
        m
        for m in registry.names("privacy-model")
        if model_fits(registry.get("privacy-model", m), data)
        and any(c.works_under(registry.get("privacy-model", m)) for c in natives)
    ]
    current_fits = current is None or model_fits(registry.get("privacy-model", current), data)
    if not fitting:
        return current if current_fits else None
    best = min(fitting, key=beyond)
    if current in fitting and beyond(current) == beyond(best):
        return current
    return best


def metric_fits(registry, metric: str, methods: Iterable[str], model: str | None) -> bool:
    """Whether the metric (``NAME`` or ``NAME:params``) says something of a run of one of ``methods``
    (all metrics fit while no method is chosen)."""
    cls = registry.get("metric", PluginCall.parse(metric).name)
    model_cls = registry.get("privacy-model", model) if model else None
    methods = list(methods)
    return not methods or any(cls.fits(registry.get("algorithm", m), model_cls) for m in methods)


def fitting_metrics(registry, spec: RunSpec) -> RunSpec:
    """The run with only the chosen metrics that say something of its method: a Mondrian run does
    not compute (nor report as "does not apply") a feature ranking's accuracy."""
    model = spec.models[0].name if spec.models else None
    kept = tuple(m for m in spec.metrics if metric_fits(registry, m, [spec.method.name], model))
    return spec if kept == tuple(spec.metrics) else dataclasses.replace(spec, metrics=kept)


def offered_methods(registry, data) -> list[type]:
    return [cls for cls in registry.classes("algorithm") if takes(cls, data)]


@dataclass
class PluginChoice:
    """A plugin's settings in the form: one value per parameter, or a list of values to sweep."""

    name: str
    values: dict = field(default_factory=dict)
    sweeps: dict = field(default_factory=dict)

    def fixed(self) -> dict:
        return {k: v for k, v in self.values.items() if k not in self.sweeps}


@dataclass(frozen=True)
class PlannedRun:
    spec: RunSpec
    setting: dict  # swept parameter -> value of this run
    repeat: int = 0
    fixed: tuple[str, ...] = ()  # what else sets this run apart: the model and non-default parameters

    @property
    def label(self) -> str:
        parts = [*self.fixed, *(f"{k} = {_show(v)}" for k, v in self.setting.items())]
        if self.repeat:
            parts.append(f"repeat {self.repeat + 1}")
        return self.spec.method.name + (f" ({', '.join(parts)})" if parts else "")


def _non_defaults(cls, values: Mapping, skip) -> list[str]:
    """``key = value`` for each parameter of plugin ``cls`` set away from its default."""
    defaults = {spec.name: spec.default for spec in cls.param_specs()}
    return [f"{k} = {_show(v)}" for k, v in values.items() if k not in skip and k in defaults and v != defaults[k]]


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class ConfigState:
    """Privacy model, methods, metrics, sweeps, seed and repeats; turns them into runs."""

    def __init__(self):
        self.model: str | None = None
        self.also: list[str] = []  # further privacy models the release must satisfy too (combined)
        self.models: dict[str, PluginChoice] = {}
        self.methods: dict[str, PluginChoice] = {}
        self.selected: list[str] = []
        self.metrics: list[str] = []
        self.metric_params: dict[str, dict] = {}  # metric -> the values that differ from its defaults
        self.seed = 0
        self.repeats = 1
        self.binary: set[str] = set()  # methods taking a table or features, asked to take the features
        # a cluster's master URL (the settings' "cluster/master"): a method declaring how it scales out
        # (Algorithm.scale_out) sends its runs there; "" runs everything in this computer's worker
        self.cluster = ""
        self.changed = Event()

    def choice(self, kind: str, name: str) -> PluginChoice:
        table = self.models if kind == "privacy-model" else self.methods
        return table.setdefault(name, PluginChoice(name))

    def set_model(self, name: str | None) -> None:
        self.model = name
        if name in self.also:
            self.also.remove(name)
        self.changed.emit()

    def require_also(self, name: str, on: bool = True) -> None:
        """Combine the main privacy model with ``name`` (on) or stop requiring it (off)."""
        if on and name not in self.also and name != self.model:
            self.also.append(name)
        elif not on and name in self.also:
            self.also.remove(name)
        self.changed.emit()

    def model_names(self) -> list[str]:
        """Every privacy model the runs must satisfy: the main one, then those combined with it."""
        return ([self.model] + [n for n in self.also if n != self.model]) if self.model else []

    def set_params(self, kind: str, name: str, values: Mapping, sweeps: Mapping) -> None:
        choice = self.choice(kind, name)
        choice.values, choice.sweeps = dict(values), {k: list(v) for k, v in sweeps.items()}
        self.changed.emit()

    def select(self, method: str, on: bool = True) -> None:
        if on and method not in self.selected:
            self.selected.append(method)
        elif not on and method in self.selected:
            self.selected.remove(method)
        self.changed.emit()

    def set_metrics(self, names: Iterable[str]) -> None:
        self.metrics = list(names)
        self.changed.emit()

    def set_metric_params(self, name: str, values: Mapping) -> None:
        """A metric's own parameters (only those that differ from the defaults are kept)."""
        self.metric_params[name] = dict(values)
        self.changed.emit()

    def metric_specs(self) -> tuple[str, ...]:
        """The chosen metrics as the engine names them: ``NAME`` or ``NAME:key=value,…``."""
        specs = []
        for name in self.metrics:
            values = self.metric_params.get(name) or {}
            text = ",".join(f"{k}={_show(v)}" for k, v in values.items())
            specs.append(f"{name}:{text}" if text else name)
        return tuple(specs)

    def set_seed(self, seed: int, repeats: int) -> None:
        self.seed, self.repeats = int(seed), int(repeats)
        self.changed.emit()

    def plan(self, registry, data, recipe: Recipe | None = None) -> list[PlannedRun]:
        """Every run of the configuration (methods × swept values × repeats), planned by the engine
        exactly as ``veil study`` plans :meth:`study`; BadInput says what to fix first."""
        study = self.study(registry, data, recipe)
        fixed = self._fixed(registry, study)
        population = getattr(data, "population", None)
        if population is not None and any(registry.get("privacy-model", m.name).reads_population for m in study.models):
            # the roles may have changed since the population was opened: each quasi-identifier must be in it
            population.check_covers(data, data.schema.by_role(Role.QUASI_IDENTIFIER))
        return [
            PlannedRun(fitting_metrics(registry, run.spec), run.setting, run.repeat, fixed[run.spec.method.name])
            for run in study.plan(registry, data)
        ]

    def study(self, registry, data, recipe: Recipe | None = None) -> Study:
        """The configuration as the engine's :class:`Study`: the chosen methods (each with its own
        sweep and whether it runs on the features), the privacy models and their sweep, metrics,
        seed and repeats; the same study a ``veil study`` file would describe."""
        if data is None:
            raise BadInput("open a dataset first")
        if not self.selected:
            raise BadInput("choose at least one method")
        models = [self.choice("privacy-model", n) for n in self.model_names()]
        for name in self.selected:  # the methods the desktop offers for this data (see takes)
            cls = registry.get("algorithm", name)
            if not takes(cls, data):
                if native_to_sets(cls) and itemset_columns(data if isinstance(data, Table) else None):
                    raise BadInput(f"{cls.title} works on item sets: choose Anonymise these item sets under Item sets")
                raise BadInput(f"{cls.title} does not work on this data; choose another method")
        sweep: dict = {}
        for model in models:
            for key, values in model.sweeps.items():
                if key in sweep and list(sweep[key]) != list(values):
                    raise BadInput(f"{key} is swept on two privacy models with different values; sweep it in one place")
                sweep[key] = list(values)
        methods, options = [], []
        for name in self.selected:
            cls = registry.get("algorithm", name)
            choice = self.choice("algorithm", name)
            methods.append(PluginCall(name, self.on_cluster(cls, choice.fixed())))
            opts: dict = {"features": self.on_features(cls, data)}
            if choice.sweeps:
                opts["sweep"] = {k: list(v) for k, v in choice.sweeps.items()}
            options.append(opts)
        return Study(
            methods=tuple(methods),
            options=tuple(options),
            models=tuple(PluginCall(m.name, m.fixed()) for m in models),
            sweep=sweep,
            repeats=self.repeats,
            seed=self.seed,
            metrics=self.metric_specs(),
            recipe=recipe if isinstance(data, Table) else None,
        )

    def on_cluster(self, cls, params: dict) -> dict:
        """``params`` sending a run of ``cls`` to the cluster set in the settings, when there is one and
        the method declares how it goes there (its ``scale_out``)."""
        out = cls.scale_out
        if not self.cluster or out is None:
            return params
        return {**params, out.executor_param: out.value, out.master_param: self.cluster}

    def _fixed(self, registry, study: Study) -> dict[str, tuple[str, ...]]:
        """What sets each method's runs apart in their labels: the models with their fixed values,
        and the method's parameters set away from their defaults (display only)."""
        out = {}
        for i, call in enumerate(study.methods):
            cls = registry.get("algorithm", call.name)
            sweep = study.sweep_of(i)
            fixed = [
                " ".join([m.name, *(f"{k} = {_show(v)}" for k, v in m.params.items() if k not in sweep)])
                for m in study.models
            ]
            out[call.name] = tuple(fixed + _non_defaults(cls, call.params, sweep))
        return out

    def on_features(self, cls, data) -> bool:
        """Whether ``cls`` runs on the binary features of the recipe: always for a method that
        cannot take a table; by choice for one that takes both (the engine binarises a table
        exactly when the run names a recipe)."""
        if not isinstance(data, Table) or BINARY not in cls.accepts:
            return False
        return TABLE not in cls.accepts or cls.name in self.binary

    def set_binary(self, method: str, on: bool) -> None:
        (self.binary.add if on else self.binary.discard)(method)
        self.changed.emit()

    def describe(self, planned: list[PlannedRun]) -> str:
        """One line: how many runs, of what, over which values."""
        if not planned:
            return "no runs"
        methods = list(dict.fromkeys(p.spec.method.name for p in planned))
        keys = list(dict.fromkeys(k for p in planned for k in p.setting))
        swept = [f"{k} ∈ {{{', '.join(_show(v) for v in dict.fromkeys(p.setting[k] for p in planned))}}}" for k in keys]
        text = f"{len(planned)} run{'s' if len(planned) != 1 else ''}: {', '.join(methods)}"
        if swept:
            text += " × " + " × ".join(swept)
        if self.repeats > 1:
            text += f" × {self.repeats} repeats"
        return text

    def load_runs(self, runs: Iterable[RunSpec]) -> None:
        """Take the configuration back from a project's runs (values that vary become sweeps)."""
        runs = list(runs)
        if not runs:
            return
        first = runs[0]
        self.model = first.model.name if first.model else None
        self.also = [m.name for m in first.models[1:]]
        for call in first.models:
            self.models[call.name] = _choice_from(
                call.name, [m.params for r in runs for m in r.models if m.name == call.name]
            )
        self.selected = list(dict.fromkeys(r.method.name for r in runs))
        self.binary = {r.method.name for r in runs if r.recipe is not None}
        for name in self.selected:
            self.methods[name] = _choice_from(name, [r.method.params for r in runs if r.method.name == name])
        self.metrics, self.metric_params = [], {}
        for text in first.metrics:
            call = PluginCall.parse(text)
            self.metrics.append(call.name)
            if call.params:
                self.metric_params[call.name] = dict(call.params)
        seeds = sorted({r.seed for r in runs})
        self.seed, self.repeats = seeds[0], len(seeds)
        self.changed.emit()


def _choice_from(name: str, params_list: list[dict]) -> PluginChoice:
    choice = PluginChoice(name)
    keys = list(dict.fromkeys(k for p in params_list for k in p))
    for key in keys:
        values = list(dict.fromkeys(p[key] for p in params_list if key in p))
        choice.values[key] = values[0]
        if len(values) > 1:
            choice.sweeps[key] = values
    return choice


# -- the runs panel -----------------------------------------------------------------------------

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"


@dataclass
class RunEntry:
    """One run in the queue, from queued to done, failed or cancelled."""

    id: int
    planned: PlannedRun
    status: str = QUEUED
    fraction: float = 0.0
    message: str = ""
    started: float | None = None
    ended: float | None = None
    failure: Failure | None = None
    outcome: RunOutcome | None = None

    @property
    def label(self) -> str:
        return self.planned.label

    @property
    def finished(self) -> bool:
        return self.status in (DONE, FAILED, CANCELLED)

    def elapsed(self, now: float | None = None) -> float | None:
        if self.started is None:
            return None
        return (self.ended if self.ended is not None else (now or time.monotonic())) - self.started

    def status_text(self) -> str:
        if self.status == RUNNING:
            return self.message or "running"
        if self.status == FAILED:
            return f"failed: {self.failure.message if self.failure else ''}"
        if self.status == DONE and self.outcome is not None and self.outcome.holds is False:
            return "done: the release fails its privacy model"
        return self.status


class RunsState:
    """The queue of runs and the results of the finished ones, as a tidy table for the charts.

    ``changed`` is emitted with an entry (its status changed) or None (entries added or removed);
    ``results_changed`` when a run's results arrived or were cleared. Progress is not announced:
    views poll it while runs are active.
    """

    def __init__(self):
        self.entries: list[RunEntry] = []
        self._records: dict[int, dict] = {}  # run id -> one row of the results table
        self._next = 1
        self.changed = Event()
        self.results_changed = Event()

    def add(self, planned: Iterable[PlannedRun]) -> list[RunEntry]:
        new = []
        for p in planned:
            new.append(RunEntry(self._next, p))
            self._next += 1
        self.entries += new
        self.changed.emit(None)
        return new

    def entry(self, run_id: int) -> RunEntry | None:
        return next((e for e in self.entries if e.id == run_id), None)

    @property
    def active(self) -> list[RunEntry]:
        return [e for e in self.entries if not e.finished]

    def start(self, entry: RunEntry) -> None:
        entry.status, entry.started = RUNNING, time.monotonic()
        self.changed.emit(entry)

    def progress(self, entry: RunEntry, fraction: float, message: str) -> None:
        """Record progress quietly: views show it on their own clock (see RunsModel.tick), so a
        run reporting 20 times a second does not cost 20 repaints a second."""
        entry.fraction, entry.message = fraction, message

    def finish(self, entry: RunEntry, outcome: RunOutcome) -> None:
        entry.status, entry.outcome, entry.fraction, entry.ended = DONE, outcome, 1.0, time.monotonic()
        self._records[entry.id] = _record(entry, outcome)
        self.changed.emit(entry)
        self.results_changed.emit()

    def fail(self, entry: RunEntry, failure: Failure) -> None:
        entry.status, entry.failure, entry.ended = FAILED, failure, time.monotonic()
        self.changed.emit(entry)

    def cancel(self, entry: RunEntry) -> None:
        entry.status, entry.ended = CANCELLED, time.monotonic()
        if entry.started is None:
            entry.started = entry.ended
        self.changed.emit(entry)

    def reset(self) -> None:
        """Forget every run and result (other data was opened: they were runs on the data before).
        Run numbers go on counting, so a number never names two runs."""
        self.entries = []
        self._records.clear()
        self.changed.emit(None)
        self.results_changed.emit()

    def clear_finished(self) -> None:
        self.entries = [e for e in self.entries if not e.finished]
        self.changed.emit(None)

    def clear_results(self) -> None:
        self._records.clear()
        self.results_changed.emit()

    def restore_records(self, records: Mapping[int, dict]) -> None:
        """Bring back results that were cleared (undo), in run order."""
        self._records = dict(sorted({**self._records, **records}.items()))
        self.results_changed.emit()

    def remove_records(self, records: Iterable[int]) -> None:
        for run_id in list(records):
            self._records.pop(run_id, None)
        self.results_changed.emit()

    # -- results --------------------------------------------------------------------------------
    def results(self) -> pd.DataFrame:
        """The tidy result table (one row per run and metric), built by the engine's planner exactly
        as ``veil study`` builds it (:func:`~veil.engine.results_table`), over every batch so far."""
        records = list(self._records.values())
        rows = [row for r in records for row in r["rows"]]
        swept = list(dict.fromkeys(k for r in records for k in r["setting"]))
        return results_table(rows, swept)

    def sweep_keys(self) -> list[str]:
        """The swept parameters, then every other parameter whose value differs between runs: runs
        that differ in any of them are never taken as repeats of one another."""
        return list(self.results().attrs["sweep"])

    def metric_names(self) -> list[str]:
        return list(dict.fromkeys(row["metric"] for r in self._records.values() for row in r["rows"]))

    def table(self) -> tuple[list[str], list[list]]:
        """One row per finished run: run, method, swept values, seed, verdict, metrics, seconds. A
        metric no run could compute (it does not apply to any of their releases) has no column."""
        frame = self.results()
        keys = list(frame.attrs["sweep"])
        computed = set(frame.loc[frame["value"].notna(), "metric"]) if len(frame) else set()
        metrics = [m for m in self.metric_names() if m in computed]
        header = ["run", "method", "model", *keys, "seed", "verdict", *metrics, "seconds"]
        by_run = {run: part for run, part in frame.groupby("run", sort=False)}
        rows = []
        for r in self._records.values():
            part = by_run.get(r["run"])
            first = part.iloc[0] if part is not None else None
            values = dict(zip(part["metric"], part["value"])) if part is not None else {}
            rows.append(
                [
                    r["run"],
                    r["method"],
                    r["model"] or "none",
                    *[first[k] if first is not None else r["setting"].get(k) for k in keys],
                    r["seed"],
                    r["verdict"],
                    *[values.get(m) for m in metrics],
                    r["seconds"],
                ]
            )
        return header, rows

    def record(self, run_id: int) -> dict | None:
        return self._records.get(run_id)

    def exportable(self) -> list[RunEntry]:
        """Finished runs whose release can be written (it holds, or it makes no privacy claim)."""
        return [e for e in self.entries if e.outcome is not None and e.outcome.result is not None]

    def records(self) -> list[dict]:
        """The tidy results as JSON-ready rows (NaN becomes null) with each run's verdict, for a
        project file."""
        rows = []
        for row in self.results().to_dict("records"):
            row = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            rows.append({**row, "verdict": self._records[row["run"]]["verdict"]})
        return rows

    def restore(self, rows: Iterable[Mapping]) -> None:
        """Take back the results saved in a project (their releases are not kept: re-run to export)."""
        self._records.clear()
        fixed = {
            "run",
            "label",
            "method",
            "model",
            "repeat",
            "seed",
            "settings",
            "holds",
            "metric",
            "value",
            "seconds",
            "error",
            "verdict",
        }
        for row in rows:
            run_id = int(row["run"])
            setting = {k: v for k, v in row.items() if k not in fixed}
            rec = self._records.setdefault(
                run_id,
                {
                    "run": run_id,
                    "method": row.get("method"),
                    "model": row.get("model"),
                    "setting": setting,
                    "seed": row.get("seed", 0),
                    "seconds": _nan(row.get("seconds")),
                    "verdict": row.get("verdict") or _verdict_text(row.get("holds"), row.get("error") or ""),
                    "rows": [],
                },
            )
            rec["rows"].append(
                {
                    "run": run_id,
                    "label": row.get("method"),
                    "method": row.get("method"),
                    "model": row.get("model"),
                    **setting,
                    "repeat": row.get("repeat", 0),
                    "seed": row.get("seed", 0),
                    "settings": row.get("settings"),
                    "holds": row.get("holds"),
                    "metric": row["metric"],
                    "value": _nan(row.get("value")),
                    "seconds": _nan(row.get("seconds")),
                    "error": row.get("error") or "",
                }
            )
        self._next = max([self._next, *[k + 1 for k in self._records]])
        self.results_changed.emit()


def _nan(value) -> float:
    return float("nan") if value is None else float(value)


def _verdict_text(holds, message: str) -> str:
    if holds is None:
        return "no privacy claim"
    return ("holds: " if holds else "fails: ") + message.removeprefix("holds: ").removeprefix("fails: ")


def _record(entry: RunEntry, outcome: RunOutcome) -> dict:
    """A finished run as the results keep it: the engine's rows of it (:func:`~veil.engine.outcome_rows`)
    and what the run table shows beside them."""
    spec, planned = entry.planned.spec, entry.planned
    message = outcome.verdict if outcome.holds is not None else ""
    return {
        "run": entry.id,
        "method": spec.method.name,
        "model": spec.models_text,
        "setting": dict(planned.setting),
        "seed": spec.seed,
        "seconds": outcome.seconds,
        "verdict": _verdict_text(outcome.holds, message),
        "rows": outcome_rows(entry.id, spec, outcome, dict(planned.setting), planned.repeat),
    }


# -- the chart panel ----------------------------------------------------------------------------


class ChartState:
    """Which chart plugin draws the results, with its parameters (kept per chart)."""

    def __init__(self, name: str | None = None):
        self.name = name
        self.values: dict[str, dict] = {}
        self.changed = Event()

    def set(self, name: str, values: Mapping | None = None) -> None:
        self.name = name
        if values is not None:
            self.values[name] = dict(values)
        self.changed.emit()

    def call(self) -> PluginCall:
        return PluginCall(self.name, dict(self.values.get(self.name, {})))


# -- projects -----------------------------------------------------------------------------------


def project_of(registry, dataset: DatasetState, config: ConfigState, runs: RunsState) -> Project:
    """A project file's content: the data's source and schema, the recipe, the planned runs and
    the results so far. A configuration that cannot run yet is saved without runs."""
    if dataset.data is None or dataset.source is None:
        raise BadInput("there is no data to save a project of")
    table = dataset.table if dataset.table is not None else dataset.origin  # item sets keep their table's schema
    try:
        planned = config.plan(registry, dataset.data, dataset.recipe())
    except BadInput:
        planned = []
    sha = table.sha256 if table is not None else dataset.data.meta.get("sha256")
    source = dataclasses.replace(dataset.source, roles={}, kinds={})
    item_sets = dataset.data.meta.get("item_column") if dataset.origin is not None else None
    return Project(
        source,
        table.schema if table is not None else None,
        dataset.recipe(),
        tuple(p.spec for p in planned),
        None if source.demo else sha,
        runs.records(),
        tuple(sorted(dataset.release_sensitive)),
        item_sets,
    )


def sensitive_to_confirm(registry, dataset: DatasetState, config: ConfigState) -> list[str]:
    """The columns marked sensitive the planned runs may release, which no chosen privacy model
    protects and the user has not agreed to release yet (asked once, remembered in the project)."""
    table = dataset.table
    if table is None or not table.schema.by_role(Role.SENSITIVE):
        return []
    try:
        planned = config.plan(registry, table, dataset.recipe())
    except BadInput:
        return []  # the run itself explains what to fix
    columns: list[str] = []
    for p in planned:
        cls = registry.get("algorithm", p.spec.method.name)
        may = may_release_sensitive(table, cls, on_features=p.spec.recipe is not None, recipe=p.spec.recipe)
        model = bind_models(registry, p.spec.models)
        columns += [
            c for c in unacknowledged_sensitive(table, may, cls, model, dataset.release_sensitive) if c not in columns
        ]
    return columns


def rules_from(recipe: Recipe | None, binarisable: Iterable[str]) -> dict[str, Step | None]:
    """The dataset panel's rules that rebuild ``recipe`` (columns it leaves out are left out)."""
    if recipe is None:
        return {}
    rules: dict[str, Step | None] = {s.column: s for s in recipe.steps}
    for column in binarisable:
        rules.setdefault(column, None)
    return rules


def metric_cost_note(registry, metrics: Iterable[str], data, runs: int = 1) -> str:
    """What the chosen expensive metrics will cost, said before the runs start: an estimate from
    each metric's declared cost, and the sample they use on a large input."""
    from veil.engine import CHEAP, METRIC_SAMPLE_ROWS

    expensive = [
        registry.get("metric", m)
        for m in metrics
        if m in registry.names("metric") and registry.get("metric", m).cost != CHEAP
    ]
    if not expensive or data is None:
        return ""
    rows = data.n_rows
    columns = len(data.columns) if hasattr(data, "columns") else data.n_features
    seconds = runs * sum(cls.estimate_seconds(rows, columns) for cls in expensive)
    names = ", ".join(cls.name for cls in expensive)
    text = f"Expensive metrics ({names}): about {_duration(seconds)} in all"
    if rows > METRIC_SAMPLE_ROWS:
        text += f", each on a seeded sample of {METRIC_SAMPLE_ROWS:,} of the {rows:,} records"
    return text + "."


def memory_note(registry, planned, data) -> tuple[str, str]:
    """(what the runs need of memory, or "" and why they cannot run): the engine's estimate of the
    largest run, said before the runs start, against what the worker may allocate."""
    if data is None or not planned:
        return "", ""
    estimate = estimate_runs(registry, data, [run.spec for run in planned])
    free, where = available_memory()
    try:
        check_memory(estimate, (free, where))
    except BadInput as exc:
        return "", str(exc)[:1].upper() + str(exc)[1:] + "."
    return f"Memory: {estimate.text()} at most; {format_bytes(free)} {where}.", ""


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
