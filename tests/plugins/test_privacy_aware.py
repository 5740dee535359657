"""Paper 004 (docs/reference.md#privacy-aware-evaluation): E(S) on the paper's Tables 5–6, competition ranks, PBI,
the Figure 5
generator's guarantees, C = SA, roles and bad input, seeds, cancellation, the release, the metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BadInput,
    Cancelled,
    Context,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
    parse_params,
)
from veil.plugins.feature_selection._privacy_aware import (
    PAPER_WEIGHTS,
    backward_elimination,
    best_candidate,
    candidate_frame,
    check_weights,
    competition_ranks,
    e_scores,
    factor_ranks,
    pbi,
    rank_candidates,
)
from veil.plugins.feature_selection.privacy_aware import Params
from veil.plugins.feature_selection._cv import C45Tree, added_errors, paired_p_value

METHOD = "privacy-aware-candidates"

# Table 5 (Pima, C4.5, C = SA): subset, n, Num (R), PBI, PBI (R), Perf, Perf (R)
TABLE_5 = [
    ("baseline", 8, 1, 0.0, 7, 73.835, 8),
    ("plas_mass_preg_skin_pedi_age_pres", 7, 2, 1.409, 1, 74.875, 14),
    ("plas_mass_preg_skin_pedi_age", 6, 4, 1.231, 2, 74.744, 13),
    ("plas_mass_preg_skin_pedi", 5, 6, 0.889, 3, 74.491, 12),
    ("plas_mass_preg_skin", 4, 8, 0.711, 5, 74.359, 9),
    ("plas_mass_preg", 3, 10, 0.711, 5, 74.359, 9),
    ("plas_mass", 2, 12, 0.882, 4, 74.486, 11),
    ("plas", 1, 14, -1.072, 10, 73.043, 4),
    ("insu_pres_age_pedi_skin_preg_plas", 7, 2, -1.942, 14, 72.401, 1),
    ("insu_pres_age_pedi_skin_plas", 6, 4, -0.708, 8, 73.312, 7),
    ("insu_pres_age_pedi_plas", 5, 6, -1.238, 12, 72.920, 3),
    ("insu_pres_age_plas", 4, 8, -1.241, 13, 72.919, 2),
    ("insu_pres_plas", 3, 10, -0.893, 9, 73.175, 6),
    ("insu_plas", 2, 12, -1.072, 10, 73.043, 4),
]
# Table 6: E(S) for (w1 = w2 = w3 = 0.333), (w1 = 2·w2: 0.5, 0.25, 0.25), (w2 = 3·w1: 0.2, 0.6, 0.2)
TABLE_6 = [
    (5.328, 6.0, 6.0),
    (5.661, 7.75, 3.8),
    (6.327, 8.0, 4.6),
    (6.993, 8.25, 5.4),
    (7.326, 7.75, 6.4),
    (7.992, 8.25, 6.8),
    (8.991, 9.5, 7.0),
    (9.324, 8.0, 9.6),
    (5.661, 4.5, 9.0),
    (6.327, 6.5, 7.0),
    (6.993, 6.0, 9.0),
    (7.659, 6.25, 9.8),
    (8.325, 7.75, 8.6),
    (8.658, 7.5, 9.2),
]


def table_5_candidates() -> list[dict]:
    return [{"label": s, "size": n, "pbi": p, "perf": f} for s, n, _, p, _, f, _ in TABLE_5]


# -- E(S) on the paper's tables ----------------------------------------------------------------------------
def test_table_5_ranks_are_competition_ranks():
    ranks = factor_ranks(table_5_candidates())
    assert ranks["num"].tolist() == [row[2] for row in TABLE_5]
    assert ranks["prv"].tolist() == [row[4] for row in TABLE_5]
    assert ranks["prf"].tolist() == [row[6] for row in TABLE_5]


@pytest.mark.parametrize("case", range(3))
def test_table_6_all_values(case):
    scores = e_scores(table_5_candidates(), PAPER_WEIGHTS[case])
    expected = [row[case] for row in TABLE_6]
    assert scores.tolist() == pytest.approx(expected, abs=1e-9)
    assert [round(s, 3) for s in scores] == expected


def test_spec_golden_values():
    rows = table_5_candidates()
    assert e_scores(rows, (0.333, 0.333, 0.333))[[0, 7]] == pytest.approx([5.328, 9.324], abs=1e-12)
    assert e_scores(rows, (0.5, 0.25, 0.25))[[0, 7]] == pytest.approx([6.0, 8.0], abs=1e-12)
    assert e_scores(rows, (0.2, 0.6, 0.2))[[0, 7]] == pytest.approx([6.0, 9.6], abs=1e-12)


def test_figure_9_choices():
    rows = table_5_candidates()
    chosen = [rows[best_candidate(rows, w)]["label"] for w in PAPER_WEIGHTS]
    assert chosen == ["plas", "plas_mass", "insu_pres_age_plas"]


def test_full_ranking_lists_second_and_third_best():
    ranking = rank_candidates(table_5_candidates(), (0.5, 0.25, 0.25))
    # plas_mass_preg and plas_mass_preg_skin_pedi tie at 8.25: the smaller subset ranks second
    assert [r["label"] for r in ranking[:3]] == ["plas_mass", "plas_mass_preg", "plas_mass_preg_skin_pedi"]
    assert [r["e"] for r in ranking[:3]] == pytest.approx([9.5, 8.25, 8.25])
    assert [r["place"] for r in ranking] == list(range(1, 15))
    assert sorted(r["index"] for r in ranking) == list(range(14))


# -- ranks and ties ---------------------------------------------------------------------------------------
def test_competition_ranks_1224():
    assert competition_ranks([10, 20, 20, 30], ascending=True).tolist() == [1, 2, 2, 4]
    assert competition_ranks([10, 20, 20, 30], ascending=False).tolist() == [4, 2, 2, 1]


@pytest.mark.parametrize("seed", range(5))
def test_competition_ranks_brute_force(seed):
    v = np.random.default_rng(seed).integers(0, 6, 25).astype(float)
    up = [1 + sum(x < y for x in v) for y in v]
    down = [1 + sum(x > y for x in v) for y in v]
    assert competition_ranks(v, ascending=True).tolist() == up
    assert competition_ranks(v, ascending=False).tolist() == down


def test_ties_go_to_the_smallest_subset():
    # Pima-N.B. (§6): {skin, pedi, plas}, {pedi, plas} and {plas} share the best E(S); {plas} is chosen.
    rows = [
        {"label": "skin_pedi_plas", "size": 3, "pbi": -1.0, "perf": 75.0},
        {"label": "pedi_plas", "size": 2, "pbi": -1.0, "perf": 75.0},
        {"label": "plas", "size": 1, "pbi": -1.0, "perf": 75.0},
        {"label": "baseline", "size": 8, "pbi": 0.0, "perf": 74.0},
    ]
    for w in ((1.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.2, 0.6, 0.2)):
        assert rows[best_candidate(rows, w)]["label"] == "plas"


@pytest.mark.parametrize("seed", range(5))
def test_ranking_order_on_random_candidates(seed):
    rng = np.random.default_rng(seed)
    rows = [
        {"size": int(rng.integers(1, 5)), "pbi": float(rng.integers(-3, 3)), "perf": float(rng.integers(70, 74))}
        for _ in range(12)
    ]
    ranking = rank_candidates(rows, (0.4, 0.4, 0.2))
    for a, b in zip(ranking, ranking[1:]):
        assert a["e"] > b["e"] - 1e-12
        if abs(a["e"] - b["e"]) < 1e-9:
            assert rows[a["index"]]["size"] <= rows[b["index"]]["size"]


# -- weights ----------------------------------------------------------------------------------------------
def test_weights_must_sum_to_one():
    assert check_weights((0.333, 0.333, 0.333)) == (0.333, 0.333, 0.333)  # the paper's own thirds
    for bad in ((0.5, 0.5, 0.5), (0.3, 0.3, 0.3), (1.2, -0.1, -0.1), (0.5, 0.5)):
        with pytest.raises(BadInput):
            check_weights(bad)
    with pytest.raises(BadInput, match="sum to 1"):
        parse_params(Params, {"w1": 0.6, "w2": 0.6, "w3": 0.2})
    with pytest.raises(BadInput, match="sum to 1"):
        rank_candidates(table_5_candidates(), (0.2, 0.2, 0.2))


# -- PBI --------------------------------------------------------------------------------------------------
def test_pbi_signs():
    assert pbi(20.0, 20.0) == 0.0
    assert pbi(22.0, 20.0) == pytest.approx(10.0)
    assert pbi(18.0, 20.0) == pytest.approx(-10.0)
    assert pbi(74.875, 73.835) == pytest.approx(1.409, abs=5e-4)  # Table 4, C = SA
    with pytest.raises(BadInput):
        pbi(50.0, 0.0)


# -- the generator (Figure 5) -----------------------------------------------------------------------------
def _fake(seed, n_attrs=6):
    rng = np.random.default_rng(seed)
    perf = {}
    priv = {}

    def perf_of(s):
        key = frozenset(s)
        if key not in perf:
            perf[key] = (float(rng.uniform(70, 76)), float(rng.uniform(0, 0.2)))
        return perf[key]

    def pbi_of(s):
        return priv.setdefault(frozenset(s), float(rng.uniform(-5, 5)))

    return [f"a{i}" for i in range(n_attrs)], perf_of, pbi_of


@pytest.mark.parametrize("seed", range(10))
def test_generator_guarantees(seed):
    ranked, perf_of, pbi_of = _fake(seed)
    alpha, sig, base = 1.0, 0.05, 73.0
    steps = backward_elimination(
        ranked, perf_of, pbi_of, baseline_perf=base, alpha=alpha, significance=sig, name="PerfR"
    )
    assert [s.removed for s in steps] == ranked[::-1], "the list is walked from its bottom"
    current = set(ranked)
    for s in steps:
        assert set(s.subset) == current - {s.removed}
        if s.accepted:
            assert s.pbi <= alpha
            assert s.perf >= base or s.p_value >= sig
            assert s.subset
            current = set(s.subset)
        elif s.reason.startswith("accuracy"):
            assert s.perf < base and s.p_value < sig and s.pbi is None
        elif s.reason.startswith("PBI"):
            assert s.pbi > alpha


def synthetic(n=240, seed=0, sensitive=True) -> Table:
    """C follows `signal`; SA follows `leak`; `noise` follows nothing; `pid` identifies."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=n)
    leak = rng.choice(["a", "b", "c"], n)
    sa = np.where(rng.random(n) < 0.85, leak, rng.choice(["a", "b", "c"], n))
    frame = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "signal": signal.round(2),
            "leak": leak,
            "noise": rng.integers(0, 4, n),
            "mix": (signal + rng.normal(size=n)).round(1),
            "sa": sa,
            "c": np.where((signal > 0) ^ (rng.random(n) < 0.1), "yes", "no"),
        }
    )
    roles = {"pid": Role.IDENTIFIER, "c": Role.TARGET}
    if sensitive:
        roles["sa"] = Role.SENSITIVE
    else:
        frame = frame.drop(columns="sa")
    return Table.from_frame(frame, roles=roles)


