"""Itemset mining behind one interface: Christian Borgelt's C miners (pyfim) when installed, a
tested pure-NumPy fallback (depth-first on bitsets) otherwise.

Itemsets are tuples of feature indices of a BinaryMatrix (the transaction view: row → the set of
its 1-features), sorted ascending; supports are absolute row counts.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import numpy as np

from ..data.binary import BinaryMatrix, popcount
from ..base.errors import BadInput
from .limits import MiningLimit, run_limited

# what a mining reports: every frequent itemset, the closed ones (no superset with the same support) or
# the maximal ones (no frequent superset)
FREQUENT_ITEMSETS, CLOSED_ITEMSETS, MAXIMAL_ITEMSETS = "frequent itemsets", "closed itemsets", "maximal itemsets"
TARGETS = (FREQUENT_ITEMSETS, CLOSED_ITEMSETS, MAXIMAL_ITEMSETS)
_FIM_TARGET = {FREQUENT_ITEMSETS: "s", CLOSED_ITEMSETS: "c", MAXIMAL_ITEMSETS: "m"}


def have_pyfim() -> bool:
    try:
        import fim  # noqa: F401
    except ImportError:
        return False
    return True


def mine(
    matrix: BinaryMatrix,
    min_support: int,
    target: str = MAXIMAL_ITEMSETS,
    *,
    backend: str = "auto",
    max_size: int | None = None,
    largest: int | None = None,
    check: Callable[[], None] | None = None,
    max_seconds: float | None = None,
) -> list[tuple[tuple[int, ...], int]]:
    """Itemsets with support ≥ ``min_support`` (absolute), as (itemset, support) pairs.

    Parameters
    ----------
    target : FREQUENT_ITEMSETS, CLOSED_ITEMSETS or MAXIMAL_ITEMSETS
    backend : "auto" (pyfim if installed), "pyfim" or "numpy"
    max_size : largest itemset size to report (None: no limit)
    largest : keep only this many itemsets, the largest first (ties: lexicographically smallest);
        much cheaper than sorting millions of maximal itemsets when only the top ones matter
    check : called now and then (cancellation)
    max_seconds : stop with :class:`~veil.engine.MiningLimit` (a one-line message) after this long;
        pyfim then runs in a child process that is killed at the deadline or on cancel
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
            if max_seconds is None:  # in-process: the conversion of the results checks as it goes
                found = _found(_mine_pyfim(matrix, min_support, target, max_size), largest, check)
            else:
                found = run_limited(
                    _pyfim_found,
                    (matrix, min_support, target, max_size, largest),
                    max_seconds=max_seconds,
                    check=check,
                    what="the itemset miner",
                )
        else:
            deadline = None if max_seconds is None else time.monotonic() + max_seconds
            raw = _mine_numpy(matrix, min_support, target, max_size, check, deadline, max_seconds)
            found = _found(raw, largest, check)
            del raw
    finally:
        if paused:
            gc.enable()
    return sorted(found, key=lambda p: (-len(p[0]), p[0]))


def _found(raw: list, largest: int | None, check=None) -> list:
    if largest is not None:
        raw = _largest(raw, largest)
    found = []
    for done, (items, supp) in enumerate(raw):  # millions of itemsets from a C miner: check as they go
        if check is not None and done % 1024 == 0:
            check()
        found.append((tuple(sorted(int(i) for i in items)), int(supp)))
    return found


def _pyfim_found(matrix, min_support, target, max_size, largest):
    return _found(_mine_pyfim(matrix, min_support, target, max_size), largest)


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


def _mine_numpy(matrix, min_support, target, max_size, check, deadline=None, max_seconds=None):
    """All frequent itemsets by depth-first intersection of bitsets, then filtered."""
    counts = matrix.column_counts()
    items = [int(j) for j in np.argsort(counts, kind="stable") if counts[j] >= min_support]
    frequent: dict[tuple[int, ...], int] = {}
    limit = max_size if max_size is not None else len(items)

    def grow(prefix: tuple[int, ...], bits: np.ndarray, candidates: list[int]):
        if check is not None:
            check()
        if deadline is not None and time.monotonic() > deadline:
            raise MiningLimit(
                f"the itemset miner stopped after {max_seconds:g} s without finishing; raise the "
                f"time limit, raise k or ask for fewer patterns"
            )
        for pos, j in enumerate(candidates):
            joined = bits & matrix.bitset(j)
            support = popcount(joined)
            if support < min_support:
                continue
            itemset = tuple(sorted((*prefix, j)))
            frequent[itemset] = support
            if len(itemset) < limit:
                grow(itemset, joined, candidates[pos + 1 :])

    grow((), matrix.all_rows(), items)
    if target == FREQUENT_ITEMSETS:
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
        if target == MAXIMAL_ITEMSETS and not supersets:
            keep.append((itemset, support))
        elif target == CLOSED_ITEMSETS and all(frequent[t] < support for t in supersets):
            keep.append((itemset, support))
    return keep
