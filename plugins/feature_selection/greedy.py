"""Privacy-aware feature selection (paper 000, docs/reference.md#feature-selection): Greedy-HamDist,
Greedy-DistCnt, Maximal
and CM Greedy.

Each method grows a feature set S under the run's privacy model: with ``k-ac`` they are the paper's
own methods, with ``k-anonymity`` its k-anonymity baselines. The model decides feasibility through
its selection constraint, which answers "may f join S?" incrementally from the classes of D_S
(never recomputing kac from scratch). Tie-breaking is that of docs/reference.md#feature-selection, so
selections are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import (
    BINARY,
    MAXIMAL_ITEMSETS,
    Algorithm,
    BadInput,
    BinaryMatrix,
    Judgement,
    SearchOptions,
    feature_subset,
    have_numba,
    have_pyfim,
    hookimpl,
    longest_itemsets,
    mine,
    param,
    partition_of,
)


from .._fwell import PRIVATE_LAMBDA, private_fwell_weights, ranking
from ._common import (
    cm,
    cm_penalty,
    distcnt,
    distcnt_gains,
    greedy_hamdist,
    hamdist_scores,
    positive_mask,
    split_label_counts,
)

PAPER = "000_0106b4def2026c16"
SCORES = ("hamdist", "private-fwell")


def _constraint(model, matrix):
    if model is None:
        raise BadInput("this method selects features under a privacy model; choose k-ac or k-anonymity")
    return model.selection_constraint(matrix)


def _release(matrix: BinaryMatrix, selected: list[int], details: dict, model_name: str):
    notes = []
    if not selected:
        notes.append(
            f"no feature can be released under {model_name}: every candidate breaks the privacy "
            f"model, so the release holds the class only"
        )
    details = {**details, "selected_indices": [int(j) for j in selected]}
    return feature_subset(matrix, selected, notes=tuple(notes), details=details)


def _useful(matrix: BinaryMatrix, scores: np.ndarray) -> np.ndarray:
    """Features that can separate anything: at least one 1 and not constant."""
    counts = matrix.column_counts()
    return (counts > 0) & (counts < matrix.n_rows) & (scores > 0)


class _Selection(Algorithm):
    """A feature-selection method that grows S under the run's privacy model."""

    paper = PAPER
    accepts = (BINARY,)
    needs_labels = True
    needs_model = True
    satisfies = (Judgement.FEATURE_SETS,)  # S grows under the model's selection constraint

    def select(self, matrix, constraint, params, ctx) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def run(self, data, model, params, ctx):
        constraint = _constraint(model, data)
        selected = self.select(data, constraint, params, ctx)
        return _release(data, selected, {"privacy_value": constraint.value()}, model.name)


def _first_feasible(constraint, ordered, alive: np.ndarray, worth, ctx=None) -> int | None:
    """The first candidate, in order, that the privacy model allows; None once a candidate is no
    longer worth adding (``worth(f)`` false) or none is left. A candidate found infeasible is dropped
    for good: k-AC and k-anonymity are downward closed (Lemma 2), so it stays infeasible as S grows.

    Cancellation is checked before every feasibility test (one pass over the records each): on
    BASEHOCK the first pass tests thousands of candidates, seconds of work."""
    for f in ordered:
        if ctx is not None:
            ctx.check()
        f = int(f)
        if not worth(f):
            return None
        if constraint.feasible(f):
            return f
        alive[f] = False
    return None


