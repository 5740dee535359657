"""The evaluation of paper 003 (docs/reference.md#feature-weighting) as a metric: how well a released ranking
serves a classifier.

``weights-accuracy``: stratified k-fold cross-validation (10 folds); in each fold the method runs
again on the training part only (``ctx.rerun``), its ranking (``release.selected_features``, best
first) picks the top m features, and LinearSVC(C = 1) or 3-NN trained on them is scored by accuracy
on the held-out part. Features are scaled to [0, 1] as the paper does. It applies to any method whose
release ranks features (FWELL, Private FWELL, the feature-selection methods); NaN for others.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from veil.engine import CHEAP, FEATURE_WEIGHTS, BadInput, BinaryMatrix, Metric, Table, hookimpl, param

from .._fwell import feature_matrix, scale_unit

PAPER = "003_5ee0bd0faa8a52c8"
CLASSIFIERS = ("linear-svc", "3-nn")


@dataclass(frozen=True)
class AccuracyParams:
    classifier: str = param(
        "linear-svc",
        choices=CLASSIFIERS,
        help="LinearSVC(C = 1) or the 3-nearest-neighbour classifier, as in the paper",
    )
    fraction: float = param(
        0.1,
        minimum=0,
        exclusive_minimum=True,
        maximum=1,
        help="share of the features to keep (the paper's 10 %), unless features is set",
    )
    features: int | None = param(
        None, minimum=1, help="number of top-ranked features to keep (empty: the method's top when set, else fraction)"
    )
    folds: int = param(10, minimum=2, help="stratified cross-validation folds (the paper's 10)")


def classifier(name: str, seed: int):
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import LinearSVC

    if name == "linear-svc":
        return LinearSVC(C=1.0, max_iter=20_000, random_state=seed)
    return KNeighborsClassifier(n_neighbors=3)


def fold_accuracy(x, y, train, test, ranked: list[int], m: int, name: str, seed: int) -> float:
    """Accuracy on ``test`` of the classifier trained on ``train`` with the first ``m`` ranked features."""
    keep = ranked[:m]
    if not keep:
        values, counts = np.unique(y[train], return_counts=True)  # no feature: predict the majority
        return float(np.mean(y[test] == values[np.argmax(counts)]))
    model = classifier(name, seed).fit(x[np.ix_(train, keep)], y[train])
    return float(np.mean(model.predict(x[np.ix_(test, keep)]) == y[test]))


def ranks_features(release) -> bool:
    """A feature-weights release, or records chosen in weight order (FWELL, Private FWELL, greedy
    selection by a weight score): the releases whose ranking this metric judges."""
    if release.provenance is None or release.selected_features is None:
        return False
    return release.kind == FEATURE_WEIGHTS or "weights" in release.details


def expand(ranked_names, index: dict, names: list[str]) -> list[int]:
    """Column indices of ranked features; a source column (``sex``) stands for its one-hot features
    (``sex=F``, ``sex=M``)."""
    out: list[int] = []
    for n in ranked_names:
        if n in index:
            out.append(index[n])
        else:
            out.extend(i for i, name in enumerate(names) if name.startswith(f"{n}="))
    return list(dict.fromkeys(out))


class WeightsAccuracy(Metric):
    cost = CHEAP
    name = "weights-accuracy"
    title = "Accuracy on the top-ranked features (10-fold CV, method rerun per fold)"
    paper = PAPER
    description = (
        "Stratified 10-fold CV; the method reruns on each training part, its ranking keeps the top "
        "features, LinearSVC(C = 1) or 3-NN is scored by accuracy (paper 003's evaluation)."
    )
    Params = AccuracyParams
    requires = "feature-ranking"

    @staticmethod
    def features_kept(params, release, d: int) -> int:
        """``features`` when set; else the method's ``top`` (a release of the top m features is judged
        on those m); else the ``fraction`` of all d features."""
        if params.features:
            return int(params.features)
        top = (release.provenance.params or {}).get("top") if release.provenance else None
        if top:
            return int(top)
        return max(1, math.ceil(params.fraction * d))

    def compute(self, original, release, params, ctx):
        if not ranks_features(release):
            return float("nan")
        if ctx.rerun is None:
            raise BadInput("weights-accuracy reruns the method in every fold; compute it through a run or a study")
        x, names, y = feature_matrix(original)
        x = scale_unit(x)
        index = {n: i for i, n in enumerate(names)}
        m = self.features_kept(params, release, len(names))
        folds = min(params.folds, int(np.unique(y, return_counts=True)[1].min()))
        if folds < 2:
            return float("nan")
        from sklearn.model_selection import StratifiedKFold

        split = StratifiedKFold(folds, shuffle=True, random_state=ctx.seed or 0)
        scores = []
        for f, (train, test) in enumerate(split.split(x, y)):
            ctx.progress(f / folds, f"fold {f + 1} of {folds}")
            ranked_names = _fold_ranking(original, release, train, f, folds, ctx)
            ranked = expand(ranked_names, index, names)
            scores.append(fold_accuracy(x, y, train, test, ranked, m, params.classifier, ctx.seed or 0))
        return float(np.mean(scores))


# The fold releases depend on the data, the method, its parameters, the seed and the fold, not on the
# classifier or the number of features: the two classifiers and every feature count share them.
_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 256


def _fold_ranking(original, release, train, fold, folds, ctx) -> list[str]:
    prov = release.provenance
    key = (
        _fingerprint(original),
        prov.method,
        json.dumps(prov.params, sort_keys=True, default=str),
        prov.model,
        json.dumps(prov.model_params, sort_keys=True, default=str),
        ctx.seed,
        fold,
        folds,
        hashlib.sha256(np.asarray(train, dtype=np.int64).tobytes()).hexdigest(),
        getattr(ctx, "mode", ""),
    )
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    fold_release = ctx.rerun(train)
    ranked = [str(n) for n in (fold_release.selected_features or ())]
    if getattr(ctx, "mode", "study") == "release":
        return ranked  # fresh secure noise every time: never replay a draw
    with _MEMO_LOCK:
        _MEMO[key] = ranked
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return ranked


def _fingerprint(data) -> str:
    if isinstance(data, BinaryMatrix):
        return data.fingerprint()
    assert isinstance(data, Table)
    import pandas as pd

    digest = hashlib.sha256(pd.util.hash_pandas_object(data.frame, index=False).to_numpy().tobytes())
    digest.update(json.dumps(data.schema.to_dict(), sort_keys=True).encode())
    return digest.hexdigest()


@hookimpl
def veil_register_metrics():
    return [WeightsAccuracy]