@pytest.fixture(scope="module")
def registry():
    return make_registry()


def run(registry, table, seed=0, ctx=None, **params):
    return execute(registry, table, RunSpec(PluginCall(METHOD, params), seed=seed), ctx)


@pytest.mark.parametrize("alpha", [-20.0, 0.0, 5.0])
def test_run_never_accepts_beyond_alpha_or_significantly_worse(registry, alpha):
    d = run(registry, synthetic(), alpha=alpha).release.details
    base = d["baseline"]["perf"]
    for row in d["candidates"][1:]:
        assert row["pbi"] <= alpha
        assert row["perf"] >= base or row["p_value"] >= d["significance"]
    for s in d["steps"]:
        if not s["accepted"] and s["pbi"] is not None and s["reason"].startswith("PBI"):
            assert s["pbi"] > alpha


def test_rankings_and_pbi_follow_the_leak(registry):
    d = run(registry, synthetic(), alpha=100.0).release.details
    priv = [r["attribute"] for r in d["rankings"]["PrivR"]]
    perf = [r["attribute"] for r in d["rankings"]["PerfR"]]
    assert priv[-1] == "leak", "the attribute that betrays SA is the riskiest, removed first"
    assert perf[0] == "signal", "the attribute that predicts C matters most"
    first = next(s for s in d["steps"] if s["list"] == "PrivR")
    assert first["removed"] == "leak" and first["pbi"] < -20, "without the leak the attacker does much worse"
    assert d["baseline"]["distp_pbi"] < 0
    for row in d["candidates"]:
        assert ("leak" in row["subset"]) == (row["pbi"] > -20)