# -- Greedy-HamDist (Algorithm 2) ---------------------------------------------------------------------
@dataclass(frozen=True)
class HamDistParams:
    on_violation: str = param(
        "skip",
        choices=("skip", "stop"),
        help="on a feature that breaks the model: skip it and try the next (the paper's "
        "text), or stop (its printed Algorithm 2)",
    )
    skip_zero_score: bool = param(
        True, help="never select a feature with HamDist 0 (constant columns separate no positive–negative pair)"
    )
    score: str = param(
        "hamdist",
        choices=SCORES,
        help="the order features are tried in: HamDist({f}) (the paper's), or Private FWELL's "
        "ε-differentially private weights (paper 003), so the ranking itself is private",
    )
    epsilon: float = param(
        1.0,
        minimum=0,
        exclusive_minimum=True,
        label="ε",
        help="with score = private-fwell: the privacy budget ε of the ranking",
    )
    lam: float = param(
        PRIVATE_LAMBDA,
        minimum=0,
        exclusive_minimum=True,
        label="λ",
        help="with score = private-fwell: FWELL's λ, fixed in advance (choosing it on the data is not covered by ε)",
    )


class GreedyHamDist(_Selection):
    name = "greedy-hamdist"
    title = "Greedy-HamDist"
    description = (
        "Adds features in order of their Hamming-distance utility, keeping each one the privacy model "
        "allows (paper 000, Algorithm 2)."
    )
    Params = HamDistParams

    def select(self, matrix, constraint, params, ctx):
        return greedy_hamdist(matrix, constraint, params.on_violation, params.skip_zero_score, ctx)[0]

    def run(self, data, model, params, ctx):
        if params.score == "hamdist":
            return super().run(data, model, params, ctx)
        constraint = _constraint(model, data)
        weights, _, details = private_fwell_weights(
            data, float(params.epsilon), params.lam, "lbfgs", model.name, ctx.child(0.0, 0.5)
        )
        order = [int(f) for f in ranking(weights)]
        selected = greedy_hamdist(
            data, constraint, params.on_violation, params.skip_zero_score, ctx.child(0.5, 1.0), order
        )[0]
        details = {**details, "privacy_value": constraint.value(), "score": "private-fwell"}
        return _release(data, selected, details, model.name)


# -- Greedy-DistCnt (Algorithm 3) ---------------------------------------------------------------------
@dataclass(frozen=True)
class DistCntParams:
    stop_at_zero_gain: bool = param(True, help="stop when the best feasible feature distinguishes no new pair")


def greedy_distcnt(matrix: BinaryMatrix, constraint, stop_at_zero_gain: bool = True, ctx=None) -> list[int]:
    """Repeatedly add the feasible feature with the largest DistCnt gain (ties: larger HamDist, then
    lower index). Infeasible features are dropped for good: by downward closure (Lemma 2) a feature
    that breaks the model for S breaks it for every superset of S."""
    pos = positive_mask(matrix)
    hd = hamdist_scores(matrix, pos)
    csc = matrix.to_sparse().astype(np.int64)
    alive = np.ones(matrix.n_features, dtype=bool)
    index = np.arange(matrix.n_features)
    part = constraint.partition
    while alive.any():
        if ctx is not None:
            ctx.progress(
                len(constraint.selected) / max(matrix.n_features, 1),
                f"Greedy-DistCnt: {len(constraint.selected)} features selected",
            )
        p1, n1, posg, negg = split_label_counts(matrix, part.row_classes(), part.n_classes, pos, csc)
        gains = distcnt_gains(p1, n1, posg, negg)
        candidates = index[alive]
        order = candidates[np.lexsort((candidates, -hd[candidates], -gains[candidates]))]
        chosen = _first_feasible(constraint, order, alive, lambda f: not stop_at_zero_gain or gains[f] > 0, ctx)
        if chosen is None:
            break
        constraint.add(chosen)
        alive[chosen] = False
    return constraint.selected


class GreedyDistCnt(_Selection):
    name = "greedy-distcnt"
    title = "Greedy-DistCnt"
    description = (
        "Repeatedly adds the feature that distinguishes the most new positive–negative pairs while the "
        "privacy model holds (paper 000, Algorithm 3)."
    )
    Params = DistCntParams

    def select(self, matrix, constraint, params, ctx):
        return greedy_distcnt(matrix, constraint, params.stop_at_zero_gain, ctx)


