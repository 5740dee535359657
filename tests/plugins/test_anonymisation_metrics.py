"""Ploss, Uloss, query error, NCP and group-size metrics against plain, slow reference computations."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BUCKETISED_TABLE,
    GENERALISED_TABLE,
    SUPPRESSED,
    Context,
    Hierarchy,
    Interval,
    NodeValue,
    Release,
    Table,
    make_registry,
)
from veil.plugins.anonymisation._view import Anonymised
from veil.plugins.anonymisation.metrics import (
    answer_query,
    js_divergence,
    large_populations,
    random_queries,
)

Q_ADULT = [
    0.0314,
    0.1331,
    0.1063,
    0.1196,
    0.1323,
    0.1329,
    0.0452,
    0.0657,
    0.1225,
    0.0327,
    0.0512,
    0.0052,
    0.0216,
    0.0003,
]


def js_ref(p, q):
    def kl(a, b):
        return sum(x * math.log(x / y) for x, y in zip(a, b) if x > 0)

    m = [(x + y) / 2 for x, y in zip(p, q)]
    return (kl(p, m) + kl(q, m)) / 2


def test_js_golden_values_of_the_paper():
    q = np.array(Q_ADULT) / sum(Q_ADULT)
    most, least = np.eye(14)[1], np.eye(14)[13]
    assert js_divergence(most, q) == pytest.approx(0.488, abs=5e-4)
    assert js_divergence(least, q) == pytest.approx(0.692, abs=5e-4)
    assert js_divergence(q, q) == pytest.approx(0.0, abs=1e-12)


def _random_case(seed, n=40):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 40, n),
            "city": rng.choice(["A1", "A2", "B1", "B2", "B3"], n),
            "dx": rng.choice(["flu", "hiv", "cold"], n, p=[0.5, 0.2, 0.3]),
        }
    )
    city = Hierarchy(
        [["A1", "A", "*"], ["A2", "A", "*"], ["B1", "B", "*"], ["B2", "B", "*"], ["B3", "B", "*"]], name="city"
    )
    table = (
        Table.from_frame(frame)
        .with_roles({"age": "quasi-identifier", "city": "quasi-identifier", "dx": "sensitive"})
        .with_hierarchy("city", city)
    )
    groups = rng.integers(0, 6, n)
    groups = pd.factorize(groups)[0]
    G = groups.max() + 1
    values = {"age": [], "city": []}
    for g in range(G):
        members = frame[groups == g]
        values["age"].append(Interval(int(members.age.min()), int(members.age.max())))
        cities = set(members.city)
        if len(cities) == 1:
            values["city"].append(NodeValue(cities.pop(), ()))
        elif cities <= {"A1", "A2"}:
            values["city"].append(NodeValue("A", ("A1", "A2")))
        elif cities <= {"B1", "B2", "B3"}:
            values["city"].append(NodeValue("B", ("B1", "B2", "B3")))
        else:
            values["city"].append(SUPPRESSED)
    gv = pd.DataFrame(values)
    out = pd.DataFrame(
        {"age": [str(gv.age[g]) for g in groups], "city": [str(gv.city[g]) for g in groups], "dx": frame.dx}
    )
    gv["city"] = [
        v if not (isinstance(v, NodeValue) and not v.leaves) else NodeValue(v.label, (v.label,)) for v in gv.city
    ]
    release = Release(GENERALISED_TABLE, out, ("age", "city"), sensitive=("dx",), groups=groups, group_values=gv)
    return table, release, frame, groups, gv


def _region_sets(table, gv, g):
    ages = set(table.frame.age.unique())
    leaves_age = {str(a) for a in ages}
    age = gv.age[g]
    region_age = {str(a) for a in ages if age.lo <= a <= age.hi}
    city = gv.city[g]
    region_city = set(("A1", "A2", "B1", "B2", "B3")) if city is SUPPRESSED else set(city.leaves)
    return {"age": region_age, "city": region_city}, leaves_age


CITY_NODES = {"A": {"A1", "A2"}, "B": {"B1", "B2", "B3"}}


def _populations_ref(table, minsup):
    frame = table.frame
    ages = sorted(frame.age.unique())
    age_nodes = [{str(a)} for a in ages]  # generated interval hierarchy: leaves, then intervals
    h = table.hierarchy("age")
    for level in range(1, h.height):
        age_nodes += [set(h.leaves_under(n)) for n in h.nodes(level)]
    city_nodes = [{c} for c in ("A1", "A2", "B1", "B2", "B3")] + list(CITY_NODES.values())
    options = {"age": [None] + age_nodes, "city": [None] + city_nodes}
    out = []
    for a, c in itertools.product(options["age"], options["city"]):
        if a is None and c is None:
            continue
        inside = [(a is None or str(r.age) in a) and (c is None or r.city in c) for r in frame.itertuples()]
        if sum(inside) >= minsup:
            out.append(((a, c), inside))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_uloss_matches_a_plain_computation(seed):
    table, release, frame, groups, gv = _random_case(seed)
    reg = make_registry()
    got = reg.metric("uloss").compute(table, release, reg.metric("uloss").params({"min_support": 0.1}), Context(0))
    values = sorted(frame.dx.unique())
    pops = _populations_ref(table, math.ceil(0.1 * len(frame)))
    total = 0.0
    for (a, c), inside in pops:
        true = [sum(1 for i, r in enumerate(frame.itertuples()) if inside[i] and r.dx == v) for v in values]
        est = [0.0] * len(values)
        for i, r in enumerate(frame.itertuples()):
            region, _ = _region_sets(table, gv, groups[i])
            w = 1.0
            if a is not None:
                w *= len(region["age"] & a) / len(region["age"])
            if c is not None:
                w *= len(region["city"] & c) / len(region["city"])
            est[values.index(r.dx)] += w
        total += js_ref([x / sum(true) for x in true], [x / sum(est) for x in est])
    assert got == pytest.approx(total / len(pops), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_uloss_of_a_bucketised_release_matches_a_plain_computation(seed):
    """Bucketised (Anatomy): quasi-identifiers exact, each record's sensitive value its bucket's
    distribution; the estimate of a population sums those distributions over its records."""
    table, _, frame, groups, _ = _random_case(seed)
    rel = Release(
        BUCKETISED_TABLE,
        frame[["age", "city"]].assign(group=groups),
        ("group",),
        sensitive=("dx",),
        groups=groups,
        parts={"sensitive": pd.DataFrame({"group": groups, "dx": frame.dx})},
    )
    reg = make_registry()
    got = reg.metric("uloss").compute(table, rel, reg.metric("uloss").params({"min_support": 0.1}), Context(0))
    values = sorted(frame.dx.unique())
    bucket = {g: [list(frame.dx[groups == g]).count(v) / (groups == g).sum() for v in values] for g in set(groups)}
    total, pops = 0.0, _populations_ref(table, math.ceil(0.1 * len(frame)))
    for _, inside in pops:
        true = [sum(1 for i, r in enumerate(frame.itertuples()) if inside[i] and r.dx == v) for v in values]
        est = [sum(bucket[groups[i]][j] for i in range(len(frame)) if inside[i]) for j in range(len(values))]
        total += js_ref([x / sum(true) for x in true], [x / sum(est) for x in est])
    assert got == pytest.approx(total / len(pops), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_ploss_ncp_and_group_sizes_match_plain_computations(seed):
    table, release, frame, groups, gv = _random_case(seed)
    reg = make_registry()
    run = lambda name: reg.metric(name).compute(table, release, reg.metric(name).params({}), Context(0))  # noqa: E731
    values = sorted(frame.dx.unique())
    q = [float((frame.dx == v).mean()) for v in values]
    worst = max(js_ref([float((frame.dx[groups == g] == v).mean()) for v in values], q) for g in set(groups))
    assert run("ploss") == pytest.approx(worst, rel=1e-9)
    span = frame.age.max() - frame.age.min()
    ncp = 0.0
    for i in range(len(frame)):
        region, _ = _region_sets(table, gv, groups[i])
        ncp += (gv.age[groups[i]].hi - gv.age[groups[i]].lo) / span
        ncp += len(region["city"]) / 5 if len(region["city"]) > 1 else 0.0
    assert run("ncp") == pytest.approx(ncp / (2 * len(frame)), rel=1e-9)
    sizes = np.bincount(groups)
    assert run("discernibility") == float((sizes**2).sum())
    assert run("average-class-size") == pytest.approx(len(frame) / len(sizes))


VIEW_METRICS = ("ncp", "loss", "entropy", "precision", "height", "uloss", "query-error")


@pytest.mark.parametrize("seed", range(4))
def test_metrics_sharing_one_measurement_agree_with_each_alone(seed):
    """The metrics of one measurement share their view of a release (ctx.shared): every value is the
    one the metric gives alone, and two releases of the same table measured with one shared dict
    (a view per table and release, never the other's) each get their own values."""
    table, release, *_ = _random_case(seed)
    other_table, other, *_ = _random_case(seed + 10)
    table_b = table.with_roles({"dx": "sensitive"})  # an equal table, another object
    reg = make_registry()

    def alone(name, t, r):
        return reg.metric(name).compute(t, r, reg.metric(name).params({}), Context(0))

    ctx = Context(0)
    ctx.shared = {}
    for t, r in ((table, release), (other_table, other), (table_b, release), (table, release)):
        for name in VIEW_METRICS:
            got = reg.metric(name).compute(t, r, reg.metric(name).params({}), ctx.child(0, 1))
            assert got == pytest.approx(alone(name, t, r), rel=1e-12, nan_ok=True), (name, seed)
    assert len(ctx.shared[next(iter(ctx.shared))]) == 3 * 2  # three (table, release) pairs, with and without dx
    assert alone("ncp", table, release) != pytest.approx(alone("ncp", other_table, other))


def test_one_measurement_builds_each_view_once(monkeypatch):
    """``measure`` gives its metrics one shared dict: the five generalisation metrics build one view
    of the release between them (uloss and query-error one more, with the sensitive column), and a
    second measurement starts afresh."""
    from veil.engine import PluginCall, RunSpec
    from veil.engine.run.runs import measure

    table, release, *_ = _random_case(3)
    built = []
    real = Anonymised.__init__
    monkeypatch.setattr(Anonymised, "__init__", lambda self, *a, **k: built.append(a[2]) or real(self, *a, **k))
    spec = RunSpec(PluginCall.parse("mondrian"), PluginCall.parse("k-anonymity:k=2"), 0, VIEW_METRICS)
    values = measure(make_registry(), spec, table, release, Context(0))
    assert sorted(built, key=str) == [None, "dx"]
    assert all(not math.isnan(values[m]) for m in VIEW_METRICS)
    measure(make_registry(), spec, table, release, Context(0))
    assert len(built) == 4


@pytest.mark.parametrize("seed, sel_of", [(0, "attribute"), (1, "attribute"), (2, "query"), (3, "query")])
def test_query_answers_match_a_plain_computation(seed, sel_of):
    table, release, frame, groups, gv = _random_case(seed)
    reg = make_registry()
    params = reg.metric("query-error").params({"qd": 2, "sel": 0.3, "queries": 30, "seed": seed, "sel_of": sel_of})
    view = Anonymised(table, release, "dx")
    regions, _, kind = view.unit_regions()
    unit_sa = view.unit_sensitive(kind)
    leaves = {c: list(view.leaves[c]) for c in view.qis}
    errors = []
    for selections, s in random_queries(view, params):
        act, est = answer_query(view, regions, unit_sa, selections, s)
        chosen = {c: {leaves[c][j] for j in np.flatnonzero(m)} for c, m in selections.items()}
        values = {view.sa_values[j] for j in np.atleast_1d(s)}
        act_ref = sum(
            1
            for r in frame.itertuples()
            if r.dx in values and all((str(r.age) if c == "age" else r.city) in chosen[c] for c in chosen)
        )
        est_ref = 0.0
        for i, r in enumerate(frame.itertuples()):
            if r.dx not in values:
                continue
            region, _ = _region_sets(table, gv, groups[i])
            w = 1.0
            for c in chosen:
                w *= len(region[c] & chosen[c]) / len(region[c])
            est_ref += w
        assert act == act_ref and est == pytest.approx(est_ref, rel=1e-9, abs=1e-12)
        if act:
            errors.append(abs(est - act) / act)
    got = reg.metric("query-error").compute(table, release, params, Context(0))
    assert got == pytest.approx(np.mean(errors) * 100, rel=1e-9)


def test_large_populations_hold_one_node_per_column_and_enough_records():
    table, release, frame, *_ = _random_case(1, n=60)
    view = Anonymised(table, release, "dx")
    pops = large_populations(view, 0.2, 10_000, Context(0))
    ref = _populations_ref(table, math.ceil(0.2 * len(frame)))
    assert len(pops) == len(ref) and all(len({c for c, _ in p}) == len(p) for p in pops)


def test_metrics_are_nan_where_they_do_not_apply():
    reg = make_registry()
    table, release, *_ = _random_case(0)
    no_sensitive = table.with_roles({"dx": "insensitive"})
    for name in ("ploss", "uloss", "query-error"):
        assert math.isnan(reg.metric(name).compute(no_sensitive, release, reg.metric(name).params({}), Context(0)))
    assert not math.isnan(reg.metric("ncp").compute(no_sensitive, release, reg.metric("ncp").params({}), Context(0)))


@pytest.mark.dataset
def test_uloss_of_the_trivially_anonymised_adult_table_is_the_papers(datasets_dir):
    """docs/reference.md#anonymising-tables: with every quasi-identifier suppressed, Uloss ≈ 0.05 on Adult (45,222
    records)."""
    names = (
        "age workclass fnlwgt education education-num marital-status occupation relationship race sex "
        "capital-gain capital-loss hours-per-week native-country income"
    ).split()
    read = dict(header=None, names=names, skipinitialspace=True)
    frame = pd.concat(
        [
            pd.read_csv(datasets_dir / "adult/adult.data", **read),
            pd.read_csv(datasets_dir / "adult/adult.test", skiprows=1, **read),
        ]
    )
    qis = ["age", "workclass", "education", "marital-status", "race", "sex"]
    frame = frame.replace("?", np.nan).dropna()[qis + ["occupation"]].reset_index(drop=True)
    assert len(frame) == 45_222
    table = Table.from_frame(frame).with_roles({**{q: "quasi-identifier" for q in qis}, "occupation": "sensitive"})
    for q in qis:
        table = table.with_hierarchy(
            q, Hierarchy.from_arx_csv(datasets_dir / f"adult_arx/adult_hierarchy_{q}.csv", name=q)
        )
    out = pd.DataFrame({**{q: ["*"] * len(frame) for q in qis}, "occupation": frame.occupation})
    release = Release(
        GENERALISED_TABLE,
        out,
        tuple(qis),
        sensitive=("occupation",),
        groups=np.zeros(len(frame), dtype=np.int64),
        group_values=pd.DataFrame({q: [SUPPRESSED] for q in qis}),
    )
    reg = make_registry()
    uloss = reg.metric("uloss").compute(table, release, reg.metric("uloss").params({}), Context(0))
    assert uloss == pytest.approx(0.05, abs=0.004)
    assert reg.metric("ploss").compute(table, release, reg.metric("ploss").params({}), Context(0)) == 0.0


def _survey_like(n=6000, seed=0):
    """A table shaped like a survey of small ordinal answers (statsmodels' `fair`): eight numeric
    quasi-identifiers of 4 to 7 values each, whose generated hierarchies make hundreds of thousands of
    large populations at the default minSup."""
    rng = np.random.default_rng(seed)
    cols = {f"q{j}": rng.integers(0, 4 + j % 4, n) for j in range(10)}
    frame = pd.DataFrame({**cols, "dx": rng.integers(0, 40, n)})
    return Table.from_frame(frame).with_roles({**{c: "quasi-identifier" for c in cols}, "dx": "sensitive"})


def test_the_population_sample_is_uniform_over_the_large_populations():
    """The Metropolis chain draws every large population about equally often (and only large ones,
    with their records), and Uloss from a large sample approaches the exhaustive one."""
    from collections import Counter

    from veil.plugins.anonymisation.metrics import _Populations

    table, release, frame, *_ = _random_case(2, n=60)
    view = Anonymised(table, release, "dx")
    walker = _Populations(view, 0.1, Context(0))
    every = {path: rows for path, rows, _ in walker.walk()}
    drawn = Counter()
    for path, rows in walker.sample(40 * len(every), seed=3):
        assert np.array_equal(rows, every[path])  # KeyError: not a large population
        drawn[path] += 1
    assert set(drawn) == set(every)
    expected = 40
    assert max(abs(c - expected) for c in drawn.values()) < 0.6 * expected
    chi2 = sum((c - expected) ** 2 / expected for c in drawn.values())
    assert chi2 < 3 * len(every)  # a chain's draws are correlated: looser than independent draws' χ²
    reg = make_registry()
    metric = reg.metric("uloss")
    full = metric.compute(table, release, metric.params({"min_support": 0.1}), Context(0))
    sampled = metric.compute(
        table, release, metric.params({"min_support": 0.1, "max_populations": 1, "sample": 20_000}), Context(0)
    )
    assert sampled == pytest.approx(full, rel=0.05)


def test_uloss_and_query_error_stay_small_on_a_survey_with_many_populations():
    """Their memory follows the data: hundreds of thousands of large populations are walked or sampled,
    never held (a materialising version needed tens of GB on such a table)."""
    import tracemalloc

    from veil.engine import PluginCall, RunSpec, execute

    table = _survey_like()
    reg = make_registry()
    tracemalloc.start()
    try:
        result = execute(
            reg,
            table,
            RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 5}), metrics=("uloss", "query-error")),
            Context(0),
            release_sensitive=("dx",),
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 300 * 2**20
    assert 0 < result.metrics["uloss"] < math.log(2) and result.metrics["query-error"] > 0
    sample = result.samples["uloss"]
    assert sample == {"rows": 2000, "of": 20_000, "more_than": True, "seed": 0, "unit": "large populations"}
