"""Local suppression: the fewest cells against brute force on small tables, the greedy search's
release meeting k when a blank matches any value, the importance order, strata, the per-column
counts, and models beyond k (l-diversity)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.engine import PluginCall, RunSpec, Table, execute, make_registry


def _compatible(a, b):
    """Equal wherever neither is blank; a record blank everywhere (suppressed) joins no other record's
    group, while its own group is every record."""
    if all(x < 0 for x in b) and not all(x < 0 for x in a):
        return False
    return all(x == y or x < 0 or y < 0 for x, y in zip(a, b))


def _k_anonymous(codes, k):
    return all(sum(_compatible(codes[i], codes[j]) for j in range(len(codes))) >= k for i in range(len(codes)))


def _fewest(codes, k):
    """The fewest cells to blank, by trying every set of cells from the smallest."""
    cells = [(i, j) for i in range(codes.shape[0]) for j in range(codes.shape[1]) if codes[i, j] >= 0]
    for size in range(len(cells) + 1):
        for chosen in itertools.combinations(cells, size):
            trial = codes.copy()
            for i, j in chosen:
                trial[i, j] = -1
            if _k_anonymous(trial, k):
                return size
    raise AssertionError("unreachable: every cell blank is k-anonymous")


def _table(codes, blanks=None):
    frame = pd.DataFrame({f"q{j}": [f"v{c}" for c in codes[:, j]] for j in range(codes.shape[1])})
    if blanks is not None:
        frame = frame.mask(blanks)
    frame["y"] = ["a", "b"] * (len(frame) // 2) + ["a"] * (len(frame) % 2)
    roles = {c: "quasi-identifier" for c in frame.columns if c.startswith("q")}
    return Table.from_frame(frame).with_roles(roles)


def _run(table, k, **params):
    return execute(
        make_registry(), table, RunSpec(PluginCall("local-suppression", params), PluginCall("k-anonymity", {"k": k}))
    )


def _codes_of(frame, columns):
    return np.stack([pd.factorize(frame[c])[0] for c in columns], axis=1)


@pytest.mark.parametrize("seed", range(12))
def test_the_exact_search_blanks_the_fewest_cells(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 6)), int(rng.integers(1, 3))
    k = int(rng.integers(2, n + 1))
    codes = rng.integers(0, 3, size=(n, m))
    result = _run(_table(codes), k, search="exact")
    released = _codes_of(result.release.frame, [f"q{j}" for j in range(m)])
    assert _k_anonymous(released, k)
    assert result.release.details["blanked_total"] == _fewest(codes, k)
    frame = result.release.frame
    for j in range(m):  # every cell not blanked is released as it was
        kept = frame[f"q{j}"].notna()
        assert (frame[f"q{j}"][kept] == _table(codes).frame[f"q{j}"][kept]).all()


@pytest.mark.parametrize("seed", range(15))
def test_the_greedy_search_meets_k_and_never_beats_the_fewest(seed):
    rng = np.random.default_rng(50 + seed)
    n, m, k = int(rng.integers(3, 7)), 2, int(rng.integers(2, 4))
    if k > n:
        return
    codes = rng.integers(0, 3, size=(n, m))
    result = _run(_table(codes), k, search="greedy")
    released = _codes_of(result.release.frame, ["q0", "q1"])
    assert _k_anonymous(released, k)
    assert result.release.details["blanked_total"] >= _fewest(codes, k)


def _bigger(seed=0, n=600):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(float),
            "zip": rng.choice([f"z{i}" for i in range(12)], n),
            "sex": rng.choice(["f", "m"], n),
            "region": rng.choice(["north", "south"], n),
            "disease": rng.choice(["flu", "hiv", "cold", "asthma"], n),
        }
    )
    frame.loc[rng.random(n) < 0.03, "age"] = np.nan
    roles = {"age": "quasi-identifier", "zip": "quasi-identifier", "sex": "quasi-identifier", "disease": "sensitive"}
    return Table.from_frame(frame).with_roles(roles)


def test_a_larger_table_meets_k_with_blanks_matching_any_value_and_counts_each_column():
    table = _bigger()
    result = execute(
        make_registry(),
        table,
        RunSpec(PluginCall("local-suppression"), PluginCall("k-anonymity", {"k": 5})),
        release_sensitive=("disease",),
    )
    release = result.release
    assert release.blanks == "any-value" and release.class_sizes().min() >= 5
    assert pd.api.types.is_float_dtype(release.frame["age"])  # numbers stay numbers
    for column in ("age", "zip", "sex"):
        newly = release.frame[column].isna() & table.frame[column].notna()
        assert release.details["blanked_cells"][column] == int(newly.sum())
        kept = release.frame[column].notna()
        assert (release.frame[column][kept] == table.frame[column][kept]).all()  # other cells as they were
    assert release.details["blanked_total"] > 0


def test_the_most_important_column_is_blanked_least():
    table = _bigger(1)
    counts = {}
    for order in ("age+zip+sex", "zip+sex+age"):
        r = execute(
            make_registry(),
            table,
            RunSpec(PluginCall("local-suppression", {"importance": order}), PluginCall("k-anonymity", {"k": 5})),
            release_sensitive=("disease",),
        )
        counts[order] = r.release.details["blanked_cells"]
    assert counts["age+zip+sex"]["age"] < counts["zip+sex+age"]["age"]
    assert counts["zip+sex+age"]["zip"] < counts["age+zip+sex"]["zip"]


def test_strata_are_never_blanked_and_groups_stay_within_them():
    table = _bigger(2).with_roles({"region": "quasi-identifier"})
    r = execute(
        make_registry(),
        table,
        RunSpec(PluginCall("local-suppression", {"strata": "region"}), PluginCall("k-anonymity", {"k": 5})),
        release_sensitive=("disease",),
    )
    assert r.release.frame["region"].notna().all() and r.release.details["blanked_cells"]["region"] == 0
    assert r.release.class_sizes().min() >= 5


def test_models_beyond_k_hold_too():
    table = _bigger(3)
    r = execute(
        make_registry(),
        table,
        RunSpec(
            PluginCall("local-suppression"),
            models=[PluginCall("k-anonymity", {"k": 3}), PluginCall("l-diversity", {"l": 3})],
        ),
        release_sensitive=("disease",),
    )
    assert all(v.holds for v in r.verdicts)
