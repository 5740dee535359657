"""What a blank quasi-identifier means: the any-value rule (sdcMicro's freqCalc) counted against
brute force on small random tables, blank sensitive values that count as no value, and suppressed
records that match every record."""

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    ANY_VALUE,
    OWN_VALUE,
    GroupView,
    Release,
    blank_codes,
    CompatibleSums,
    blank_view,
    compatible_sizes,
    has_blanks,
    is_suppressed,
    make_registry,
    suppressed_records,
)
from veil.engine.model.release import GENERALISED_TABLE


def _suppressed(row):
    return all(x < 0 for x in row)


def _compatible(a, b):
    """Equal wherever neither is blank; a record blank everywhere (suppressed) joins no other record's
    group, while its own group is every record."""
    if _suppressed(b) and not _suppressed(a):
        return False
    return all(x == y or x < 0 or y < 0 for x, y in zip(a, b))


def _brute_sizes(codes, weights=None):
    w = np.ones(len(codes), dtype=int) if weights is None else weights
    return np.array(
        [sum(w[j] for j in range(len(codes)) if _compatible(codes[i], codes[j])) for i in range(len(codes))]
    )


def _brute_counts(codes, sensitive, s):
    out = np.zeros((len(codes), s), dtype=int)
    for i in range(len(codes)):
        for j in range(len(codes)):
            if _compatible(codes[i], codes[j]) and sensitive[j] >= 0:
                out[i, sensitive[j]] += 1
    return out


@pytest.mark.parametrize("seed", range(40))
def test_any_value_counts_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(1, 5))
    codes = rng.integers(0, 3, size=(n, m))
    codes[rng.random((n, m)) < rng.uniform(0, 0.5)] = -1
    weights = rng.integers(1, 4, size=n) if seed % 2 else None
    assert compatible_sizes(codes, weights).tolist() == _brute_sizes(codes, weights).tolist()


@pytest.mark.parametrize("seed", range(30))
def test_any_value_view_matches_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(2, 25)), int(rng.integers(1, 4))
    codes = rng.integers(0, 3, size=(n, m))
    codes[rng.random((n, m)) < 0.3] = -1
    sensitive = pd.Series(rng.choice(["a", "b", "c", None], size=n))
    base = GroupView.from_labels(np.zeros(n, dtype=int), sensitive)
    view = blank_view(codes, base)
    per_record_sizes = view.sizes[view.groups]
    per_record_counts = view.counts()[view.groups]
    assert per_record_sizes.tolist() == _brute_sizes(codes).tolist()
    assert per_record_counts.tolist() == _brute_counts(codes, base.sensitive, base.n_values).tolist()


@pytest.mark.parametrize("seed", range(40))
def test_sums_over_compatible_patterns_match_brute_force(seed):
    """The sums global recoding judges classes by, keyed once and summed again with other masses: for
    distinct patterns with blanks in several columns (so several masks of blank columns, pairs of
    masks known on no common column, patterns blank throughout), integer weights, float survey
    weights and a matrix of counts, against summing over every compatible pair."""
    rng = np.random.default_rng(500 + seed)
    m = int(rng.integers(1, 6))
    codes = rng.integers(0, int(rng.integers(1, 4)), size=(int(rng.integers(1, 40)), m))
    codes[rng.random(codes.shape) < rng.uniform(0, 0.6)] = -1
    if seed % 4 == 0:
        codes[0] = -1  # a pattern blank throughout: a suppressed record
    patterns = np.unique(codes, axis=0)[rng.permutation(len(np.unique(codes, axis=0)))]
    p = len(patterns)
    join = CompatibleSums(patterns)
    pairs = np.array([[_compatible(a, b) for b in patterns] for a in patterns])
    weights = rng.integers(0, 5, size=p)
    survey = rng.uniform(0.5, 20.0, size=p)
    counts = rng.integers(0, 4, size=(p, 3))
    for _ in range(2):  # the same join summed again, as the search does round after round
        assert join.sums(weights).tolist() == (pairs @ weights).tolist()
        np.testing.assert_allclose(join.sums(survey), pairs @ survey)
        assert join.sums(counts).tolist() == (pairs @ counts).tolist()
        weights = weights * (rng.random(p) < 0.7)  # some patterns dropped: their mass is 0


def test_codes_follow_the_rule():
    frame = pd.DataFrame({"age": [30.0, np.nan, 30.0, 41.0, "*"], "zip": ["1", "1", "*", "1", "*"]}, dtype=object)
    anyv = blank_codes(frame, ["age", "zip"], ANY_VALUE)
    own = blank_codes(frame, ["age", "zip"], OWN_VALUE)
    assert anyv[1, 0] == -1 and own[1, 0] >= 0  # a missing age: any value, or its own
    assert anyv[2, 1] >= 0  # a single * is a generalised value (the top of its hierarchy), equal to another *
    assert (anyv[4] == -1).all() and (own[4] == -1).all()  # a suppressed record matches any value under both
    assert compatible_sizes(anyv).tolist() == [2, 3, 1, 2, 5]
    assert compatible_sizes(own).tolist() == [1, 1, 1, 1, 5]


