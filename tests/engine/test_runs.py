"""The run path: preparation, labels, privacy re-check, cancellation, seeds, studies."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    Algorithm,
    BadInput,
    BinaryMatrix,
    CancelToken,
    Cancelled,
    Context,
    Judgement,
    PluginCall,
    PrivacyCheckFailed,
    Role,
    RunSpec,
    Study,
    Table,
    check_data,
    execute,
    feature_subset,
    hookimpl,
    make_registry,
    run_study,
)
from veil.engine.run.study import summarise


def small_table():
    frame = pd.DataFrame(
        {
            "name": list("abcdefgh"),
            "zip": ["1", "1", "2", "2", "1", "1", "2", "2"],
            "sex": list("FMFMFMFM"),
            "y": [0, 1, 0, 1, 0, 1, 0, 1],
        }
    )
    return Table.from_frame(
        frame,
        roles={"name": Role.IDENTIFIER, "zip": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER, "y": Role.TARGET},
    )


class Slow(Algorithm):
    """Works until cancelled, reporting progress as a method must."""

    name = "slow"
    title = "Slow"
    accepts = ("binary", "table")
    started = threading.Event()

    def run(self, data, model, params, ctx):
        Slow.started.set()
        for i in range(10_000):
            ctx.progress(i / 10_000)
            threading.Event().wait(0.001)
        return feature_subset(data, [])


class NeedsLabels(Algorithm):
    name = "needs-labels"
    title = "Needs labels"
    accepts = ("binary",)
    needs_labels = True

    def run(self, data, model, params, ctx):
        return feature_subset(data, [0])


class _Plugins:
    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [Slow, NeedsLabels]


@pytest.fixture
def reg():
    return make_registry(modules=[_Plugins])


def test_all_features_on_a_table_holds_k2(reg):
    result = execute(reg, small_table(), RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2})))
    assert result.verdict.holds and result.verdict.value == 2
    assert list(result.release.frame.columns) == ["zip", "sex", "y"]
    assert result.release.quasi_identifiers == ("zip", "sex")


def test_failing_release_raises_with_the_records(reg):
    with pytest.raises(PrivacyCheckFailed) as info:
        execute(reg, small_table(), RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 3})))
    assert len(info.value.verdict.failing_rows) == 8


def test_k_larger_than_rows_is_bad_input(reg):
    with pytest.raises(BadInput, match="larger than the number of records"):
        execute(reg, small_table(), RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 9})))


def test_cancel_stops_a_run_quickly(reg):
    token = CancelToken()
    errors = []

    def work():
        try:
            execute(reg, small_table(), RunSpec(PluginCall("slow")), Context(0, token=token))
        except Cancelled as exc:
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    assert Slow.started.wait(5)
    token.cancel()
    thread.join(0.5)
    assert not thread.is_alive() and len(errors) == 1


def test_labels_required(reg):
    unlabelled = BinaryMatrix.from_dense(np.eye(4, dtype=int))
    with pytest.raises(BadInput, match="needs a target"):
        execute(reg, unlabelled, RunSpec(PluginCall("needs-labels")))
    one_class = unlabelled.with_labels([1, 1, 1, 1])
    with pytest.raises(BadInput, match="at least two classes"):
        execute(reg, one_class, RunSpec(PluginCall("needs-labels")))


def test_progress_is_monotone_and_reaches_one(reg):
    seen = []
    execute(
        reg,
        small_table(),
        RunSpec(PluginCall("all-features"), metrics=("sfc",)),
        Context(0, lambda f, m: seen.append(f)),
    )
    assert seen == sorted(seen) and seen[-1] == 1.0


def test_study_is_tidy_and_sweeps_the_model(reg):
    study = Study.from_dict(
        {
            "methods": ["all-features"],
            "model": "k-anonymity",
            "sweep": {"k": [1, 2, 3]},
            "repeats": 2,
            "metrics": ["sfc"],
        }
    )
    results = run_study(reg, study, data=small_table())
    assert len(results) == 3 * 2 * 2  # k values × repeats × (sfc + privacy-value)
    k3 = results[results["k"] == 3]
    assert (k3["holds"] == False).all()  # noqa: E712
    assert (k3[k3["metric"] == "sfc"]["value"] == 2).all()  # the baseline keeps its figures
    assert (k3[k3["metric"] == "privacy-value"]["value"] == 2).all(), "the smallest group is still reported"
    ok = results[(results["k"] < 3) & (results["metric"] == "sfc")]
    assert (ok["value"] == 2).all() and set(ok["seed"]) == {0, 1}
    summary = summarise(results, ["k"])
    assert set(summary.columns) >= {"mean", "std", "count"}


def test_swept_parameter_must_belong_to_someone(reg):
    study = Study.from_dict({"methods": ["all-features"], "sweep": {"epsilon": [1.0]}})
    with pytest.raises(BadInput, match="belongs to neither"):
        study.runs(reg)


class Recorder(Algorithm):
    """Releases every feature and records the rows it was run on."""

    name = "recorder"
    title = "Recorder"
    accepts = ("binary",)
    seen: list = []

    def run(self, data, model, params, ctx):
        Recorder.seen.append(data.n_rows)
        return feature_subset(data, list(range(data.n_features)))


class _RecorderPlugin:
    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [Recorder]


def test_nested_protocol_reruns_the_method_on_training_folds():
    reg = make_registry(modules=[_RecorderPlugin])
    rng = np.random.default_rng(0)
    D = rng.integers(0, 2, (100, 4))
    y = np.where(D[:, 0] ^ (rng.random(100) < 0.2), 1, -1)
    M = BinaryMatrix.from_dense(D, labels=y)
    Recorder.seen = []
    result = execute(reg, M, RunSpec(PluginCall("recorder"), metrics=("auc", "auc:folds=4,protocol=nested")))
    assert Recorder.seen == [100, 75, 75, 75, 75]
    nested = result.metrics["auc:folds=4,protocol=nested"]
    assert 0.6 < nested <= 1.0 and abs(nested - result.metrics["auc"]) < 0.1


def test_an_explicit_recipe_makes_a_table_binary_for_methods_that_take_both(reg):
    from veil.engine import Recipe, Step

    recipe = Recipe((Step("sex", "equals", value="F"),), "y")
    plain = execute(reg, small_table(), RunSpec(PluginCall("all-features")))
    binary = execute(reg, small_table(), RunSpec(PluginCall("all-features"), recipe=recipe))
    assert plain.release.selected_features == ("zip", "sex")
    assert binary.release.selected_features == ("sex=F",)


def test_a_study_without_repeats_uses_each_methods_default(reg):
    study = Study.from_dict(
        {
            "methods": [{"name": "all-features", "fixed": True}, {"name": "rf-flipping", "model": "k-anonymity"}],
            "sweep": {"k": [2]},
            "metrics": ["sfc"],
        }
    )
    runs = study.runs(reg)
    assert [r.method.name for r in runs].count("rf-flipping") == 10
    assert [r.method.name for r in runs].count("all-features") == 1
    explicit = Study.from_dict({"methods": ["rf-flipping"], "model": "k-anonymity", "sweep": {"k": [2]}, "repeats": 3})
    assert len(explicit.runs(reg)) == 3


def test_a_parameter_typed_on_a_command_line_makes_the_same_run_as_in_a_study_file(reg):
    from veil.engine import settings_of

    typed = Study.from_dict({"methods": ["all-features"], "model": "k-anonymity:k=2"}).runs(reg)
    filed = Study.from_dict({"methods": ["all-features"], "model": {"name": "k-anonymity", "params": {"k": 2}}}).runs(
        reg
    )
    assert typed[0].model.params == {"k": 2} and type(typed[0].model.params["k"]) is int
    assert settings_of(typed[0]) == settings_of(filed[0])
    swept = Study.from_dict({"methods": ["all-features"], "model": "k-anonymity", "sweep": {"k": ["3"]}}).runs(reg)
    assert swept[0].model.params == {"k": 3}
    with pytest.raises(BadInput, match="k"):  # a value that does not convert is still named by the plan
        Study.from_dict({"methods": ["all-features"], "model": "k-anonymity:k=two"}).plan(reg)


# -- kinds of privacy judgement: a method works under the models that judge what it makes -----------------
class ContainmentOnly(Algorithm):
    """A method that can only satisfy a containment judgement (as a frequent-itemset method does)."""

    name = "containment-only"
    title = "Containment only"
    accepts = ("binary", "table")
    needs_model = True
    satisfies = (Judgement.CONTAINMENT,)

    def run(self, data, model, params, ctx):
        return feature_subset(data, [])


class GroupSizeOnly(Algorithm):
    """A method that makes groups of at least k records and nothing else."""

    name = "group-size-only"
    title = "Group size only"
    accepts = ("table",)
    needs_model = True
    satisfies = (Judgement.GROUP_SIZE,)

    def run(self, data, model, params, ctx):
        return feature_subset(data, [])


class _Judged:
    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [ContainmentOnly, GroupSizeOnly]


@pytest.fixture
def judged():
    return make_registry(modules=[_Judged])


def _refusal(registry, method, model, data=None) -> str:
    spec = RunSpec(PluginCall(method), PluginCall(model, {"k": 2}) if model else None)
    with pytest.raises(BadInput) as run_error:
        execute(registry, data if data is not None else small_table(), spec)
    with pytest.raises(BadInput) as plan_error:  # the study's and the desktop's check, before any run
        check_data(registry, data if data is not None else small_table(), spec)
    return f"{run_error.value}\n{plan_error.value}"


def test_a_method_is_refused_under_a_model_that_judges_what_it_does_not_make(judged):
    words = _refusal(judged, "containment-only", "k-anonymity")
    fitting = judged.models_for(ContainmentOnly)
    assert fitting and "k-anonymity" not in fitting
    for line in words.splitlines():  # which models instead, what they judge, and which model was refused
        assert f"works under {' or '.join(fitting)}" in line and "not k-anonymity" in line
        assert Judgement.CONTAINMENT.words in line
    # a method making groups of k is refused under a model that judges the groups' sensitive values
    l_diversity = next(
        n for n in judged.names("privacy-model") if set(judged.get("privacy-model", n).judges) == {Judgement.GROUPS}
    )
    assert "works under" in _refusal(judged, "group-size-only", l_diversity)
    assert f"not {l_diversity}" in _refusal(judged, "group-size-only", l_diversity)


def test_a_method_that_needs_a_model_names_the_ones_it_works_under(judged):
    words = _refusal(judged, "containment-only", None, BinaryMatrix.from_dense(np.eye(4, dtype=np.uint8)))
    assert "needs a privacy model" in words
    assert all(n in words for n in judged.models_for(ContainmentOnly))
    assert "k-anonymity" not in words


def test_pairing_is_by_the_kinds_declared_never_by_name(judged):
    """A model from a third party works under the methods that satisfy what it declares it judges."""
    from veil.engine import GroupSizeModel, param
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class KParams:
        k: int = param(2, minimum=1, help="group size")

    class Contained(GroupSizeModel):
        name = "contained-test"
        title = "Contained (test)"
        judges = (Judgement.CONTAINMENT,)
        Params = KParams

    class _Model:
        @staticmethod
        @hookimpl
        def veil_register_privacy_models():
            return [Contained]

    reg = make_registry(modules=[_Judged, _Model])
    assert "contained-test" in reg.models_for(ContainmentOnly)
    assert "contained-test" not in reg.models_for(GroupSizeOnly)
    assert ContainmentOnly.works_under(Contained) and not GroupSizeOnly.works_under(Contained)
    # a method that steers by no model works under every one: the model judges its release afterwards
    assert reg.models_for(reg.get("algorithm", "all-features")) == reg.names("privacy-model")


def test_a_kind_of_judgement_that_does_not_exist_is_refused_at_registration():
    class Misdeclared(Algorithm):
        name = "misdeclared"
        title = "Misdeclared"
        satisfies = ("group-sise",)

    class _Bad:
        @staticmethod
        @hookimpl
        def veil_register_algorithms():
            return [Misdeclared]

    reg = make_registry(modules=[_Bad])
    assert "misdeclared" not in reg.names("algorithm")
    assert any("group-sise" in f.error and "group-size" in f.error for f in reg.failures)
