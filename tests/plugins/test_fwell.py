"""FWELL and Private FWELL (paper 003, docs/reference.md#feature-weighting): oracles and laws that could fail.

* the nearest hit and miss equal a brute-force Manhattan search (dense and sparse input agree);
* the sensitivity bound ‖w(D) − w(D′)‖ ≤ 2/(nλ) holds on many neighbouring margin matrices;
* the noise norm follows Gamma(d, 2/(nελ)) (Kolmogorov–Smirnov) and its direction is uniform, for the
  seeded and for the secure source;
* ε → ∞ gives FWELL's weights; L-BFGS beats the paper's steps; the gradient at the solution < 1e-8;
* release mode draws fresh noise, study mode reproduces; the release and its manifest say which.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

from veil.engine import (
    FEATURE_SUBSET,
    FEATURE_WEIGHTS,
    BinaryMatrix,
    Context,
    ExportOptions,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    export_release,
    verify_manifest,
)
from veil.plugins import _fwell as core


def random_margins(rng, n, d, spread=2.0):
    return core.normalise_rows(rng.uniform(-spread, spread, (n, d)))


def labelled_table(seed=0, n=80, d=6) -> Table:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, d))
    x[:, 0] += 2.0 * y  # feature f0 separates the classes, f1 a little, the rest are noise
    x[:, 1] += 0.7 * y
    frame = pd.DataFrame(x, columns=[f"f{i}" for i in range(d)]).assign(label=y)
    return Table.from_frame(frame, roles={"label": Role.TARGET})


# -- nearest hit and miss ----------------------------------------------------------------------------------
def brute_hit_miss(x, codes):
    dist = np.abs(x[:, None, :] - x[None, :, :]).sum(axis=2)
    n = len(codes)
    same = codes[:, None] == codes[None, :]
    hit = np.where(same & ~np.eye(n, dtype=bool), dist, np.inf).argmin(axis=1)
    miss = np.where(~same, dist, np.inf).argmin(axis=1)
    return hit, miss


@pytest.mark.parametrize("seed", range(5))
def test_nearest_hit_and_miss_match_a_brute_force_manhattan_search(seed):
    rng = np.random.default_rng(seed)
    x = rng.random((40, 7))
    codes = rng.integers(0, 3, 40)
    codes[:6] = [0, 0, 1, 1, 2, 2]
    hit, miss = core.nearest_hit_miss(x, codes)
    want_hit, want_miss = brute_hit_miss(x, codes)
    assert np.array_equal(hit, want_hit) and np.array_equal(miss, want_miss)


def test_sparse_and_dense_input_give_the_same_margins():
    rng = np.random.default_rng(3)
    x = (rng.random((60, 30)) < 0.1) * rng.integers(1, 5, (60, 30))
    codes = rng.integers(0, 2, 60)
    dense = core.margins(x.astype(float), codes)
    sparse = core.margins(sp.csr_matrix(x.astype(float)), codes)
    np.testing.assert_allclose(dense, sparse, atol=1e-12)
    assert np.all(np.linalg.norm(dense, axis=1) <= 1 + 1e-12)


def test_margins_are_those_of_the_features_scaled_to_unit_range():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(30, 4)) * [1, 10, 100, 0.1] + [0, 5, -50, 3]
    codes = rng.integers(0, 2, 30)
    xs = core.scale_unit(x)
    hit, miss = brute_hit_miss(xs, codes)
    want = core.normalise_rows(np.abs(xs - xs[miss]) - np.abs(xs - xs[hit]))
    np.testing.assert_allclose(core.margins(x, codes), want, atol=1e-12)


# -- the objective and its solvers -------------------------------------------------------------------------
@pytest.mark.parametrize("lam", [1e-4, 1e-2, 1.0])
def test_lbfgs_reaches_a_gradient_below_1e_8(lam):
    z = random_margins(np.random.default_rng(1), 120, 15)
    sol = core.solve_lbfgs(z, lam)
    assert sol.gradient_norm < 1e-8
    assert np.linalg.norm(core.objective(sol.w, z, lam)[1]) < 1e-8


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    z, w, lam = random_margins(rng, 50, 6), rng.normal(size=6), 0.3
    _, grad = core.objective(w, z, lam)
    eps = 1e-6
    numeric = [
        (core.objective(w + eps * e, z, lam)[0] - core.objective(w - eps * e, z, lam)[0]) / (2 * eps) for e in np.eye(6)
    ]
    np.testing.assert_allclose(grad, numeric, atol=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_lbfgs_reaches_a_lower_objective_than_the_papers_steps(seed):
    table = labelled_table(seed)
    x, _, y = core.feature_matrix(table)
    z = core.margins(x, core.check_labels(y))
    best = core.solve_lbfgs(z, 0.01)
    paper = core.solve_paper_gd(z, 0.01)
    assert best.objective < paper.objective
    assert paper.gradient_norm > best.gradient_norm


# -- sensitivity ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lam", [1e-2, 1e-1, 1.0])
def test_sensitivity_bound_holds_on_neighbouring_margin_matrices(lam):
    """‖w(Z) − w(Z′)‖ ≤ 2/(nλ) when Z and Z′ differ in one row, both rows of norm ≤ 1: random rows,
    and the adversarial pair z, −z of norm 1."""
    rng = np.random.default_rng(int(lam * 1000))
    worst = 0.0
    for trial in range(25):
        n, d = int(rng.integers(8, 40)), int(rng.integers(2, 8))
        z = random_margins(rng, n, d, spread=float(rng.uniform(0.2, 3)))
        other = z.copy()
        i = int(rng.integers(n))
        if trial % 2:
            other[i] = core.normalise_rows(rng.uniform(-3, 3, (1, d)))[0]
        else:
            unit = rng.normal(size=d)
            z[i], other[i] = unit / np.linalg.norm(unit), -unit / np.linalg.norm(unit)
        moved = np.linalg.norm(core.solve_lbfgs(z, lam).w - core.solve_lbfgs(other, lam).w)
        bound = 2.0 / (n * lam)
        assert moved <= bound * (1 + 1e-6), (n, d, moved, bound)
        worst = max(worst, moved / bound)
    assert worst > 0.05  # the pairs are close enough to the bound for the test to mean something


def test_without_normalising_z_the_bound_can_fail():
    """The normalisation z_i / max(1, ‖z_i‖) is what the proof needs: a row of norm 30 moves w further
    than 2/(nλ) (λ large enough that the logistic loss does not saturate)."""
    n, lam = 10, 10.0
    z = np.zeros((n, 2))
    z[:, 0] = 0.01
    other = z.copy()
    z[0] = [30.0, 0.0]
    other[0] = [-30.0, 0.0]
    moved = np.linalg.norm(core.solve_lbfgs(z, lam).w - core.solve_lbfgs(other, lam).w)
    assert moved > 2.0 / (n * lam)


def test_changing_one_record_can_change_several_margins():
    """The caveat of docs/reference.md#feature-weighting, shown: the margins of other records depend on the
    changed one through the nearest
    neighbours, so neighbouring datasets need not give neighbouring margin matrices."""
    x = np.array([[0.0], [1.0], [5.0], [6.0], [10.0]])
    codes = np.array([0, 0, 1, 1, 0])
    moved = x.copy()
    moved[4] = [5.5]  # record 4 lands between the class-1 records
    changed = np.any(core.margins(x, codes) != core.margins(moved, codes), axis=1)
    assert changed.sum() > 1


# -- noise ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("source_kind", ["seeded", "secure"])
def test_noise_norm_is_gamma_and_its_direction_uniform(source_kind):
    d, scale, draws = 5, 0.37, 1500
    source = core.SeededSource(np.random.default_rng(11)) if source_kind == "seeded" else core.SecureSource()
    b = np.array([core.gamma_noise(d, scale, source) for _ in range(draws)])
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=scale).cdf).pvalue > 1e-3
    unit = b / norms[:, None]
    # a uniform direction's first coordinate u has (u + 1)/2 ~ Beta((d−1)/2, (d−1)/2)
    assert stats.kstest((unit[:, 0] + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > 1e-3
    assert np.linalg.norm(unit.mean(axis=0)) < 4 / np.sqrt(draws)


def test_noise_law_would_catch_a_wrong_scale():
    b = np.array([core.gamma_noise(5, 0.37, core.SeededSource(np.random.default_rng(i))) for i in range(600)])
    assert stats.kstest(np.linalg.norm(b, axis=1), stats.gamma(a=5, scale=0.37 * 1.2).cdf).pvalue < 1e-3


def test_noise_scale_is_the_sensitivity_over_epsilon():
    assert core.noise_scale(200, 0.5, 0.01) == pytest.approx(2 / (200 * 0.01) / 0.5)


# -- the plugins ------------------------------------------------------------------------------------------
def weights_of(result) -> pd.Series:
    frame = result.release.frame
    return frame.set_index("feature")["weight"].sort_index()


def test_epsilon_to_infinity_gives_fwell_weights(registry):
    table = labelled_table(5)
    exact = execute(registry, table, RunSpec(PluginCall("fwell", {"lam": 0.05})))
    private = execute(registry, table, RunSpec(PluginCall("private-fwell", {"lam": 0.05, "epsilon": 1e12})))
    noisy = execute(registry, table, RunSpec(PluginCall("private-fwell", {"lam": 0.05, "epsilon": 0.01})))
    np.testing.assert_allclose(weights_of(private), weights_of(exact), atol=1e-8)
    assert np.abs(weights_of(noisy) - weights_of(exact)).max() > 1e-3
    assert exact.release.kind == FEATURE_WEIGHTS
    assert exact.release.frame["feature"].iloc[0] == "f0"  # the separating feature ranks first
    assert exact.release.details["gradient_norm"] < 1e-8


def test_study_mode_reproduces_and_release_mode_draws_fresh_noise(registry):
    table = labelled_table(6)
    spec = RunSpec(PluginCall("private-fwell", {"lam": 0.1, "epsilon": 1.0}), seed=3)
    study = [weights_of(execute(registry, table, spec, Context(3))) for _ in range(2)]
    release = [execute(registry, table, spec, Context(3, mode="release")) for _ in range(2)]
    pd.testing.assert_series_equal(study[0], study[1])
    assert not np.allclose(weights_of(release[0]), weights_of(release[1]))
    assert "secure" in release[0].release.details["noise_source"]
    assert release[0].release.details["context_mode"] == "release"
    assumptions = " ".join(release[0].release.details["assumptions"])
    assert "nearest" in assumptions and "seed" not in assumptions
    seeded = execute(registry, table, spec, Context(3)).release.details
    assert "seeded" in seeded["noise_source"] and any("seed" in a for a in seeded["assumptions"])


def test_lambda_is_chosen_by_cross_validation_when_empty(registry):
    result = execute(registry, labelled_table(7), RunSpec(PluginCall("fwell")))
    details = result.release.details
    assert details["lambda"] in core.LAMBDA_GRID and details["lambda_source"] == "cross-validation"
    assert details["lambda_losses"][details["lambda"]] == min(details["lambda_losses"].values())


def test_lambda_tuned_in_a_training_fold_never_sees_the_held_out_records():
    # The held-out records are replaced by wild values: a λ search or margins built on all rows would move
    # (the wild rows become nearest neighbours and change every margin); the training fold's must not.
    rng = np.random.default_rng(21)
    n, d = 90, 5
    codes = rng.integers(0, 2, n)
    x = rng.normal(size=(n, d))
    x[:, 0] += 1.5 * codes
    train, test = np.arange(0, 60), np.arange(60, 90)
    found = core.fold_weights(x, codes, train, seed=0)
    wild = x.copy()
    wild[test] = rng.normal(scale=50.0, size=(len(test), d))
    flipped = codes.copy()
    flipped[test] = 1 - flipped[test]
    again = core.fold_weights(wild, flipped, train, seed=0)
    assert found.lam == again.lam and found.lambda_losses == again.lambda_losses
    np.testing.assert_array_equal(found.w, again.w)
    # the same as FWELL on the training records alone, λ chosen by the same rule
    alone = core.fwell(
        Table.from_frame(
            pd.DataFrame(x[train], columns=[f"f{i}" for i in range(d)]).assign(label=codes[train]),
            roles={"label": Role.TARGET},
        ),
        seed=0,
    )
    assert alone.lam == found.lam
    np.testing.assert_allclose(alone.w, found.w, atol=1e-9)
    # and the oracle: had the search seen every row, λ's losses would differ
    everything = core.choose_lambda(core.margins(wild, flipped), flipped, seed=0)[1]
    assert everything != found.lambda_losses


def test_large_lambda_limit_is_where_the_noise_norm_meets_the_weights():
    # ε* = 4d/(n‖z̄‖): at λ large, E‖b‖ = 2d/(nε*λ) equals ‖w_λ‖ to within the first-order error
    rng = np.random.default_rng(22)
    z = random_margins(rng, 200, 7) + 0.2
    z = core.normalise_rows(z)
    eps = core.large_lambda_epsilon(z)
    n, d = z.shape
    np.testing.assert_allclose(eps, 4 * d / (n * np.linalg.norm(z.mean(axis=0))))
    lam = 1e3
    w = core.solve_lbfgs(z, lam).w
    expected_noise = d * core.noise_scale(n, eps, lam)  # mean of Gamma(d, scale)
    assert abs(expected_noise / np.linalg.norm(w) - 1.0) < 1e-3


def test_private_fwell_fixes_lambda_in_advance(registry):
    from veil.engine import BadInput
    from veil.plugins._fwell import private_fwell_weights

    result = execute(registry, labelled_table(12), RunSpec(PluginCall("private-fwell", {"epsilon": 1.0}), seed=2))
    details = result.release.details
    assert details["lambda"] == core.PRIVATE_LAMBDA and core.PRIVATE_LAMBDA in core.LAMBDA_GRID
    assert details["lambda_source"] == "fixed in advance" and "lambda_losses" not in details
    assert not any("cross-validation" in a for a in details["assumptions"])
    with pytest.raises(BadInput, match="fixed in advance"):
        private_fwell_weights(labelled_table(12), 1.0, None, "lbfgs", None, Context(0))


def test_top_releases_the_best_m_features(registry):
    result = execute(registry, labelled_table(8), RunSpec(PluginCall("fwell", {"lam": 0.1, "top": 2})))
    frame = result.release.frame
    assert list(frame["rank"]) == [1, 2] and frame["weight"].is_monotonic_decreasing
    assert result.release.selected_features == tuple(frame["feature"])


def binary_data(seed=0, n=120, m=12) -> BinaryMatrix:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    dense = rng.random((n, m)) < 0.3
    dense[:, 0] = rng.random(n) < np.where(y == 1, 0.8, 0.2)
    return BinaryMatrix.from_dense(dense.astype(np.uint8), labels=np.where(y == 1, 1, -1))


def test_records_on_the_top_features_pass_kac_and_keep_both_guarantees_apart(registry):
    spec = RunSpec(PluginCall("private-fwell", {"lam": 0.1, "epsilon": 5.0}), PluginCall("k-ac", {"k": 10}), seed=1)
    result = execute(registry, binary_data(), spec)
    release = result.release
    assert release.kind == FEATURE_SUBSET and result.verdict.holds and release.selected_features
    assert release.details["epsilon_spent"] == 5.0
    assert any("Two guarantees" in a for a in release.details["assumptions"])


def test_greedy_hamdist_ranked_by_private_fwell(registry):
    data = binary_data(2)
    spec = RunSpec(
        PluginCall("greedy-hamdist", {"score": "private-fwell", "epsilon": 1.0, "lam": 0.1}),
        PluginCall("k-ac", {"k": 10}),
        seed=2,
    )
    result = execute(registry, data, spec)
    assert result.verdict.holds and result.release.details["epsilon_spent"] == 1.0
    weights = result.release.details["weights"]
    picked = list(result.release.selected_features)
    assert [weights[f] for f in picked] == sorted((weights[f] for f in picked), reverse=True)
    plain = execute(registry, data, RunSpec(PluginCall("greedy-hamdist"), PluginCall("k-ac", {"k": 10})))
    assert "epsilon_spent" not in plain.release.details


def test_weights_release_exports_unshuffled_and_verifies_as_dp(registry, tmp_path):
    spec = RunSpec(PluginCall("private-fwell", {"lam": 0.1, "epsilon": 2.0}), seed=4)
    result = execute(registry, labelled_table(9), spec, Context(4, mode="release"))
    done = export_release(registry, result, tmp_path, ExportOptions(), report=None)
    manifest = json.loads(done.manifest_path.read_text())
    written = pd.read_csv(done.release)
    assert list(written["rank"]) == list(range(1, len(written) + 1)) and not manifest["shuffled"]
    assert manifest["release_kind"] == FEATURE_WEIGHTS and manifest["privacy_budget"]["epsilon_spent"] == 2.0
    assert manifest["risk"]["after"] is None and "no record" in manifest["risk"]["after_note"]
    assert "secure" in manifest["details"]["noise_source"]
    assert set(manifest["details"]["weights"]) == set(written["feature"])
    verified = verify_manifest(registry, done.manifest_path)
    assert verified.holds and "ε = 2 differential privacy" in verified.message and "no records" in verified.message


def test_weights_accuracy_reruns_the_method_per_fold(registry):
    table = labelled_table(10, n=100)
    metrics = (
        "weights-accuracy:classifier=linear-svc,features=1,folds=5",
        "weights-accuracy:classifier=3-nn,features=1,folds=5",
    )
    good = execute(registry, table, RunSpec(PluginCall("fwell", {"lam": 0.1}), metrics=metrics)).metrics
    noisy = execute(
        registry, table, RunSpec(PluginCall("private-fwell", {"lam": 0.1, "epsilon": 1e-6}), metrics=metrics, seed=1)
    ).metrics
    assert min(good.values()) > 0.75  # f0 alone separates the classes well
    assert good[metrics[0]] > noisy[metrics[0]]  # at ε = 1e-6 the ranking is noise


def test_the_two_curves_from_a_study(registry):
    from matplotlib.figure import Figure

    from veil.engine import Study, run_study

    table = labelled_table(11, n=60)
    metric = "weights-accuracy:classifier=3-nn,folds=3"
    base = {
        "methods": [
            {"name": "private-fwell", "params": {"lam": 0.1}, "label": "Private FWELL"},
            {"name": "fwell", "params": {"lam": 0.1}, "label": "FWELL", "fixed": True},
        ],
        "metrics": [metric],
    }
    by_eps = run_study(registry, Study.from_dict({**base, "sweep": {"epsilon": [1e-6, 1.0]}}), Context(0), data=table)
    by_top = run_study(registry, Study.from_dict({**base, "sweep": {"top": [1, 3]}}), Context(0), data=table)
    assert set(by_top[by_top["label"] == "FWELL"]["top"]) == {1, 3}
    for name, results in (("accuracy-vs-epsilon", by_eps), ("accuracy-vs-features", by_top)):
        chart = registry.chart(name)
        fig = Figure()
        chart.draw(results, fig, chart.params({"metric": metric}))
        assert len(fig.axes[0].lines) == 2  # one line per method
    private = by_eps[by_eps["label"] == "Private FWELL"].set_index("epsilon")["value"]
    assert private[1.0] >= private[1e-6]


@pytest.mark.dataset
@pytest.mark.parametrize(
    "recipe", ["paper003_sonar_epsilon", "paper003_sonar_features", "paper003_dp_ranking_spambase"]
)
def test_paper003_recipes_resolve_their_data_and_run(recipe, datasets_dir, registry):
    import dataclasses
    from pathlib import Path

    from veil.engine import Study

    study = Study.load(Path(__file__).resolve().parents[2] / "resources" / "studies" / f"{recipe}.json")
    assert datasets_dir.resolve() in Path(study.data.path).resolve().parents
    specs = study.runs(registry)
    data = study.data.load(registry)
    private = next(
        s for s in specs if s.method.name == "private-fwell" or s.method.params.get("score") == "private-fwell"
    )
    spec = dataclasses.replace(private, metrics=())  # the method itself; the metrics' CV is the slow part
    result = execute(registry, data, spec)
    assert result.holds and result.release.selected_features


def test_data_whose_dense_features_would_not_fit_is_refused_before_they_are_built(monkeypatch):
    """FWELL holds records × features dense: on the demo (5,000 records, 484 one-hot features, about
    77 MB at 32 bytes a cell with the search's 256 MB) with 200 MB left, one line names the need
    before anything is allocated; with 2 GB left the same data is read."""
    from veil.engine import BadInput, load_demo
    from veil.engine.run import memory

    demo = load_demo()  # its class: readmitted_30d
    monkeypatch.setattr(memory, "available_memory", lambda: (200 * 10**6, "available on this machine"))
    with pytest.raises(BadInput, match=r"not enough memory: .*FWELL's 5,000 records × \d+ features held dense"):
        core.feature_matrix(demo)
    monkeypatch.setattr(memory, "available_memory", lambda: (2 * 10**9, "available on this machine"))
    x, names, _ = core.feature_matrix(demo)
    assert x.shape == (5_000, len(names))
