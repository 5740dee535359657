"""PRAM, noise addition and rank swapping, and the measures of a perturbed release
(docs/perturbation.md): the properties the literature states, checked over many seeds, golden values
worked by hand, and brute-force oracles on small random inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BadInput,
    Context,
    default_metrics,
    PluginCall,
    PrivacyCheckFailed,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
)
from veil.plugins.perturbation import _measures as measures
from veil.plugins.perturbation.noise import Noise, add_noise
from veil.plugins.perturbation.pram import Pram, draw, invariant_matrix, retention_matrix
from veil.plugins.perturbation.rank_swap import RankSwap, swap_column

REGISTRY = make_registry()


def people(n=300, seed=0) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "pid": np.arange(n),
            "region": rng.choice(["north", "south", "east", "west"], n, p=[0.55, 0.25, 0.15, 0.05]),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(18, 90, n),
            "income": rng.normal(50_000, 12_000, n),
        }
    )
    return Table.from_frame(
        frame,
        roles={"pid": Role.IDENTIFIER, "region": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER},
    )


def run(method, data, seed=0, mode=None, **values):
    return method.run(data, None, method.params(values), Context(seed, mode=mode))


# ------------------------------------------------------------------------------------------- PRAM
def test_invariant_matrix_worked_by_hand():
    """π = (0.75, 0.25), retention 0.8: Q[k, j] = P[j, k]·π_j / (πP)_k, R = PQ, and with α = 0.5
    the matrix is (R + I)/2 (worked in docs/perturbation.md)."""
    p = retention_matrix(2, 0.8)
    r = invariant_matrix(p, np.array([0.75, 0.25]), alpha=1.0)
    assert r == pytest.approx(np.array([[0.824176, 0.175824], [0.527473, 0.472527]]), abs=1e-6)
    half = invariant_matrix(p, np.array([0.75, 0.25]), alpha=0.5)
    assert half == pytest.approx(np.array([[0.912088, 0.087912], [0.263736, 0.736264]]), abs=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_invariant_matrix_keeps_the_shares_for_any_matrix(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 7))
    p = rng.random((size, size)) * (rng.random((size, size)) < 0.7)
    p[np.arange(size), np.arange(size)] += 0.1
    p /= p.sum(axis=1, keepdims=True)
    pi = rng.dirichlet(np.ones(size))
    r = invariant_matrix(p, pi, alpha=float(rng.random()))
    assert pi @ r == pytest.approx(pi, abs=1e-12)
    assert r.sum(axis=1) == pytest.approx(np.ones(size)) and (r >= 0).all()
    # the plain retention matrix is not invariant for skewed shares: the check above can fail
    skewed = np.array([0.7] + [0.3 / (size - 1)] * (size - 1))
    assert not np.allclose(skewed @ retention_matrix(size, 0.8), skewed)


def counts(series, order):
    return series.value_counts().reindex(order, fill_value=0).to_numpy(dtype=float)


def test_invariant_pram_keeps_the_expected_counts_over_many_seeds():
    data = people()
    order = ["north", "south", "east", "west"]
    before = counts(data.frame["region"], order)
    seeds = 300
    mean = {True: np.zeros(4), False: np.zeros(4)}
    for invariant in (True, False):
        for seed in range(seeds):
            release = run(Pram(), data, seed, columns="region", retention=0.6, invariant=invariant, alpha=1.0)
            mean[invariant] += counts(release.frame["region"], order) / seeds
    # each count's spread over one run is at most √(n/4); over 300 seeds the mean's is below 0.5
    assert mean[True] == pytest.approx(before, abs=2.5)
    # without invariance the counts drift toward even shares: E = Pᵀ·counts
    assert mean[False] == pytest.approx(retention_matrix(4, 0.6).T @ before, abs=2.5)
    assert np.abs(mean[False] - before).max() > 20


def test_a_transition_of_probability_zero_never_happens(tmp_path):
    path = tmp_path / "matrix.csv"
    path.write_text(",east,north,south,west\neast,0.5,0.5,0,0\nnorth,0,0.7,0.3,0\nsouth,0,0,0.6,0.4\nwest,1,0,0,0\n")
    allowed = {("east", "east"), ("east", "north"), ("north", "north"), ("north", "south")}
    allowed |= {("south", "south"), ("south", "west"), ("west", "east")}
    data = people()
    seen = set()
    for seed in range(200):
        release = run(Pram(), data, seed, columns="region", matrix=str(path))
        seen |= set(zip(data.frame["region"], release.frame["region"]))
    assert seen == allowed  # every allowed transition happened, no other did


def test_draw_follows_the_matrix():
    """One row's draws over many records match its probabilities (a chi-square bound)."""
    m = np.array([[0.2, 0.0, 0.5, 0.3]])
    drawn = draw(np.zeros(200_000, dtype=np.int64), m, np.random.default_rng(1))
    share = np.bincount(drawn, minlength=4) / len(drawn)
    assert share == pytest.approx(m[0], abs=0.005) and share[1] == 0


