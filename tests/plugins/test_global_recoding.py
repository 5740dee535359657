"""Global recoding (docs/anonymisation.md#global-recoding): the search's result is the optimum an
exhaustive search finds, on random small tables and hierarchies, for several models, metrics and
suppression limits; monotonicity as the search relies on it; suppression as written and verified;
no solution; bad input.

The oracle shares nothing with the method but the privacy models' own ``check_groups``: for every
transformation it regroups the records from their generalised labels with pandas, suppresses the
failing groups, judges the groups as they would be written, and computes each metric from its
definition per record."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from veil.engine.kernels import grouping
from veil.engine import (
    SUPPRESSED,
    BadInput,
    GroupView,
    Hierarchy,
    Kind,
    Node,
    PluginCall,
    Role,
    RunSpec,
    Table,
    bind_models,
    execute,
    make_registry,
)

REGISTRY = make_registry()
METRICS = [
    "loss",
    "entropy",
    "precision",
    "height",
    "discernibility",
    "discernibility:monotonic=false",
    "average-class-size",
]
MODELS = [
    ["k-anonymity:k=3"],
    ["k-anonymity:k=2", "t-closeness:t=0.25"],
    ["l-diversity:l=2,variant=distinct"],
    ["l-diversity:l=1.6,variant=probabilistic"],
    ["l-diversity:l=2,variant=recursive,c=2"],
    ["l-diversity:l=1.5,variant=entropy", "k-anonymity:k=2"],
    ["t-closeness:t=0.2,distance=emd"],
    ["t-closeness:t=0.2,distance=js"],
    ["delta-disclosure:delta=0.8"],
    ["delta-disclosure:delta=0.8,sides=1"],
    ["beta-likeness:beta=1.5"],
    ["beta-likeness:beta=2,variant=enhanced", "k-anonymity:k=2"],
]


# ---------------------------------------------------------------------------------- random data
def _tree(rng, leaves: list[str], levels: int, star_below_root: bool) -> Hierarchy:
    """A random hierarchy: each level groups the nodes of the one below into fewer nodes."""
    names = {leaf: [] for leaf in leaves}
    current = {leaf: leaf for leaf in leaves}
    for level in range(1, levels):
        distinct = sorted(set(current.values()))
        groups = max(1, len(distinct) // int(rng.integers(2, 4)))
        parent = {node: f"L{level}g{int(rng.integers(0, groups))}" for node in distinct}
        current = {leaf: parent[current[leaf]] for leaf in leaves}
        for leaf in leaves:
            names[leaf].append(current[leaf])
    if star_below_root:  # a level where everything is already '*' (as some ARX files have)
        for leaf in leaves:
            names[leaf].append("*")
    for leaf in leaves:
        names[leaf].append("*")
    return Hierarchy.from_levels(names)


def random_table(seed: int) -> Table:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(24, 48))
    towns = [f"t{i}" for i in range(int(rng.integers(4, 8)))]
    jobs = [f"j{i}" for i in range(int(rng.integers(3, 6)))]
    frame = pd.DataFrame(
        {
            "town": rng.choice(towns, n, p=rng.dirichlet(np.ones(len(towns)) * 2)),
            "age": rng.integers(20, 60, n),
            "job": rng.choice(jobs, n),
            "dx": rng.choice(["flu", "cold", "hiv", "cancer"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )
    table = Table.from_frame(
        frame,
        roles={
            "town": Role.QUASI_IDENTIFIER,
            "age": Role.QUASI_IDENTIFIER,
            "job": Role.QUASI_IDENTIFIER,
            "dx": Role.SENSITIVE,
        },
    )
    table = table.with_hierarchy("town", _tree(rng, towns, int(rng.integers(2, 4)), bool(rng.integers(0, 2))))
    table = table.with_hierarchy("job", _tree(rng, jobs, 2, seed % 3 == 0))
    if seed % 2:  # a numeric column with a supplied hierarchy; otherwise Veil generates one
        table = table.with_hierarchy("age", Hierarchy.intervals(frame["age"], widths=[5, 10, 20]))
    return table


# ---------------------------------------------------------------------------------- the oracle
def oracle(table: Table, models: list[str], suppression: float) -> dict:
    """Every transformation's verdict and metrics, from the definitions."""
    model = bind_models(REGISTRY, [PluginCall.parse(m) for m in models])
    qis = ["town", "age", "job"]
    hier = {c: table.hierarchy(c) for c in qis}
    frame = table.frame
    n, limit = len(frame), math.floor(suppression * len(frame) + 1e-9)
    sens = frame["dx"]
    # a population model (k-map, δ-presence) judges the suppressed records as one group; any other
    # model leaves them out: a suppressed record matches any value (docs/reference.md#blanks)
    population_model = any(m.plugin.reads_population for m in getattr(model, "models", (model,)))
    # per column and level: each record's label, its node's leaves, the records sharing its label
    label, star_code, under, covered = {}, {}, {}, {}
    for c in qis:
        h = hier[c]
        for level in range(h.height + 1):
            text = h.generalise_series(frame[c], level)
            codes, uniques = pd.factorize(text)
            label[c, level] = codes  # equal codes: equal text
            star_code[c, level] = list(uniques).index("*") if "*" in list(uniques) else len(uniques)
            under[c, level] = text.map(lambda x: h.leaf_count(Node(level, x))).to_numpy()
            covered[c, level] = text.map(text.value_counts()).to_numpy()
    own = {c: frame[c].map(frame[c].value_counts()).to_numpy() for c in qis}
    # a model judging the release as a whole that suppressing the smallest classes meets
    # (docs/reference.md#suppressing-the-riskiest-groups): judged apart, under the limit's rule
    bound = list(getattr(model, "models", (model,)))
    smallest = [m for m in bound if limit > 0 and m.plugin.suppresses_smallest]
    others = [m for m in bound if m not in smallest]
    # each record's node per column and level, numbered as the hierarchy lists its nodes
    node = {}
    for c in qis:
        for level in range(hier[c].height + 1):
            index = {x.label: i for i, x in enumerate(hier[c].nodes(level))}
            node[c, level] = hier[c].generalise_series(frame[c], level).map(index).to_numpy()
    out = {}
    for levels in itertools.product(*(range(hier[c].height + 1) for c in qis)):
        labels = np.column_stack([label[c, l] for c, l in zip(qis, levels)])
        classes = _ids(labels)
        ok = np.ones(classes.max() + 1, dtype=bool)
        for m in others:
            ok &= m.check_groups(GroupView.from_labels(classes, sens)).ok
        if smallest:  # the class every label of which is '*' is neither suppressed nor judged
            nodes = np.column_stack([node[c, l] for c, l in zip(qis, levels)])
            top = np.array([star_code[c, l] for c, l in zip(qis, levels)])
            star = np.zeros_like(ok)
            star[classes[(labels == top).all(axis=1)]] = True
            ok = _suppress_smallest(classes, nodes, ok, star, sens, smallest, limit)
        failing = ~ok[classes]
        if failing.sum() > limit:
            out[levels] = None
            continue
        if failing.any() and population_model:  # written '*' everywhere: one group every population record matches
            if not model.check_groups(GroupView.from_labels(np.zeros(int(failing.sum()), int), sens[failing])).holds:
                out[levels] = None
                continue
        stars = np.array([star_code[c, l] for c, l in zip(qis, levels)])
        written = labels.copy()
        written[failing] = stars  # every quasi-identifier written '*': they match any value, no group
        groups = _ids(written)
        star = (written == stars).all(axis=1)  # suppressed, or every label '*': the file shows '*'
        loss = entropy = precision = 0.0
        for c, level in zip(qis, levels):
            h = hier[c]
            leaves = len(h.leaves)
            region = np.where(star, leaves, under[c, level])
            loss += float(((region - 1) / (leaves - 1)).sum()) if leaves > 1 else 0.0
            entropy += float(-np.log2(own[c] / np.where(star, n, covered[c, level])).sum())
            precision += float(np.where(star, 1.0, level / h.height if h.height else 0.0).sum())
        sizes = np.bincount(groups)
        starred = np.unique(groups[star])
        kept = np.setdiff1d(np.arange(len(sizes)), starred)
        out[levels] = {
            "loss": loss / (n * len(qis)),
            "entropy": entropy,
            "precision": precision / (n * len(qis)),
            "height": float(sum(levels)),
            "discernibility": float((sizes.astype(float) ** 2).sum()),
            "discernibility:monotonic=false": float((sizes[kept].astype(float) ** 2).sum() + n * star.sum()),
            "average-class-size": n / len(sizes),
            "suppressed": int(failing.sum()),
        }
    return out


