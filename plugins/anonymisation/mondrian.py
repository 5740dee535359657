"""Mondrian: strict multidimensional partitioning (LeFevre et al. 2006), as paper 001 uses it
(docs/reference.md#anonymising-tables).

Start with the whole table as one partition. A partition is cut on the quasi-identifier with the
widest normalised range (a number's range over its global range; a category's leaves under the
lowest common ancestor of its values over all leaves): numbers at the median, categories into the
children of that ancestor in the column's hierarchy. A cut stands only if every part satisfies the
chosen privacy model (its ``check_groups`` on the parts, with the whole table's sensitive
distribution Q), on every column marked sensitive (one view per column); otherwise the next-widest
attribute is tried, and a partition no attribute can cut is final.

Numbers are cut at the lower median m: ``x ≤ m`` against ``x > m``; when m is the partition's
largest value, ``x < m`` against ``x ≥ m`` instead, so a partition with two distinct values can
always be cut.

A numeric column with a hierarchy attached is cut along it like a category and written as its labels
(``numbers=hierarchy``; ``numbers=median`` keeps the median cut). A categorical column without a
hierarchy is put in an order (most frequent value first, or by the target) and cut at its median like
a number, each group written as the set of values it holds (``categories=set``), or cut along a
binary hierarchy generated over that order (``categories=hierarchy``), or kept as its value or ``*``
(``categories=star``): docs/anonymisation.md#mondrian-and-hierarchies.

Every partition's search is independent of the others, so all open partitions are cut at once, one
attempt each per round, with NumPy over the records (sorts for the medians, lookups in the
hierarchy's level table for the children): O(n log n) per level of the partition tree. Under a model
judging a group by its size alone, with no blank quasi-identifier, the same rounds run compiled
(``_median_cuts``) where numba is loaded or the table is large: the same cuts, the same group numbers.

Output modes: ``generalise`` replaces each quasi-identifier by its partition's range ``[lo, hi]``
or hierarchy node; ``bucketise`` keeps the quasi-identifiers exact, adds the partition as a
``group`` column and releases the sensitive values in a second table (``parts["sensitive"]``),
permuted within each group (Anatomy).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    BLANK_RULES,
    OWN_VALUE,
    BUCKETISED_TABLE,
    TABLE,
    Algorithm,
    BadInput,
    GroupSizeModel,
    GroupView,
    HierarchyUse,
    Judgement,
    Release,
    Role,
    SUPPRESSED,
    TradeOff,
    grouping_columns,
    hookimpl,
    kernels_loaded,
    param,
)

from ._cells import Columns, suppress_failing, suppressed_throughout
from ._median_cuts import columns_for_kernel, kernels, run_rounds
from ._regions import generalised, group_values, known_extent, qi_columns, released_columns, small_table
from ._sensitive import reads_sensitive, sensitive_columns, sensitive_view, survey_of

GROUP_COLUMN = "group"


@dataclass(frozen=True)
class MondrianParams:
    mode: str = param(
        "generalise",
        choices=("generalise", "bucketise"),
        help="generalise: each quasi-identifier becomes its group's range or hierarchy node; "
        "bucketise: values stay exact and the sensitive values are released in a second table, "
        "shuffled within each group (Anatomy)",
    )
    numbers: str = param(
        "hierarchy",
        choices=("hierarchy", "median"),
        help="a numeric quasi-identifier with a hierarchy attached — hierarchy: cut along it, its "
        "groups written as the hierarchy's labels; median: cut at the median and written as "
        "ranges, the hierarchy unused (numbers without a hierarchy are always cut at the median)",
    )
    categories: str = param(
        "set",
        choices=("set", "hierarchy", "star"),
        help="a categorical quasi-identifier without a hierarchy — set: its values are ordered "
        "(see order) and cut at the median, each group written as the set of its values; "
        "hierarchy: cut along a binary hierarchy generated over that order; star: the value "
        "stays or becomes * (a column with a hierarchy is always cut along it)",
    )
    blanks: str = param(
        ANY_VALUE,
        choices=BLANK_RULES,
        help="what a blank quasi-identifier means (a blank stays blank): any-value (it matches any value, "
        "sdcMicro's rule; a cut puts a record blank in its column with the lower part) or own-value (a "
        "value of its own: the records of each pattern of blank columns are partitioned apart)",
    )
    order: str = param(
        "frequency",
        choices=("frequency", "target"),
        help="how the values of a categorical column without a hierarchy are ordered for categories="
        "set or hierarchy — frequency: most frequent first; target: by the share of the "
        "target's most frequent class among the value's records",
    )


# ---------------------------------------------------------------------------------- partitions
class _Partitions:
    """Per-partition state, grown as partitions split: each attribute's extent and tried flags."""

    def __init__(self, cols, weights, start: np.ndarray):
        """``start``: each unit's first partition (0 … S−1)."""
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
        self.add(start, np.arange(n), int(start.max()) + 1 if n else 1)

    def add(self, local: np.ndarray, records: np.ndarray, count: int) -> None:
        """Append ``count`` partitions; ``local[i]`` (0 … count−1) is the new partition of ``records[i]``."""
        base = len(self.open)
        for j, col in enumerate(self.cols):
            level, node = known_extent(col, col.codes[records], local, count)  # a partition of blanks: no width
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


