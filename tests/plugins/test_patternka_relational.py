"""Relational PatternKa (docs/reference.md#set-valued-data) against a brute-force Algorithm 1 with the diversity-score
selection, its four speed-ups, and its release checked from the written file."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    Context,
    ExportOptions,
    Hierarchy,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
    table_to_items,
    verify_manifest,
    write_release,
)
from veil.plugins.anonymisation.patternka_relational import relational_groups
from veil.plugins.anonymisation._regions import qi_columns, relational_gcp

REGISTRY = make_registry()
QIS = ["age", "town", "sex"]


def random_table(seed: int, n: int | None = None) -> Table:
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(8, 30))
    leaves = ["a", "b", "c", "d", "e"][: int(rng.integers(2, 6))]
    mids = rng.integers(0, 2, len(leaves))
    hierarchy = Hierarchy.from_levels({leaf: [f"m{m}", "*"] for leaf, m in zip(leaves, mids)})
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 20 + int(rng.integers(2, 40)), n),
            "town": rng.choice(leaves, n, p=rng.dirichlet(np.ones(len(leaves)))),
            "sex": rng.choice(["F", "M"], n),
            "dx": rng.choice(["flu", "hiv", "cold"], n),
        }
    )
    table = Table.from_frame(
        frame,
        roles={
            "age": Role.QUASI_IDENTIFIER,
            "town": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "dx": Role.SENSITIVE,
        },
    )
    return table.with_hierarchy("town", hierarchy)


# ----------------------------------------------------------------------------- brute force
def naive_ncp(table: Table, rows) -> float:
    """NCP(g) of docs/reference.md#set-valued-data, straight from the definitions."""
    total = 0.0
    for col in QIS:
        values = [table.frame[col].iloc[i] for i in rows]
        if col == "age":
            span = table.frame["age"].max() - table.frame["age"].min()
            total += (max(values) - min(values)) / span if span else 0.0
        else:
            h = table.hierarchy(col)
            total += 0.0 if len(set(values)) == 1 else h.leaf_count(h.lca(values)) / len(h.leaves)
    return total


def brute_force(table: Table, k: int, buckets: int) -> list[int]:
    """Algorithm 1 with Algorithm 2's selection, every itemset enumerated."""
    items = table_to_items(table, buckets=buckets, columns=QIS)
    recs = [frozenset(items.row(i).tolist()) for i in range(table.n_rows)]
    remaining = list(range(table.n_rows))
    groups = [-1] * table.n_rows
    members_of = []
    while len(remaining) >= k:
        support = Counter()
        for i in remaining:
            for size in range(1, len(recs[i]) + 1):
                for p in itertools.combinations(sorted(recs[i]), size):
                    support[p] += 1
        frequent = [p for p, s in support.items() if s >= k]
        if not frequent:
            chosen = list(remaining)
        else:
            length = max(len(p) for p in frequent)
            best, best_ncp = None, math.inf
            for p in sorted(p for p in frequent if len(p) == length):
                raw = [i for i in remaining if set(p) <= recs[i]]
                freq = Counter(x for i in raw for x in recs[i])
                zeta = {i: float(np.prod([freq[x] for x in recs[i]])) for i in raw}
                threshold = sorted(zeta.values())[k - 1]
                cp = [i for i in raw if zeta[i] <= threshold]
                ncp = naive_ncp(table, cp)
                if ncp < best_ncp:
                    best, best_ncp = cp, ncp
            chosen = best
        for i in chosen:
            groups[i] = len(members_of)
        members_of.append(list(chosen))
        remaining = [i for i in remaining if groups[i] < 0]
    for i in remaining:  # leftovers in input order: the group whose |g|·NCP(g) grows least
        growth = [(len(m) + 1) * naive_ncp(table, m + [i]) - len(m) * naive_ncp(table, m) for m in members_of]
        best = int(np.argmin(growth))
        members_of[best].append(i)
        groups[i] = best
    return groups


@pytest.mark.parametrize("seed", range(20))
def test_matches_brute_force(seed):
    table = random_table(seed)
    k = 2 + seed % 3
    buckets = 3 + seed % 5
    got = relational_groups(table, k, qis=QIS, buckets=buckets, cache_size=2)
    assert got.groups.tolist() == brute_force(table, k, buckets)
    sizes = np.bincount(got.groups)
    assert sizes.min() >= k


@pytest.mark.parametrize("off", ["closed", "length_pruning", "cache", "bitset_update"])
def test_each_speed_up_changes_no_output(off):
    for seed in range(8):
        table = random_table(100 + seed, n=40)
        k = 2 + seed % 3
        on = relational_groups(table, k, qis=QIS, buckets=4, cache_size=3)
        without = relational_groups(table, k, qis=QIS, buckets=4, cache_size=3, **{off: False})
        assert on.groups.tolist() == without.groups.tolist()
        assert on.patterns == without.patterns


def test_random_selection_is_seeded_and_still_k_anonymous():
    table = random_table(7, n=60)
    a = relational_groups(table, 3, qis=QIS, pattern_selection="random", seed=1)
    b = relational_groups(table, 3, qis=QIS, pattern_selection="random", seed=1)
    assert a.groups.tolist() == b.groups.tolist()
    assert np.bincount(a.groups).min() >= 3


def test_gcp_is_size_weighted_ncp():
    table = random_table(3, n=25)
    g = relational_groups(table, 4, qis=QIS).groups
    expected = sum(
        naive_ncp(table, np.flatnonzero(g == x).tolist()) * int((g == x).sum()) for x in range(g.max() + 1)
    ) / (len(QIS) * table.n_rows)
    assert relational_gcp(qi_columns(table, QIS), g) == pytest.approx(expected)


def test_release_verified_from_the_file_and_ncp_equals_gcp(tmp_path):
    table = random_table(11, n=80)
    spec = RunSpec(PluginCall("patternka-relational", {"buckets": 5}), PluginCall("k-anonymity", {"k": 5}), 0, ("ncp",))
    result = execute(REGISTRY, table, spec, Context(0))
    assert result.holds
    assert result.metrics["ncp"] == pytest.approx(result.release.details["gcp"])
    write_release(REGISTRY, result, tmp_path, ExportOptions("csv"))
    assert verify_manifest(REGISTRY, tmp_path).holds


@pytest.mark.dataset
def test_adult_recipe_is_the_papers_adult_and_patternka_is_k_anonymous_on_it(datasets_dir):
    from pathlib import Path

    from veil.engine import Study

    recipe = Path(__file__).resolve().parents[2] / "resources" / "studies" / "paper002_adult.json"
    table = Study.load(recipe).data.load(REGISTRY)
    assert table.n_rows == 30_162  # after removing missing values, as the paper's §5
    qis = table.schema.by_role(Role.QUASI_IDENTIFIER)
    assert len(qis) == 9
    items = table_to_items(table, buckets=20, columns=qis)
    ages = [name for name in items.item_names if name.startswith("age=")]
    assert 1 < len(ages) <= 20
    result = execute(
        REGISTRY,
        table,
        RunSpec(PluginCall("patternka-relational"), PluginCall("k-anonymity", {"k": 1000}), 0, ("ncp",)),
        Context(0),
    )
    assert result.holds and np.bincount(result.release.groups).min() >= 1000
    assert result.metrics["ncp"] == pytest.approx(result.release.details["gcp"])
