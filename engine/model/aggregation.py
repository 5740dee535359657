"""Aggregating a column inside a release's groups (docs/anonymisation.md#aggregating-a-column-inside-the-groups,
docs/reference.md#microaggregation).

ARX's *microaggregation* of an attribute: a quasi-identifier given an aggregation function is not
generalised; the groups are formed by the other quasi-identifiers, and its values are replaced in
each group by the group's aggregate of its known values — arithmetic or geometric mean, median
(numbers stay numbers), mode (the most frequent, the smallest of those tied), interval or set. A
record the method suppressed gets ``*``. The column is then constant inside each group, so the
release's groups, and every privacy model's verdict on them, are those of the other
quasi-identifiers.

>>> aggregate(pd.Series([1.0, 4.0, 5.0]), np.array([0, 0, 1]), "mean").tolist()
[2.5, 2.5, 5.0]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..data.generalised import SUPPRESSED, Interval, NodeValue
from .blanks import ANY_VALUE, SUPPRESSED_MARK, suppressed_records
from .release import CELL_AGGREGATED


def il1s_loss(original: pd.DataFrame, released: pd.DataFrame, columns: list[str]) -> float:
    """IL1s (Yancey, Winkler and Creecy 2002): the mean over records and numeric columns of
    |x − x'| / (√2 · S), S the column's standard deviation (n − 1); cells blank in either are left out."""
    total, cells = 0.0, 0
    for name in columns:
        x = original[name].to_numpy(dtype=float)
        y = pd.to_numeric(released[name], errors="coerce").to_numpy(dtype=float)
        known = ~np.isnan(x) & ~np.isnan(y)
        sd = x[~np.isnan(x)].std(ddof=1) if (~np.isnan(x)).sum() > 1 else 0.0
        if sd > 0:
            total += float((np.abs(x[known] - y[known]) / (math.sqrt(2) * sd)).sum())
        cells += int(known.sum())
    return total / cells if cells else 0.0


AGGREGATES = ("mean", "geometric-mean", "median", "mode", "interval", "set")
NUMERIC_AGGREGATES = ("mean", "geometric-mean", "median")


def aggregate(
    series: pd.Series, groups: np.ndarray, how: str, *, keep_blanks: bool = True, check=lambda: None
) -> pd.Series:
    """Each record's value replaced by its group's aggregate of the known values (ARX's
    microaggregation functions): ``mean``, ``geometric-mean``, ``median`` (numbers stay numbers),
    ``mode`` (the most frequent, the smallest of those tied), ``interval`` (``[min, max]``) or
    ``set`` (``{a, b, …}``). A blank stays blank (``keep_blanks``, where a blank matches any value)
    or takes its group's aggregate; a group with no known value keeps its blanks."""
    if how not in AGGREGATES:
        raise BadInput(f"an aggregate is one of {', '.join(AGGREGATES)}, not {how!r}")
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if how in NUMERIC_AGGREGATES and not numeric:
        raise BadInput(f"column {series.name!r} is not numeric: {how} needs numbers; use mode, interval or set")
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    frame = pd.DataFrame({"g": groups, "v": series.to_numpy()}).dropna(subset=["v"])
    by = frame.groupby("g", sort=True)["v"]
    if how == "mean":
        per_group = by.mean()
    elif how == "median":
        per_group = by.median()
    elif how == "geometric-mean":
        if (frame["v"] <= 0).any():
            raise BadInput(f"column {series.name!r} holds values ≤ 0: the geometric mean needs positive numbers")
        per_group = np.exp(frame.assign(v=np.log(frame["v"].astype(float))).groupby("g", sort=True)["v"].mean())
    elif how == "mode":
        per_group = _modes(frame)
    elif how == "interval":
        per_group = _intervals(frame, numeric)
    else:
        per_group = _sets(frame, numeric, check)
    values = pd.Series(per_group).reindex(np.arange(n_groups)).to_numpy()[groups]
    out = pd.Series(values, name=series.name, index=series.index)
    if numeric and how in NUMERIC_AGGREGATES + ("mode",):
        out = out.astype(float)
    blank = series.isna().to_numpy()
    if keep_blanks and blank.any():
        out = out.where(~blank)
    return out


def _modes(frame: pd.DataFrame) -> pd.Series:
    """Each group's most frequent value, the smallest of those tied."""
    counts = frame.groupby(["g", "v"], sort=True).size().rename("n").reset_index()
    counts = counts.sort_values(["g", "n"], ascending=[True, False], kind="stable")  # values ascending within ties
    return counts.drop_duplicates("g").set_index("g")["v"]


def _intervals(frame: pd.DataFrame, numeric: bool) -> pd.Series:
    by = frame.groupby("g", sort=True)["v"]
    low, high = by.min(), by.max()
    lt, ht = _texts(low, numeric), _texts(high, numeric)
    return pd.Series(np.where(low.to_numpy() == high.to_numpy(), lt, "[" + lt + ", " + ht + "]"), index=low.index)


def _sets(frame: pd.DataFrame, numeric: bool, check) -> pd.Series:
    pairs = frame.drop_duplicates().sort_values(["g", "v"], kind="stable")
    text = _texts(pairs["v"], numeric)
    starts = np.flatnonzero(np.r_[True, np.diff(pairs["g"].to_numpy()) != 0])
    ends = np.r_[starts[1:], len(pairs)]
    out = np.empty(len(starts), dtype=object)
    for i, (a, b) in enumerate(zip(starts, ends)):
        out[i] = "{" + ", ".join(text[a:b]) + "}"
        if i % 4096 == 0:
            check()
    return pd.Series(out, index=pairs["g"].to_numpy()[starts])