# -- CM Greedy (baseline) -----------------------------------------------------------------------------
def cm_greedy(matrix: BinaryMatrix, constraint, k: int, ctx=None) -> list[int]:
    """Forward selection minimising Iyengar's CM; candidates must keep the model; stops when no
    feasible feature lowers CM (ties: larger HamDist, then lower index)."""
    pos = positive_mask(matrix)
    hd = hamdist_scores(matrix, pos)
    csc = matrix.to_sparse().astype(np.int64)
    alive = np.ones(matrix.n_features, dtype=bool)
    index = np.arange(matrix.n_features)
    part = constraint.partition
    current = cm(pos, part.row_classes(), k)
    while alive.any():
        if ctx is not None:
            ctx.progress(
                len(constraint.selected) / max(matrix.n_features, 1),
                f"CM Greedy: {len(constraint.selected)} features, CM = {current}",
            )
        candidates = index[alive]
        p1, n1, posg, negg = split_label_counts(matrix, part.row_classes(), part.n_classes, pos, csc[:, candidates])
        p1, n1 = p1.toarray(), n1.toarray()
        after = (cm_penalty(p1, n1, k) + cm_penalty(posg[:, None] - p1, negg[:, None] - n1, k)).sum(axis=0)
        cm_after = np.zeros(matrix.n_features, dtype=np.int64)
        cm_after[candidates] = after
        order = candidates[np.lexsort((candidates, -hd[candidates], after))]
        chosen = _first_feasible(constraint, order, alive, lambda f: cm_after[f] < current, ctx)
        if chosen is None:
            break
        constraint.add(chosen)
        alive[chosen] = False
        current = int(cm_after[chosen])
    return constraint.selected


class CMGreedy(_Selection):
    name = "cm-greedy"
    title = "CM Greedy"
    description = (
        "Baseline: greedy forward selection minimising Iyengar's classification metric CM, candidates "
        "kept under the privacy model (paper 000, Tables 4–6)."
    )
    Params = None

    def select(self, matrix, constraint, params, ctx):
        return cm_greedy(matrix, constraint, constraint.k, ctx)


# -- Maximal (Algorithm 1) ----------------------------------------------------------------------------
@dataclass(frozen=True)
class MaximalParams:
    top_r: int = param(
        50,
        minimum=1,
        help="how many of the largest maximal itemsets to score (the paper's value was lost; 50 by default)",
    )
    criterion: str = param("hamdist", choices=("hamdist", "distcnt"), help="utility used to pick the best itemset")
    backend: str = param(
        "auto",
        choices=("auto", "longest", "longest-items", "longest-records", "pyfim", "numpy"),
        help="itemset miner: auto chooses by the data (see docs/feature_selection.md#maximal); "
        "longest searches only the top_r longest maximal itemsets with length pruning, "
        "longest-items by enumerating items (compiled, needs numba), longest-records by "
        "enumerating records (Borgelt's C miners, needs pyfim); pyfim and numpy enumerate "
        "every maximal itemset (the exhaustive path)",
    )
    max_seconds: float = param(600.0, minimum=1.0, help="the itemset search stops with a message after this long")


# the longest-pattern search behind each of Maximal's backends that uses one
_LONGEST = {"longest": "auto", "longest-items": "dfs", "longest-records": "pyfim"}


# auto enumerates the records once more than this many items per record reach support k (measured on the
# FIMI sets and paper 000's text tables, docs/feature_selection.md#maximal)
RECORDS_SIDE = 2


