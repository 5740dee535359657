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

A swept parameter goes to whichever of the method and the privacy model declares it. Repeat r of a
run uses seed ``seed + r``. The result table has one row per run and metric with the columns
``run, label, method, model, <swept parameters>, repeat, seed, settings, holds, metric, value, seconds,
error``; ``settings`` is the run's full definition but its seed (:func:`settings_of`), so runs that
differ in any parameter are never averaged as repeats.

A method entry may carry study options: ``"label"`` (its row name; default the method name),
``"model"`` or ``"models"`` (its own privacy models, overriding the study's; ``null`` for none), ``"repeats"`` (for a
randomised method) and ``"fixed": true`` (a baseline the sweep does not change, run once per value).
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

from .datasource import DataSource
from .errors import BadInput, PrivacyCheckFailed
from .jobs import Context
from .params import param_specs
from .recipe import Recipe
from .validate import MAX_SEED, get, get_seed, in_file, read_json_object
from .runs import PluginCall, RunSpec, execute, metric_names

from .constants import DEFAULT_MAX_RUNS  # noqa: E402  (re-exported: a study larger is refused unless raised)

RESULT_COLUMNS = ["run", "label", "method", "model", "repeat", "seed", "settings", "holds", "metric", "value",
                  "seconds", "error"]


@dataclass(frozen=True)
class Study:
    methods: tuple[PluginCall, ...]
    data: DataSource = field(default_factory=lambda: DataSource(demo=True))
    model: PluginCall | None = None  # the first of ``models`` (give either)
    sweep: dict = field(default_factory=dict)
    repeats: int | None = None  # None: each method's default_repeats (1, or 10 for RF as SPEC says)
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
            sweep=dict(sweep), repeats=repeats, seed=get_seed(d, where=where),
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
                    raise BadInput(f"chart {call.name!r} draws metric {metric!r}, which the study does not "
                                   f"compute (it computes: {have})")

    def size(self, registry) -> int:
        """How many runs the grid has: methods × swept values × repeats, counted without making them."""
        grid = math.prod(len(v) for v in self.sweep.values())
        return sum(grid * self._repeats(registry, call, i) for i, call in enumerate(self.methods))

    def _repeats(self, registry, call: PluginCall, i: int) -> int:
        opts = self.options[i] if i < len(self.options) else {}
        return opts.get("repeats") or self.repeats or registry.get("algorithm", call.name).default_repeats

    def check_size(self, registry) -> int:
        """The number of runs; BadInput when it passes ``max_runs`` or the seeds would pass 2³²−1."""
        count = self.size(registry)
        if count > self.max_runs:
            raise BadInput(f"the study has {count:,} runs, more than the limit of {self.max_runs:,}; make the grid "
                           f"smaller, or raise the limit (--max-runs or the study's \"max_runs\")")
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
        grid = list(itertools.product(*self.sweep.values())) if self.sweep else [()]
        for i, (call, base_models, label, method_keys) in enumerate(plans):
            for values in grid:
                setting = dict(zip(self.sweep, values))
                method = PluginCall(call.name, {**call.params, **{k: v for k, v in setting.items() if k in method_keys}})
                models = tuple(_with_swept(registry, m, setting) for m in base_models)
                for r in range(self._repeats(registry, call, i)):
                    yield RunSpec(method, models, self.seed + r, self.metrics, self.recipe, label, setting)

    def _plan(self, registry, i: int, call: PluginCall):
        """Method ``i``'s privacy models, row label and the swept keys its method declares."""
        opts = self.options[i] if i < len(self.options) else {}
        base_models = opts["models"] if "models" in opts else self.models
        model_keys = set().union(*(_declared(registry, "privacy-model", m) for m in base_models))
        method_keys = _declared(registry, "algorithm", call)
        for key in self.sweep:
            if key not in method_keys and key not in model_keys and not opts.get("fixed"):
                raise BadInput(f"swept parameter {key!r} belongs to neither {call.name!r} nor the privacy model")
        return call, base_models, opts.get("label") or call.name, method_keys


def _max_runs(value: int) -> int:
    if value < 1:
        raise BadInput(f"max_runs must be ≥ 1, got {value}")
    return value


    def with_models(self, models) -> Study:
        """The same study with every run under ``models`` (the ``--model`` flags of ``veil study``)."""
        import dataclasses

        options = tuple({k: v for k, v in o.items() if k != "models"} for o in self.options)
        models = tuple(models)
        return dataclasses.replace(self, models=models, model=models[0] if models else None, options=options)


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
    if "fixed" in entry:  # a baseline that ignores the sweep (e.g. the full feature set): one row per value
        opts["fixed"] = get(entry, "fixed", bool, where="method")
    return opts


