"""SUDA: each record's minimal sample uniques, its SUDA and DIS scores, and which attributes and
values contribute (Elliot, Manning and Ford 2002; SUDA2: Manning, Haglin and Keane 2008), scored as
sdcMicro's ``suda2`` scores them. Definitions in docs/reference.md ("SUDA").

A *minimal sample unique* (MSU) of a record is a set of its values, on some of the quasi-identifiers,
that no other record shares, while every proper subset is shared. A blank (missing or suppressed) is
never part of an MSU and matches no value. The MSUs are found by going through the combinations of
quasi-identifiers by size: a record is unique on a combination when its key there is unique, and the
combination is minimal when the record is unique on none of its subsets one smaller (uniqueness only
grows with the columns). That gives exactly SUDA2's MSUs up to ``max_size``, in time
O(combinations · n) and memory one boolean per record and combination of the two sizes in hand.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .survey_risk import _group, combinations_count, key_codes


@dataclass(frozen=True)
class Suda:
    columns: tuple[str, ...]
    max_size: int  # the largest MSU size searched
    msu_counts: np.ndarray  # n × max_size: the record's MSUs of each size
    score: np.ndarray  # SUDA score per record
    dis: np.ndarray  # DIS-SUDA score per record
    contribution: np.ndarray  # n × m: each column's share of the record's score (0 where the score is 0)
    attribute_contribution: dict  # column → % of all scores it takes part in
    value_contribution: dict  # column → {value → % of the column's contribution}
    dis_fraction: float

    @property
    def records_with_msu(self) -> int:
        return int((self.score > 0).sum())


def msu_weights(m: int) -> np.ndarray:
    """The score of one MSU of size k = 1 … m among m quasi-identifiers: (m − k)! (Elliot's original
    scores, sdcMicro's default)."""
    return np.array([math.factorial(m - k) for k in range(1, m + 1)], dtype=float)


def _unique_on(codes: np.ndarray, combo: tuple[int, ...]) -> np.ndarray:
    """Whether each record's key on ``combo`` is shared by no other record (False with a blank there)."""
    sub = codes[:, combo]
    inverse, keys = _group(sub)
    sizes = np.bincount(inverse, minlength=len(keys))
    return (sizes[inverse] == 1) & (sub >= 0).all(axis=1)


def suda(
    frame: pd.DataFrame,
    quasi: Sequence[str],
    *,
    max_size: int | None = None,
    dis_fraction: float = 0.01,
    check=None,
    progress=None,
) -> Suda:
    """SUDA of ``frame`` on ``quasi``: MSUs up to ``max_size`` columns (all by default)."""
    codes = key_codes(frame, quasi)
    n, m = codes.shape
    top = m if max_size is None else max(1, min(max_size, m))
    weights = msu_weights(m)
    counts = np.zeros((n, top), dtype=np.int64)
    raw = np.zeros((n, m))
    total = combinations_count(m, top)
    done = 0
    previous: dict[tuple[int, ...], np.ndarray] = {}
    for k in range(1, top + 1):
        current: dict[tuple[int, ...], np.ndarray] = {}
        for combo in itertools.combinations(range(m), k):
            if check is not None:
                check()
            unique = _unique_on(codes, combo)
            current[combo] = unique
            if k > 1:
                for drop in range(k):
                    unique = unique & ~previous[combo[:drop] + combo[drop + 1 :]]
            msu = np.flatnonzero(unique)
            if len(msu):
                counts[msu, k - 1] += 1
                for j in combo:
                    raw[msu, j] += weights[k - 1]
            done += 1
            if progress is not None:
                progress(done / total, f"minimal sample uniques of size {k}")
        previous = current
    score = counts @ weights[:top]
    contribution = np.divide(raw, score[:, None], out=np.zeros_like(raw), where=score[:, None] > 0)
    dis = _dis_scores(codes, score, m, dis_fraction)
    totals = raw.sum(axis=0)
    attribute = {c: (100.0 * totals[j] / score.sum() if score.sum() else 0.0) for j, c in enumerate(quasi)}
    values = {}
    for j, c in enumerate(quasi):
        by_value = pd.Series(raw[:, j]).groupby(frame[c].to_numpy(), dropna=True, sort=True).sum()
        values[c] = {v: (100.0 * s / totals[j] if totals[j] else 0.0) for v, s in by_value.items()}
    return Suda(tuple(quasi), top, counts, score, dis, contribution, attribute, values, dis_fraction)


def _dis_scores(codes: np.ndarray, score: np.ndarray, m: int, fraction: float) -> np.ndarray:
    """The DIS-SUDA score of each record (Elliot, Manning and Ford 2002, as sdcMicro's ``suda2``): the
    file-level DIS, the chance that a sample unique on the full key is a population unique,
    ``U·f / (U·f + P·(1 − f))`` (U full-key sample uniques, P records in keys seen exactly twice, f
    the sampling fraction ``fraction``), spread over the records in proportion to ``score^Q``,
    ``Q = 1 + (8 − m) / 20``: ``1 / (1 + (U / DIS − U) / (score^Q · Σ score^−Q))``, 0 where the
    score is 0. Here a blank in the full key is a value of its own, as in sdcMicro."""
    inverse, keys = _group(codes)
    sizes = np.bincount(inverse, minlength=len(keys))
    uniques = float((sizes == 1).sum())
    pairs = float(2 * (sizes == 2).sum())
    dis = np.zeros(len(score))
    if uniques == 0 or not (score > 0).any():
        return dis
    file_dis = uniques * fraction / (uniques * fraction + pairs * (1 - fraction))
    q = 1.0 + (8.0 - m) / 20.0
    positive = score > 0
    adjust = float((1.0 / score[positive] ** q).sum())
    dis[positive] = 1.0 / (1.0 + (uniques / file_dis - uniques) / (score[positive] ** q * adjust))
    return dis


def suda_memory(n: int, m: int, max_size: int | None = None) -> int:
    """Bytes SUDA holds at its peak: the codes (8·m a record), the MSU counts (8·max_size), the raw and
    relative contributions (16·m), the scores (32), one grouping's and one column's factorising
    temporaries (80), one boolean per record for the combinations of the two sizes in hand, and a
    mebibyte of pandas' own."""
    top = m if max_size is None else min(max_size, m)
    widest = max((math.comb(m, k) + math.comb(m, k - 1) for k in range(1, top + 1)), default=0)
    return n * (8 * m + 8 * top + 16 * m + 32 + 80) + n * widest + 2**20