def test_pram_within_strata_keeps_each_stratum_apart_and_records_each_matrix():
    data = people()
    # west never occurs among the men: an invariant matrix never makes a man western
    frame = data.frame.copy()
    frame.loc[(frame["sex"] == "M") & (frame["region"] == "west"), "region"] = "east"
    data = Table.from_frame(frame, data.schema)
    for seed in range(30):
        release = run(Pram(), data, seed, columns="region", strata="sex", retention=0.5)
        men = release.frame["sex"] == "M"
        assert "west" not in set(release.frame.loc[men, "region"])
    entries = release.details["pram"]["columns"]["region"]["strata"]
    assert sorted(e["stratum"]["sex"] for e in entries) == ["F", "M"]
    for e in entries:
        stratum = data.frame[data.frame["sex"] == e["stratum"]["sex"]]
        shares = counts(stratum["region"], e["categories"]) / len(stratum)
        assert shares @ np.array(e["matrix"]) == pytest.approx(shares, abs=1e-9)
        assert e["records"] == len(stratum)


def test_pram_refuses_a_bad_matrix(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(",east,north,south,west\neast,0.5,0.6,0,0\nnorth,0,1,0,0\nsouth,0,0,1,0\nwest,0,0,0,1\n")
    with pytest.raises(BadInput, match="sums to 1.1"):
        run(Pram(), people(), columns="region", matrix=str(path))
    with pytest.raises(BadInput, match="identifier"):
        run(Pram(), people(), columns="pid")


# ------------------------------------------------------------------------------------------ noise
def correlated(n, seed=0):
    rng = np.random.default_rng(seed)
    cov = np.array([[4.0, 1.2, -0.8], [1.2, 1.0, 0.3], [-0.8, 0.3, 2.0]])
    return rng.multivariate_normal([10.0, -3.0, 0.5], cov, size=n)


def test_correlated_noise_has_covariance_close_to_one_plus_alpha_sigma():
    x = correlated(200_000)
    level = 0.5  # α = ℓ² = 0.25
    y = add_noise(x, level, "correlated", np.random.default_rng(3))
    sigma = np.cov(x, rowvar=False)
    assert np.cov(y, rowvar=False) == pytest.approx((1 + level**2) * sigma, abs=0.03)
    assert np.corrcoef(y, rowvar=False) == pytest.approx(np.corrcoef(x, rowvar=False), abs=0.01)
    # the additive variant keeps the covariances but not the correlations
    z = add_noise(x, level, "additive", np.random.default_rng(3))
    assert np.diag(np.cov(z, rowvar=False)) == pytest.approx(1.25 * np.diag(sigma), rel=0.02)
    off = ~np.eye(3, dtype=bool)
    assert np.cov(z, rowvar=False)[off] == pytest.approx(sigma[off], abs=0.03)


@pytest.mark.parametrize("seed", range(5))
def test_exact_noise_keeps_means_and_covariances_to_rounding(seed):
    x = correlated(500, seed)
    y = add_noise(x, 0.8, "correlated-exact", np.random.default_rng(seed))
    assert y.mean(axis=0) == pytest.approx(x.mean(axis=0), abs=1e-9)
    assert np.cov(y, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), abs=1e-9)
    assert np.abs(y - x).mean() > 0.3  # every record still moved


def test_exact_noise_with_a_constant_column_and_missing_values():
    x = correlated(400)
    x[:, 1] = 7.0
    x[::9, 2] = np.nan
    y = add_noise(x, 0.5, "correlated-exact", np.random.default_rng(0))
    assert np.isnan(y[::9, 2]).all() and (y[:, 1] == pytest.approx(7.0))
    ok = ~np.isnan(x).any(axis=1)
    assert np.cov(y[ok], rowvar=False) == pytest.approx(np.cov(x[ok], rowvar=False), abs=1e-8)


