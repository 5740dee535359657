"""The classifier metrics computed once, in parallel folds, with equal records
fitted once at their count's weight, give exactly the figures of the plain protocol (an oracle:
each score cross-validated on its own, every record fitted, C tuned per score)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.svm import LinearSVC

from veil.engine import Context
from veil.plugins.evaluation import metrics as bm


def plain_cv(X, y, folds, seed, score):
    """The protocol as written in docs/reference.md#feature-selection, with nothing shared or collapsed."""
    classes, y = np.unique(y.astype(str), return_inverse=True)
    order = bm._canonical_order(X, y)
    X, y = X[order], y[order]

    def fit_score(train, test, c):
        model = LinearSVC(C=c, loss="squared_hinge", dual="auto", max_iter=5000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X[train], y[train])
        if score == "auc":
            return roc_auc_score(y[test], model.decision_function(X[test]))
        return float(np.mean(model.predict(X[test]) == y[test]))

    out = []
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y):
        inner_tr, inner_val = train_test_split(train, test_size=0.25, stratify=y[train], random_state=seed)
        c = max(bm.C_GRID, key=lambda c: fit_score(inner_tr, inner_val, c))
        out.append(fit_score(train, test, c))
    return float(np.mean(out))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("distinct", [True, False])
def test_shared_weighted_parallel_cv_equals_the_plain_protocol(seed, distinct):
    rng = np.random.default_rng(seed)
    n, m = 400, 6
    X = rng.integers(0, 2, (n, m)).astype(float)  # at most 64 distinct records: heavy duplication
    if distinct:
        X = np.hstack([X, rng.random((n, 1))])  # every record distinct
    y = np.where(X[:, 0] + X[:, 1] + rng.random(n) > 1.5, "yes", "no")
    bm._CV_MEMO.clear()
    got = bm.cv_scores(X, y, 5, Context(seed))
    for name in ("auc", "accuracy"):
        assert got[name] == pytest.approx(plain_cv(X, y, 5, seed, name), abs=1e-9), name


def test_the_figures_are_remembered_by_content_not_row_order():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (300, 5)).astype(float)
    y = np.where(X[:, 0] > 0, "a", "b")
    y[:20] = "a"
    bm._CV_MEMO.clear()
    first = bm.cv_scores(X, y, 5, Context(3))
    assert len(bm._CV_MEMO) == 1
    perm = rng.permutation(300)
    assert bm.cv_scores(X[perm], y[perm], 5, Context(3)) == first
    assert len(bm._CV_MEMO) == 1  # a hit: the shuffled file scores as the release did
    bm.cv_scores(X, y, 5, Context(4))
    assert len(bm._CV_MEMO) == 2  # another seed is another computation


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("distinct", [True, False])
def test_the_reports_fixed_c_check_equals_sklearns_cross_val_score(seed, distinct):
    """The report's protocol (one stratified 5-fold cross-validation, C = 1,
    tolerance 0.001) scores what scikit-learn's own cross_val_score scores with the same
    settings on the rows in canonical order: equal records fitted once with their count as weight
    and the folds in threads change nothing."""
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(seed)
    n = 400
    X = rng.integers(0, 2, (n, 6)).astype(float)
    if distinct:
        X = np.hstack([X, rng.random((n, 1))])
    y = np.where(X[:, 0] + X[:, 1] + rng.random(n) > 1.5, "yes", "no")
    params = bm.Auc().params(bm.Auc.report_params)
    assert (params.c, params.tol) == (1.0, 1e-3)
    bm._CV_MEMO.clear()
    got = bm.cv_scores(X, y, params.folds, Context(seed), params.c, params.tol)
    _, codes = np.unique(y, return_inverse=True)
    order = bm._canonical_order(X, codes)
    folds = StratifiedKFold(params.folds, shuffle=True, random_state=seed)
    model = LinearSVC(C=params.c, loss="squared_hinge", dual=False, tol=params.tol, max_iter=5000)
    for name, scoring in (("auc", "roc_auc"), ("accuracy", "accuracy")):
        want = cross_val_score(model, X[order], codes[order], cv=folds, scoring=scoring).mean()
        assert got[name] == pytest.approx(want, abs=1e-6), name


def test_the_tolerance_is_part_of_what_the_figures_are_remembered_by():
    rng = np.random.default_rng(2)
    X = rng.random((200, 4))
    y = np.where(X[:, 0] > 0.5, "a", "b")
    bm._CV_MEMO.clear()
    bm.cv_scores(X, y, 5, Context(0), 1.0, 1e-3)
    bm.cv_scores(X, y, 5, Context(0), 1.0, 1e-4)
    assert len(bm._CV_MEMO) == 2
