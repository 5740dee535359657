"""Classifiers and cross-validation for the privacy-aware evaluation of paper 004
(docs/reference.md#privacy-aware-evaluation).

``Acc(X | S)`` is the stratified k-fold cross-validated accuracy of a classifier predicting column X
from the attributes S. The paper ran Weka's C4.5 (J48) and naive Bayes; here:

* ``c4.5``: scikit-learn's entropy decision tree (``criterion="entropy"``, at least two records per
  leaf, J48's ``-M 2``) post-pruned by C4.5's error-based pruning at confidence 0.25 (J48's ``-C
  0.25``, subtree replacement; J48's gain ratio and subtree raising are not reproduced);
* ``naive-bayes``: Gaussian likelihoods for numeric columns and categorical ones (Laplace
  smoothing) for the others, combined in one posterior as Weka's NaiveBayes does.

Categorical columns enter as ordinal codes. Accuracies are pooled over the folds (correct / n, as
Weka reports them); the per-fold accuracies feed the paired t-test. Every ``Acc(X | S)`` is cached
by (X, frozenset(S)): the Figure 5 generator asks for the same subsets again and again.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, Kind

CLASSIFIERS = ("c4.5", "naive-bayes")
PRUNING_CONFIDENCE = 0.25  # J48's default -C


# -- encoding -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Encoded:
    """Columns as model inputs: floats for numeric columns, codes 0..K-1 for the others."""

    columns: tuple[str, ...]
    values: dict  # name -> 1-d array
    categories: dict  # name -> K for categorical columns, absent for numeric ones

    def matrix(self, subset) -> tuple[np.ndarray, np.ndarray]:
        """The design matrix of ``subset`` (in table order, so a set always gives the same matrix)
        and which of its columns are categorical."""
        names = [c for c in self.columns if c in subset]
        if not names:
            return np.zeros((self.n_rows, 0)), np.zeros(0, dtype=bool)
        X = np.column_stack([self.values[c] for c in names]).astype(float)
        return X, np.array([c in self.categories for c in names], dtype=bool)

    @property
    def n_rows(self) -> int:
        return len(next(iter(self.values.values()))) if self.values else 0


def is_numeric(kind: Kind, series: pd.Series) -> bool:
    return kind in (Kind.NUMERIC, Kind.DATE) and pd.api.types.is_numeric_dtype(series)


def encode(frame: pd.DataFrame, kinds: dict, columns) -> Encoded:
    """Encode ``columns`` of ``frame``; a missing categorical cell becomes a category of its own and a
    missing number the column's median (only reached with ``missing = "as-value"``)."""
    values, categories = {}, {}
    for c in columns:
        s = frame[c]
        if is_numeric(kinds[c], s):
            x = s.to_numpy(dtype=float)
            if np.isnan(x).any():
                x = np.where(np.isnan(x), np.nanmedian(x) if (~np.isnan(x)).any() else 0.0, x)
            values[c] = x
        else:
            codes, uniques = pd.factorize(s.astype("string"), sort=True, use_na_sentinel=True)
            codes = np.where(codes < 0, len(uniques), codes)
            values[c] = codes.astype(np.int64)
            categories[c] = max(int(codes.max()) + 1 if len(codes) else 1, 1)
    return Encoded(tuple(columns), values, categories)


def label_codes(series: pd.Series) -> np.ndarray:
    """Class labels as codes 0..K-1 (missing labels are dropped before this is called)."""
    codes, _ = pd.factorize(series.astype("string"), sort=True)
    return codes.astype(np.int64)


# -- C4.5-like decision tree ----------------------------------------------------------------------------
def added_errors(n: np.ndarray, e: np.ndarray, cf: float = PRUNING_CONFIDENCE) -> np.ndarray:
    """C4.5's pessimistic extra errors of a leaf with ``n`` records and ``e`` errors (Weka's
    ``Stats.addErrs``): the upper ``cf`` confidence limit of the binomial error rate, times n, minus e."""
    n = np.asarray(n, dtype=float)
    e = np.asarray(e, dtype=float)
    z = _z(cf)

    def normal(n, e):
        f = (e + 0.5) / n
        r = (f + z * z / (2 * n) + z * np.sqrt(np.maximum(f / n - f * f / n + z * z / (4 * n * n), 0.0))) / (
            1 + z * z / n
        )
        return np.where(e + 0.5 >= n, np.maximum(n - e, 0.0), r * n - e)

    base = n * (1 - cf ** (1 / n))
    small = base + e * (normal(n, np.ones_like(e)) - base)
    return np.where(e < 1, small, normal(n, e))


