"""Microaggregation: numeric quasi-identifiers replaced by the aggregate of groups of at least k
nearest records (MDAV; docs/reference.md#microaggregation), so numbers stay numbers.

The quasi-identifiers are grouped together (MDAV-generic's several columns at once, each numeric
column standardised). A categorical quasi-identifier either joins the distance (a one-hot block,
two categories at distance 1) and takes its group's most frequent value (``categorical=aggregate``,
MDAV-generic), or is kept as it is while MDAV runs within each combination of the categorical
values (``categorical=strata``, sdcMicro's strata). Either way every group is alike on every
quasi-identifier. k is the k of the run's k-anonymity model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    AGGREGATES,
    CELL_AGGREGATED,
    SUPPRESSED,
    TABLE,
    Algorithm,
    BadInput,
    Interval,
    Judgement,
    Kind,
    MemoryCost,
    aggregate,
    hookimpl,
    il1s_loss,
    param,
)

from ._cells import Columns, blanks_param, cell_release, changed_cells, group_summary, released_frame
from ._microaggregation import (
    categories,
    improve,
    mdav_blocks,
    renumber,
    sse,
    sst,
    standardised,
)


@dataclass(frozen=True)
class Params:
    variant: str = param(
        "fixed",
        choices=("fixed", "variable"),
        help="fixed: MDAV's groups of k (the last k … 2k−1); variable: groups of k … 2k−1 improved record by "
        "record, never a larger loss than fixed",
    )
    aggregate: str = param("mean", choices=AGGREGATES, help="what replaces a group's numeric values")
    block: int = param(
        20_000,
        minimum=10,
        help="MDAV runs on the whole table up to this many records, else within blocks of at most this many "
        "(a k-d tree's cells), which keeps its time near linear",
    )
    categorical: str = param(
        "aggregate",
        choices=("aggregate", "strata"),
        help="a categorical quasi-identifier joins the distance and takes its group's most frequent value "
        "(aggregate), or MDAV runs within each combination of their values (strata)",
    )
    blanks: str = blanks_param()


class Microaggregation(Algorithm):
    name = "microaggregation"
    keeps_record_order = True  # every record, in the input's order
    aggregates_in_groups = True  # each record in one group: a column can be aggregated inside them
    title = "Microaggregation (MDAV)"
    paper = "mdav"
    description = (
        "Groups at least k nearest records on the numeric quasi-identifiers (MDAV, within each combination "
        "of the categorical ones) and replaces their values by the group's mean (or median, …): numbers stay "
        "numbers. The report gives SSE/SST and IL1s."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUP_SIZE,)
    releases_sensitive = True
    Params = Params
    # the points and category codes (8 bytes a cell), the groups, positions and copies of the columns;
    # the fixed part holds loading the compiled kernels (about 33 MB the first time in a process)
    memory_cost = MemoryCost(fixed=48 * 2**20, per_record=256, per_cell=96, per_record_column=32)

    @classmethod
    def blank_rule(cls, params) -> str:
        return params.blanks

    def run(self, data, model, params, ctx):
        k = model.param("k") if model is not None else None
        if not isinstance(k, int):
            raise BadInput("microaggregation makes groups of k records: run it under k-anonymity (the k it uses)")
        columns = Columns.of(data, "microaggregation")
        numeric = [c for c in columns.quasi_identifiers if _numeric(data, c)]
        if not numeric:
            raise BadInput(
                "microaggregation aggregates numeric quasi-identifiers and none is numeric; use local "
                "suppression or generalisation for categorical ones"
            )
        categorical = [c for c in columns.quasi_identifiers if c not in numeric]
        strata = categorical if params.categorical == "strata" else []
        blended = [] if strata else categorical
        frame = released_frame(data)
        if blended and params.variant == "variable":
            raise BadInput(
                "the variable-size variant moves records by the numbers' sum of squares: group within the "
                "categorical quasi-identifiers' values (categorical=strata) or use variant=fixed"
            )
        ctx.progress(0.0, "microaggregation: standardising")
        points = standardised(frame, numeric)
        codes, offsets = categories(frame, blended)
        groups = _groups(frame, points, codes, offsets, strata, k, params, ctx)
        ctx.check()
        fixed_loss = None
        if params.variant == "variable":
            fixed_loss = sse(points, groups)
            ctx.progress(0.85, "microaggregation: moving records between neighbouring groups")
            groups = _improve_in_strata(points, groups, frame, strata, k)
        ctx.progress(0.92, "microaggregation: aggregating")
        original = frame[numeric].copy()
        before = frame[numeric + blended].copy()
        keep = params.blanks == "any-value"
        for name in numeric:
            frame[name] = aggregate(frame[name], groups, params.aggregate, keep_blanks=keep)
        for name in blended:
            frame[name] = aggregate(frame[name], groups, "mode", keep_blanks=keep)
        loss, total = sse(points, groups), sst(points)
        details = {
            **group_summary(groups),
            "k": k,
            "variant": params.variant,
            "aggregate": params.aggregate,
            "columns": numeric + blended,
            "strata": strata,
            "sse": loss,
            "sst": total,
            "sse_sst": loss / total if total > 0 else 0.0,
            "il1s": il1s_loss(original, frame, numeric)
            if params.aggregate in ("mean", "median", "geometric-mean")
            else None,
        }
        if fixed_loss is not None:
            details["sse_fixed"] = fixed_loss
        notes = (
            f"MDAV ({params.variant}) grouped {len(frame):,} records on {', '.join(numeric + blended)} into "
            f"{details['groups']:,} groups of at least {k}; SSE/SST = {details['sse_sst']:.4f}",
        )
        values = _ranges(original, groups, frame, numeric, blended)
        changes = {c: changed_cells(before[c], frame[c], CELL_AGGREGATED) for c in numeric + blended}
        return cell_release(
            data,
            frame,
            columns,
            params.blanks,
            groups=groups,
            group_values=values,
            details=details,
            notes=notes,
            cell_changes=changes,
        )


def _ranges(original, groups, frame, numeric, categorical) -> pd.DataFrame:
    """Each group's typed values for the generalisation metrics: a numeric column as the interval of
    the group's original values (what its aggregate stands for), a categorical one as its value."""
    by = pd.DataFrame({"g": groups, **{c: original[c] for c in numeric}}).groupby("g", sort=True)
    low, high = by.min(), by.max()
    out = {}
    for c in numeric:
        out[c] = [SUPPRESSED if np.isnan(a) else Interval(float(a), float(b), True) for a, b in zip(low[c], high[c])]
    for c in categorical:  # the group's value (first() skips a blank kept as it was)
        known = frame[c].groupby(groups, sort=True).first()
        out[c] = [SUPPRESSED if pd.isna(v) else v for v in known]
    return pd.DataFrame(out)


