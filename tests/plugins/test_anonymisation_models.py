"""l-diversity, t-closeness and δ-disclosure against slow per-group oracles, the paper's golden JS values,
and checks of a written file through ``veil verify``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import BadInput, GroupView, Hierarchy, make_registry
from veil.cli import main
from veil.plugins.anonymisation import sensitive_models
from veil.plugins.anonymisation.sensitive_models import js_divergence, max_log_ratio

REGISTRY = make_registry()

# Q of Adult's occupation as printed in paper 001 §5.1 (the last value reads "00003" there: 0.0003)
ADULT_Q = np.array(
    [0.0314, 0.1331, 0.1063, 0.1196, 0.1323, 0.1329, 0.0452, 0.0657, 0.1225, 0.0327, 0.0512, 0.0052, 0.0216, 0.0003]
)


def test_golden_js_values_of_spec():
    most = np.eye(len(ADULT_Q))[int(np.argmax(ADULT_Q))]
    least = np.eye(len(ADULT_Q))[int(np.argmin(ADULT_Q))]
    assert js_divergence(most, ADULT_Q)[0] == pytest.approx(0.488, abs=5e-4)
    assert js_divergence(least, ADULT_Q)[0] == pytest.approx(0.692, abs=5e-4)
    assert js_divergence(ADULT_Q, ADULT_Q)[0] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------- oracles
def _groups(groups, sens):
    out = {}
    for g, s in zip(groups, sens):
        out.setdefault(g, []).append(s)
    return out


def _dist(values, domain):
    return [values.count(v) / len(values) for v in domain]


def _js(p, q):
    def kl(a, b):
        return sum(x * math.log(x / y) for x, y in zip(a, b) if x > 0)

    m = [(x + y) / 2 for x, y in zip(p, q)]
    return (kl(p, m) + kl(q, m)) / 2


def _emd(p, q, numeric):
    if not numeric:
        return sum(abs(x - y) for x, y in zip(p, q)) / 2
    # ordered: the transport cost of the cumulative differences, ground distance |i-j|/(m-1)
    m, total, carry = len(p), 0.0, 0.0
    for x, y in zip(p[:-1], q[:-1]):
        carry += x - y
        total += abs(carry)
    return total / (m - 1) if m > 1 else 0.0


def _l_oracle(values, variant, l, c):
    counts = sorted((values.count(v) for v in set(values)), reverse=True)
    n = len(values)
    if variant == "probabilistic":
        return counts[0] / n <= 1 / l + 1e-12
    if variant == "distinct":
        return len(counts) >= l
    if variant == "entropy":
        return -sum(x / n * math.log(x / n) for x in counts) >= math.log(l) - 1e-12
    tail = sum(counts[int(l) - 1 :])
    return counts[0] < c * tail


records = st.lists(st.tuples(st.integers(0, 5), st.sampled_from([1, 2, 3, 5, 8])), min_size=1, max_size=60)


def _view(recs, numeric):
    groups, sens = zip(*recs)
    sens = list(sens) if numeric else [f"s{v}" for v in sens]
    return groups, sens, GroupView.from_labels(list(groups), sens)


def _by_group(view, groups):
    labels = list(dict.fromkeys(groups))  # GroupView numbers groups by first appearance
    return labels


@settings(max_examples=60, deadline=None)
@given(
    records,
    st.sampled_from(["probabilistic", "distinct", "entropy", "recursive"]),
    st.sampled_from([1.0, 2.0, 3.0, 1.5, 2.5]),
    st.sampled_from([0.5, 1.0, 2.0, 3.0]),
)
def test_l_diversity_matches_oracle(recs, variant, l, c):
    if variant in ("distinct", "recursive"):
        l = float(math.ceil(l))
    groups, sens, view = _view(recs, False)
    model = REGISTRY.privacy_model("l-diversity")
    verdict = model.check_groups(view, model.params({"l": l, "variant": variant, "c": c}))
    per_group = _groups(groups, sens)
    for i, g in enumerate(_by_group(view, groups)):
        assert bool(verdict.ok[i]) == _l_oracle(per_group[g], variant, l, c), (g, per_group[g])


@settings(max_examples=60, deadline=None)
@given(records, st.sampled_from(["js", "emd", "ordered"]), st.booleans(), st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.4]))
def test_t_closeness_matches_oracle(recs, distance, numeric, t):
    if distance == "ordered" and not numeric:
        distance = "emd"  # a category's order needs a hierarchy: test_ordered_emd_follows_the_declared_order
    groups, sens, view = _view(recs, numeric)
    model = REGISTRY.privacy_model("t-closeness")
    verdict = model.check_groups(view, model.params({"t": t, "distance": distance}))
    domain = sorted(set(sens)) if numeric else list(dict.fromkeys(sens))
    q = _dist(sens, domain)
    per_group = _groups(groups, sens)
    for i, g in enumerate(_by_group(view, groups)):
        p = _dist(per_group[g], domain)
        d = _js(p, q) if distance == "js" else _emd(p, q, numeric)
        assert verdict.values[i] == pytest.approx(d, abs=1e-9)
        assert bool(verdict.ok[i]) == (d <= t + 1e-9) or abs(d - t) < 1e-9


@settings(max_examples=60, deadline=None)
@given(records, st.sampled_from([0.0, 0.3, 1.0, 2.0]), st.sampled_from([None, 1, 2]))
def test_delta_disclosure_matches_oracle(recs, delta, sides):
    groups, sens, view = _view(recs, False)
    model = REGISTRY.privacy_model("delta-disclosure")
    verdict = model.check_groups(view, model.params({"delta": delta, **({"sides": sides} if sides else {})}))
    domain = list(dict.fromkeys(sens))
    q = _dist(sens, domain)
    per_group = _groups(groups, sens)
    for i, g in enumerate(_by_group(view, groups)):
        p = _dist(per_group[g], domain)
        if sides == 1:
            d = max(math.log(x / y) for x, y in zip(p, q) if x > 0)
        else:  # two-sided by default: Brickell and Shmatikov's |ln|, over the values the group holds
            d = max(abs(math.log(x / y)) for x, y in zip(p, q) if x > 0)
        assert verdict.values[i] == pytest.approx(d, abs=1e-9)
        assert bool(verdict.ok[i]) == (d <= delta + 1e-12)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 4), min_size=5, max_size=5), min_size=1, max_size=8),
    st.lists(st.integers(0, 6), min_size=5, max_size=5),
    st.sampled_from([1, 2]),
)
def test_max_log_ratio_is_the_largest_log_ratio_of_a_held_value(counts, weights, sides):
    """Against the definition cell by cell: rows holding nothing give −∞, a value of Q = 0 is divided by 1;
    the compiled pass (when numba is installed) gives the same figures, but for the logarithm's last bit."""
    c = np.array(counts, dtype=float)
    p = c / np.maximum(c.sum(axis=1, keepdims=True), 1)
    q = np.array(weights, dtype=float) / max(sum(weights), 1)
    got = max_log_ratio(c, q, sides)
    kernel = sensitive_models._kernel("_log_ratios")
    if kernel is not None:
        for layout in (c, np.asfortranarray(c)):
            compiled = kernel(layout, sensitive_models._scale(q), sides == 2)
            assert np.array_equal(np.isinf(compiled), np.isinf(got))
            assert np.allclose(compiled, got, rtol=1e-15, atol=0), (compiled, got)  # libm's log and NumPy's
    for row, d in zip(p, got):
        logs = [math.log(x / (y if y > 0 else 1.0)) for x, y in zip(row, q) if x > 0]
        want = max((abs(v) if sides == 2 else v for v in logs), default=-math.inf)
        assert d == pytest.approx(want, rel=1e-12, abs=1e-12) if logs else d == -math.inf


