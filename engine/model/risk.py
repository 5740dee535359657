"""Re-identification risk, computed by the engine itself (ARX's prosecutor, journalist and marketer).

Each record sits in an equivalence group: the records equal to it on the quasi-identifiers (or the
release's own ``groups``). An attacker who knows a person's quasi-identifier values picks at random
among the records that match.

* **Prosecutor** — knows the person is in the release: the record's risk is 1 / |its group|.
  ARX reports the highest risk (1 / smallest group), the average risk (groups / records) and the
  share of records whose risk exceeds a threshold.
* **Journalist** — does not know whether the person is in the release, only that they are in a
  population the release was sampled from: the risk is 1 / |the group in the population|. Without
  a population (the release holds every record of the data set, Veil's case), the population is
  the data set and journalist risk equals prosecutor risk.
* **Marketer** — wants to re-identify as many records as possible: the expected share of records
  re-identified, (1/n) Σ_groups f_g / F_g (f in the release, F in the population); without a
  population, groups / records.

>>> r = reidentification_risk(np.array([1, 2, 2, 5, 5, 5, 5, 5]), threshold=0.2)
>>> r.prosecutor_max, r.prosecutor_avg, r.records_at_risk, r.marketer
(1.0, 0.375, 0.375, 0.375)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

DEFAULT_THRESHOLD = 0.2  # groups smaller than 5 are at risk (k = 5, the papers' default)


@dataclass(frozen=True)
class Risk:
    """The three attacker models' figures for one release (NaN for an empty release)."""

    prosecutor_max: float
    prosecutor_avg: float
    records_at_risk: float  # share of records whose prosecutor risk exceeds ``threshold``
    journalist_max: float
    journalist_avg: float
    marketer: float
    threshold: float

    def to_dict(self) -> dict:
        return asdict(self)


def prosecutor_risks(sizes: np.ndarray) -> np.ndarray:
    """Each record's prosecutor risk from its group's size."""
    return 1.0 / np.asarray(sizes, dtype=float)


def reidentification_risk(sizes, *, threshold: float = DEFAULT_THRESHOLD, population_sizes=None, weights=None) -> Risk:
    """Risk from each record's group size in the release (``sizes``) and, for a sample of a larger
    population, in the population (``population_sizes``, per record; default: the release itself).

    With ``weights`` each entry stands for that many records alike (e.g. one entry per group, its
    size as its weight: the same figures as one entry per record, from a table of group counts).

    >>> r = reidentification_risk(np.array([1, 2, 5]), threshold=0.2, weights=np.array([1, 2, 5]))
    >>> r.prosecutor_max, r.prosecutor_avg, r.records_at_risk, r.marketer
    (1.0, 0.375, 0.375, 0.375)
    """
    sizes = np.asarray(sizes, dtype=float)
    w = np.ones(len(sizes)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != sizes.shape or (w < 0).any():
        raise ValueError("every entry needs a weight of zero or more")
    keep = w > 0
    sizes, w = sizes[keep], w[keep]
    if len(sizes) == 0:
        nan = float("nan")
        return Risk(nan, nan, nan, nan, nan, nan, float(threshold))
    population = sizes if population_sizes is None else np.asarray(population_sizes, dtype=float)[keep]
    if population.shape != sizes.shape or (population < sizes).any():
        raise ValueError("every record's population group must hold at least its release group")
    prosecutor = 1.0 / sizes
    journalist = 1.0 / population
    total = float(w.sum())
    # Σ over groups of f/F = Σ over records of 1/F (each group's f records add f · 1/F)
    marketer = float((w * journalist).sum() / total)
    return Risk(
        float(prosecutor.max()),
        float((w * prosecutor).sum() / total),
        float(w[prosecutor > threshold].sum() / total),
        float(journalist.max()),
        float((w * journalist).sum() / total),
        marketer,
        float(threshold),
    )


def release_risk(release, *, threshold: float = DEFAULT_THRESHOLD) -> Risk:
    """The risk of a release: its groups, or equality on its quasi-identifiers, or on the
    quasi-identifiers it publishes exact beside its groups (bucketisation)."""
    return reidentification_risk(release.linkage_class_sizes(), threshold=threshold)
