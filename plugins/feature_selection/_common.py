"""Shared pieces of the feature-selection methods of paper 000 (docs/reference.md#feature-selection): labels,
HamDist, DistCnt and CM scores on a BinaryMatrix, and Greedy-HamDist (Algorithm 2, :func:`greedy_hamdist`),
which the DP selection also runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from veil.engine import BadInput, BinaryMatrix

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp


def positive_mask(matrix: BinaryMatrix) -> np.ndarray:
    """Which rows are positive. Two classes are required.

    The positive class is the larger value for numeric labels (+1 of ±1, 1 of 0/1) and the first in
    sorted order for text labels (Adult's "<=50K", the paper's positive class). No score depends
    on the orientation; it only names P and N.
    """
    labels = matrix.labels
    if labels is None:
        raise BadInput("this method needs class labels; mark a target column")
    values = np.asarray(labels)
    present = values[~_missing(values)] if values.dtype.kind in "fO" else values
    if len(present) != len(values):
        raise BadInput("the target column has missing values; drop or fill those records first")
    classes = np.unique(values)
    if len(classes) != 2:
        raise BadInput(f"this method needs exactly two classes in the target, found {len(classes)}")
    positive = classes.max() if values.dtype.kind in "iufb" else classes[0]
    return values == positive


def _missing(values: np.ndarray) -> np.ndarray:
    import pandas as pd

    return pd.isna(values)


def ones_per_class(matrix: BinaryMatrix, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P1_f and N1_f: positives and negatives with feature f = 1."""
    csc = matrix.to_sparse()
    p1 = np.asarray(pos.astype(np.int64) @ csc).ravel()
    return p1, matrix.column_counts() - p1


def hamdist_scores(matrix: BinaryMatrix, pos: np.ndarray, normalise: bool = False) -> np.ndarray:
    """s(f) = P1_f·N0_f + P0_f·N1_f per feature (HamDist({f}) × |P|·|N| unless ``normalise``)."""
    p1, n1 = ones_per_class(matrix, pos)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    s = p1 * (n_neg - n1) + (n_pos - p1) * n1
    if normalise:
        return s / (n_pos * n_neg) if n_pos and n_neg else np.zeros(len(s))
    return s.astype(np.int64)


def hamdist(matrix: BinaryMatrix, pos: np.ndarray, features) -> float:
    """HamDist(S): the mean Hamming distance on S over positive–negative pairs (modular)."""
    features = list(features)
    if not features:
        return 0.0
    return float(hamdist_scores(matrix, pos, normalise=True)[features].sum())


def class_matrices(row_class: np.ndarray, n_classes: int, pos: np.ndarray):
    """Sparse indicators (classes × rows) of the positive and of the negative rows of each class."""
    import scipy.sparse as sp

    n = len(row_class)
    rows = np.arange(n)
    inside = row_class >= 0
    ind_pos = sp.csr_matrix(
        (np.ones(int((pos & inside).sum()), dtype=np.int64), (row_class[pos & inside], rows[pos & inside])),
        shape=(n_classes, n),
    )
    ind_neg = sp.csr_matrix(
        (np.ones(int((~pos & inside).sum()), dtype=np.int64), (row_class[~pos & inside], rows[~pos & inside])),
        shape=(n_classes, n),
    )
    return ind_pos, ind_neg


def split_label_counts(
    matrix: BinaryMatrix, row_class: np.ndarray, n_classes: int, pos: np.ndarray, csc: sp.csc_matrix | None = None
):
    """For every class g and feature f: positives and negatives of g with f = 1 (sparse g × m), and
    each class's positive and negative totals."""
    csc = matrix.to_sparse().astype(np.int64) if csc is None else csc
    ind_pos, ind_neg = class_matrices(row_class, n_classes, pos)
    p1 = (ind_pos @ csc).tocsc()
    n1 = (ind_neg @ csc).tocsc()
    posg = np.asarray(ind_pos.sum(axis=1)).ravel()
    negg = np.asarray(ind_neg.sum(axis=1)).ravel()
    return p1, n1, posg, negg


def distcnt_gains(p1, n1, posg, negg) -> np.ndarray:
    """Marginal DistCnt gain of every feature: Σ_g pos_g1·neg_g0 + pos_g0·neg_g1."""
    cross = np.asarray(p1.multiply(n1).sum(axis=0)).ravel()
    return np.asarray(negg @ p1).ravel() + np.asarray(posg @ n1).ravel() - 2 * cross


def distcnt(matrix: BinaryMatrix, pos: np.ndarray, row_class: np.ndarray) -> int:
    """DistCnt(S): positive–negative pairs that differ somewhere on S, from the classes of D_S."""
    n_classes = int(row_class.max()) + 1 if len(row_class) else 0
    posg = np.bincount(row_class[pos], minlength=n_classes)
    negg = np.bincount(row_class[~pos], minlength=n_classes)
    return int(pos.sum()) * int((~pos).sum()) - int((posg * negg).sum())


def cm_penalty(pos_counts: np.ndarray, neg_counts: np.ndarray, k: int) -> np.ndarray:
    """Iyengar's classification metric per group: the whole group when it is smaller than k
    (suppressed), else its minority-label records."""
    size = pos_counts + neg_counts
    return np.where(size < k, size, np.minimum(pos_counts, neg_counts))


def cm(pos: np.ndarray, row_class: np.ndarray, k: int) -> int:
    """CM(S) = Σ over the classes of D_S of their penalty."""
    n_classes = int(row_class.max()) + 1 if len(row_class) else 0
    posg = np.bincount(row_class[pos], minlength=n_classes)
    negg = np.bincount(row_class[~pos], minlength=n_classes)
    return int(cm_penalty(posg, negg, k).sum())


def greedy_hamdist(
    matrix: BinaryMatrix,
    constraint,
    on_violation: str = "skip",
    skip_zero_score: bool = True,
    ctx=None,
    order=None,
    limit: int | None = None,
) -> tuple[list[int], np.ndarray]:
    """Features by HamDist({f}) descending (ties: lower index), or in the given ``order``, each kept
    when the model allows; at most ``limit`` of them."""
    pos = positive_mask(matrix)
    scores = hamdist_scores(matrix, pos)
    by_score = order is None
    if by_score:
        order = np.lexsort((np.arange(matrix.n_features), -scores))
    for i, f in enumerate(order):
        if limit is not None and len(constraint.selected) >= limit:
            break
        if ctx is not None:  # a feasibility test is a pass over the records: check before each
            ctx.check()
            if i % 64 == 0:
                ctx.progress(i / len(order), f"Greedy-HamDist: {len(constraint.selected)} features selected")
        if skip_zero_score and scores[f] <= 0:
            if by_score:
                break  # sorted descending: every later feature scores 0 too
            continue
        if constraint.feasible(int(f)):
            constraint.add(int(f))
        elif on_violation == "stop":
            break
    return constraint.selected, scores
