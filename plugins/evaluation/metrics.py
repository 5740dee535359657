"""Basic metrics of any release: selected-feature count, smallest group size, classifier AUC and
accuracy.

``auc`` follows the evaluation protocol of paper 000 (Tables 4–6; docs/reference.md#feature-selection, ``protocol
= paper``): LinearSVC with squared hinge loss, C chosen from {0.01, 0.1, 1, 10, 100} on an inner validation
split, stratified 5-fold cross-validation of the released data, ROC AUC from decision_function.
``accuracy`` is the same protocol scored (and C chosen) by accuracy. Both put the rows in a
canonical order before the folds are drawn, so a shuffled release scores exactly as unshuffled.
An export's report computes them with a fixed C and a looser stopping tolerance (``c = 1``, ``tol =
0.001``: one fit a fold instead of six; its ``report_params``), and says so; ``veil run
--tuned-report`` asks for the tuned C and the default tolerance there too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
import os
import threading
import warnings
import weakref
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    CHEAP,
    BINARY,
    EXPENSIVE,
    MemoryCost,
    Metric,
    form_of,
    hookimpl,
    labels_of,
    load_cached,
    param,
    source_digest,
    store_cached,
)

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
TOL = 1e-4  # LinearSVC's own default stopping tolerance (the paper's protocol)
REPORT_TOL = 1e-3  # a release's report: on Adult the scores move by at most 4·10⁻⁵ (docs/benchmarks.md)
SVC_SECONDS_PER_CELL = 4e-5  # the cross-validated classifiers' seconds per record and column (the plan's estimate)


class FeatureCount(Metric):
    cost = CHEAP
    name = "sfc"
    title = "Selected-feature count"
    paper = "000_0106b4def2026c16"
    description = "How many features (columns other than the target) the release keeps."
    category = "utility"
    memory_cost = MemoryCost(per_record=0.0, per_cell=0.0)  # reads the column names

    def compute(self, original, release, params, ctx):
        if release.selected_features is not None:
            return float(len(release.selected_features))
        return float(sum(1 for c in release.frame.columns if c != release.target))


class SmallestGroup(Metric):
    cost = CHEAP
    name = "min-group-size"
    title = "Smallest group size"
    description = "The smallest number of records sharing one combination of quasi-identifier values."
    category = "privacy"
    memory_cost = MemoryCost(per_record=64.0, per_cell=16.0)  # the quasi-identifiers' codes while grouped

    def compute(self, original, release, params, ctx):
        qi = release.quasi_identifier_frame()
        if len(qi) == 0:
            return float("nan")
        if release.blank_codes() is not None:  # a blank matches any value: every record it could join
            return float(release.class_sizes().min())
        if qi.shape[1] == 0:
            return float(len(qi))
        groups = qi.groupby(list(qi.columns), dropna=False, sort=False).ngroup().to_numpy()
        return float(np.bincount(groups).min())


@dataclass(frozen=True)
class AucParams:
    folds: int = param(5, minimum=2, maximum=20, help="number of stratified cross-validation folds")
    c: float = param(
        0.0,
        minimum=0.0,
        help="the SVM's C; 0 (the paper's protocol) chooses it per fold from "
        "0.01, 0.1, 1, 10, 100 on an inner 75/25 split",
    )
    protocol: str = param(
        "paper",
        choices=("paper", "nested"),
        help="paper: the method runs once on all rows and its release is cross-validated; "
        "nested: the method runs inside each training fold and is scored on the held-out "
        "original rows (the honest estimate)",
    )
    tol: float = param(
        TOL, minimum=1e-8, maximum=0.1, help="the SVM solver's stopping tolerance (scikit-learn's LinearSVC tol)"
    )


class Auc(Metric):
    name = "auc"
    in_report = True
    title = "ROC AUC (LinearSVC, 5-fold CV)"
    paper = "000_0106b4def2026c16"
    description = (
        "Area under the ROC curve of a linear SVM (squared hinge loss, C tuned on an inner split) "
        "trained on the released data, stratified cross-validation."
    )
    category = "utility"
    Params = AucParams
    cost = EXPENSIVE  # 5 folds × 6 LinearSVC fits (C tuned on an inner split)
    seconds_per_cell = SVC_SECONDS_PER_CELL

    # a release's report: one stratified CV with a fixed C (5 fits, not 30) and a looser tolerance
    report_params = {"c": 1.0, "tol": REPORT_TOL}
    tuned_report_params = {"c": 0.0}

    def compute(self, original, release, params, ctx):
        if params.protocol == "nested":
            return nested_score(original, release, params.folds, ctx, _auc)
        X, y = _xy(release)
        if X is None:
            return float("nan")
        return cv_scores(X, y, params.folds, ctx, params.c or None, params.tol)["auc"]

    def protocol(self, params) -> str:
        return svc_protocol(params)


class Accuracy(Metric):
    name = "accuracy"
    in_report = True
    title = "Accuracy (LinearSVC, 5-fold CV)"
    paper = "000_0106b4def2026c16"
    description = (
        "Share of records a linear SVM (squared hinge loss, C tuned on an inner split) trained on the "
        "released data classifies correctly, stratified cross-validation."
    )
    category = "utility"
    Params = AucParams
    cost = EXPENSIVE
    seconds_per_cell = SVC_SECONDS_PER_CELL

    report_params = {"c": 1.0, "tol": REPORT_TOL}
    tuned_report_params = {"c": 0.0}

    def compute(self, original, release, params, ctx):
        if params.protocol == "nested":
            return nested_score(original, release, params.folds, ctx, _accuracy)
        X, y = _xy(release)
        if X is None:
            return float("nan")
        return cv_scores(X, y, params.folds, ctx, params.c or None, params.tol)["accuracy"]

    def protocol(self, params) -> str:
        return svc_protocol(params)


def svc_protocol(params) -> str:
    """The classifier protocol of ``auc`` and ``accuracy`` with ``params``, in words."""
    c = f"C = {params.c:g}" if params.c else "C tuned per fold on an inner 75/25 split"
    if params.tol != TOL:
        c += f", tolerance {params.tol:g}"
    scheme = (
        "the method rerun inside each training fold (nested)"
        if params.protocol == "nested"
        else f"one stratified {params.folds}-fold cross-validation"
    )
    return f"LinearSVC (squared hinge, {c}), {scheme}"


def _xy(release):
    """Design matrix and labels of a release (None, None without a target); the same two arrays
    for the same frame and target, so ``auc`` and ``accuracy`` of one release prepare them once
    (a release's frame is never changed after it is made)."""
    if release.target is None:
        return None, None
    frame = release.frame
    with _CV_LOCK:
        last = _LAST_XY.get("entry")
        if last is not None and last[0]() is frame and last[1] == release.target:
            return last[2], last[3]
    y = pd.Series(frame[release.target]).to_numpy()
    features = [c for c in frame.columns if c != release.target]
    X = design_matrix(frame[features])
    try:
        ref = weakref.ref(frame)
    except TypeError:
        return X, y
    with _CV_LOCK:
        _LAST_XY["entry"] = (ref, release.target, X, y)
    return X, y


_LAST_XY: dict = {}


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
    return cv_scores(X, y, folds, ctx)["auc"]


def cv_score(X: np.ndarray, y: np.ndarray, folds: int, ctx, scorer) -> float:
    """Mean of ``scorer`` (``_auc`` or ``_accuracy``) over stratified folds of a LinearSVC whose C
    is chosen per fold on an inner 75/25 split by the same scorer."""
    return cv_scores(X, y, folds, ctx)[SCORER_NAMES[scorer]]


def cv_scores(
    X: np.ndarray, y: np.ndarray, folds: int, ctx, c: float | None = None, tol: float = TOL
) -> dict[str, float]:
    """``{"auc": …, "accuracy": …}``: the mean of each score over stratified folds of a LinearSVC
    whose C is chosen per fold, and per score, on an inner 75/25 split (or is ``c``: one fit a fold),
    fitted to the stopping tolerance ``tol``.

    The rows are first put in a canonical order (by content), so the scores depend on the records
    and the seed only, never on the order the file lists them in. Both scores come from one set of
    fits, the folds run in parallel threads (liblinear releases the GIL), identical records are
    fitted once with their count as weight (the same objective, so the same model), and the
    figures are remembered by the data's content: the report's "after" figures, computed from the
    written file, are the run's own.
    """
    classes, y_codes = np.unique(y.astype(str), return_inverse=True)
    if len(classes) < 2:
        return {"auc": float("nan"), "accuracy": float("nan")}
    counts = np.bincount(y_codes)
    folds = int(min(folds, counts.min()))
    if X.shape[1] == 0:
        return {name: _no_feature_score(scorer, counts) for name, scorer in SCORERS.items()}
    if folds < 2:
        return {"auc": float("nan"), "accuracy": float("nan")}
    X, y_codes, digest = _canonical(X, y, y_codes)
    key = _cv_key(digest, X.shape, folds, ctx.seed or 0, c, tol)
    with _CV_LOCK:
        if key in _CV_MEMO:
            _CV_MEMO.move_to_end(key)
            return dict(_CV_MEMO[key])
    kept = _load_scores(key)
    if kept is not None:
        _remember(key, kept)
        return dict(kept)
    from sklearn.model_selection import StratifiedKFold

    data = _FitData.of(X, y_codes)
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=ctx.seed or 0)
    splits = list(skf.split(X, y_codes))
    per_fold = []
    with ThreadPoolExecutor(max_workers=max(1, min(folds, os.cpu_count() or 1))) as pool:
        futures = [pool.submit(_fold_scores, data, train, test, ctx.seed or 0, c, tol) for train, test in splits]
        for i, future in enumerate(futures):
            ctx.progress(i / folds, "cross-validating")
            per_fold.append(future.result())
    scores = {name: float(np.mean([f[name] for f in per_fold])) for name in SCORERS}
    _remember(key, scores)
    store_cached(CACHE_NAMESPACE, key, scores)
    return dict(scores)