def test_delta_disclosure_golden_one_and_two_sided():
    """Worked by hand: 112 records, group A = 55 × a + 1 × b, group B = 1 × a + 55 × b, so Q = (½, ½).
    One-sided, A's largest ratio is (55/56)/(1/2) = 110/56: ln = 0.675, within δ = 1.5. Two-sided,
    A's b is (1/56)/(1/2) = 1/28 of the table's share: |ln| = ln 28 = 3.33."""
    view = GroupView.from_labels([0] * 56 + [1] * 56, ["a"] * 55 + ["b"] + ["a"] + ["b"] * 55)
    model = REGISTRY.privacy_model("delta-disclosure")
    one = model.check_groups(view, model.params({"delta": 1.5, "sides": 1}))
    two = model.check_groups(view, model.params({"delta": 1.5}))
    assert one.holds and one.worst == pytest.approx(math.log(110 / 56))
    assert not two.holds and two.worst == pytest.approx(math.log(28)) and round(two.worst, 2) == 3.33
    assert "one-sided" in model.summary(model.params({"delta": 1.5, "sides": 1}), one)
    assert model.explain({"delta": 1.5, "sides": 1}, True, one.worst).startswith("One-sided δ-disclosure")
    assert model.display_title({"delta": 1.5, "sides": 1}) == "one-sided δ-disclosure"
    assert "one-sided" not in model.display_title({"delta": 1.5})
    assert model.explain({"delta": 1.5, "sides": 2}, False, two.worst).startswith("Two-sided δ-disclosure")


