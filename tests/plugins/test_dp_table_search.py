"""The data-dependent mode of the differentially private table release
(docs/reference.md#dp-table-safepub): SafePub's score functions worked by hand on a small table, the
exponential mechanism's choices over many seeded searches of a tiny lattice against their
definition (a χ² goodness-of-fit test), the split of ε, and the release's classes of at least k."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

from veil.engine import SUPPRESSED, Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry
from veil.plugins.anonymisation._lattice import attributes, classes_at
from veil.plugins.anonymisation._safepub import SCORES, parameters, probabilities, score_of, search, sensitivity

REGISTRY = make_registry()


def small() -> tuple[Table, list]:
    """Six sampled records of eight (two were not sampled): a ∈ a1…a4 (level 1: x = {a1, a2},
    y = {a3, a4}; level 2: *), b ∈ b1, b2 (level 1: *), c ∈ c1, c2 (level 1: *)."""
    frame = pd.DataFrame(
        {
            "a": ["a1", "a1", "a2", "a3", "a3", "a4"],
            "b": ["b1", "b1", "b1", "b2", "b2", "b1"],
            "c": ["c1", "c2", "c1", "c1", "c2", "c2"],
        }
    )
    qi = Role.QUASI_IDENTIFIER
    data = Table.from_frame(frame, roles={"a": qi, "b": qi, "c": qi})
    data = data.with_hierarchy(
        "a", Hierarchy.from_levels({"a1": ["x", "*"], "a2": ["x", "*"], "a3": ["y", "*"], "a4": ["y", "*"]})
    )
    data = data.with_hierarchy("b", Hierarchy.from_levels({"b1": ["*"], "b2": ["*"]}))
    data = data.with_hierarchy("c", Hierarchy.from_levels({"c1": ["*"], "c2": ["*"]}))
    return data, attributes(data, ["a", "b", "c"])


N, K = 8, 2  # records before sampling; classes smaller than K suppressed


ATTRS = small()[1]


def scores(levels) -> dict:
    table = classes_at(ATTRS, levels, None, 1)[0]
    return {s: score_of(s, table, ATTRS, K, N) for s in SCORES}


def test_the_scores_of_a_middle_node_by_hand():
    """At a = level 1, b and c at 0 the classes are (x, b1, c1) 2, (x, b1, c2) 1, (y, b2, c1) 1,
    (y, b2, c2) 1, (y, b1, c2) 1: only the first has K = 2 records; 4 suppressed, 2 not sampled: S = 6.
    loss: a: kept 2 × share(x) = 2 × 2/4, + S → 7; b: 2 × 1/2 + 6 = 7; c: 2 × 1/2 + 6 = 7 → −21.
    precision: a: 2 × 1/2 + 6 = 7; b, c: 0 + 6 each → −19.
    discernibility: −(2² + N·S)/N = −(4 + 48)/8 = −6.5.
    entropy: each column has one kept value of count 2 (4) and S cells costing N (48): 52 × 3 / (N·3) = −6.5.
    average-class-size: one kept class, and some suppressed: 2."""
    got = scores((1, 0, 0))
    assert got == pytest.approx(
        {"loss": -21, "precision": -19, "discernibility": -6.5, "entropy": -6.5, "average-class-size": 2}
    )


def test_the_scores_of_a_coarser_node_by_hand():
    """At (1, 1, 1): classes x (a1, a1, a2) 3 and y (a3, a3, a4) 3, both kept; S = 2 (not sampled).
    loss: a: 6 × 1/2 + 2 = 5; b and c are the root (share 1): 6 + 2 = 8 each → −21.
    precision: a: 6 × 1/2 + 2 = 5; b, c: 6 × 1 + 2 = 8 each → −21.
    discernibility: −(9 + 9 + 8 × 2)/8 = −4.25.
    entropy: a: 9 + 9 + 8 × 2 = 34; b, c root: 8 × (6 + 2) = 64 each; −162 / 24 = −6.75.
    average-class-size: 2 kept + 1 = 3."""
    got = scores((1, 1, 1))
    assert got == pytest.approx(
        {"loss": -21, "precision": -21, "discernibility": -4.25, "entropy": -6.75, "average-class-size": 3}
    )


def test_the_sensitivities():
    assert sensitivity("loss", 5, 3) == sensitivity("precision", 5, 3) == 12
    assert sensitivity("loss", 1, 3) == 3
    assert sensitivity("discernibility", 5, 3) == sensitivity("entropy", 5, 9) == pytest.approx(25 / 4 + 1)
    assert sensitivity("discernibility", 1, 3) == 5
    assert sensitivity("average-class-size", 100, 9) == 1


def below(levels) -> list:
    return [levels[:j] + (l - 1,) + levels[j + 1 :] for j, l in enumerate(levels) if l > 0]


def test_the_search_chooses_by_the_exponential_mechanism():
    """3,000 seeded two-step searches of the 3 × 2 × 2 lattice, scored by loss: the frequency of each
    (first pivot, second pivot) against exp(ε·s/2Δ) normalised over the candidates of each step (the
    top's specialisations; then those left, with the first pivot's), by a χ² goodness-of-fit test at
    the 0.1 % level."""
    every = {levels: scores(levels)["loss"] for levels in itertools.product(range(3), range(2), range(2))}
    eps, delta_score, top = 1.5, sensitivity("loss", K, 3), (2, 1, 1)
    expected = {}
    first = sorted(below(top))
    for i, p1 in zip(range(len(first)), first):
        p_first = probabilities([every[c] for c in first], eps, delta_score)[i]
        second = sorted((set(first) - {p1}) | set(below(p1)))
        for p2, p_second in zip(second, probabilities([every[c] for c in second], eps, delta_score)):
            expected[(p1, p2)] = p_first * p_second
    assert sum(expected.values()) == pytest.approx(1)
    rng = np.random.default_rng(7)
    runs = 3000
    seen = dict.fromkeys(expected, 0)
    for _ in range(runs):
        walk = search(top, every.__getitem__, 2, eps, delta_score, rng.random)
        seen[tuple(walk.pivots[1:])] += 1
    pairs = sorted(expected)
    observed = np.array([seen[p] for p in pairs])
    wanted = np.array([expected[p] for p in pairs]) * runs
    assert len(set(expected.values())) > 3, "the test needs choices of different probabilities"
    assert chisquare(observed, wanted).pvalue > 0.001


def test_the_search_releases_the_best_pivot_scoring_each_node_once():
    every = {levels: scores(levels)["discernibility"] for levels in itertools.product(range(3), range(2), range(2))}
    asked = []

    def score(levels):
        asked.append(levels)
        return every[levels]

    walk = search((2, 1, 1), score, 100, 0.5, 5.0, np.random.default_rng(3).random)
    assert len(asked) == len(set(asked)) == len(walk.scores)
    assert all(any(p in below(q) for q in walk.pivots[:i]) for i, p in enumerate(walk.pivots) if i)
    best = max(every[p] for p in walk.pivots)
    assert every[walk.best] == best
    assert sum(walk.best) == min(sum(p) for p in walk.pivots if every[p] == best)


def test_a_former_pivot_comes_back_as_a_specialisation_of_a_later_one():
    """The 3 × 2 lattice with every score 0 (each candidate equally likely; draw u picks the sorted
    candidates' ⌊u·m⌋-th): pivots (2,1) → (1,1) → (1,0) → (2,0), whose specialisation (1,0), a pivot
    before, is a candidate again, as in SafePub's union of candidates and ARX's search; it is drawn."""
    draws = iter([0.25, 0.5, 0.9, 0.9])  # [(1,1) (2,0)]; [(0,1) (1,0) (2,0)]; [(0,0) (0,1) (2,0)]; [(0,0) (0,1) (1,0)]
    walk = search((2, 1), lambda levels: 0.0, 4, 1.0, 1.0, lambda: next(draws))
    assert walk.pivots == [(2, 1), (1, 1), (1, 0), (2, 0), (1, 0)]


def test_the_search_ends_when_no_candidate_is_left():
    walk = search((3,), lambda levels: -float(levels[0]), 100, 1.0, 1.0, np.random.default_rng(0).random)
    assert walk.pivots == [(3,), (2,), (1,), (0,)] and walk.best == (0,)


def table(n: int, seed: int = 0) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.choice([f"z{i}" for i in range(12)], n)})
    out = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "zip": Role.QUASI_IDENTIFIER})
    out = out.with_hierarchy("age", Hierarchy.intervals(frame["age"], widths=[5, 10, 20, 40]))
    zips = sorted(set(frame["zip"]))
    return out.with_hierarchy("zip", Hierarchy.from_levels({z: [f"r{int(z[1:]) // 4}", "*"] for z in zips}))


@pytest.fixture(scope="module")
def dependent():
    data = table(3000)
    call = PluginCall(
        "dp-table", {"epsilon": 2.0, "delta": 1e-5, "mode": "data-dependent", "search_share": 0.25, "steps": 8}
    )
    return data, execute(REGISTRY, data, RunSpec(call, seed=5, metrics=())).release


def test_epsilon_is_split_between_the_search_and_the_release(dependent):
    _, out = dependent
    dp = out.details["dp"]
    assert dp["epsilon_search"] == pytest.approx(0.5) and dp["epsilon_anonymisation"] == pytest.approx(1.5)
    assert dp["epsilon_anonymisation"] + dp["epsilon_search"] == pytest.approx(dp["epsilon"])
    assert dp["epsilon_per_step"] * dp["steps"] == pytest.approx(dp["epsilon_search"])
    assert 1 <= dp["steps_taken"] <= dp["steps"] and len(dp["pivots"]) == dp["steps_taken"] + 1
    expected = parameters(1.5, 1e-5)
    assert (dp["k"], dp["beta"]) == (expected.k, pytest.approx(1 - math.exp(-1.5)))
    assert out.details["epsilon_spent"] == 2.0
    facts = {f.label: f.text for f in REGISTRY.get("algorithm", "dp-table").report_facts(out.details, None)}
    assert "1.5 for sampling and suppression, 0.5 for the search" in facts["Privacy budget"]


def test_the_release_has_classes_of_at_least_k_at_a_pivots_levels(dependent):
    data, out = dependent
    dp = out.details["dp"]
    assert dp["levels"] in dp["pivots"]
    frame = out.frame.astype(str)
    starred = (frame["age"] == str(SUPPRESSED)) & (frame["zip"] == str(SUPPRESSED))
    sizes = frame[~starred].groupby(["age", "zip"]).size()
    assert (sizes >= dp["k"]).all()
    assert int(starred.sum()) == dp["suppressed"] and out.n_rows == dp["sampled"] < data.n_rows


def test_a_data_independent_release_spends_nothing_on_a_search():
    data = table(400)
    call = PluginCall("dp-table", {"epsilon": 1.0, "delta": 1e-4})
    dp = execute(REGISTRY, data, RunSpec(call, seed=1, metrics=())).release.details["dp"]
    assert dp["mode"] == "data-independent" and dp["epsilon_search"] == 0 and dp["epsilon_anonymisation"] == 1.0
    assert "pivots" not in dp
