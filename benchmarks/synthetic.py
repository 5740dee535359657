"""Seeded synthetic set-valued data shaped like the Netflix ratings part used by paper 002 (benchmarks, scale tests).

The defaults follow the paper's Table 6 (the data its Table 7 measured, the first part of the Netflix
prize data as sets of films per user): :data:`NETFLIX`, 410,201 records over 4,496 items, 13.4 items a
record on average and 2,060 at most. (The text's "480,189 × 6,733, an average of 56" describes another
version of the data; the numbers measured are Table 6's.)

:func:`power_law_sets` draws

* each record's length from a log-normal rounded to whole items and kept within 1 … ``max_items``,
  its two parameters fitted (:func:`length_law`) so that the lengths' mean is ``mean_items`` and
  ``max_items`` is the characteristic largest of ``max_of`` records (one record in ``max_of`` expected
  at it or above: the largest of Table 6's 410,201 records is 2,060). Table 6 states only the mean and
  the maximum; a log-normal is a common heavy-tailed model of how many items a user rates or clicks,
  and its two parameters are exactly what two statistics fix;
* each record's items by Zipf popularity: item j (0 the most popular) with probability ∝ (j + 1)^−a,
  drawn until the record holds its length in distinct items (draws of an item already held are
  dropped: sampling without replacement), so a record of 2,060 items is as possible as one of 3.
  Table 6 says nothing of popularity; the paper calls the Netflix sets "similar to BMS-WebView", so
  the records' item counts are made to follow BMS-WebView-2's: :func:`zipf_exponent` fits 0.716 to
  its counts, and the default a = 0.763 is the exponent of the draws whose held items' counts fit the
  same 0.716 (sampling without replacement flattens the counts: long records hold many rare items).
  ``benchmarks/bench_patternka_scale.py --shape`` prints both fits and the generated statistics.

>>> s = power_law_sets(1000, 200, mean_items=10, max_items=100, seed=1)
>>> s.n_rows, s.n_items, round(s.nnz / s.n_rows, 1), int(s.row_lengths().max()) <= 100
(1000, 200, 9.7, True)
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from veil.engine import SetValued

#: Paper 002, Table 6: the Netflix part's records, items, largest and average record.
NETFLIX = {"records": 410_201, "items": 4_496, "max_items": 2_060, "mean_items": 13.4}
#: Zipf exponent of BMS-WebView-2's item counts (:func:`zipf_exponent`), which the records' counts follow.
COUNTS_EXPONENT = 0.716
#: Zipf exponent of the draws that gives held items' counts of exponent :data:`COUNTS_EXPONENT` (see the module).
EXPONENT = 0.763


def power_law_sets(
    n_records: int = NETFLIX["records"],
    n_items: int = NETFLIX["items"],
    *,
    mean_items: float = NETFLIX["mean_items"],
    max_items: int = NETFLIX["max_items"],
    max_of: int = NETFLIX["records"],
    exponent: float = EXPONENT,
    seed: int = 0,
) -> SetValued:
    """Records × items with log-normal lengths and Zipf item popularity (see the module); memory
    O(records × mean_items)."""
    rng = np.random.default_rng(seed)
    largest = min(max_items, n_items)
    mu, sigma = length_law(mean_items, largest, max_of)
    lengths = np.clip(np.rint(rng.lognormal(mu, sigma, n_records)), 1, largest).astype(np.int64)
    cdf = np.cumsum(np.arange(1, n_items + 1, dtype=np.float64) ** -exponent)
    cdf /= cdf[-1]
    keys = _distinct_draws(rng, lengths, cdf, n_items)
    rows, items = keys // n_items, keys % n_items
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n_records))))
    meta = {
        "source": None,
        "synthetic": {
            "kind": "power-law sets",
            "records": n_records,
            "items": n_items,
            "mean_items": mean_items,
            "max_items": largest,
            "max_of": max_of,
            "exponent": exponent,
            "seed": seed,
        },
    }
    return SetValued(indptr, items.astype(np.int32), [str(j + 1) for j in range(n_items)], meta=meta)


def _distinct_draws(rng, lengths: np.ndarray, cdf: np.ndarray, n_items: int) -> np.ndarray:
    """Sorted keys row × n_items + item: for each row the first ``lengths[row]`` distinct items of a
    sequence of independent draws from ``cdf``. Drawn in rounds of twice each row's shortfall (plus one);
    a round keeps, in draw order, the new items up to the shortfall, so the result is that of drawing
    one at a time."""
    held = np.empty(0, dtype=np.int64)  # sorted keys of the rows still short
    done = []
    active = np.arange(len(lengths), dtype=np.int64)
    have = np.zeros(len(lengths), dtype=np.int64)
    while len(active):
        short = lengths[active] - have[active]
        rows = np.repeat(active, 2 * short + 1)
        keys = rows * n_items + np.searchsorted(cdf, rng.random(len(rows)), side="right").clip(0, n_items - 1)
        del rows
        if len(held):
            at = np.searchsorted(held, keys).clip(0, len(held) - 1)
            keys = keys[held[at] != keys]  # already held: dropped
        _, first = np.unique(keys, return_index=True)
        order = np.sort(first)  # first draws of new items, in draw order (grouped by row, as drawn)
        new = keys[order]
        row = new // n_items
        start = np.searchsorted(row, row, side="left")
        rank = np.arange(len(new)) - start
        want = np.zeros(len(lengths), dtype=np.int64)
        want[active] = short
        new = new[rank < want[row]]
        have += np.bincount(new // n_items, minlength=len(lengths))
        held = np.sort(np.concatenate((held, new)))
        finished = have[held // n_items] == lengths[held // n_items]
        done.append(held[finished])
        held = held[~finished]
        active = active[have[active] < lengths[active]]
    return np.sort(np.concatenate(done)) if done else np.empty(0, dtype=np.int64)


def length_law(mean_items: float, max_items: int, max_of: int) -> tuple[float, float]:
    """(μ, σ) of the log-normal X whose rounding clipped to 1 … ``max_items`` has mean ``mean_items`` and
    reaches ``max_items`` (X ≥ max_items − ½) with probability 1 / ``max_of``."""
    if not 1 < mean_items < max_items:
        raise ValueError(f"the mean {mean_items} must lie between 1 and the largest record {max_items}")
    z = float(ndtri(1 - 1 / max_of))
    top = math.log(max_items - 0.5)
    low, high = 1e-9, z
    for _ in range(100):  # the mean falls as σ grows (μ = top − σz falls faster): bisection
        sigma = (low + high) / 2
        if length_mean(top - sigma * z, sigma, max_items) > mean_items:
            low = sigma
        else:
            high = sigma
    sigma = (low + high) / 2
    if abs(length_mean(top - sigma * z, sigma, max_items) - mean_items) > 1e-6 * mean_items:
        raise ValueError(f"no log-normal has mean {mean_items} and reaches {max_items} once in {max_of} records")
    return top - sigma * z, sigma


def length_mean(mu: float, sigma: float, max_items: int) -> float:
    """The mean of a log-normal(μ, σ) rounded to whole items and clipped to 1 … ``max_items``."""
    return float(np.dot(np.arange(1, max_items + 1), length_probabilities(mu, sigma, max_items)))


def length_probabilities(mu: float, sigma: float, max_items: int) -> np.ndarray:
    """P(length = l) for l = 1 … ``max_items`` (see :func:`length_mean`)."""
    edges = ndtr((np.log(np.arange(1, max_items) + 0.5) - mu) / sigma)
    return np.diff(np.concatenate(([0.0], edges, [1.0])))


def zipf_exponent(counts) -> float:
    """The maximum-likelihood exponent a of a Zipf law on ranks (the item of rank r drawn with probability
    ∝ r^−a, over as many ranks as there are counts), fitted to items' counts; to 0.001."""
    f = np.sort(np.asarray(counts, dtype=np.float64))[::-1]
    logr = np.log(np.arange(1, len(f) + 1))

    def slope(a):  # derivative of the log-likelihood: −Σ f log r + N E_a[log r], falling in a
        w = np.exp(-a * logr)
        return -(f @ logr) + f.sum() * (w @ logr) / w.sum()

    low, high = 0.0, 10.0
    while high - low > 1e-4:
        mid = (low + high) / 2
        low, high = (mid, high) if slope(mid) > 0 else (low, mid)
    return round((low + high) / 2, 3)