def _suppress_smallest(classes, nodes, ok, star, sens, models, limit) -> np.ndarray:
    """The classes kept under the rule, by exhaustion: of the classes passing the other models, the
    fewest smallest (ties by their nodes, column by column) whose suppression makes every model
    hold on the rest, within the limit; none kept when no such number fits."""
    sizes = np.bincount(classes)
    first = {}
    for i, c in enumerate(classes):
        first.setdefault(c, i)
    order = sorted(np.flatnonzero(ok & ~star), key=lambda c: (sizes[c], tuple(nodes[first[c]])))
    budget = limit - int(sizes[~ok].sum())
    if not order and budget >= 0:  # nothing but the class written '*': judged as it stands
        rows = ok[classes]
        held = rows.any() and all(
            m.check_groups(GroupView.from_labels(classes[rows], sens[rows])).holds for m in models
        )
        return ok if held else np.zeros_like(ok)
    for count in range(len(order) + 1):
        if budget < 0 or sum(sizes[c] for c in order[:count]) > budget:
            break
        keep = ok & ~star
        keep[order[:count]] = False
        rows = keep[classes]  # the classes kept and judged
        if rows.any() and all(m.check_groups(GroupView.from_labels(classes[rows], sens[rows])).holds for m in models):
            return keep | (ok & star)
    return np.zeros_like(ok)