# ---------------------------------------------------------------------------------- EMD
def _lp_emd(p, q, ground):
    """The earth mover's distance by its definition: the cheapest flow from P to Q (a linear programme)."""
    from scipy.optimize import linprog

    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m : (i + 1) * m] = 1  # what leaves i
        a_eq[m + i, i::m] = 1  # what reaches i
    res = linprog(
        np.asarray(ground, dtype=float).ravel(), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs"
    )
    return res.fun


DISEASE = Hierarchy(
    [  # Li, Li and Venkatasubramanian's (2007) disease hierarchy, H = 3
        ["flu", "respiratory infection", "respiratory system", "*"],
        ["pneumonia", "respiratory infection", "respiratory system", "*"],
        ["bronchitis", "respiratory infection", "respiratory system", "*"],
        ["pulmonary edema", "vascular lung", "respiratory system", "*"],
        ["pulmonary embolism", "vascular lung", "respiratory system", "*"],
        ["gastric ulcer", "stomach", "digestive system", "*"],
        ["gastritis", "stomach", "digestive system", "*"],
        ["stomach cancer", "stomach", "digestive system", "*"],
        ["colitis", "colon", "digestive system", "*"],
        ["diarrhea", "colon", "digestive system", "*"],
        ["colon cancer", "colon", "digestive system", "*"],
    ],
    name="disease",
)
NINE = [
    "gastric ulcer",
    "gastritis",
    "stomach cancer",
    "colitis",
    "diarrhea",
    "colon cancer",
    "flu",
    "pneumonia",
    "bronchitis",
]


def _lca_level(h, a, b):
    return next(level for level in range(h.height + 1) if h.generalise(a, level) == h.generalise(b, level))


def test_golden_emd_of_li_et_al_salary_example():
    """The paper's salary example: nine salaries 3k … 11k, one record each, so Q is uniform; the
    class {3k, 4k, 5k} is at 0.375 and {6k, 8k, 11k} at 0.167 (ordered distance |i − j| / 8)."""
    salaries = [3, 4, 5, 6, 7, 8, 9, 10, 11]
    groups = [0 if s in (3, 4, 5) else 1 if s in (6, 8, 11) else 2 for s in salaries]
    model = REGISTRY.privacy_model("t-closeness")
    verdict = model.check_groups(GroupView.from_labels(groups, salaries), model.params({"t": 0.2}))  # emd default
    assert verdict.values[:2] == pytest.approx([0.375, 1 / 6])


def test_golden_hierarchical_emd_by_hand():
    """The paper's nine diseases, one record each (Q uniform), worked by hand with cost(N) =
    height(N)/H · min(pos_extra, neg_extra), H = 3. {gastric ulcer, gastritis, stomach cancer}: each
    +2/9, the six others −1/9; nothing moves inside a level-1 node; digestive system moves 3/9 at
    2/3, the root 3/9 at 1: 2/9 + 3/9 = 5/9. {gastric ulcer, stomach cancer, pneumonia}: stomach moves
    1/9 at 1/3, respiratory infection 2/9 at 1/3, digestive system 3/9 at 2/3, the root nothing:
    1/27 + 2/27 + 6/27 = 1/3. Equal distance gives 2/3 to both: the hierarchy sees that the first
    class reveals a stomach disease."""
    groups = [0 if d in ("gastric ulcer", "stomach cancer", "pneumonia") else 1 for d in NINE]
    model = REGISTRY.privacy_model("t-closeness")
    first = GroupView.from_labels([0, 0, 0, 1, 1, 1, 1, 1, 1], NINE, hierarchy=DISEASE)
    second = GroupView.from_labels(groups, NINE, hierarchy=DISEASE)
    params = model.params({"t": 0.5, "distance": "hierarchical"})
    assert model.check_groups(first, params).values[0] == pytest.approx(5 / 9)
    assert model.check_groups(second, params).values[0] == pytest.approx(1 / 3)
    equal = model.check_groups(first, model.params({"t": 0.5})).values[0]
    assert equal == pytest.approx(2 / 3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(NINE)), min_size=1, max_size=30))
