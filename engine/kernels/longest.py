"""The ``r`` longest frequent closed (or maximal) itemsets, by depth-first search with length pruning.

Grouping set-valued records by their longest pattern (docs/reference.md#set-valued-data) and paper 000's top_r
largest maximal itemsets only ever need the longest patterns, never all of them: dense data at a high
support already has millions of maximal itemsets. This miner keeps the ``r`` best
patterns found so far, ordered by length (longest first) and then by their item list (the
lexicographically smallest first, the tie rule of docs/reference.md#set-valued-data), and abandons every branch
that cannot beat the ``r``-th of them:

* **length pruning on rows**: below a prefix P, a pattern of length L needs k records holding at
  least L − |P| of the branch's candidate items, so the branch's bound is |P| plus the k-th largest
  such count; records holding fewer candidate items than the current r-th length needs are dropped
  from the branch's (conditional) database, and items left with support < k with them, repeatedly;
* **closure**: items present in every record of the branch are added to P at once (perfect
  extensions), and a branch whose records all hold an item it may not use (an item earlier in the
  enumeration order) holds no closed pattern and is abandoned;
* supports are counted on the branch's conditional database: a dense boolean block once it is
  small, sparse rows (CSR) before.

Supports found are exact for every reported pattern (records dropped from a branch never hold a
pattern long enough to be reported). :func:`longest_itemsets` also reports the length ``cut``
below which its list is not complete; patterns longer than ``cut`` are all there.

A search stops with :class:`MiningLimit` (a :class:`BadInput` with a clear message) after
``max_seconds`` or after visiting ``max_nodes`` branches; it calls ``check`` (cancellation) now
and then. How many threads the compiled search may use comes from the caller's
:class:`~veil.engine.SearchOptions`.

>>> from veil.engine.setvalued import SetValued
>>> s = SetValued.from_sets([["a", "b", "c"], ["a", "b", "c"], ["a", "b"], ["c"]])
>>> longest_itemsets(s, 2, 2).patterns
[((0, 1, 2), 2), ((0, 1), 3)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..base.errors import BadInput
from ..data.binary import pack_rows
from . import longest_fim
from .limits import LengthBounds, MiningLimit
from .longest_fim import longest_by_fim
from .mining import CLOSED_ITEMSETS as CLOSED
from .mining import MAXIMAL_ITEMSETS as MAXIMAL
from .mining import have_pyfim
from .options import SearchOptions

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp


# The compiled search lives in longest_dfs, whose import imports numba (docs/benchmarks.md): it is
# imported when a search first needs it, not by every plugin that names this module's types when the
# plugins are registered.
def have_numba() -> bool:
    from .longest_dfs import have_numba as have

    return have()


def holders_in_parts(*args, **kwargs):
    from .dfs_holders import holders_in_parts as holders

    return holders(*args, **kwargs)


def longest_by_dfs(*args, **kwargs):
    from .longest_dfs import longest_by_dfs as search

    return search(*args, **kwargs)


DENSE_CELLS = 1 << 22  # a conditional database this small is held as a dense boolean block
TARGETS = (CLOSED, MAXIMAL)
BACKENDS = ("auto", "dfs", "pyfim", "python")
DFS_ROWS = 10_000  # auto: from this many records on, the compiled search (column enumeration) when numba is there


@dataclass(frozen=True)
class Longest:
    """The result of :func:`longest_itemsets`.

    Attributes
    ----------
    patterns : list of (itemset, support)
        Itemsets as ascending tuples of item codes, longest first, ties by item list.
    cut : int
        Every closed (maximal) pattern longer than ``cut`` is in ``patterns``; at length ``cut``
        only the lexicographically smallest are (0 when the list holds every pattern there is). With
        ``ties``, the list is complete at its shortest length and ``cut`` is one below it: none there.
    nodes : int
        Branches visited (the Python and the compiled search) or runs of the C miner (pyfim).
    floor : int
        0, or (a ``partial`` search that stopped with fewer than r patterns) the length from which
        ``patterns`` holds every closed (maximal) pattern: all of them at least ``floor`` long, none
        shorter.
    """

    patterns: list
    cut: int
    nodes: int
    floor: int = 0


class RecordIndex:
    """Records in both orientations (each record's items, each item's records), to find the records
    holding each of many itemsets at once: PatternKa's cache asks for thousands after a mining.

    >>> from veil.engine.setvalued import SetValued
    >>> index = RecordIndex(SetValued.from_sets([["a", "b"], ["a"], ["a", "b"]]))
    >>> ptr, rows = index.holders([(0, 1), (0,)])
    >>> rows[ptr[0]:ptr[1]].tolist(), rows[ptr[1]:ptr[2]].tolist()
    ([0, 2], [0, 1, 2])
    """

    def __init__(self, data):
        self.csr = _as_csr(data)
        self.n_rows, self.n_items = self.csr.shape
        csc = self.csr.tocsc()
        csc.sort_indices()
        self.col_ptr, self.col_rows = csc.indptr, csc.indices
        self._bits = None  # see _column_bits

    def column(self, j: int) -> np.ndarray:
        """The records holding item j, ascending."""
        return self.col_rows[self.col_ptr[j] : self.col_ptr[j + 1]]

    def holders(
        self,
        itemsets,
        alive: np.ndarray | None = None,
        spans: bool = False,
        parts: int | None = None,
        options: SearchOptions = SearchOptions(),
    ):
        """(ptr, rows): the records (of those ``alive``, a boolean mask) holding every item of
        ``itemsets[i]`` are ``rows[ptr[i]:ptr[i + 1]]``, ascending; with ``spans``, (ptr, rows, spans),
        ``spans[i]`` the number of distinct records among those of itemsets 0 … i. Each itemset walks
        the records of its least held item and tests the 64 items most common in the itemsets with one
        AND a record (compiled with numba when installed): O(Σ records of those least held items), not
        records × items; an itemset of popular items ANDs their columns' bit sets instead, where that
        costs less (made once, for the items held by more records than a bit set has words). From a thousand
        itemsets on, as many threads as ``options`` allow share them (``parts``: exactly that many, whatever
        their number; see :func:`~veil.engine.kernels.longest_dfs.holders_in_parts`)."""

        if alive is None:
            alive = np.ones(self.n_rows, dtype=bool)
        if not have_numba():  # the kernel as plain Python would walk every record: NumPy a pattern at a time
            return self._holders_numpy(itemsets, np.asarray(alive, dtype=bool), spans)
        sizes = np.fromiter((len(s) for s in itemsets), dtype=np.int64, count=len(itemsets))
        pat_ptr = np.concatenate(([0], np.cumsum(sizes)))
        pat_items = np.fromiter((j for s in itemsets for j in s), dtype=np.int64, count=int(pat_ptr[-1]))
        common = np.bincount(pat_items, minlength=self.n_items)
        top = np.argsort(-common, kind="stable")[:64]
        top = top[common[top] > 0].astype(np.int64)
        alive = np.asarray(alive, dtype=np.bool_)
        bit_row, col_bits = self._column_bits()
        alive_bits = pack_rows(np.flatnonzero(alive), self.n_rows)
        ptr, rows, distinct = holders_in_parts(
            self.csr.indptr,
            self.csr.indices,
            self.col_ptr,
            self.col_rows,
            alive,
            pat_ptr,
            pat_items,
            top,
            self.n_items,
            bit_row,
            col_bits,
            alive_bits,
            parts,
            options,
        )
        return (ptr, rows, distinct) if spans else (ptr, rows)

    def _column_bits(self):
        """(bit_row, col_bits): a bit set over the records for each item held by at least as many records
        as the bit set has words (for the others a walk of the column is always cheaper), made once:
        ``col_bits[bit_row[j]]``, ``bit_row[j]`` -1 for the other items."""
        if self._bits is None:
            words = (self.n_rows + 63) >> 6
            many = np.flatnonzero(np.diff(self.col_ptr) >= max(1, words))
            bit_row = np.full(self.n_items, -1, dtype=np.int64)
            bit_row[many] = np.arange(len(many))
            col_bits = np.zeros((len(many), words), dtype=np.uint64)
            for b, j in enumerate(many.tolist()):
                col_bits[b] = pack_rows(self.column(j), self.n_rows)
            self._bits = bit_row, col_bits
        return self._bits

    def holding(self, items, alive: np.ndarray) -> np.ndarray:
        """Boolean mask of the records in ``alive`` holding every item: the least held item's column
        first, narrowed by the others'."""
        mask = alive.copy()
        for j in sorted(items, key=lambda j: self.col_ptr[j + 1] - self.col_ptr[j]):
            col = np.zeros(self.n_rows, dtype=bool)
            col[self.column(j)] = True
            mask &= col
        return mask

    def _holders_numpy(self, itemsets, alive: np.ndarray, spans: bool):
        """:meth:`holders` without numba: :meth:`holding` an itemset at a time."""
        parts, seen, distinct = [], np.zeros(self.n_rows, dtype=bool), []
        for items in itemsets:
            rows = np.flatnonzero(self.holding(items, alive))
            parts.append(rows.astype(np.int64))
            seen[rows] = True
            distinct.append(int(seen.sum()) if spans else 0)
        ptr = np.concatenate(([0], np.cumsum([len(p) for p in parts], dtype=np.int64)))
        rows = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return (ptr, rows, np.array(distinct, dtype=np.int64)) if spans else (ptr, rows)


