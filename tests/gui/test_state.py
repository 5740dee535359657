"""The panels' Qt-free state: roles, the recipe, how a configuration becomes runs, results."""

from __future__ import annotations

import math

import pytest

from veil.desktop.state import LEAVE_OUT, ConfigState, DatasetState, RunsState, project_of
from veil.desktop.state.tasks import Loaded, RunOutcome, column_stats, table_stats
from veil.engine import BadInput, BinaryMatrix, Context, DataSource, Kind, PluginCall, Role, RunSpec, Step, load_demo


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture
def dataset(demo):
    state = DatasetState()
    state.load(Loaded(demo, DataSource(demo=True), table_stats(demo, Context())))
    return state


def test_a_new_target_displaces_the_old_one(dataset):
    seen = []
    dataset.changed.connect(seen.append)
    dataset.set_roles(["diagnosis_group"], Role.TARGET)
    schema = dataset.table.schema
    assert schema.target == "diagnosis_group" and schema["readmitted_30d"].role is Role.INSENSITIVE
    assert seen == ["schema"]
    with pytest.raises(BadInput, match="only one column"):
        dataset.set_roles(["sex", "age"], Role.TARGET)


def test_identifiers_and_the_target_never_become_features(dataset):
    assert "mrn" not in dataset.binarisable() and "readmitted_30d" not in dataset.binarisable()
    dataset.set_roles(["postcode_district"], Role.IDENTIFIER)
    assert "postcode_district" not in dataset.binarisable()
    assert all(f.column != "postcode_district" for f in dataset.features())
    with pytest.raises(BadInput, match="never becomes a feature"):
        dataset.set_rule("mrn", "one-hot")


def test_rules_change_the_features_and_the_recipe(dataset):
    before = {f.column: len(f.features) for f in dataset.features()}
    assert before["age"] == 4  # quantile intervals by default
    dataset.set_rule("age", "cuts", cuts=[40, 65])
    dataset.set_rule("postcode_district", LEAVE_OUT)
    after = {f.column: f for f in dataset.features()}
    names = [n for n, _ in after["age"].features]
    assert len(names) == 3 and names[0].endswith(",40)") and names[1] == "age∈[40,65)"
    assert sum(c for _, c in after["age"].features) == dataset.table.n_rows
    assert "postcode_district" not in after
    recipe = dataset.recipe()
    assert recipe.target == "readmitted_30d" and "postcode_district" not in [s.column for s in recipe.steps]
    assert recipe.apply(dataset.table).n_features == sum(len(f.features) for f in after.values())


def test_a_rule_that_does_not_fit_the_column_explains_itself(dataset):
    dataset.rules["sex"] = Step("sex", "binary")  # F/M is not 0/1
    bad = next(f for f in dataset.features() if f.column == "sex")
    assert "'binary'" in bad.error and "sex" in bad.error and bad.features == ()


def test_a_new_kind_changes_the_summary_and_the_default_rule(dataset):
    assert dataset.step("length_of_stay").rule in ("quantile", "one-hot")
    dataset.set_kind("age", Kind.CATEGORICAL)
    assert dataset.column("age").kind is Kind.CATEGORICAL
    assert not dataset.stats["age"].numeric and dataset.step("age").rule == "one-hot"


def test_column_stats_count_and_bin():
    demo = load_demo()
    age = column_stats(demo.frame["age"], Kind.NUMERIC)
    assert age.numeric and sum(c for _, c in age.bars) == demo.n_rows and age.minimum == 18
    sex = column_stats(demo.frame["sex"], Kind.CATEGORICAL)
    assert not sex.numeric and {b[0] for b in sex.bars} == {"F", "M"} and sex.distinct == 2


def test_offered_methods_follow_the_data(registry, demo):
    on_table = {c.name for c in registry.methods_for(demo)}
    assert "all-features" in on_table
    matrix = BinaryMatrix.from_transactions([["a", "b"], ["b"]])
    on_matrix = {c.name for c in registry.methods_for(matrix)}
    assert all(
        {"binary", "transactions", "sets"} & set(c.accepts)
        for c in registry.classes("algorithm")
        if c.name in on_matrix
    )
    assert "patternka" in on_matrix  # item sets go to the methods that take them as sets
    assert not any(c.needs_labels for c in registry.classes("algorithm") if c.name in on_matrix)  # no labels here


