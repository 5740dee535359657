"""Checks every registered plugin must pass (like scikit-learn's parametrize_with_checks):
declared parameters round-trip, a tiny dataset runs, the release passes its own privacy model,
seeds reproduce, metrics return numbers, charts draw, exporters round-trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from veil.engine import (
    BINARY,
    TABLE,
    BinaryMatrix,
    Context,
    Judgement,
    PluginCall,
    PrivacyCheckFailed,
    Role,
    RunSpec,
    Table,
    draw_chart,
    execute,
    form_of,
    make_registry,
    params_to_dict,
    parse_params,
    run_study,
    Study,
)

REGISTRY = make_registry()
ALL = [(i.cls.kind, i.cls.name) for i in REGISTRY.all()]


def tiny_table(seed=0, n=60) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "pid": [f"P{i:03d}" for i in range(n)],
            "age": rng.choice([30, 40, 50], n),
            "sex": rng.choice(["F", "M"], n),
            "flag_a": rng.integers(0, 2, n),
            "flag_b": rng.integers(0, 2, n),
            "diagnosis": rng.choice(["x", "y", "z"], n),
            "outcome": rng.integers(0, 2, n),
        }
    )
    return Table.from_frame(
        frame,
        roles={
            "pid": Role.IDENTIFIER,
            "age": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "diagnosis": Role.SENSITIVE,
            "outcome": Role.TARGET,
        },
    )


def tiny_matrix(seed=0, n=60, m=6) -> BinaryMatrix:
    rng = np.random.default_rng(seed)
    return BinaryMatrix.from_dense(rng.integers(0, 2, (n, m)), labels=rng.choice([1, -1], n))


def test_registry_has_every_kind():
    kinds = {k for k, _ in ALL}
    assert {"algorithm", "privacy-model", "metric", "chart", "importer", "exporter"} <= kinds


@pytest.mark.parametrize("kind, name", ALL)
def test_declaration(kind, name):
    cls = REGISTRY.get(kind, name)
    assert cls.valid_name() and cls.title, "every plugin has a kebab-case name and a title"
    described = cls.describe()
    assert described["name"] == name and described["kind"] == kind
    defaults = parse_params(cls.Params, {})
    for spec in cls.param_specs():
        assert spec.help or spec.type is bool or spec.choices, f"{name}.{spec.name} needs help text"
    assert parse_params(cls.Params, params_to_dict(defaults)) == defaults
    as_strings = {k: str(v) for k, v in params_to_dict(defaults).items() if v is not None}
    assert parse_params(cls.Params, as_strings) == defaults


ALGORITHMS = [n for k, n in ALL if k == "algorithm"]


def model_for(cls) -> str:
    """A model with a k that ``cls`` works under: the preferred one (k-anonymity) when it can."""
    fitting = REGISTRY.models_for(cls)
    preferred = REGISTRY.preferred("privacy-model")
    return preferred if preferred in fitting else fitting[0]


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("form", [TABLE, BINARY])
def test_algorithm_runs_passes_its_model_and_reproduces(name, form):
    cls = REGISTRY.get("algorithm", name)
    data = tiny_table() if form == TABLE else tiny_matrix()
    if form not in cls.accepts and not (form == TABLE and BINARY in cls.accepts):
        pytest.skip(f"{name} does not take {form} data")
    # k = 5 on 60 records: a value a release can fail (k = 1 never fails and would prove nothing)
    model = PluginCall(model_for(cls), {"k": 5})
    spec = RunSpec(PluginCall(name), model, seed=7)
    try:
        first = execute(REGISTRY, data, spec)
    except PrivacyCheckFailed as exc:
        # only a method that makes no attempt to satisfy a model may fail it, and then it is refused
        assert not cls.needs_model, f"{name} works under a model, yet its release fails it: {exc}"
        assert exc.verdict is not None and not exc.verdict.holds
        return
    second = execute(REGISTRY, data, spec)
    assert first.verdict is not None and first.verdict.holds and first.verdict.value >= 5
    assert pd.util.hash_pandas_object(first.release.frame).equals(pd.util.hash_pandas_object(second.release.frame))
    if form_of(data) == TABLE:
        ids = data.schema.by_role(Role.IDENTIFIER)
        assert not set(ids) & set(first.release.frame.columns), "identifiers never reach a release"


def test_a_method_under_a_model_is_refused_when_its_release_fails():
    """The check above can fail: all-features ignores k and its release of 60 records breaks k = 60."""
    with pytest.raises(PrivacyCheckFailed):
        execute(REGISTRY, tiny_table(), RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 60})))


METRIC_FORMS = [(n, f) for k, n in ALL if k == "metric" for f in REGISTRY.get("metric", n).accepts]


@pytest.mark.parametrize("name, form", METRIC_FORMS)
def test_metric_returns_a_number_on_what_it_accepts(name, form):
    data = tiny_table() if form == TABLE else tiny_matrix()
    for i, role in enumerate(REGISTRY.get("metric", name).needs_roles):  # a column marked as the metric reads
        frame = data.frame.assign(**{f"marked{i}": np.arange(data.n_rows) // 3})
        data = Table.from_frame(frame, roles={c.name: c.role for c in data.schema.columns} | {f"marked{i}": role})
    needs = REGISTRY.get("metric", name).requires  # a declared precondition: a method that provides it
    method = (
        next((a.name for a in REGISTRY.classes("algorithm") if needs in a.provides), None) if needs else "all-features"
    )
    assert method is not None, f"no method provides what {name} requires ({needs})"
    algorithm = REGISTRY.get("algorithm", method)
    model = PluginCall(model_for(algorithm), {"k": 2}) if algorithm.needs_model else None
    # a household id reaches a release (and its household risk) only when the user agrees to release it
    agreed = Role.HOUSEHOLD in REGISTRY.get("metric", name).needs_roles
    result = execute(REGISTRY, data, RunSpec(PluginCall(method), model, metrics=(name,)), release_household=agreed)
    value = result.metrics[name]
    assert isinstance(value, float) and np.isfinite(value), f"{name} gives {value} on {form} data it accepts"


@pytest.mark.parametrize("name", [n for k, n in ALL if k == "chart"])
def test_chart_draws_a_study(name):
    study = Study.from_dict(
        {
            "methods": ["all-features"],
            "model": "k-anonymity",
            "sweep": {"k": [1, 2]},
            "metrics": ["sfc", "auc", "min-group-size"],
            "data": {"demo": True},
        }
    )
    results = run_study(REGISTRY, study, Context(0), data=tiny_table())
    chart = REGISTRY.chart(name)
    fig = Figure()
    params = {"metric": "sfc"} if "metric" in {s.name for s in chart.param_specs()} else {"utility": "sfc"}
    draw_chart(REGISTRY, PluginCall(name, params), results, fig)  # the engine tells charts each metric's orientation
    assert fig.axes and (fig.axes[0].lines or fig.axes[0].patches or fig.axes[0].collections)


@pytest.mark.parametrize("name", [n for k, n in ALL if k == "exporter"])
def test_exporter_round_trip(name, tmp_path):
    exporter = REGISTRY.exporter(name)
    if exporter.writes_sets:  # a set-valued release: line i is the centre rows[i], read back as sorted text
        from veil.engine import SetValued

        centres = SetValued.from_sets([["b", "a"], [], ["c"]])
        path = tmp_path / f"out.{exporter.extension}"
        exporter.write_sets(centres, [2, 0, 0, 1], path, exporter.params())
        assert exporter.read_back(path).iloc[:, 0].tolist() == ["c", "a b", "a b", ""]
        if exporter.refuses(tiny_table()):  # it writes set-valued releases only
            return
    frame = tiny_table().frame.drop(columns=["pid"])
    if name == "spmf":
        frame = frame[["flag_a", "flag_b", "outcome"]]
    path = tmp_path / f"out.{exporter.extension}"
    exporter.write(frame, path, exporter.params())
    back = exporter.read_back(path)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), frame.reset_index(drop=True), check_dtype=False)


@pytest.mark.parametrize("name", [n for k, n in ALL if k == "privacy-model"])
def test_a_model_declares_what_it_judges(name):
    """A model judging groups one by one (``check_groups``, which Mondrian asks during its search)
    says so among its kinds of judgement (or judges combinations of the quasi-identifiers, each one's
    groups by ``check_groups``, and then declares how many columns it combines); a model judging
    nothing a method can satisfy would run only under methods that steer by no model."""
    cls = REGISTRY.get("privacy-model", name)
    assert cls.judges, f"{name} declares no kind of judgement"
    by_combination = Judgement.COMBINATIONS in cls.judges
    assert (Judgement.GROUPS in cls.judges or by_combination) == bool(cls.judges_groups)
    assert by_combination == (cls().combined_columns(cls.Params()) is not None)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_a_method_needing_a_model_works_under_an_installed_one(name):
    cls = REGISTRY.get("algorithm", name)
    if cls.needs_model:
        assert cls.satisfies and REGISTRY.models_for(cls), f"{name} needs a model and none it works under is installed"


@pytest.mark.parametrize("name", [n for n in ALGORITHMS if REGISTRY.get("algorithm", n).ranker is not None])
def test_a_ranker_declares_what_the_desktop_shows(name):
    """A method's ranker names a title, weights that are the method's own parameters, and charts
    that are installed: the ranking tab reads nothing else of the method."""
    cls = REGISTRY.get("algorithm", name)
    ranker = cls.ranker
    assert ranker.title and ranker.weights
    assert set(ranker.params) <= {s.name for s in cls.param_specs()}, "the weights are the method's parameters"
    assert set(ranker.charts) <= set(REGISTRY.names("chart"))
    for chart in ranker.charts:
        assert "weights" in {s.name for s in REGISTRY.get("chart", chart).param_specs()}