def _ids(rows: np.ndarray) -> np.ndarray:
    """Group ids of equal rows, numbered in order of first appearance (as GroupView.from_labels numbers them)."""
    return pd.factorize(np.unique(rows, axis=0, return_inverse=True)[1].ravel())[0]


def optimum(results: dict, metric: str):
    """(value, levels) of the best solution: least metric, then the lower node, then smaller levels."""
    best = None
    for levels, r in results.items():
        if r is None:
            continue
        key = (r[metric], sum(levels), levels)
        if (
            best is None
            or r[metric] < best[0] - 1e-9 * max(1, abs(best[0]))
            or (abs(r[metric] - best[0]) <= 1e-9 * max(1, abs(best[0])) and key[1:] < best[1:])
        ):
            best = key
    return best


def search(table, models, suppression, metric, levels="", **extra):
    name, _, args = metric.partition(":")
    params = {"suppression": suppression, "metric": name, **extra}
    if args:
        params["monotonic"] = False
    if levels:
        params["levels"] = levels
    spec = RunSpec(
        PluginCall("global-recoding", params), models=[PluginCall.parse(m) for m in models], metrics=(metric,)
    )
    return execute(REGISTRY, table, spec)


# ---------------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("models", MODELS, ids=lambda m: "+".join(m))
@pytest.mark.parametrize("suppression", [0.0, 0.15])
def test_search_finds_the_exhaustive_optimum(seed, models, suppression):
    table = random_table(seed)
    results = oracle(table, models, suppression)
    for metric in METRICS:
        best = optimum(results, metric)
        if best is None:
            with pytest.raises(BadInput, match="no transformation satisfies"):
                search(table, models, suppression, metric)
            continue
        result = search(table, models, suppression, metric)
        gen = result.release.details["generalisation"]
        found = tuple(gen["levels"][c] for c in ("town", "age", "job"))
        assert gen["loss"] == pytest.approx(best[0], rel=1e-9, abs=1e-12), (metric, found, best)
        assert found == best[2], (metric, results[found], best)
        assert results[found]["suppressed"] == gen["suppressed_records"]
        assert result.metrics[metric] == pytest.approx(gen["loss"], rel=1e-9, abs=1e-12), "the metric plugin agrees"
        assert gen["lattice_nodes"] == len(results) and 1 <= gen["searched_nodes"] <= len(results)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("models", MODELS, ids=lambda m: "+".join(m))
def test_the_compiled_roll_up_finds_what_the_numpy_one_finds(monkeypatch, seed, models):
    """Class tables rolled up by the compiled kernels (once loaded, as in the desktop's worker) and by
    NumPy: the same optimum, metric, suppression and nodes built, for every model."""
    if grouping.compiled_units() is None:
        pytest.skip("numba is not installed: every roll-up takes the NumPy path")
    table = random_table(seed)
    found = []
    for loaded in (False, True):
        monkeypatch.setitem(grouping._WARM, "started", True)
        monkeypatch.setitem(grouping._WARM, "ready", loaded)
        try:
            gen = search(table, models, 0.15, "loss").release.details["generalisation"]
        except BadInput as exc:
            found.append(str(exc))
            continue
        found.append((gen["levels"], gen["loss"], gen["suppressed_records"], gen["searched_nodes"]))
    assert found[0] == found[1]


@pytest.mark.parametrize("seed", range(3))
def test_a_chosen_transformation_is_applied(seed):
    table = random_table(seed)
    results = oracle(table, ["k-anonymity:k=2"], 0.3)
    for levels, r in results.items():
        text = f"town:{levels[0]};age:{levels[1]};job:{levels[2]}"
        if r is None:
            with pytest.raises(BadInput, match="does not satisfy"):
                search(table, ["k-anonymity:k=2"], 0.3, "loss", text)
            continue
        gen = search(table, ["k-anonymity:k=2"], 0.3, "loss", text).release.details["generalisation"]
        assert tuple(gen["levels"].values()) == levels and gen["loss"] == pytest.approx(r["loss"])
        assert gen["searched_nodes"] == 1