_CV_MEMO: OrderedDict = OrderedDict()
_CV_LOCK = threading.Lock()
_CV_MEMO_SIZE = 16
CACHE_NAMESPACE = "linearsvc-cv"  # the user's cache (across processes): see veil.engine.base.usercache


def _remember(key: str, scores: dict) -> None:
    with _CV_LOCK:
        _CV_MEMO[key] = dict(scores)
        _CV_MEMO.move_to_end(key)
        while len(_CV_MEMO) > _CV_MEMO_SIZE:
            _CV_MEMO.popitem(last=False)


def _load_scores(key: str) -> dict | None:
    """Both scores as an earlier process computed them for the same key, when the user's cache
    holds a well-formed entry (two finite numbers in [0, 1]); None otherwise."""
    kept = load_cached(CACHE_NAMESPACE, key)
    if not isinstance(kept, dict) or set(kept) != set(SCORERS):
        return None
    try:
        values = {name: float(kept[name]) for name in SCORERS}
    except (TypeError, ValueError):
        return None
    if not all(np.isfinite(v) and 0.0 <= v <= 1.0 for v in values.values()):
        return None
    return values


def _code_version() -> tuple:
    """What, besides the data, the seed and the settings, the scores depend on: this file's code
    and the versions of the libraries that fit and split (read once per process)."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        from importlib.metadata import PackageNotFoundError, version

        libs = []
        for lib in ("scikit-learn", "numpy", "scipy"):
            try:
                libs.append(version(lib))
            except PackageNotFoundError:
                libs.append(None)
        _CODE_VERSION = (source_digest(__file__), *libs)
    return _CODE_VERSION


_CODE_VERSION = None


def _canonical(X: np.ndarray, y: np.ndarray, y_codes: np.ndarray):
    """The rows in canonical order (float, contiguous), their class codes, and a digest of both;
    remembered for the last (X, y) pair of arrays, which ``auc`` and ``accuracy`` share."""
    with _CV_LOCK:
        last = _LAST_CANONICAL.get("entry")
        if last is not None and last[0]() is X and last[1]() is y:
            return last[2], last[3], last[4]
    order = _canonical_order(X, y_codes)
    Xc, yc = np.ascontiguousarray(X[order], dtype=float), y_codes[order]
    h = hashlib.sha256()
    h.update(f"{Xc.shape}|{Xc.dtype}".encode())
    h.update(Xc.tobytes())
    h.update(yc.astype(np.int64).tobytes())
    try:
        refs = (weakref.ref(X), weakref.ref(y))
    except TypeError:
        return Xc, yc, h.hexdigest()
    with _CV_LOCK:
        _LAST_CANONICAL["entry"] = (*refs, Xc, yc, h.hexdigest())
    return Xc, yc, h.hexdigest()


_LAST_CANONICAL: dict = {}


def _cv_key(data_digest: str, shape: tuple, folds: int, seed: int, c: float | None = None, tol: float = TOL) -> str:
    """A digest of everything the cross-validated scores depend on: the design matrix and the
    labels (in canonical row order, by their digest), the folds, the seed, the C grid (or the fixed
    C), the tolerance and the code."""
    h = hashlib.sha256()
    grid = C_GRID if c is None else f"C={c!r}"
    h.update(f"{shape}|{folds}|{seed}|{grid}|tol={tol!r}|{_code_version()}|{data_digest}".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class _FitData:
    """The design matrix (sparse), the class codes, and each row's id among the distinct
    (record, class) pairs with those distinct rows, for fitting duplicates once with a weight."""

    X: sp.csr_matrix
    y: np.ndarray
    row_id: np.ndarray
    distinct: sp.csr_matrix
    distinct_y: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray) -> _FitData:
        """Runs of equal adjacent (record, class) pairs are one distinct row each: in canonical
        order (:func:`_canonical`) equal records are adjacent, so this finds them in one pass
        without sorting. An equal pair that is not adjacent only starts a run of its own, which
        leaves the weighted objective unchanged."""
        import scipy.sparse as sp

        if len(X):
            starts = np.ones(len(X), dtype=bool)
            starts[1:] = (X[1:] != X[:-1]).any(axis=1) | (y[1:] != y[:-1])
        else:
            starts = np.zeros(0, dtype=bool)
        first = np.flatnonzero(starts)
        row_id = np.cumsum(starts) - 1
        # liblinear fits sparse one-hot data at less cost than dense
        return cls(sp.csr_matrix(X), y, row_id, sp.csr_matrix(X[first]), y[first])


def _fold_scores(
    data: _FitData, train: np.ndarray, test: np.ndarray, seed: int, c: float | None = None, tol: float = TOL
) -> dict[str, float]:
    """Both scores of one outer fold: C chosen per score on an inner split of ``train`` (or ``c``)."""
    from sklearn.model_selection import train_test_split

    if c is not None:
        return _fit_scores(data, train, test, c, tol)
    try:
        inner_tr, inner_val = train_test_split(train, test_size=0.25, stratify=data.y[train], random_state=seed)
    except ValueError:  # too small to split that way: C = 1 (as _tuned_c)
        chosen = {name: 1.0 for name in SCORERS}
    else:
        grid = [_fit_scores(data, inner_tr, inner_val, c, tol) for c in C_GRID]
        # the first best C, exactly as max(C_GRID, key=…) picks it
        chosen = {name: C_GRID[int(np.argmax([g[name] for g in grid]))] for name in SCORERS}
    out = {}
    for c in dict.fromkeys(chosen.values()):
        scores = _fit_scores(data, train, test, c, tol)
        out |= {name: scores[name] for name in SCORERS if chosen[name] == c}
    return out


def _fit_scores(data: _FitData, train: np.ndarray, test: np.ndarray, c: float, tol: float = TOL) -> dict[str, float]:
    y = data.y
    if len(np.unique(y[train])) < 2 or len(np.unique(y[test])) < 2:
        majority = float(np.mean(y[test] == np.bincount(y[train]).argmax()))
        return {"auc": 0.5, "accuracy": majority}
    dual = len(train) < data.X.shape[1]  # what dual="auto" picks for these rows
    model = _linear_svc(c, dual=dual, tol=tol)
    ids, weight = np.unique(data.row_id[train], return_counts=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not dual and len(ids) < 0.9 * len(train):
            # the primal objective sums each record's loss: k equal records weigh as one of weight k
            model.fit(data.distinct[ids], data.distinct_y[ids], sample_weight=weight.astype(float))
        else:
            model.fit(data.X[train], y[train])
    return {name: scorer(model, data.X[test], y[test]) for name, scorer in SCORERS.items()}


def _linear_svc(c: float, dual, tol: float = TOL):
    from sklearn.svm import LinearSVC

    return LinearSVC(C=c, loss="squared_hinge", dual=dual, tol=tol, max_iter=5000)


def _original_frame(original, names: list[str]) -> pd.DataFrame:
    """The original records' values of the released features (how held-out rows are "transformed")."""
    if form_of(original) == BINARY:
        return original.project(names).to_frame()
    return original.frame[names].reset_index(drop=True)


