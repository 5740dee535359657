"""One run: a method with its parameters, an optional privacy model, a seed and metrics, on data.

The same function serves the command line, the desktop's worker thread, studies and tests:
:func:`execute` prepares the data the method accepts, runs it under a :class:`Context`, re-checks
the release against its privacy model and computes the metrics.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .data import convert, labels_of, provenance_of
from .errors import BadInput, PrivacyCheckFailed
from .jobs import Context
from .params import params_to_dict, parse_spec
from .recipe import Recipe
from .release import Provenance, Release, Verdict, describe_failures
from .validate import get, get_seed


@dataclass(frozen=True)
class PluginCall:
    """A plugin name with raw parameter values (strings from a CLI, values from a project file)."""

    name: str
    params: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | Mapping | PluginCall | None) -> PluginCall | None:
        if text is None or isinstance(text, PluginCall):
            return text
        if isinstance(text, Mapping):
            name = get(text, "name", str, where="a plugin entry", required=True)
            return cls(name, dict(get(text, "params", dict, {}, where=f"plugin {name!r}")))
        if not isinstance(text, str):
            raise BadInput(f"a plugin must be named by text or {{\"name\": …, \"params\": {{…}}}}, got {text!r}")
        name, values = parse_spec(text)
        return cls(name, values)

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params)}


@dataclass(frozen=True)
class BoundModel:
    """A privacy model together with its validated parameters."""

    plugin: object
    params: object

    @property
    def name(self) -> str:
        return self.plugin.name

    def check(self, release: Release) -> Verdict:
        return self.plugin.check(release, self.params)

    def to_dict(self) -> dict:
        return {"name": self.plugin.name, "params": params_to_dict(self.params)}


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines a run besides the data."""

    method: PluginCall
    model: PluginCall | None = None
    seed: int = 0
    metrics: tuple[str, ...] = ()
    recipe: Recipe | None = None
    label: str = ""  # the row name in a study (default: the method's name)
    setting: dict = field(default_factory=dict)  # the study's swept values for this run

    def to_dict(self) -> dict:
        return {"method": self.method.to_dict(), "model": self.model.to_dict() if self.model else None,
                "seed": self.seed, "metrics": list(self.metrics),
                "recipe": self.recipe.to_dict() if self.recipe else None}

    @classmethod
    def from_dict(cls, d: Mapping) -> RunSpec:
        if not isinstance(d, Mapping) or "method" not in d:
            raise BadInput("a run needs a 'method'")
        recipe = get(d, "recipe", dict, None, where="run")
        metrics = get(d, "metrics", list, [], where="run")
        return cls(PluginCall.parse(d["method"]), PluginCall.parse(d.get("model")), get_seed(d, where="run"),
                   tuple(str(m) for m in metrics), Recipe.from_dict(recipe) if recipe else None)


@dataclass(frozen=True)
class RunResult:
    spec: RunSpec
    release: Release
    verdict: Verdict | None
    metrics: dict
    seconds: float
    data: object  # what the method ran on (Table or BinaryMatrix)
    original: object = None  # the data as given to execute (a Table before binarisation), when known

    @property
    def holds(self) -> bool:
        return self.verdict is None or self.verdict.holds


def bind_model(registry, call: PluginCall | None) -> BoundModel | None:
    if call is None:
        return None
    plugin = registry.privacy_model(call.name)
    return BoundModel(plugin, plugin.params(call.params))


def prepare(data, algorithm, recipe: Recipe | None = None):
    """Turn ``data`` into the form ``algorithm`` accepts, or explain why it cannot."""
    try:
        return convert(data, algorithm.accepts, recipe=recipe)
    except BadInput as exc:
        raise BadInput(f"method {algorithm.name!r}: {exc}") from None


def check_labels(data, algorithm) -> None:
    if not algorithm.needs_labels:
        return
    labels = labels_of(data)
    if labels is None:
        raise BadInput(f"method {algorithm.name!r} needs a target column; mark one as the target")
    import pandas as pd

    classes = pd.unique(pd.Series(labels).dropna())
    if len(classes) < 2:
        raise BadInput(f"method {algorithm.name!r} needs at least two classes in the target, "
                       f"found {len(classes)}")