def test_a_blank_sensitive_value_is_no_value():
    # the group's only known value is "flu": a placeholder or blank must not make it 2-diverse
    view = GroupView.from_labels([0, 0, 0, 1, 1], ["flu", None, None, "flu", "hiv"])
    assert view.counts().tolist() == [[1, 0], [1, 1]]
    assert view.q().tolist() == [2 / 3, 1 / 3]
    registry = make_registry()
    ldiv = registry.privacy_model("l-diversity")
    verdict = ldiv.check_groups(view, ldiv.params({"l": 2}))
    assert verdict.ok.tolist() == [False, True]


def _release(frame, rule):
    return Release(GENERALISED_TABLE, frame, ("age", "zip"), sensitive=("disease",), blanks=rule)


def test_suppressed_records_match_any_value_in_a_release():
    frame = pd.DataFrame(
        {
            "age": ["20-29"] * 5 + ["*"],
            "zip": ["1**"] * 5 + ["*"],
            "disease": ["flu", "hiv", "flu", "cold", "flu", "flu"],
        }
    )
    registry = make_registry()
    k5 = registry.privacy_model("k-anonymity")
    # grouped by written values the suppressed record is a group of one that fails k = 5
    assert not k5.check(_release(frame, None), k5.params({"k": 5})).holds
    assert k5.check(_release(frame, ANY_VALUE), k5.params({"k": 5})).holds
    # the suppressed record's group is the whole table; it joins no other record's group (as in ARX)
    assert _release(frame, ANY_VALUE).class_sizes().tolist() == [5] * 5 + [6]
    assert _release(frame, ANY_VALUE).roles()["blanks"] == ANY_VALUE


@pytest.mark.parametrize("seed", range(30))
def test_a_categorical_release_is_judged_as_the_same_release_of_objects(seed):
    """Blanks and suppressed records are found in a categorical column by its codes: the same cells,
    sizes and verdicts as in the same columns of Python objects, read value by value."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    values = ["a", "b", "*", None] if seed % 2 else ["[1, 2]", "*", None]
    frame = pd.DataFrame({c: rng.choice(np.array(values, dtype=object), n) for c in ("age", "zip")}, dtype=object)
    if seed % 3 == 0:  # some records suppressed throughout
        frame.loc[rng.random(n) < 0.3, ["age", "zip"]] = "*"
    frame["disease"] = rng.choice(["flu", "hiv"], n)
    categorical = frame.astype({"age": "category", "zip": "category"})
    for c in ("age", "zip"):
        assert is_suppressed(categorical[c]).tolist() == is_suppressed(frame[c]).tolist()
    k = int(rng.integers(1, n + 1))
    k_anonymity = make_registry().privacy_model("k-anonymity")
    for rule in (ANY_VALUE, OWN_VALUE):
        assert has_blanks(categorical, ["age", "zip"], rule) == has_blanks(frame, ["age", "zip"], rule)
        assert (
            suppressed_records(categorical, ["age", "zip"]).tolist()
            == suppressed_records(frame, ["age", "zip"]).tolist()
        )
        objects, codes = _release(frame, rule), _release(categorical, rule)
        assert codes.class_sizes().tolist() == objects.class_sizes().tolist()
        verdict = k_anonymity.check(codes, k_anonymity.params({"k": k}))
        assert verdict.holds == k_anonymity.check(objects, k_anonymity.params({"k": k})).holds


def test_suppressed_records_of_a_categorical_release_match_any_value():
    frame = pd.DataFrame({"age": ["20-29"] * 5 + ["*"], "zip": ["1**"] * 5 + ["*"], "disease": ["flu"] * 6})
    frame = frame.astype({"age": "category", "zip": "category"})
    k5 = make_registry().privacy_model("k-anonymity")
    assert not k5.check(_release(frame, None), k5.params({"k": 5})).holds  # written values: a group of one
    assert k5.check(_release(frame, ANY_VALUE), k5.params({"k": 5})).holds
    assert _release(frame, ANY_VALUE).class_sizes().tolist() == [5] * 5 + [6]
    blank = frame.copy()
    blank.loc[0, "age"] = None  # a blank matching any value: record 0 now joins every group
    assert has_blanks(blank, ["age", "zip"], ANY_VALUE) and not has_blanks(blank.iloc[1:5], ["age", "zip"], ANY_VALUE)
    assert _release(blank, ANY_VALUE).class_sizes().tolist() == [5] * 5 + [6]


def test_a_failing_verdict_counts_records_not_overlapping_group_sizes():
    """Where a suppressed record matches any value, the groups overlap (it counts in each): the summary
    still says how many of the release's records are in groups smaller than k, out of all of them."""
    frame = pd.DataFrame(
        {
            "age": ["20-29"] * 3 + ["30-39"] * 2 + ["*"] * 2,
            "zip": ["1**"] * 3 + ["2**"] * 2 + ["*"] * 2,
            "disease": ["flu", "hiv", "flu", "cold", "flu", "flu", "hiv"],
        }
    )
    k6 = make_registry().privacy_model("k-anonymity")
    verdict = k6.check(_release(frame, ANY_VALUE), k6.params({"k": 6}))
    # groups: 3 + 2 records, each with the 2 suppressed ones (sizes 5 and 4), the suppressed ones' group
    # the whole table (7): the 5 records of the two small groups fail, of 7 (not "9 of 16")
    assert not verdict.holds and len(verdict.failing_rows) == 5
    assert verdict.message.startswith("fails: 5 of 7 records are in groups smaller than k = 6"), verdict.message