@functools.lru_cache(maxsize=8)
def _z(cf: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(1 - cf))


class C45Tree:
    """An entropy decision tree pruned by C4.5's error-based rule (subtree replacement).

    scikit-learn grows the tree; pruning marks nodes where prediction stops, so the fitted tree is
    never modified. Nodes are numbered parents-before-children, so one reverse pass prunes bottom-up.
    """

    def __init__(self, seed: int = 0, confidence: float = PRUNING_CONFIDENCE, min_leaf: int = 2):
        self.seed, self.confidence, self.min_leaf = seed, confidence, min_leaf

    def fit(self, X: np.ndarray, y: np.ndarray) -> C45Tree:
        from sklearn.tree import DecisionTreeClassifier

        tree = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=self.min_leaf, random_state=self.seed).fit(
            X, y
        )
        t = tree.tree_
        value = t.value[:, 0, :]
        n = t.weighted_n_node_samples
        counts = value / np.maximum(value.sum(axis=1, keepdims=True), 1e-300) * n[:, None]
        errors = n - counts.max(axis=1)
        as_leaf = errors + added_errors(n, errors, self.confidence)
        left, right = t.children_left, t.children_right
        stop = left < 0
        kept = as_leaf.copy()
        for i in range(t.node_count - 1, -1, -1):
            if stop[i]:
                continue
            subtree = kept[left[i]] + kept[right[i]]
            if as_leaf[i] <= subtree + 0.1:  # J48 prunes when the leaf is no worse (+0.1 slack)
                stop[i] = True
            else:
                kept[i] = subtree
        self.classes_ = tree.classes_
        self._left, self._right, self._stop = left, right, stop
        self._feature, self._threshold = t.feature, t.threshold
        self._label = counts.argmax(axis=1)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float32)  # as scikit-learn compares against its thresholds
        node = np.zeros(len(X), dtype=np.int64)
        active = np.arange(len(X))
        while len(active):
            at = node[active]
            go = ~self._stop[at]
            active, at = active[go], at[go]
            if not len(active):
                break
            left = X[active, self._feature[at]] <= self._threshold[at]
            node[active] = np.where(left, self._left[at], self._right[at])
        return self.classes_[self._label[node]]


# -- naive Bayes --------------------------------------------------------------------------------------
class MixedNB:
    """Naive Bayes with Gaussian likelihoods for numeric columns and categorical ones for codes."""

    def __init__(self, categorical: np.ndarray, n_categories: np.ndarray):
        self.categorical = categorical
        self.n_categories = n_categories

    def fit(self, X: np.ndarray, y: np.ndarray) -> MixedNB:
        from sklearn.naive_bayes import CategoricalNB, GaussianNB

        self.classes_, counts = np.unique(y, return_counts=True)
        self._log_prior = np.log(counts / counts.sum())
        num, cat = ~self.categorical, self.categorical
        self._gauss = GaussianNB().fit(X[:, num], y) if num.any() else None
        self._cat = (
            CategoricalNB(alpha=1.0, min_categories=self.n_categories[cat]).fit(X[:, cat].astype(int), y)
            if cat.any()
            else None
        )
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        # Each model's log posterior is log prior + its log likelihood - a per-record constant, so the
        # sum minus one log prior ranks the classes as the joint model would.
        score = np.tile(self._log_prior, (len(X), 1))
        if self._gauss is not None:
            score += self._gauss.predict_log_proba(X[:, ~self.categorical]) - self._log_prior
        if self._cat is not None:
            score += self._cat.predict_log_proba(X[:, self.categorical].astype(int)) - self._log_prior
        return self.classes_[score.argmax(axis=1)]


class Majority:
    """The classifier of an empty attribute set: the training majority class."""

    def fit(self, X, y):
        values, counts = np.unique(y, return_counts=True)
        self.label_ = values[counts.argmax()]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


