"""Local recoding: global recoding again on the records the previous pass suppressed (ARX's
iterative local transformation; docs/reference.md#local-recoding), so different records may be
published at different generalisation levels.

Each pass runs global recoding's core (``_global``: its optimal search, the same suppression limit and
metric) on the records still suppressed; the records it publishes keep that pass's levels, the ones
it suppresses go to the next pass. The hierarchies are those of the whole table (a numeric column's
generated intervals do not change from pass to pass), and the records left suppressed after the
last pass stay ``*`` in every quasi-identifier, which matches any value. A try at a higher factor
after a pass that published none searches the same records again: it recalls what the searches
before it learnt of each transformation (:class:`._lattice.Memo`) instead of judging it again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    TABLE,
    Algorithm,
    BadInput,
    Judgement,
    Role,
    grouping_columns,
    hookimpl,
    is_suppressed,
    param,
)

from ._cells import Columns, blanks_param, cell_release, suppress_failing, suppressed_throughout
from ._sensitive import survey_of
from ._global import GlobalRecodingParams, run_global
from ._lattice import METRICS, Memo


@dataclass(frozen=True)
class Params:
    passes: int = param(5, minimum=1, maximum=100, help="at most this many passes of global recoding")
    suppression: float = param(
        0.1,
        minimum=0,
        maximum=1,
        help="the share of each pass's records its global recoding may suppress (they go to the next pass)",
    )
    metric: str = param(
        "loss", choices=METRICS, help="the information loss each pass's search minimises (global recoding's)"
    )
    gs_factor: float = param(
        0.5,
        minimum=0,
        maximum=1,
        help="for metric=arx-loss: ARX's generalisation/suppression factor in each pass (0.5 weighs both "
        "alike; towards 0 suppressing costs less, towards 1 generalising does)",
    )
    blanks: str = blanks_param()
    adaption: float = param(
        0.0,
        minimum=0,
        maximum=1,
        help="for metric=arx-loss: added to gs_factor when a pass publishes no record, and the pass "
        "tried again while the factor is at most 1 (ARX's adaption factor; 0: stop instead)",
    )


class LocalRecoding(Algorithm):
    name = "local-recoding"
    keeps_record_order = True  # every record, in the input's order
    aggregates_in_groups = True  # each record in one group: a column can be aggregated inside them
    title = "Local recoding (iterated global recoding)"
    paper = "arx"
    description = (
        "Runs global recoding, then again on the records it suppressed, pass after pass: records may be "
        "published at different generalisation levels (ARX's local transformation)."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUPS,)
    releases_sensitive = True
    Params = Params

    @classmethod
    def blank_rule(cls, params) -> str:
        return params.blanks

    def run(self, data, model, params, ctx):
        columns = Columns.of(data, "local recoding")
        if params.metric != "arx-loss" and (params.gs_factor != 0.5 or params.adaption > 0):
            raise BadInput(
                "gs_factor and adaption weigh generalisation against suppression in ARX's loss: choose "
                "metric=arx-loss, or leave them at 0.5 and 0"
            )
        ctx.check()
        factor = params.gs_factor
        table = _with_whole_hierarchies(data, columns.quasi_identifiers, ctx.check)
        remaining = np.arange(table.n_rows)
        frame = table.frame[table.released_columns()].reset_index(drop=True).astype(object)
        levels, done = [], 0
        memo = Memo()  # what the searches of the records left learn, for another try at a higher factor
        for step in range(params.passes):
            ctx.check()
            each = GlobalRecodingParams(
                suppression=params.suppression, metric=params.metric, gs_factor=factor, blanks=params.blanks
            )
            weighed = {"gs_factor": factor} if params.metric == "arx-loss" else {}
            try:
                release = run_global(
                    table.take(remaining),
                    model,
                    each,
                    ctx.child(step / params.passes, (step + 1) / params.passes),
                    memo,
                )
            except BadInput as exc:  # these records cannot be published at any level: they stay suppressed
                levels.append({"records": int(len(remaining)), "published": 0, "stopped": str(exc), **weighed})
                break
            written = release.frame
            out = _suppressed(written, columns.quasi_identifiers)
            last = step == params.passes - 1
            publish = ~out if not last else np.ones(len(written), dtype=bool)
            rows = remaining[publish]
            for c in written.columns:
                if c in frame.columns:
                    frame.loc[rows, c] = written[c].to_numpy(dtype=object)[publish]
            gen = release.details.get("generalisation") or {}
            published = int((~out).sum())
            levels.append(
                {"records": int(len(remaining)), "published": published, "levels": gen.get("levels"), **weighed}
            )
            done += published
            remaining = remaining[~publish]
            if published:
                memo = Memo()
            if not len(remaining):
                break
            if not published:  # as ARX: weigh generalisation more and try again, or stop
                if params.adaption <= 0 or factor + params.adaption > 1 + 1e-12:
                    break
                factor = min(1.0, factor + params.adaption)
        if len(remaining):  # left after the last pass that could run: suppressed in every quasi-identifier
            frame.loc[remaining, columns.quasi_identifiers] = "*"
        frame = _typed(frame, table)
        blanks = params.blanks if table.frame[columns.quasi_identifiers].isna().any().any() else ANY_VALUE
        joined = np.zeros(table.n_rows, dtype=bool)
        if blanks == ANY_VALUE and len(levels) > 1:  # a blank joins groups of other passes: judged again
            ctx.progress(1.0, "local recoding: judging the groups blanks join across passes")
            joined = suppress_failing(frame, columns, model, survey_of(table, model), ctx.check)
            frame = suppressed_throughout(frame, columns.quasi_identifiers, joined) if joined.any() else frame
            done -= int(joined.sum())
        details = {
            **({"gs_factor": params.gs_factor, "adaption": params.adaption} if params.metric == "arx-loss" else {}),
            "passes": levels,
            "published_records": done,
            "suppressed_records": int(table.n_rows - done),  # written * in every quasi-identifier
            "mixed_levels": len({str(p.get("levels")) for p in levels if p.get("published")}) > 1,
            **({"suppressed_across_passes": int(joined.sum())} if joined.any() else {}),
        }
        notes = (
            f"local recoding: {len([p for p in levels if p.get('published')])} pass(es) of global recoding published "
            f"{done:,} records at their own levels; {table.n_rows - done:,} stay suppressed",
        )
        if joined.any():
            notes += (
                f"{int(joined.sum()):,} published records then suppressed: with a blank matching any value, "
                f"their groups joined records of other passes and failed {model.name}",
            )
        return cell_release(table, frame, columns, blanks, details=details, notes=notes)


def _with_whole_hierarchies(table, qis, check):
    """The table with every quasi-identifier's hierarchy fixed from all its records."""
    for c in qis:
        check()
        if table.schema[c].hierarchy is None:
            table = table.with_hierarchy(c, table.hierarchy(c))
    return table


def _suppressed(frame: pd.DataFrame, qis) -> np.ndarray:
    """Records written ``*`` in every quasi-identifier."""
    marks = [is_suppressed(frame[c].astype(object)) for c in qis if c in frame.columns]
    return np.logical_and.reduce(marks) if marks else np.zeros(len(frame), dtype=bool)


def _typed(frame: pd.DataFrame, table) -> pd.DataFrame:
    """Columns no pass changed back to their own kind (the quasi-identifiers stay text)."""
    qis = set(grouping_columns(table)) - set(table.schema.by_role(Role.SENSITIVE))
    for c in frame.columns:
        if c not in qis:
            frame[c] = frame[c].astype(table.frame[c].dtype)
    return frame


@hookimpl
def veil_register_algorithms():
    return [LocalRecoding]
