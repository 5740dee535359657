"""Rank swapping (Moore 1996; docs/perturbation.md#rank-swapping).

Each perturbed column is swapped on its own. Its values are ranked (ties in input order, missing
values left where they are); walking the ranks from the lowest, a record not yet swapped swaps its
value with a record drawn uniformly among those not yet swapped whose rank is above its own by at most
w = ⌊p/100 · n⌋ (n: the records with a value); a record with no such partner keeps its value. So every
value moves by at most p percent of the ranks, the column's values (hence its distribution, mean and
variance) are exactly the input's, and p = 0 publishes the input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import TABLE, Algorithm, MemoryCost, ReportFact, hookimpl, param

from ._common import (
    PERTURBED_NUMBERS,
    CHUNK,
    NUMERIC_KINDS,
    PROVIDES,
    chosen_columns,
    generator,
    perturbed_release,
    released_frame,
)

TRIES = 4  # uniform draws in the window before the unswapped records in it are listed

_KERNEL: list = []  # _swap_block as it runs, once made


def _swap_kernel():
    """:func:`_swap_block` compiled by numba on first use (registering the plugins never imports numba:
    it costs a start-up half a CPU second), or as plain Python without numba (it is optional:
    veil[mining])."""
    if not _KERNEL:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - exercised where numba is not installed
            _KERNEL.append(_swap_block)
        else:
            _KERNEL.append(njit(cache=True)(_swap_block))
    return _KERNEL[0]


def _swap_block(partner, start, stop, window, uniforms):  # pragma: no cover - compiled
    """Pair the positions start … stop − 1 of the rank order (``partner[i]`` = −1: not yet paired):
    position i takes a partner uniformly among the unpaired positions i + 1 … i + window, by up to
    TRIES uniform draws and then by listing them; ``uniforms`` holds TRIES + 1 draws per position."""
    n = len(partner)
    for i in range(start, stop):
        if partner[i] >= 0:
            continue
        top = min(n - 1, i + window)
        if top <= i:
            continue
        u = uniforms[i - start]
        found = -1
        for t in range(TRIES):
            j = i + 1 + int(u[t] * (top - i))
            if j > top:
                j = top
            if partner[j] < 0:
                found = j
                break
        if found < 0:
            free = 0
            for j in range(i + 1, top + 1):
                if partner[j] < 0:
                    free += 1
            if free == 0:
                continue
            pick = int(u[TRIES] * free)
            if pick >= free:
                pick = free - 1
            for j in range(i + 1, top + 1):
                if partner[j] < 0:
                    if pick == 0:
                        found = j
                        break
                    pick -= 1
        partner[i] = found
        partner[found] = i


def swap_column(values: np.ndarray, percent: float, rng: np.random.Generator, check=None) -> np.ndarray:
    """``values`` (floats, NaN for missing) rank-swapped within ``percent`` of the ranks."""
    out = values.copy()
    present = np.flatnonzero(~np.isnan(values))
    n = len(present)
    window = int(np.floor(percent / 100.0 * n))
    if window < 1 or n < 2:
        return out
    order = present[np.argsort(values[present], kind="stable")]  # rank → record
    partner = np.full(n, -1, dtype=np.int64)
    for start in range(0, n, CHUNK):
        if check is not None:
            check()
        stop = min(n, start + CHUNK)
        _swap_kernel()(partner, start, stop, window, rng.random((stop - start, TRIES + 1)))
    paired = partner >= 0
    out[order[paired]] = values[order[partner[paired]]]
    return out


@dataclass(frozen=True)
class RankSwapParams:
    columns: str = param(
        "", help="numeric columns to swap, separated by semicolons (empty: the numeric quasi-identifiers)"
    )
    p: float = param(
        5.0, minimum=0.0, maximum=100.0, help="largest distance between swapped ranks, in percent of the records"
    )


class RankSwap(Algorithm):
    name = "rank-swap"
    keeps_record_order = True  # every record, in the input's order
    title = "Rank swapping"
    paper = "moore-rank-swap"
    description = (
        "Swaps each numeric column's values between records whose ranks differ by at most p percent of "
        "the records (Moore 1996): every value published is one of the column's, moved a bounded distance."
    )
    accepts = (TABLE,)
    releases_sensitive = True
    randomised = True
    perturbs = True
    provides = (PROVIDES, PERTURBED_NUMBERS)
    Params = RankSwapParams
    # the values, rank order and partners per record and column, the frame's copy
    memory_cost = MemoryCost(per_record=64.0, per_cell=96.0)

    def run(self, data, model, params, ctx):
        columns = chosen_columns(data, params.columns, NUMERIC_KINDS, self.name, "numbers")
        rng, source = generator(ctx)
        frame = released_frame(data)
        moved = {}
        for j, column in enumerate(columns):
            ctx.progress(j / len(columns), f"rank swapping: {column}")
            original = frame[column]
            values = original.to_numpy(dtype=float, na_value=np.nan)
            swapped = swap_column(values, params.p, rng, ctx.check)
            moved[column] = int((swapped != values)[~np.isnan(values)].sum())
            if original.dtype.kind in "iu" and not np.isnan(swapped).any():
                frame[column] = swapped.astype(original.dtype)  # the column's own values: integers stay
            else:
                frame[column] = swapped
        ctx.progress(1.0, "rank swapping: done")
        details = {"rank_swap": {"p": params.p, "changed_values": moved}}
        return perturbed_release(data, frame, columns, self.name, details, source, ctx)

    @classmethod
    def report_facts(cls, details, rows):
        swap = details.get("rank_swap") or {}
        if not swap:
            return []
        return [
            ReportFact(
                "Rank swapping",
                f"values swapped within {swap.get('p')}% of the ranks",
                key="rank_swap.p",
                value=swap.get("p"),
            )
        ]


@hookimpl
def veil_register_algorithms():
    return [RankSwap]