def test_sensitive_is_class(registry):
    table = synthetic(sensitive=False)
    d = run(registry, table, sensitive_is_class=True, alpha=100.0).release.details
    assert d["mode"] == "C = SA" and d["sensitive"] == d["target"] == "c"
    assert set(d["baseline"]["attributes"]) == {"signal", "leak", "noise", "mix"}
    base = d["baseline"]["perf"]
    assert d["baseline"]["perf_sa"] == base
    for row in d["candidates"]:
        assert row["pbi"] == pytest.approx((row["perf"] / base - 1) * 100)
    perf = [r["drop"] for r in d["rankings"]["PerfR"]]
    priv = [r["drop"] for r in d["rankings"]["PrivR"]]
    assert sorted(perf, reverse=True) == perf and sorted(priv) == priv and sorted(perf) == sorted(priv)
    with pytest.raises(BadInput, match="also marked sensitive"):
        run(registry, synthetic(), sensitive_is_class=True)


# -- roles, bad input -------------------------------------------------------------------------------------
def test_missing_or_ambiguous_sensitive_attribute(registry):
    with pytest.raises(BadInput, match="exactly one sensitive attribute, but none is marked"):
        run(registry, synthetic(sensitive=False))
    two = synthetic().with_roles({"noise": Role.SENSITIVE})
    with pytest.raises(BadInput, match="2 are"):
        run(registry, two)