def _numeric(table, column: str) -> bool:
    series = table.frame[column]
    kind = table.schema[column].kind
    return kind is Kind.NUMERIC and pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _strata(frame: pd.DataFrame, strata: list[str]) -> list[np.ndarray]:
    if not strata:
        return [np.arange(len(frame))]
    ids = frame.groupby(strata, dropna=False, sort=False, observed=True).ngroup().to_numpy()
    order = np.argsort(ids, kind="stable")
    cuts = np.flatnonzero(np.diff(ids[order])) + 1
    return np.split(order, cuts)


def _groups(frame, points, codes, offsets, strata, k, params, ctx) -> np.ndarray:
    parts = _strata(frame, strata)
    small = [rows for rows in parts if len(rows) < k]
    if small:
        example = frame.iloc[small[0][0]][strata].to_dict()
        raise BadInput(
            f"microaggregation groups records within each combination of the categorical quasi-identifiers "
            f"{', '.join(strata)}; {len(small):,} combinations hold fewer than k = {k} records (e.g. {example}): "
            f"generalise or suppress them first, or make those columns insensitive"
        )
    labels = np.empty(len(frame), dtype=np.int64)
    offset, done = 0, 0
    for rows in parts:
        share = len(rows) / max(len(frame), 1)
        start = done / max(len(frame), 1)

        def check(fraction, start=start, share=share):
            ctx.progress(0.05 + 0.8 * (start + share * fraction), "microaggregation: MDAV")

        own = mdav_blocks(points[rows], k, params.block, check, codes[rows], offsets)
        labels[rows] = own + offset
        offset += int(own.max()) + 1
        done += len(rows)
    return renumber(labels)


def _improve_in_strata(points, groups, frame, strata, k) -> np.ndarray:
    out = np.empty_like(groups)
    offset = 0
    for rows in _strata(frame, strata):
        own = renumber(groups[rows])
        better = improve(np.ascontiguousarray(points[rows]), own, k)
        out[rows] = better + offset
        offset += int(better.max()) + 1
    return renumber(out)


@hookimpl
def veil_register_algorithms():
    return [Microaggregation]
