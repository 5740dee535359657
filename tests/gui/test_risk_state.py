"""The Risk tab's Qt-free state: what each side measures (the input's roles; a release read as `veil
risk` reads its export), the records above a threshold against a plain count, sorting against
Python's sort, and figures that arrive for a side no longer shown being dropped."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veil.desktop.state.risk import (
    COLUMNS,
    FK,
    HOUSEHOLD,
    INPUT,
    RECORD,
    RELEASE,
    RANKED_AT_ONCE,
    RISK,
    SEPARATION,
    WEIGHTED_FK,
    Measured,
    RiskState,
    input_side,
    marking,
    measure,
    measure_ranking,
    measure_suda,
    ranking_size,
    release_side,
    sort_order,
)
from veil.engine import (
    SUPPRESSED,
    BinaryMatrix,
    CancelToken,
    Cancelled,
    Context,
    Release,
    Role,
    Table,
    rank_combinations,
)

QUASI = ["region", "sex", "age"]


def survey(seed: int, n: int = 40) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east"], n),
            "sex": rng.choice(["F", "M"], n).astype(object),
            "age": rng.choice([20, 30, 40], n),
            "w": rng.integers(1, 30, n),
            "hh": rng.integers(0, n // 3, n),
            "note": rng.choice(["x", "y"], n),
        }
    )
    frame.loc[rng.random(n) < 0.15, "sex"] = None
    roles = {**dict.fromkeys(QUASI, Role.QUASI_IDENTIFIER), "w": Role.WEIGHT, "hh": Role.HOUSEHOLD}
    return Table.from_frame(frame, roles=roles)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_records_above_the_threshold_are_those_whose_risk_exceeds_it_riskiest_first(seed):
    table = survey(seed)
    side = input_side(table)
    assert side.quasi == tuple(QUASI) and (side.weight, side.household) == ("w", "hh")
    measured = Measured(side, measure(side, True, "approx", Context()))
    risk = measured.risk.risk
    threshold = float(np.median(risk))
    plain = [i for i in range(len(risk)) if risk[i] > threshold]
    listed = measured.riskiest(threshold)
    assert measured.above(threshold) == len(plain) == len(listed)
    assert sorted(listed[RECORD] - 1) == plain
    order = sorted(plain, key=lambda i: (-risk[i], i))  # riskiest first, ties in row order
    assert (listed[RECORD] - 1).tolist() == order
    for _, row in listed.iterrows():  # each row's figures and values are its record's
        i = row[RECORD] - 1
        assert row[RISK] == risk[i] and row[HOUSEHOLD] == measured.risk.household[i]
        assert row[FK] == measured.risk.fk[i] and row[WEIGHTED_FK] == measured.risk.Fk[i]
        for c in QUASI:
            value = table.frame[c].iloc[i]
            assert (pd.isna(row[c]) and pd.isna(value)) or row[c] == value
    figures = measured.figures(threshold)
    assert figures[f"records above {threshold:g}"] == len(plain)
    assert figures[f"share above {threshold:g}"] == len(plain) / len(risk)
    assert figures["sample uniques (fk = 1)"] == int((measured.risk.fk == 1).sum())


@pytest.mark.parametrize("descending", [False, True])
def test_sorting_is_python_s_stable_sort_with_blanks_last(descending):
    rng = np.random.default_rng(7)
    numbers = rng.choice([1.0, 2.5, 3.0, np.nan], 30)
    words = pd.Series(rng.choice(["b", "a", "c", None], 30), dtype=object)
    table = pd.DataFrame({"n": numbers, "w": words})
    for column in ("n", "w"):
        values = table[column].tolist()
        present = [i for i, v in enumerate(values) if not pd.isna(v)]
        sign = -1 if descending else 1
        if column == "n":
            expected = sorted(present, key=lambda i: sign * values[i])
        else:
            expected = sorted(present, key=lambda i: sign * ord(values[i]))  # one letter each
        expected += [i for i, v in enumerate(values) if pd.isna(v)]
        assert sort_order(table, column, descending).tolist() == expected, column


def test_a_release_is_read_as_veil_risk_reads_its_export():
    table = survey(3, n=12)
    frame = table.frame.drop(columns=["hh"]).astype({"sex": object, "region": object})
    frame.loc[0, "region"] = "*"  # suppressed, as exporters write it
    frame.loc[1, "sex"] = SUPPRESSED
    frame.loc[2, "sex"] = "*"
    release = Release("generalised-table", frame, tuple(QUASI))
    side = release_side("Run #1", table, release)
    assert side.name == RELEASE and side.quasi == tuple(QUASI) and side.weight == "w"
    assert side.household is None and "household id was not released" in side.note
    assert pd.isna(side.frame.loc[0, "region"]) and pd.isna(side.frame.loc[2, "sex"])
    assert release.frame.loc[0, "region"] == "*"  # the release itself is left as it was
    risk = measure(side, True, "approx", Context())
    blank = side.frame[QUASI].isna().any(axis=1).to_numpy()
    assert (risk.fk[blank] >= risk.fk[~blank].min()).all()  # a blank matches others: never alone by it
    assert "not a table" in release_side("Run #2", table, Release("feature-weights", frame, ()))
    assert "no quasi-identifier" in release_side("Run #3", table, Release("generalised-table", frame, ("gone",)))


def test_the_input_says_why_it_cannot_be_measured():
    assert "Open a table" in input_side(None)
    plain = Table.from_frame(pd.DataFrame({"a": [1, 2]}))
    assert "quasi-identifiers" in input_side(plain)
    matrix = BinaryMatrix.from_transactions([["bread", "milk"], ["milk"]])
    assert "item sets" in input_side(matrix)


def test_figures_for_a_side_no_longer_shown_are_dropped_and_suda_outlives_new_rules():
    state = RiskState()
    seen = []
    state.changed.connect(seen.append)
    old, new = input_side(survey(4)), input_side(survey(5))
    state.set_side(INPUT, old)
    assert state.to_measure() == [INPUT] and state.to_suda() == [INPUT]
    state.set_side(INPUT, new)
    assert not state.record(INPUT, old, measure(old, True, "approx", Context()))  # it came too late
    assert not state.record_suda(INPUT, old, measure_suda(old, None, Context()))
    assert INPUT not in state.measured
    found = measure_suda(new, 2, Context())
    assert found.max_size == 2
    assert state.record_suda(INPUT, new, found) and state.to_suda() == []
    assert state.record(INPUT, new, measure(new, True, "approx", Context()))
    assert state.measured[INPUT].suda is found
    state.set_rules(False, "approx")  # a blank as a value of its own: measured again, SUDA kept
    assert state.to_measure() == [INPUT] and state.to_suda() == []
    assert not state.record(INPUT, new, measure(new, True, "approx", Context()))  # under the old rule
    state.record(INPUT, new, measure(new, False, "approx", Context()))
    assert state.measured[INPUT].suda is found
    state.set_side(INPUT, input_side(survey(4)))  # other data: SUDA goes with it
    assert state.to_suda() == [INPUT]
    assert seen[:2] == ["sides", "sides"] and "settings" in seen


def test_the_exact_risk_stops_when_cancelled_and_reports_how_far_it_is():
    side = input_side(survey(6, n=60))
    heard = []

    class Listening:  # a context that hears every report (a Context keeps at most 20 a second)
        def check(self):
            pass

        def progress(self, fraction, message=""):
            heard.append(message)

    exact = measure(side, True, "exact", Listening())
    assert ((exact.fk >= 3) & (exact.fk != exact.Fk)).any()
    assert "exact individual risk of the input" in heard
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        measure(side, True, "exact", Context(token=token))
    with pytest.raises(Cancelled):
        measure_suda(side, None, Context(token=token))


def test_a_ranking_is_kept_while_its_frame_is_open_and_its_size_stays_under_the_limit():
    for m in (1, 3, 8, 13, 14, 20):  # the largest size whose combinations number at most RANKED_AT_ONCE
        fits = [k for k in range(1, m + 1) if sum(math.comb(m, j) for j in range(1, k + 1)) <= RANKED_AT_ONCE]
        assert ranking_size(m) == max(fits, default=1), m
    table = survey(8, n=30)
    side = input_side(table)
    state = RiskState()
    state.forget_ranking(table.frame)
    state.set_side(INPUT, side)
    assert state.to_rank() and state.rank_size() is None
    heard = []

    class Listening:
        def check(self):
            pass

        def progress(self, fraction, message=""):
            heard.append(fraction)

    found = measure_ranking(side, None, Listening())
    assert heard == sorted(heard) and len(heard) == 7 and heard[0] == 0.0
    assert not state.record_ranking(object(), side, None, found)  # another frame: too late
    assert state.record_ranking(table.frame, side, None, found) and not state.to_rank()
    shown = state.ranking.table()
    assert shown[COLUMNS].tolist() == [", ".join(c.columns) for c in rank_combinations(table.frame, QUASI)]
    assert shown[SEPARATION].is_monotonic_decreasing
    # other quasi-identifiers on the same frame: the ranking stands but is to be made again
    chosen, demoted = marking(table.schema, ["region", "age"])
    assert (chosen, demoted) == (["region", "age"], ["sex"])
    narrower = table.with_roles({"sex": Role.INSENSITIVE})
    state.set_side(INPUT, input_side(narrower))
    assert state.ranking is not None and state.to_rank()
    state.forget_ranking(survey(9).frame)  # other data: the ranking goes
    assert state.ranking is None
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        measure_ranking(side, None, Context(token=token))
