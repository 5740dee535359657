"""Studies: methods × parameter values × repeats, collected into one tidy result table.

A study file is JSON::

    {"name": "k sweep on the demo",
     "data": {"demo": true},
     "model": "k-anonymity",            (or "models": ["k-anonymity:k=5", "t-closeness:t=0.2"])
     "methods": ["all-features", {"name": "greedy-hamdist", "params": {"on_violation": "skip"}}],
     "sweep": {"k": [5, 8, 11]},
     "repeats": 1, "seed": 0,
     "metrics": ["auc", "sfc"],
     "charts": [{"name": "metric-bars", "params": {"metric": "auc", "x": "k"}}]}

The data section may name the population the data was drawn from (δ-presence, k-map), read with the
data's options, its path resolved as the data's: ``"population": {"path": "people.csv"}``, or
``{"path": "people.csv", "subset_column": "in_study"}`` with no data path when a 1/0 column of the
population marks the data's records.

A swept parameter goes to whichever of the method and the privacy model declares it. Repeat r of a
run uses seed ``seed + r``. The result table has one row per run and metric with the columns
``run, label, method, model, <swept parameters>, repeat, seed, settings, holds, metric, value, seconds,
error``; ``settings`` is the run's full definition but its seed (:func:`settings_of`), so runs that
differ in any parameter are never averaged as repeats.

A method entry may carry study options: ``"label"`` (its row name; default the method name),
``"model"`` or ``"models"`` (its own privacy models, overriding the study's; ``null`` for none), ``"repeats"`` (for a
randomised method), ``"sweep"`` (values of its own parameters to sweep, beside the study's sweep),
``"features": false`` (a method that takes tables too runs on the table, not on the study's feature
rules; a method taking only tables never gets them) and ``"fixed": true`` (a baseline the sweep does not change, run
once per value), and ``"then"``: a second step, a method that perturbs the first's release record for
record (``"noise-addition:columns=income"`` or ``{"name": …, "params": …}``; docs/perturbation.md, "After a
generalisation"); its rows' label names both steps ("global-recoding then noise-addition") and its
settings hold the second step, so a run with one and a run without are never repeats of each other; and
``"aggregate"``: ``{"COLUMN": "FUNCTION"}``, quasi-identifiers the method does not group on, aggregated inside
its release's groups (docs/anonymisation.md#aggregating-a-column-inside-the-groups).

One planner: :meth:`Study.plan` makes the runs (checked against the data when given), :func:`run_planned`
runs one, :func:`outcome_rows` turns it into rows and :func:`results_table` into the result table. ``veil
study`` and the desktop (which makes one :class:`Study` of its configuration per batch) call exactly these.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..data.forms import BINARY, labels_of
from ..data.datasource import DataSource
from ..base.errors import BadInput, PrivacyCheckFailed
from .jobs import Context
from ..model.params import param_specs
from ..data.recipe import Recipe
from ..data.table import Role
from ..base.validate import MAX_SEED, get, get_seed, in_file, read_json_object
from ..model.aggregation import parse_aggregates
from ..model.bound import bind_models
from .chain import second_step
from .runs import PluginCall, RunSpec, aggregating_method, check_feasible, execute, metric_names

from ..base.constants import DEFAULT_MAX_RUNS  # noqa: E402  (re-exported: a study larger is refused unless raised)

RESULT_COLUMNS = [
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
]


@dataclass(frozen=True)
class Study:
    methods: tuple[PluginCall, ...]
    data: DataSource = field(default_factory=lambda: DataSource(demo=True))
    model: PluginCall | None = None  # the first of ``models`` (give either)
    sweep: dict = field(default_factory=dict)
    # None: each method's default_repeats (1, or 10 for RF as docs/reference.md#feature-selection says)
    repeats: int | None = None
    seed: int = 0
    metrics: tuple[str, ...] = ()
    charts: tuple[PluginCall, ...] = ()
    recipe: Recipe | None = None
    name: str = "study"
    options: tuple[dict, ...] = ()  # per method: "label", "models" (overrides the study's; null: none), "repeats"
    models: tuple[PluginCall, ...] = ()  # every run's privacy models (combined: the release satisfies all)
    max_runs: int = DEFAULT_MAX_RUNS  # a larger grid is refused before anything runs (raise it to allow one)

    def __post_init__(self):
        models = tuple(self.models) or ((self.model,) if self.model is not None else ())
        if self.model is not None and models[0] != self.model:
            raise BadInput("give a study's privacy models either as model or as models, not both")
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "model", models[0] if models else None)

    @classmethod
    def from_dict(cls, d: Mapping, base: Path | None = None) -> Study:
        where = "study"
        methods = get(d, "methods", list, where=where, required=True)
        if not methods:
            raise BadInput("a study needs at least one method under 'methods'")
        sweep = get(d, "sweep", dict, {}, where=where)
        for key, values in sweep.items():
            if not isinstance(values, list) or not values:
                raise BadInput(f"sweep {key!r} needs a non-empty list of values")
        repeats = get(d, "repeats", int, None, where=where)
        if repeats is not None and repeats < 1:
            raise BadInput("repeats must be ≥ 1")
        recipe = get(d, "recipe", dict, None, where=where)
        return cls(
            methods=tuple(PluginCall.parse(m) for m in methods),
            options=tuple(_options(m) for m in methods),
            data=DataSource.from_dict(get(d, "data", dict, {"demo": True}, where=where), base),
            models=_models_of(d),
            sweep=dict(sweep),
            repeats=repeats,
            seed=get_seed(d, where=where),
            metrics=tuple(str(m) for m in get(d, "metrics", list, [], where=where)),
            charts=tuple(PluginCall.parse(c) for c in get(d, "charts", list, [], where=where)),
            recipe=Recipe.from_dict(recipe) if recipe else None,
            name=str(d.get("name", "study")),
            max_runs=_max_runs(get(d, "max_runs", int, DEFAULT_MAX_RUNS, where=where)),
        )

    @classmethod
    def load(cls, path: str | Path) -> Study:
        p = Path(path)
        return in_file(p, cls.from_dict, read_json_object(p, "study file"), p.parent)

    def check_charts(self, registry) -> None:
        """Every chart is known, its parameters valid, and the metrics it draws computed."""
        computed = set(self.metrics) | ({"privacy-value"} if self.models else set())
        for call in self.charts:
            for metric in _chart_metrics(registry, call):
                if metric not in computed:
                    have = ", ".join(sorted(computed)) or "none"
                    raise BadInput(
                        f"chart {call.name!r} draws metric {metric!r}, which the study does not "
                        f"compute (it computes: {have})"
                    )

    def size(self, registry) -> int:
        """How many runs the grid has: methods × swept values × repeats, counted without making them."""
        return sum(
            math.prod(len(v) for v in self.sweep_of(i).values()) * self._repeats(registry, call, i)
            for i, call in enumerate(self.methods)
        )

    @property
    def sweep_keys(self) -> list[str]:
        """Every swept parameter: the study's, then each method's own (the result table's columns)."""
        keys = list(self.sweep)
        for i in range(len(self.methods)):
            keys += [k for k in self.sweep_of(i) if k not in keys]
        return keys

    def sweep_of(self, i: int) -> dict:
        """Method ``i``'s grid: the study's sweep and its own (a key swept in both places is refused)."""
        own = (self.options[i] if i < len(self.options) else {}).get("sweep") or {}
        for key, values in own.items():
            if key in self.sweep and list(self.sweep[key]) != list(values):
                raise BadInput(
                    f"{key} is swept both by the study and by method {self.methods[i].name!r}; sweep it in one place"
                )
        then = (self.options[i] if i < len(self.options) else {}).get("then_sweep") or {}
        for key, values in then.items():
            if key in self.sweep or key in own:
                raise BadInput(
                    f"{key} is swept both by the second step of {self.methods[i].name!r} and by "
                    f"{'the study' if key in self.sweep else 'the method'}; sweep it in one place"
                )
        return {**self.sweep, **own, **then}

    def _repeats(self, registry, call: PluginCall, i: int) -> int:
        opts = self.options[i] if i < len(self.options) else {}
        return opts.get("repeats") or self.repeats or registry.get("algorithm", call.name).default_repeats

    def check_size(self, registry) -> int:
        """The number of runs; BadInput when it passes ``max_runs`` or the seeds would pass 2³²−1."""
        count = self.size(registry)
        if count > self.max_runs:
            raise BadInput(
                f"the study has {count:,} runs, more than the limit of {self.max_runs:,}; make the grid "
                f"smaller, or raise the limit (--max-runs or the study's \"max_runs\")"
            )
        most = max(self._repeats(registry, call, i) for i, call in enumerate(self.methods))
        if self.seed + most - 1 > MAX_SEED:
            raise BadInput(f"seed {self.seed} + {most} repeats passes the largest seed, {MAX_SEED}; lower the seed")
        return count

    def runs(self, registry) -> list[RunSpec]:
        """Every run of the grid, with swept values routed to the plugin that declares them."""
        return list(self.iter_runs(registry))

    def iter_runs(self, registry) -> Iterator[RunSpec]:
        """The runs of :meth:`runs` one at a time; the whole grid is checked before the first is made."""
        metric_names(registry, self.metrics)
        self.check_charts(registry)
        self.check_size(registry)
        plans = [self._plan(registry, i, call) for i, call in enumerate(self.methods)]
        recipes = [self._recipe(registry, i, call) for i, call in enumerate(self.methods)]
        for i, (call, base_models, label, method_keys, then, aggregates) in enumerate(plans):
            sweep = self.sweep_of(i)
            own = set(sweep) - set(self.sweep)  # a method's own sweep goes to the method (or its second step) alone
            then_only = set((self.options[i] if i < len(self.options) else {}).get("then_sweep") or {})
            then_keys = _declared(registry, "algorithm", then)
            grid = list(itertools.product(*sweep.values())) if sweep else [()]
            for values in grid:
                setting = dict(zip(sweep, values))
                first = {k: v for k, v in setting.items() if k in method_keys and k not in then_only}
                method = _typed(registry, "algorithm", PluginCall(call.name, {**call.params, **first}))
                shared = {k: v for k, v in setting.items() if k not in own}
                models = tuple(_typed(registry, "privacy-model", _with_swept(registry, m, shared)) for m in base_models)
                step = then
                if then is not None:  # a value the first step does not take goes to the second (its own sweep always)
                    second = {k: v for k, v in setting.items() if k in then_keys and (k in then_only or k not in first)}
                    step = _typed(registry, "algorithm", PluginCall(then.name, {**then.params, **second}))
                for r in range(self._repeats(registry, call, i)):
                    yield RunSpec(
                        method,
                        models,
                        self.seed + r,
                        self.metrics,
                        recipes[i],
                        label,
                        setting,
                        then=step,
                        aggregates=aggregates,
                    )

    def plan(self, registry, data=None) -> list[PlannedRun]:
        """Every run of the study, numbered, with its swept values and repeat: the one planner of
        ``veil study`` and the desktop. Each run's parameters are checked now, and with ``data``
        whether its method can run on it (:func:`check_data`), so a study never stops half-way
        over something it could have said before the first run."""
        planned = []
        checked: set[str] = set()
        for i, spec in enumerate(self.iter_runs(registry)):
            algorithm = registry.get("algorithm", spec.method.name)
            algorithm.params(spec.method.params)
            if spec.then is not None:  # a second step that perturbs, after a method releasing a table's records
                second_step(registry, algorithm, spec.then)
            aggregating_method(registry, algorithm, spec)
            for call in spec.models:
                registry.get("privacy-model", call.name).params(call.params)
            key = settings_of(spec)
            if data is not None and key not in checked:
                check_data(registry, data, spec)
                checked.add(key)
            planned.append(PlannedRun(i, spec, dict(spec.setting), spec.seed - self.seed))
        return planned

    def _plan(self, registry, i: int, call: PluginCall):
        """Method ``i``'s privacy models, row label and the swept keys its method declares."""
        opts = self.options[i] if i < len(self.options) else {}
        base_models = opts["models"] if "models" in opts else self.models
        model_keys = set().union(*(_declared(registry, "privacy-model", m) for m in base_models))
        method_keys = _declared(registry, "algorithm", call)
        then = opts.get("then")
        then_keys = _declared(registry, "algorithm", then)
        for key in self.sweep:
            if key not in method_keys | model_keys | then_keys and not opts.get("fixed"):
                steps = f"{call.name!r}, its second step" if then is not None else repr(call.name)
                raise BadInput(f"swept parameter {key!r} belongs to neither {steps} nor the privacy model")
        for key in opts.get("sweep") or {}:
            if key not in method_keys | then_keys:
                raise BadInput(f"swept parameter {key!r} is not a parameter of {call.name!r} or its second step")
        for key in opts.get("then_sweep") or {}:
            if key not in then_keys:
                raise BadInput(f"swept parameter {key!r} is not a parameter of the second step {then.name!r}")
        label = opts.get("label") or (f"{call.name} then {then.name}" if then is not None else call.name)
        return call, base_models, label, method_keys, then, opts.get("aggregate")

    def _recipe(self, registry, i: int, call: PluginCall) -> Recipe | None:
        """The feature rules method ``i`` runs on: the study's, for a method that takes binary
        features, unless its entry says ``"features": false`` (a method that also takes the table
        as it is); a method that takes only tables never has any."""
        opts = self.options[i] if i < len(self.options) else {}
        if self.recipe is None or BINARY not in registry.get("algorithm", call.name).accepts:
            return None
        return self.recipe if opts.get("features", True) else None

    def with_models(self, models) -> Study:
        """The same study with every run under ``models`` (the ``--model`` flags of ``veil study``)."""
        options = tuple({k: v for k, v in o.items() if k != "models"} for o in self.options)
        models = tuple(models)
        return dataclasses.replace(self, models=models, model=models[0] if models else None, options=options)


def _max_runs(value: int) -> int:
    if value < 1:
        raise BadInput(f"max_runs must be ≥ 1, got {value}")
    return value


def _models_of(d: Mapping) -> tuple[PluginCall, ...]:
    """A study's or method entry's privacy models: ``"models": [...]`` or ``"model": …`` (null: none)."""
    if "models" in d:
        listed = get(d, "models", list, [], where="study")
        return tuple(PluginCall.parse(m) for m in listed)
    model = PluginCall.parse(d.get("model"))
    return (model,) if model is not None else ()


def _with_swept(registry, call: PluginCall, setting: dict) -> PluginCall:
    """``call`` with the swept values its plugin declares."""
    keys = _declared(registry, "privacy-model", call)
    return PluginCall(call.name, {**call.params, **{k: v for k, v in setting.items() if k in keys}})


def _options(entry) -> dict:
    """A method entry's study options: its row label, its own privacy model, its repeats."""
    if not isinstance(entry, Mapping):
        return {}
    opts: dict = {}
    if "label" in entry:
        opts["label"] = get(entry, "label", str, where="method")
    if "model" in entry or "models" in entry:
        opts["models"] = _models_of(entry)
    if "repeats" in entry:
        opts["repeats"] = get(entry, "repeats", int, where="method")
        if opts["repeats"] < 1:
            raise BadInput("repeats must be ≥ 1")
    if "sweep" in entry:  # the method's own swept parameters
        sweep = get(entry, "sweep", dict, where="method")
        for key, values in sweep.items():
            if not isinstance(values, list) or not values:
                raise BadInput(f"sweep {key!r} needs a non-empty list of values")
        opts["sweep"] = dict(sweep)
    if "features" in entry:  # false: the method takes the table as it is, not the study's features
        opts["features"] = get(entry, "features", bool, where="method")
    if entry.get("then") is not None:  # a second step: a method perturbing the first's release
        then = entry["then"]
        if not isinstance(then, (str, Mapping)):
            raise BadInput(f"a method's 'then' names a method that perturbs its release, not {then!r}")
        opts["then"] = PluginCall.parse(then)
        if isinstance(then, Mapping) and "sweep" in then:  # the second step's own swept parameters
            sweep = get(then, "sweep", dict, where="second step")
            for key, values in sweep.items():
                if not isinstance(values, list) or not values:
                    raise BadInput(f"sweep {key!r} needs a non-empty list of values")
            opts["then_sweep"] = dict(sweep)
    if entry.get("aggregate"):  # quasi-identifiers aggregated inside the release's groups: {column: function}
        opts["aggregate"] = parse_aggregates(get(entry, "aggregate", dict, where="method"))
    if "fixed" in entry:  # a baseline that ignores the sweep (e.g. the full feature set): one row per value
        opts["fixed"] = get(entry, "fixed", bool, where="method")
    return opts


def _chart_metrics(registry, call: PluginCall) -> list[str]:
    chart = registry.get("chart", call.name)
    params = chart.params(call.params)
    return [getattr(params, s.name) for s in chart.param_specs() if s.name in ("metric", "privacy", "utility")]


def _typed(registry, kind: str, call: PluginCall) -> PluginCall:
    """``call`` with each value its plugin declares converted to the parameter's type, so ``k=2`` typed on a
    command line and ``"k": 2`` in a study file make the same run (equal settings: repeats of each other).
    A value that does not convert is left as given, for the plan's check to name it."""
    specs = {s.name: s for s in param_specs(registry.get(kind, call.name).Params)}
    values = {}
    for key, value in call.params.items():
        try:
            values[key] = specs[key].convert(value, call.name) if key in specs else value
        except BadInput:
            values[key] = value
    return PluginCall(call.name, values)


def _declared(registry, kind: str, call: PluginCall | None) -> set[str]:
    if call is None:
        return set()
    return {s.name for s in param_specs(registry.get(kind, call.name).Params)}


@dataclass(frozen=True)
class PlannedRun:
    """One run of a study: its number in the study, its spec, its swept values and its repeat."""

    index: int
    spec: RunSpec
    setting: dict  # swept parameter -> this run's value
    repeat: int = 0


# the forms a dataset of each form converts to (engine/data.py's convert, without converting)
def check_data(registry, data, spec: RunSpec) -> None:
    """BadInput saying what to fix when ``spec`` cannot run on ``data``: a method that does not take
    its form, that needs a privacy model or one it cannot work under, a target, or column roles it
    lacks. The same checks for ``veil study`` and the desktop, made before any run starts."""
    algorithm = registry.get("algorithm", spec.method.name)
    name = algorithm.title or algorithm.name
    fit = registry.method_fit(algorithm, data)  # what the desktop offers and veil run takes
    if not fit:
        raise BadInput(f"{name} {fit.reason}; choose another method")
    if spec.then is not None:
        fit = registry.method_fit(spec.then.name, data)
        if not fit:
            then = registry.get("algorithm", spec.then.name)
            raise BadInput(f"{then.title or then.name} (the second step) {fit.reason}; choose another")
    for m in spec.models:
        fit = registry.model_fit(m.name, data)
        if not fit:
            raise BadInput(f"privacy model {m.name!r} {fit.reason}; choose another privacy model")
    if algorithm.needs_model and not spec.models:
        choices = registry.models_for(algorithm)
        raise BadInput(
            f"{name} needs a privacy model ({', '.join(choices or ('none it works under is installed',))}); choose one"
        )
    for m in spec.models:
        problem = registry.model_mismatch(algorithm, registry.get("privacy-model", m.name))
        if problem:
            raise BadInput(f"{name} {problem}; choose another privacy model or method")
    if algorithm.needs_labels and labels_of(data) is None:
        raise BadInput(f"{name} needs a target column; mark one as the target")
    problem = algorithm.role_problem(data, dict(spec.method.params))
    if problem:
        raise BadInput(f"{name} {problem}")
    check_feasible(data, bind_models(registry, spec.models))


@dataclass(frozen=True)
class Outcome:
    """One finished run as a result table needs it: a release that fails its model is an outcome
    (``holds`` False, its message in ``verdict``), not an error; ``result`` is kept for export."""

    holds: bool | None
    verdict: str
    privacy_value: float | None
    metrics: dict
    seconds: float
    result: object = None  # the RunResult, when the release may be written


def run_planned(
    registry, data, spec: RunSpec, ctx: Context, version: str = "", *, release_household: bool = False
) -> Outcome:
    """Execute one planned run (the desktop's worker and :func:`run_study` both call this);
    ``release_household``: the user agreed to release the household id (:func:`execute`)."""
    try:
        result = execute(registry, data, spec, ctx, version=version, release_household=release_household)
    except PrivacyCheckFailed as exc:
        value = float(exc.verdict.value) if exc.verdict is not None else None
        metrics, seconds = {m: float("nan") for m in spec.metrics}, float("nan")
        if registry.get("algorithm", spec.method.name).baseline:  # the reference keeps its utility
            free = dataclasses.replace(spec, models=())  # its second step too
            reference = execute(registry, data, free, ctx, version=version, release_household=release_household)
            metrics, seconds = {k: float(v) for k, v in reference.metrics.items()}, reference.seconds
        return Outcome(False, str(exc), value, metrics, seconds)
    verdict = result.verdict
    return Outcome(
        None if verdict is None else bool(verdict.holds),
        "no privacy model: nothing was checked" if verdict is None else verdict.message,
        None if verdict is None else float(verdict.value),
        {k: float(v) for k, v in result.metrics.items()},
        result.seconds,
        result,
    )


def settings_of(spec: RunSpec, data: dict | None = None) -> str:
    """Everything that defines a run but its seed, as canonical JSON: runs with equal settings are
    repeats of one another; runs with different settings are never averaged together. ``data``: what
    the run's data was set up with (:func:`data_setting`), where runs of one batch may differ in it
    (the desktop's runs, between which the user may change a hierarchy or a role)."""
    out = {
        "method": spec.method.to_dict(),
        "models": [m.to_dict() for m in spec.models],
        "recipe": spec.recipe.to_dict() if spec.recipe else None,
    }
    if spec.then is not None:
        out["then"] = spec.then.to_dict()
    if spec.aggregates:
        out["aggregate"] = dict(spec.aggregates)
    if data:
        out["data"] = data
    return json.dumps(out, sort_keys=True, default=str)


def data_setting(data) -> dict:
    """What defines a run in its data beyond the records: the quasi-identifiers, the sensitive
    columns and each attached hierarchy (its height and a short digest of its content)."""
    schema = getattr(data, "schema", None)
    if schema is None:
        return {}
    import hashlib

    hierarchies = {}
    for column in schema.columns:
        if column.hierarchy is not None:
            text = json.dumps(column.hierarchy.to_dict(), sort_keys=True, default=str)
            digest = hashlib.sha256(text.encode()).hexdigest()[:4]
            hierarchies[column.name] = f"{column.hierarchy.height} levels #{digest}"
    return {
        "quasi-identifiers": list(schema.by_role(Role.QUASI_IDENTIFIER)),
        "sensitive": list(schema.by_role(Role.SENSITIVE)),
        "hierarchies": hierarchies,
    }


def outcome_rows(
    run: int, spec: RunSpec, outcome: Outcome, setting: dict, repeat: int, data: dict | None = None
) -> list[dict]:
    """The tidy rows of one run (one per metric, plus ``privacy-value`` under a model); ``data``: see
    :func:`settings_of`."""
    base = {
        "run": run,
        "label": spec.label or spec.method.name,
        "method": spec.method.name,
        "model": spec.models_text,
        **{parameter_column(k): v for k, v in setting.items()},
        "repeat": repeat,
        "seed": spec.seed,
        "settings": settings_of(spec, data),
        "holds": outcome.holds,
    }
    metrics = dict(outcome.metrics)
    if outcome.privacy_value is not None:
        metrics.setdefault("privacy-value", outcome.privacy_value)
    error = outcome.verdict if outcome.holds is False else ""
    return [
        {**base, "metric": m, "value": float(v), "seconds": outcome.seconds, "error": error} for m, v in metrics.items()
    ]


def results_frame(rows: Sequence[dict], sweep: Sequence[str]) -> pd.DataFrame:
    """The tidy result table from :func:`outcome_rows`, in the study's column order."""
    columns = [
        "run",
        "label",
        "method",
        "model",
        *sweep,
        "repeat",
        "seed",
        "settings",
        "holds",
        "metric",
        "value",
        "seconds",
        "error",
    ]
    frame = pd.DataFrame(list(rows), columns=columns)
    frame.attrs["sweep"] = list(sweep)
    return frame


def parameter_column(key: str) -> str:
    """The result table's column of parameter ``key``: its name, unless a column of the table
    already has it (a method's parameter called ``seconds``), then ``"<key> (parameter)"``."""
    return f"{key} (parameter)" if key in RESULT_COLUMNS else key


def results_table(rows: Sequence[dict], sweep: Sequence[str] = ()) -> pd.DataFrame:
    """The tidy result table of planned runs, from their :func:`outcome_rows`: of one study, or of
    several (the desktop's batches, each one study), so the command line and the desktop show the
    same table for the same runs.

    Its parameter columns are the swept ones (``sweep``, in order), then every other parameter (of
    the method, a model, or the feature rules) whose value differs between runs of the same label:
    runs differing in it are never taken as repeats. A label is widened, where its runs differ, by
    the model and by each parameter column but the first (a chart's x axis by default), so a chart
    grouping by label and x averages repeats only.
    """
    rows = [dict(r) for r in rows]
    params = {}  # run -> its parameters, read from its settings (None: unknown, e.g. an old project)
    for r in rows:
        params.setdefault(r["run"], _parameters(r.get("settings")))
    runs = list({r["run"]: r for r in rows}.values())  # one row per run
    keys = list(dict.fromkeys(sweep))
    by_label: dict = {}
    for r in runs:
        by_label.setdefault(r["label"], []).append(r)

    def value(r, key):
        column = parameter_column(key)
        return r[column] if column in r else (params[r["run"]] or {}).get(key)

    for group in by_label.values():
        known = [r for r in group if params[r["run"]] is not None]
        for key in dict.fromkeys(k for r in known for k in params[r["run"]]):
            if key not in keys and len({repr(value(r, key)) for r in known}) > 1:
                keys.append(key)
    widen = {}
    for label, group in by_label.items():
        parts = [label]
        if len({r["model"] for r in group}) > 1:
            parts.append("{model}")
        parts += [key for key in keys[1:] if len({repr(value(r, key)) for r in group}) > 1]
        widen[label] = parts
    out = []
    for r in rows:
        parts = widen[r["label"]]
        label = " · ".join(
            [parts[0]]
            + [(r["model"] or "no model") if p == "{model}" else f"{p} = {_show(value(r, p))}" for p in parts[1:]]
        )
        out.append({**r, "label": label, **{parameter_column(k): value(r, k) for k in keys}})
    return results_frame(out, [parameter_column(k) for k in keys])


def _parameters(settings) -> dict | None:
    """A run's parameters from its ``settings``: the method's, then each model's, and its feature
    rules (a short name equal for equal rules)."""
    if not settings:
        return None
    try:
        d = json.loads(settings)
    except (TypeError, ValueError):
        return None
    out = dict((d.get("method") or {}).get("params") or {})
    for model in d.get("models") or []:
        for k, v in ((model or {}).get("params") or {}).items():
            out.setdefault(k, v)
    then = d.get("then") or {}
    for k, v in (then.get("params") or {}).items():  # the second step's, named apart where the first has one
        out.setdefault(k if k not in out else f"{then.get('name')} {k}", v)
    if d.get("recipe"):
        import hashlib

        text = json.dumps(d["recipe"], sort_keys=True, default=str)
        out["features"] = f"rules {hashlib.sha256(text.encode()).hexdigest()[:6]}"
    setup = d.get("data") or {}
    for key in ("quasi-identifiers", "sensitive"):
        if key in setup:
            out[key] = ", ".join(setup[key]) or "none"
    hierarchies = setup.get("hierarchies") or {}
    for column in dict.fromkeys([*setup.get("quasi-identifiers", []), *hierarchies]):
        out[f"hierarchy of {column}"] = hierarchies.get(column, "generated")
    return out


def _show(value) -> str:
    if isinstance(value, str) and not value:
        return "(none)"  # an empty parameter (no weights, no levels named) said, not left blank
    return f"{value:g}" if isinstance(value, float) else str(value)


def run_study(registry, study: Study, ctx: Context | None = None, data=None, version: str = "") -> pd.DataFrame:
    """Run every run of ``study``; a run whose release fails its model is recorded, not fatal."""
    ctx = ctx or Context(study.seed)
    total = study.check_size(registry)
    data = data if data is not None else study.data.load(registry)
    rows, setup = [], data_setting(data)  # as the desktop's runs record it
    for run in study.plan(registry, data):
        i, spec = run.index, run.spec
        ctx.progress(i / total, f"run {i + 1} of {total}: {spec.method.name}")  # raises Cancelled on request
        outcome = run_planned(registry, data, spec, ctx.child(i / total, (i + 1) / total, spec.seed), version)
        rows += outcome_rows(i, spec, outcome, run.setting, run.repeat, setup)
    ctx.progress(1.0, "study finished")
    return results_table(rows, study.sweep_keys)


def summarise(results: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation and count of each metric over repeats (runs with equal ``settings``:
    runs that differ in anything but their seed are never averaged together)."""
    keys = [
        k
        for k in ("label" if "label" in results.columns else "method", *by, "settings", "metric")
        if k in results.columns
    ]
    out = results.groupby(keys, dropna=False, sort=False)["value"].agg(["mean", "std", "count"]).reset_index()
    return out
