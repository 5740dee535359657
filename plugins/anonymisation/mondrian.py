"""Mondrian: strict multidimensional partitioning (LeFevre et al. 2006), as paper 001 uses it
(docs/reference.md#anonymising-tables).

Start with the whole table as one partition. A partition is cut on the quasi-identifier with the
widest normalised range (a number's range over its global range; a category's leaves under the
lowest common ancestor of its values over all leaves): numbers at the median, categories into the
children of that ancestor in the column's hierarchy. A cut stands only if every part satisfies the
chosen privacy model (its ``check_groups`` on the parts, with the whole table's sensitive
distribution Q); otherwise the next-widest attribute is tried, and a partition no attribute can cut
is final.

Numbers are cut at the lower median m: ``x ≤ m`` against ``x > m``; when m is the partition's
largest value, ``x < m`` against ``x ≥ m`` instead, so a partition with two distinct values can
always be cut.

Every partition's search is independent of the others, so all open partitions are cut at once, one
attempt each per round, with NumPy over the records (sorts for the medians, lookups in the
hierarchy's level table for the children): O(n log n) per level of the partition tree.

Output modes: ``generalise`` replaces each quasi-identifier by its partition's range ``[lo, hi]``
or hierarchy node; ``bucketise`` keeps the quasi-identifiers exact, adds the partition as a
``group`` column and releases the sensitive values in a second table (``parts["sensitive"]``),
permuted within each group (Anatomy).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (BUCKETISED_TABLE, missing_message, GENERALISED_TABLE, TABLE, Algorithm, BadInput, GroupView, Interval,
                         Judgement, Kind, NodeValue, Release, Role, format_value, grouping_columns, hookimpl, param,
                         value_label)

GROUP_COLUMN = "group"


@dataclass(frozen=True)
class MondrianParams:
    mode: str = param("generalise", choices=("generalise", "bucketise"),
                      help="generalise: each quasi-identifier becomes its group's range or hierarchy node; "
                           "bucketise: values stay exact and the sensitive values are released in a second table, "
                           "shuffled within each group (Anatomy)")


# ---------------------------------------------------------------------------------- columns
class _Numeric:
    """A numeric quasi-identifier: each record's rank among the distinct values."""

    categorical = False

    def __init__(self, name: str, series: pd.Series):
        self.name = name
        self.uniques, codes = np.unique(series.to_numpy(), return_inverse=True)
        self.codes = codes.astype(np.int64)
        self.n_codes = len(self.uniques)
        self.span = float(self.uniques[-1]) - float(self.uniques[0]) if len(self.uniques) else 0.0

    def width(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        if self.span <= 0:
            return np.zeros(len(lo))
        return (self.uniques[hi].astype(float) - self.uniques[lo].astype(float)) / self.span

    def value(self, lo: int, hi: int):
        return Interval(_py(self.uniques[lo]), _py(self.uniques[hi]))


class _Categorical:
    """A categorical quasi-identifier: each record's leaf, and the leaves' ancestors level by level."""

    categorical = True

    def __init__(self, name: str, series: pd.Series, hierarchy):
        self.name = name
        self.hierarchy = hierarchy
        leaves = list(hierarchy.leaves)
        where = {leaf: i for i, leaf in enumerate(leaves)}
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        if (codes < 0).any():
            raise BadInput(f"column {name!r} has missing values; fill or remove them before anonymising")
        table = np.array([where.get(value_label(u), -1) for u in uniques], dtype=np.int64)
        if (table < 0).any():
            bad = value_label(uniques[int(np.flatnonzero(table < 0)[0])])
            raise BadInput(f"value {bad!r} of column {name!r} is not in its hierarchy; add it to the hierarchy")
        # leaves renumbered in depth-first order: the leaves under any node are then one run, so
        # the lowest common ancestor of a set is that of its first and last leaf
        dfs = list(hierarchy.in_order())
        rank = {leaf: i for i, leaf in enumerate(dfs)}
        self.codes = np.array([rank[leaf] for leaf in leaves], dtype=np.int64)[table[codes]]
        self.labels, ancestors = [], []
        for level in range(hierarchy.height + 1):
            nodes = hierarchy.nodes(level)
            above = np.empty(len(dfs), dtype=np.int64)
            for i, node in enumerate(nodes):
                above[[rank[leaf] for leaf in hierarchy.leaves_under(node)]] = i
            ancestors.append(above)
            self.labels.append([node.label for node in nodes])
        self.ancestors = np.vstack(ancestors)  # (levels, leaves in DFS order): index of each leaf's ancestor
        self.n_leaves = self.n_codes = len(dfs)
        sizes = [np.bincount(a, minlength=len(lab)) for a, lab in zip(ancestors, self.labels)]
        self.flat_sizes = np.concatenate(sizes)  # leaves under each node, level after level
        self.offsets = np.cumsum([0] + [len(x) for x in sizes[:-1]])
        self.leaves = dfs
        self._values = {}

    def lca(self, first: np.ndarray, last: np.ndarray):
        """(level, node) of the lowest common ancestor of the leaves first … last (DFS ranks)."""
        level = np.full(len(first), -1, dtype=np.int64)
        for lv in range(self.ancestors.shape[0]):
            same = (self.ancestors[lv][first] == self.ancestors[lv][last]) & (level < 0)
            level[same] = lv
        return level, self.ancestors[level, first]

    def width(self, level: np.ndarray, node: np.ndarray) -> np.ndarray:
        size = self.flat_sizes[self.offsets[level] + node]
        return np.where(level > 0, size / max(self.n_leaves, 1), 0.0)

    def value(self, level: int, node: int):
        key = (level, node)
        if key not in self._values:
            under = tuple(self.leaves[i] for i in np.flatnonzero(self.ancestors[level] == node))
            self._values[key] = NodeValue(self.labels[level][node], under)
        return self._values[key]


def _py(x):
    return x.item() if isinstance(x, np.generic) else x


def qi_columns(table, qis):
    """Each quasi-identifier as Mondrian measures it (numeric range or categorical values with their
    hierarchy); a clear message for a column with missing values. Shared with the relational
    baselines (Hilbert, relational PatternKa), which measure NCP the same way."""
    blanks = missing_message(table.frame, qis)
    if blanks:  # every column with blanks named at once
        raise BadInput(blanks)
    cols = []
    for name in qis:
        series = table.frame[name]
        numeric = table.schema[name].kind is Kind.NUMERIC and pd.api.types.is_numeric_dtype(series) \
            and not pd.api.types.is_bool_dtype(series)
        cols.append(_Numeric(name, series) if numeric else _Categorical(name, series, table.hierarchy(name)))
    return cols


# ---------------------------------------------------------------------------------- partitions
class _Partitions:
    """Per-partition state, grown as partitions split: each attribute's extent and tried flags."""

    def __init__(self, cols, weights):
        n = len(weights)
        self.cols = cols
        self.w = weights  # how many records each unit stands for
        self.a = [np.zeros(0, np.int64) for _ in cols]  # numeric: lo code; categorical: LCA level
        self.b = [np.zeros(0, np.int64) for _ in cols]  # numeric: hi code; categorical: LCA node
        self.tried = np.zeros((0, len(cols)), dtype=bool)
        self.open = np.zeros(0, dtype=bool)
        self.size = np.zeros(0, dtype=np.int64)
        self.pid = np.zeros(n, dtype=np.int64)
        self.live = np.arange(n)  # the units of open partitions
        self.add(np.zeros(n, dtype=np.int64), np.arange(n), 1)

    def add(self, local: np.ndarray, records: np.ndarray, count: int) -> None:
        """Append ``count`` partitions; ``local[i]`` (0 … count−1) is the new partition of ``records[i]``."""
        base = len(self.open)
        for j, col in enumerate(self.cols):
            if col.categorical:
                level, node = _lca(col, col.codes[records], local, count)
            else:
                level, node = _extent(col.codes[records], local, count, col.n_codes)
            self.a[j] = np.concatenate([self.a[j], level])
            self.b[j] = np.concatenate([self.b[j], node])
        self.tried = np.vstack([self.tried, np.zeros((count, len(self.cols)), dtype=bool)])
        self.open = np.concatenate([self.open, np.ones(count, dtype=bool)])
        self.size = np.concatenate([self.size, np.bincount(local, self.w[records], count).astype(np.int64)])
        self.pid[records] = base + local

    def widths(self, which: np.ndarray) -> np.ndarray:
        out = np.empty((len(which), len(self.cols)))
        for j, col in enumerate(self.cols):
            out[:, j] = col.width(self.a[j][which], self.b[j][which])
        return out


def _small(count: int, span: int, n: int) -> bool:
    """Whether a count × span table of codes per group is cheap next to sorting n records."""
    return count * span <= 4 * n + (1 << 16)


def _extent(values: np.ndarray, local: np.ndarray, count: int, span: int):
    """Smallest and largest code (0 … span−1) of each of ``count`` groups (``local`` numbers them):
    from a table of which codes each group holds when that table is small, else from one sort."""
    if _small(count, span, len(values)):
        held = np.bincount(local * span + values, minlength=count * span).reshape(count, span) > 0
        return held.argmax(axis=1), span - 1 - held[:, ::-1].argmax(axis=1)
    key = np.sort(local * span + values)
    first = np.searchsorted(key, np.arange(count) * span)
    last = np.searchsorted(key, np.arange(1, count + 1) * span) - 1
    base = np.arange(count) * span
    return key[first] - base, key[last] - base


def _lca(col: _Categorical, leaves: np.ndarray, local: np.ndarray, count: int):
    """(level, node) of the lowest common ancestor of each group's leaves."""
    first, last = _extent(leaves, local, count, col.n_leaves)
    return col.lca(first, last)


def _parts(col, parts: _Partitions, j: int, rec: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """The part (within its partition) of each record when its partition is cut on attribute j."""
    codes = col.codes[rec]
    if col.categorical:
        level = parts.a[j][pid]
        return col.ancestors.ravel()[(level - 1) * col.n_leaves + codes]
    span = col.n_codes
    w = parts.w[rec]
    local = _dense(pid)
    count = int(local.max()) + 1
    size = np.bincount(local, w, count)
    below = (size - 1) // 2  # how many of a partition's records lie below its lower median
    if _small(count, span, len(codes)):
        cum = np.bincount(local * span + codes, w, count * span).reshape(count, span).cumsum(axis=1)
        median = (cum > below[:, None]).argmax(axis=1)
    else:  # sorted by (partition, code): the median is where the running count passes `below`
        key = local * span + codes
        order = np.argsort(key, kind="stable")
        running = np.cumsum(w[order])
        before = np.r_[0.0, np.cumsum(size)[:-1]]
        at = np.searchsorted(running, before + below, side="right")
        median = key[order][at] - np.arange(count) * span
    m = median[local]
    at_top = m == parts.b[j][pid]
    return np.where(at_top, codes >= m, codes > m).astype(np.int64)


def _dense(keys: np.ndarray) -> np.ndarray:
    """Keys renumbered 0 … K−1 in increasing order (keys are small non-negative integers)."""
    present = np.zeros(int(keys.max()) + 1, dtype=np.int64)
    present[keys] = 1
    return (np.cumsum(present) - 1)[keys]


def judge(model, view):
    """The model's GroupVerdict on a view (a combined model judges all its models at once)."""
    own = getattr(model, "check_groups", None)
    if callable(own):
        return own(view)
    return model.plugin.check_groups(view, model.params)


def partition(table, model, ctx, *, qis=None, sensitive=None) -> np.ndarray:
    """Every record's final Mondrian partition (dense ids 0 … G−1, in order of first appearance)."""
    return _partition(table, model, ctx, qis, sensitive)[0]


def _partition(table, model, ctx, qis, sensitive):
    qis = list(qis if qis is not None else grouping_columns(table))
    if not qis:
        raise BadInput("Mondrian needs quasi-identifiers: mark the columns that identify people as quasi-identifiers")
    n = table.n_rows
    if n == 0:
        raise BadInput("the table has no records to anonymise")
    cols = qi_columns(table, qis)
    records = _sensitive_view(table, sensitive)
    whole = GroupView.from_codes(np.zeros(n, dtype=np.int64), records.sensitive, records.overall, records.values,
                                 records.numeric)
    if not judge(model, whole).holds:
        raise BadInput(f"the whole table already fails {model.name}: no partition of it can satisfy the model; "
                       f"relax its parameters")
    # the sensitive value tells units apart only when a model reads it (k-anonymity does not)
    sens = records.sensitive if _reads_sensitive(model) else None
    unit, first, weights = _units([c.codes for c in cols] + ([] if sens is None else [sens]),
                                  [c.n_codes for c in cols] + [len(records.values)])
    ucols = [copy.copy(c) for c in cols]
    for c in ucols:
        c.codes = c.codes[first]
    base = GroupView.from_codes(first, None if sens is None else sens[first],
                                records.overall, records.values, records.numeric)
    parts = _Partitions(ucols, weights)
    done = 0
    while parts.open.any():
        ctx.progress(done / n, f"Mondrian: {len(parts.open)} partitions, {done} records final")
        done += _round(parts, ucols, base, model)
    ctx.progress(1.0, f"Mondrian: {int((~parts.open).sum())} partitions")
    return _dense(parts.pid)[unit], cols


def _reads_sensitive(model) -> bool:
    """Whether any of the (possibly combined) model's models judges sensitive values; one that does
    without saying so finds no sensitive column and refuses, never judges wrongly."""
    return any(getattr(m.plugin, "needs_sensitive", True) for m in getattr(model, "models", (model,)))


def _units(codes: list, spans: list):
    """Records equal on every code (quasi-identifiers and the sensitive value) become one unit: a
    partition never separates them, and a model counts them by weight. Returns each record's unit,
    one record of each unit (any: they are equal) and each unit's weight."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    bound = 1
    for c, span in zip(codes, spans):
        if bound * max(span, 1) >= 1 << 62:
            key, uniq = pd.factorize(key)
            bound = len(uniq)
        key = key * max(span, 1) + c
        bound *= max(span, 1)
    unit, uniq = pd.factorize(key)
    one = np.empty(len(uniq), dtype=np.int64)
    one[unit] = np.arange(len(unit))
    return unit.astype(np.int64), one, np.bincount(unit).astype(np.int64)


def _sensitive_view(table, sensitive):
    """Every record's sensitive code and Q, as GroupView.from_labels would give them (first-appearance
    order for categories, ascending for numbers), from one factorisation."""
    if sensitive is None:
        marked = table.schema.by_role(Role.SENSITIVE)
        sensitive = marked[0] if marked else None
    zeros = np.zeros(table.n_rows, dtype=np.int64)
    if sensitive is None:
        return GroupView.from_codes(zeros, None, None)
    series = table.frame[sensitive]
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    if (codes < 0).any():
        raise BadInput("the sensitive column has missing values; fill or remove them before anonymising")
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    values = np.asarray(uniques)
    if numeric:
        order = np.argsort(values, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes, values = rank[codes], values[order]
    q = np.bincount(codes, minlength=len(values)) / len(codes)
    return GroupView.from_codes(zeros, codes.astype(np.int64), q, tuple(_py(v) for v in values), numeric)


def _round(parts: _Partitions, cols, base: GroupView, model) -> int:
    """One attempt for every open partition; returns how many records became final."""
    open_ids = np.flatnonzero(parts.open)
    width = parts.widths(open_ids)
    width[parts.tried[open_ids]] = 0.0
    best = np.argmax(width, axis=1)
    can = width[np.arange(len(open_ids)), best] > 0
    closing = open_ids[~can]
    parts.open[closing] = False
    final = int(parts.size[closing].sum())
    open_ids, best = open_ids[can], best[can]
    if len(open_ids) == 0:
        return final
    chosen = np.full(len(parts.open), -1, dtype=np.int64)
    chosen[open_ids] = best
    rec = parts.live
    pid = parts.pid[rec]
    keep = chosen[pid] >= 0
    if not keep.all():
        rec, pid = rec[keep], pid[keep]
        parts.live = rec
    part = np.empty(len(rec), dtype=np.int64)
    on = chosen[pid]
    for j, col in enumerate(cols):
        on_j = np.flatnonzero(on == j)
        if len(on_j):
            part[on_j] = _parts(col, parts, j, rec[on_j], pid[on_j])
    gid = _dense(pid * (int(part.max()) + 1) + part)
    sens = None if base.sensitive is None else base.sensitive[rec]
    view = GroupView.from_codes(gid, sens, base.overall, base.values, base.numeric, parts.w[rec])
    ok = judge(model, view).ok
    owner = np.empty(len(ok), dtype=np.int64)
    owner[gid] = pid
    failing = np.bincount(owner, minlength=len(parts.open)) < 2  # a cut must make two parts at least
    failing[owner[~ok]] = True
    split = ~failing[pid]
    # partitions whose cut fails try their next attribute
    refused = open_ids[failing[open_ids]]
    parts.tried[refused, chosen[refused]] = True
    if split.any():
        parts.open[open_ids[~failing[open_ids]]] = False
        local = _dense(gid[split])
        parts.add(local, rec[split], int(local.max()) + 1)
    return final


# ---------------------------------------------------------------------------------- release
class Mondrian(Algorithm):
    name = "mondrian"
    title = "Mondrian (generalise or bucketise)"
    paper = "001_f1ec36403a5884c8"
    description = ("Splits the table into groups of similar records, each satisfying the privacy model, and "
                   "replaces quasi-identifiers by their group's range or hierarchy node (or keeps them and "
                   "shuffles the sensitive values within each group).")
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUPS,)  # every split is checked by the model's own check_groups
    release_variants = {"generalised": {"mode": "generalise"}, "bucketised": {"mode": "bucketise"}}
    releases_sensitive = True
    Params = MondrianParams

    def run(self, data, model, params, ctx):
        if not (getattr(model, "judges_groups", None) or getattr(model.plugin, "judges_groups", False)):
            raise BadInput(f"Mondrian needs a privacy model that judges groups of records, not {model.name}")
        qis = list(grouping_columns(data))
        marked = data.schema.by_role(Role.SENSITIVE)
        sensitive = marked[0] if marked else None
        if sensitive in qis:
            qis.remove(sensitive)
        groups, cols = _partition(data, model, ctx, qis, sensitive)
        if params.mode == "bucketise":
            return bucketised(data, qis, sensitive, groups, ctx.rng)
        return generalised(data, qis, sensitive, groups, group_values(cols, groups))


def _released(table) -> list[str]:
    return [c for c in table.released_columns()]


def group_values(cols, groups) -> pd.DataFrame:
    """One row per group: each quasi-identifier's typed generalised value."""
    count = int(groups.max()) + 1
    out = {}
    for col in cols:
        a, b = _lca(col, col.codes, groups, count) if col.categorical else _extent(col.codes, groups, count, col.n_codes)
        out[col.name] = [col.value(int(x), int(y)) for x, y in zip(a, b)]
    return pd.DataFrame(out)


def generalised(table, qis, sensitive, groups, values) -> Release:
    frame = table.frame[_released(table)].reset_index(drop=True).copy()
    for name in qis:
        distinct, per_group = pd.factorize(values[name])  # format each distinct value once
        text = np.array([format_value(v) for v in per_group], dtype=object)[distinct]
        codes, cats = pd.factorize(pd.Series(text, dtype=object))
        frame[name] = pd.Categorical.from_codes(codes[groups], categories=cats)
    sizes = np.bincount(groups)
    # every sensitive column the release publishes is judged, not only the one the search split on
    published = tuple(c for c in table.schema.by_role(Role.SENSITIVE) if c in frame.columns and c != sensitive)
    return Release(GENERALISED_TABLE, frame, tuple(qis), target=table.schema.target,
                   sensitive=((sensitive,) if sensitive else ()) + published, groups=groups, group_values=values,
                   details={"groups": int(len(sizes)), "smallest_group": int(sizes.min()),
                            "average_group_size": float(sizes.mean())})


def bucketised(table, qis, sensitive, groups, rng) -> Release:
    if sensitive is None:
        raise BadInput("bucketisation releases the sensitive column separately: mark one column as sensitive")
    columns = [c for c in _released(table) if c != sensitive]
    if GROUP_COLUMN in columns:
        raise BadInput(f"the table already has a column named {GROUP_COLUMN!r}; rename it to bucketise")
    frame = table.frame[columns].reset_index(drop=True).copy()
    frame[GROUP_COLUMN] = groups
    order = np.lexsort((rng.random(len(groups)), groups))  # by group, shuffled within each group
    part = pd.DataFrame({GROUP_COLUMN: groups[order],
                         sensitive: table.frame[sensitive].to_numpy()[order]})
    sizes = np.bincount(groups)
    # The privacy model judges the buckets (the group column); the quasi-identifiers are released exact.
    return Release(BUCKETISED_TABLE, frame, (GROUP_COLUMN,), target=table.schema.target, sensitive=(sensitive,),
                   groups=groups, parts={"sensitive": part}, exact_quasi_identifiers=tuple(qis),
                   notes=(f"Bucketised (Anatomy): the quasi-identifiers {', '.join(qis)} are released exact; the groups "
                          f"hide only which of its group's sensitive values a record has, not who is in the table.",),
                   details={"groups": int(len(sizes)), "smallest_group": int(sizes.min()),
                            "average_group_size": float(sizes.mean())})


@hookimpl
def veil_register_algorithms():
    return [Mondrian]