def test_a_sweep_becomes_one_run_per_value(registry, demo):
    config = ConfigState()
    config.set_model("k-anonymity")
    config.set_params("privacy-model", "k-anonymity", {"k": 5}, {"k": [2, 5, 10]})
    config.select("all-features")
    config.set_metrics(["sfc"])
    config.set_seed(7, 2)
    planned = config.plan(registry, demo)
    assert [(p.setting["k"], p.spec.seed) for p in planned] == [(2, 7), (2, 8), (5, 7), (5, 8), (10, 7), (10, 8)]
    assert planned[0].spec.model == PluginCall("k-anonymity", {"k": 2}) and planned[0].spec.metrics == ("sfc",)
    assert planned[1].label == "all-features (k-anonymity, k = 2, repeat 2)"
    assert config.describe(planned) == "6 runs: all-features × k ∈ {2, 5, 10} × 2 repeats"


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda c: None, "choose at least one method"),
        (
            lambda c: (c.select("all-features"), c.set_params("privacy-model", "k-anonymity", {"k": 0}, {})),
            "must be ≥ 1",
        ),
    ],
)
def test_a_configuration_that_cannot_run_says_why(registry, demo, setup, message):
    config = ConfigState()
    config.set_model("k-anonymity")
    setup(config)
    with pytest.raises(BadInput, match=message):
        config.plan(registry, demo)


def test_methods_that_need_a_model_or_a_target(registry, demo):
    needing = [c for c in registry.classes("algorithm") if c.needs_model]
    if not needing:
        pytest.skip("no registered method needs a privacy model")
    config = ConfigState()
    config.select(needing[0].name)
    with pytest.raises(BadInput, match="needs a privacy model"):
        config.plan(registry, demo)
    labelled = [c for c in registry.classes("algorithm") if c.needs_labels and not c.needs_model]
    if labelled:
        config = ConfigState()
        config.select(labelled[0].name)
        with pytest.raises(BadInput, match="needs a target"):
            config.plan(registry, demo.with_roles({"readmitted_30d": "insensitive"}))


def test_load_runs_turns_varying_values_back_into_sweeps():
    runs = [
        RunSpec(PluginCall("m", {"a": 1, "b": v}), PluginCall("k-anonymity", {"k": k}), seed, ("sfc", "auc:folds=3"))
        for v in (0.5, 0.7)
        for k in (5, 8)
        for seed in (3, 4)
    ]
    config = ConfigState()
    config.load_runs(runs)
    assert config.model == "k-anonymity" and config.selected == ["m"]
    assert config.methods["m"].values == {"a": 1, "b": 0.5} and config.methods["m"].sweeps == {"b": [0.5, 0.7]}
    assert config.models["k-anonymity"].sweeps == {"k": [5, 8]}
    assert (config.seed, config.repeats) == (3, 2)
    assert config.metrics == ["sfc", "auc"] and config.metric_specs() == ("sfc", "auc:folds=3")


def _finish(runs: RunsState, planned, holds=True, value=0.8):
    entry = runs.add([planned])[0]
    runs.start(entry)
    verdict = "holds: fine" if holds else "the release fails k-anonymity: fails: 3 records"
    metrics = {"auc": value if holds else math.nan}
    runs.finish(entry, RunOutcome(holds, verdict, 5.0, metrics, 0.1))
    return entry


def test_results_are_tidy_like_a_study(registry, demo):
    config = ConfigState()
    config.set_model("k-anonymity")
    config.set_params("privacy-model", "k-anonymity", {"k": 5}, {"k": [2, 5]})
    config.select("all-features")
    planned = config.plan(registry, demo)
    runs = RunsState()
    _finish(runs, planned[0])
    _finish(runs, planned[1], holds=False)
    frame = runs.results()
    assert list(frame.columns) == [
        "run",
        "label",
        "method",
        "model",
        "k",
        "repeat",
        "seed",
        "settings",
        "holds",
        "metric",
        "value",
        "seconds",
        "error",
    ]  # as the engine's planner makes it
    assert frame["settings"].nunique() == 2  # k = 2 and k = 5: two settings, never averaged together
    assert frame.attrs["sweep"] == ["k"] and len(frame) == 4  # auc and privacy-value per run
    failed = frame[frame["holds"] == False]  # noqa: E712
    assert failed["error"].str.contains("fails").all() and failed[failed.metric == "auc"]["value"].isna().all()
    header, rows = runs.table()
    assert header == ["run", "method", "model", "k", "seed", "verdict", "auc", "privacy-value", "seconds"]
    assert rows[0][5].startswith("holds") and rows[1][5].startswith("fails")

    again = RunsState()
    again.restore(runs.records())
    assert _same(again.table(), (header, rows))
    assert again.add([planned[0]])[0].id == 3  # new runs do not reuse restored ids


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_a_project_keeps_roles_recipe_runs_and_results(registry, dataset, tmp_path):
    dataset.set_roles(["age"], Role.INSENSITIVE)
    dataset.set_rule("age", "equal-width", bins=3)
    config = ConfigState()
    config.set_model("k-anonymity")
    config.set_params("privacy-model", "k-anonymity", {"k": 2}, {})
    config.select("all-features")
    project = project_of(registry, dataset, config, RunsState())
    assert project.data.demo and project.schema["age"].role is Role.INSENSITIVE
    assert project.runs[0].model == PluginCall("k-anonymity", {"k": 2})
    assert any(s.column == "age" and s.rule == "equal-width" and s.bins == 3 for s in project.recipe.steps)
    saved = project.save(tmp_path / "p.veil.json")
    loaded = type(project).load(saved)
    assert [r.to_dict() for r in loaded.runs] == [r.to_dict() for r in project.runs]
    assert loaded.recipe.to_dict() == project.recipe.to_dict()


