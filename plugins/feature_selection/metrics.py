"""Metrics of paper 000 on a binary release: HamDist, DistCnt, CM and the flip rate
(docs/reference.md#feature-selection)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import CHEAP, BINARY, BinaryMatrix, MemoryCost, Metric, hookimpl, param, partition_of

from ._common import cm, distcnt, hamdist, positive_mask

PAPER = "000_0106b4def2026c16"
COST_PER_CELL = 8.0  # HamDist, DistCnt, CM: bytes a release cell beside 256 a record (measured: about 6 and 180)


def release_matrix(release) -> BinaryMatrix | None:
    """The release's features (0/1) with its class as labels, or None when it is not binary."""
    import scipy.sparse as sp

    if release.target is None:
        return None
    features = [c for c in release.frame.columns if c != release.target]
    for c in features:  # judged on each column's distinct values: a text column is refused at once
        try:
            distinct = np.asarray(pd.unique(release.frame[c]), dtype=float)
        except (TypeError, ValueError):
            return None
        if not np.isin(distinct, (0.0, 1.0)).all():
            return None
    # column by column, the rows holding a 1 (0/1 as checked): memory in proportion to the ones
    ones = [np.flatnonzero(release.frame[c].to_numpy()).astype(np.int32) for c in features]
    indptr = np.concatenate(([0], np.cumsum([len(rows) for rows in ones]))).astype(np.int64)
    indices = np.concatenate(ones) if ones else np.zeros(0, dtype=np.int32)
    matrix = sp.csc_matrix(
        (np.ones(len(indices), dtype=np.uint8), indices, indptr), shape=(release.n_rows, len(features))
    )
    return BinaryMatrix.from_sparse(matrix, features=features, labels=release.frame[release.target].to_numpy())


def _two_classes(matrix: BinaryMatrix | None) -> bool:
    return matrix is not None and len(np.unique(matrix.labels)) == 2


class HamDistMetric(Metric):
    cost = CHEAP
    name = "hamdist"
    accepts = (BINARY,)  # a feature subset of a binary matrix
    title = "HamDist (mean Hamming distance of positive–negative pairs)"
    paper = PAPER
    description = "Mean number of released features on which a positive and a negative record differ."
    fits_forms = (BINARY,)
    memory_cost = MemoryCost(per_cell=COST_PER_CELL)  # the release's ones as row indices, and a column at a time

    def compute(self, original, release, params, ctx):
        m = release_matrix(release)
        if not _two_classes(m):
            return float("nan")
        return hamdist(m, positive_mask(m), range(m.n_features))


class DistCntMetric(Metric):
    cost = CHEAP
    name = "distcnt"
    accepts = (BINARY,)  # a feature subset of a binary matrix
    title = "DistCnt (distinguishable positive–negative pairs)"
    paper = PAPER
    description = "Share of positive–negative pairs that differ on at least one released feature."
    fits_forms = (BINARY,)
    memory_cost = MemoryCost(per_cell=COST_PER_CELL)  # the release's ones as row indices, and a column at a time

    def compute(self, original, release, params, ctx):
        m = release_matrix(release)
        if not _two_classes(m):
            return float("nan")
        pos = positive_mask(m)
        pairs = int(pos.sum()) * int((~pos).sum())
        return distcnt(m, pos, partition_of(m, range(m.n_features), containment=False).row_classes()) / pairs


@dataclass(frozen=True)
class CMParams:
    k: int = param(5, minimum=1, help="groups smaller than k count as suppressed")


class CMMetric(Metric):
    cost = CHEAP
    name = "cm"
    accepts = (BINARY,)  # a feature subset of a binary matrix
    title = "CM (Iyengar's classification metric)"
    paper = PAPER
    description = "Share of records penalised: in a group smaller than k, or carrying their group's minority label."
    higher_is_better = False
    Params = CMParams
    fits_forms = (BINARY,)
    memory_cost = MemoryCost(per_cell=COST_PER_CELL)  # the release's ones as row indices, and a column at a time

    def compute(self, original, release, params, ctx):
        m = release_matrix(release)
        if not _two_classes(m):
            return float("nan")
        pos = positive_mask(m)
        return cm(pos, partition_of(m, range(m.n_features), containment=False).row_classes(), params.k) / m.n_rows


class FlipRate(Metric):
    cost = CHEAP
    name = "flip-rate"
    title = "Flip rate (share of cells changed)"
    paper = PAPER
    description = "Share of released cells whose value the method changed (randomised flipping); 0 otherwise."
    category = "privacy"
    higher_is_better = False
    memory_cost = MemoryCost(per_record=0.0, per_cell=0.0)  # reads the method's figure

    @classmethod
    def fits(cls, algorithm, model) -> bool:
        return bool(algorithm.randomised)  # only a randomised method flips cells

    def compute(self, original, release, params, ctx):
        return float(release.details.get("flip_rate", 0.0))


@hookimpl
def veil_register_metrics():
    return [HamDistMetric, DistCntMetric, CMMetric, FlipRate]
