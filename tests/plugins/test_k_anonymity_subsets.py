"""k-anonymity on every combination of at most m quasi-identifiers (sdcMicro's ``combs``;
docs/models.md#k-anonymity-on-every-m-quasi-identifiers): the model's verdict against counting by hand
on small random tables with blanks, local suppression's release judged by hand combination by
combination, its exact search against the fewest cells found by trying every set, and the
guarantee's place between k-anonymity on all the quasi-identifiers and nothing."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.engine import BadInput, PluginCall, RunSpec, Table, execute, make_registry, parse_params
from veil.engine.model.release import Release

REGISTRY = make_registry()


def _table(codes, blanks=None) -> Table:
    frame = pd.DataFrame({f"q{j}": [f"v{c}" for c in codes[:, j]] for j in range(codes.shape[1])})
    if blanks is not None:
        frame = frame.mask(blanks)
    return Table.from_frame(frame).with_roles(dict.fromkeys(frame.columns, "quasi-identifier"))


def _rows(frame) -> list[tuple]:
    return [tuple(None if pd.isna(v) else v for v in r) for r in frame.itertuples(index=False)]


def _sizes_by_hand(rows, m) -> list[int]:
    """Per record, its smallest group over every combination of at most m columns: the records equal
    to it on the combination wherever neither is blank; a record blank in every column (suppressed)
    is in no other record's group, and its own group is every record."""
    q = len(rows[0])
    suppressed = [all(v is None for v in r) for r in rows]
    out = []
    for i, a in enumerate(rows):
        if suppressed[i]:
            out.append(len(rows))
            continue
        smallest = len(rows)
        for size in range(1, min(m, q) + 1):
            for combination in itertools.combinations(range(q), size):
                mates = sum(
                    1
                    for j, b in enumerate(rows)
                    if not suppressed[j] and all(a[c] is None or b[c] is None or a[c] == b[c] for c in combination)
                )
                smallest = min(smallest, mates)
        out.append(smallest)
    return out


def _release(table: Table) -> Release:
    from veil.engine import GENERALISED_TABLE

    frame = table.frame
    return Release(GENERALISED_TABLE, frame, tuple(frame.columns), blanks="any-value")


@pytest.mark.parametrize("seed", range(25))
def test_the_verdict_is_the_smallest_group_over_every_combination_counted_by_hand(seed):
    rng = np.random.default_rng(seed)
    n, q = int(rng.integers(3, 12)), int(rng.integers(2, 5))
    codes = rng.integers(0, 3, size=(n, q))
    blanks = rng.random((n, q)) < 0.2
    blanks[rng.random(n) < 0.1] = True  # a record or two suppressed throughout
    table = _table(codes, blanks)
    m, k = int(rng.integers(1, q + 1)), int(rng.integers(1, 4))
    model = REGISTRY.get("privacy-model", "k-anonymity-subsets")
    params = parse_params(model.Params, {"k": k, "combinations": m})
    verdict = model().check(_release(table), params)
    expected = _sizes_by_hand(_rows(table.frame), m)
    assert verdict.per_record.tolist() == expected
    assert verdict.holds == (min(expected) >= k)
    assert sorted(verdict.failing_rows.tolist()) == [i for i, s in enumerate(expected) if s < k]


def _fewest(codes, k, m):
    """The fewest cells to blank for k on every combination of at most m columns, trying every set."""
    cells = [(i, j) for i in range(codes.shape[0]) for j in range(codes.shape[1])]
    for size in range(len(cells) + 1):
        for chosen in itertools.combinations(cells, size):
            rows = [list(r) for r in codes.tolist()]
            for i, j in chosen:
                rows[i][j] = None
            if min(_sizes_by_hand([tuple(r) for r in rows], m)) >= k:
                return size
    raise AssertionError("unreachable: every cell blank meets any k")


def _run(table, k, m, **params):
    model = PluginCall("k-anonymity-subsets", {"k": k, "combinations": m})
    return execute(REGISTRY, table, RunSpec(PluginCall("local-suppression", params), model))


