"""Set-valued data: one item set per record, stored sparse (memory O(number of items)).

Click logs, prescriptions, diagnoses per patient, baskets (docs/reference.md#set-valued-data, PatternKa). A
:class:`SetValued` is immutable CSR: ``indptr`` (n + 1) and ``indices`` (the item codes of each
record, sorted ascending), item names, optional labels and provenance. It converts to and from the
column-wise :class:`~veil.engine.BinaryMatrix` in O(nnz), and writes itself in chunks
(:meth:`iter_chunks`) so a 410,000-record release never becomes a dense records × items frame.

>>> s = SetValued.from_sets([["milk", "bread"], ["bread"], []])
>>> s.n_rows, s.n_items, s.nnz
(3, 2, 3)
>>> [sorted(s.item_names[i] for i in row) for row in s.rows()]
[['bread', 'milk'], ['bread'], []]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from .binary import BASKETS, BinaryMatrix, Feature
from ..base.errors import BadInput

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to read a table
    import scipy.sparse as sp


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


class SetValued:
    """Item sets per record (CSR).

    Parameters
    ----------
    indptr : int array (n + 1,)
    indices : int array (nnz,)
        Item codes; each record's codes sorted ascending without repeats.
    item_names : sequence of str
    labels : array (n,), optional
        The target of each record, where there is one.
    meta : dict, optional
        Provenance (source path, sha256, how it was made).
    """

    form = "sets"

    def __init__(self, indptr, indices, item_names: Sequence[str], labels=None, meta=None):
        indptr = np.asarray(indptr, dtype=np.int64)
        indices = np.asarray(indices, dtype=np.int32 if len(item_names) < 2**31 else np.int64)
        if indptr.ndim != 1 or len(indptr) == 0 or indptr[0] != 0 or indptr[-1] != len(indices):
            raise BadInput("malformed set-valued data: row pointers do not match the items")
        if len(indices) and (indices.min() < 0 or indices.max() >= len(item_names)):
            raise BadInput("malformed set-valued data: an item code is out of range")
        self._indptr = _readonly(indptr)
        self._indices = _readonly(indices)
        self._items = tuple(str(n) for n in item_names)
        if len(set(self._items)) != len(self._items):
            raise BadInput("set-valued data has two items of the same name")
        n = len(indptr) - 1
        if labels is not None:
            labels = np.asarray(labels)
            if len(labels) != n:
                raise BadInput(f"{len(labels)} labels for {n} records")
            labels = _readonly(labels)
        self._labels = labels
        self.meta = dict(meta or {})

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_sets(cls, sets: Iterable[Iterable], labels=None, meta=None) -> SetValued:
        """From Python iterables of hashable items (small data, tests)."""
        sets = [list(dict.fromkeys(s)) for s in sets]
        names = sorted({str(i) for s in sets for i in s})
        code = {n: i for i, n in enumerate(names)}
        indptr = np.zeros(len(sets) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(s) for s in sets])
        indices = np.fromiter(
            (code[str(i)] for s in sets for i in sorted(s, key=lambda x: code[str(x)])),
            dtype=np.int64,
            count=int(indptr[-1]),
        )
        return cls(indptr, indices, names, labels, meta)

    @classmethod
    def from_binary(cls, matrix: BinaryMatrix) -> SetValued:
        """The records of a (transaction) BinaryMatrix, in O(nnz)."""
        csr = matrix.to_sparse().tocsr()
        csr.sort_indices()
        return cls(csr.indptr, csr.indices, matrix.feature_names, matrix.labels, dict(matrix.meta))

    @classmethod
    def from_column(cls, series: pd.Series, *, sep: str | None = None, labels=None, meta=None) -> SetValued:
        """From a relational column of kind "item set": each cell a list/set, or text items
        separated by ``sep`` (whitespace by default; empty or missing cells are empty sets)."""

        def items(cell):
            if cell is None or (isinstance(cell, float) and np.isnan(cell)):
                return []
            if isinstance(cell, str):
                return [t for t in (cell.split(sep) if sep else cell.split()) if t]
            return list(cell)

        return cls.from_sets((items(c) for c in series), labels=labels, meta=meta)

    # ------------------------------------------------------------------ shape
    @property
    def n_rows(self) -> int:
        return len(self._indptr) - 1

    @property
    def n_items(self) -> int:
        return len(self._items)

    @property
    def nnz(self) -> int:
        return int(self._indptr[-1])

    @property
    def density(self) -> float:
        cells = self.n_rows * self.n_items
        return self.nnz / cells if cells else 0.0

    @property
    def indptr(self) -> np.ndarray:
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        return self._indices

    @property
    def item_names(self) -> tuple[str, ...]:
        return self._items

    @property
    def labels(self) -> np.ndarray | None:
        return self._labels

    @property
    def nbytes(self) -> int:
        return self._indptr.nbytes + self._indices.nbytes

    def row_lengths(self) -> np.ndarray:
        return np.diff(self._indptr)

    def item_counts(self) -> np.ndarray:
        """How many records hold each item."""
        return np.bincount(self._indices, minlength=self.n_items)

    def row(self, i: int) -> np.ndarray:
        return self._indices[self._indptr[i] : self._indptr[i + 1]]

    def rows(self) -> Iterator[np.ndarray]:
        for i in range(self.n_rows):
            yield self.row(i)

    # ------------------------------------------------------------------ conversion
    def to_sparse(self) -> sp.csr_matrix:
        import scipy.sparse as sp

        data = np.ones(self.nnz, dtype=np.uint8)
        return sp.csr_matrix((data, self._indices, self._indptr), shape=(self.n_rows, self.n_items))

    def to_binary(self) -> BinaryMatrix:
        """The column-wise BinaryMatrix of the same records (features named by item)."""
        csc = self.to_sparse().tocsc()
        csc.sort_indices()
        features = [Feature(n) for n in self._items]
        return BinaryMatrix(csc.indptr, csc.indices, self.n_rows, features, self._labels, {**self.meta, BASKETS: True})

    def take(self, rows) -> SetValued:
        rows = np.asarray(rows, dtype=np.int64)
        sub = self.to_sparse()[rows]
        labels = None if self._labels is None else self._labels[rows]
        return SetValued(sub.indptr, sub.indices, self._items, labels, dict(self.meta))

    def distinct(self) -> tuple[np.ndarray, SetValued]:
        """(groups, sets): every record's group of records holding exactly the same items, and one
        row per group (in order of first appearance). Memory O(items held): rows are told apart by
        two independent 64-bit hashes of their sorted item codes and their length."""
        n = self.n_rows
        if n == 0:
            return np.zeros(0, dtype=np.int64), self
        rng = np.random.default_rng(0x5E75)
        keys = [np.diff(self._indptr).astype(np.uint64)]
        for _ in range(2):  # a row's hash: the sum of its items' random weights (order-free, wrapping)
            weight = rng.integers(0, 2**64, size=max(len(self._items), 1), dtype=np.uint64)
            sums = np.zeros(self.nnz + 1, dtype=np.uint64)
            np.cumsum(weight[self._indices], out=sums[1:])
            keys.append(sums[self._indptr[1:]] - sums[self._indptr[:-1]])
        _, first, groups = np.unique(np.stack(keys, axis=1), axis=0, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # groups numbered by first appearance
        renumber = np.empty_like(order)
        renumber[order] = np.arange(len(order))
        groups = renumber[groups.ravel()]
        return groups.astype(np.int64), self.take(np.sort(first))

    def labels_frame(self) -> pd.DataFrame:
        return (
            pd.DataFrame({"class": self._labels})
            if self._labels is not None
            else pd.DataFrame(index=range(self.n_rows))
        )

    def iter_chunks(self, rows: np.ndarray | None = None, chunk: int = 65536) -> Iterator[list[str]]:
        """Lines of item names (space-separated), ``chunk`` records at a time; ``rows`` maps each
        output line to a record of this set (a release's ``groups`` for group centres)."""
        order = np.arange(self.n_rows) if rows is None else np.asarray(rows, dtype=np.int64)
        names = np.array(self._items, dtype=object)
        texts = [" ".join(names[self.row(i)]) for i in range(self.n_rows)] if rows is not None else None
        for start in range(0, len(order), chunk):
            part = order[start : start + chunk]
            if texts is not None:
                yield [texts[i] for i in part]
            else:
                yield [" ".join(names[self.row(i)]) for i in part]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(self._indptr.tobytes())
        h.update(self._indices.astype(np.int64).tobytes())
        h.update("\x00".join(self._items).encode())
        return h.hexdigest()

    def __repr__(self) -> str:
        return f"SetValued({self.n_rows} records, {self.n_items} items, {self.nnz} ones)"
