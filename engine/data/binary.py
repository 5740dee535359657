"""BinaryMatrix: the shared, immutable n × m 0/1 model every binary method works on.

Stored column-wise as sparse row indices (CSC layout: memory proportional to the number of ones),
with packed 64-bit bitsets materialised on demand for the columns a kernel needs. All arrays are
read-only, so the GUI thread and a worker thread can share one matrix without locks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.errors import BadInput

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to read a table
    import scipy.sparse as sp

WORD = 64


@dataclass(frozen=True)
class Feature:
    """Where a binary feature comes from: a source column and the value or interval it tests."""

    name: str
    source: str | None = None
    value: object = None  # a category, or (lo, hi) for an interval, or None for "value > 0"
    rule: str = "item"  # "one-hot", "interval", "positive", "item", "binary"

    def to_dict(self) -> dict:
        v = self.value
        if isinstance(v, tuple):
            v = list(v)
        elif isinstance(v, np.generic):
            v = v.item()
        return {"name": self.name, "source": self.source, "value": v, "rule": self.rule}


BASKETS = "baskets"  # meta key: the matrix's rows are item sets (read from transactions or set-valued data)


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def pack_rows(rows: np.ndarray, n: int) -> np.ndarray:
    """Bitset of length ``n`` with the given row indices set (bit i of word i // 64)."""
    words = np.zeros((n + WORD - 1) // WORD, dtype=np.uint64)
    if len(rows):
        rows = np.asarray(rows, dtype=np.int64)
        np.bitwise_or.at(words, rows >> 6, np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64)))
    return words