def test_hierarchical_emd_is_the_cheapest_flow(recs):
    """Against the linear programme with ground distance level(LCA)/H, on small random tables."""
    groups, sens = zip(*recs)
    view = GroupView.from_labels(list(groups), list(sens), hierarchy=DISEASE)
    model = REGISTRY.privacy_model("t-closeness")
    values = model.check_groups(view, model.params({"t": 1, "distance": "hierarchical"})).values
    domain = list(view.values)
    ground = [[_lca_level(DISEASE, a, b) / DISEASE.height for b in domain] for a in domain]
    for i, p in enumerate(view.distributions()):
        assert values[i] == pytest.approx(_lp_emd(p, view.q(), ground), abs=1e-7)


@settings(max_examples=40, deadline=None)
@given(records, st.booleans())
def test_emd_is_the_cheapest_flow(recs, numeric):
    """Default EMD against the linear programme and, for numbers, SciPy's Wasserstein distance
    (scaled by the m − 1 steps of the ordered ground distance)."""
    from scipy.stats import wasserstein_distance

    groups, sens, view = _view(recs, numeric)
    model = REGISTRY.privacy_model("t-closeness")
    values = model.check_groups(view, model.params({"t": 1})).values
    m = len(view.values)
    ground = [[abs(i - j) / max(m - 1, 1) if numeric else float(i != j) for j in range(m)] for i in range(m)]
    for i, p in enumerate(view.distributions()):
        assert values[i] == pytest.approx(_lp_emd(p, view.q(), ground), abs=1e-7)
        if numeric and m > 1:
            ranks = np.arange(m)
            assert values[i] == pytest.approx(wasserstein_distance(ranks, ranks, p, view.q()) / (m - 1), abs=1e-9)


def test_ordered_emd_follows_the_declared_order():
    """A category's order is its hierarchy's row order: low < mid < high, whatever order the data
    shows them in. {low} against Q = (⅓, ⅓, ⅓) moves ⅓ one step and ⅓ two steps: (⅓ + ⅔)/2 = ½;
    {mid} moves ⅓ one step each way: ⅓."""
    levels = Hierarchy([["low", "*"], ["mid", "*"], ["high", "*"]], name="pay")
    view = GroupView.from_labels([0, 1, 2], ["high", "low", "mid"], hierarchy=levels)
    model = REGISTRY.privacy_model("t-closeness")
    values = model.check_groups(view, model.params({"t": 1, "distance": "ordered"})).values
    assert values == pytest.approx([0.5, 0.5, 1 / 3])  # high, low, mid
    with pytest.raises(BadInput, match="distance=ordered needs a hierarchy"):
        model.check_groups(
            GroupView.from_labels([0, 1, 2], ["high", "low", "mid"]), model.params({"t": 1, "distance": "ordered"})
        )
    with pytest.raises(BadInput, match="distance=hierarchical needs a hierarchy"):
        model.check_groups(
            GroupView.from_labels([0, 1, 2], ["high", "low", "mid"]), model.params({"t": 1, "distance": "hierarchical"})
        )


def test_t_closeness_defaults_to_emd():
    assert REGISTRY.privacy_model("t-closeness").params({}).distance == "emd"
    assert REGISTRY.privacy_model("delta-disclosure").params({}).sides == 2


# ---------------------------------------------------------------------------------- Grassberger
EULER = 0.5772156649015329