def test_the_search_evaluates_few_nodes_where_pruning_is_sound():
    """Pruning is not a full enumeration: on 4 quasi-identifiers it settles most nodes unseen."""
    rng = np.random.default_rng(0)
    n = 2000
    frame = pd.DataFrame({c: rng.integers(0, 64, n) for c in "abcd"})
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in "abcd"})
    for c in "abcd":
        table = table.with_hierarchy(c, Hierarchy.intervals(frame[c], widths=[2, 4, 8, 16, 32]))
    gen = search(table, ["k-anonymity:k=5"], 0.02, "loss").release.details["generalisation"]
    assert gen["lattice_nodes"] == 7**4
    assert gen["searched_nodes"] < gen["lattice_nodes"] / 4


# ---------------------------------------------------------------------------------- monotonicity
def _merge_cases(rng, S=4, trials=400):
    for _ in range(trials):
        a, b = rng.integers(0, 5, S), rng.integers(0, 5, S)
        if a.sum() and b.sum():
            yield a, b


@pytest.mark.parametrize(
    "call",
    [
        "k-anonymity:k=3",
        "l-diversity:l=2,variant=distinct",
        "l-diversity:l=2,variant=probabilistic",
        "l-diversity:l=1.8,variant=entropy",
        "l-diversity:l=2,variant=recursive,c=1.5",
        "t-closeness:t=0.2",
        "t-closeness:t=0.15,distance=emd",
        "t-closeness:t=0.2,distance=js",
        "delta-disclosure:delta=0.7,sides=1",
    ],
)
def test_declared_monotonicity_holds(call):
    """What each model declares is what merging groups does to its verdict: "generalisation", a union
    of passing groups passes; "suppression", a group holding a passing one passes."""
    model = bind_models(REGISTRY, [PluginCall.parse(call)])
    kind = model.plugin.monotonicity(model.params)
    assert kind in ("generalisation", "suppression")
    rng = np.random.default_rng(1)
    q = np.array([0.4, 0.3, 0.2, 0.1])
    for a, b in _merge_cases(rng):
        counts = np.vstack([a, b, a + b])
        view = GroupView.from_codes(
            np.repeat(np.arange(3), 4), np.tile(np.arange(4), 3), q, tuple(range(4)), False, counts.ravel()
        )
        ok = model.check_groups(view).ok
        if ok[0] and ok[1]:
            assert ok[2], (call, a, b)
        if kind == "suppression" and (ok[0] or ok[1]):
            assert ok[2], (call, a, b)


@pytest.mark.parametrize(
    "call", ["delta-disclosure:delta=0.7", "l-diversity:l=2,variant=entropy,estimator=grassberger"]
)
def test_a_model_that_promises_nothing_has_merges_that_break_it(call):
    """Two-sided δ-disclosure and Grassberger's entropy declare no monotonicity (nothing is pruned), and
    rightly: two passing groups whose union fails exist."""
    model = bind_models(REGISTRY, [PluginCall.parse(call)])
    assert model.plugin.monotonicity(model.params) == ""
    rng = np.random.default_rng(1)
    q = np.array([0.4, 0.3, 0.2, 0.1])
    broken = 0
    # (1, 1) and (1, 1): Grassberger's estimate e² capped at their 2 values each, their union (2, 2) e^(2/3)
    for a, b in [(np.array([1, 1, 0, 0]), np.array([1, 1, 0, 0])), *_merge_cases(rng)]:
        counts = np.vstack([a, b, a + b])
        view = GroupView.from_codes(
            np.repeat(np.arange(3), 4), np.tile(np.arange(4), 3), q, tuple(range(4)), False, counts.ravel()
        )
        ok = model.check_groups(view).ok
        broken += bool(ok[0] and ok[1] and not ok[2])
    assert broken


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("models", MODELS, ids=lambda m: "+".join(m))
@pytest.mark.parametrize("suppression", [0.0, 0.15])
def test_the_condition_the_search_prunes_by_is_monotone_and_necessary(seed, models, suppression):
    """C, as the method computes it from the models' declarations, holds on every generalisation of a
    node where it holds, and at every solution the oracle finds."""
    from veil.plugins.anonymisation import _lattice
    from veil.plugins.anonymisation._sensitive import sensitive_view

    table = random_table(seed)
    model = bind_models(REGISTRY, [PluginCall.parse(m) for m in models])
    attrs = _lattice.attributes(table, ["town", "age", "job"])
    records = sensitive_view(table, "dx")
    judge = _lattice.Judge(model, math.floor(suppression * table.n_rows + 1e-9), records)
    condition = {}
    for levels in itertools.product(*(range(a.height + 1) for a in attrs)):
        classes, _ = _lattice.classes_at(attrs, levels, records.sensitive, len(records.values))
        condition[levels] = int(classes.size[judge.failing(classes)[1]].sum()) <= judge.limit
    for x, y in itertools.product(condition, repeat=2):
        if condition[x] and all(a <= b for a, b in zip(x, y)):
            assert condition[y], (x, y)
    for levels, r in oracle(table, models, suppression).items():
        assert r is None or condition[levels], levels


