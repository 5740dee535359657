"""A run in two steps: a generalisation, then a perturbation of its release (docs/perturbation.md,
"After a generalisation"): the first step's columns as it released them, the perturbed column
changed, both steps recorded, and the privacy models judging the final release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BadInput,
    Context,
    PluginCall,
    PrivacyCheckFailed,
    Role,
    RunSpec,
    Table,
    default_metrics,
    execute,
    make_registry,
)

REGISTRY = make_registry()
QIS = ["region", "age"]


def people(n=40, seed=0) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "pid": np.arange(n),
            "region": rng.choice(["north", "south"], n),
            "age": rng.integers(18, 90, n),
            "diagnosis": np.tile(["a", "b", "c", "d"], n // 4),
            "income": rng.normal(50_000, 10_000, n).round(2),
        }
    )
    roles = {"pid": Role.IDENTIFIER, "diagnosis": Role.SENSITIVE, **{q: Role.QUASI_IDENTIFIER for q in QIS}}
    return Table.from_frame(frame, roles=roles)


def run(data, model, then=None, seed=1, metrics=()):
    spec = RunSpec(PluginCall("global-recoding"), model, seed, metrics, then=then)
    return execute(REGISTRY, data, spec, Context(seed))


K4 = PluginCall("k-anonymity", {"k": 4})
NOISE = PluginCall("noise-addition", {"columns": "income", "level": 0.5})


def test_noise_after_a_generalisation_keeps_its_groups_and_perturbs_the_named_column():
    data = people()
    alone, chained = run(data, K4), run(data, K4, NOISE)
    # the first step's columns are as it released them alone; the named column is perturbed, every record
    pd.testing.assert_frame_equal(chained.release.frame[QIS], alone.release.frame[QIS])
    assert (chained.release.frame["income"].to_numpy() != data.frame["income"].to_numpy()).all()
    assert alone.release.frame["age"].astype(str).ne(data.frame["age"].astype(str)).any()  # age was generalised
    assert np.array_equal(chained.release.groups, alone.release.groups)  # no quasi-identifier perturbed
    # the model judged the final release: every group of equal written quasi-identifiers has 4 records or more
    assert chained.holds and chained.release.frame.groupby(QIS).size().min() >= 4
    assert chained.release.perturbation.columns == ("income",)
    prov = chained.release.provenance
    assert (prov.method, prov.then["name"], prov.then["params"]["level"]) == ("global-recoding", "noise-addition", 0.5)
    # both steps' details and measures: the recoding's levels and the perturbation's
    assert "noise" in chained.release.details and "perturbation" in chained.release.details
    assert {"loss", "il1s", "linkage-risk"} <= set(
        default_metrics(REGISTRY, "global-recoding", "k-anonymity", "noise-addition")
    )
    spec = chained.spec
    assert RunSpec.from_dict(spec.to_dict()).then == NOISE


def test_the_privacy_model_judges_the_perturbed_release(tmp_path):
    """Every diagnosis published as "a" (a transition matrix of the user's): each group of the
    recoding then holds one distinct sensitive value, so 2-diversity, which the recoding met, fails."""
    matrix = tmp_path / "all-a.csv"
    matrix.write_text(",a,b,c,d\na,1,0,0,0\nb,1,0,0,0\nc,1,0,0,0\nd,1,0,0,0\n", encoding="utf-8")
    model = [K4, PluginCall("l-diversity", {"l": 2})]
    assert run(people(), model).holds
    collapse = PluginCall("pram", {"columns": "diagnosis", "matrix": str(matrix)})
    with pytest.raises(PrivacyCheckFailed, match="l-diversity"):
        run(people(), model, collapse)


def test_a_generalised_column_is_not_perturbed_and_only_a_perturbation_follows():
    # PRAM's default columns are the released table's categorical quasi-identifiers: age, now intervals
    with pytest.raises(BadInput, match="would perturb .*'age', which global-recoding generalised"):
        run(people(), K4, PluginCall("pram"))
    with pytest.raises(BadInput, match="'age' is categorical, not numeric"):
        run(people(), K4, PluginCall("noise-addition", {"columns": "age"}))
    with pytest.raises(BadInput, match="'mondrian' cannot run after another.*noise-addition, pram, rank-swap"):
        run(people(), K4, PluginCall("mondrian"))


def test_a_study_runs_a_method_with_and_without_its_second_step():
    """A study's method entry carries ``then``: its rows name both steps, its settings hold the second
    step (so it is no repeat of the method alone), and its release is the chained run's."""
    from veil.engine import Study, outcome_rows, run_planned

    data = people()
    study = Study.from_dict(
        {
            "model": "k-anonymity:k=4",
            "methods": [
                "global-recoding",
                {"name": "global-recoding", "then": "noise-addition:columns=income,level=0.5"},
            ],
        }
    )
    planned = study.plan(REGISTRY, data)
    alone, chained = (run_planned(REGISTRY, data, p.spec, Context(p.spec.seed)) for p in planned)
    assert chained.result.spec.then == PluginCall("noise-addition", {"columns": "income", "level": 0.5})
    pd.testing.assert_frame_equal(chained.result.release.frame[QIS], alone.result.release.frame[QIS])
    assert (chained.result.release.frame["income"].to_numpy() != data.frame["income"].to_numpy()).all()
    rows = [outcome_rows(p.index, p.spec, o, p.setting, p.repeat)[0] for p, o in zip(planned, (alone, chained))]
    assert [r["label"] for r in rows] == ["global-recoding", "global-recoding then noise-addition"]
    assert rows[0]["settings"] != rows[1]["settings"] and '"then"' in rows[1]["settings"]
    # a second step that does not perturb is refused when the study is planned, before any run
    bad = Study.from_dict({"model": "k-anonymity:k=4", "methods": [{"name": "global-recoding", "then": "mondrian"}]})
    with pytest.raises(BadInput, match="'mondrian' cannot run after another"):
        bad.plan(REGISTRY, data)


def test_a_study_sweeps_the_second_steps_parameters():
    """A parameter only the second step declares, swept in the method's ``sweep`` (or under the study's),
    reaches the second step; the second step's own ``sweep`` sends a value to it alone; the result table
    has a column for it, and every run perturbs the same first release by its own level."""
    from veil.engine import Study, outcome_rows, results_table, run_planned

    data = people()
    study = Study.from_dict(
        {
            "model": "k-anonymity:k=4",
            "methods": [
                {
                    "name": "global-recoding",
                    "then": "noise-addition:columns=income",
                    "sweep": {"level": [0.1, 1.0]},
                }
            ],
            "sweep": {"k": [2, 4]},
        }
    )
    planned = study.plan(REGISTRY, data)
    got = [(p.spec.models[0].params["k"], p.spec.then.params["level"]) for p in planned]
    assert sorted(got) == [(2, 0.1), (2, 1.0), (4, 0.1), (4, 1.0)]
    assert all("level" not in p.spec.method.params for p in planned)  # the first step never sees it
    outcomes = [run_planned(REGISTRY, data, p.spec, Context(p.spec.seed)) for p in planned]
    change = {}
    for p, o in zip(planned, outcomes):
        released = o.result.release.frame
        change[(p.setting["k"], p.setting["level"])] = np.abs(released["income"] - data.frame["income"]).mean()
    for k in (2, 4):  # the same seed's noise, scaled by the level: ten times the level, ten times the change
        assert change[(k, 1.0)] == pytest.approx(10 * change[(k, 0.1)], rel=1e-9)
    rows = [r for p, o in zip(planned, outcomes) for r in outcome_rows(p.index, p.spec, o, p.setting, p.repeat)]
    table = results_table(rows, study.sweep_keys)
    assert table.attrs["sweep"] == ["k", "level"]
    assert sorted(set(zip(table["k"], table["level"]))) == [(2, 0.1), (2, 1.0), (4, 0.1), (4, 1.0)]

    # the second step's own sweep: only it takes the values
    own = Study.from_dict(
        {
            "methods": [
                {
                    "name": "global-recoding",
                    "then": {"name": "noise-addition", "params": {"columns": "income"}, "sweep": {"level": [0.2, 0.3]}},
                }
            ],
            "model": "k-anonymity:k=4",
        }
    )
    assert [p.spec.then.params["level"] for p in own.plan(REGISTRY, data)] == [0.2, 0.3]
    assert own.size(REGISTRY) == 2 and own.sweep_keys == ["level"]
    # a parameter neither step declares is refused before any run, naming both steps
    with pytest.raises(BadInput, match="'spread' is not a parameter of 'global-recoding' or its second step"):
        Study.from_dict(
            {
                "model": "k-anonymity:k=4",
                "methods": [
                    {"name": "global-recoding", "then": "noise-addition:columns=income", "sweep": {"spread": [1]}}
                ],
            }
        ).plan(REGISTRY, data)
    with pytest.raises(BadInput, match="is not a parameter of the second step 'noise-addition'"):
        Study.from_dict(
            {
                "model": "k-anonymity:k=4",
                "methods": [{"name": "global-recoding", "then": {"name": "noise-addition", "sweep": {"k": [2]}}}],
            }
        ).plan(REGISTRY, data)


def test_after_a_chained_sweep_the_first_chart_is_the_first_steps_trade_off():
    """Runs of global recoding then noise, sweeping the noise's level: the chart drawn first is still
    global recoding's declared trade-off (loss against suppression), not a chart of one metric."""
    from veil.engine import Study, first_chart, outcome_rows, results_table, run_planned

    data = people()
    study = Study.from_dict(
        {
            "model": "k-anonymity:k=4",
            "metrics": ["loss", "suppressed"],
            "methods": [
                {"name": "global-recoding", "then": "noise-addition:columns=income", "sweep": {"level": [0.1, 1.0]}}
            ],
        }
    )
    rows = []
    for p in study.plan(REGISTRY, data):
        outcome = run_planned(REGISTRY, data, p.spec, Context(p.spec.seed))
        rows += outcome_rows(p.index, p.spec, outcome, p.setting, p.repeat)
    results = results_table(rows, study.sweep_keys)
    assert results.attrs["sweep"] == ["level"]
    call = first_chart(REGISTRY, results)
    assert call is not None and REGISTRY.get("chart", call.name).draws_trade_off
    assert (call.params["privacy"], call.params["utility"]) == ("suppressed", "loss")