def maximal_backend(matrix: BinaryMatrix, k: int) -> tuple[str, str]:
    """(backend, reason): what ``backend=auto`` runs on this data (docs/feature_selection.md#maximal).

    A longest-pattern search enumerates one side of the table and prunes on the other: the items
    (the compiled search) unless more than ``RECORDS_SIDE`` times as many items as records reach
    support k, the records (row enumeration in the C miners) then."""
    frequent = int((matrix.column_counts() >= k).sum())
    rows = matrix.n_rows
    wide = frequent > RECORDS_SIDE * rows
    if not wide and have_numba():
        return "longest-items", (
            f"{frequent} items of support ≥ {k} on {rows} records, at most {RECORDS_SIDE}× as many: enumerate the items"
        )
    if wide and have_pyfim():
        return "longest-records", (
            f"{frequent} items of support ≥ {k} on {rows} records, more than "
            f"{RECORDS_SIDE}× as many: enumerate the records"
        )
    return "longest", "the longest-pattern search's own choice (the library for the chosen side is missing)"


def maximal(
    matrix: BinaryMatrix,
    k: int,
    top_r: int = 50,
    criterion: str = "hamdist",
    backend: str = "auto",
    ctx=None,
    max_seconds: float | None = None,
) -> tuple[list[int], list]:
    """The best of the ``top_r`` largest maximal frequent itemsets (absolute support ≥ k). Every
    frequent itemset is k-AC feasible (Lemma 3). ``backend="auto"`` is :func:`maximal_backend`'s choice."""
    pos = positive_mask(matrix)
    if backend == "auto":
        backend = maximal_backend(matrix, k)[0]
    if ctx is not None:
        ctx.progress(0.0, "mining maximal itemsets")
    check = ctx.check if ctx is not None else None
    if backend in _LONGEST:
        options = SearchOptions(threads=ctx.threads) if ctx is not None else SearchOptions()
        found = longest_itemsets(
            matrix,
            k,
            top_r,
            target=MAXIMAL_ITEMSETS,
            max_seconds=max_seconds,
            check=check,
            options=options,
            backend=_LONGEST[backend],
        ).patterns
    else:
        found = mine(matrix, k, MAXIMAL_ITEMSETS, backend=backend, largest=top_r, check=check, max_seconds=max_seconds)
    candidates = found[:top_r]  # mine() orders by size descending, then by the items
    if not candidates:
        return [], []
    if ctx is not None:
        ctx.progress(0.8, f"scoring {len(candidates)} maximal itemsets")
    if criterion == "hamdist":
        hd = hamdist_scores(matrix, pos)
        scores = [int(hd[list(items)].sum()) for items, _ in candidates]
    else:
        scores = []
        for items, _ in candidates:  # a partition of the records per itemset, refined an item at a time
            scores.append(distcnt(matrix, pos, partition_of(matrix, items, check, containment=False).row_classes()))
    best = int(np.argmax(scores))  # the first (largest, then lexicographically smallest) among equals
    return list(candidates[best][0]), [(list(i), s, sc) for (i, s), sc in zip(candidates, scores)]


class Maximal(Algorithm):
    name = "maximal"
    title = "Maximal"
    paper = PAPER
    description = (
        "Mines the maximal frequent itemsets with support ≥ k and releases the best of the largest ones "
        "(paper 000, Algorithm 1). Needs the k-ac model."
    )
    accepts = (BINARY,)
    needs_labels = True
    needs_model = True
    satisfies = (Judgement.CONTAINMENT,)  # frequent itemsets are feasible under k-AC (Lemma 3), not k-anonymity
    Params = MaximalParams

    def run(self, data, model, params, ctx):
        k = model.param("k")
        if k > data.n_rows:
            raise BadInput(f"k = {k} is larger than the number of records ({data.n_rows})")
        backend, why = (
            maximal_backend(data, k) if params.backend == "auto" else (params.backend, "chosen in the parameters")
        )
        selected, scored = maximal(data, k, params.top_r, params.criterion, backend, ctx, params.max_seconds)
        details = {
            "backend": backend,
            "backend_reason": why,
            "candidates": [
                {"itemset": [data.feature_names[j] for j in items], "support": s, "score": sc}
                for items, s, sc in scored
            ],
        }
        return _release(data, selected, details, model.name)


@hookimpl
def veil_register_algorithms():
    return [GreedyHamDist, GreedyDistCnt, CMGreedy, Maximal]