def execute(registry, data, spec: RunSpec, ctx: Context | None = None, *, version: str = "") -> RunResult:
    """Run ``spec`` on ``data`` (a Table or BinaryMatrix).

    Raises
    ------
    BadInput
        Unknown plugin, bad parameter, data the method cannot take.
    PrivacyCheckFailed
        The release does not satisfy its privacy model (it must never be written).
    Cancelled
        The context's token was cancelled.
    """
    ctx = ctx or Context(spec.seed)
    algorithm = registry.algorithm(spec.method.name)
    params = algorithm.params(spec.method.params)
    model = bind_model(registry, spec.model)
    if algorithm.needs_model and model is None:
        choices = ", ".join(algorithm.supported_models or ("k-anonymity",))
        raise BadInput(f"method {algorithm.name!r} needs a privacy model (one of: {choices}; e.g. --model "
                       f"{(algorithm.supported_models or ('k-anonymity',))[0]}:k=5)")
    if model is not None and algorithm.supported_models is not None and model.name not in algorithm.supported_models:
        raise BadInput(f"method {algorithm.name!r} works under {', '.join(algorithm.supported_models)}, "
                       f"not {model.name}")
    metrics = [(text, *_metric(registry, text)) for text in spec.metrics]
    prepared = prepare(data, algorithm, spec.recipe)
    check_labels(prepared, algorithm)
    started = time.perf_counter()
    release = algorithm.run(prepared, model, params, ctx.child(0.0, 0.9))
    seconds = time.perf_counter() - started
    release = release.with_provenance(Provenance(
        method=algorithm.name, params=params_to_dict(params), seed=spec.seed,
        input_sha256=_input_hash(data), veil_version=version,
        model=model.name if model else None, model_params=params_to_dict(model.params) if model else {}))
    verdict = model.check(release) if model else None
    if verdict is not None and not verdict.holds:
        raise PrivacyCheckFailed(f"the release of {algorithm.name!r} fails {model.name}: {verdict.message}; "
                                 f"failing records: {describe_failures(verdict, release)}", verdict)
    ctx.progress(0.9, "computing metrics")
    values = measure(registry, spec, prepared, release, ctx.child(0.9, 1.0))
    ctx.progress(1.0, "done")
    return RunResult(spec, release, verdict, values, seconds, prepared, data)


def measure(registry, spec: RunSpec, prepared, release: Release, ctx: Context) -> dict:
    """The metrics ``spec`` names, computed on ``release`` of ``prepared`` data (as ``execute`` does).

    Metrics that re-run the method (nested protocols) get ``ctx.rerun``, which runs the spec's
    method with the spec's parameters, model and seed on a subset of the rows.
    """
    algorithm = registry.algorithm(spec.method.name)
    params = algorithm.params(spec.method.params)
    model = bind_model(registry, spec.model)
    metrics = [(text, *_metric(registry, text)) for text in spec.metrics]
    values = {}
    for i, (key, metric, metric_params) in enumerate(metrics):
        mctx = ctx.child(i / len(metrics), (i + 1) / len(metrics))
        mctx.rerun = _rerun(algorithm, prepared, model, params, spec.seed, mctx)
        values[key] = metric.compute(prepared, release, metric_params, mctx)
    return values


def _metric(registry, text: str):
    """A metric named ``NAME`` or ``NAME:key=value,...``; its result is reported under the text."""
    call = PluginCall.parse(text)
    metric = registry.metric(call.name)
    return metric, metric.params(call.params)


def _rerun(algorithm, prepared, model, params, seed, ctx):
    """The method again, on a subset of the rows, with the same parameters and seed."""

    def rerun(rows):
        subset = prepared.take(rows)
        return algorithm.run(subset, model, params, ctx.child(0.0, 1.0, seed))

    return rerun


def _input_hash(data) -> str | None:
    return provenance_of(data)["sha256"]


def metric_names(registry, names: Sequence[str] | None) -> tuple[str, ...]:
    """Validate metric names (all registered metrics when None)."""
    if names is None:
        return tuple(registry.names("metric"))
    for n in names:
        _metric(registry, n)
    return tuple(names)
