"""k-anonymity: every combination of quasi-identifier values occurs at least k times.

On a binary release (feature selection, paper 000 §3) the quasi-identifiers are the released
features and the combinations are the distinct row vectors, zeros included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, KAnonymityConstraint, PrivacyModel, Verdict, hookimpl, param


def class_sizes(frame: pd.DataFrame) -> np.ndarray:
    """Size of each record's equivalence class (records equal on every column of ``frame``)."""
    if frame.shape[1] == 0:
        return np.full(len(frame), len(frame), dtype=np.int64)
    group = frame.groupby(list(frame.columns), dropna=False, sort=False).ngroup().to_numpy()
    return np.bincount(group)[group].astype(np.int64)


@dataclass(frozen=True)
class KParams:
    k: int = param(5, minimum=1, help="smallest allowed size of a group of indistinguishable records")


class KAnonymity(PrivacyModel):
    name = "k-anonymity"
    title = "k-anonymity"
    paper = "000_0106b4def2026c16"
    description = "Every record shares its quasi-identifier values with at least k−1 others."
    Params = KParams

    def check(self, release, params):
        n = release.n_rows
        if params.k > n:
            raise BadInput(f"k = {params.k} is larger than the number of records ({n})")
        sizes = class_sizes(release.quasi_identifier_frame())
        smallest = int(sizes.min()) if n else 0
        failing = np.flatnonzero(sizes < params.k)
        holds = len(failing) == 0
        if holds:
            msg = f"holds: the smallest group has {smallest} records (k = {params.k})"
        else:
            msg = (f"fails: {len(failing)} of {n} records are in groups smaller than k = {params.k} "
                   f"(smallest group: {smallest}; first failing record: row {failing[0] + 1})")
        return Verdict(self.name, {"k": params.k}, holds, smallest, msg, sizes, failing)

    def selection_constraint(self, matrix, params):
        if params.k > matrix.n_rows:
            raise BadInput(f"k = {params.k} is larger than the number of records ({matrix.n_rows})")
        return KAnonymityConstraint(matrix, params.k)


@hookimpl
def veil_register_privacy_models():
    return [KAnonymity]
