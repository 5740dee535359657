"""The run path: preparation, labels, privacy re-check, cancellation, seeds, studies."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from veil.engine import (Algorithm, BadInput, BinaryMatrix, CancelToken, Cancelled, Context, PluginCall,
                         PrivacyCheckFailed, Role, RunSpec, Study, Table, execute, feature_subset, hookimpl,
                         make_registry, run_study)
from veil.engine.run.study import summarise


def small_table():
    frame = pd.DataFrame({"name": list("abcdefgh"), "zip": ["1", "1", "2", "2", "1", "1", "2", "2"],
                          "sex": list("FMFMFMFM"), "y": [0, 1, 0, 1, 0, 1, 0, 1]})
    return Table.from_frame(frame, roles={"name": Role.IDENTIFIER, "zip": Role.QUASI_IDENTIFIER,
                                          "sex": Role.QUASI_IDENTIFIER, "y": Role.TARGET})


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
    execute(reg, small_table(), RunSpec(PluginCall("all-features"), metrics=("sfc",)),
            Context(0, lambda f, m: seen.append(f)))
    assert seen == sorted(seen) and seen[-1] == 1.0


def test_study_is_tidy_and_sweeps_the_model(reg):
    study = Study.from_dict({"methods": ["all-features"], "model": "k-anonymity", "sweep": {"k": [1, 2, 3]},
                             "repeats": 2, "metrics": ["sfc"]})
    results = run_study(reg, study, data=small_table())
    assert len(results) == 3 * 2 * 2  # k values × repeats × (sfc + privacy-value)
    k3 = results[results["k"] == 3]
    assert (k3["holds"] == False).all()  # noqa: E712
    assert (k3[k3["metric"] == "sfc"]["value"] == 2).all()  # the baseline keeps its figures (issue 13 item 9)
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
    study = Study.from_dict({"methods": [{"name": "all-features", "fixed": True},
                                         {"name": "rf-flipping", "model": "k-anonymity"}],
                             "sweep": {"k": [2]}, "metrics": ["sfc"]})
    runs = study.runs(reg)
    assert [r.method.name for r in runs].count("rf-flipping") == 10
    assert [r.method.name for r in runs].count("all-features") == 1
    explicit = Study.from_dict({"methods": ["rf-flipping"], "model": "k-anonymity", "sweep": {"k": [2]}, "repeats": 3})
    assert len(explicit.runs(reg)) == 3


def test_a_parameter_typed_on_a_command_line_makes_the_same_run_as_in_a_study_file(reg):
    from veil.engine import settings_of

    typed = Study.from_dict({"methods": ["all-features"], "model": "k-anonymity:k=2"}).runs(reg)
    filed = Study.from_dict({"methods": ["all-features"], "model": {"name": "k-anonymity", "params": {"k": 2}}}).runs(reg)
    assert typed[0].model.params == {"k": 2} and type(typed[0].model.params["k"]) is int
    assert settings_of(typed[0]) == settings_of(filed[0])
    swept = Study.from_dict({"methods": ["all-features"], "model": "k-anonymity", "sweep": {"k": ["3"]}}).runs(reg)
    assert swept[0].model.params == {"k": 3}
    with pytest.raises(BadInput, match="k"):  # a value that does not convert is still named by the plan
        Study.from_dict({"methods": ["all-features"], "model": "k-anonymity:k=two"}).plan(reg)
