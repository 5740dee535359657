"""Containment and grouping kernels on bitsets (docs/reference.md#feature-selection, paper 000 §3).

A :class:`Partition` groups the rows of a BinaryMatrix by their pattern on a feature set S (the
equivalence classes of D_S). It keeps every row's class and, for every class, the bitset of the rows
*containing* its pattern (the rows whose 1-set on S is a superset of the class's). From these,
adding one feature f is answered without recomputing anything from scratch:

* a class q splits into q₀ (f = 0) and q₁ (f = 1);
* the support of pattern(q₀) is unchanged; the support of pattern(q₁) = pattern(q) ∪ {f} is
  ``popcount(contains[q] & bits[f])``;
* so kac(S ∪ {f}) = min(min over q with q₀ ≠ ∅ of support(q), min over q with q₁ ≠ ∅ of
  popcount(contains[q] & bits[f])).

kac(u, S) = |{v : C(u, S) ⊆ C(v, S)}| is the support of row u's pattern, so kac(S) is the smallest
support over the classes. k-anonymity of D_S is the smallest class size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..data.binary import BinaryMatrix, pack_rows


def _popcounts(stack: np.ndarray) -> np.ndarray:
    """Set bits per row of a 2-D stack of bitsets."""
    return np.bitwise_count(stack).sum(axis=1, dtype=np.int64)


class Partition:
    """The equivalence classes of D_S: every row's class, every class's size and pattern and, with
    ``containment``, the bitset of the rows containing its pattern.

    Which rows are in a class is kept as one class index per row (not a bitset per class), so the
    partition takes O(rows) memory however many classes there are; the containment bitsets k-AC needs
    take O(classes × rows / 8) and are kept only when asked for.

    Parameters
    ----------
    matrix : BinaryMatrix
    rows : bitset, optional
        Restrict to these rows (all rows by default).
    containment : bool
        Keep each class's containment bitset and support (:meth:`kac` and the k-AC queries need them).
    """

    def __init__(self, matrix: BinaryMatrix, rows: np.ndarray | None = None, containment: bool = True):
        self.matrix = matrix
        universe = matrix.all_rows() if rows is None else np.asarray(rows, dtype=np.uint64)
        self.contains = universe[None, :].copy() if containment else None  # rows containing each class's pattern
        self.patterns: list[tuple[int, ...]] = [()]
        self.selected: list[int] = []
        in_universe = np.unpackbits(universe.view(np.uint8), bitorder="little")[: matrix.n_rows].astype(bool)
        self.row_class = np.where(in_universe, 0, -1).astype(np.int64)
        self.sizes = np.array([int(in_universe.sum())], dtype=np.int64)
        self.supports = self.sizes.copy() if containment else None

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    def _containment(self) -> np.ndarray:
        if self.contains is None:
            raise ValueError("this partition keeps no containment bitsets (Partition(..., containment=True))")
        return self.contains

    def kac(self) -> int:
        """kac(S): the smallest containment support over the classes (n for S = ∅)."""
        self._containment()
        return int(self.supports.min()) if self.n_classes else 0

    def smallest_class(self) -> int:
        return int(self.sizes.min()) if self.n_classes else 0

    # -- one candidate feature ------------------------------------------------------------------
    def _ones(self, f: int) -> np.ndarray:
        """Per class: its rows with f = 1 (a count over the rows holding f)."""
        classes = self.row_class[self.matrix.column_rows(f)]
        return np.bincount(classes[classes >= 0], minlength=self.n_classes)

    def split_counts(self, f: int) -> tuple[np.ndarray, np.ndarray]:
        """Per class: rows with f = 1 and rows with f = 0."""
        ones = self._ones(f)
        return ones, self.sizes - ones

    def kac_with(self, f: int) -> int:
        """kac(S ∪ {f}) from the classes, without recomputing supports from scratch."""
        contains = self._containment()
        ones, zeros = self.split_counts(f)
        best = int(self.supports[zeros > 0].min()) if (zeros > 0).any() else self.matrix.n_rows
        hit = ones > 0
        if hit.any():
            grown = _popcounts(contains[hit] & self.matrix.bitset(f))
            best = min(best, int(grown.min()))
        return best

    def kac_feasible(self, f: int, k: int) -> bool:
        """Whether kac(S ∪ {f}) ≥ k, given kac(S) ≥ k (the f = 0 parts keep their supports)."""
        contains = self._containment()
        hit = self._ones(f) > 0
        if not hit.any():
            return True
        grown = _popcounts(contains[hit] & self.matrix.bitset(f))
        return bool(grown.min() >= k)

    def anonymity_with(self, f: int) -> int:
        """Smallest class size of D_{S ∪ {f}}."""
        ones, zeros = self.split_counts(f)
        parts = np.concatenate([ones[ones > 0], zeros[zeros > 0]])
        return int(parts.min()) if len(parts) else 0

    # -- growing S ------------------------------------------------------------------------------
    def add(self, f: int) -> None:
        """S ← S ∪ {f}: split every class on f (the f = 0 parts first, then the f = 1 parts)."""
        ones, zeros = self.split_counts(f)
        keep1, keep0 = ones > 0, zeros > 0
        if self.contains is not None:  # the f = 0 part's pattern is the class's: its support is unchanged
            grown = self.contains[keep1] & self.matrix.bitset(f)
            self.supports = np.concatenate([self.supports[keep0], _popcounts(grown)])
            self.contains = np.concatenate([self.contains[keep0], grown])
        pats = self.patterns
        self.patterns = [pats[i] for i in np.flatnonzero(keep0)] + [(*pats[i], f) for i in np.flatnonzero(keep1)]
        map0 = np.full(len(keep0) + 1, -1, dtype=np.int64)
        map1 = np.full(len(keep1) + 1, -1, dtype=np.int64)
        map0[:-1][keep0] = np.arange(keep0.sum())
        map1[:-1][keep1] = keep0.sum() + np.arange(keep1.sum())
        old = self.row_class
        new = map0[old]  # index -1 (outside the universe) maps to the sentinel -1
        with_f = self.matrix.column_rows(f)
        new[with_f] = map1[old[with_f]]
        self.row_class = new
        self.sizes = np.concatenate([zeros[keep0], ones[keep1]])
        self.selected.append(int(f))

    def row_classes(self) -> np.ndarray:
        """Class index of every row (-1 for rows outside the universe)."""
        return self.row_class


class SelectionConstraint:
    """A privacy model's rule for growing a feature set S one feature at a time.

    Feature-selection methods call :meth:`feasible` for a candidate and :meth:`add` for the one
    they choose; the privacy model decides. Subclasses implement :meth:`feasible` and
    :meth:`value` (the model's measure of the current S).
    """

    containment = True  # whether the rule reads the classes' containment (k-AC) or only their sizes

    def __init__(self, matrix: BinaryMatrix, k: int):
        self.partition = Partition(matrix, containment=self.containment)
        self.k = int(k)

    @property
    def selected(self) -> list[int]:
        return list(self.partition.selected)

    def feasible(self, f: int) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def value(self) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def add(self, f: int) -> None:
        self.partition.add(f)


class KacConstraint(SelectionConstraint):
    """k-anonymity by containment: kac(S ∪ {f}) ≥ k."""

    def feasible(self, f: int) -> bool:
        return self.partition.kac_feasible(f, self.k)

    def value(self) -> int:
        return self.partition.kac()


class KAnonymityConstraint(SelectionConstraint):
    """k-anonymity of D_S: every class of D_{S ∪ {f}} has at least k rows."""

    containment = False

    def feasible(self, f: int) -> bool:
        ones, zeros = self.partition.split_counts(f)
        return bool(np.all((ones == 0) | (ones >= self.k)) and np.all((zeros == 0) | (zeros >= self.k)))

    def value(self) -> int:
        return self.partition.smallest_class()


class AllOf(SelectionConstraint):
    """Several models' rules at once (a run under combined models): a feature is feasible when every
    rule allows it. The rules share one partition, so adding a feature splits the classes once."""

    def __init__(self, constraints: Sequence[SelectionConstraint]):
        if not constraints:
            raise ValueError("AllOf needs at least one constraint")
        self.constraints = list(constraints)
        self.partition = next((c.partition for c in self.constraints if c.containment), self.constraints[0].partition)
        for c in self.constraints:
            c.partition = self.partition
        self.k = max(c.k for c in self.constraints)

    def feasible(self, f: int) -> bool:
        return all(c.feasible(f) for c in self.constraints)

    def value(self) -> int:
        return self.constraints[0].value()


def partition_of(matrix: BinaryMatrix, features: Iterable[int], check=None, containment: bool = True) -> Partition:
    """The partition of the records by their values on ``features``; ``check`` (cancellation) is
    called before each feature refines it (a pass over the records); ``containment``: keep what
    :meth:`Partition.kac` needs (see :class:`Partition`)."""
    part = Partition(matrix, containment=containment)
    for f in features:
        if check is not None:
            check()
        part.add(int(f))
    return part


def kac_per_record(matrix: BinaryMatrix, features: Sequence[int]) -> np.ndarray:
    """kac(u, S) for every row u."""
    part = partition_of(matrix, features)
    return part.supports[part.row_classes()]


def kac(matrix: BinaryMatrix, features: Sequence[int]) -> int:
    """kac(S) = min over rows of kac(u, S); n for S = ∅ or a matrix without rows containing S."""
    return partition_of(matrix, features).kac() if matrix.n_rows else 0


def class_sizes_per_record(matrix: BinaryMatrix, features: Sequence[int]) -> np.ndarray:
    """Size of each row's equivalence class in D_S (k-anonymity on binary data)."""
    part = partition_of(matrix, features, containment=False)
    return part.sizes[part.row_classes()]


def rows_bitset(matrix: BinaryMatrix, rows: np.ndarray) -> np.ndarray:
    return pack_rows(np.asarray(rows, dtype=np.int64), matrix.n_rows)