def nested_score(original, release, folds: int, ctx, scorer) -> float:
    """Cross-validation with the method inside each training fold (docs/reference.md#feature-selection, protocol =
    nested).

    In each fold the method runs on the training rows only; a LinearSVC (C tuned on an inner split)
    is trained on that fold's release and scored on the held-out rows of the original data,
    restricted to the features the fold's release kept.
    """
    import scipy.sparse as sp

    from sklearn.model_selection import StratifiedKFold

    if ctx.rerun is None or release.target is None:
        return float("nan")
    labels = np.asarray(labels_of(original))
    classes, codes = np.unique(labels.astype(str), return_inverse=True)
    folds = int(min(folds, np.bincount(codes).min())) if len(classes) > 1 else 0
    if folds < 2:
        return float("nan")
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=ctx.seed or 0)
    scores = []
    for i, (train, test) in enumerate(skf.split(np.zeros(len(codes)), codes)):
        ctx.progress(i / folds, f"nested cross-validation, fold {i + 1} of {folds}")
        fold = ctx.rerun(train)
        names = [c for c in fold.frame.columns if c != fold.target]
        y_train = np.searchsorted(classes, fold.frame[fold.target].astype(str).to_numpy())
        if not names:
            scores.append(_no_feature_score(scorer, np.bincount(y_train, minlength=len(classes))))
            continue
        test_frame = _original_frame(original, names).iloc[test]
        X = sp.csr_matrix(design_matrix(pd.concat([fold.frame[names], test_frame], ignore_index=True)))
        y = np.concatenate([y_train, codes[test]])
        inside, outside = np.arange(len(y_train)), len(y_train) + np.arange(len(test))
        scores.append(_fit_score(X, y, inside, outside, _tuned_c(X, y, inside, ctx, scorer), scorer))
    return float(np.mean(scores))


