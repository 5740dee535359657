"""What a release whose values were perturbed declares of it, in typed form (docs/perturbation.md,
"Before and after").

A method that perturbs values record for record (PRAM, noise, rank swapping) says which columns it
perturbed and, for a column whose categories were drawn from a transition matrix, each matrix it
used (one per stratum). The desktop's Utility tab, ``veil utility`` and the manifest read this, never
the method's name or its own details.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..base.errors import BadInput


@dataclass(frozen=True)
class Transition:
    """One transition matrix a perturbation used: ``matrix[i, j]`` is the probability that a record
    of ``categories[i]`` in ``column`` was published as ``categories[j]``; ``stratum`` the values of
    the stratum columns it applied to (empty: every record), ``records`` how many it was drawn for."""

    column: str
    categories: tuple[str, ...]
    matrix: np.ndarray
    stratum: Mapping = field(default_factory=dict)
    records: int = 0

    def __post_init__(self):
        m = np.asarray(self.matrix, dtype=float)
        n = len(self.categories)
        if m.shape != (n, n):
            raise BadInput(
                f"the transition matrix of {self.column!r} is {m.shape[0]}×{m.shape[1] if m.ndim > 1 else 0}, "
                f"not {n}×{n} over its {n} categories"
            )
        object.__setattr__(self, "matrix", m)
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))

    @property
    def stratum_text(self) -> str:
        """The stratum in words ("all records" without strata)."""
        return ", ".join(f"{k} = {v}" for k, v in self.stratum.items()) or "all records"

    def to_dict(self) -> dict:
        return {
            "column": self.column,
            "stratum": dict(self.stratum),
            "records": int(self.records),
            "categories": list(self.categories),
            "matrix": self.matrix.round(12).tolist(),
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Transition:
        try:
            return cls(
                str(d["column"]),
                tuple(d["categories"]),
                np.asarray(d["matrix"], dtype=float),
                dict(d.get("stratum") or {}),
                int(d.get("records") or 0),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInput(f"a transition matrix is not one Veil writes: {exc}") from None


@dataclass(frozen=True)
class Perturbation:
    """A perturbed release's declaration: the ``columns`` whose values were perturbed record for
    record (the records keep their order and number), and the ``transitions`` used for categories."""

    columns: tuple[str, ...]
    transitions: tuple[Transition, ...] = ()

    def transitions_of(self, column: str) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.column == column)

    def to_dict(self) -> dict:
        return {"columns": list(self.columns), "transitions": [t.to_dict() for t in self.transitions]}

    @classmethod
    def from_dict(cls, d: Mapping | None) -> Perturbation | None:
        if not d:
            return None
        if not isinstance(d, Mapping) or not isinstance(d.get("columns"), list):
            raise BadInput("the manifest's perturbation is not one Veil writes: it lists no columns")
        return cls(tuple(map(str, d["columns"])), tuple(Transition.from_dict(t) for t in d.get("transitions") or ()))
