"""Itemset mining behind one interface: Christian Borgelt's C miners (pyfim) when installed, a
tested pure-NumPy fallback (depth-first on bitsets) otherwise.

Itemsets are tuples of feature indices of a BinaryMatrix (the transaction view: row → the set of
its 1-features), sorted ascending; supports are absolute row counts.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import numpy as np

from .binary import BinaryMatrix, popcount
from .errors import BadInput

TARGETS = ("frequent", "closed", "maximal")
_FIM_TARGET = {"frequent": "s", "closed": "c", "maximal": "m"}


def have_pyfim() -> bool:
    try:
        import fim  # noqa: F401
    except ImportError:
        return False
    return True


def mine(matrix: BinaryMatrix, min_support: int, target: str = "maximal", *, backend: str = "auto",
         max_size: int | None = None, largest: int | None = None,
         check: Callable[[], None] | None = None) -> list[tuple[tuple[int, ...], int]]:
    """Itemsets with support ≥ ``min_support`` (absolute), as (itemset, support) pairs.

    Parameters
    ----------
    target : "frequent", "closed" or "maximal"
    backend : "auto" (pyfim if installed), "pyfim" or "numpy"
    max_size : largest itemset size to report (None: no limit)
    largest : keep only this many itemsets, the largest first (ties: lexicographically smallest);
        much cheaper than sorting millions of maximal itemsets when only the top ones matter
    check : called now and then by the NumPy miner (cancellation)
    """
    if target not in TARGETS:
        raise BadInput(f"unknown mining target {target!r}; choose one of {', '.join(TARGETS)}")
    if min_support < 1:
        raise BadInput("the minimum support must be at least 1")
    if backend == "auto":
        backend = "pyfim" if have_pyfim() else "numpy"
    if backend not in ("pyfim", "numpy"):
        raise BadInput(f"unknown mining backend {backend!r}; choose auto, pyfim or numpy")
    # Millions of result tuples would make the cyclic garbage collector walk them again and again
    # (they hold no cycles): pause it while they are built and reduced.
    paused = gc.isenabled()
    gc.disable()
    try:
        if backend == "pyfim":
            raw = _mine_pyfim(matrix, min_support, target, max_size)
        else:
            raw = _mine_numpy(matrix, min_support, target, max_size, check)
        if largest is not None:
            raw = _largest(raw, largest)
        found = []
        for done, (items, supp) in enumerate(raw):  # millions of itemsets from a C miner: check as they go
            if check is not None and done % 1024 == 0:
                check()
            found.append((tuple(sorted(int(i) for i in items)), int(supp)))
        del raw
    finally:
        if paused:
            gc.enable()
    return sorted(found, key=lambda p: (-len(p[0]), p[0]))


def _largest(raw: list, count: int) -> list:
    """The itemsets of the ``count`` largest sizes' cut: everything larger than the cut-off size plus
    all of the cut-off size (the caller's sort settles ties), without sorting the whole output."""
    if len(raw) <= count:
        return raw
    sizes = np.fromiter((len(items) for items, _ in raw), dtype=np.int64, count=len(raw))
    cutoff = np.partition(sizes, len(sizes) - count)[len(sizes) - count]
    keep = np.flatnonzero(sizes > cutoff)
    ties = np.flatnonzero(sizes == cutoff)
    tied = sorted((tuple(sorted(raw[i][0])), int(i)) for i in ties)[: count - len(keep)]
    return [raw[i] for i in keep] + [raw[i] for _, i in tied]


def _mine_pyfim(matrix, min_support, target, max_size):
    import fim

    # pyfim never reports itemsets made only of items present in every transaction (it treats them
    # as perfect extensions of the empty set). One empty transaction changes no absolute support of
    # a non-empty itemset and keeps every item out of that case.
    transactions = matrix.transactions() + [[]]
    zmax = -1 if max_size is None else int(max_size)
    return fim.fim(transactions, target=_FIM_TARGET[target], supp=-int(min_support), zmin=1, zmax=zmax, report="a")


def _mine_numpy(matrix, min_support, target, max_size, check):
    """All frequent itemsets by depth-first intersection of bitsets, then filtered."""
    counts = matrix.column_counts()
    items = [int(j) for j in np.argsort(counts, kind="stable") if counts[j] >= min_support]
    frequent: dict[tuple[int, ...], int] = {}
    limit = max_size if max_size is not None else len(items)

    def grow(prefix: tuple[int, ...], bits: np.ndarray, candidates: list[int]):
        if check is not None:
            check()
        for pos, j in enumerate(candidates):
            joined = bits & matrix.bitset(j)
            support = popcount(joined)
            if support < min_support:
                continue
            itemset = tuple(sorted((*prefix, j)))
            frequent[itemset] = support
            if len(itemset) < limit:
                grow(itemset, joined, candidates[pos + 1:])

    grow((), matrix.all_rows(), items)
    if target == "frequent":
        return list(frequent.items())
    return _filter(frequent, target, check)



def _filter(frequent: dict[tuple[int, ...], int], target: str, check=None):
    """The maximal (or closed) itemsets of ``frequent``: each is compared with every itemset one
    larger, so ``check`` (cancellation) is called before each."""
    by_size: dict[int, list[tuple[int, ...]]] = {}
    for itemset in frequent:
        by_size.setdefault(len(itemset), []).append(itemset)
    keep = []
    for itemset, support in frequent.items():
        if check is not None:
            check()
        s = set(itemset)
        supersets = [t for t in by_size.get(len(itemset) + 1, []) if s.issubset(t)]
        if target == "maximal" and not supersets:
            keep.append((itemset, support))
        elif target == "closed" and all(frequent[t] < support for t in supersets):
            keep.append((itemset, support))
    return keep
