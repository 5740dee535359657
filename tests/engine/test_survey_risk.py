"""Risk on sample microdata (fk/Fk, individual, household and global risk, distinction and separation,
SUDA) against brute force on small random tables with weights, blanks and households, against
values worked by hand from the definitions, and against sdcMicro's published figures on its data."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    combinations_count,
    frequencies,
    household_risk,
    individual_risk,
    key_codes,
    rank_combinations,
    sample_risk,
    suda,
)
from veil.engine.base.errors import BadInput
from veil.engine.data.generalised import SUPPRESSED

DATA = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "sdcmicro"


def random_table(seed: int, n: int = 40, m: int = 3, blanks: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"q{j}": rng.integers(0, 3, n).astype(float) for j in range(m)})
    frame = frame.mask(rng.random(frame.shape) < blanks)
    frame["w"] = rng.uniform(1, 50, n).round(1)
    frame["hh"] = rng.integers(0, n // 3, n)
    return frame


def matches(a, b, any_blank: bool) -> bool:
    for x, y in zip(a, b):
        x_blank, y_blank = pd.isna(x), pd.isna(y)
        if any_blank and (x_blank or y_blank):
            continue
        if x_blank != y_blank or (not x_blank and x != y):
            return False
    return True


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("any_blank", [True, False])
def test_frequencies_equal_brute_force(seed, any_blank):
    frame = random_table(seed)
    quasi = ["q0", "q1", "q2"]
    rows = frame[quasi].to_numpy()
    fk, Fk = frequencies(key_codes(frame, quasi), frame["w"].to_numpy(), blanks_match_any=any_blank)
    for i, row in enumerate(rows):
        mates = [j for j, other in enumerate(rows) if matches(row, other, any_blank)]
        assert fk[i] == len(mates)
        assert Fk[i] == pytest.approx(frame["w"].to_numpy()[mates].sum())


def series_risk(f: int, F: float) -> float:
    """Benedetti and Franconi's risk from its definition: E[1/F | f] with F − f negative binomial
    (f, p = f/F), summed until the terms vanish."""
    p = f / F
    if p >= 1:
        return 1 / f
    return sum(math.comb(N - 1, f - 1) * p**f * (1 - p) ** (N - f) / N for N in range(f, 20000))


@pytest.mark.parametrize("seed", range(4))
def test_individual_risk_equals_its_definition(seed):
    frame = random_table(seed, n=30)
    fk, Fk = frequencies(key_codes(frame, ["q0", "q1", "q2"]), frame["w"].to_numpy())
    exact = individual_risk(fk, Fk, weighted=True, method="exact")
    for f, F in set(zip(fk, Fk)):
        assert exact[(fk == f) & (Fk == F)] == pytest.approx(series_risk(int(f), F), rel=1e-7)
    approx = individual_risk(fk, Fk, weighted=True, method="approx")
    p = fk / Fk
    big = (fk > 2) & (fk != Fk)
    assert np.allclose(approx[big], p[big] / (fk[big] - (1 - p[big])))
    assert np.allclose(approx[fk <= 2], exact[fk <= 2])  # the two differ only from fk = 3
    assert np.array_equal(individual_risk(fk, Fk, weighted=False), 1 / fk)


@pytest.mark.parametrize("f, F", [(728, 72_800), (5_000, 500_000), (20_000, 200_000), (3, 6_000)])
def test_exact_risk_of_large_keys_equals_its_definition(f, F):
    """Keys of thousands of records and small pk, where the integrand is one narrow peak: the exact
    risk equals the negative binomial sum (in logarithms, until the terms vanish), without a warning."""
    from scipy.special import gammaln, logsumexp

    p = f / F
    N = np.arange(f, f / p + 40 * math.sqrt(f * (1 - p)) / p + 50)
    terms = -np.log(N) + gammaln(N) - gammaln(f) - gammaln(N - f + 1) + f * math.log(p) + (N - f) * math.log1p(-p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        risk = individual_risk(np.array([float(f)]), np.array([float(F)]), weighted=True, method="exact")
    assert risk[0] == pytest.approx(float(np.exp(logsumexp(terms))), rel=1e-7)


def test_individual_risk_by_hand():
    # fk = 1, Fk = 4: p = 1/4, r = p/(1-p)·log(1/p) = (1/3)·log 4
    # fk = 2, Fk = 4: p = 1/2, r = 1 − log 2
    # fk = 3, Fk = 3: every person of the population is in the sample, r = 1/3
    fk, Fk = np.array([1.0, 2.0, 3.0]), np.array([4.0, 4.0, 3.0])
    assert individual_risk(fk, Fk, weighted=True) == pytest.approx([math.log(4) / 3, 1 - math.log(2), 1 / 3])


@pytest.mark.parametrize("seed", range(4))
def test_household_risk_equals_brute_force(seed):
    frame = random_table(seed)
    result = sample_risk(frame, ["q0", "q1", "q2"], weight="w", household="hh")
    for i in range(len(frame)):
        members = np.flatnonzero(frame["hh"].to_numpy() == frame["hh"].iloc[i])
        assert result.household[i] == pytest.approx(1 - np.prod(1 - result.risk[members]))
    assert result.expected_reidentifications == pytest.approx(result.risk.sum())
    assert result.global_risk == pytest.approx(result.risk.mean())


def test_household_risk_by_hand():
    # household a: risks 0.5 and 0.5 → 1 − 0.25 = 0.75; b alone: 0.2; a record without an id alone: 0.1
    got = household_risk(np.array([0.5, 0.2, 0.5, 0.1]), pd.Series(["a", "b", "a", None]))
    assert got == pytest.approx([0.75, 0.2, 0.75, 0.1])


def test_suppressed_values_are_blanks():
    frame = pd.DataFrame({"a": ["x", SUPPRESSED, "y"], "b": ["1", "1", "1"]})
    fk, _ = frequencies(key_codes(frame, ["a", "b"]))
    assert fk.tolist() == [2, 3, 2]


def test_bad_weights_are_refused():
    frame = pd.DataFrame({"a": [1, 2], "w": [1.0, 0.5]})
    with pytest.raises(BadInput, match="at least 1"):
        sample_risk(frame, ["a"], weight="w")
    with pytest.raises(BadInput, match="quasi-identifiers"):
        sample_risk(frame, [])


@pytest.mark.parametrize("seed", range(4))
def test_distinction_and_separation_equal_brute_force(seed):
    frame = random_table(seed, n=25)
    quasi = ["q0", "q1", "q2"]
    ranking = rank_combinations(frame, quasi)
    assert len(ranking) == combinations_count(3) == 7
    for c in ranking:
        rows = [tuple("-" if pd.isna(v) else v for v in r) for r in frame[list(c.columns)].to_numpy()]
        n = len(rows)
        apart = sum(rows[i] != rows[j] for i in range(n) for j in range(i + 1, n))
        assert c.separation == pytest.approx(apart / (n * (n - 1) / 2))
        assert c.distinction == pytest.approx(len(set(rows)) / n)
        assert c.uniques == sum(rows.count(r) == 1 for r in rows)
    assert [c.separation for c in ranking] == sorted((c.separation for c in ranking), reverse=True)
    assert len(rank_combinations(frame, quasi, max_size=2)) == combinations_count(3, 2) == 6


def test_distinction_and_separation_of_a_table_worked_by_hand():
    """Five records (age, sex, state): 20 F CA, 30 F CA, 40 F TX, 20 M NY, 40 M CA. On sex, two
    keys of 3 and 2 records: distinction 2/5, pairs apart 1 − (3 + 1)/10 = 0.6; on sex and state,
    keys F·CA ×2, F·TX, M·NY, M·CA: distinction 4/5, separation 1 − 1/10 = 0.9 (the figures ARX's
    own test of its attribute risk states)."""
    frame = pd.DataFrame(
        {
            "age": ["20", "30", "40", "20", "40"],
            "sex": ["Female", "Female", "Female", "Male", "Male"],
            "state": ["CA", "CA", "TX", "NY", "CA"],
        }
    )
    got = {c.columns: (c.distinction, c.separation) for c in rank_combinations(frame, ["age", "sex", "state"])}
    expected = {
        ("sex",): (0.4, 0.6),
        ("state",): (0.6, 0.7),
        ("age",): (0.6, 0.8),
        ("sex", "state"): (0.8, 0.9),
        ("age", "sex"): (1.0, 1.0),
        ("age", "state"): (1.0, 1.0),
        ("age", "sex", "state"): (1.0, 1.0),
    }
    assert got.keys() == expected.keys()
    for columns, (distinction, separation) in expected.items():
        assert got[columns] == pytest.approx((distinction, separation), abs=1e-12)


def brute_msus(frame: pd.DataFrame, quasi: list[str]) -> list[list[tuple[int, ...]]]:
    rows = frame[quasi].to_numpy(dtype=object)
    out = []
    for i, row in enumerate(rows):
        known = [j for j in range(len(quasi)) if not pd.isna(row[j])]
        unique = set()
        for k in range(1, len(known) + 1):
            for combo in itertools.combinations(known, k):
                shared = any(
                    all(not pd.isna(other[j]) and other[j] == row[j] for j in combo)
                    for o, other in enumerate(rows)
                    if o != i
                )
                if not shared:
                    unique.add(combo)
        out.append([s for s in unique if not any(set(t) < set(s) for t in unique)])
    return out


@pytest.mark.parametrize("seed", range(6))
def test_suda_equals_brute_force(seed):
    frame = random_table(seed, n=30, m=4, blanks=0.1)
    quasi = ["q0", "q1", "q2", "q3"]
    result = suda(frame, quasi)
    weights = {k: math.factorial(4 - k) for k in range(1, 5)}
    for i, msus in enumerate(brute_msus(frame, quasi)):
        sizes = [len(s) for s in msus]
        assert result.msu_counts[i].tolist() == [sizes.count(k) for k in range(1, 5)]
        score = sum(weights[len(s)] for s in msus)
        assert result.score[i] == score
        for j in range(4):
            share = sum(weights[len(s)] for s in msus if j in s)
            assert result.contribution[i, j] == pytest.approx(share / score if score else 0.0)
    limited = suda(frame, quasi, max_size=2)
    assert limited.max_size == 2
    assert np.array_equal(limited.msu_counts, result.msu_counts[:, :2])


def test_suda_by_hand():
    # a: 2 1 1 / b: 0 3 0 / c: 0 6 0. Record 1's MSUs: {a=2} (size 1, score 2! = 2); record 2's:
    # {b=3}, {c=6} (2 each); record 3: none (its values are each shared, and all three together equal
    # nothing else... (1, 0, 0) is unique: {a=1, b=0} and {a=1, c=0} are MSUs of size 2, score 1! = 1).
    frame = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    result = suda(frame, ["a", "b", "c"])
    assert result.score.tolist() == [2.0, 4.0, 2.0]
    # contributions: a takes part in 2 + 1 + 1 of 8, b in 2 + 1, c in 2 + 1 → 50 %, 37.5 %, 37.5 % (as
    # sdcMicro's own test of suda2 has it)
    assert result.attribute_contribution == pytest.approx({"a": 50.0, "b": 37.5, "c": 37.5})
    # DIS: U = 3 full-key uniques, no pairs → file DIS = 1; every record then scores 1/(1 + 0) = 1
    assert result.dis.tolist() == [1.0, 1.0, 1.0]


def test_dis_by_hand():
    # keys: x (twice), y, z → U = 2, P = 2 records in keys seen twice; f = 0.5 → DIS = 1/(1 + 1) = 0.5.
    # m = 1: Q = 1 + 7/20 = 1.35; y and z each have the MSU {value} scoring 0! = 1, so Σ score^−Q = 2
    # and each record's DIS = 1 / (1 + (2/0.5 − 2) / (1 · 2)) = 1/2.
    frame = pd.DataFrame({"a": ["x", "x", "y", "z"]})
    result = suda(frame, ["a"], dis_fraction=0.5)
    assert result.dis.tolist() == pytest.approx([0.0, 0.0, 0.5, 0.5])


# -- agreement with sdcMicro: the figures its own tests publish, on its data --------------------------

SAMPLE = pd.DataFrame(
    {
        "A": [2, 3, 2, 2, 3, 3, 1, 2],
        "B": [3, 3, 3, 3, 3, 3, 4, 3],
        "C": [1, 3, 1, 2, 1, 1, 1, 1],
        "weight": [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51],
    }
)


def test_sdcmicro_freqcalc_and_indivrisk():
    got = sample_risk(SAMPLE, ["A", "B", "C"], weight="weight")
    assert got.fk.tolist() == [3, 1, 3, 1, 2, 2, 1, 3]
    assert got.Fk.tolist() == [108.0, 45.5, 108.0, 17.0, 100.0, 100.0, 123.5, 108.0]
    approx = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01369863]
    assert got.risk == pytest.approx(approx, abs=5e-9)
    exact = sample_risk(SAMPLE, ["A", "B", "C"], weight="weight", method="exact").risk
    assert exact == pytest.approx([0.01355297, *approx[1:2], 0.01355297, *approx[3:7], 0.01355297], abs=5e-9)


def test_sdcmicro_freqcalc_with_blanks():
    data = SAMPLE.assign(C=[1, 3, None, 2, 1, 1, None, 1])
    got = sample_risk(data, ["A", "B", "C"], weight="weight")
    assert got.fk.tolist() == [3, 1, 4, 2, 2, 2, 1, 3]
    assert got.Fk.tolist() == [108.0, 45.5, 125.0, 56.0, 100.0, 100.0, 123.5, 108.0]
    blank_row = SAMPLE.assign(A=[2, 3, None, 2, 3, 3, 1, 2], B=[3, 3, None, 3, 3, 3, 4, 3], C=None)
    got = sample_risk(blank_row, ["A", "B", "C"], weight="weight")
    assert got.fk.tolist() == [4, 4, 8, 4, 4, 4, 2, 4]
    assert got.Fk.tolist() == [125.0, 184.5, 394.0, 125.0, 184.5, 184.5, 162.5, 125.0]


TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


@pytest.mark.skipif(not (DATA / "testdata2.csv").exists(), reason="the sdcMicro data sets are not in shared/")
def test_sdcmicro_suda2_on_testdata2():
    data = pd.read_csv(DATA / "testdata2.csv")
    assert suda(data, ["urbrur", "roof", "walls", "water", "sex"]).score[0] == 2
    assert suda(data, TESTDATA_KEYS).score[0] == 180


@pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="the sdcMicro data sets are not in shared/")
def test_testdata_risk_agrees_with_brute_force_summaries():
    data = pd.read_csv(DATA / "testdata.csv")
    got = sample_risk(data, TESTDATA_KEYS, weight="sampling_weight", household="ori_hid")
    keys = data[TESTDATA_KEYS].apply(tuple, axis=1)
    assert got.fk.tolist() == keys.map(keys.value_counts()).tolist()
    sums = data.groupby(TESTDATA_KEYS)["sampling_weight"].transform("sum")
    assert got.Fk.tolist() == sums.tolist()
    expected = 0.0
    for f, F in zip(got.fk, got.Fk):  # sdcMicro's indivRisk (approx), record by record
        p = f / F
        expected += (
            1 / f
            if f == F
            else p / (1 - p) * math.log(1 / p)
            if f == 1
            else p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
            if f == 2
            else p / (f - (1 - p))
        )
    assert got.expected_reidentifications == pytest.approx(expected)
    assert got.global_risk == pytest.approx(expected / len(data))


def test_suda_stays_within_its_declared_memory():
    import tracemalloc

    from veil.engine import suda_memory

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"c{j}": rng.integers(0, 6, 5000) for j in range(6)})
    tracemalloc.start()
    suda(frame, list(frame.columns))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak <= suda_memory(5000, 6)