def test_grassberger_golden_by_hand():
    """Ĥ = G(N) − (1/N) Σ n_i G(n_i), G(1) = −γ − ln 2, G(2) = G(3) = 2 − γ − ln 2, G(4) = 8/3 − γ − ln 2
    (ψ(1) = −γ, ψ(½) = −γ − 2 ln 2, ψ(3/2) = 2 − γ − 2 ln 2, ψ(2) = 1 − γ). Counts (2, 1):
    G(3) − (2 G(2) + G(1))/3 = 2/3; (1, 1): G(2) − G(1) = 2, e² capped at its 2 values; (2): 0;
    (2, 2): G(4) − G(2) = 2/3."""
    model = REGISTRY.privacy_model("l-diversity")
    view = GroupView.from_labels(
        [0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 3], ["a", "a", "b", "a", "b", "a", "a", "a", "a", "b", "b"]
    )
    params = model.params({"l": 1, "variant": "entropy", "estimator": "grassberger"})
    expected = [math.exp(2 / 3), 2, 1, math.exp(2 / 3)]
    assert model.check_groups(view, params).values == pytest.approx(expected, rel=1e-12)
    shannon = model.check_groups(view, model.params({"l": 1, "variant": "entropy"})).values
    assert shannon == pytest.approx([math.exp(-(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3)), 2, 1, 2])


@settings(max_examples=40, deadline=None)
@given(records, st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_grassberger_matches_a_slow_oracle(recs, l):
    from scipy.special import digamma

    def g(n):
        return digamma(n) + 0.5 * (-1) ** n * (digamma((n + 1) / 2) - digamma(n / 2))

    groups, sens, view = _view(recs, False)
    model = REGISTRY.privacy_model("l-diversity")
    verdict = model.check_groups(view, model.params({"l": l, "variant": "entropy", "estimator": "grassberger"}))
    distinct = (
        model.check_groups(view, model.params({"l": l, "variant": "distinct"})) if float(l).is_integer() else None
    )
    per_group = _groups(groups, sens)
    for i, key in enumerate(_by_group(view, groups)):
        values = per_group[key]
        n = len(values)
        h = g(n) - sum(values.count(v) * g(values.count(v)) for v in set(values)) / n
        effective = min(math.exp(h), len(set(values)))
        assert verdict.values[i] == pytest.approx(effective, rel=1e-9)
        assert bool(verdict.ok[i]) == (effective >= l * (1 - 1e-12))
        assert bool(verdict.ok[i]) <= (len(set(values)) >= l)  # never weaker than distinct l-diversity
        if distinct is not None:
            assert bool(verdict.ok[i]) <= bool(distinct.ok[i])


def test_orientation_is_declared():
    assert REGISTRY.privacy_model("l-diversity").higher_is_safer
    assert not REGISTRY.privacy_model("t-closeness").higher_is_safer
    assert not REGISTRY.privacy_model("delta-disclosure").higher_is_safer


def test_models_need_a_sensitive_column_and_say_so(tmp_path, capsys):
    path = tmp_path / "r.csv"
    pd.DataFrame({"age": ["[20, 29]"] * 3}).to_csv(path, index=False)
    assert main(["verify", str(path), "--model", "l-diversity:l=2"]) == 2
    assert "sensitive" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- veil verify
def _written(tmp_path, dx):
    frame = pd.DataFrame({"age": ["[20, 29]"] * 4 + ["[30, 39]"] * 4, "sex": ["*"] * 8, "dx": dx})
    path = tmp_path / "release.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "model, passes",
    [
        ("l-diversity:l=2", True),
        ("l-diversity:l=3", False),
        ("l-diversity:l=2,variant=distinct", True),
        ("l-diversity:l=2,variant=entropy", True),
        ("l-diversity:l=2,variant=recursive,c=2", True),
        ("t-closeness:t=0.2", True),
        ("t-closeness:t=0.01", False),
        ("t-closeness:t=0.3,distance=emd", True),
        ("delta-disclosure:delta=0.5", True),
        ("delta-disclosure:delta=0.2", False),
    ],
)
def test_verify_checks_a_written_file(tmp_path, capsys, model, passes):
    # both groups hold flu, flu, hiv, cold / flu, hiv, hiv, cold: Q = (3/8, 3/8, 2/8)
    path = _written(tmp_path, ["flu", "flu", "hiv", "cold", "flu", "hiv", "hiv", "cold"])
    code = main(["verify", str(path), "--model", model, "--sensitive", "dx"])
    out = capsys.readouterr().out
    assert code == (0 if passes else 1), out
    assert out.startswith("OK" if passes else "FAILED")