def test_missing_class(registry):
    no_class = synthetic().with_roles({"c": Role.INSENSITIVE})
    with pytest.raises(BadInput, match="target"):
        run(registry, no_class)


@pytest.mark.parametrize(
    "values",
    [{"alpha": -101}, {"significance": 0}, {"significance": 0.7}, {"classifier": "svm"}, {"folds": 1}, {"w1": 1.0}],
)
def test_bad_parameters(values):
    with pytest.raises(BadInput):
        parse_params(Params, values)


# -- the release ------------------------------------------------------------------------------------------
def test_release_is_the_chosen_subset_and_the_class(registry):
    result = run(registry, synthetic(), alpha=100.0)
    d = result.release.details
    chosen = next(r for r in d["candidates"] if r["label"] == d["chosen"])
    assert d["ranking"][0]["label"] == d["chosen"]
    assert list(result.release.frame.columns) == [*chosen["subset"], "c"]
    assert list(result.release.selected_features) == chosen["subset"]
    assert len(result.release.frame) == 240
    with_sa = run(registry, synthetic(), alpha=100.0, release_sensitive=True).release
    assert list(with_sa.frame.columns) == [*chosen["subset"], "sa", "c"]


def test_details_are_plain_json(registry):
    import json

    d = run(registry, synthetic()).release.details
    assert json.loads(json.dumps(d)) == d


def test_same_seed_same_result_and_rerank(registry):
    a = run(registry, synthetic(), seed=3).release
    b = run(registry, synthetic(), seed=3).release
    assert a.details == b.details and a.frame.equals(b.frame)
    ranker = registry.get("algorithm", METHOD).ranker
    assert ranker.rerank(a.ranking, a.details["weights"]) == a.ranking == b.ranking
    assert [(r.label, r.value("e"), r.place) for r in a.ranking.order] == [
        (r["label"], r["e"], r["place"]) for r in a.details["ranking"]
    ]
    assert a.ranking.chosen.label == a.details["chosen"] and list(a.ranking.chosen.subset) == list(a.selected_features)
    frame = ranker.table(a)
    assert frame["chosen"].sum() == 1 and frame.loc[frame["chosen"], "label"].item() == a.details["chosen"]


def test_the_release_carries_its_candidates_typed(registry):
    """The ranking a release carries names its columns, so it is shown without knowing the method."""
    release = run(registry, synthetic(), alpha=100.0).release
    ranking = release.ranking
    assert [c.key for c in ranking.columns] == ["size", "perf", "pbi", "e"]
    assert [c.label for c in ranking.candidates] == [r["label"] for r in release.details["candidates"]]
    for candidate, row in zip(ranking.candidates, release.details["candidates"]):
        assert list(candidate.subset) == row["subset"]
        assert {k: candidate.values[k] for k in ("size", "perf", "pbi")} == {k: row[k] for k in ("size", "perf", "pbi")}
    assert [r.place for r in ranking.order] == list(range(1, len(ranking.candidates) + 1))
    assert ranking.weights == tuple(release.details["weights"])
    assert "Sensitive attribute sa, class c" in ranking.about
    frame = ranking.frame()
    assert frame.loc[frame["chosen"], "label"].item() == ranking.chosen.label
    with pytest.raises(BadInput, match="sum to 1"):
        registry.get("algorithm", METHOD).ranker.rerank(ranking, (0.5, 0.5, 0.5))


