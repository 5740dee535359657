"""δ-presence and k-map against a population table: the matching rule against a record-by-record
oracle, global recoding's optimum against an exhaustive search with the population generalised by
the same hierarchies, Mondrian's release judged again from scratch, hand-worked values, and the
refusals before a run (docs/reference.md#presence-map-and-risk-models)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BadInput,
    GroupView,
    Hierarchy,
    Node,
    PluginCall,
    Population,
    Role,
    RunSpec,
    Table,
    bind_models,
    execute,
    make_registry,
    value_label,
)

from test_global_recoding import oracle as plain_oracle, random_table

REGISTRY = make_registry()
QIS = ["town", "age", "job"]


def _bound(call):
    return bind_models(REGISTRY, [PluginCall.parse(call)])


# ---------------------------------------------------------------------------------- the matching rule
def _matches_one(label: str, value, hierarchy) -> bool:
    """Does a released label match one population value (the rule in words, case by case)?"""
    if label == "*":
        return True
    if hierarchy is not None:
        for level in range(hierarchy.height + 1):
            if label in [n.label for n in hierarchy.nodes(level)]:
                return value_label(value) in hierarchy.leaves_under(Node(level, label))
    if label.startswith("[") and "," in label:
        lo, hi = (float(x) for x in label[1:-1].split(","))
        return lo <= float(value) and (float(value) <= hi if label.endswith("]") else float(value) < hi)
    return value_label(value) == label


@pytest.mark.parametrize(
    "disjoint", [False, True, "with *"], ids=["overlapping labels", "one label per value", "one label per value, and *"]
)
@pytest.mark.parametrize("seed", range(8))
def test_population_matches_against_record_by_record(seed, disjoint):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 60))
    towns = [f"t{i}" for i in range(6)]
    frame = pd.DataFrame(
        {"town": rng.choice(towns, n), "age": rng.integers(18, 70, n), "sex": rng.choice(["F", "M"], n)}
    )
    hierarchy = Hierarchy.from_levels({t: [f"r{i // 2}", f"z{i // 4}", "*"] for i, t in enumerate(towns)}, name="town")
    population = Population(frame, hierarchies={"town": hierarchy})
    labels = {
        "town": towns + ["r0", "r1", "r2", "z0", "z1", "*", "nowhere"],
        "age": ["*", "[20, 30)", "[20, 30]", "[25, 40[", "33", "[18, 69]", "40"],
        "sex": ["F", "M", "*"],
    }
    if disjoint:  # as a full-domain generalisation releases them: each value under one label per column
        labels = {
            "town": ["r0", "r1", "r2", "nowhere"],
            "age": ["[18, 30)", "[30, 50)", "[50, 60]", "61"],
            "sex": ["F", "M"],
        }
        if disjoint == "with *":  # suppressed records, and a column at the top of its hierarchy
            labels = {c: v + ["*"] for c, v in labels.items()}
    # a released group holds records of the population, so each of its values matches some record
    labels = {
        c: [x for x in v if any(_matches_one(x, r, hierarchy if c == "town" else None) for r in frame[c])]
        for c, v in labels.items()
    }
    groups = pd.DataFrame({c: rng.choice(v, 25) for c, v in labels.items()})
    if disjoint == "with *":
        groups.iloc[:3] = "*"  # the suppressed records' group
    from veil.engine.data import population as module

    per_column = [(*population.value_masks(c, sorted(set(groups[c]))), None) for c in groups.columns]
    assert (module._disjoint_counts([(c, m, np.zeros(0, int)) for c, m, _ in per_column], 0) is not None) == bool(
        disjoint
    )
    expect = [
        sum(
            all(_matches_one(str(g[c]), r[c], hierarchy if c == "town" else None) for c in groups.columns)
            for _, r in frame.iterrows()
        )
        for _, g in groups.iterrows()
    ]
    assert population.matches(groups).tolist() == expect


def test_a_value_matching_no_one_asks_for_its_hierarchy():
    """A bare file's hierarchy label read without its hierarchy (or a population the data is not from)
    matches no one: said in one line, naming the value and what to give."""
    population = Population(pd.DataFrame({"age": [21, 25, 34], "sex": ["F", "M", "F"]}))
    with pytest.raises(BadInput) as info:
        population.matches(pd.DataFrame({"age": ["20-29"], "sex": ["F"]}))
    assert "'20-29' of column 'age' matches no record" in str(info.value) and "--hierarchy age=FILE" in str(info.value)
    hierarchy = Hierarchy.from_levels(
        {str(a): ["20-29" if a < 30 else "30-39", "*"] for a in range(20, 40)}, name="age"
    )
    assert population.with_hierarchies({"age": hierarchy}).matches(
        pd.DataFrame({"age": ["20-29"], "sex": ["F"]})
    ).tolist() == [1]


def test_delta_presence_and_k_map_by_hand():
    # population: ages 21, 25, 34, 47 (F, M, F, F); the data holds the records aged 21 and 34
    population = Population(pd.DataFrame({"age": [21, 25, 34, 47], "sex": ["F", "M", "F", "F"]}))
    released = pd.DataFrame({"age": ["[20, 40)", "*"], "sex": ["F", "*"]})
    counts = population.matches(released)
    assert counts.tolist() == [2, 4]  # [20, 40) and F: 21 and 34; * and *: everyone
    view = GroupView.from_labels([0, 0], None).with_population(counts[:1])
    verdict = _bound("delta-presence:dmin=0,dmax=0.9").check_groups(view)
    assert verdict.values.tolist() == [1.0] and not verdict.holds  # both matching people are in the data
    view = GroupView.from_labels([0, 0], None).with_population(counts[1:])
    assert _bound("delta-presence:dmin=0.5,dmax=0.5").check_groups(view).values.tolist() == [0.5]
    assert _bound("k-map:k=4").check_groups(view).holds and not _bound("k-map:k=5").check_groups(view).holds


def test_delta_presence_promises_no_monotonicity_and_why():
    loose, strict = _bound("delta-presence:dmin=0,dmax=0.5"), _bound("delta-presence:dmin=0.4,dmax=0.5")
    assert loose.plugin.monotonicity(loose.params) == strict.plugin.monotonicity(strict.params) == ""
    # two groups at δ = 1/2 each, merged with two more matching people: δ = 2/6, below dmin = 0.4
    parts = GroupView.from_labels([0, 1], None).with_population([2, 2])
    merged = GroupView.from_labels([0, 0], None).with_population([6])
    assert strict.check_groups(parts).holds and not strict.check_groups(merged).holds
    # without dmin: a kept group of 4 among 8 matches, and 2 suppressed records (written *, so matching
    # all 10 people) pass; the 6 records as one group do not (6 / 10 > 1/2)
    release = GroupView.from_labels([0] * 4 + [1] * 2, None).with_population([8, 10])
    whole = GroupView.from_labels([0] * 6, None).with_population([10])
    assert loose.check_groups(release).holds and not loose.check_groups(whole).holds


# ---------------------------------------------------------------------------------- global recoding
def _sample(seed: int, share: float = 0.45):
    """A random population (random_table's, age with a supplied hierarchy) and a random sample of it."""
    population = random_table(seed)
    population = population.with_hierarchy("age", Hierarchy.intervals(population.frame["age"], widths=[5, 10, 20]))
    rng = np.random.default_rng(100 + seed)
    rows = np.sort(rng.choice(population.n_rows, max(4, int(share * population.n_rows)), replace=False))
    data = population.take(rows).with_population(Population(population.frame))
    return population, data


def _population_oracle(population: Table, data: Table, call: str) -> dict:
    """Every transformation without suppression: whether each class passes, counting in the population
    the records whose generalised values equal the class's."""
    model = _bound(call)
    hier = {c: population.hierarchy(c) for c in QIS}
    out = {}
    for levels in itertools.product(*(range(hier[c].height + 1) for c in QIS)):
        mine = pd.DataFrame({c: hier[c].generalise_series(data.frame[c], l).to_numpy() for c, l in zip(QIS, levels)})
        theirs = pd.DataFrame(
            {c: hier[c].generalise_series(population.frame[c], l).to_numpy() for c, l in zip(QIS, levels)}
        )
        tally = theirs.value_counts()
        ids, keys = pd.factorize(pd.MultiIndex.from_frame(mine))
        counts = np.array([int(tally.get(k, 0)) for k in keys])
        view = GroupView.from_labels(ids, data.frame["dx"]).with_population(counts)
        out[levels] = bool(model.check_groups(view).holds)
    return out


CALLS = ["delta-presence:dmin=0,dmax=0.6", "delta-presence:dmin=0.2,dmax=0.8", "k-map:k=6"]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("call", CALLS)
def test_global_recoding_finds_the_optimum_the_population_allows(seed, call):
    population, data = _sample(seed)
    solutions = _population_oracle(population, data, call)
    losses = plain_oracle(data, ["k-anonymity:k=1"], 0.0)  # every node's loss with nothing suppressed
    best = min(
        ((losses[lv]["loss"], sum(lv), lv) for lv, ok in solutions.items() if ok),
        key=lambda x: (round(x[0], 9), x[1], x[2]),
        default=None,
    )
    spec = RunSpec(PluginCall("global-recoding", {"metric": "loss"}), models=[PluginCall.parse(call)])
    if best is None:
        with pytest.raises(BadInput):
            execute(REGISTRY, data, spec)
        return
    result = execute(REGISTRY, data, spec)
    gen = result.release.details["generalisation"]
    found = tuple(gen["levels"][c] for c in QIS)
    assert solutions[found] and gen["loss"] == pytest.approx(best[0], abs=1e-12)
    assert found == best[2]
    assert result.verdict.holds and result.release.population is not None


def _suppression_oracle(population: Table, data: Table, call: str, suppression: float) -> dict:
    """Every transformation with suppression: the failing classes written * (matching the whole
    population) must be few enough and, as one group, pass; every other class must pass."""
    model = _bound(call)
    hier = {c: population.hierarchy(c) for c in QIS}
    limit = int(np.floor(suppression * data.n_rows + 1e-9))
    out = {}
    for levels in itertools.product(*(range(hier[c].height + 1) for c in QIS)):
        mine = pd.DataFrame({c: hier[c].generalise_series(data.frame[c], l).to_numpy() for c, l in zip(QIS, levels)})
        theirs = pd.DataFrame(
            {c: hier[c].generalise_series(population.frame[c], l).to_numpy() for c, l in zip(QIS, levels)}
        )
        tally = theirs.value_counts()
        ids, keys = pd.factorize(pd.MultiIndex.from_frame(mine))
        counts = np.array([int(tally.get(k, 0)) for k in keys])
        ok = model.check_groups(GroupView.from_labels(ids, data.frame["dx"]).with_population(counts)).ok
        star = np.array([all(v == "*" for v in k) for k in keys])
        failing = ~ok[ids]
        written = failing | star[ids]
        solution = int(failing.sum()) <= limit
        if solution and written.any():
            group = GroupView.from_labels(np.zeros(int(written.sum()), int), data.frame["dx"][written])
            solution = bool(model.check_groups(group.with_population([population.n_rows])).holds)
        out[levels] = solution
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("call", CALLS)
def test_global_recoding_with_suppression_finds_a_solution_wherever_one_exists(seed, call):
    population, data = _sample(seed)
    solutions = _suppression_oracle(population, data, call, 0.2)
    spec = RunSpec(PluginCall("global-recoding", {"suppression": 0.2}), models=[PluginCall.parse(call)])
    if not any(solutions.values()):
        with pytest.raises(BadInput):
            execute(REGISTRY, data, spec)
        return
    result = execute(REGISTRY, data, spec)
    found = tuple(result.release.details["generalisation"]["levels"][c] for c in QIS)
    assert solutions[found] and result.verdict.holds


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["global-recoding:suppression=0.2", "mondrian"])
def test_each_release_passes_a_check_from_scratch(seed, method):
    """What the method releases satisfies δ-presence when every group's matches are counted record by
    record from the written values."""
    population, data = _sample(seed, 0.6)
    call = "delta-presence:dmin=0.1,dmax=0.9"
    spec = RunSpec(PluginCall.parse(method), models=[PluginCall.parse(call)])
    try:
        result = execute(REGISTRY, data, spec)
    except BadInput as exc:
        pytest.skip(f"no solution on this draw: {exc}")
    frame = result.release.frame
    groups = result.release.group_ids()
    hier = {c: population.attached_hierarchies().get(c) for c in QIS}
    for g in np.unique(groups):
        first = frame.iloc[int(np.flatnonzero(groups == g)[0])]
        matching = sum(
            all(_matches_one(str(first[c]), r[c], hier[c]) for c in QIS) for _, r in population.frame.iterrows()
        )
        delta = int((groups == g).sum()) / matching
        assert 0.1 - 1e-12 <= delta <= 0.9 + 1e-12, (g, delta)


