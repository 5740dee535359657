"""The configuration panel's state: privacy models, methods, metrics, sweeps, seed and repeats,
turned into runs. What fits what (which methods take the data, which models and metrics fit a
method) is the engine registry's to say (:meth:`~veil.engine.Registry.methods_for`, ``model_fit``,
``metric_fit``); this module asks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from veil.engine import (
    BINARY,
    SETS,
    TABLE,
    TRANSACTIONS,
    BadInput,
    Judgement,
    PluginCall,
    Recipe,
    Role,
    RunSpec,
    Study,
    Table,
    data_setting,
    fitting_metrics,
    set_valued,
)

from .events import Event
from .setvalued_view import itemset_columns


def native_to_sets(algorithm) -> bool:
    """Whether ``algorithm`` declares it works on item sets as they are (not only on a binary matrix)."""
    return SETS in algorithm.accepts or TRANSACTIONS in algorithm.accepts


def model_for(registry, data, current: str | None) -> str | None:
    """The privacy model to show for newly opened data. Tables keep ``current``: their models depend
    on the roles. For set-valued records, of the models the methods taking item sets as they are
    work under (by the kinds of judgement they share), the one most particular to those methods:
    the one judging the fewest kinds those methods do not make (``current`` when it is as
    particular); without such a method, ``current`` when it can judge the records."""
    if not set_valued(data):
        return current
    natives = [c for c in registry.methods_for(data) if native_to_sets(c) and c.satisfies]
    made = {Judgement(j) for c in natives for j in c.satisfies}

    def beyond(name: str) -> int:  # the kinds the model judges that no such method makes
        return len({Judgement(j) for j in registry.get("privacy-model", name).judges} - made)

    fitting = [m for m in registry.models_for(data=data) if any(registry.model_fit(m, data, c) for c in natives)]
    current_fits = current is None or registry.model_fit(current, data)
    if not fitting:
        return current if current_fits else None
    best = min(fitting, key=beyond)
    if current in fitting and beyond(current) == beyond(best):
        return current
    return best


def metric_fits(registry, metric: str, methods: Iterable[str], model: str | None) -> bool:
    """Whether the metric (``NAME`` or ``NAME:params``) says something of a run of one of ``methods``
    (all metrics fit while no method is chosen)."""
    name, methods = PluginCall.parse(metric).name, list(methods)
    return not methods or any(registry.metric_fit(name, m, model) for m in methods)


@dataclass
class PluginChoice:
    """A plugin's settings in the form: one value per parameter, or a list of values to sweep."""

    name: str
    values: dict = field(default_factory=dict)
    sweeps: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)  # field → what is wrong with what the form holds (never run)

    def fixed(self) -> dict:
        return {k: v for k, v in self.values.items() if k not in self.sweeps}


@dataclass(frozen=True)
class PlannedRun:
    spec: RunSpec
    setting: dict  # swept parameter -> value of this run
    repeat: int = 0
    fixed: tuple[str, ...] = ()  # what else sets this run apart: the model and non-default parameters
    data: dict = field(default_factory=dict)  # the roles and hierarchies it ran with (engine's data_setting)

    @property
    def label(self) -> str:
        parts = [*self.fixed, *(f"{k} = {_show(v)}" for k, v in self.setting.items())]
        if self.repeat:
            parts.append(f"repeat {self.repeat + 1}")
        name, then = self.spec.method.name, self.spec.then
        if then is not None:  # its second step, with the values set on it (as a model's are shown)
            name += f" then {then.name}"
            if then.params:
                parts.append(" ".join([then.name, *(f"{k} = {_show(v)}" for k, v in then.params.items())]))
        return name + (f" ({', '.join(parts)})" if parts else "")


def _non_defaults(cls, values: Mapping, skip) -> list[str]:
    """``key = value`` for each parameter of plugin ``cls`` set away from its default."""
    defaults = {spec.name: spec.default for spec in cls.param_specs()}
    return [f"{k} = {_show(v)}" for k, v in values.items() if k not in skip and k in defaults and v != defaults[k]]