def _chart_metrics(registry, call: PluginCall) -> list[str]:
    chart = registry.get("chart", call.name)
    params = chart.params(call.params)
    return [getattr(params, s.name) for s in chart.param_specs() if s.name in ("metric", "privacy", "utility")]


def _declared(registry, kind: str, call: PluginCall | None) -> set[str]:
    if call is None:
        return set()
    return {s.name for s in param_specs(registry.get(kind, call.name).Params)}


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


def run_planned(registry, data, spec: RunSpec, ctx: Context, version: str = "") -> Outcome:
    """Execute one planned run (the desktop's worker and :func:`run_study` both call this)."""
    try:
        result = execute(registry, data, spec, ctx, version=version)
    except PrivacyCheckFailed as exc:
        value = float(exc.verdict.value) if exc.verdict is not None else None
        metrics, seconds = {m: float("nan") for m in spec.metrics}, float("nan")
        if registry.get("algorithm", spec.method.name).baseline:  # the reference keeps its utility
            free = RunSpec(spec.method, (), spec.seed, spec.metrics, spec.recipe, spec.label, spec.setting)
            reference = execute(registry, data, free, ctx, version=version)
            metrics, seconds = {k: float(v) for k, v in reference.metrics.items()}, reference.seconds
        return Outcome(False, str(exc), value, metrics, seconds)
    verdict = result.verdict
    return Outcome(None if verdict is None else bool(verdict.holds),
                   "no privacy model: nothing was checked" if verdict is None else verdict.message,
                   None if verdict is None else float(verdict.value),
                   {k: float(v) for k, v in result.metrics.items()}, result.seconds, result)


def settings_of(spec: RunSpec) -> str:
    """Everything that defines a run but its seed, as canonical JSON: runs with equal settings are
    repeats of one another; runs with different settings are never averaged together."""
    return json.dumps({"method": spec.method.to_dict(), "models": [m.to_dict() for m in spec.models],
                       "recipe": spec.recipe.to_dict() if spec.recipe else None}, sort_keys=True, default=str)


def outcome_rows(run: int, spec: RunSpec, outcome: Outcome, setting: dict, repeat: int) -> list[dict]:
    """The tidy rows of one run (one per metric, plus ``privacy-value`` under a model)."""
    base = {"run": run, "label": spec.label or spec.method.name, "method": spec.method.name,
            "model": spec.models_text, **setting, "repeat": repeat, "seed": spec.seed,
            "settings": settings_of(spec), "holds": outcome.holds}
    metrics = dict(outcome.metrics)
    if outcome.privacy_value is not None:
        metrics.setdefault("privacy-value", outcome.privacy_value)
    error = outcome.verdict if outcome.holds is False else ""
    return [{**base, "metric": m, "value": float(v), "seconds": outcome.seconds, "error": error}
            for m, v in metrics.items()]


def results_frame(rows: Sequence[dict], sweep: Sequence[str]) -> pd.DataFrame:
    """The tidy result table from :func:`outcome_rows`, in the study's column order."""
    columns = ["run", "label", "method", "model", *sweep, "repeat", "seed", "settings", "holds", "metric", "value",
               "seconds", "error"]
    frame = pd.DataFrame(list(rows), columns=columns)
    frame.attrs["sweep"] = list(sweep)
    return frame


def run_study(registry, study: Study, ctx: Context | None = None, data=None, version: str = "") -> pd.DataFrame:
    """Run every run of ``study``; a run whose release fails its model is recorded, not fatal."""
    ctx = ctx or Context(study.seed)
    total = study.check_size(registry)
    data = data if data is not None else study.data.load(registry)
    rows = []
    for i, spec in enumerate(study.iter_runs(registry)):
        ctx.progress(i / total, f"run {i + 1} of {total}: {spec.method.name}")  # raises Cancelled on request
        outcome = run_planned(registry, data, spec, ctx.child(i / total, (i + 1) / total, spec.seed), version)
        rows += outcome_rows(i, spec, outcome, {k: spec.setting.get(k) for k in study.sweep}, spec.seed - study.seed)
    ctx.progress(1.0, "study finished")
    return results_frame(rows, list(study.sweep))


def summarise(results: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation and count of each metric over repeats (runs with equal ``settings``:
    runs that differ in anything but their seed are never averaged together)."""
    keys = [k for k in ("label" if "label" in results.columns else "method", *by, "settings", "metric")
            if k in results.columns]
    out = results.groupby(keys, dropna=False, sort=False)["value"].agg(["mean", "std", "count"]).reset_index()
    return out