# ---------------------------------------------------------------------------------- refusals
def _run(data, call, method="global-recoding"):
    return execute(REGISTRY, data, RunSpec(PluginCall.parse(method), models=[PluginCall.parse(call)]))


def test_refusals_before_the_run_are_one_line():
    population, data = _sample(0)
    cases = [
        (data, "delta-presence:dmin=0.6,dmax=0.2", "dmin = 0.6 is above dmax = 0.2"),
        (data, f"k-map:k={population.n_rows + 1}", "cannot hold on this data whatever the method does"),
        (data.with_population(None), "delta-presence:dmax=0.5", "needs the population the data was drawn from"),
        (data.with_population(Population(population.frame.iloc[:3])), "k-map:k=2", "smaller than the data"),
    ]
    for table, call, words in cases:
        with pytest.raises(BadInput) as info:
            _run(table, call)
        assert words in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_a_population_that_cannot_hold_the_data_is_named():
    population, data = _sample(1)
    other = population.frame.copy()
    row = data.frame.iloc[0]
    other = other[~((other["town"] == row["town"]) & (other["age"] == row["age"]) & (other["job"] == row["job"]))]
    other = pd.concat([other, other.iloc[:5]], ignore_index=True)  # as many records, without that combination
    with pytest.raises(BadInput, match="the data must be a sample of the population"):
        _run(data.with_population(Population(other)), "k-map:k=2")
    outside = population.frame.copy()
    outside.loc[0, "town"] = "atlantis"
    with pytest.raises(BadInput, match="'atlantis' of column 'town' is not in its hierarchy"):
        _run(data.with_population(Population(outside)), "k-map:k=2")


