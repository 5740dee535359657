"""Several privacy models in one run: the release must satisfy all of them."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import (
    BadInput,
    BinaryMatrix,
    GroupVerdict,
    GroupView,
    KacConstraint,
    KAnonymityConstraint,
    PluginCall,
    PrivacyCheckFailed,
    PrivacyModel,
    RunSpec,
    Study,
    execute,
    hookimpl,
    make_registry,
    param,
    run_study,
)
from veil.engine.model.bound import CombinedModel, bind_models
from veil.engine.kernels.containment import AllOf, class_sizes_per_record, kac

REGISTRY = make_registry()


@dataclass(frozen=True)
class MaxParams:
    m: int = param(3, minimum=1, help="largest allowed group")


class AtMost(PrivacyModel):
    """A test model judging groups from the other side: no group larger than m."""

    name = "at-most"
    title = "At most m per group"
    Params = MaxParams
    judges_groups = True
    higher_is_safer = False
    measure = "group size"

    def check_groups(self, view, params):
        return GroupVerdict(view.sizes, view.sizes <= params.m, higher_is_safer=False)


class _Plugins:
    @staticmethod
    @hookimpl
    def veil_register_privacy_models():
        return [AtMost]


def test_run_spec_keeps_one_model_as_before_and_takes_several():
    one = RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2}))
    assert one.model == PluginCall("k-anonymity", {"k": 2}) and len(one.models) == 1
    both = RunSpec(PluginCall("all-features"), ["k-anonymity:k=2", "k-ac:k=3"])
    assert [m.name for m in both.models] == ["k-anonymity", "k-ac"] and both.model.name == "k-anonymity"
    assert RunSpec.from_dict(json.loads(json.dumps(both.to_dict()))) == both
    assert RunSpec.from_dict(json.loads(json.dumps(one.to_dict()))) == one
    assert RunSpec(PluginCall("all-features")).model is None and RunSpec(PluginCall("x")).models == ()
    assert RunSpec(PluginCall("a"), models=[PluginCall("k-ac")]).model == PluginCall("k-ac")


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(1, 6))
def test_combined_selection_allows_exactly_what_both_models_allow(seed, k_kac, k_anon):
    """AllOf against a brute-force recomputation of kac and class sizes from scratch."""
    rng = np.random.default_rng(seed)
    matrix = BinaryMatrix.from_dense(rng.random((30, 7)) < 0.4)
    rule = AllOf([KacConstraint(matrix, k_kac), KAnonymityConstraint(matrix, k_anon)])
    chosen = []
    for f in rng.permutation(7):
        trial = chosen + [int(f)]
        allowed = kac(matrix, trial) >= k_kac and class_sizes_per_record(matrix, trial).min() >= k_anon
        assert rule.feasible(int(f)) == allowed
        if allowed:
            rule.add(int(f))
            chosen = trial
    assert rule.selected == chosen


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.integers(1, 4), st.integers(1, 8))
def test_combined_check_groups_is_the_and_of_every_model(groups, k, m):
    reg = make_registry(modules=[_Plugins])
    both = bind_models(reg, [PluginCall("k-anonymity", {"k": k}), PluginCall("at-most", {"m": m})])
    view = GroupView.from_labels(groups)
    sizes = pd.Series(groups).value_counts(sort=False).reindex(pd.unique(pd.Series(groups))).to_numpy()
    assert both.check_groups(view).ok.tolist() == ((sizes >= k) & (sizes <= m)).tolist()


def test_a_model_named_twice_is_refused():
    with pytest.raises(BadInput, match="named twice"):
        bind_models(REGISTRY, [PluginCall("k-anonymity", {"k": 2}), PluginCall("k-anonymity", {"k": 3})])


def _matrix(seed=3):
    rng = np.random.default_rng(seed)
    return BinaryMatrix.from_dense(rng.random((80, 8)) < 0.3, labels=rng.choice([0, 1], 80))


def test_a_run_under_two_models_satisfies_both_and_records_a_verdict_each():
    spec = RunSpec(PluginCall("greedy-hamdist"), ["k-anonymity:k=4", "k-ac:k=6"])
    result = execute(REGISTRY, _matrix(), spec)
    assert [v.model for v in result.verdicts] == ["k-anonymity", "k-ac"] and result.holds
    assert [m["name"] for m in result.release.provenance.models] == ["k-anonymity", "k-ac"]
    for call in spec.models:  # each model alone also holds on the release
        assert bind_models(REGISTRY, [call]).check(result.release).holds
    alone = execute(REGISTRY, _matrix(), RunSpec(PluginCall("greedy-hamdist"), ["k-anonymity:k=4"]))
    assert (
        set(result.release.selected_features) <= set(alone.release.selected_features)
        or bind_models(REGISTRY, [PluginCall("k-ac", {"k": 6})]).check(alone.release).holds is False
    )


def test_a_release_failing_one_of_two_models_is_refused_naming_it():
    spec = RunSpec(PluginCall("all-features"), ["k-anonymity:k=1", "k-ac:k=80"])
    with pytest.raises(PrivacyCheckFailed, match="k-ac"):
        execute(REGISTRY, _matrix(), spec)


def test_a_study_with_models_sweeps_the_model_that_declares_the_value():
    study = Study.from_dict(
        {
            "methods": ["greedy-hamdist"],
            "models": ["k-anonymity:k=2", "k-ac"],
            "sweep": {"k": [3, 5]},
            "metrics": ["sfc"],
        }
    )
    specs = study.runs(REGISTRY)
    assert [[m.params.get("k") for m in s.models] for s in specs] == [[3, 3], [5, 5]]
    results = run_study(REGISTRY, study, data=_matrix())
    assert set(results["model"]) == {"k-anonymity + k-ac"}
    assert isinstance(bind_models(REGISTRY, specs[0].models), CombinedModel)


def test_cli_runs_and_verifies_under_repeated_models(tmp_path, capsys):
    from veil.cli import main

    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--demo",
            "--method",
            "greedy-hamdist",
            "--model",
            "k-anonymity:k=3",
            "--model",
            "k-ac:k=5",
            "--metrics",
            "sfc",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "all 2 privacy models" in report and "containment" in report
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [m["name"] for m in manifest["privacy_models"]] == ["k-anonymity", "k-ac"]
    assert [v["model"] for v in manifest["verdicts"]] == ["k-anonymity", "k-ac"]
    assert all(v["holds"] for v in manifest["verdicts"])
    assert main(["verify", str(out)]) == 0
    released = out / manifest["output"]["path"]
    assert (
        main(
            [
                "verify",
                str(released),
                "--target",
                manifest["roles"]["target"],
                "--model",
                "k-anonymity:k=3",
                "--model",
                "k-ac:k=5",
            ]
        )
        == 0
    )
    manifest["privacy_models"][1]["params"]["k"] = 10**6  # a tampered second model is checked too
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["verify", str(out)]) != 0


def test_a_project_keeps_every_model(tmp_path):
    from veil.engine import DataSource, Project

    spec = RunSpec(PluginCall("greedy-hamdist"), ["k-anonymity:k=3", "k-ac:k=5"], 2, ("sfc",))
    Project(DataSource(demo=True), runs=(spec,)).save(tmp_path / "p.json")
    assert Project.load(tmp_path / "p.json").runs == (spec,)


def test_runs_with_different_settings_are_never_averaged_as_repeats():
    from veil.engine import summarise

    same_label = [
        {"name": "greedy-hamdist", "params": {"on_violation": v}, "label": "greedy"} for v in ("skip", "stop")
    ]
    study = Study.from_dict({"methods": same_label, "model": "k-ac:k=3", "metrics": ["sfc"], "repeats": 2})
    results = run_study(REGISTRY, study, data=_matrix())
    sfc = summarise(results, [])
    sfc = sfc[sfc["metric"] == "sfc"]
    assert len(sfc) == 2 and list(sfc["count"]) == [2, 2]  # two settings, each with its two repeats
    assert results.groupby("settings")["seed"].nunique().tolist() == [2, 2]