def _texts(values: pd.Series, numeric: bool) -> np.ndarray:
    """Values as written: a whole number without its decimal point."""
    if not numeric:
        return values.astype(str).to_numpy(dtype=object)
    x = values.to_numpy(dtype=float)
    whole = np.isfinite(x) & (x == np.round(x))
    return np.where(whole, np.round(x).astype(np.int64).astype(str), x.astype(str)).astype(object)


# ------------------------------------------------------------------------------- inside a release
def parse_aggregates(given) -> dict[str, str]:
    """``{column: function}`` from a mapping or ``COLUMN=FUNCTION`` texts (the CLI's ``--aggregate``)."""
    if not given:
        return {}
    if isinstance(given, Mapping):
        pairs = list(given.items())
    else:
        pairs = []
        for text in given:
            column, sep, how = str(text).rpartition("=")
            if not sep or not column:
                raise BadInput(
                    f"--aggregate takes COLUMN=FUNCTION (a function of {', '.join(AGGREGATES)}), not {text!r}"
                )
            pairs.append((column, how))
    out: dict[str, str] = {}
    for column, how in pairs:
        if how not in AGGREGATES:
            raise BadInput(f"column {column!r}: an aggregate is one of {', '.join(AGGREGATES)}, not {how!r}")
        if column in out:
            raise BadInput(f"column {column!r} is aggregated twice; give it one function")
        out[str(column)] = str(how)
    return out


def aggregate_in_groups(release, aggregates: Mapping[str, str], order=(), check=lambda: None):
    """``release`` with each column of ``aggregates`` replaced, inside each of its groups (the
    records the method left together; a suppressed record ``*``), by the group's aggregate, and
    made a quasi-identifier again (placed as in ``order``). A blank stays blank where the release's
    rule makes a blank match any value, else it takes its group's aggregate. ``details["aggregated"]``
    lists each column's function and, for a numeric function, SSE/SST (the squared differences
    to the original values over their total sum of squares) and IL1s."""
    frame = release.frame.copy()
    others = [c for c in release.quasi_identifiers if c in frame.columns]
    groups = np.asarray(release.group_ids(), dtype=np.int64)
    suppressed = suppressed_records(frame, others) if others else np.zeros(len(frame), dtype=bool)
    alone = np.where(suppressed, (int(groups.max()) + 1) if len(groups) else 0, groups)
    keep = release.blanks == ANY_VALUE
    changes = dict(release.cell_changes)
    values = None if release.group_values is None else release.group_values.copy()
    summary = []
    for column, how in aggregates.items():
        original = frame[column]
        out = aggregate(original.where(~suppressed), alone, how, keep_blanks=keep, check=check)
        entry = {"column": column, "function": how}
        if how in NUMERIC_AGGREGATES:
            entry.update(_loss(original[~suppressed].astype(float), out[~suppressed].astype(float)))
        if suppressed.any():
            out = out.astype(object)
            out[suppressed] = SUPPRESSED_MARK
        frame[column] = out
        changed = ~suppressed & original.notna().to_numpy() & pd.notna(out).to_numpy()
        changes[column] = np.where(changed, CELL_AGGREGATED, 0).astype(np.int8)
        if values is not None and release.groups is not None:
            values[column] = _group_values(original, out, np.asarray(release.groups), suppressed, len(values))
        summary.append(entry)
        check()
    named = set(others) | set(aggregates)
    qis = tuple(c for c in order if c in named) + tuple(c for c in others + list(aggregates) if c not in order)
    words = "; ".join(
        f"{e['column']} by its {e['function']}"
        + (f" (SSE/SST {e['sse_sst']:.4f}, IL1s {e['il1s_loss']:.4f})" if "sse_sst" in e else "")
        for e in summary
    )
    return dataclasses.replace(
        release,
        frame=frame,
        quasi_identifiers=qis,
        group_values=values,
        cell_changes=changes,
        details={**release.details, "aggregated": summary},
        notes=(*release.notes, f"aggregated inside each group (a suppressed record *): {words}"),
    )


def _loss(original: pd.Series, released: pd.Series) -> dict:
    known = original.notna().to_numpy() & released.notna().to_numpy()
    x, y = original.to_numpy()[known], released.to_numpy()[known]
    total = float(((x - x.mean()) ** 2).sum()) if len(x) else 0.0
    loss = float(((x - y) ** 2).sum())
    frame_x, frame_y = pd.DataFrame({"c": original}), pd.DataFrame({"c": released})
    return {
        "sse": loss,
        "sst": total,
        "sse_sst": loss / total if total > 0 else 0.0,
        "il1s_loss": il1s_loss(frame_x, frame_y, ["c"]),
    }


def _group_values(original: pd.Series, out: pd.Series, groups: np.ndarray, suppressed, n: int) -> list:
    """Each group's typed value, what its aggregate stands for: a numeric column as the interval of
    its original values, another as the node of its aggregate over the group's original values."""
    numeric = pd.api.types.is_numeric_dtype(original) and not pd.api.types.is_bool_dtype(original)
    frame = pd.DataFrame({"g": groups, "v": original.where(~suppressed), "a": out}).dropna(subset=["v"])
    by = frame.groupby("g", sort=True)
    written = by["a"].first()
    if numeric:
        low, high = by["v"].min(), by["v"].max()
    else:
        leaves = by["v"].unique()
    cells = []
    for g in range(n):
        if g not in written.index:
            cells.append(SUPPRESSED)
        elif numeric:
            cells.append(Interval(float(low[g]), float(high[g]), True))
        else:
            cells.append(NodeValue(str(written[g]), tuple(sorted(str(v) for v in leaves[g]))))
    return cells