# ---------------------------------------------------------------------------------- journalist and marketer
@pytest.mark.parametrize("seed", range(3))
def test_journalist_and_marketer_risk_against_the_population(seed):
    population, data = _sample(seed, 0.5)
    spec = RunSpec(
        PluginCall("global-recoding", {"suppression": 0.1}),
        models=[PluginCall.parse("k-anonymity:k=2")],
        metrics=("journalist-risk-max", "marketer-risk", "prosecutor-risk-max"),
    )
    result = execute(REGISTRY, data, spec)
    frame, groups = result.release.frame, result.release.group_ids()
    hier = population.attached_hierarchies()
    people = []
    for g in groups:
        first = frame.iloc[int(np.flatnonzero(groups == g)[0])]
        people.append(
            sum(
                all(_matches_one(str(first[c]), r[c], hier.get(c)) for c in QIS) for _, r in population.frame.iterrows()
            )
        )
    people = np.array(people, dtype=float)
    assert result.metrics["journalist-risk-max"] == pytest.approx(1 / people.min())
    assert result.metrics["marketer-risk"] == pytest.approx(np.mean(1 / people))
    assert result.metrics["journalist-risk-max"] < result.metrics["prosecutor-risk-max"]
    # without a population the data set is its own population: the prosecutor's figures
    alone = execute(REGISTRY, data.with_population(None), spec)
    assert alone.metrics["journalist-risk-max"] == pytest.approx(alone.metrics["prosecutor-risk-max"])
    sizes = np.bincount(alone.release.group_ids())
    assert alone.metrics["marketer-risk"] == pytest.approx(len(sizes) / alone.release.n_rows)