@pytest.mark.parametrize("seed", range(3))
def test_the_table_a_node_rolls_up_from_is_the_smallest_kept_specialisation(seed):
    """Kept's packed levels (every kept table tested in one subtraction) pick the table the definition
    picks: among the kept tables whose every level is at most the node's, the smallest, the first of
    the smallest; and the same one the column-by-column test picks (Kept without the heights)."""
    from veil.plugins.anonymisation import _lattice

    rng = np.random.default_rng(seed)
    top = (1, 4, 0, 2, 3, 7, 2, 1, 15)

    def table(levels, n):
        return _lattice.Classes(levels, np.ones(n, dtype=np.int64), np.zeros((len(top), n), dtype=np.int32))

    base = table((0,) * len(top), 500)
    packed, plain, kept = _lattice.Kept(base, top), _lattice.Kept(base), [base]
    for _ in range(200):
        t = table(tuple(int(rng.integers(0, h + 1)) for h in top), int(rng.integers(1, 60)))
        packed.add(t)
        plain.add(t)
        kept.append(t)
    for _ in range(400):
        levels = tuple(int(rng.integers(0, h + 1)) for h in top)
        below = [t for t in kept if all(a <= b for a, b in zip(t.levels, levels))]
        want = min(below, key=lambda t: t.n_classes)  # min keeps the first of the smallest
        assert packed.smallest_below(levels) is want
        assert plain.smallest_below(levels) is want


@pytest.mark.parametrize("seed", range(8))
def test_the_partition_metrics_bound_never_exceeds_the_metric(seed):
    """The bound the search orders and stops by, from the column and column-pair counts, is at most
    Σ|E|² and n / #classes at every node, counted here by grouping the generalised labels (the metric
    with suppression is never below them); it is exact at the top, where one class holds every record;
    and rows standing for several records (a class table's, with weights) give the same bound."""
    from veil.plugins.anonymisation import _lattice

    rng = np.random.default_rng(seed)
    table = random_table(seed)
    qis = ["town", "age", "job", "dx"]
    dx = Hierarchy.from_levels({v: [v[0], "*"] for v in ["flu", "cold", "hiv", "cancer"]})
    table = table.with_hierarchy("dx", dx)
    frame, n = table.frame, table.n_rows
    attrs = _lattice.attributes(table, qis)
    nodes = np.array(list(itertools.product(*(range(a.height + 1) for a in attrs))), dtype=np.int64)
    dm = _lattice.Objective("discernibility", attrs, n).bounds(nodes)
    aecs = _lattice.Objective("average-class-size", attrs, n).bounds(nodes)
    for row, levels in enumerate(nodes):
        labels = [table.hierarchy(c).generalise_series(frame[c], int(l)) for c, l in zip(qis, levels)]
        sizes = pd.DataFrame(dict(zip(qis, labels))).value_counts().to_numpy().astype(float)
        assert dm[row] <= (sizes**2).sum() * (1 + 1e-12), (levels, dm[row], (sizes**2).sum())
        assert aecs[row] <= n / len(sizes) * (1 + 1e-12), (levels, aecs[row], n / len(sizes))
    assert dm[-1] == pytest.approx(float(n) ** 2) and aecs[-1] == pytest.approx(n)
    counts = frame[qis].value_counts()  # one row per distinct record, weighted by how many there are
    rows = Table.from_frame(counts.index.to_frame(index=False), roles={c: Role.QUASI_IDENTIFIER for c in qis})
    for c in qis:
        rows = rows.with_hierarchy(c, table.hierarchy(c))
    weighted = _lattice.attributes(rows, qis, weights=counts.to_numpy().astype(float))
    order = rng.permutation(len(nodes))[:20]
    for metric, bound in (("discernibility", dm), ("average-class-size", aecs)):
        again = _lattice.Objective(metric, weighted, n).bounds(nodes[order])
        np.testing.assert_allclose(again, bound[order], rtol=1e-12)


def test_suppression_is_not_monotonic_for_entropy_l_diversity():
    """The reason only suppression-monotone models prune with suppression: a passing group merged
    with a failing one can fail (entropy l-diversity)."""
    model = bind_models(REGISTRY, [PluginCall.parse("l-diversity:l=2,variant=entropy")])
    counts = np.array([[2, 2, 0, 0], [9, 0, 0, 0], [11, 2, 0, 0]])
    view = GroupView.from_codes(
        np.repeat(np.arange(3), 4), np.tile(np.arange(4), 3), np.full(4, 0.25), tuple(range(4)), False, counts.ravel()
    )
    assert model.check_groups(view).ok.tolist() == [True, False, False]


