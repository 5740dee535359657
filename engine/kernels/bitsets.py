"""Support counting on packed bitsets: AND the columns of an itemset, then count the set bits.

These are the inner loops of every frequent-itemset and disclosure-risk method, so they avoid the
two costs NumPy code usually pays here: temporaries the size of the input (every ufunc writes into
a reused ``out=`` buffer) and main-memory round trips (long bitsets are processed one cache-sized
block at a time, so popcount reads the words AND has just written while they are still in cache).
For short bitsets, where the cost is the ufunc call rather than the bytes, the ANDs of several
itemsets go into the rows of one buffer and a single popcount and sum serves them all, and
itemsets that differ only in their last, adjacent, column share one AND call.
``docs/benchmarks.md`` compares the throughput with a plain copy of the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..data.binary import BinaryMatrix

BLOCK_WORDS = 1 << 14  # 128 KiB of uint64 per operand block: operands and result fit in L2
BATCH_WORDS = 1 << 16  # 512 KiB of AND results (plus their byte counts) popcounted at once


def and_popcount(first: np.ndarray, *others: np.ndarray, scratch: np.ndarray | None = None) -> int:
    """Number of bits set in ``first & others[0] & …`` (the popcount of ``first`` alone).

    Parameters
    ----------
    first, *others : 1-D uint64 arrays of equal length
        Packed bitsets, e.g. ``matrix.bitset(j)``.
    scratch : 1-D uint64 array, optional
        Work buffer of at least ``min(len(first), BLOCK_WORDS)`` words, reused across calls.

    Examples
    --------
    >>> a = np.array([0b1011], dtype=np.uint64); b = np.array([0b0110], dtype=np.uint64)
    >>> and_popcount(a, b)
    1
    """
    n = len(first)
    if any(len(b) != n for b in others):
        raise ValueError("bitsets of different lengths")
    block = min(n, BLOCK_WORDS)
    if scratch is None or len(scratch) < block:
        scratch = np.empty(block, dtype=np.uint64)
    total = 0
    for start in range(0, n, BLOCK_WORDS):
        stop = min(start + BLOCK_WORDS, n)
        acc = scratch[: stop - start]
        if others:
            _and_into(acc, [first[start:stop], *(b[start:stop] for b in others)])
            np.bitwise_count(acc, out=acc)
        else:
            np.bitwise_count(first[start:stop], out=acc)
        total += int(acc.sum())
    return total


def support_counts(matrix: BinaryMatrix, itemsets: Iterable[Iterable[int]] | np.ndarray) -> np.ndarray:
    """Support of each itemset: the number of rows with a 1 in every one of its features.

    Parameters
    ----------
    matrix : BinaryMatrix
    itemsets : sequence of sequences of feature indices, or a 2-D integer array (one row each)
        An empty itemset has support ``n_rows``; a repeated feature counts once.

    Returns
    -------
    numpy.ndarray of int64, one entry per itemset, in the given order.

    Notes
    -----
    Itemsets sharing all but their last feature, with last features adjacent in column order (as
    Apriori's candidates mostly are: level 2 is every pair of frequent items), are answered by one
    AND of the prefix with a slice of stacked bitsets instead of one call each.

    Examples
    --------
    >>> m = BinaryMatrix.from_dense([[1, 1, 0], [1, 0, 1], [1, 1, 1]])
    >>> support_counts(m, [[0], [0, 1], [2, 1], [], [1, 1]]).tolist()
    [3, 2, 1, 3, 2]
    """
    if not (isinstance(itemsets, np.ndarray) and itemsets.ndim == 2):
        itemsets = [list(items) for items in itemsets]
    out = np.empty(len(itemsets), dtype=np.int64)
    for where, group in _groups_by_size(itemsets):
        _check_columns(matrix, group)
        size = group.shape[1]
        if size == 0:
            out[where] = matrix.n_rows
        elif size == 1:
            out[where] = matrix.column_counts()[group[:, 0]]
        elif matrix.n_words > BLOCK_WORDS:
            scratch = np.empty(BLOCK_WORDS, dtype=np.uint64)
            bitsets = ([matrix.bitset(j) for j in items] for items in group.tolist())
            out[where] = [and_popcount(*b, scratch=scratch) for b in bitsets]
        else:
            out[where] = _support_in_runs(matrix, group)
    return out


def _groups_by_size(itemsets: np.ndarray | list[list[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(positions in the input, n × k array of ascending distinct columns) for each size k."""
    if isinstance(itemsets, np.ndarray):
        raw = [(np.arange(len(itemsets)), itemsets)]
    else:
        by_size: dict[int, list[int]] = {}
        for i, items in enumerate(itemsets):
            by_size.setdefault(len(items), []).append(i)
        raw = [
            (np.array(where), np.array([itemsets[i] for i in where], dtype=np.int64).reshape(len(where), k))
            for k, where in by_size.items()
        ]
    groups = []
    for where, group in raw:
        group = np.sort(group.astype(np.int64, copy=False), axis=1)
        repeats = np.any(group[:, 1:] == group[:, :-1], axis=1)
        if repeats.any():  # rare: regroup those itemsets by their number of distinct features
            for sub_where, sub in _groups_by_size([sorted(set(r)) for r in group[repeats].tolist()]):
                groups.append((where[repeats][sub_where], sub))
            where, group = where[~repeats], group[~repeats]
        if len(group):
            groups.append((where, group))
    return groups


def _support_in_runs(matrix: BinaryMatrix, itemsets: np.ndarray) -> np.ndarray:
    """Supports of k-itemsets (rows of ascending column indices, k ≥ 2) over short bitsets.

    Sorted, the itemsets fall into runs with one prefix and consecutive last columns; each run is
    one broadcast AND of the prefix's bitset with a slice of the stacked bitsets, written into the
    rows of a block that is popcounted and summed as a whole once full. The stack copies the
    bitsets of the columns used (``matrix.bitset`` keeps one array per column).
    """
    n, k = itemsets.shape
    columns, position = np.unique(itemsets, return_inverse=True)
    position = position.reshape(n, k)
    order = np.lexsort(position.T[::-1])
    position = position[order]
    stack = matrix.bitsets(columns.tolist())
    w = stack.shape[1]
    counts = np.empty(n, dtype=np.int64)
    block = np.empty((max(1, min(n, BATCH_WORDS // max(w, 1))), w), dtype=np.uint64)
    bits = np.empty(block.shape, dtype=np.uint8)
    filled = done = 0

    def flush():
        np.bitwise_count(block[:filled], out=bits[:filled])
        # per-word counts are at most 64, so a row of fewer than 2**26 words fits 32 bits
        counts[done : done + filled] = np.add.reduce(bits[:filled], axis=1, dtype=np.uint32)
        return done + filled, 0

    prefix_words = np.empty(w, dtype=np.uint64)
    last_head = None
    block_rows = list(block)
    for head, lo, length in _runs(position):
        if head != last_head:
            prefix = stack[head[0]] if k == 2 else _and_into(prefix_words, [stack[p] for p in head])
            last_head = head
        if length == 1:  # the common case for scattered itemsets: skip the slicing
            np.bitwise_and(stack[lo], prefix, out=block_rows[filled])
            filled += 1
            if filled == len(block):
                done, filled = flush()
            continue
        while length:
            take = min(length, len(block) - filled)
            np.bitwise_and(stack[lo : lo + take], prefix, out=block[filled : filled + take])
            filled += take
            lo += take
            length -= take
            if filled == len(block):
                done, filled = flush()
    if filled:
        flush()
    result = np.empty(n, dtype=np.int64)
    result[order] = counts
    return result


def _runs(position: np.ndarray):
    """(prefix, first last-column, length) of each run of sorted rows sharing a prefix, with last
    columns c, c+1, …"""
    n = len(position)
    new_prefix = np.any(position[1:, :-1] != position[:-1, :-1], axis=1)
    gap = position[1:, -1] - position[:-1, -1] != 1
    starts = np.flatnonzero(np.concatenate(([True], new_prefix | gap)))
    heads = map(tuple, position[starts, :-1].tolist())
    return zip(heads, position[starts, -1].tolist(), np.diff(starts, append=n).tolist())


def _and_into(out: np.ndarray, operands: list[np.ndarray]) -> np.ndarray:
    if len(operands) == 1:
        np.copyto(out, operands[0])
        return out
    np.bitwise_and(operands[0], operands[1], out=out)
    for b in operands[2:]:
        np.bitwise_and(out, b, out=out)
    return out


def _check_columns(matrix: BinaryMatrix, group: np.ndarray) -> None:
    m = matrix.n_features
    if group.size and (group.min() < 0 or group.max() >= m):
        bad = group.min() if group.min() < 0 else group.max()
        raise IndexError(f"feature index {bad} out of range for {m} features")