def _parts(col, parts: _Partitions, j: int, rec: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """The part (within its partition) of each record when its partition is cut on attribute j; a
    record blank in j joins the lowest part of its partition (only where a blank matches any value:
    under own-value no partition mixes blanks and values of a column)."""
    codes = col.codes[rec]
    blank = codes < 0
    if blank.any():
        known = ~blank
        part = np.zeros(len(codes), dtype=np.int64)
        part[known] = _parts(col, parts, j, rec[known], pid[known])
        lowest = np.full(len(parts.open), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(lowest, pid[known], part[known])
        part[blank] = lowest[pid[blank]]
        return part
    if col.categorical:
        level = parts.a[j][pid]
        return col.ancestors.ravel()[(level - 1) * col.n_leaves + codes]
    span = col.n_codes
    w = parts.w[rec]
    local = _dense(pid)
    count = int(local.max()) + 1
    size = np.bincount(local, w, count)
    below = (size - 1) // 2  # how many of a partition's records lie below its lower median
    if small_table(count, span, len(codes)):
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


def partition(table, model, ctx, *, qis=None, sensitive=None, params=None) -> np.ndarray:
    """Every record's final Mondrian partition (dense ids 0 … G−1, in order of first appearance).
    ``sensitive``: one column or several (each judged on its own; a cut stands only when the model
    holds on every one), by default every column marked sensitive."""
    return _partition(table, model, ctx, qis, sensitive, params)[0]


def _partition(table, model, ctx, qis, sensitive, params=None):
    qis = list(qis if qis is not None else grouping_columns(table))
    if not qis:
        raise BadInput("Mondrian needs quasi-identifiers: mark the columns that identify people as quasi-identifiers")
    n = table.n_rows
    if n == 0:
        raise BadInput("the table has no records to anonymise")
    p = params or MondrianParams()
    cols = qi_columns(table, qis, numbers=p.numbers, categories=p.categories, order=p.order, blanks=True)
    start, strata = _blank_strata(cols, p.blanks)
    columns = sensitive_columns(table, sensitive)
    # the sensitive values tell units apart only when a model reads them (k-anonymity does not)
    reads = reads_sensitive(model)
    views = [sensitive_view(table, c) for c in columns] if reads and columns else [sensitive_view(table, None)]
    population = _population_of(table, model, qis)
    if population is not None and any((c.codes < 0).any() for c in cols):
        raise BadInput(
            "the population models (δ-presence, k-map) count a group's matches as written, which a blank "
            "quasi-identifier is not: fill or drop the blanks before anonymising with them"
        )
    counts = None if population is None else population.matches(_part_values(cols, np.arange(n), np.zeros(n, np.int64)))
    survey = survey_of(table, model)  # each record's survey weight, when a model reads them
    for column, records in zip(columns or [None], views):
        whole = GroupView.from_codes(
            start,
            records.sensitive,
            records.overall,
            records.values,
            records.numeric,
            hierarchy=records.hierarchy,
            population=counts,
            survey=survey,
        )
        verdict = judge(model, whole)
        if len(strata) > 1 and not verdict.holds:
            on = f" on the sensitive column {column!r}" if column is not None and reads else ""
            bad = int(np.flatnonzero(~np.asarray(verdict.ok))[0])
            raise BadInput(
                f"with blanks=own-value a blank is a value of its own, so the records {strata[bad]} "
                f"({int((start == bad).sum())} of them) are partitioned apart, and they fail {model.name}{on} "
                f"as a whole: "
                f"choose blanks=any-value (a blank matches any value), or fill or drop those blanks"
            )
        if not verdict.holds:
            on = f" on the sensitive column {column!r}" if column is not None and reads else ""
            raise BadInput(
                f"the whole table already fails {model.name}{on}: no partition of it can satisfy the "
                f"model; relax its parameters"
            )
    sens = [v.sensitive for v in views] if reads and columns else []
    unit, first, weights = _units(
        [c.codes for c in cols] + sens, [c.n_codes for c in cols] + [len(v.values) for v in views][: len(sens)]
    )
    unit_survey = None if survey is None else np.bincount(unit, weights=survey, minlength=len(first))
    ucols = [copy.copy(c) for c in cols]
    for c in ucols:
        c.codes = c.codes[first]
    bases = [
        GroupView.from_codes(
            first,
            None if v.sensitive is None or not sens else v.sensitive[first],
            v.overall,
            v.values,
            v.numeric,
            hierarchy=v.hierarchy,
            survey=unit_survey,  # each unit's sum of survey weights
        )
        for v in views
    ]
    k = _size_threshold(model, population, survey)
    if k is not None and not (start > 0).any() and all((c.codes >= 0).all() for c in ucols) and _compiled(len(first)):

        def each_round(done, made):
            ctx.progress(done / n, f"Mondrian: {made} partitions, {done} records final")

        groups, made, extents = run_rounds(columns_for_kernel(ucols), weights, k, each_round)
        ctx.progress(1.0, f"Mondrian: {made} partitions")
        return groups[unit], cols, extents
    parts = _Partitions(ucols, weights, start[first])
    done = 0
    while parts.open.any():
        ctx.progress(done / n, f"Mondrian: {len(parts.open)} partitions, {done} records final")
        done += _round(parts, ucols, bases, model, population, k)
    ctx.progress(1.0, f"Mondrian: {int((~parts.open).sum())} partitions")
    return _dense(parts.pid)[unit], cols, None


_COMPILED_FROM = 200_000  # units from which loading numba (about half a CPU second) pays, unless it is loaded


def _compiled(units: int) -> bool:
    """Whether the compiled rounds run: numba is installed, and loaded already or worth loading."""
    return (units >= _COMPILED_FROM or kernels_loaded()) and kernels() is not None


def _size_threshold(model, population, survey) -> int | None:
    """The k of a model that judges a group by its size alone (k-anonymity; several such models: the
    largest k), which the compiled rounds check themselves; None for any other model, or where a
    population or survey weights are read."""
    if population is not None or survey is not None:
        return None
    ks = []
    for m in getattr(model, "models", (model,)):
        plugin = getattr(m, "plugin", None)
        if not isinstance(plugin, GroupSizeModel) or type(plugin).check_groups is not GroupSizeModel.check_groups:
            return None
        ks.append(int(m.params.k))
    return max(ks) if ks else None


def _blank_strata(cols, rule: str):
    """(each record's first partition, its words): one for all under any-value; under own-value one
    per pattern of blank quasi-identifiers, as a blank is a value no other matches."""
    n = len(cols[0].codes) if cols else 0
    if rule != OWN_VALUE or not any((c.codes < 0).any() for c in cols):
        return np.zeros(n, dtype=np.int64), ["of the table"]
    blank = np.stack([c.codes < 0 for c in cols], axis=1)
    masks, start = np.unique(blank, axis=0, return_inverse=True)
    words = []
    for mask in masks:
        names = [c.name for c, b in zip(cols, mask) if b]
        words.append(f"blank in {', '.join(names)}" if names else "with no blank")
    return start.reshape(-1).astype(np.int64), words


def _units(codes: list, spans: list):
    """Records equal on every code (quasi-identifiers and the sensitive value) become one unit: a
    partition never separates them, and a model counts them by weight. Returns each record's unit,
    one record of each unit (any: they are equal) and each unit's weight."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    bound = 1
    for c, span in zip(codes, spans):  # a blank's code −1 counted as 0, the others shifted by one
        if bound * (span + 1) >= 1 << 62:
            key, uniq = pd.factorize(key)
            bound = len(uniq)
        key = key * (span + 1) + c + 1
        bound *= span + 1
    unit, uniq = pd.factorize(key)
    one = np.empty(len(uniq), dtype=np.int64)
    one[unit] = np.arange(len(unit))
    return unit.astype(np.int64), one, np.bincount(unit).astype(np.int64)


def _population_of(table, model, qis):
    """The run's population when a model counts groups in it (δ-presence, k-map), checked to hold the
    data as a sample of it; else None."""
    population = getattr(table, "population", None)
    if population is None or not any(
        getattr(m.plugin, "reads_population", False) for m in getattr(model, "models", (model,))
    ):
        return None
    population.check_covers(table, qis)
    return population


def _part_values(cols, rec: np.ndarray, gid: np.ndarray) -> pd.DataFrame:
    """The values each candidate part (``gid`` of the units ``rec``) would be released with."""
    sub = []
    for col in cols:
        one = copy.copy(col)
        one.codes = col.codes[rec]
        sub.append(one)
    return group_values(sub, gid)


def _round(parts: _Partitions, cols, bases: list[GroupView], model, population=None, k=None) -> int:
    """One attempt for every open partition; returns how many records became final. ``k``: the size
    a model judging groups by their size alone asks (:func:`_size_threshold`), under which a partition
    of fewer than 2k records is final at once, as every cut of it would fail."""
    open_ids = np.flatnonzero(parts.open)
    width = parts.widths(open_ids)
    width[parts.tried[open_ids]] = 0.0
    best = np.argmax(width, axis=1)
    can = width[np.arange(len(open_ids)), best] > 0
    if k is not None:
        can &= parts.size[open_ids] >= 2 * k
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
    matches = None  # each candidate part's matches among the population, by its released values
    if population is not None:
        matches = population.matches(_part_values(cols, rec, gid))
    ok = None
    for base in bases:  # one view per sensitive column: a part stands only when every one passes
        sens = None if base.sensitive is None else base.sensitive[rec]
        view = GroupView.from_codes(
            gid,
            sens,
            base.overall,
            base.values,
            base.numeric,
            parts.w[rec],
            hierarchy=base.hierarchy,
            population=matches,
            survey=None if base.survey is None else base.survey[rec],
        )
        passed = judge(model, view).ok
        ok = passed if ok is None else ok & passed
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
    keeps_record_order = True  # every record, in the input's order
    aggregates_in_groups = True  # each record in one group: a column can be aggregated inside them
    title = "Mondrian (generalise or bucketise)"
    paper = "001_f1ec36403a5884c8"
    description = (
        "Splits the table into groups of similar records, each satisfying the privacy model, and "
        "replaces quasi-identifiers by their group's range or hierarchy node (or keeps them and "
        "shuffles the sensitive values within each group)."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUPS,)  # every split is checked by the model's own check_groups
    release_variants = {"generalised": {"mode": "generalise"}, "bucketised": {"mode": "bucketise"}}
    releases_sensitive = True
    Params = MondrianParams
    uses_hierarchies = HierarchyUse.ALL
    # a sweep of the model's parameter traces the privacy–utility frontier (paper 001 §4)
    trade_off = TradeOff(
        ("ploss", "privacy-value"), ("uloss", "ncp", "loss", "discernibility", "average-class-size"), swept=True
    )

    @classmethod
    def hierarchy_use(cls, params) -> HierarchyUse:
        return HierarchyUse.ALL if params.numbers == "hierarchy" else HierarchyUse.CATEGORICAL

    @classmethod
    def blank_rule(cls, params) -> str:
        return params.blanks

    def run(self, data, model, params, ctx):
        if not (getattr(model, "judges_groups", None) or getattr(model.plugin, "judges_groups", False)):
            raise BadInput(f"Mondrian needs a privacy model that judges groups of records, not {model.name}")
        marked = list(data.schema.by_role(Role.SENSITIVE))
        qis = [c for c in grouping_columns(data) if c not in marked]
        groups, cols, extents = _partition(data, model, ctx, qis, marked, params)
        if params.mode == "bucketise":
            return bucketised(data, qis, marked, groups, ctx.rng)
        distinct: dict = {}
        values = group_values(cols, groups, ctx.check, distinct, extents)
        sensitive = marked[0] if marked else None
        release = generalised(data, qis, sensitive, groups, values, blanks=params.blanks, distinct=distinct)
        if release.blanks == ANY_VALUE:
            release = _meeting_the_model(data, release, qis, marked, model, values, ctx)
        return release


def _meeting_the_model(table, release, qis, marked, model, values, ctx):
    """The release with the groups failing ``model`` once a blank joins every group it could
    (docs/reference.md#blanks) suppressed, again and again until none fails. Each cut was judged on
    its own records, so a model that a group containing a passing group passes (k-anonymity,
    distinct l-diversity) never fails here; another (entropy l-diversity, t-closeness, …) can,
    where a record blank in a column is compatible with records of other groups."""
    ctx.progress(1.0, "Mondrian: judging the groups blanks join")
    where = suppress_failing(release.frame, Columns(list(qis), list(marked)), model, survey_of(table, model), ctx.check)
    if not where.any():
        return release
    used = np.unique(release.groups[~where])  # the groups keeping a record; the suppressed ones form one more
    kept = values.iloc[used].reset_index(drop=True)
    starred = pd.DataFrame({c: [SUPPRESSED] for c in values.columns})
    values = pd.concat([kept, starred], ignore_index=True)
    order = np.full(int(release.groups.max()) + 2, -1, dtype=np.int64)  # old group → row of ``values``
    order[used] = np.arange(len(used))
    order[-1] = len(used)
    old = np.where(where, len(order) - 1, release.groups)
    groups = order[old]
    again = generalised(table, qis, marked[0] if marked else None, groups, values, blanks=ANY_VALUE)
    n = int(where.sum())
    note = (
        f"{n:,} record{'s' if n != 1 else ''} suppressed (* in every quasi-identifier): with a blank matching "
        f"any value, their groups failed {model.name}"
    )
    return dataclasses.replace(
        again,
        frame=suppressed_throughout(again.frame, qis, where),
        notes=(*again.notes, note),
        details={**again.details, "suppressed_records": n},
    )


def bucketised(table, qis, sensitive, groups, rng) -> Release:
    """Anatomy: the quasi-identifiers exact with each record's group, and every sensitive column
    (``sensitive``: one name or several) in a second table, the records shuffled within each group
    (one shuffle for all the columns, so a record's values stay together)."""
    columns_sensitive = [sensitive] if isinstance(sensitive, str) else list(sensitive or ())
    if not columns_sensitive:
        raise BadInput("bucketisation releases the sensitive column separately: mark one column as sensitive")
    columns = [c for c in released_columns(table) if c not in columns_sensitive]
    if GROUP_COLUMN in columns:
        raise BadInput(f"the table already has a column named {GROUP_COLUMN!r}; rename it to bucketise")
    frame = table.frame[columns].reset_index(drop=True).copy()
    frame[GROUP_COLUMN] = groups
    order = np.lexsort((rng.random(len(groups)), groups))  # by group, shuffled within each group
    part = pd.DataFrame(
        {GROUP_COLUMN: groups[order], **{c: table.frame[c].to_numpy()[order] for c in columns_sensitive}}
    )
    sizes = np.bincount(groups)
    # The privacy model judges the buckets (the group column); the quasi-identifiers are released exact.
    return Release(
        BUCKETISED_TABLE,
        frame,
        (GROUP_COLUMN,),
        target=table.schema.target,
        sensitive=tuple(columns_sensitive),
        groups=groups,
        parts={"sensitive": part},
        exact_quasi_identifiers=tuple(qis),
        notes=(
            f"Bucketised (Anatomy): the quasi-identifiers {', '.join(qis)} are released exact; the groups "
            f"hide only which of its group's sensitive values a record has, not who is in the table.",
        ),
        details={
            "groups": int(len(sizes)),
            "smallest_group": int(sizes.min()),
            "average_group_size": float(sizes.mean()),
        },
    )


@hookimpl
def veil_register_algorithms():
    return [Mondrian]
