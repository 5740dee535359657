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