# ---------------------------------------------------------------------------------- metrics by hand
def _seven() -> Table:
    """Seven records; town a, b → north, c → south → *; sex F, M → * (generated)."""
    frame = pd.DataFrame({"town": ["a", "a", "b", "b", "c", "c", "c"], "sex": ["F", "F", "F", "M", "M", "M", "F"]})
    table = Table.from_frame(frame, roles={"town": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    return table.with_hierarchy(
        "town", Hierarchy.from_levels({"a": ["north", "*"], "b": ["north", "*"], "c": ["south", "*"]})
    )


# town:1, sex:0 under k = 2: (north, F) = a a b, (south, M) = c c, and the classes (north, M) = b and
# (south, F) = c fail; they are two records, within ⌊0.3 × 7⌋ = 2, and as one group of two they pass.
HAND = {
    # town: north covers 2 of 3 leaves, (2 − 1) / (3 − 1) = 0.5 for a a b; south 0; sex exact 0;
    # the two suppressed records 1 per cell: (3 × 0.5 + 2 × 2) / (7 × 2)
    "loss": 5.5 / 14,
    # −log2(c(v) / c(region)): a, a, b in north (4 records) 1 bit each; c in south (3) 0; suppressed:
    # b −log2(2/7), M −log2(3/7), c −log2(3/7), F −log2(4/7)
    "entropy": 3 + math.log2(7 / 2) + 2 * math.log2(7 / 3) + math.log2(7 / 4),
    # level / height: town 1/2 for the five kept, sex 0; the suppressed 1 per cell: (5 × 0.5 + 4) / 14
    "precision": 6.5 / 14,
    "height": 1.0,
    "discernibility": 3**2 + 2**2 + 2**2,  # the groups as written: 3, 2 and the two '*'
    "discernibility:monotonic=false": 3**2 + 2**2 + 7 * 2,  # each suppressed record charged n = 7
    "average-class-size": 7 / 3,
}


@pytest.mark.parametrize("metric", sorted(HAND))
def test_each_metric_against_a_table_computed_by_hand(metric):
    result = search(_seven(), ["k-anonymity:k=2"], 0.3, metric, "town:1;sex:0")
    gen = result.release.details["generalisation"]
    assert gen["suppressed_records"] == 2
    assert gen["loss"] == pytest.approx(HAND[metric])  # the search's own computation
    assert result.metrics[metric] == pytest.approx(HAND[metric])  # the metric plugin on the release


# The other metrics Veil reports on the same release, its two suppressed records included.
HAND_REPORTED = {
    # NCP: north covers 2 of town's 3 values (2/3) for a a b, south one value (0), sex exact; a suppressed
    # cell covers every value (1): (3 × 2/3 + 2 × 1 + 2 × 1) / 14
    "ncp": 6 / 14,
    # the written groups (3, 2 and the two '*' records as one group): 1/2 at most, 3 groups / 7 on average
    "prosecutor-risk-max": 1 / 2,
    # a suppressed record matches any value: its own group is the whole table (1/7), as in ARX
    "prosecutor-risk-avg": (3 / 3 + 2 / 2 + 2 / 7) / 7,
}


@pytest.mark.parametrize("metric", sorted(HAND_REPORTED))
def test_every_reported_metric_counts_suppressed_records(metric):
    result = execute(
        REGISTRY,
        _seven(),
        RunSpec(
            PluginCall("global-recoding", {"suppression": 0.3, "levels": "town:1;sex:0"}),
            models=[PluginCall.parse("k-anonymity:k=2")],
            metrics=(metric,),
        ),
    )
    assert result.release.details["generalisation"]["suppressed_records"] == 2
    assert result.metrics[metric] == pytest.approx(HAND_REPORTED[metric])


def test_the_metrics_of_an_exact_release_and_of_withheld_columns():
    """Nothing generalised costs nothing; a quasi-identifier left out of the release counts as '*'."""
    table = _seven()
    exact = search(table, ["k-anonymity:k=1"], 0.0, "loss", "town:0;sex:0")
    assert exact.release.details["generalisation"]["loss"] == 0
    registry_metric = REGISTRY.metric("loss")
    from veil.engine import Context, feature_subset

    withheld = feature_subset(table, ["sex"])
    assert registry_metric.compute(table, withheld, registry_metric.params({}), Context(0)) == pytest.approx(0.5)


# ---------------------------------------------------------------------------------- the release
def _two_towns(n_rare=2) -> Table:
    """40 records in town a, ``n_rare`` in town b: at k = 5 the rare ones fail unless towns merge."""
    frame = pd.DataFrame({"town": ["a"] * 40 + ["b"] * n_rare, "sex": (["F", "M"] * 30)[: 40 + n_rare]})
    table = Table.from_frame(frame, roles={"town": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    return table.with_hierarchy("town", Hierarchy.from_levels({"a": ["*"], "b": ["*"]}))


def test_suppressed_records_are_written_star_and_kept():
    table = _two_towns(6)  # the 6 records of town b (3 F, 3 M) fail k = 5: 6 ≤ 20 % of 46 may go
    result = search(table, ["k-anonymity:k=5"], 0.2, "loss")
    release = result.release
    gen = release.details["generalisation"]
    assert gen["levels"] == {"town": 0, "sex": 0} and gen["suppressed_records"] == 6
    assert release.n_rows == 46
    star = (release.frame["town"] == "*") & (release.frame["sex"] == "*")
    assert int(star.sum()) == 6
    assert (release.group_values.iloc[-1] == SUPPRESSED).all()
    assert result.verdict.holds


def test_too_few_suppressed_records_are_suppressed_as_arx_does():
    """Two records failing k = 5 are suppressed within the limit: written * throughout they match any
    value and form no group of their own (docs/reference.md#blanks), so the original levels stand,
    as in ARX."""
    table = _two_towns(2)
    for levels in ((), ("town:0",)):
        gen = search(table, ["k-anonymity:k=5"], 0.2, "loss", *levels).release.details["generalisation"]
        assert gen["levels"] == {"town": 0, "sex": 0} and gen["suppressed_records"] == 2


def test_no_solution_is_one_clear_error():
    """k above the records: no transformation can satisfy it (the lattice's top puts every record in
    one group), which the run says before it starts."""
    table = _two_towns(2)
    with pytest.raises(
        BadInput,
        match=r"k-anonymity cannot hold on this data whatever the method does: k = 50 is "
        r"larger than the number of records \(42\)",
    ):
        search(table, ["k-anonymity:k=50"], 0.0, "loss")


@pytest.mark.parametrize(
    "levels, message",
    [
        ("country:1", "'country', which is not a quasi-identifier"),
        ("town:2", "level 2 of 'town' is above its hierarchy's height 1"),
        ("town=2", "COLUMN:LEVEL"),
        ("town:x", "whole number"),
    ],
)
def test_bad_levels_are_refused(levels, message):
    with pytest.raises(BadInput, match=message):
        search(_two_towns(6), ["k-anonymity:k=5"], 0.2, "loss", levels)


def test_a_numeric_column_uses_its_supplied_hierarchy_or_a_generated_one():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"age": rng.integers(20, 70, 200)})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER})
    assert table.schema["age"].kind is Kind.NUMERIC
    generated = search(table, ["k-anonymity:k=10"], 0.0, "loss").release
    assert generated.frame["age"].astype(str).str.contains("-").any()  # Veil's intervals, e.g. "20-24"
    supplied = table.with_hierarchy("age", Hierarchy.intervals(frame["age"], widths=[25, 50]))
    labels = set(search(supplied, ["k-anonymity:k=10"], 0.0, "loss").release.frame["age"].astype(str))
    assert labels <= {"0-24", "25-49", "50-74", "0-49", "50-99", "*"}


