"""One run: a method with its parameters, an optional privacy model, a seed and metrics, on data.

The same function serves the command line, the desktop's worker thread, studies and tests:
:func:`execute` prepares the data the method accepts, runs it under a :class:`Context`, re-checks
the release against its privacy model and computes the metrics.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.forms import BINARY, TABLE, convert, form_of, grouping_columns, labels_of, provenance_of
from ..data.table import Kind, Role, Schema
from ..model.aggregation import NUMERIC_AGGREGATES, aggregate_in_groups, parse_aggregates
from ..model.blanks import ANY_VALUE
from ..model.bound import BoundModel, CombinedModel, bind_models, conjunction
from ..model.groups import view_of_frame
from ..base.errors import BadInput, PrivacyCheckFailed
from .chain import perturb_after, second_step
from .jobs import Context
from .memory import check_memory, estimate_conversion, estimate_method, estimate_metrics, shape_of
from ..model.params import params_to_dict, parse_spec
from ..model.plugin import CHEAP, EXPENSIVE, METRIC_SAMPLE_ROWS, HierarchyUse, Judgement, judgements
from ..data.recipe import Recipe
from ..model.release import GENERALISED_TABLE, Provenance, Release, Verdict, describe_failures
from ..model.roles import check_acknowledged, exposed_sensitive, refusal, released_sensitive, unacknowledged_sensitive
from ..base.validate import get, get_seed


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


@dataclass(frozen=True, init=False)
class RunSpec:
    """Everything that defines a run besides the data.

    ``models`` are the privacy models the release must all satisfy (none, one, or several
    combined). The second positional argument (or ``model=``) takes one PluginCall, None or a
    sequence of them, so ``RunSpec(method, PluginCall(model_name, {"k": 5}))`` still reads as
    before; :attr:`model` is the first model (or None).
    """

    method: PluginCall
    models: tuple[PluginCall, ...]
    seed: int
    metrics: tuple[str, ...]
    recipe: Recipe | None
    label: str  # the row name in a study (default: the method's name)
    setting: dict  # the study's swept values for this run
    then: PluginCall | None  # a second step: a method that perturbs the first's release record for record
    # quasi-identifiers the method does not group on, each aggregated inside the release's groups by
    # a function of AGGREGATES: {column: function} (docs/anonymisation.md#aggregating-a-column-inside-the-groups)
    aggregates: Mapping[str, str]

    def __init__(
        self,
        method: PluginCall,
        model=None,
        seed: int = 0,
        metrics: Sequence[str] = (),
        recipe: Recipe | None = None,
        label: str = "",
        setting: dict | None = None,
        *,
        models=None,
        then=None,
        aggregates=None,
    ):
        given = _calls(model)
        if models is not None:
            listed = _calls(models)
            if given and given != listed[: len(given)]:
                raise BadInput("give the privacy models either as model or as models, not both")
            given = listed
        set_ = object.__setattr__
        set_(self, "method", method)
        set_(self, "models", given)
        set_(self, "seed", seed)
        set_(self, "metrics", tuple(metrics))
        set_(self, "recipe", recipe)
        set_(self, "label", label)
        set_(self, "setting", dict(setting or {}))
        set_(self, "then", PluginCall.parse(then))
        set_(self, "aggregates", parse_aggregates(aggregates))

    @property
    def model(self) -> PluginCall | None:
        return self.models[0] if self.models else None

    @property
    def models_text(self) -> str | None:
        """The models' names joined with " + " (a study's ``model`` column), or None."""
        return " + ".join(m.name for m in self.models) or None

    def to_dict(self) -> dict:
        d = {
            "method": self.method.to_dict(),
            "model": self.model.to_dict() if self.model else None,
            "seed": self.seed,
            "metrics": list(self.metrics),
            "recipe": self.recipe.to_dict() if self.recipe else None,
        }
        if len(self.models) > 1:
            d["models"] = [m.to_dict() for m in self.models]
        if self.then is not None:
            d["then"] = self.then.to_dict()
        if self.aggregates:
            d["aggregate"] = dict(self.aggregates)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> RunSpec:
        if not isinstance(d, Mapping) or "method" not in d:
            raise BadInput("a run needs a 'method'")
        recipe = get(d, "recipe", dict, None, where="run")
        metrics = get(d, "metrics", list, [], where="run")
        models = get(d, "models", list, None, where="run")
        calls = [PluginCall.parse(m) for m in models] if models is not None else PluginCall.parse(d.get("model"))
        return cls(
            PluginCall.parse(d["method"]),
            calls,
            get_seed(d, where="run"),
            tuple(str(m) for m in metrics),
            Recipe.from_dict(recipe) if recipe else None,
            then=PluginCall.parse(d.get("then")),
            aggregates=get(d, "aggregate", dict, None, where="run"),
        )


def _calls(value) -> tuple[PluginCall, ...]:
    """None, one model or a sequence of models (calls, texts or mappings) as a tuple of PluginCalls."""
    if value is None:
        return ()
    if isinstance(value, (PluginCall, str, Mapping)):
        return (PluginCall.parse(value),)
    if isinstance(value, Sequence):
        return tuple(PluginCall.parse(v) for v in value if v is not None)
    raise BadInput(f"a privacy model must be named by text or {{\"name\": …}}, got {value!r}")


@dataclass(frozen=True)
class RunResult:
    spec: RunSpec
    release: Release
    verdict: Verdict | None
    metrics: dict
    seconds: float
    data: object  # what the method ran on (Table or BinaryMatrix)
    original: object = None  # the data as given to execute (a Table before binarisation), when known
    samples: dict = field(default_factory=dict)  # metric -> {"rows", "of", "seed"} when it ran on a sample
    # the privacy model as the run bound it (None without one): the export checks the release with it
    model: BoundModel | CombinedModel | None = field(default=None, compare=False, repr=False)

    @property
    def holds(self) -> bool:
        return self.verdict is None or self.verdict.holds

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        """One verdict per privacy model of the run (empty without a model)."""
        return () if self.verdict is None else self.verdict.each


def bind_model(registry, call) -> BoundModel | CombinedModel | None:
    """The model (or models) ``call`` names: a PluginCall, None, or a sequence of PluginCalls."""
    return bind_models(registry, _calls(call))


def prepare(data, algorithm, recipe: Recipe | None = None):
    """Turn ``data`` into the form ``algorithm`` accepts, or explain why it cannot (memory included:
    a table's conversion is estimated before it starts)."""
    accepts = tuple(algorithm.accepts)
    if form_of(data) == TABLE and not (TABLE in accepts and (recipe is None or BINARY not in accepts)):
        target = BINARY if BINARY in accepts else next((a for a in accepts if a != TABLE), accepts[0])
        check_memory(estimate_conversion(data, target))
    try:
        return convert(data, algorithm.accepts, recipe=recipe)
    except BadInput as exc:
        raise BadInput(f"method {algorithm.name!r}: {exc}") from None


def check_models(registry, algorithm, model) -> None:
    """Refuse a run whose method needs a model and has none, or names one whose kind of judgement the
    method cannot satisfy (:class:`~veil.engine.Judgement`)."""
    if algorithm.needs_model and model is None:
        choices = registry.models_for(algorithm)
        raise BadInput(
            f"method {algorithm.name!r} needs a privacy model (one of: {', '.join(choices)}; "
            f"e.g. --model {example_call(registry.get('privacy-model', choices[0]))})"
            if choices
            else f"method {algorithm.name!r} needs a privacy model, and none it works under is installed"
        )
    for m in model.models if model else ():
        problem = registry.model_mismatch(algorithm, m.plugin)
        if problem:
            raise BadInput(f"method {algorithm.name!r} {problem}")


def unfit(registry, data, spec: RunSpec) -> str:
    """Why run ``spec`` is not one the desktop offers on ``data``, in one line ("" when it is): the
    method does not take the data, a privacy model cannot judge it, or a metric says nothing of the
    method (the registry's :meth:`~veil.engine.Registry.method_fit`, ``model_fit``, ``metric_fit``).
    Whether the method works under its models is :func:`check_models`'s to say."""
    fit = registry.method_fit(spec.method.name, data)
    if not fit:
        return f"method {spec.method.name!r} {fit.reason}"
    if spec.then is not None:
        fit = registry.method_fit(spec.then.name, data)
        if not fit:
            return f"method {spec.then.name!r} {fit.reason}"
    for call in spec.models:
        fit = registry.model_fit(call.name, data)
        if not fit:
            return f"privacy model {call.name!r} {fit.reason}"
    model = spec.models[0].name if spec.models else None
    for text in spec.metrics:
        name = PluginCall.parse(text).name
        fit = metric_fit_of(registry, name, spec, model)
        if not fit:
            return f"metric {name!r} {fit.reason}; leave it out"
    return ""


def check_fits(registry, data, spec: RunSpec) -> None:
    """Refuse, in one line, a run the desktop would not offer on ``data`` (see :func:`unfit`)."""
    reason = unfit(registry, data, spec)
    if reason:
        raise BadInput(reason)


def fitting_metrics(registry, spec: RunSpec) -> RunSpec:
    """The run with only the metrics that say something of its method: a Mondrian run does not
    compute (nor report as "does not apply") a feature ranking's accuracy."""
    model = spec.models[0].name if spec.models else None
    kept = tuple(m for m in spec.metrics if metric_fit_of(registry, PluginCall.parse(m).name, spec, model))
    return spec if kept == tuple(spec.metrics) else dataclasses.replace(spec, metrics=kept)


def metric_fit_of(registry, metric: str, spec: RunSpec, model: str | None):
    """Whether ``metric`` says something of ``spec``'s release: of its method's, or of its second
    step's (a perturbation's measures of a generalised, then perturbed release)."""
    fit = registry.metric_fit(metric, spec.method.name, model)
    if not fit and spec.then is not None:
        second = registry.metric_fit(metric, spec.then.name, model)
        return second if second else fit
    return fit


def unused_hierarchies(registry, data, call: PluginCall, models=(), aggregates=()) -> tuple[str, ...]:
    """Before a run of ``call``'s method on ``data`` under the privacy ``models`` (PluginCalls): one
    line for each group of hierarchies the user attached that the run will not use, neither to
    generalise along (the method's :class:`HierarchyUse`) nor to judge a sensitive column (a model's
    :meth:`~veil.engine.PrivacyModel.reads_sensitive_hierarchy`, as hierarchical t-closeness), so a
    hierarchy is never ignored silently. Empty when every attached hierarchy is used. ``aggregates``:
    the columns the run aggregates inside its groups (they are not generalised)."""
    if form_of(data) != TABLE:
        return ()
    aggregated = [c for c in aggregates if c in data.schema.names and data.schema[c].hierarchy is not None]
    if aggregated:
        note = (
            f"the hierarchy given for {_listed(aggregated)} is not used: the column is aggregated inside the "
            f"groups, not generalised"
        )
        columns = tuple(
            dataclasses.replace(c, hierarchy=None) if c.name in aggregated else c for c in data.schema.columns
        )
        rest = unused_hierarchies(registry, dataclasses.replace(data, schema=Schema(columns)), call, models)
        return (note, *rest)
    judged = set()
    for model in models:
        cls = registry.get("privacy-model", model.name)
        if cls.reads_sensitive_hierarchy(cls.params(model.params)):
            judged |= {c.name for c in data.schema.columns if c.role is Role.SENSITIVE}
    attached = [c.name for c in data.schema.columns if c.hierarchy is not None and c.name not in judged]
    if not attached:
        return ()
    algorithm = registry.get("algorithm", call.name)
    use = algorithm.hierarchy_use(algorithm.params(call.params))
    if use is HierarchyUse.NONE:
        return (
            f"method {algorithm.name!r} does not generalise along hierarchies: the hierarchy given for "
            f"{_listed(attached)} is not used",
        )
    qis = set(grouping_columns(data))
    notes = []
    outside = [c for c in attached if c not in qis]
    if outside:
        notes.append(f"the hierarchy given for {_listed(outside)} is not used: only quasi-identifiers are generalised")
    numeric = [c for c in attached if c in qis and data.schema[c].kind is Kind.NUMERIC]
    if use is HierarchyUse.CATEGORICAL and numeric:
        notes.append(
            f"method {algorithm.name!r} with these parameters generalises numbers to ranges of their "
            f"values: the hierarchy given for the numeric column {_listed(numeric)} is not used"
        )
    return tuple(notes)


def _listed(columns) -> str:
    return ", ".join(repr(c) for c in columns)


def example_call(plugin) -> str:
    """``NAME:param=default`` for a plugin's first parameter (``NAME`` alone without parameters): a
    valid value to suggest on the command line."""
    specs = plugin.param_specs()
    if not specs:
        return plugin.name
    return f"{plugin.name}:{specs[0].name}={specs[0].default}"


def check_feasible(data, model) -> None:
    """Refuse, before any run, privacy-model parameters no release of this table can meet: a model
    judging groups that fails even with every record in one group (the coarsest release of all), on
    any column marked sensitive, e.g. k above the number of records or l above the number of
    distinct sensitive values. The message is the model's own reason (:meth:`PrivacyModel.infeasible`)
    when it gives one, else its verdict on that one group."""
    if model is None or form_of(data) != TABLE or not data.n_rows:
        return
    everyone = np.zeros(data.n_rows, dtype=np.int64)
    sensitive = data.schema.by_role(Role.SENSITIVE)
    views = (
        [(None, view_of_frame(data.frame, [], None, groups=everyone))]
        if not sensitive
        else [
            (column, view_of_frame(data.frame, [], column, groups=everyone, hierarchy=data.schema[column].hierarchy))
            for column in sensitive
        ]
    )
    population = getattr(data, "population", None)
    if population is not None:  # one group written * everywhere: every population record matches it
        views = [(column, view.with_population(np.array([population.n_rows]))) for column, view in views]
    weight = _weight_column(data)
    for each in model.models:
        if not each.judges_groups:
            continue
        if each.reads_weights and weight is not None:  # judged by the records' survey weights
            from ..model.survey_risk import weights_of

            weights = weights_of(data.frame, weight)
            views = [(column, view.with_survey(weights)) for column, view in views]
        k = getattr(each.params, "k", None)
        if isinstance(k, int) and k > data.n_rows and Judgement.GROUP_SIZE in judgements(each.plugin.judges):
            raise BadInput(
                f"{each.name} cannot hold on this data whatever the method does: k = {k} is larger than "
                f"the number of records ({data.n_rows}); relax its parameters"
            )
        for column, view in views if each.needs_sensitive else views[:1]:
            where = f" on the sensitive column {column!r}" if column is not None and each.needs_sensitive else ""
            reason = each.plugin.infeasible(view, each.params) if view.sensitive is not None else ""
            if reason:
                raise BadInput(
                    f"{each.name} cannot hold on this data whatever the method does{where}: {reason}; "
                    f"relax its parameters"
                )
            try:
                verdict = each.check_groups(view)  # a parameter the model refuses is refused here too
            except BadInput as exc:  # e.g. a distance needing a hierarchy the column lacks: say which column
                raise BadInput(f"on the sensitive column {column!r}: {exc}" if where else str(exc)) from None
            # the coarsest release is the hardest only for a model that a union of passing groups passes;
            # for another (δ-presence: suppressed records match the whole population) a release can pass
            # where the whole table as one group fails
            if not verdict.holds and each.plugin.monotonicity(each.params):
                said = each.plugin.summary(each.params, verdict)
                raise BadInput(
                    f"{each.name} cannot hold on this data whatever the method does{where}: with all "
                    f"{data.n_rows:,} records in one group it still {said}; relax its parameters"
                )


def declared_hierarchies(data, columns) -> dict:
    """The hierarchies declared (attached, not generated) for ``columns`` of a table, by column."""
    if form_of(data) != TABLE:
        return {}
    names = set(data.schema.names)
    return {c: data.schema[c].hierarchy for c in columns if c in names and data.schema[c].hierarchy is not None}


def check_labels(data, algorithm) -> None:
    if not algorithm.needs_labels:
        return
    if form_of(data) == TABLE:  # the column itself: no array of its values as Python objects
        target = data.schema.target
        if target is None:
            raise BadInput(f"method {algorithm.name!r} needs a target column; mark one as the target")
        classes = data.frame[target].dropna().unique()
    else:
        labels = labels_of(data)
        if labels is None:
            raise BadInput(f"method {algorithm.name!r} needs a target column; mark one as the target")
        import pandas as pd

        classes = pd.unique(pd.Series(labels).dropna())
    if len(classes) < 2:
        raise BadInput(f"method {algorithm.name!r} needs at least two classes in the target, found {len(classes)}")


def aggregating_method(registry, algorithm, spec: RunSpec) -> None:
    """Refuse, in one line, aggregation inside groups for a method whose release has none
    (:attr:`~veil.engine.Algorithm.aggregates_in_groups`) or with a second step."""
    if not spec.aggregates:
        return
    if not algorithm.aggregates_in_groups:
        able = [cls.name for cls in registry.classes("algorithm") if cls.aggregates_in_groups]
        raise BadInput(
            f"method {algorithm.name!r} releases no groups to aggregate a column in; aggregate with "
            f"{', '.join(able) or 'a method whose records fall into groups'}"
        )
    if spec.then is not None:
        raise BadInput("a column aggregated inside the groups is not perturbed afterwards: leave out the second step")


def check_aggregates(registry, algorithm, data, spec: RunSpec) -> tuple[str, ...]:
    """Refuse, in one line, aggregation the run cannot do: the method's release has no groups, the
    column is no quasi-identifier, a numeric function on a column that is not numeric, no
    quasi-identifier left to group on. Returns the quasi-identifiers in the table's order."""
    if not spec.aggregates:
        return ()
    aggregating_method(registry, algorithm, spec)
    if form_of(data) != TABLE:
        raise BadInput("only a table's column can be aggregated inside the groups")
    qis = data.schema.by_role(Role.QUASI_IDENTIFIER)
    for column, how in spec.aggregates.items():
        if column not in data.schema.names:
            raise BadInput(f"cannot aggregate {column!r}: the table has no such column")
        if column not in qis:
            raise BadInput(
                f"cannot aggregate {column!r}: it is marked {data.schema[column].role.value}, and only a "
                f"quasi-identifier is aggregated inside the groups"
            )
        if how in NUMERIC_AGGREGATES and data.schema[column].kind is not Kind.NUMERIC:
            raise BadInput(f"cannot aggregate {column!r} by its {how}: it is not numeric; use mode, interval or set")
    if all(c in spec.aggregates for c in qis):
        raise BadInput("every quasi-identifier is aggregated: leave at least one for the method to group on")
    if getattr(data, "population", None) is not None:
        raise BadInput("a column aggregated inside the groups is not matched against a population; leave one out")
    return tuple(qis)


def check_runs(registry, specs, *, max_runs: int) -> None:
    """Before the first of several runs starts (a project's): their number against ``max_runs``, and
    each run's method, parameters, privacy models and metrics, so an invalid last run is refused
    before any other has written a thing. BadInput names the run."""
    from ..base.errors import BadInput

    if len(specs) > max_runs:
        raise BadInput(
            f"the project has {len(specs):,} runs, more than the limit of {max_runs:,}; split it, or raise "
            f"the limit with --max-runs"
        )
    for n, spec in enumerate(specs, start=1):
        try:
            algorithm = registry.algorithm(spec.method.name)
            algorithm.params(spec.method.params)
            if spec.then is not None:
                second_step(registry, algorithm, spec.then)
            aggregating_method(registry, algorithm, spec)
            check_models(registry, algorithm, bind_models(registry, spec.models))
            for text in spec.metrics:
                _metric(registry, text)
        except BadInput as exc:
            raise BadInput(f"run {n} of {len(specs):,} ({spec.method.name}): {exc}; nothing was run") from None


def execute(
    registry,
    data,
    spec: RunSpec,
    ctx: Context | None = None,
    *,
    version: str = "",
    release_sensitive=None,
    release_household: bool = False,
) -> RunResult:
    """Run ``spec`` on ``data`` (a Table or BinaryMatrix).

    ``release_sensitive`` (the columns marked sensitive the user agreed to release), when given,
    makes a run refuse to release any other sensitive column a privacy model does not protect:
    before the run when the method releases it as it is, after the run when its release contains
    it (features selected from it). None (studies, library use) releases it with a note only.

    ``release_household``: the user agreed to release the column marked ``household`` (an identifier,
    withheld otherwise). The method then carries it as it carries an insensitive column, and the
    release names it (:attr:`Release.household`), from which its household risk is computed.

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
    released = getattr(data, "released_columns", None)
    if released is not None and not released():
        raise BadInput(
            "every column is marked identifier, and identifiers are never released: nothing is left to "
            "release; give some column another role"
        )
    if release_sensitive is not None:
        check_acknowledged(data, release_sensitive)
    household = _household_released(data, release_household)
    original = data
    if household is not None:  # agreed: the method carries it like an insensitive column
        data = data.with_roles({household: Role.INSENSITIVE})
    algorithm = registry.algorithm(spec.method.name)
    params = algorithm.params(spec.method.params)
    then = second_step(registry, algorithm, spec.then) if spec.then is not None else None
    model = bind_models(registry, spec.models)
    check_models(registry, algorithm, model)
    grouped_on = check_aggregates(registry, algorithm, data, spec)
    if spec.aggregates:  # the method does not group on them: they are aggregated inside its groups
        data = data.with_roles(dict.fromkeys(spec.aggregates, Role.INSENSITIVE))
    check_feasible(data, model)
    metrics = [(text, *_metric(registry, text)) for text in spec.metrics]
    prepared = prepare(data, algorithm, spec.recipe)
    if household is not None and form_of(prepared) != TABLE:
        raise BadInput(
            f"the household id can be released only as a column of a table; {algorithm.name!r} releases none"
        )
    check_labels(prepared, algorithm)
    if release_sensitive is not None and form_of(prepared) == TABLE:  # known before the run
        refused = unacknowledged_sensitive(
            data, exposed_sensitive(data, prepared, algorithm), algorithm, model, release_sensitive
        )
        if refused:
            raise BadInput(refusal(refused, algorithm.name, before=True))
    if release_sensitive is not None and form_of(prepared) != TABLE and algorithm.randomised:
        # which features a randomised method picks is chance, not the data: ask before the work, not after
        refused = unacknowledged_sensitive(
            data, exposed_sensitive(data, prepared, algorithm), algorithm, model, release_sensitive
        )
        if refused:
            raise BadInput(refusal(refused, algorithm.name, before=True, by_chance=True))
    shape = shape_of(prepared, ctx.check)
    check_memory(estimate_method(algorithm, params, prepared, shape))
    if then is not None:
        check_memory(estimate_method(then[0], then[1], prepared, shape))
    started = time.perf_counter()
    release = algorithm.run(prepared, model, params, ctx.child(0.0, 0.8 if then is not None else 0.9))
    if then is not None:  # the second step perturbs the first's release; the models judge the result
        ctx.check()
        release = perturb_after(prepared, release, *then, model, ctx.child(0.8, 0.9), algorithm.name)
    seconds = time.perf_counter() - started
    if household is not None and form_of(prepared) == TABLE and household in prepared.schema.names:
        # the metrics read it as the household id again
        prepared = prepared.with_roles({household: Role.HOUSEHOLD})
    if getattr(data, "population", None) is not None and release.population is None:
        # the population models count in it, reading the released labels by the hierarchies the method
        # generalised along (a quasi-identifier without one attached: its generated hierarchy)
        used = {c: data.hierarchy(c) for c in release.quasi_identifiers if c in data.frame.columns}
        release = dataclasses.replace(
            release, population=data.population.with_hierarchies(used | data.attached_hierarchies())
        )
    said = release.blanks  # the method's own word on blanks (None: the run's default below)
    if release.kind == GENERALISED_TABLE and release.blanks is None:
        # a cell Veil suppressed matches any value (engine/model/blanks.py); a method keeping the
        # input's blanks says what they mean itself
        release = dataclasses.replace(release, blanks=ANY_VALUE)
    if spec.aggregates:  # after the blanks' rule is known: a blank stays blank only where it matches any value
        rule = said or algorithm.blank_rule(params)
        if said is None and rule is not None:  # the rule the user chose, which the column's blanks follow
            release = dataclasses.replace(release, blanks=rule)
        release = aggregate_in_groups(release, spec.aggregates, grouped_on, ctx.check)
        prepared = prepared.with_roles(dict.fromkeys(spec.aggregates, Role.QUASI_IDENTIFIER))
    weight = _weight_column(data)
    if release.weight is None and weight is not None and weight in release.frame.columns:
        # the survey weights the release carries: the risk models judge its groups by them
        release = dataclasses.replace(release, weight=weight)
    if household is not None and household in release.frame.columns:
        release = dataclasses.replace(release, household=household)
    ctx.check()  # what follows (the release's provenance, its privacy check) is a pass over the records
    each = model.models if model else ()
    release = release.with_provenance(
        Provenance(
            method=algorithm.name,
            params=params_to_dict(params),
            seed=spec.seed,
            input_sha256=_input_hash(data),
            veil_version=version,
            model=each[0].name if each else None,
            model_params=params_to_dict(each[0].params) if each else {},
            models=tuple(m.to_dict() for m in each),
            then={"name": then[0].name, "params": params_to_dict(then[1])} if then is not None else None,
        )
    )
    declared = declared_hierarchies(prepared, release.sensitive)
    if declared:
        release = dataclasses.replace(release, hierarchies={**declared, **release.hierarchies})
    reached = released_sensitive(data, prepared, release)
    refused = unacknowledged_sensitive(data, reached, algorithm, model, release_sensitive or ())
    if release_sensitive is not None and refused:
        raise BadInput(refusal(refused, algorithm.name, before=False))
    if reached:  # never silent: the release says so, and the manifest and the report list it
        release = dataclasses.replace(
            release,
            notes=(
                *release.notes,
                f"released the column{'s' if len(reached) > 1 else ''} marked sensitive: {', '.join(reached)}",
            ),
            details={**release.details, "released_sensitive": reached},
        )
    ctx.check()
    verdict = conjunction(model.verdicts(release)) if model else None
    if verdict is not None and not verdict.holds:
        raise PrivacyCheckFailed(
            f"the release of {algorithm.name!r}{f' then {then[0].name!r}' if then is not None else ''} fails "
            f"{model.name}: {verdict.message}; "
            f"failing records: {describe_failures(verdict, release)}",
            verdict,
        )
    ctx.progress(0.9, "computing metrics")
    check_memory(estimate_metrics([(m, p) for _, m, p in metrics], prepared, release, shape))
    ctx.check()
    samples: dict = {}
    values = measure(registry, spec, prepared, release, ctx.child(0.9, 1.0), samples=samples, model=model)
    ctx.progress(1.0, "done")
    return RunResult(spec, release, verdict, values, seconds, prepared, original, samples, model)


def _household_released(data, agreed: bool) -> str | None:
    """The column marked ``household`` when the user agreed to release it (refused with a sentence
    when no column is marked so); None otherwise."""
    if not agreed:
        return None
    schema = getattr(data, "schema", None)
    household = getattr(schema, "household", None) if schema is not None else None
    if household is None:
        raise BadInput("cannot release the household id: no column is marked household")
    return household


def _weight_column(data) -> str | None:
    """The column a table marks ``weight`` (None for other data)."""
    schema = getattr(data, "schema", None)
    return getattr(schema, "weight", None) if schema is not None else None


def measure(
    registry, spec: RunSpec, prepared, release: Release, ctx: Context, *, samples: dict | None = None, model=None
) -> dict:
    """The metrics ``spec`` names, computed on ``release`` of ``prepared`` data (as ``execute`` does).

    Metrics that re-run the method (nested protocols) get ``ctx.rerun``, which runs the spec's
    method with the spec's parameters, model and seed on a subset of the rows. An expensive metric
    of more than ``METRIC_SAMPLE_ROWS`` records runs on a sample of that many, drawn with the run's
    seed; ``samples`` (when given) receives, per metric, ``{"rows", "of", "seed"}``. The metrics
    share ``ctx.shared``, a dict for this measurement only: where several derive the same thing from
    the same data and release (a generalised release's regions), the first keeps it there.
    ``model`` is the spec's models as the run bound them (bound here when not given).
    """
    algorithm = registry.algorithm(spec.method.name)
    params = algorithm.params(spec.method.params)
    if model is None:
        model = bind_models(registry, spec.models)
    metrics = [(text, *_metric(registry, text)) for text in spec.metrics]
    values = {}
    shared: dict = {}  # what the metrics compute alike (ctx.shared), dropped with this measurement
    for i, (key, metric, metric_params) in enumerate(metrics):
        mctx = ctx.child(i / len(metrics), (i + 1) / len(metrics))
        mctx.shared = shared
        data, released = prepared, release
        if metric.cost == EXPENSIVE and prepared.n_rows > METRIC_SAMPLE_ROWS:
            data, released, sample = _sample(prepared, release, spec.seed)
            if samples is not None:
                samples[key] = sample
        mctx.rerun = _rerun(algorithm, data, model, params, spec.seed, mctx)
        if not marks_roles(data, metric.needs_roles):
            values[key] = float("nan")  # the data marks no column the metric reads
            continue
        values[key] = metric.compute(data, released, metric_params, mctx)
        if mctx.sample is not None and samples is not None:
            samples[key] = {**samples.get(key, {}), **mctx.sample}
    return values


def _sample(prepared, release: Release, seed: int):
    """The same seeded sample of the records of the data and of its release (records line up
    when the release keeps every record; otherwise each is sampled on its own)."""
    n = prepared.n_rows
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, METRIC_SAMPLE_ROWS, replace=False))
    if release.n_rows == n:
        released = release.take_rows(rows)
    elif release.n_rows > METRIC_SAMPLE_ROWS:
        released = release.take_rows(np.sort(rng.choice(release.n_rows, METRIC_SAMPLE_ROWS, replace=False)))
    else:
        released = release
    return prepared.take(rows), released, {"rows": METRIC_SAMPLE_ROWS, "of": int(n), "seed": int(seed)}


def marks_roles(data, roles) -> bool:
    """Whether ``data`` marks a column with each of ``roles`` (data without a schema marks none)."""
    schema = getattr(data, "schema", None)
    return all(schema is not None and schema.by_role(r) for r in roles)


def default_metrics(registry, method: str, model: str | None = None, then: str | None = None) -> tuple[str, ...]:
    """The metrics a run of ``method`` (under ``model``; ``then``: its second step's method) computes
    unless told otherwise: the cheap ones that fit either step. Expensive ones are the user's choice."""
    steps = [registry.get("algorithm", m) for m in (method, then) if m]
    model_cls = registry.get("privacy-model", model) if model else None
    return tuple(
        cls.name
        for cls in registry.classes("metric")
        if cls.cost == CHEAP and any(cls.fits(step, model_cls) for step in steps)
    )


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
