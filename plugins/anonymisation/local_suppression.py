"""Local suppression: blank single quasi-identifier cells, as few as it can, until the privacy
models hold when a blank matches any value (sdcMicro's ``localSuppression``;
docs/reference.md#local-suppression).

A record counts in every group it could join (the any-value rule, engine/model/blanks.py, which
this method always follows: the cells it blanks must match any value, and so does an input
blank), so a record with a blank needs no group of its own. The cells are chosen by the user's importance order
(the least important column first) or, without one, where a blank joins the most records; within
strata (columns never blanked, records compared only within their values); and, on a small table,
by trying every set of cells, which gives the fewest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    CELL_BLANKED,
    TABLE,
    Algorithm,
    BadInput,
    Judgement,
    MemoryCost,
    blank_codes,
    combination_codes,
    combinations_of,
    hookimpl,
    param,
)

from ._cells import Columns, Judge, cell_release, released_frame
from ._sensitive import survey_of
from ._suppression import exact, gains_kernel, greedy

EXACT_CELLS = 12  # search=auto tries every set of cells up to this many cells


@dataclass(frozen=True)
class Params:
    importance: str = param(
        "",
        help="the quasi-identifiers from the most to the least important, joined by + (age+sex+zip): the least "
        "important is blanked first; empty: blank where it joins the most records",
    )
    strata: str = param(
        "", help="columns never blanked, joined by +: records are compared only with those of the same values"
    )
    search: str = param(
        "auto",
        choices=("auto", "greedy", "exact"),
        help=f"greedy, or exact (every set of cells, the fewest; small tables); auto: exact up to {EXACT_CELLS} cells",
    )


class LocalSuppression(Algorithm):
    name = "local-suppression"
    keeps_record_order = True  # every record, in the input's order
    title = "Local suppression (cells)"
    paper = "sdcmicro"
    description = (
        "Blanks single quasi-identifier cells, as few as it can, until the privacy models hold when a blank "
        "matches any value; by an importance order of the columns, within strata. Other cells are released "
        "as they are."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUPS, Judgement.COMBINATIONS)
    releases_sensitive = True
    Params = Params
    # the fixed part holds loading the compiled kernel the first time in a process
    memory_cost = MemoryCost(fixed=48 * 2**20, per_record=256, per_cell=96, per_record_column=16)

    def run(self, data, model, params, ctx):
        columns = Columns.of(data, "local suppression")
        qis = columns.quasi_identifiers
        strata = _names(params.strata, data, "strata")
        extra = [c for c in strata if c not in qis]
        keys = qis + extra
        frame = released_frame(data)
        codes = blank_codes(frame, keys, ANY_VALUE)
        blankable = np.array([c not in strata for c in keys])
        rank = _ranks(_names(params.importance, data, "importance"), keys)
        k = model.param("k", 1) if model is not None else 1
        k = k if isinstance(k, int) else 1
        original = codes.copy()
        ctx.progress(0.0, "local suppression: counting records")
        cells = int(blankable.sum()) * len(frame)
        if params.search == "exact" or (params.search == "auto" and cells <= EXACT_CELLS):
            judge = Judge(frame, columns, model, keys, survey_of(data, model))

            def holds(trial):
                ctx.check()
                return judge.failing(trial) is None

            codes = exact(codes, holds, blankable, max(EXACT_CELLS, 16))
        else:
            qi = np.array([c in qis for c in keys])
            size = _combined_columns(model)
            size = len(qis) if size is None else min(size, len(qis))
            codes = self._greedy_combinations(codes, k, rank, blankable, qi, size, params, ctx)
            codes = self._until_models_hold(data, frame, columns, params, original, codes, keys, rank, model, ctx)
        return self._release(data, frame, columns, params, original, codes, keys)

    def _greedy_combinations(self, codes, k, rank, blankable, qi, size, params, ctx):
        """The greedy search on each combination of ``size`` quasi-identifiers in turn (with the
        strata), each on the codes the previous ones left, as sdcMicro's ``combs`` goes; a blank only
        adds compatible records, and the models' check afterwards catches what is left. Without an
        importance order, on combinations leaving columns out, the columns with the most distinct
        values are blanked first (sdcMicro's default order): a blank serves every combination holding
        its column, so blanks gathered in a few columns serve more combinations than blanks chosen by
        what they join within one (docs/reference.md#local-suppression)."""
        n_qis = int(qi.sum())
        whole = size >= n_qis
        combos = [tuple(range(n_qis))] if whole else [c for c in combinations_of(n_qis, size) if len(c) == size]
        by_importance = bool(params.importance)
        if not by_importance and not whole:
            rank = -(codes.max(axis=0) + 1)  # the more distinct values, the less important
            by_importance = True
        for i, combination in enumerate(combos):
            part = _Projection(codes, qi, blankable, rank, combination)

            def progress(f, i=i):
                ctx.progress(0.8 * (i + f) / len(combos), "local suppression: combination by combination")

            greedy(part.patterns, part.weights, k, part.rank, part.blankable, by_importance, progress, part.qi)
            part.write(codes)
        return codes

    def _until_models_hold(self, data, frame, columns, params, original, codes, keys, rank, model, ctx):
        """Blank further cells where a model judging more than group sizes (l-diversity, …) still
        fails: one cell of each failing pattern at a time, where its blank joins the most records
        (on the combination of quasi-identifiers the pattern fails on, for a model judging
        combinations)."""
        kernel = gains_kernel()
        judge = Judge(frame, columns, model, keys, survey_of(data, model))
        qi = np.array([c in columns.quasi_identifiers for c in keys])
        blankable = qi.copy()
        for step in range(codes.size + 1):
            found = judge.failing_on(codes)
            if found is None:
                return codes
            records, combination = found
            ctx.progress(0.8 + 0.2 * min(step / 100, 1), "local suppression: meeting the models")
            part = _Projection(codes, qi, blankable, rank, combination)
            patterns, m = part.patterns, part.patterns.shape[1]
            gain = np.zeros(m, dtype=np.int64)
            candidates = [int(p) for p in np.unique(part.ids[records]) if (patterns[p, part.blankable] >= 0).any()]
            if not candidates:
                raise BadInput(
                    "the privacy models fail even with every quasi-identifier of the failing records blanked: "
                    "relax their parameters"
                )
            for p in candidates:
                ctx.check()
                kernel(patterns, part.weights, part.qi, p, gain)
                open_ = [j for j in range(m) if patterns[p, j] >= 0 and part.blankable[j]]
                j = max(open_, key=lambda j: (gain[j], -part.rank[j], -j))
                patterns[p, j] = -1
            part.write(codes)
        raise BadInput("local suppression could not make the models hold")  # pragma: no cover - bounded above

    def _release(self, data, frame, columns, params, original, codes, keys):
        out = frame.copy()
        counts, changes = {}, {}
        for j, name in enumerate(keys):
            newly = (codes[:, j] < 0) & (original[:, j] >= 0)
            if name not in columns.quasi_identifiers:
                continue
            counts[name] = int(newly.sum())
            changes[name] = np.where(newly, CELL_BLANKED, 0).astype(np.int8)
            if newly.any():
                out[name] = _blank(out[name], newly)
        total = sum(counts.values())
        notes = (
            f"{total:,} quasi-identifier cell{'s' if total != 1 else ''} blanked: "
            + ", ".join(f"{c} {n:,}" for c, n in counts.items() if n)
            if total
            else "no cell needed blanking",
        )
        details = {"blanked_cells": counts, "blanked_total": total, "importance": params.importance or None}
        return cell_release(data, out, columns, ANY_VALUE, details=details, notes=notes, cell_changes=changes)


def _blank(series: pd.Series, where: np.ndarray) -> pd.Series:
    """The column with the cells ``where`` blanked (missing: numbers stay numbers)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    return series.mask(pd.Series(where, index=series.index))


class _Projection:
    """The distinct patterns the search blanks cells of, on the quasi-identifiers a model judges
    together (``combination``: their positions; the first columns of the keys are the
    quasi-identifiers) and the strata: for a combination leaving a quasi-identifier out, its columns
    as they are counted (engine/model/combinations.py: one more column, never blanked, marks the
    records suppressed throughout), then the other key columns that are never blanked."""

    def __init__(self, codes, qi, blankable, rank, combination):
        n_qis = int(qi.sum())
        combination = list(combination)
        judged = combination_codes(codes[:, :n_qis], combination)
        marker = judged.shape[1] - len(combination)
        rest = [j for j in range(codes.shape[1]) if j not in combination and not blankable[j]]
        self.columns = combination + [-1] * marker + rest
        self.ids, self.patterns, self.weights = _patterns(np.column_stack([judged, codes[:, rest]]))
        self.blankable = np.array([blankable[j] if j >= 0 else False for j in self.columns])
        self.qi = np.array([qi[j] if j >= 0 else True for j in self.columns])
        self.rank = np.array([rank[j] if j >= 0 else 0 for j in self.columns], dtype=np.int64)

    def write(self, codes):
        """The blanked cells back into ``codes``."""
        written = self.patterns[self.ids]
        for position, column in enumerate(self.columns):
            if self.blankable[position]:
                codes[:, column] = written[:, position]


def _combined_columns(model) -> int | None:
    """The fewest quasi-identifiers a model of the run judges combination by combination, or None."""
    sizes = [b.combined_columns for b in model.models if b.combined_columns is not None] if model is not None else []
    return min(sizes, default=None)


def _names(text: str, data, what: str) -> list[str]:
    names = [n.strip() for n in text.split("+") if n.strip()]
    missing = [n for n in names if n not in data.frame.columns]
    if missing:
        raise BadInput(f"{what}: no column named {missing[0]!r}; columns are {', '.join(map(str, data.frame.columns))}")
    if len(set(names)) != len(names):
        raise BadInput(f"{what}: a column is named twice in {text!r}")
    return names


def _ranks(order: list[str], keys: list[str]) -> np.ndarray:
    """Importance per key column: the first named the highest; columns not named the lowest."""
    return np.array([len(order) - order.index(c) if c in order else 0 for c in keys], dtype=np.int64)


def _patterns(codes: np.ndarray):
    """(each record's pattern, the distinct patterns' codes (a copy), records per pattern)."""
    ids = pd.DataFrame(codes).groupby(list(range(codes.shape[1])), sort=False).ngroup().to_numpy(np.int64)
    first = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids))[::-1]
    return ids, np.ascontiguousarray(codes[first]), np.bincount(ids).astype(np.int64)


@hookimpl
def veil_register_algorithms():
    return [LocalSuppression]