def test_a_lattice_too_large_is_refused_with_its_size():
    frame = pd.DataFrame({f"q{i}": np.arange(40) % 16 for i in range(6)})
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in frame.columns})
    for c in frame.columns:  # 11 levels each: 11^6 transformations
        table = table.with_hierarchy(c, Hierarchy.intervals(frame[c], widths=[1, 2, 4, 8, 16, 32, 64, 128, 256]))
    with pytest.raises(BadInput, match=r"has 1,771,561 transformations .* choose fewer quasi-identifiers"):
        search(table, ["k-anonymity:k=2"], 0.0, "loss", search="optimal")


# ---------------------------------------------------------------------------------- several sensitive columns
def _two_sensitive(seed: int) -> Table:
    table = random_table(seed)
    rng = np.random.default_rng(seed + 100)
    pay = rng.choice([1, 2, 3], table.n_rows, p=[0.6, 0.3, 0.1])
    frame = table.frame.assign(pay=pay)
    roles = {c.name: c.role for c in table.schema.columns}
    out = Table.from_frame(frame, roles={**roles, "pay": Role.SENSITIVE})
    for c in ("town", "job", "age"):
        if table.schema[c].hierarchy is not None:
            out = out.with_hierarchy(c, table.schema[c].hierarchy)
    return out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("suppression", [0.0, 0.15])