def test_reselect_equals_a_run_with_those_weights(registry):
    table = synthetic()
    first = run(registry, table, alpha=100.0, w1=0.8, w2=0.1, w3=0.1).release
    ranker = registry.get("algorithm", METHOD).ranker
    for w in ((0.1, 0.8, 0.1), (0.2, 0.2, 0.6), (0.8, 0.1, 0.1)):
        again = run(registry, table, alpha=100.0, w1=w[0], w2=w[1], w3=w[2]).release
        picked = ranker.reselect(table, first, w)
        assert picked.frame.equals(again.frame) and picked.details == again.details
        assert picked.notes == again.notes and picked.provenance.params == again.provenance.params
        assert picked.ranking == again.ranking == ranker.rerank(first.ranking, w)


def test_progress_and_cancel_between_folds(registry):
    from veil.engine import CancelToken

    calls = []
    run(registry, synthetic(), ctx=Context(0, on_progress=lambda f, m: calls.append(f)))
    assert calls and calls[-1] == 1.0 and all(0 <= f <= 1 for f in calls)
    token = CancelToken()
    seen = []

    def cancel_soon(fraction, message):
        seen.append(fraction)
        if len(seen) == 3:
            token.cancel()

    ctx = Context(0, on_progress=cancel_soon, token=token)
    with pytest.raises(Cancelled):
        run(registry, synthetic(), ctx=ctx)


def test_missing_values(registry):
    table = synthetic()
    frame = table.frame.copy()
    frame.loc[:9, "noise"] = np.nan
    frame.loc[10:14, "leak"] = None
    holes = Table.from_frame(frame, table.schema)
    dropped = run(registry, holes).release.details
    kept = run(registry, holes, missing="as-value").release.details
    assert dropped["records"] == 225 and kept["records"] == 240
    assert run(registry, holes, sample_rows=100).release.details["records"] == 100


# -- metrics ----------------------------------------------------------------------------------------------
def test_metrics_agree_with_the_method(registry):
    table = synthetic()
    own = run(registry, table, seed=5).release.details
    spec = RunSpec(PluginCall("all-features"), seed=5, metrics=("pbi", "cv-accuracy", "distp-pbi"))
    values = execute(registry, table, spec).metrics
    assert values["pbi"] == 0.0, "all of BL has PBI 0 by definition"
    assert values["cv-accuracy"] == pytest.approx(own["baseline"]["perf"])
    assert values["distp-pbi"] == pytest.approx(own["baseline"]["distp_pbi"])
    spec = RunSpec(PluginCall(METHOD), seed=5, metrics=("pbi", "cv-accuracy"))
    result = execute(registry, table, spec)
    chosen = next(r for r in own["candidates"] if r["label"] == own["chosen"])
    assert result.metrics == {"pbi": pytest.approx(chosen["pbi"]), "cv-accuracy": pytest.approx(chosen["perf"])}


# -- classifiers --------------------------------------------------------------------------------------------
def test_paired_p_value():
    from scipy.stats import ttest_rel

    a = np.array([0.7, 0.72, 0.69, 0.75, 0.71])
    assert paired_p_value(a, a) == 1.0
    assert paired_p_value(a + 0.02, a) == 0.0
    b = np.array([0.68, 0.73, 0.66, 0.74, 0.70])
    assert paired_p_value(a, b) == pytest.approx(ttest_rel(a, b).pvalue)


def test_c45_pruning():
    assert added_errors(6, 0)[()] == pytest.approx(6 * (1 - 0.25 ** (1 / 6)))  # Weka's addErrs, e = 0
    assert added_errors(10, 10)[()] == 0.0
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.8 * rng.normal(size=300) > 0).astype(int)
    tree = C45Tree(seed=0).fit(X, y)
    kept = int((~tree._stop & (tree._left >= 0)).sum())  # internal nodes still splitting
    assert 0 < kept < int((tree._left >= 0).sum()), "pruning removes some splits of a noisy tree"
    assert ((tree.predict(X) == y).mean()) > 0.7