@pytest.mark.parametrize("seed", range(10))
def test_the_exact_search_blanks_the_fewest_cells_and_no_more_than_for_all_columns_together(seed):
    rng = np.random.default_rng(100 + seed)
    n, q = int(rng.integers(3, 6)), 3
    codes = rng.integers(0, 2, size=(n, q))
    k, m = int(rng.integers(2, min(n, 3) + 1)), int(rng.integers(1, 3))
    result = _run(_table(codes), k, m, search="exact")
    assert result.release.details["blanked_total"] == _fewest(codes, k, m)
    whole = _run(_table(codes), k, q, search="exact").release.details["blanked_total"]
    assert result.release.details["blanked_total"] <= whole
    assert min(_sizes_by_hand(_rows(result.release.frame), m)) >= k


@pytest.mark.parametrize("seed", range(8))
def test_the_greedy_release_holds_on_every_combination_judged_by_hand(seed):
    rng = np.random.default_rng(200 + seed)
    n, q = int(rng.integers(40, 90)), 4
    codes = rng.integers(0, 4, size=(n, q))
    blanks = rng.random((n, q)) < 0.05
    table = _table(codes, blanks)
    k, m = int(rng.integers(2, 4)), int(rng.integers(1, 4))
    release = _run(table, k, m, search="greedy").release
    assert min(_sizes_by_hand(_rows(release.frame), m)) >= k
    before, after = table.frame.isna(), release.frame[table.frame.columns].isna()
    assert not (before & ~after).to_numpy().any()  # a blank stays blank; a value is kept or blanked
    kept = ~after.to_numpy()
    assert (release.frame[table.frame.columns].to_numpy()[kept] == table.frame.to_numpy()[kept]).all()
    assert sum(release.details["blanked_cells"].values()) == int((after & ~before).to_numpy().sum())


def test_fewer_cells_than_k_anonymity_on_all_and_k_anonymity_implies_it():
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 6, size=(400, 5))
    table = _table(codes)
    subsets = _run(table, 3, 2).release
    full = execute(
        REGISTRY, table, RunSpec(PluginCall("local-suppression", {}), PluginCall("k-anonymity", {"k": 3}))
    ).release
    assert subsets.details["blanked_total"] < full.details["blanked_total"]
    model = REGISTRY.get("privacy-model", "k-anonymity-subsets")
    assert model().check(full, parse_params(model.Params, {"k": 3, "combinations": 2})).holds
    k_anonymity = REGISTRY.get("privacy-model", "k-anonymity")
    assert not k_anonymity().check(subsets, parse_params(k_anonymity.Params, {"k": 3})).holds  # the weaker guarantee


def test_methods_that_judge_all_the_columns_together_refuse_it_naming_the_ones_that_can():
    table = _table(np.random.default_rng(1).integers(0, 3, size=(30, 3)))
    with pytest.raises(BadInput, match="local-suppression"):
        execute(
            REGISTRY,
            table,
            RunSpec(PluginCall("global-recoding", {}), PluginCall("k-anonymity-subsets", {"k": 2, "combinations": 2})),
        )


def test_too_many_combinations_are_refused_before_counting():
    frame = pd.DataFrame({f"q{j}": ["a", "b"] * 5 for j in range(40)})
    table = Table.from_frame(frame).with_roles(dict.fromkeys(frame.columns, "quasi-identifier"))
    with pytest.raises(BadInput, match="combinations to judge"):
        _run(table, 2, 6)


def test_k_anonymity_on_many_quasi_identifiers_is_not_taken_for_their_combinations():
    """Local suppression under k-anonymity on all of 16 quasi-identifiers judges them together: the
    65,535 combinations of them are never listed (nor refused)."""
    rng = np.random.default_rng(3)
    table = _table(rng.integers(0, 2, size=(60, 16)))
    release = execute(
        REGISTRY, table, RunSpec(PluginCall("local-suppression", {}), PluginCall("k-anonymity", {"k": 2}))
    ).release
    rows = _rows(release.frame)
    alone = [r for r in rows if sum(all(a is None or b is None or a == b for a, b in zip(r, o)) for o in rows) < 2]
    assert not [r for r in alone if any(v is not None for v in r)]
