"""What the set-valued groupings share: a grouping (each record's group and each group's centre), its
release (each record publishes its group's centre), its information loss (the GCP of
docs/reference.md#set-valued-data) and the name of paper 002. PatternKa (:mod:`.patternka`), the
top-down baseline (:mod:`.top_down`), the privacy model (:mod:`.set_k_anonymity`) and the GCP metric
(:mod:`.metrics`) use it; packed bit sets are the engine's (``pack_mask``, ``popcount``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import Release, SetValued, grouped_sets

PAPER = "002_aa8a8f08b56f3f6d"


@dataclass(frozen=True)
class Grouping:
    """Every record's group (0 … G−1, in the order groups were made) and each group's centre."""

    groups: np.ndarray
    centres: SetValued
    patterns: list  # the pattern each group was made from (() for the last group of all remaining)
    minings: int  # how many times the miner ran

    @property
    def n_groups(self) -> int:
        return self.centres.n_rows


def information_loss(sets: SetValued, groups: np.ndarray, centres: SetValued) -> float:
    """the GCP of docs/reference.md#set-valued-data of a set-valued release: 1 − Σ_g |g|·|C_g| / Ω
    (the fraction of items suppressed)."""
    omega = sets.nnz
    if omega == 0:
        return 0.0
    sizes = np.bincount(groups, minlength=centres.n_rows)
    kept = int((sizes * centres.row_lengths()).sum())
    return 1.0 - kept / omega


def grouped_sets_release(sets: SetValued, grouping: Grouping, *, details=None, notes=()) -> Release:
    """The release of a set-valued grouping: each record publishes its group's centre."""
    return grouped_sets(grouping.centres, grouping.groups, details=details, notes=notes)