# -- charts -----------------------------------------------------------------------------------------------
def test_charts_draw_a_candidate_table_and_its_csv(registry, tmp_path):
    from matplotlib.figure import Figure

    details = run(registry, synthetic(), alpha=2.0).release.details
    frame = candidate_frame(details)
    path = tmp_path / "candidates.csv"
    frame.to_csv(path, index=False)
    for data in (frame, pd.read_csv(path)):
        fig = Figure()
        chart = registry.chart("privacy-aware-regions")
        chart.draw(data, fig, chart.params())
        ax = fig.axes[0]
        labels = [line.get_label() for line in ax.lines]
        assert any(lab.startswith("α = 2") for lab in labels) and any(lab.startswith("DistP") for lab in labels)
        assert len(ax.texts) >= len(frame) + 4, "each point is labelled, plus the four regions"
        fig = Figure()
        chart = registry.chart("privacy-aware-es")
        chart.draw(data, fig, chart.params({"weights": "0.333/0.333/0.333; 0.8/0.1/0.1"}))
        assert len(fig.axes[0].lines) >= 2


def test_regions_ring_follows_the_weights(registry):
    from matplotlib.figure import Figure

    frame = pd.DataFrame(table_5_candidates())
    chart = registry.chart("privacy-aware-regions")
    for weights, label in (("1/0/0", "plas_mass_preg_skin_pedi_age_pres"), ("0.2/0.6/0.2", "insu_pres_age_plas")):
        fig = Figure()
        chart.draw(frame, fig, chart.params({"weights": weights}))
        ring = next(c for c in fig.axes[0].collections if c.get_label().startswith("released"))
        row = frame[frame["label"] == label].iloc[0]
        assert ring.get_offsets().tolist() == [[row["perf"], row["pbi"]]]


def test_charts_draw_a_study_of_runs(registry):
    from matplotlib.figure import Figure

    from veil.engine import Study, run_study

    study = Study.from_dict(
        {
            "methods": [
                {"name": METHOD, "label": "tree", "params": {"classifier": "c4.5"}},
                {"name": METHOD, "label": "bayes", "params": {"classifier": "naive-bayes"}},
            ],
            "metrics": ["pbi", "cv-accuracy", "distp-pbi", "sfc"],
            "charts": [{"name": "privacy-aware-regions"}, {"name": "privacy-aware-es"}],
        }
    )
    results = run_study(registry, study, Context(0), data=synthetic())
    fig = Figure()
    chart = registry.chart("privacy-aware-regions")
    chart.draw(results, fig, chart.params())
    points = {c.get_label(): c.get_offsets().tolist() for c in fig.axes[0].collections}
    wide = results.pivot_table(index="label", columns="metric", values="value")
    for label in ("tree", "bayes"):
        assert points[label] == [[wide.loc[label, "cv-accuracy"], wide.loc[label, "pbi"]]]


def test_weight_settings_are_checked(registry):
    from matplotlib.figure import Figure

    chart = registry.chart("privacy-aware-es")
    frame = pd.DataFrame(table_5_candidates())
    for bad in ("0.5/0.5/0.5", "", "a/b/c"):
        with pytest.raises(BadInput):
            chart.draw(frame, Figure(), chart.params({"weights": bad}))


def test_regions_chart_labels_only_the_best_of_many_candidates():
    from matplotlib.figure import Figure

    from veil.engine import PluginCall, Role, RunSpec, execute, load_demo, make_registry

    reg = make_registry()
    table = load_demo().with_roles({"diagnosis_group": Role.SENSITIVE})
    run = execute(reg, table, RunSpec(PluginCall("privacy-aware-candidates", {"sample_rows": 200, "folds": 3})))
    frame = reg.get("algorithm", "privacy-aware-candidates").ranker.table(run.release)
    chart = reg.chart("privacy-aware-regions")
    fig = Figure()
    chart.draw(frame, fig, chart.params({}))
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_text() in set(frame["label"])]
    assert len(frame) > 15  # the demo gives dozens of candidates
    assert "BL" in labels and len(labels) <= 10