def test_runs_with_different_settings_are_never_repeats(registry, demo):
    """Two batches that differ in a fixed parameter or the model show it in their
    labels and results, and a chart groups them apart."""
    runs = RunsState()
    labels = []
    for model, k in (("k-anonymity", 5), ("k-anonymity", 8), ("k-ac", 5)):
        config = ConfigState()
        config.set_model(model)
        config.set_params("privacy-model", model, {"k": k}, {})
        config.select("greedy-hamdist")
        config.set_params("algorithm", "greedy-hamdist", {}, {})
        planned = config.plan(registry, demo)
        labels.append(planned[0].label)
        _finish(runs, planned[0], value=0.7 + k / 100)
    assert labels == [
        "greedy-hamdist (k-anonymity k = 5)",
        "greedy-hamdist (k-anonymity k = 8)",
        "greedy-hamdist (k-ac k = 5)",
    ]
    frame = runs.results()
    assert frame.attrs["sweep"] == ["k"]
    auc = frame[frame.metric == "auc"]
    assert list(auc["k"]) == [5, 8, 5] and auc["label"].nunique() == 2  # the model tells k-ac apart
    assert len(auc.groupby(["label", "k"])) == 3  # three bars, nothing averaged
    header, rows = runs.table()
    assert [r[header.index("model")] for r in rows] == ["k-anonymity", "k-anonymity", "k-ac"]


def test_a_non_default_method_parameter_is_in_the_label(registry, demo):
    config = ConfigState()
    config.set_model("k-anonymity")
    config.select("greedy-hamdist")
    config.set_params("algorithm", "greedy-hamdist", {"on_violation": "stop", "skip_zero_score": True}, {})
    label = config.plan(registry, demo)[0].label
    assert "on_violation = stop" in label and "skip_zero_score" not in label  # a default is not news


def test_a_kept_run_on_binary_features_keeps_neither_its_input_nor_its_features(demo, registry, tmp_path, monkeypatch):
    """The features a method ran on are made again from the input on reopening, as the run made them."""
    from veil.desktop.state.project import kept_form, restored_form
    from veil.engine import input_parts, keep_results, kept_folder, restore_results, run_planned

    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(tmp_path / "settings"))
    table = demo.with_roles({"postcode_district": "identifier"})
    spec = RunSpec(PluginCall.parse("greedy-distcnt"), (PluginCall.parse("k-ac:k=5"),), 0, ())
    outcome = run_planned(registry, table, spec, Context())
    assert isinstance(outcome.result.data, BinaryMatrix)  # made from the table: not the input itself
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: kept_form(outcome)}, input_sha256="x", version="v", inputs=input_parts(table))
    features = outcome.result.data
    kept = (kept_folder(project) / "run-1.pickle").stat().st_size
    released = (outcome.result.release, outcome.result.verdict)
    assert kept < len(__import__("pickle").dumps(released, protocol=5)) + 20_000
    back = restored_form(
        registry, restore_results(project, input_sha256="x", version="v", inputs=input_parts(table)).results[1]
    )
    again = back.result.data
    assert again.feature_names == features.feature_names and again.n_rows == features.n_rows
    assert (again.column_counts() == features.column_counts()).all()
    assert back.result.release.selected_features == outcome.result.release.selected_features
