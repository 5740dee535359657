"""Seeded synthetic set-valued data shaped like a ratings log (for benchmarks and scale tests).

:func:`power_law_sets` draws, for each record, a number of items from a log-normal with the asked
mean and then that many items by Zipf popularity (item j chosen with probability ∝ (j + 1)^−a),
drawing with replacement (by inverting the continuous power law) and keeping each item once (so a record holds a little fewer than drawn). The defaults give the shape of the Netflix
prize data's part 1 used by paper 002 (410,201 users, 4,496 movies): 410,000 records, 4,500 items,
about 56 items per record, the most popular item held by about half the records.

>>> s = power_law_sets(1000, 200, mean_items=10, seed=1)
>>> s.n_rows, s.n_items, round(s.nnz / s.n_rows, 1)  # few items: more repeats drawn and dropped
(1000, 200, 8.9)
"""

from __future__ import annotations

import numpy as np

from veil.engine import SetValued


def power_law_sets(n_records: int = 410_000, n_items: int = 4_500, *, mean_items: float = 56.0,
                   exponent: float = 0.6, spread: float = 1.0, seed: int = 0) -> SetValued:
    """Records × items with power-law item popularity (see the module); memory O(records × mean_items)."""
    rng = np.random.default_rng(seed)
    # draws with replacement lose their repeats (about 5 % at the defaults): ask that much more
    draws = _lengths(rng, n_records, mean_items * 1.05, spread, n_items)
    rows = np.repeat(np.arange(n_records, dtype=np.int64), draws)
    # inverse of the continuous power law's distribution on [1, n_items + 1): item j has weight ≈ (j + 1)^−a
    if abs(exponent - 1.0) < 1e-9:
        x = np.exp(rng.random(len(rows)) * np.log(n_items + 1.0))
    else:
        b = 1.0 - exponent
        x = (1.0 + rng.random(len(rows)) * ((n_items + 1.0) ** b - 1.0)) ** (1.0 / b)
    items = (x.astype(np.int64) - 1).clip(0, n_items - 1)
    del x
    key = rows * n_items + items
    del rows, items
    key.sort()
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]  # each item once per record
    rows, items = key // n_items, key % n_items
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n_records))))
    meta = {"source": None, "synthetic": {"kind": "power-law sets", "records": n_records, "items": n_items,
                                          "mean_items": mean_items, "exponent": exponent, "seed": seed}}
    return SetValued(indptr, items.astype(np.int32), [str(j + 1) for j in range(n_items)], meta=meta)


def _lengths(rng, n, mean, spread, cap) -> np.ndarray:
    mu = np.log(mean) - spread**2 / 2
    return np.clip(np.rint(rng.lognormal(mu, spread, n)).astype(np.int64), 1, cap)
