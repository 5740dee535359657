"""Basic metrics of any release: selected-feature count, smallest group size, and classifier AUC.

``auc`` follows the evaluation protocol of paper 000 (Tables 4–6; SPEC §1, ``protocol = paper``):
LinearSVC with squared hinge loss, C chosen from {0.01, 0.1, 1, 10, 100} on an inner validation
split, stratified 5-fold cross-validation of the released data, ROC AUC from decision_function.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import Metric, hookimpl, param

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


class FeatureCount(Metric):
    name = "sfc"
    title = "Selected-feature count"
    paper = "000_0106b4def2026c16"
    description = "How many features (columns other than the target) the release keeps."
    category = "utility"

    def compute(self, original, release, params, ctx):
        if release.selected_features is not None:
            return float(len(release.selected_features))
        return float(sum(1 for c in release.frame.columns if c != release.target))


class SmallestGroup(Metric):
    name = "min-group-size"
    title = "Smallest group size"
    description = "The smallest number of records sharing one combination of quasi-identifier values."
    category = "privacy"

    def compute(self, original, release, params, ctx):
        qi = release.quasi_identifier_frame()
        if len(qi) == 0:
            return float("nan")
        if qi.shape[1] == 0:
            return float(len(qi))
        groups = qi.groupby(list(qi.columns), dropna=False, sort=False).ngroup().to_numpy()
        return float(np.bincount(groups).min())


@dataclass(frozen=True)
class AucParams:
    folds: int = param(5, minimum=2, maximum=20, help="number of stratified cross-validation folds")


class Auc(Metric):
    name = "auc"
    title = "ROC AUC (LinearSVC, 5-fold CV)"
    paper = "000_0106b4def2026c16"
    description = ("Area under the ROC curve of a linear SVM (squared hinge loss, C tuned on an inner split) "
                   "trained on the released data, stratified cross-validation.")
    category = "utility"
    Params = AucParams

    def compute(self, original, release, params, ctx):
        if release.target is None:
            return float("nan")
        y = pd.Series(release.frame[release.target]).to_numpy()
        features = [c for c in release.frame.columns if c != release.target]
        X = design_matrix(release.frame[features])
        return cv_auc(X, y, params.folds, ctx)


def design_matrix(frame: pd.DataFrame) -> np.ndarray:
    """Numbers as they are (scaled to [0, 1]), categories one-hot."""
    parts = []
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_numeric_dtype(s):
            x = s.to_numpy(dtype=float)
            x = np.nan_to_num(x, nan=np.nanmean(x) if np.isfinite(x).any() else 0.0)
            span = x.max() - x.min() if len(x) else 0.0
            parts.append(((x - x.min()) / span if span > 0 else x * 0).reshape(-1, 1))
        else:
            parts.append(pd.get_dummies(s.astype(str)).to_numpy(dtype=float))
    if not parts:
        return np.zeros((len(frame), 0))
    return np.hstack(parts)


def cv_auc(X: np.ndarray, y: np.ndarray, folds: int, ctx) -> float:
    """Mean ROC AUC over stratified folds; C chosen per fold on an inner 75/25 split."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, train_test_split

    classes, y_codes = np.unique(y.astype(str), return_inverse=True)
    if len(classes) < 2:
        return float("nan")
    counts = np.bincount(y_codes)
    folds = int(min(folds, counts.min()))
    if folds < 2 or X.shape[1] == 0:
        return 0.5 if X.shape[1] == 0 else float("nan")
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=ctx.seed or 0)
    scores = []
    for i, (train, test) in enumerate(skf.split(X, y_codes)):
        ctx.progress(i / folds, "cross-validating")
        inner_tr, inner_val = train_test_split(train, test_size=0.25, stratify=y_codes[train],
                                               random_state=ctx.seed or 0)
        best_c = max(C_GRID, key=lambda c: _score(X, y_codes, inner_tr, inner_val, c, roc_auc_score))
        scores.append(_score(X, y_codes, train, test, best_c, roc_auc_score))
    return float(np.mean(scores))


def _score(X, y, train, test, c, roc_auc_score) -> float:
    from sklearn.svm import LinearSVC

    if len(np.unique(y[train])) < 2 or len(np.unique(y[test])) < 2:
        return 0.5
    model = LinearSVC(C=c, loss="squared_hinge", dual="auto", max_iter=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[train], y[train])
    scores = model.decision_function(X[test])
    if scores.ndim == 1:
        return float(roc_auc_score(y[test], scores))
    return float(roc_auc_score(y[test], scores, multi_class="ovr", labels=np.arange(scores.shape[1])))


@hookimpl
def veil_register_metrics():
    return [FeatureCount, SmallestGroup, Auc]