def test_the_papers_studies_ask_for_js_and_one_sided_delta():
    """The trade-off paper's studies name the distance and the sides they were run with, so a change of
    default never moves their numbers."""
    from pathlib import Path

    from veil.engine import Study

    studies = Path(__file__).resolve().parents[2] / "resources" / "studies"
    for name, model, params in [
        ("paper001_t", "t-closeness", {"distance": "js"}),
        ("paper001_t_queries", "t-closeness", {"distance": "js"}),
        ("paper001_delta", "delta-disclosure", {"sides": 1}),
    ]:
        study = Study.load(studies / f"{name}.json")
        (call,) = study.models
        plugin = REGISTRY.privacy_model(call.name)
        bound = plugin.params(call.params)
        assert call.name == model and all(getattr(bound, k) == v for k, v in params.items()), name


# ---------------------------------------------------------------------------------- necessary conditions
NECESSARY = [
    "l-diversity:l=3,variant=recursive,c=2",
    "l-diversity:l=2.5,variant=entropy",
    "l-diversity:l=2,variant=probabilistic",
    "t-closeness:t=0.3",
    "beta-likeness:beta=1",
    "beta-likeness:beta=3,variant=enhanced",
    "delta-disclosure:delta=1",
    "delta-disclosure:delta=0.7,sides=1",
]


@pytest.mark.parametrize("call", NECESSARY)
@pytest.mark.parametrize("seed", range(6))
def test_a_models_necessary_condition_holds_wherever_it_passes_and_survives_added_records(call, seed):
    """``necessary_groups``, on random groups of random sensitive counts: every group the model passes
    meets it, and a group meeting it still meets it with any records added (monotone under
    suppression), so a search may prune on it."""
    from veil.engine import GroupView, PluginCall, bind_models, make_registry

    rng = np.random.default_rng(seed)
    model = bind_models(make_registry(), [PluginCall.parse(call)])
    model = getattr(model, "models", (model,))[0]
    n_values, n_groups = 5, 300
    q = rng.dirichlet(np.ones(n_values) * 2)
    counts = rng.integers(0, 4, (n_groups, n_values)) * (rng.random((n_groups, n_values)) < 0.6)
    counts[counts.sum(axis=1) == 0, 0] = 1
    more = counts + rng.integers(0, 3, counts.shape) * (rng.random(counts.shape) < 0.3)

    def view(c):
        g, s = np.nonzero(c)
        return GroupView.from_codes(g, s, q, tuple(f"v{i}" for i in range(n_values)), False, c[g, s])

    before, after = view(counts), view(more)
    necessary = model.plugin.necessary_groups(before, model.params)
    assert necessary is not None
    passing = model.check_groups(before).ok
    assert passing.any() and not necessary.all()  # both sides seen
    assert necessary[passing].all()
    assert model.plugin.necessary_groups(after, model.params)[necessary].all()


def test_the_compiled_held_mass_is_the_mass_of_the_values_held():
    """δ-disclosure's necessary condition reads each group's Q-mass of the values it holds: the compiled
    pass against a sum cell by cell, on counts laid out both ways."""
    kernel = sensitive_models._kernel("_held_mass")
    if kernel is None:
        pytest.skip("numba is not installed: the NumPy product is the only path")
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 3, (40, 7)).astype(float)
    q = rng.random(7)
    want = [sum(q[j] for j in range(7) if row[j] > 0) for row in counts]
    for layout in (counts, np.asfortranarray(counts)):
        assert np.allclose(kernel(layout, q), want, rtol=1e-15, atol=0)


def test_t_above_one_is_refused_as_a_typo_would_be():
    """Every t-closeness distance is at most 1 (JS at most ln 2): t = 1.5, a slip for 0.15, would
    constrain nothing, so it is refused (ARX's range is [0, 1] too); t = 1 stands."""
    model = REGISTRY.privacy_model("t-closeness")
    with pytest.raises(BadInput, match="≤ 1"):
        model.params({"t": 1.5})
    assert model.params({"t": 1}).t == 1


def test_a_group_at_the_tables_distribution_is_said_to_be_at_zero():
    """Rounding leaves a log-ratio of 2.2e-16 where a group's distribution is the table's: the message
    says 0."""
    view = GroupView.from_labels([0, 0, 0, 1, 1, 1], ["a", "b", "c"] * 2)
    model = REGISTRY.privacy_model("delta-disclosure")
    params = model.params({"delta": 1.5})
    assert model.summary(params, model.check_groups(view, params)).endswith(" is 0")