def test_noise_is_seeded_in_a_study_and_from_entropy_in_a_release():
    data = people()
    a, b = (run(Noise(), data, 5, columns="age;income") for _ in range(2))
    assert a.frame.equals(b.frame) and a.details["perturbation"]["random_source"] == "seeded"
    c, d = (run(Noise(), data, 5, mode="release", columns="age;income") for _ in range(2))
    assert not c.frame["income"].equals(d.frame["income"])
    assert c.details["perturbation"]["random_source"] == "entropy"
    assert not a.frame["income"].equals(c.frame["income"])


def test_noise_refuses_a_categorical_column():
    with pytest.raises(BadInput, match="not numeric"):
        run(Noise(), people(), columns="region")


# ---------------------------------------------------------------------------------- rank swapping
def test_rank_swap_with_p_zero_returns_the_input():
    data = people()
    release = run(RankSwap(), data, columns="age;income", p=0)
    pd.testing.assert_frame_equal(release.frame, data.frame.drop(columns="pid"))


@pytest.mark.parametrize("seed", range(10))
def test_rank_swap_stays_within_the_window_and_keeps_the_values(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    values = rng.permutation(n).astype(float) * 1.5  # distinct: a value's rank is its position
    p = float(rng.choice([1, 5, 10, 30]))
    out = swap_column(values, p, rng)
    window = int(np.floor(p / 100 * n))
    rank = {v: i for i, v in enumerate(np.sort(values))}
    moves = np.array([abs(rank[a] - rank[b]) for a, b in zip(values, out)])
    assert moves.max() <= window
    assert sorted(out) == sorted(values)
    if window >= 1:
        assert (moves > 0).mean() > 0.5  # most records swap


def test_rank_swap_draws_a_partner_uniformly():
    """Three records, a window of two ranks: the lowest swaps with either other one, each half the time."""
    values = np.array([1.0, 2.0, 3.0])
    rng = np.random.default_rng(0)
    outcomes = [tuple(swap_column(values, 100, rng)) for _ in range(4000)]
    share = outcomes.count((2.0, 1.0, 3.0)) / len(outcomes)
    assert set(outcomes) == {(2.0, 1.0, 3.0), (3.0, 2.0, 1.0)}
    assert share == pytest.approx(0.5, abs=0.03)


# ---------------------------------------------------------------------------------------- measures
def test_il1s_worked_by_hand():
    """x = 1, 2, 3 (s = 1) published as 1, 3, 5: (0 + 1 + 2)/(3·√2); sdcMicro's IL1s is the sum, 3/√2."""
    x = np.array([[1.0], [2.0], [3.0]])
    y = np.array([[1.0], [3.0], [5.0]])
    assert measures.il1s(x, y) == pytest.approx(1 / np.sqrt(2))


def test_eigen_and_moment_measures_are_zero_on_the_input_and_grow_with_noise():
    x = correlated(2000)
    zero = [f(x, x) for f in (measures.eigen_loss, measures.mean_difference, measures.variance_difference)]
    zero += [measures.correlation_difference(x, x), measures.regression_difference(x, x), measures.il1s(x, x)]
    assert zero == pytest.approx([0.0] * 6, abs=1e-12)
    small = add_noise(x, 0.2, "additive", np.random.default_rng(0))
    large = add_noise(x, 1.0, "additive", np.random.default_rng(0))
    for f in (measures.il1s, measures.variance_difference, measures.correlation_difference):
        assert 0 < f(x, small) < f(x, large)


def brute_linkage(nx, ny, cx, cy):
    """The linkage risk record by record, as the definition says."""
    total = 0.0
    for i in range(len(nx)):
        d = [((nx[i] - ny[j]) ** 2).sum() + (cx[i] != cy[j]).sum() for j in range(len(ny))]
        best = min(d)
        ties = [j for j in range(len(ny)) if abs(d[j] - best) <= 1e-9 * (1 + abs(best))]
        total += (1.0 / len(ties)) if i in ties else 0.0
    return total / len(nx)


@pytest.mark.parametrize("seed", range(8))
def test_linkage_risk_agrees_with_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    nx = rng.integers(0, 4, (n, 2)).astype(float)  # small integers: ties happen
    ny = nx + rng.integers(-1, 2, (n, 2))
    cx = rng.integers(0, 3, (n, 2))
    cy = np.where(rng.random((n, 2)) < 0.3, rng.integers(0, 3, (n, 2)), cx)
    expected = brute_linkage(*measures.linkage_columns(nx, ny, cx, cy))
    assert measures.linkage_risk(nx, ny, cx, cy, block=7) == pytest.approx(expected)


def test_linkage_risk_is_one_unperturbed_and_falls_with_the_noise():
    data = people()
    result = execute(
        REGISTRY,
        data,
        RunSpec(PluginCall("noise-addition", {"columns": "age;income", "level": 0.0}), metrics=("linkage-risk",)),
    )
    assert result.metrics["linkage-risk"] == pytest.approx(1.0)
    risks = []
    for level in (0.05, 0.3, 1.5):
        spec = RunSpec(
            PluginCall("noise-addition", {"columns": "age;income", "level": level}), seed=1, metrics=("linkage-risk",)
        )
        risks.append(execute(REGISTRY, data, spec).metrics["linkage-risk"])
    assert 1.0 > risks[0] > risks[1] > risks[2]


def test_interval_disclosure_counts_values_inside_the_interval():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([[0.0], [1.1], [2.5], [3.0]])  # s' = 1.25…; k = 0.1: half-width 0.125
    assert measures.interval_disclosure(x, y, 0.1) == pytest.approx(0.75)


def test_the_default_metrics_of_a_perturbation_run():
    """The perturbation measures are computed for perturbation runs (numbers or categories as fits),
    never for a generalisation."""
    names = {"il1s", "eigen-loss", "linkage-risk", "interval-disclosure", "frequency-difference"}
    noise = set(default_metrics(REGISTRY, "noise-addition"))
    pram = set(default_metrics(REGISTRY, "pram"))
    assert {"il1s", "eigen-loss", "linkage-risk", "interval-disclosure"} <= noise
    assert "frequency-difference" not in noise and "il1s" not in pram
    assert {"frequency-difference", "linkage-risk"} <= pram
    assert not names & set(default_metrics(REGISTRY, "mondrian", "k-anonymity"))


# ------------------------------------------------------------------------------------ privacy models
def test_a_perturbed_release_failing_its_model_is_refused():
    """Noise makes every record unique on a numeric quasi-identifier: k-anonymity judges the
    published values and refuses the release."""
    data = people().with_roles({"age": Role.QUASI_IDENTIFIER})
    spec = RunSpec(PluginCall("noise-addition", {"columns": "age"}), PluginCall("k-anonymity", {"k": 2}))
    with pytest.raises(PrivacyCheckFailed):
        execute(REGISTRY, data, spec)
    # PRAM keeps categories; k-anonymity on region and sex may then hold, judged as published
    result = execute(REGISTRY, people(), RunSpec(PluginCall("pram"), PluginCall("k-anonymity", {"k": 2})))
    assert result.verdict.holds


def test_pairs_of_methods_and_columns():
    """Every pair of perturbation methods on disjoint columns gives a release whose other columns are
    the input's."""
    data = people()
    for method, columns in itertools.product(("noise-addition", "rank-swap"), ("age", "income")):
        release = execute(REGISTRY, data, RunSpec(PluginCall(method, {"columns": columns}))).release
        other = "income" if columns == "age" else "age"
        assert release.frame[other].equals(data.frame[other]) and release.frame["region"].equals(data.frame["region"])


def test_pram_keeps_the_column_type_and_missing_values(tmp_path):
    """A categorical column stays categorical (gaining the categories a user's matrix adds), an
    integer column stays integer, and a missing value stays missing."""
    frame = pd.DataFrame(
        {
            "grade": pd.Categorical(["a", "b", None, "a", "b", "a"] * 20),
            "level": [1, 2, 3, 1, 2, 3] * 20,
        }
    )
    data = Table.from_frame(frame)
    path = tmp_path / "matrix.csv"
    path.write_text(",a,b,c\na,0,0,1\nb,0,0,1\nc,0,0,1\n")
    release = run(Pram(), data, columns="grade", matrix=str(path))
    grade = release.frame["grade"]
    assert isinstance(grade.dtype, pd.CategoricalDtype) and set(grade.cat.categories) == {"a", "b", "c"}
    assert grade.isna().sum() == 20 and set(grade.dropna()) == {"c"}
    level = run(Pram(), data, columns="level", retention=0.5).frame["level"]
    assert level.dtype == frame["level"].dtype and set(level) <= {1, 2, 3}