def _as_csr(data) -> sp.csr_matrix:
    """Records × items as a boolean CSR matrix, from a SetValued, a BinaryMatrix or a sparse matrix."""
    import scipy.sparse as sp

    if sp.issparse(data):
        m = sp.csr_matrix(data, dtype=bool)
    elif hasattr(data, "item_names"):  # SetValued
        m = sp.csr_matrix((np.ones(data.nnz, dtype=bool), data.indices, data.indptr), shape=(data.n_rows, data.n_items))
    elif hasattr(data, "to_sparse"):  # BinaryMatrix
        m = sp.csr_matrix(data.to_sparse(), dtype=bool)
    else:
        m = sp.csr_matrix(np.asarray(data, dtype=bool))
    m.sum_duplicates()
    m.sort_indices()
    return m


def longest_itemsets(
    data,
    min_support: int,
    r: int = 1,
    *,
    target: str = CLOSED,
    rows=None,
    max_seconds: float | None = None,
    max_nodes: int | None = None,
    check: Callable[[], None] | None = None,
    backend: str = "auto",
    max_length: int | None = None,
    bounds: LengthBounds | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    partial: bool = False,
    ties: bool = False,
    options: SearchOptions = SearchOptions(),
) -> Longest:
    """The ``r`` longest frequent closed (or maximal) itemsets with support ≥ ``min_support``.

    Parameters
    ----------
    data : SetValued, BinaryMatrix, scipy sparse or dense 0/1 array (records × items)
    min_support : int
        Absolute support k ≥ 1.
    r : int
        How many patterns to keep (longest first, ties by the smallest item list).
    target : CLOSED or MAXIMAL (one of TARGETS)
    rows : int array, optional
        Mine only these records.
    max_seconds, max_nodes : optional limits; reaching one raises :class:`MiningLimit`. ``max_nodes``
        counts branches in the Python search and patterns enumerated by the C miners.
    check : called now and then (raises to cancel).
    backend : "auto" (from ``DFS_ROWS`` records on the compiled length-bounded search of :mod:`.longest_dfs`
        when numba is installed, except when thousands of patterns are wanted from records of a few
        frequent items each; else Borgelt's C miners through pyfim when installed, see
        :mod:`.longest_fim`), "dfs", "pyfim" or "python" (the search of this module). All give the same result.
    max_length : optional, the caller's guarantee that no frequent itemset is longer (PatternKa knows
        one after each removal); the C search starts its length floor there.
    bounds : optional :class:`LengthBounds`, for a caller that mines fewer and fewer of the same records
        (PatternKa): what each closed search of the compiled backend proves is kept there, and the next
        one does not search again where nothing long enough can be. Other backends ignore it.
    progress : optional ``progress(taken, children, length)``, the compiled search's progress: the root's
        children (one per item) taken so far of how many, at which length. Reported about twice a
        second while it runs in its own process (``max_seconds`` or ``check`` given); other backends
        do not report.
    partial : bool
        Let the compiled search stop with fewer than r patterns: every one at least as long as a
        pattern it finds greedily first (the result's ``floor``), rather than search lower for the
        r-th. For a caller that needs only the longest with certainty (PatternKa's cache); other
        backends ignore it (``floor`` 0).
    ties : bool
        Let the compiled search also return every pattern as long as the r-th, which it finds anyway:
        the list is then complete at its shortest length, and ``cut`` is one below it. For a caller
        that can use them all (PatternKa's cache); other backends ignore it.
    options : SearchOptions
        How the compiled search may run: above all how many threads (a run passes
        ``SearchOptions(threads=ctx.threads)``); other backends ignore it.
    """
    if target not in TARGETS:
        raise BadInput(f"unknown mining target {target!r}; choose closed or maximal")
    if min_support < 1:
        raise BadInput("the minimum support must be at least 1")
    if r < 1:
        raise BadInput("the number of patterns to keep must be at least 1")
    if backend not in BACKENDS:
        raise BadInput(f"unknown longest-pattern backend {backend!r}; choose auto, dfs, pyfim or python")
    m = _as_csr(data)
    if rows is not None:
        m = m[np.asarray(rows, dtype=np.int64)]
    if backend == "auto" and m.shape[0] >= DFS_ROWS:
        if have_numba() and not _many_from_short_records(m, int(min_support), int(r)):
            backend = "dfs"
    if backend == "dfs":
        patterns, cut, nodes, floor = longest_by_dfs(
            m,
            int(min_support),
            int(r),
            target == MAXIMAL,
            max_seconds=max_seconds,
            max_nodes=max_nodes,
            check=check,
            max_length=max_length,
            bounds=bounds,
            progress=progress,
            partial=partial,
            ties=ties,
            options=options,
        )
        return Longest(patterns, cut, nodes, floor)
    if backend == "pyfim" or (backend == "auto" and have_pyfim()):
        patterns, cut, runs = longest_by_fim(
            m,
            int(min_support),
            int(r),
            target == MAXIMAL,
            max_seconds=max_seconds,
            max_patterns=max_nodes,
            check=check,
            max_length=max_length,
        )
        return Longest(patterns, cut, runs)
    search = _Search(min_support, r, target == MAXIMAL, max_seconds, max_nodes, check)
    n_items = m.shape[1]
    search.run(m, np.arange(n_items, dtype=np.int64))
    full = len(search.best) == r
    return Longest(
        [(items, support) for (_, items), support in zip(search.keys, search.supports)],
        len(search.keys[-1][1]) if full and search.keys else 0,
        search.nodes,
    )


