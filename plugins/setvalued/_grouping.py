"""What the set-valued groupings share: a grouping (each record's group and each group's centre), its
release (each record publishes its group's centre), its information loss (the GCP of
docs/reference.md#set-valued-data), packed bit
sets, and the names of paper 002 and of a grouped-sets release's one column. PatternKa
(:mod:`.patternka`), the top-down baseline (:mod:`.top_down`), the GCP metric (:mod:`.metrics`), the
item-set exporter (:mod:`veil.plugins.io.itemsets`) and relational PatternKa use it.
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


def pack_bits(mask: np.ndarray) -> np.ndarray:
    """A boolean vector as packed uint64 words."""
    n = len(mask)
    padded = np.zeros(((n + 63) // 64) * 64, dtype=bool)
    padded[:n] = mask
    return np.packbits(padded, bitorder="little").view(np.uint64)


def unpack_bits(bits: np.ndarray, n: int) -> np.ndarray:
    """The first n bits of packed uint64 words as a boolean vector."""
    return np.unpackbits(bits.view(np.uint8), bitorder="little", count=n).astype(bool)


def popcount_bits(bits: np.ndarray) -> int:
    """The number of set bits in packed words."""
    return int(np.bitwise_count(bits).sum(dtype=np.int64))


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