def test_suppressed_records_match_the_whole_population_so_delta_presence_does_not_prune():
    """Ten people, eight in town a and two in b; the data holds four of a and both of b. Keeping town
    and suppressing b's two records: a has δ = 4/8, the suppressed pair (written *) 2/10. The whole
    table as one group has 6/10 > 1/2, so a search that took δ-presence as monotone would stop at
    the top and find nothing."""
    people = pd.DataFrame({"town": ["a"] * 8 + ["b"] * 2})
    data = Table.from_frame(
        people.iloc[[0, 1, 2, 3, 8, 9]].reset_index(drop=True), roles={"town": Role.QUASI_IDENTIFIER}
    )
    data = data.with_hierarchy("town", Hierarchy.from_levels({"a": ["*"], "b": ["*"]})).with_population(
        Population(people)
    )
    spec = RunSpec(
        PluginCall("global-recoding", {"suppression": 0.4}), models=[PluginCall.parse("delta-presence:dmin=0,dmax=0.5")]
    )
    result = execute(REGISTRY, data, spec)
    gen = result.release.details["generalisation"]
    assert gen["levels"] == {"town": 0} and gen["suppressed_records"] == 2
    assert result.release.frame["town"].tolist() == ["a"] * 4 + ["*"] * 2


@pytest.mark.parametrize("seed", range(12))
def test_the_data_short_in_the_population_is_found_as_by_counting_labels(seed):
    """check_covers' shortfall (labelled once per distinct value, numbered across both tables) against
    counting each record's labels: the same verdict, and the combination named is one the data holds
    more often than the population, as often as the most frequent such."""
    from veil.engine.data.population import _shortfall

    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {
            "age": rng.choice([20, 20.0, 31, 45], 80),
            "town": rng.choice(["a", "b", "c"], 80),
            "sex": rng.choice(["F", "M"], 80),
        }
    )
    data = people.sample(30, random_state=seed).reset_index(drop=True)
    if seed % 2:  # records the population does not hold as often
        data = pd.concat([data, data.iloc[: int(rng.integers(1, 4))]], ignore_index=True)
    count = lambda f: f.apply(lambda s: s.map(value_label)).value_counts()
    mine, theirs = count(data), count(people)
    gap = mine.sub(theirs.reindex(mine.index, fill_value=0))
    expected = gap[gap > 0]
    found = _shortfall(data, people)
    assert (found is None) == expected.empty
    if found is not None:
        labels, have, held = found
        assert tuple(labels) in expected.index
        assert have == mine[tuple(labels)] == max(mine[k] for k in expected.index)
        assert held == theirs.get(tuple(labels), 0)