def _many_from_short_records(m: sp.csr_matrix, k: int, r: int) -> bool:
    """Whether thousands of patterns are wanted from records that hold a few frequent items each, where
    length pruning has nothing to cut and one FP-growth run through pyfim enumerates them at less cost
    than the compiled search."""

    if r < longest_fim.SPECULATE_PATTERNS or not have_pyfim():
        return False
    hit = (np.bincount(m.indices, minlength=m.shape[1]) >= k)[m.indices]
    per_record = np.add.reduceat(hit, m.indptr[:-1][np.diff(m.indptr) > 0]) if hit.size else hit
    holding = int((per_record > 0).sum())
    return holding == 0 or int(hit.sum()) <= longest_fim.SPARSE_LENGTH * holding


class _Search:
    def __init__(self, k, r, maximal, max_seconds, max_nodes, check):
        self.k, self.r, self.maximal = int(k), int(r), maximal
        self.keys: list[tuple[int, tuple]] = []  # (-length, items), ascending = best first
        self.supports: list[int] = []
        self.best = self.keys
        self.nodes = 0
        self.check = check
        self.max_nodes = max_nodes
        self.deadline = None if max_seconds is None else time.monotonic() + max_seconds
        self.max_seconds = max_seconds

    # -- the r best so far
    @property
    def full(self) -> bool:
        return len(self.keys) >= self.r

    def min_length(self) -> int:
        """The length a new pattern needs (ties may still enter by their item list)."""
        return len(self.keys[-1][1]) if self.full else 1

    def offer(self, items: tuple, support: int) -> None:
        key = (-len(items), items)
        if self.full and key >= self.keys[-1]:
            return
        at = bisect.bisect_left(self.keys, key)
        if at < len(self.keys) and self.keys[at] == key:
            return
        self.keys.insert(at, key)
        self.supports.insert(at, support)
        if len(self.keys) > self.r:
            self.keys.pop()
            self.supports.pop()

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes % 64 == 0:
            if self.check is not None:
                self.check()
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise MiningLimit(
                    f"the longest-pattern search stopped after {self.max_seconds:g} s "
                    f"({self.nodes} branches visited) without finishing; raise the time limit, "
                    f"raise k or ask for fewer patterns"
                )
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise MiningLimit(
                f"the longest-pattern search stopped after visiting {self.max_nodes} branches "
                f"without finishing; raise the limit, raise k or ask for fewer patterns"
            )

    # -- the search
    def run(self, m: sp.csr_matrix, cols: np.ndarray) -> None:
        tail = np.ones(len(cols), dtype=bool)
        self._node((), m, cols, tail)

    def _node(self, prefix: tuple, db, cols: np.ndarray, tail: np.ndarray) -> None:
        """``db``: the records holding ``prefix`` (those that can still matter) × ``cols`` (original item
        codes); ``tail[j]``: whether column j may extend the prefix (else it only witnesses closure)."""
        import scipy.sparse as sp

        self._tick()
        k = self.k
        # reduce: drop infrequent items and records too short to hold a pattern long enough
        while True:
            n = db.shape[0]
            if n < k:
                return
            counts = _col_counts(db)
            keep = counts >= k
            need = self.min_length() - len(prefix)
            lengths = _row_counts(db, tail & keep)
            short = lengths < need if need > 0 else None
            drop_rows = short is not None and short.any()
            if keep.all() and not drop_rows:
                break
            if not keep.all():
                db, cols, tail, counts = _cols(db, keep), cols[keep], tail[keep], counts[keep]
            if drop_rows:
                db = _rows(db, ~short)
            else:
                break
        if isinstance(db, sp.csr_matrix) and db.shape[0] * db.shape[1] <= DENSE_CELLS:
            db = db.toarray()
        n = db.shape[0]
        # closure: items in every record
        everywhere = counts == n
        if (everywhere & ~tail).any():
            return  # every pattern here misses an item all its records hold: none is closed
        if everywhere.any():
            prefix = tuple(sorted(prefix + tuple(int(c) for c in cols[everywhere])))
            rest = ~everywhere
            db, cols, tail, counts = _cols(db, rest), cols[rest], tail[rest], counts[rest]
        # the prefix itself
        if prefix and len(prefix) >= self.min_length():
            if not self.maximal or not (counts >= k).any():
                self.offer(prefix, n)
        if not tail.any():
            return
        # the bound of the branch
        lengths = _row_counts(db, tail)
        if len(lengths) < k:
            return
        reach = int(np.partition(lengths, len(lengths) - k)[len(lengths) - k])
        if self.full:
            bound = len(prefix) + reach
            worst = self.keys[-1]
            if bound < len(worst[1]):
                return
            if bound == len(worst[1]):
                smallest = tuple(sorted(prefix + tuple(int(c) for c in np.sort(cols[tail])[:reach])))
                if (-bound, smallest) >= worst:
                    return
        # look ahead: when the prefix with every candidate is frequent, no maximal pattern lies below it
        if self.maximal and int((lengths == int(tail.sum())).sum()) >= k:
            everything = tuple(sorted(prefix + tuple(int(c) for c in cols[tail])))
            holders = lengths == int(tail.sum())
            if not (_col_counts(_rows(db, holders))[~tail] >= k).any():
                self.offer(everything, int(holders.sum()))
            return
        # children, most frequent candidate first (long patterns early tighten the bound)
        order = np.flatnonzero(tail)
        order = order[np.argsort(-counts[order], kind="stable")]
        reach_of = _reach_per_column(db, lengths, order, k) if isinstance(db, np.ndarray) else None
        allowed = tail.copy()
        for pos, j in enumerate(order.tolist()):
            allowed[j] = False  # the child and its later siblings may not use j again
            remaining = len(order) - pos - 1
            if self.full and len(prefix) + 1 + remaining < self.min_length():
                return
            if self.full and reach_of is not None and len(prefix) + int(reach_of[pos]) < self.min_length():
                continue
            child = _rows(db, _column(db, j))
            self._node(
                tuple(sorted(prefix + (int(cols[j]),))),
                _cols(child, _all_but(len(cols), j)),
                np.delete(cols, j),
                np.delete(allowed, j),
            )