def _tuned_c(X, y, train, ctx, scorer) -> float:
    """C from the grid, chosen on a stratified 75/25 split of ``train``; 1.0 when the training part
    is too small to split that way (fewer validation rows than classes, or a class with one row)."""
    from sklearn.model_selection import train_test_split

    try:
        inner_tr, inner_val = train_test_split(train, test_size=0.25, stratify=y[train], random_state=ctx.seed or 0)
    except ValueError:
        return 1.0
    return max(C_GRID, key=lambda c: _fit_score(X, y, inner_tr, inner_val, c, scorer))


def _canonical_order(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A row order that depends on the rows' content only (equal rows are interchangeable)."""
    row_hash = pd.util.hash_pandas_object(pd.DataFrame(X), index=False).to_numpy()
    return np.lexsort((y, row_hash))


def _no_feature_score(scorer, counts: np.ndarray) -> float:
    """With no feature every record gets the same score: AUC 0.5, accuracy of the majority class."""
    return 0.5 if scorer is _auc else float(counts.max() / counts.sum())


def _fit_score(X, y, train, test, c, scorer) -> float:
    if len(np.unique(y[train])) < 2 or len(np.unique(y[test])) < 2:
        return 0.5 if scorer is _auc else float(np.mean(y[test] == np.bincount(y[train]).argmax()))
    model = _linear_svc(c, dual="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[train], y[train])
    return scorer(model, X[test], y[test])


def _auc(model, X, y) -> float:
    from sklearn.metrics import roc_auc_score

    scores = model.decision_function(X)
    if scores.ndim == 1:
        return float(roc_auc_score(y, scores))
    return float(roc_auc_score(y, scores, multi_class="ovr", labels=np.arange(scores.shape[1])))


def _accuracy(model, X, y) -> float:
    return float(np.mean(model.predict(X) == y))


SCORERS = {"auc": _auc, "accuracy": _accuracy}
SCORER_NAMES = {scorer: name for name, scorer in SCORERS.items()}


@hookimpl
def veil_register_metrics():
    return [FeatureCount, SmallestGroup, Auc, Accuracy]