def make_classifier(name: str, categorical: np.ndarray, n_categories: np.ndarray, seed: int):
    if len(categorical) == 0:
        return Majority()
    if name == "c4.5":
        return C45Tree(seed=seed)
    if name == "naive-bayes":
        return MixedNB(categorical, n_categories)
    raise BadInput(f"unknown classifier {name!r}; choose one of {', '.join(CLASSIFIERS)}")


# -- cross-validation ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Score:
    """Acc(X | S): pooled accuracy in percent and the accuracy of each fold."""

    accuracy: float
    folds: np.ndarray


def paired_p_value(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test over matched folds; identical folds give 1, a constant non-zero
    difference 0 (the t statistic is infinite)."""
    from scipy.stats import ttest_rel

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if np.allclose(d, d[0], rtol=0, atol=1e-12):
        return 1.0 if abs(d[0]) <= 1e-12 else 0.0
    return float(ttest_rel(a, b).pvalue)


class CrossValidation:
    """Cached ``Acc(X | S)`` for the targets of one run, reporting progress and honouring cancel
    between folds.

    Parameters
    ----------
    encoded : Encoded
        The candidate attributes.
    targets : dict
        Name -> label codes of each column that is ever predicted (the class, the SA).
    classifier : "c4.5" or "naive-bayes"
    folds, seed : int
        Stratified folds, shuffled by ``seed``: every subset of a target sees the same folds, which
        the paired t-test needs.
    ctx : Context
    budget : int
        How many distinct evaluations the run expects at most (for the progress fraction).
    """

    def __init__(self, encoded: Encoded, targets: dict, classifier: str, folds: int, seed: int, ctx, budget: int = 1):
        self.encoded, self.targets, self.classifier = encoded, targets, classifier
        self.seed, self.ctx, self.budget = seed, ctx, max(budget, 1)
        self._splits = {name: self._split(y, folds) for name, y in targets.items()}
        self._cache: dict = {}
        self.evaluations = 0

    def _split(self, y: np.ndarray, folds: int) -> list:
        from sklearn.model_selection import StratifiedKFold

        if len(y) < folds:
            raise BadInput(f"{folds}-fold cross-validation needs at least {folds} records, got {len(y)}")
        largest = int(np.unique(y, return_counts=True)[1].max())
        if largest < folds:  # stratified folds need one class that fills every fold
            raise BadInput(
                f"{folds}-fold cross-validation needs a class with at least {folds} records; "
                f"the largest class has {largest} (use fewer folds or more data)"
            )
        with warnings.catch_warnings():  # a rare SA value with fewer records than folds is fine
            warnings.simplefilter("ignore", UserWarning)
            skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=self.seed)
            return list(skf.split(np.zeros(len(y)), y))

    def accuracy(self, target: str, subset) -> Score:
        key = (target, frozenset(subset))
        if key not in self._cache:
            self._cache[key] = self._evaluate(target, key[1])
            self.evaluations += 1
        return self._cache[key]

    def _evaluate(self, target: str, subset: frozenset) -> Score:
        import sklearn

        # the inputs are ours and clean: skip scikit-learn's per-fit checks (most of a small fit's time)
        with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
            return self._cross_validate(target, subset)

    def _cross_validate(self, target: str, subset: frozenset) -> Score:
        y = self.targets[target]
        self.ctx.check()
        X, categorical = self.encoded.matrix(subset)
        self.ctx.check()
        n_cat = np.array(
            [self.encoded.categories.get(c, 0) for c in self.encoded.columns if c in subset], dtype=np.int64
        )
        correct, per_fold = 0, []
        splits = self._splits[target]
        for f, (train, test) in enumerate(splits):
            self.ctx.progress(
                min((self.evaluations + f / len(splits)) / self.budget, 0.99),
                f"cross-validating {target} from {len(subset)} attributes",
            )
            model = make_classifier(self.classifier, categorical, n_cat, self.seed).fit(X[train], y[train])
            hits = int((model.predict(X[test]) == y[test]).sum())
            correct += hits
            per_fold.append(hits / len(test))
        return Score(100.0 * correct / len(y), np.asarray(per_fold))

    def majority_share(self, target: str) -> float:
        """The share of the most frequent value of ``target``, in percent (DistP's accuracy)."""
        y = self.targets[target]
        return float(100.0 * np.bincount(y).max() / len(y))