def pack_mask(mask: np.ndarray) -> np.ndarray:
    """A boolean vector as a bitset (bit i of word i // 64, as :func:`pack_rows` of its true rows)."""
    n = len(mask)
    padded = np.zeros(((n + WORD - 1) // WORD) * WORD, dtype=bool)
    padded[:n] = mask
    return np.packbits(padded, bitorder="little").view(np.uint64)


def unpack_mask(bits: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` bits of a bitset as a boolean vector."""
    return np.unpackbits(bits.view(np.uint8), bitorder="little", count=n).astype(bool)


def popcount(bits: np.ndarray) -> int:
    """Number of set bits in a bitset (or in every row of a 2-D stack, summed)."""
    return int(np.bitwise_count(bits).sum(dtype=np.int64))


def unpack_rows(bits: np.ndarray, n: int) -> np.ndarray:
    """Row indices whose bit is set."""
    as_bytes = bits.view(np.uint8)
    flags = np.unpackbits(as_bytes, bitorder="little")[:n]
    return np.flatnonzero(flags)


class BinaryMatrix:
    """An immutable binary matrix with feature provenance and optional labels.

    Parameters
    ----------
    indptr, indices : numpy arrays
        CSC structure: the rows with a 1 in column ``j`` are ``indices[indptr[j]:indptr[j+1]]``,
        sorted ascending.
    n_rows : int
    features : sequence of Feature
    labels : array of length n_rows, optional
    """

    form = "binary"  # the dataset protocol (veil.engine.data)

    __slots__ = ("_indptr", "_indices", "_n", "_features", "_labels", "_bits", "_lock", "meta")

    def __init__(self, indptr, indices, n_rows: int, features: Sequence[Feature], labels=None, meta=None):
        indptr = np.asarray(indptr, dtype=np.int64)
        indices = np.asarray(indices, dtype=np.int32 if n_rows < 2**31 else np.int64)
        if len(indptr) != len(features) + 1:
            raise BadInput("the matrix structure does not match its feature list")
        names = [f.name for f in features]
        if len(set(names)) != len(names):
            raise BadInput("feature names must be unique")
        self._indptr = _readonly(indptr)
        self._indices = _readonly(indices)
        self._n = int(n_rows)
        self._features = tuple(features)
        if labels is not None:
            labels = np.asarray(labels)
            if len(labels) != n_rows:
                raise BadInput(f"{len(labels)} labels for {n_rows} rows")
            labels = _readonly(labels.copy())
        self._labels = labels
        self._bits: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()
        self.meta = dict(meta or {})

    def __reduce__(self):
        # the bitset cache and its lock stay behind (a worker process builds its own)
        return (BinaryMatrix, (self._indptr, self._indices, self._n, self._features, self._labels, self.meta))

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dense(cls, dense, features: Sequence[Feature | str] | None = None, labels=None, meta=None):
        """From a 2-D array of 0/1 values (bool, integer or float); anything else is refused."""
        import scipy.sparse as sp

        a = np.asarray(dense)
        if a.ndim != 2:
            raise BadInput("a binary matrix needs a two-dimensional array")
        if a.dtype != bool:
            bad = ~np.isin(a, (0, 1))
            if bad.any():
                r, c = np.argwhere(bad)[0]
                raise BadInput(f"binary data required, but row {r + 1}, column {c + 1} holds {a[r, c].item()!r}")
        return cls.from_sparse(sp.csc_matrix(a.astype(bool)), features, labels, meta)

    @classmethod
    def from_sparse(cls, matrix, features: Sequence[Feature | str] | None = None, labels=None, meta=None):
        import scipy.sparse as sp

        csc = sp.csc_matrix(matrix)
        csc.eliminate_zeros()
        if csc.data.size and not np.all(csc.data == 1):
            raise BadInput("binary data required, but the matrix holds values other than 0 and 1")
        csc.sort_indices()
        n, m = csc.shape
        return cls(csc.indptr, csc.indices, n, _as_features(features, m), labels, meta)

    @classmethod
    def from_transactions(cls, transactions: Iterable[Iterable], labels=None, meta=None):
        """From item sets (one per record); features are the distinct items, sorted."""
        import scipy.sparse as sp

        rows, items = [], []
        n = 0
        for n, t in enumerate(transactions, start=1):
            uniq = set(t)
            items.extend(uniq)
            rows.extend([n - 1] * len(uniq))
        if n == 0:
            raise BadInput("no transactions to read")
        codes, names = pd.factorize(pd.Series(items, dtype=object), sort=True)
        m = len(names)
        csc = sp.csc_matrix((np.ones(len(rows), dtype=bool), (np.asarray(rows, np.int64), codes)), shape=(n, m))
        feats = [Feature(str(v), None, v, "item") for v in names]
        return cls.from_sparse(csc, feats, labels, meta)

    # -- shape and metadata ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return self._n, len(self._features)

    @property
    def n_rows(self) -> int:
        return self._n

    @property
    def n_features(self) -> int:
        return len(self._features)

    @property
    def baskets(self) -> bool:
        """Whether the rows are item sets (a transaction file, set-valued records), not features of a
        table: a release of every column is then a release of the item sets."""
        return bool(self.meta.get(BASKETS))

    @property
    def nnz(self) -> int:
        return int(self._indptr[-1])

    @property
    def density(self) -> float:
        n, m = self.shape
        return self.nnz / (n * m) if n and m else 0.0

    @property
    def features(self) -> tuple[Feature, ...]:
        return self._features

    @property
    def feature_names(self) -> list[str]:
        return [f.name for f in self._features]

    @property
    def labels(self) -> np.ndarray | None:
        return self._labels

    @property
    def indptr(self) -> np.ndarray:
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        return self._indices

    @property
    def nbytes(self) -> int:
        """Memory held by the sparse structure (bitsets cached on demand not included)."""
        return self._indptr.nbytes + self._indices.nbytes

    def column_rows(self, j: int) -> np.ndarray:
        """Row indices with a 1 in feature ``j``."""
        return self._indices[self._indptr[j] : self._indptr[j + 1]]

    def column_counts(self) -> np.ndarray:
        """Number of ones per feature."""
        return np.diff(self._indptr)

    def with_labels(self, labels) -> BinaryMatrix:
        return BinaryMatrix(self._indptr, self._indices, self._n, self._features, labels, self.meta)

    def select(self, columns: Sequence[int]) -> BinaryMatrix:
        """The projection D_S on the given feature indices, in the given order."""
        cols = [int(c) for c in columns]
        parts = [self.column_rows(j) for j in cols]
        indptr = np.zeros(len(cols) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(p) for p in parts])
        indices = np.concatenate(parts) if parts else np.zeros(0, dtype=self._indices.dtype)
        return BinaryMatrix(indptr, indices, self._n, [self._features[j] for j in cols], self._labels, self.meta)

    def take(self, rows) -> BinaryMatrix:
        """The sub-matrix of the given rows (in that order), labels included."""
        rows = np.asarray(rows, dtype=np.int64)
        sub = self.to_sparse().tocsr()[rows].tocsc()
        labels = None if self._labels is None else self._labels[rows]
        return BinaryMatrix.from_sparse(sub, self._features, labels, self.meta)

    def project(self, names: Sequence[str]) -> BinaryMatrix:
        """The columns with the given feature names, in that order."""
        index = {f.name: j for j, f in enumerate(self._features)}
        missing = [n for n in names if n not in index]
        if missing:
            raise BadInput(f"no feature named {missing[0]!r}")
        return self.select([index[n] for n in names])

    # -- views ----------------------------------------------------------------------------------
    def to_sparse(self) -> sp.csc_matrix:
        import scipy.sparse as sp

        data = np.ones(self.nnz, dtype=np.uint8)
        return sp.csc_matrix((data, self._indices, self._indptr), shape=self.shape)

    def to_dense(self, dtype=np.uint8) -> np.ndarray:
        return self.to_sparse().toarray().astype(dtype, copy=False)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.to_dense(), columns=self.feature_names)

    def transactions(self) -> list[list[int]]:
        """Row view: for each row, the sorted list of its 1-feature indices."""
        csr = self.to_sparse().tocsr()
        csr.sort_indices()
        return [csr.indices[csr.indptr[i] : csr.indptr[i + 1]].tolist() for i in range(self._n)]

    def fingerprint(self) -> str:
        """SHA-256 of the structure, feature names and labels (equal content ⇒ equal fingerprint)."""
        h = hashlib.sha256()
        h.update(np.int64(self._n).tobytes())
        h.update(self._indptr.tobytes())
        h.update(self._indices.astype(np.int64).tobytes())
        h.update("\x00".join(self.feature_names).encode())
        if self._labels is not None:
            h.update("\x00".join(map(str, self._labels.tolist())).encode())
        return h.hexdigest()

    # -- bitsets ----------------------------------------------------------------------------------
    @property
    def n_words(self) -> int:
        return (self._n + WORD - 1) // WORD

    def bitset(self, j: int) -> np.ndarray:
        """Packed bitset of feature ``j`` (cached, read-only)."""
        bits = self._bits.get(j)
        if bits is None:
            bits = _readonly(pack_rows(self.column_rows(j), self._n))
            with self._lock:
                self._bits.setdefault(j, bits)
        return bits

    def bitsets(self, columns: Sequence[int] | None = None) -> np.ndarray:
        """Stack of bitsets, one row per requested feature (all features when omitted)."""
        cols = range(self.n_features) if columns is None else columns
        out = np.empty((len(cols), self.n_words), dtype=np.uint64)
        for i, j in enumerate(cols):
            out[i] = self.bitset(j)
        return out

    def all_rows(self) -> np.ndarray:
        """Bitset with every row set."""
        return pack_rows(np.arange(self._n), self._n)

    def support(self, itemset: Iterable[int]) -> int:
        """Number of rows containing every feature of ``itemset`` (n for the empty set)."""
        acc = None
        for j in itemset:
            acc = self.bitset(j).copy() if acc is None else np.bitwise_and(acc, self.bitset(j), out=acc)
        return self._n if acc is None else popcount(acc)

    def __repr__(self) -> str:
        n, m = self.shape
        return f"BinaryMatrix({n} rows × {m} features, {self.nnz} ones, density {self.density:.4f})"


def _as_features(features, m: int) -> list[Feature]:
    if features is None:
        return [Feature(f"f{j + 1}", None, None, "binary") for j in range(m)]
    feats = [f if isinstance(f, Feature) else Feature(str(f), str(f), None, "binary") for f in features]
    if len(feats) != m:
        raise BadInput(f"{len(feats)} feature names for {m} columns")
    return feats
