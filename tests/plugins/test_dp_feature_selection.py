"""Laplace-DP and Exponential-DP (docs/reference.md#feature-selection): noise scales, the exponential mechanism's
distribution,
the noisy histogram, the synthetic release, the default m and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from veil.engine import SYNTHETIC, BadInput, BinaryMatrix, Context, PluginCall, RunSpec, SeededNoise, execute
from veil.plugins.feature_selection.dp import (
    MAX_EPSILON,
    ExponentialDP,
    LaplaceDP,
    cell_counts,
    exponential_probabilities,
    noisy_counts,
    select_exponential,
    select_laplace,
)
from veil.plugins.feature_selection._common import hamdist_scores, positive_mask

METHODS = [LaplaceDP, ExponentialDP]


def random_matrix(seed=0, n=120, m=8, density=0.4) -> BinaryMatrix:
    rng = np.random.default_rng(seed)
    return BinaryMatrix.from_dense(
        (rng.random((n, m)) < density).astype(np.uint8), labels=np.where(rng.random(n) < 0.6, 1, -1)
    )


def run(cls, matrix, seed=0, **values):
    return cls().run(matrix, None, cls.params(values), Context(seed))


class RecordingNoise(SeededNoise):
    """Seeded noise that records every scale and size asked for (continuous and discrete Laplace)."""

    def __init__(self, seed):
        super().__init__(np.random.default_rng(seed))
        self.scales, self.discrete = [], []

    def laplace(self, values, scale):
        self.scales.append((scale, np.shape(values)))
        return super().laplace(values, scale)

    def discrete_laplace(self, counts, scale):
        self.discrete.append((scale, np.shape(counts)))
        return super().discrete_laplace(counts, scale)


# -- noise scales ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon, m", [(1.0, 3), (0.25, 5)])
def test_laplace_dp_noise_scales_follow_spec(epsilon, m):
    matrix = random_matrix(1)
    labels = matrix.labels
    delta = max((labels == 1).sum(), (labels == -1).sum())
    ctx = Context(0)
    ctx.noise = RecordingNoise(0)
    LaplaceDP().run(matrix, None, LaplaceDP.params({"epsilon": epsilon, "m": m}), ctx)
    picks, histogram = ctx.noise.scales, ctx.noise.discrete
    eps1 = epsilon / (2 * m)
    assert [s for s, _ in picks] == pytest.approx([delta / eps1] * m)
    assert [size for _, size in picks] == [(8 - i,) for i in range(m)]  # fresh noise over the remaining features
    assert len(histogram) == 1 and histogram[0][0] == pytest.approx(2 / (epsilon / 2))
    assert histogram[0][1] == (2**m, 2)


def test_exponential_dp_draws_no_selection_noise_and_the_same_histogram_noise():
    ctx = Context(0)
    ctx.noise = RecordingNoise(0)
    ExponentialDP().run(random_matrix(1), None, ExponentialDP.params({"epsilon": 2.0, "m": 4}), ctx)
    assert ctx.noise.scales == [] and [s for s, _ in ctx.noise.discrete] == pytest.approx([2 / 1.0])


def discrete_laplace_variance(scale: float) -> float:
    """Var of P(z) ∝ α^|z|, α = exp(−1/scale): 2α / (1 − α)²."""
    alpha = np.exp(-1 / scale)
    return 2 * alpha / (1 - alpha) ** 2


def test_histogram_noise_has_the_discrete_laplace_spread():
    counts = np.full((10_000, 2), 1000)
    noise = noisy_counts(counts, 0.5, np.random.default_rng(3)) - counts
    assert noise.dtype == np.int64
    assert noise.std() == pytest.approx(np.sqrt(discrete_laplace_variance(2 / 0.5)), rel=0.05)
    assert abs(noise.mean()) < 0.2


def test_noisy_cells_are_never_negative():
    noisy = noisy_counts(np.zeros((4096, 2), dtype=np.int64), 0.1, np.random.default_rng(4))
    assert noisy.min() == 0
    assert (noisy == 0).mean() > 0.3  # plenty of cells drew negative noise and were clipped


# -- selection -------------------------------------------------------------------------------------------
def test_exponential_selection_frequencies_match_its_probabilities():
    scores = np.array([0, 30, 60, 90, 100])
    eps1, delta, draws = 0.4, 10, 6000
    expected = np.exp(eps1 * scores / (2 * delta))
    expected = expected / expected.sum()
    rng = np.random.default_rng(5)
    picks = [select_exponential(scores, 1, eps1, delta, rng)[0] for _ in range(draws)]
    observed = np.bincount(picks, minlength=len(scores))
    assert stats.chisquare(observed, expected * draws).pvalue > 0.001  # false alarm rate 0.1 %
    assert np.allclose(exponential_probabilities(scores, eps1, delta), expected)


def test_exponential_probabilities_are_stable_for_huge_scores():
    p = exponential_probabilities(np.array([3e8, 2e8, 1e8]), 5.0, 1.0)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0) and p[0] == 1.0


@pytest.mark.parametrize("select", [select_laplace, select_exponential])
def test_picks_are_distinct_even_when_noise_dominates(select):
    picks = select(np.arange(10), 10, 1e-6, 100, np.random.default_rng(6))
    assert sorted(picks) == list(range(10))


@pytest.mark.parametrize("cls", METHODS)
def test_huge_epsilon_picks_the_true_top_m(cls):
    rng = np.random.default_rng(7)
    labels = np.repeat([1, -1], 150)
    lean = rng.permutation(np.linspace(0.0, 0.4, 12))  # how strongly each feature follows the class
    dense = rng.random((300, 12)) < 0.5 + np.where(labels[:, None] == 1, lean, -lean)
    matrix = BinaryMatrix.from_dense(dense.astype(np.uint8), labels=labels)
    scores = hamdist_scores(matrix, positive_mask(matrix))
    assert len(set(scores.tolist())) == len(scores)  # distinct scores: the top 5 are well defined
    release = run(cls, matrix, epsilon=MAX_EPSILON, m=5)
    assert release.details["selected_indices"] == np.argsort(-scores)[:5].tolist()


# -- release ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", METHODS)
def test_huge_epsilon_reproduces_the_projected_histogram(cls):
    matrix = random_matrix(8, n=200)
    release = run(cls, matrix, epsilon=MAX_EPSILON, m=3)
    assert release.kind == SYNTHETIC and release.n_rows == matrix.n_rows
    names = list(release.selected_features)
    assert list(release.quasi_identifiers) == names and release.target == "class"
    assert list(release.frame.columns) == [*names, "class"]
    pos = positive_mask(matrix)
    picks = release.details["selected_indices"]
    synthetic = BinaryMatrix.from_dense(release.frame[names].to_numpy(), features=names)
    assert (
        cell_counts(synthetic, [0, 1, 2], release.frame["class"].to_numpy() == 1) == cell_counts(matrix, picks, pos)
    ).all()


@pytest.mark.parametrize("cls", METHODS)
def test_release_size_is_near_n_for_moderate_epsilon(cls):
    matrix = random_matrix(9, n=2000)
    release = run(cls, matrix, epsilon=20.0, m=3)
    # 16 cells with Lap(0.2) noise each: the total moves by a few records at most
    assert abs(release.n_rows - 2000) <= 10


@pytest.mark.parametrize("cls", METHODS)
def test_details_state_the_claim(cls):
    release = run(cls, random_matrix(10), epsilon=0.5, m=2)
    d = release.details
    assert d["epsilon_spent"] == 0.5 and d["m_source"] == "user"
    assert any("Class sizes are public" in s for s in d["assumptions"])
    assert not any("non-private" in s for s in d["assumptions"])
    assert run(cls, random_matrix(10)).details["m_source"] != "user"
    assert any("non-private" in s for s in run(cls, random_matrix(10)).details["assumptions"])


@pytest.mark.parametrize("name", ["laplace-dp-fs", "exponential-dp-fs"])
def test_default_m_is_greedy_hamdists_count_at_k5(name, registry):
    matrix = random_matrix(11, n=150, m=10, density=0.3)
    greedy = execute(registry, matrix, RunSpec(PluginCall("greedy-hamdist"), PluginCall("k-ac", {"k": 5})))
    dp = execute(registry, matrix, RunSpec(PluginCall(name), seed=3))
    assert 0 < len(greedy.release.selected_features) < 10
    assert dp.release.details["m"] == len(greedy.release.selected_features) == len(dp.release.selected_features)
    assert dp.verdict is None  # no privacy model needed


@pytest.mark.parametrize("cls", METHODS)
def test_same_seed_same_release_other_seed_other_release(cls):
    matrix = random_matrix(12)
    first, again, other = (run(cls, matrix, seed=s, m=3).frame for s in (1, 1, 2))
    assert first.equals(again) and not first.equals(other)


# -- bad input ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", METHODS)
def test_bounds_of_epsilon_and_m(cls):
    for bad in ({"epsilon": 0}, {"epsilon": -1}, {"m": 21}, {"m": 0}):
        with pytest.raises(BadInput):
            cls.params(bad)
    with pytest.raises(BadInput, match="only 8 features"):
        run(cls, random_matrix(13), m=9)


@pytest.mark.parametrize("cls", METHODS)
def test_default_m_above_20_is_refused(cls):
    n = 40
    dense = np.zeros((n, 25), dtype=np.uint8)
    dense[:10] = 1  # 25 identical columns: every one keeps kac ≥ 10, so Greedy-HamDist would take all 25
    labels = np.where(np.arange(n) < 20, 1, -1)
    matrix = BinaryMatrix.from_dense(dense, labels=labels)
    with pytest.raises(BadInput, match="default m .* is more than 20.*set m ≤ 20"):
        run(cls, matrix)
    assert run(cls, matrix, m=5).details["m"] == 5


@pytest.mark.parametrize("name", ["laplace-dp-fs", "exponential-dp-fs"])
def test_labels_are_required(name, registry):
    unlabelled = BinaryMatrix.from_dense(np.eye(6, dtype=np.uint8))
    with pytest.raises(BadInput, match="target"):
        execute(registry, unlabelled, RunSpec(PluginCall(name, {"m": 2})))
    one_class = unlabelled.with_labels(np.ones(6, dtype=int))
    with pytest.raises(BadInput, match="two classes"):
        registry.algorithm(name).run(one_class, None, registry.algorithm(name).params({"m": 2}), Context(0))