def _reach_per_column(db: np.ndarray, lengths: np.ndarray, columns: np.ndarray, k: int) -> np.ndarray:
    """For each column: the k-th largest candidate count among the records holding it (a record
    of a pattern through that column holds at least the pattern's candidates)."""
    order = np.argsort(-lengths, kind="stable")
    held = np.cumsum(db[order][:, columns], axis=0, dtype=np.int32)
    first = np.minimum((held < k).sum(axis=0), len(order) - 1)
    return lengths[order][first]


def _all_but(n: int, j: int) -> np.ndarray:
    keep = np.ones(n, dtype=bool)
    keep[j] = False
    return keep


def _col_counts(db) -> np.ndarray:
    if isinstance(db, np.ndarray):
        return db.sum(axis=0, dtype=np.int64)
    return np.bincount(db.indices, minlength=db.shape[1]).astype(np.int64)


def _row_counts(db, mask: np.ndarray) -> np.ndarray:
    if isinstance(db, np.ndarray):
        return db[:, mask].sum(axis=1, dtype=np.int64) if not mask.all() else db.sum(axis=1, dtype=np.int64)
    if mask.all():
        return np.diff(db.indptr).astype(np.int64)
    hit = mask[db.indices]
    cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
    return cum[db.indptr[1:]] - cum[db.indptr[:-1]]


def _column(db, j: int) -> np.ndarray:
    if isinstance(db, np.ndarray):
        return db[:, j]
    out = np.zeros(db.shape[0], dtype=bool)
    hit = db.indices == j
    if hit.any():
        row_of = np.repeat(np.arange(db.shape[0]), np.diff(db.indptr))
        out[row_of[hit]] = True
    return out


def _rows(db, mask: np.ndarray):
    return db[mask] if isinstance(db, np.ndarray) else db[np.flatnonzero(mask)]


def _cols(db, mask: np.ndarray):
    import scipy.sparse as sp

    if isinstance(db, np.ndarray):
        return db[:, mask]
    if mask.all():
        return db
    # renumber the kept columns without scipy's generic column slicing
    new = np.cumsum(mask) - 1
    hit = mask[db.indices]
    cum = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))
    indptr = cum[db.indptr]
    return sp.csr_matrix((db.data[hit], new[db.indices[hit]], indptr), shape=(db.shape[0], int(mask.sum())))
