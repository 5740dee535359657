"""Paper 000 (docs/reference.md#feature-selection) against brute-force definitions on small random matrices."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.engine import (
    CLOSED_ITEMSETS,
    FREQUENT_ITEMSETS,
    MAXIMAL_ITEMSETS,
    BadInput,
    BinaryMatrix,
    KacConstraint,
    KAnonymityConstraint,
    PluginCall,
    RunSpec,
    execute,
    kac,
    kac_per_record,
    make_registry,
    mine,
    partition_of,
)
from veil.plugins.feature_selection.greedy import cm_greedy, greedy_distcnt, greedy_hamdist, maximal, maximal_backend
from veil.plugins.feature_selection._common import (
    distcnt_gains,
    hamdist,
    hamdist_scores,
    positive_mask,
    split_label_counts,
)

REGISTRY = make_registry()


# -- brute-force definitions, written from docs/reference.md#feature-selection without any of Veil's kernels
# -- ---------------------------
def bf_kac_record(D, S):
    sub = D[:, S]
    return [int(np.sum(np.all(sub >= sub[u], axis=1))) for u in range(len(D))]


def bf_kac(D, S):
    return min(bf_kac_record(D, S)) if len(D) else 0


def bf_k_anonymity(D, S):
    sub = D[:, S]
    return min(int(np.sum(np.all(sub == sub[u], axis=1))) for u in range(len(D)))


def bf_hamdist(D, y, S):
    P, N = D[y], D[~y]
    return sum(int((p[S] != q[S]).sum()) for p in P for q in N) / (len(P) * len(N))


def bf_distcnt(D, y, S):
    P, N = D[y], D[~y]
    return sum(1 for p in P for q in N if (p[S] != q[S]).any())


def bf_cm(D, y, S, k):
    sub = D[:, S]
    total = 0
    for u in range(len(D)):
        same = np.all(sub == sub[u], axis=1)
        if same.sum() < k:
            total += 1
        else:
            pos, neg = int((same & y).sum()), int((same & ~y).sum())
            total += (pos < neg and y[u]) or (neg < pos and not y[u]) or (pos == neg and not y[u])
    return total


def feasible(D, S, k, model):
    return (bf_kac(D, S) if model == "k-ac" else bf_k_anonymity(D, S)) >= k


def ref_greedy_hamdist(D, y, k, model, on_violation="skip"):
    scores = [bf_hamdist(D, y, [f]) for f in range(D.shape[1])]
    order = sorted(range(D.shape[1]), key=lambda f: (-scores[f], f))
    S = []
    for f in order:
        if scores[f] <= 0:
            break
        if feasible(D, S + [f], k, model):
            S.append(f)
        elif on_violation == "stop":
            break
    return S


def ref_greedy_distcnt(D, y, k, model, stop_at_zero_gain=True):
    hd = [bf_hamdist(D, y, [f]) for f in range(D.shape[1])]
    S = []
    while True:
        options = [
            (bf_distcnt(D, y, S + [f]) - bf_distcnt(D, y, S), f)
            for f in range(D.shape[1])
            if f not in S and feasible(D, S + [f], k, model)
        ]
        if not options:
            return S
        gain, f = min(options, key=lambda o: (-o[0], -hd[o[1]], o[1]))
        if stop_at_zero_gain and gain <= 0:
            return S
        S.append(f)


def ref_cm_greedy(D, y, k, model):
    hd = [bf_hamdist(D, y, [f]) for f in range(D.shape[1])]
    S = []
    current = bf_cm(D, y, S, k)
    while True:
        options = [
            (bf_cm(D, y, S + [f], k), f) for f in range(D.shape[1]) if f not in S and feasible(D, S + [f], k, model)
        ]
        if not options:
            return S
        value, f = min(options, key=lambda o: (o[0], -hd[o[1]], o[1]))
        if value >= current:
            return S
        S.append(f)
        current = value


def labelled(D, y):
    return BinaryMatrix.from_dense(D, labels=np.where(y, 1, -1))


matrices = (
    st.tuples(st.integers(4, 24), st.integers(1, 6), st.integers(0, 2**31 - 1), st.floats(0.15, 0.7))
    .map(lambda t: np.random.default_rng(t[2]).random((t[0], t[1])) < t[3])
    .map(lambda a: a.astype(np.uint8))
)


def with_labels(D, seed=0):
    y = np.random.default_rng(seed).random(len(D)) < 0.5
    y[0], y[-1] = True, False
    return y


# -- privacy models ------------------------------------------------------------------------------------
@given(matrices, st.data())
@settings(max_examples=80, deadline=None)
def test_kac_and_k_anonymity_against_definitions(D, data):
    M = BinaryMatrix.from_dense(D)
    S = sorted(data.draw(st.sets(st.integers(0, D.shape[1] - 1))))
    assert list(kac_per_record(M, S)) == bf_kac_record(D, S)
    part = partition_of(M, S)
    assert part.smallest_class() == bf_k_anonymity(D, S)
    k = data.draw(st.integers(1, len(D)))
    frame = pd.DataFrame(D[:, S], columns=[f"f{j}" for j in S])
    from veil.engine import Release

    release = Release("feature-subset", frame, tuple(frame.columns))
    kac_verdict = REGISTRY.privacy_model("k-ac").check(release, REGISTRY.get("privacy-model", "k-ac").params({"k": k}))
    kan_verdict = REGISTRY.privacy_model("k-anonymity").check(
        release, REGISTRY.get("privacy-model", "k-anonymity").params({"k": k})
    )
    assert kac_verdict.holds == (bf_kac(D, S) >= k) and kac_verdict.value == bf_kac(D, S)
    assert kan_verdict.holds == (bf_k_anonymity(D, S) >= k)
    assert not kan_verdict.holds or kac_verdict.holds, "Lemma 1: k-anonymity implies k-AC"


@given(matrices, st.data())
@settings(max_examples=60, deadline=None)
def test_downward_closure_and_frequent_itemsets_are_feasible(D, data):
    M = BinaryMatrix.from_dense(D)
    S = sorted(data.draw(st.sets(st.integers(0, D.shape[1] - 1), min_size=1)))
    sub = sorted(data.draw(st.sets(st.sampled_from(S))))
    assert kac(M, sub) >= kac(M, S), "Lemma 2: k-AC is downward closed"
    support = int(np.all(D[:, S] == 1, axis=1).sum())
    assert kac(M, S) >= support, "Lemma 3: a frequent itemset with support k is k-AC feasible"


def test_feasible_family_is_larger_than_frequent_itemsets():
    D = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    M = BinaryMatrix.from_dense(D)
    assert kac(M, [0, 1]) == 2 and M.support([0, 1]) == 0  # the counterexample of docs/reference.md#feature-selection


def test_kac_of_a_row_without_ones_is_n():
    M = BinaryMatrix.from_dense(np.array([[0, 0], [1, 0], [1, 1]]))
    assert kac_per_record(M, [0, 1]).tolist() == [3, 2, 1]


# -- utility functions -------------------------------------------------------------------------------
@given(matrices)
@settings(max_examples=60, deadline=None)
def test_hamdist_is_modular_and_matches_definition(D):
    y = with_labels(D)
    M = labelled(D, y)
    pos = positive_mask(M)
    assert np.array_equal(pos, y)
    m = D.shape[1]
    for S in ([], list(range(m)), list(range(0, m, 2))):
        assert hamdist(M, pos, S) == pytest.approx(bf_hamdist(D, y, S) if S else 0.0)
    scores = hamdist_scores(M, pos, normalise=True)
    assert sum(scores) == pytest.approx(bf_hamdist(D, y, list(range(m))))


@given(matrices, st.data())
@settings(max_examples=60, deadline=None)
def test_distcnt_gains_against_brute_force(D, data):
    y = with_labels(D)
    M = labelled(D, y)
    S = sorted(data.draw(st.sets(st.integers(0, D.shape[1] - 1))))
    part = partition_of(M, S)
    gains = distcnt_gains(*split_label_counts(M, part.row_classes(), part.n_classes, y))
    for f in range(D.shape[1]):
        assert gains[f] == bf_distcnt(D, y, S + [f]) - bf_distcnt(D, y, S)


# -- methods against plain reference implementations of docs/reference.md#feature-selection
# -- --------------------------------------------
@given(matrices, st.integers(1, 4), st.sampled_from(["k-ac", "k-anonymity"]), st.sampled_from(["skip", "stop"]))
@settings(max_examples=60, deadline=None)
def test_greedy_hamdist_equals_reference(D, k, model, on_violation):
    k = min(k, len(D))
    y = with_labels(D)
    M = labelled(D, y)
    constraint = (KacConstraint if model == "k-ac" else KAnonymityConstraint)(M, k)
    selected, _ = greedy_hamdist(M, constraint, on_violation)
    assert selected == ref_greedy_hamdist(D, y, k, model, on_violation)


@given(matrices, st.integers(1, 4), st.sampled_from(["k-ac", "k-anonymity"]), st.booleans())
@settings(max_examples=60, deadline=None)
def test_greedy_distcnt_equals_reference(D, k, model, stop):
    k = min(k, len(D))
    y = with_labels(D)
    M = labelled(D, y)
    constraint = (KacConstraint if model == "k-ac" else KAnonymityConstraint)(M, k)
    assert greedy_distcnt(M, constraint, stop) == ref_greedy_distcnt(D, y, k, model, stop)


@given(matrices, st.integers(1, 4), st.sampled_from(["k-ac", "k-anonymity"]))
@settings(max_examples=40, deadline=None)
def test_cm_greedy_equals_reference(D, k, model):
    k = min(k, len(D))
    y = with_labels(D)
    M = labelled(D, y)
    constraint = (KacConstraint if model == "k-ac" else KAnonymityConstraint)(M, k)
    assert cm_greedy(M, constraint, k) == ref_cm_greedy(D, y, k, model)


# -- mining and Maximal -------------------------------------------------------------------------------
def bf_frequent(D, k):
    m = D.shape[1]
    return {
        S: int(np.all(D[:, list(S)] == 1, axis=1).sum())
        for r in range(1, m + 1)
        for S in itertools.combinations(range(m), r)
        if np.all(D[:, list(S)] == 1, axis=1).sum() >= k
    }


@pytest.mark.parametrize("backend", ["pyfim", "numpy"])
@given(D=matrices, k=st.integers(1, 5))
@settings(max_examples=40, deadline=None)
def test_miners_against_brute_force(backend, D, k):
    if backend == "pyfim":
        pytest.importorskip("fim")
    M = BinaryMatrix.from_dense(D)
    freq = bf_frequent(D, k)
    maximal_bf = {S for S in freq if not any(set(S) < set(T) for T in freq)}
    closed_bf = {S for S in freq if not any(set(S) < set(T) and freq[T] == freq[S] for T in freq)}
    assert {s for s, _ in mine(M, k, MAXIMAL_ITEMSETS, backend=backend)} == maximal_bf
    assert {s for s, _ in mine(M, k, CLOSED_ITEMSETS, backend=backend)} == closed_bf
    assert dict(mine(M, k, FREQUENT_ITEMSETS, backend=backend)) == freq


@given(matrices, st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_maximal_returns_the_best_of_the_largest_maximal_itemsets(D, k):
    k = min(k, len(D))
    y = with_labels(D)
    M = labelled(D, y)
    selected, scored = maximal(M, k, top_r=50, backend="numpy")
    freq = bf_frequent(D, k)
    if not freq:
        assert selected == []
        return
    assert tuple(selected) in freq, "frequent"
    assert not any(set(selected) < set(T) for T in freq), "maximal"
    assert bf_kac(D, selected) >= k
    maximal_sets = sorted((S for S in freq if not any(set(S) < set(T) for T in freq)), key=lambda S: (-len(S), S))
    top = maximal_sets[:50]
    scores = [bf_hamdist(D, y, list(S)) for S in top]
    assert tuple(selected) == top[int(np.argmax(scores))], "the best-scoring of the largest, first among equals"


@given(matrices, st.integers(1, 4), st.integers(1, 6))
@settings(max_examples=40, deadline=None)
def test_maximal_with_the_longest_miner_is_the_exhaustive_path(D, k, top_r):
    k = min(k, len(D))
    M = labelled(D, with_labels(D))
    assert maximal(M, k, top_r=top_r, backend="longest") == maximal(M, k, top_r=top_r, backend="numpy")


# Maximal's backend=auto enumerates the items (compiled search) unless more than twice as many items as records
# reach support k, the records (C miners' row enumeration) then (docs/feature_selection.md#maximal)
def _tall_dense(seed=0):
    """Records much more numerous than items, dense (chess- or mushroom-like)."""
    return (np.random.default_rng(seed).random((300, 12)) < 0.6).astype(np.uint8)


def _wide_sparse(seed=0):
    """Few records over many items (a document–word table)."""
    return (np.random.default_rng(seed).random((20, 200)) < 0.1).astype(np.uint8)


def test_auto_enumerates_items_on_tall_data_and_records_on_wide_data():
    pytest.importorskip("fim")
    pytest.importorskip("numba")
    tall, wide = _tall_dense(), _wide_sparse()
    assert maximal_backend(labelled(tall, with_labels(tall)), 3)[0] == "longest-items"
    assert maximal_backend(labelled(wide, with_labels(wide)), 2)[0] == "longest-records"
    # the items counted are those that reach support k: a wide table whose items are mostly rare is tall
    rare = wide.copy()
    rare[:, 5:] = 0
    rare[:3, 5:] = np.eye(3, 195, dtype=np.uint8)
    assert maximal_backend(labelled(rare, with_labels(rare)), 2)[0] == "longest-items"
    # the side flips only past twice as many items as records (a text table at a larger k is still items)
    D = np.ones((20, 40), dtype=np.uint8)
    assert maximal_backend(labelled(D, with_labels(D)), 2)[0] == "longest-items"
    D = np.ones((20, 41), dtype=np.uint8)
    assert maximal_backend(labelled(D, with_labels(D)), 2)[0] == "longest-records"


@pytest.mark.parametrize("shape", ["tall", "wide"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [2, 4])
def test_every_maximal_backend_gives_the_exhaustive_answer(shape, seed, k):
    pytest.importorskip("fim")
    D = _tall_dense(seed) if shape == "tall" else _wide_sparse(seed)
    M = labelled(D, with_labels(D, seed))
    expected = maximal(M, k, top_r=5, backend="numpy")
    assert expected[0], "a case with something to select"
    for backend in ("auto", "longest", "longest-items", "longest-records", "pyfim"):
        assert maximal(M, k, top_r=5, backend=backend) == expected, backend


@pytest.mark.parametrize("backend, shown", [("auto", "longest-items"), ("pyfim", "pyfim")])
def test_the_run_records_the_backend_it_used(backend, shown):
    pytest.importorskip("fim")
    pytest.importorskip("numba")
    D = _tall_dense()
    spec = RunSpec(PluginCall("maximal", {"backend": backend, "top_r": 5}), PluginCall("k-ac", {"k": 3}))
    details = execute(REGISTRY, labelled(D, with_labels(D)), spec).release.details
    assert details["backend"] == shown
    assert ("enumerate the items" in details["backend_reason"]) == (backend == "auto")


# -- through the run path -----------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["greedy-hamdist", "greedy-distcnt", "cm-greedy", "maximal"])
@pytest.mark.parametrize("model", ["k-ac", "k-anonymity"])
@pytest.mark.parametrize("k", [2, 5])
def test_every_release_passes_its_own_model(method, model, k):
    rng = np.random.default_rng(k)
    D = (rng.random((80, 9)) < 0.3).astype(np.uint8)
    M = labelled(D, with_labels(D, k))
    spec = RunSpec(PluginCall(method), PluginCall(model, {"k": k}), metrics=("sfc",))
    if method == "maximal" and model == "k-anonymity":
        with pytest.raises(BadInput, match="works under k-ac"):
            execute(REGISTRY, M, spec)
        return
    result = execute(REGISTRY, M, spec)
    assert result.verdict.holds and result.verdict.value >= k
    assert result.metrics["sfc"] == len(result.release.selected_features)


def test_empty_selection_is_explained_not_an_error():
    D = np.eye(6, dtype=np.uint8)  # every feature singles out one record
    M = labelled(D, np.array([1, 0, 1, 0, 1, 0], dtype=bool))
    result = execute(REGISTRY, M, RunSpec(PluginCall("greedy-distcnt"), PluginCall("k-ac", {"k": 2})))
    assert result.release.selected_features == () and result.verdict.holds
    assert "no feature can be released" in result.release.notes[0]


@pytest.mark.parametrize("labels, words", [(None, "needs a target"), ([1] * 6, "two classes")])
def test_labels_are_required(labels, words):
    M = BinaryMatrix.from_dense(np.eye(6, dtype=np.uint8), labels=labels)
    with pytest.raises(BadInput, match=words):
        execute(REGISTRY, M, RunSpec(PluginCall("greedy-hamdist"), PluginCall("k-ac", {"k": 2})))


@pytest.mark.parametrize("k, words", [(0, "≥ 1"), (7, "larger than the number of records")])
def test_bad_k(k, words):
    M = labelled(np.eye(6, dtype=np.uint8), np.array([1, 0] * 3, dtype=bool))
    with pytest.raises(BadInput, match=words):
        execute(REGISTRY, M, RunSpec(PluginCall("greedy-hamdist"), PluginCall("k-ac", {"k": k})))


def test_method_needs_a_model():
    M = labelled(np.eye(6, dtype=np.uint8), np.array([1, 0] * 3, dtype=bool))
    with pytest.raises(BadInput, match="needs a privacy model"):
        execute(REGISTRY, M, RunSpec(PluginCall("greedy-hamdist")))


def test_all_zero_column_is_never_selected():
    rng = np.random.default_rng(3)
    D = (rng.random((40, 5)) < 0.5).astype(np.uint8)
    D[:, 2] = 0
    M = labelled(D, with_labels(D))
    for method in ("greedy-hamdist", "greedy-distcnt"):
        result = execute(REGISTRY, M, RunSpec(PluginCall(method), PluginCall("k-ac", {"k": 1})))
        assert "f3" not in result.release.selected_features


@given(matrices, st.integers(1, 3), st.integers(1, 6))
@settings(max_examples=40, deadline=None)
def test_largest_keeps_the_same_top_as_a_full_sort(D, k, count):
    M = BinaryMatrix.from_dense(D)
    full = mine(M, k, MAXIMAL_ITEMSETS, backend="numpy")
    assert mine(M, k, MAXIMAL_ITEMSETS, backend="numpy", largest=count) == full[:count]


# -- cancellation is checked per unit of work: counted, never timed ---------------------
class CountingContext:
    """A Context stand-in that counts cancellation checks (``progress`` checks too)."""

    def __init__(self):
        from veil.engine import Context

        self._ctx = Context(0)
        self.checks = 0

    def check(self):
        self.checks += 1

    def progress(self, fraction, message=""):
        self.check()

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def counting(constraint_cls):
    """The constraint, counting its feasibility tests (each a pass over the records)."""

    class Counting(constraint_cls):
        tests = 0

        def feasible(self, f):
            type(self).tests += 1
            return super().feasible(f)

    return Counting


@pytest.mark.parametrize("select", ["hamdist", "distcnt", "cm"])
@pytest.mark.parametrize("model", [KacConstraint, KAnonymityConstraint])
def test_every_feasibility_test_is_preceded_by_a_cancellation_check(select, model):
    rng = np.random.default_rng(3)
    dense = (rng.random((300, 60)) < 0.3).astype(np.uint8)
    matrix = BinaryMatrix.from_dense(dense, labels=rng.integers(0, 2, 300))
    constraint = counting(model)(matrix, 40)  # a strict k: most candidates are tested and refused
    ctx = CountingContext()
    if select == "hamdist":
        greedy_hamdist(matrix, constraint, ctx=ctx)
    elif select == "distcnt":
        greedy_distcnt(matrix, constraint, ctx=ctx)
    else:
        cm_greedy(matrix, constraint, 40, ctx=ctx)
    assert type(constraint).tests > (1 if select == "cm" else 10)  # the case does real work
    assert ctx.checks >= type(constraint).tests


@pytest.mark.parametrize("backend", ["auto", "pyfim", "numpy"])
def test_maximal_ends_at_its_time_limit_with_a_message(backend):
    """Dense random records at k = 2 hold far too many maximal itemsets to enumerate in 0.5 s."""
    from veil.engine import MiningLimit, have_pyfim

    if backend == "pyfim" and not have_pyfim():
        pytest.skip("pyfim not installed")
    x = (np.random.default_rng(1).random((3000, 60)) < 0.5).astype(np.uint8)
    M = labelled(x, with_labels(x))
    with pytest.raises(MiningLimit, match=r"stopped after 0.5 s"):
        maximal(M, 2, top_r=10**6, backend=backend, max_seconds=0.5)