@pytest.mark.parametrize("model", ["l-diversity:l=2,variant=distinct", "t-closeness:t=0.3"])
def test_the_search_judges_every_sensitive_column(seed, suppression, model):
    """With two sensitive columns the search's optimum is the best transformation that holds on both:
    each transformation is applied alone (``levels``) and judged by the model's check of the release
    on each column, and the search returns the least loss among those that pass."""
    table = _two_sensitive(seed)
    qis = ["town", "age", "job"]
    heights = [table.hierarchy(c).height for c in qis]
    losses = {}
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        text = ";".join(f"{c}:{l}" for c, l in zip(qis, levels))
        try:
            result = search(table, [model], suppression, "loss", text)
        except BadInput:
            continue
        assert result.verdict.holds and {c for c, _ in result.verdict.by_column} == {"dx", "pay"}
        losses[levels] = result.release.details["generalisation"]["loss"]
    if not losses:
        with pytest.raises(BadInput):
            search(table, [model], suppression, "loss")
        return
    best = search(table, [model], suppression, "loss")
    assert best.verdict.holds and all(v.holds for _, v in best.verdict.by_column)
    assert best.release.details["generalisation"]["loss"] == pytest.approx(min(losses.values()))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("models", MODELS[:4], ids=lambda m: "+".join(m))
@pytest.mark.parametrize("suppression", [0.0, 0.15])
def test_the_solution_space_says_what_the_exhaustive_oracle_says(seed, models, suppression):
    """Every node the release's solution space calls a solution is one, with the oracle's metric and
    suppression; every node it calls no solution is none; the optimum is the oracle's; the frontier
    holds the solutions no other beats on both suppression and metric."""
    from veil.engine import NodeStatus

    table = random_table(seed)
    results = oracle(table, models, suppression)
    best = optimum(results, "loss")
    if best is None:
        return
    space = search(table, models, suppression, "loss").release.solution_space
    assert space.columns == ("town", "age", "job") and space.complete and space.n_nodes == len(results)
    assert space.optimum == best[2] and space.status[space.index(best[2])] == NodeStatus.SOLUTION
    for i, levels in enumerate(map(tuple, space.levels.tolist())):
        status, truth = NodeStatus(int(space.status[i])), results[levels]
        if status is NodeStatus.SOLUTION:
            assert truth is not None and space.loss[i] == pytest.approx(truth["loss"], rel=1e-9, abs=1e-12)
            assert space.suppressed[i] == truth["suppressed"]
        elif status is NodeStatus.NOT_SOLUTION:
            assert truth is None, levels
    listed = np.flatnonzero(space.status == NodeStatus.SOLUTION)
    frontier = set(space.frontier().tolist())
    for i in listed:  # on the frontier exactly when no listed solution is at least as good on both and better on one
        beaten = any(
            space.suppressed[j] <= space.suppressed[i]
            and space.loss[j] < space.loss[i]
            or space.suppressed[j] < space.suppressed[i]
            and space.loss[j] <= space.loss[i]
            for j in listed
        )
        assert (i in frontier) == (not beaten) or (
            not beaten
            and any(space.suppressed[j] == space.suppressed[i] and space.loss[j] == space.loss[i] for j in frontier)
        ), i
    assert space.params_for(best[2]) == {"levels": ";".join(f"{c}:{l}" for c, l in zip(space.columns, best[2]))}
    again = search(table, models, suppression, "loss", levels=space.params_for(best[2])["levels"]).release
    assert again.solution_space is None and again.details["generalisation"]["levels"] == dict(
        zip(space.columns, best[2])
    )


@pytest.mark.parametrize("loaded", [False, True], ids=["numpy", "compiled"])
def test_a_class_tables_units_carry_their_records_and_survey_weights(monkeypatch, loaded):
    """A rolled-up table's (class, sensitive value) units, against sums made one pair at a time: their
    records, and their survey weights when a model reads them, on either path of the counting."""
    from collections import defaultdict

    from veil.plugins.anonymisation import _lattice

    monkeypatch.setitem(grouping._WARM, "started", True)
    monkeypatch.setitem(grouping._WARM, "ready", loaded)
    rng = np.random.default_rng(8)
    for trial in range(60):
        finer, n_values, n = int(rng.integers(1, 30)), int(rng.integers(0, 5)), int(rng.integers(0, 80))
        classes = int(rng.integers(1, finer + 1))
        inverse = rng.integers(0, classes, finer) if trial % 2 else None
        cls = rng.integers(0, finer if inverse is not None else classes, n)
        sens = rng.integers(-1, n_values, n) if n_values else np.full(n, -1)
        w, survey = rng.integers(1, 5, n).astype(np.int64), rng.random(n)
        table = _lattice.Classes((0,), np.ones(classes, dtype=np.int64), np.zeros((1, classes), dtype=np.int32))
        _lattice._units(table, cls, sens, w, n_values, survey, inverse)
        records, weights = defaultdict(int), defaultdict(float)
        for c, s, r, x in zip(cls, sens, w, survey):
            key = (int(c if inverse is None else inverse[c]), int(s))
            records[key] += int(r)
            weights[key] += x
        units = list(zip(table.unit_class.tolist(), table.unit_sens.tolist()))
        assert sorted(units) == sorted(records)
        assert table.unit_w.tolist() == [records[u] for u in units]
        assert np.allclose(table.unit_survey, [weights[u] for u in units])
