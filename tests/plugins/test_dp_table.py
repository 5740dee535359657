"""The differentially private table release (docs/reference.md#dp-table-safepub): k and β from (ε, δ)
against the paper's formulas evaluated term by term, the sampling rate and the suppression checked
statistically and record by record, the degree's levels, seeded reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from veil.engine import SUPPRESSED, Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry
from veil.plugins.anonymisation._safepub import level_of, parameters

REGISTRY = make_registry()


def delta_by_hand(k: int, epsilon: float) -> float:
    """d(k) summed term by term: β = 1 − e^−ε, γ = (e^ε − 1 + β)/e^ε, n from ⌈k/γ − 1⌉, a(n) the
    binomial probabilities of more than γn successes, stopped once exp(−n(γ ln(γ/β) − (γ − β))) is
    below the largest a(n) so far."""
    beta = 1 - math.exp(-epsilon)
    gamma = (math.exp(epsilon) - 1 + beta) / math.exp(epsilon)
    n, worst, bound = math.ceil(k / gamma - 1), -math.inf, math.inf
    while worst <= bound:
        a = sum(binom.pmf(j, n, beta) for j in range(math.floor(gamma * n) + 1, n + 1))
        worst = max(worst, a)
        bound = math.exp(-n * (gamma * math.log(gamma / beta) - (gamma - beta)))
        n += 1
    return worst


@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-4), (1.0, 1e-5), (1.0, 1e-6), (0.25, 1e-3)])
def test_k_and_beta_follow_the_formulas(epsilon, delta):
    p = parameters(epsilon, delta)
    assert p.beta == pytest.approx(1 - math.exp(-epsilon), rel=1e-12)
    first = p.k - 1  # the first k whose d is below δ; the release uses one more, as ARX does
    assert delta_by_hand(first, epsilon) < delta
    assert delta_by_hand(first - 1, epsilon) >= delta


def test_an_epsilon_too_large_is_refused_at_once():
    with pytest.raises(ValueError, match="ε = 10 is too large"):
        parameters(10, 1e-5)


def test_the_sentence_shown_before_a_run():
    assert parameters(2, 1e-5).sentence() == (
        "ε = 2, δ = 10⁻⁵: each record kept with probability 0.865, classes smaller than k = 114 suppressed"
    )


@pytest.mark.parametrize(
    "degree, height, level", [("medium", 5, 3), ("low", 2, 0), ("high", 3, 2), ("low-medium", 4, 2), ("complete", 4, 4)]
)
def test_a_degree_is_its_share_of_the_height_rounded_half_up(degree, height, level):
    assert level_of(degree, height) == level


def table(n: int = 20_000, seed: int = 0) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.choice([f"z{i}" for i in range(12)], n)})
    out = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "zip": Role.QUASI_IDENTIFIER})
    out = out.with_hierarchy("age", Hierarchy.intervals(frame["age"], widths=[5, 10, 20, 40]))
    zips = sorted(set(frame["zip"]))
    return out.with_hierarchy("zip", Hierarchy.from_levels({z: [f"r{int(z[1:]) // 4}", "*"] for z in zips}))


def release(data, seed, **params):
    spec = RunSpec(PluginCall("dp-table", params), seed=seed, metrics=())
    return execute(REGISTRY, data, spec).release


def test_records_are_sampled_at_beta_and_small_classes_suppressed():
    data = table()
    out = release(data, 3, epsilon=1.0, delta=1e-5, degree="low")
    dp = out.details["dp"]
    beta, k, n = dp["beta"], dp["k"], data.n_rows
    assert dp["records"] == n and out.n_rows == dp["sampled"]
    assert abs(dp["sampled"] - n * beta) <= 5 * math.sqrt(n * beta * (1 - beta)), "a binomial count"
    frame = out.frame.astype(str)
    starred = (frame["age"] == str(SUPPRESSED)) & (frame["zip"] == str(SUPPRESSED))
    sizes = frame[~starred].groupby(["age", "zip"]).size()
    assert (sizes >= k).all(), "every class kept has at least k records"
    assert int(starred.sum()) == dp["suppressed"] > 0
    assert dp["levels"] == {"age": 1, "zip": 0}


def test_the_sample_differs_between_seeds_and_repeats_with_one():
    data = table(2_000)
    a, b, c = (release(data, s, epsilon=1.0, delta=1e-4) for s in (1, 1, 2))
    assert a.frame.equals(b.frame) and not a.frame.equals(c.frame)
    assert "seeded" in a.details["dp"]["randomness"]


def test_many_samples_keep_each_record_with_probability_beta():
    """Over 200 seeded releases of 50 records, each record's count of appearances is binomial(200, β)."""
    data = table(50)
    data = Table.from_frame(
        data.frame.assign(id=np.arange(50)), roles={"age": Role.QUASI_IDENTIFIER, "zip": Role.QUASI_IDENTIFIER}
    )
    seen = np.zeros(50)
    for s in range(200):
        out = release(data, s, epsilon=0.5, delta=1e-3, degree="complete")
        seen[out.frame["id"].astype(int).to_numpy()] += 1
    beta = 1 - math.exp(-0.5)
    z = (seen.sum() - 200 * 50 * beta) / math.sqrt(200 * 50 * beta * (1 - beta))
    assert abs(z) < 5