def _refusal(registry, kind: str, name: str, errors: Mapping) -> str:
    title = registry.get(kind, name).title or name
    return f"fix the parameters of {title} first: {next(iter(errors.values()))}"


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
        self.metric_errors: dict[str, dict] = {}  # metric -> the fields its form refuses
        self.seed = 0
        self.repeats = 1
        self.binary: set[str] = set()  # methods taking a table or features, asked to take the features
        # method -> its second step: a method declaring it perturbs (Algorithm.perturbs), with its values
        self.then: dict[str, PluginChoice] = {}
        # quasi-identifiers aggregated inside each run's groups instead of grouped on: {column: function}
        # (RunSpec.aggregates); a method whose release has no groups refuses them
        self.aggregates: dict[str, str] = {}
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

    def set_params(self, kind: str, name: str, values: Mapping, sweeps: Mapping, errors: Mapping | None = None) -> None:
        """A plugin's values and sweeps as its form holds them; ``errors``: the fields the form refuses
        (their values left out), which keep every run of the plugin from being planned."""
        choice = self.choice(kind, name)
        choice.values, choice.sweeps = dict(values), {k: list(v) for k, v in sweeps.items()}
        choice.errors = dict(errors or {})
        self.changed.emit()

    def select(self, method: str, on: bool = True) -> None:
        if on and method not in self.selected:
            self.selected.append(method)
        elif not on and method in self.selected:
            self.selected.remove(method)
        self.changed.emit()

    def set_then(
        self, method: str, name: str | None, values: Mapping | None = None, errors: Mapping | None = None
    ) -> None:
        """Give ``method``'s runs a second step, the method ``name`` with ``values`` (None: none)."""
        if name is None:
            self.then.pop(method, None)
        else:
            self.then[method] = PluginChoice(name, dict(values or {}), errors=dict(errors or {}))
        self.changed.emit()

    def set_aggregate(self, column: str, function: str | None) -> None:
        """Aggregate ``column`` inside the groups by ``function`` (None: group on it as before)."""
        if function is None:
            self.aggregates.pop(column, None)
        else:
            self.aggregates[column] = function
        self.changed.emit()

    def set_metrics(self, names: Iterable[str]) -> None:
        self.metrics = list(names)
        self.changed.emit()

    def set_metric_params(self, name: str, values: Mapping, errors: Mapping | None = None) -> None:
        """A metric's own parameters (only those that differ from the defaults are kept)."""
        self.metric_params[name] = dict(values)
        if errors:
            self.metric_errors[name] = dict(errors)
        else:
            self.metric_errors.pop(name, None)
        self.changed.emit()

    def refused(self, registry) -> str | None:
        """What a form of the chosen plugins refuses (a value out of range, a word for a number), said
        as the plan's error: a run never goes ahead on the defaults in its place."""
        chosen = [("privacy-model", self.choice("privacy-model", n)) for n in self.model_names()]
        for name in self.selected:
            chosen.append(("algorithm", self.choice("algorithm", name)))
            if name in self.then:
                chosen.append(("algorithm", self.then[name]))
        for kind, choice in chosen:
            if choice.errors:
                return _refusal(registry, kind, choice.name, choice.errors)
        for name in self.metrics:
            if self.metric_errors.get(name):
                return _refusal(registry, "metric", name, self.metric_errors[name])
        return None

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
        fixed, setup = self._fixed(registry, study), data_setting(data)
        population = getattr(data, "population", None)
        if population is not None and any(registry.get("privacy-model", m.name).reads_population for m in study.models):
            # the roles may have changed since the population was opened: each quasi-identifier must be in it
            population.check_covers(data, data.schema.by_role(Role.QUASI_IDENTIFIER))
        return [
            PlannedRun(fitting_metrics(registry, run.spec), run.setting, run.repeat, fixed[run.spec.method.name], setup)
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
        refused = self.refused(registry)
        if refused:
            raise BadInput(refused)
        models = [self.choice("privacy-model", n) for n in self.model_names()]
        for name in self.selected:  # the methods the registry offers for this data (Registry.method_fit)
            fit = registry.method_fit(name, data)
            if not fit:
                cls = fit.plugin
                if native_to_sets(cls) and itemset_columns(data if isinstance(data, Table) else None):
                    raise BadInput(f"{cls.title} works on item sets: choose Anonymise these item sets under Item sets")
                raise BadInput(f"{cls.title} {fit.reason}; choose another method")
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
            then = self.then.get(name)
            if then is not None:
                opts["then"] = PluginCall(then.name, then.fixed())
            if self.aggregates:
                opts["aggregate"] = dict(self.aggregates)
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
        methods = list(
            dict.fromkeys(p.spec.method.name + (f" then {p.spec.then.name}" if p.spec.then else "") for p in planned)
        )
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
        self.aggregates = dict(first.aggregates)
        self.then = {}
        for r in runs:  # each method's second step, as its first run has it
            if r.then is not None and r.method.name not in self.then:
                self.then[r.method.name] = PluginChoice(r.then.name, dict(r.then.params))
        self.metrics, self.metric_params, self.metric_errors = [], {}, {}
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
