"""The common view of a relational release that the anonymisation metrics share (paper 001,
docs/reference.md#anonymising-tables): the original table and its release per quasi-identifier as
sets of hierarchy leaves (:class:`Anonymised`), what each unit adds to a population's sensitive
counts (:class:`SensitiveSums`), and the NaN a metric returns where it does not apply
(:func:`nan_when_not_applicable`). Used by :mod:`.metrics` and :mod:`.generalisation_metrics`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    SUPPRESSED,
    BadInput,
    BinaryMatrix,
    Interval,
    NodeValue,
    Role,
    Table,
    group_ids,
    parse_value,
    value_label,
)

if TYPE_CHECKING:  # scipy.sparse is loaded where counts are built, not to register the plugins
    import scipy.sparse as sp


class Anonymised:
    """The original table and its release seen per quasi-identifier as sets of hierarchy leaves.

    ``units`` are what the release lets a reader tell apart: groups for a generalised release
    (every record of a group has the same region), records otherwise. ``unit_sa`` (units × S) is
    what each unit contributes to the sensitive distribution of a population it lies in.
    """

    def __init__(self, table: Table, release, sensitive: str | None, check=None):
        release = blanks_as_suppressed(release)
        self.table, self.release = table, release
        self.check = check or (lambda: None)  # cancellation: called per quasi-identifier (a pass over the records)
        self.qis = [c for c in release_qis(table, release)]
        if not self.qis:
            raise NotApplicable
        frame = table.frame
        self.n = table.n_rows
        self.hier, self.leaves, self.record_leaf = {}, {}, {}
        if frame[self.qis].isna().any().any():  # an input blank has no leaf: its loss is not defined
            raise NotApplicable
        for c in self.qis:
            self.check()
            self.hier[c] = table.hierarchy(c)
            self.leaves[c] = list(self.hier[c].leaves)
            self.check()
            self.record_leaf[c] = _leaf_index(self.hier[c], frame[c])
        self.sensitive = sensitive
        self.check()
        if sensitive is not None:
            sa = frame[sensitive]
            if sa.isna().any():
                raise BadInput(f"the sensitive column {sensitive!r} has missing values")
            self.sa_codes, self.sa_values = pd.factorize(sa, sort=True)
            self.S = len(self.sa_values)
            q = np.bincount(self.sa_codes, minlength=self.S).astype(float)
            self.q = q / q.sum()
        self.groups = groups_of(release, self.n)

    def leaf_order(self, col: str) -> np.ndarray:
        """A column's leaves in their natural order: by value for numbers, else the hierarchy's."""
        cache = self.__dict__.setdefault("_orders", {})
        if col not in cache:
            try:
                cache[col] = np.argsort(leaf_numbers(self.leaves[col]), kind="stable")
            except BadInput:
                cache[col] = pd.Index(self.leaves[col]).get_indexer(list(self.hier[col].in_order()))
        return cache[col]

    # regions: units × leaves (bool) per attribute
    @classmethod
    def shared(cls, table: Table, release, sensitive: str | None, ctx) -> Anonymised:
        """The view of ``table`` and ``release`` the metrics of one measurement share (``ctx.shared``:
        built by the first, then read with its regions), or a view of one's own outside a measurement.
        Callers only read it (its caches are filled once, for every metric alike)."""
        shared = getattr(ctx, "shared", None)
        if shared is None:
            return cls(table, release, sensitive, check=ctx.check)
        views = shared.setdefault(__name__ + ".views", [])
        for t, r, s, view in views:  # the objects are kept beside their view, so no id is reused meanwhile
            if t is table and r is release and s == sensitive:
                return view
        view = cls(table, release, sensitive, check=ctx.check)
        views.append((table, release, sensitive, view))
        return view

    def unit_regions(self) -> tuple[dict, np.ndarray, str]:
        """Per attribute a units × leaves mask, each unit's record count, and the unit kind (computed
        once per view; read-only)."""
        if "_unit_regions" not in self.__dict__:
            self._unit_regions = self._compute_unit_regions()
        return self._unit_regions

    def _compute_unit_regions(self) -> tuple[dict, np.ndarray, str]:
        rel = self.release
        if rel.group_values is not None and rel.groups is not None:
            gv = rel.group_values
            regions = {}
            for c in self.qis:
                self.check()
                regions[c] = (
                    self._group_regions(c, gv[c]) if c in gv.columns else np.ones((len(gv), len(self.leaves[c])), bool)
                )
            return regions, np.bincount(rel.groups, minlength=len(gv)), "groups"
        released = set(rel.frame.columns)
        regions = {}
        for c in self.qis:
            if c in released:
                regions[c] = self.record_leaf[c]  # exact: the leaf index itself
            else:
                regions[c] = None  # withheld: the whole domain
        return regions, np.ones(self.n, dtype=np.int64), "records"

    def _group_regions(self, col: str, values) -> np.ndarray:
        """groups × leaves: the region of every group's released value of ``col``."""
        rows = []
        for i, value in enumerate(values):
            if i % 256 == 0:
                self.check()
            rows.append(self._region_cached(col, value))
        regions = np.vstack(rows)
        regions.setflags(write=False)  # shared by every metric of a measurement
        return regions

    def _region_cached(self, col: str, value) -> np.ndarray:
        """:meth:`_region`, computed once per distinct released value (groups share few values)."""
        cache = self.__dict__.setdefault("_regions", {})
        try:
            key = (col, value)
            hash(key)
        except TypeError:
            return self._region(col, value)
        if key not in cache:
            cache[key] = self._region(col, value)
        return cache[key]

    def _numbers(self, col: str) -> np.ndarray:
        cache = self.__dict__.setdefault("_numbers_cache", {})
        if col not in cache:
            cache[col] = leaf_numbers(self.leaves[col])
        return cache[col]

    def _leaf_index(self, col: str) -> pd.Index:
        """The column's leaves as an index, built once (a lookup per region would rebuild it each time)."""
        cache = self.__dict__.setdefault("_leaf_index_cache", {})
        if col not in cache:
            cache[col] = pd.Index(self.leaves[col])
        return cache[col]

    def _region(self, col: str, value) -> np.ndarray:
        leaves = self.leaves[col]
        mask = np.zeros(len(leaves), dtype=bool)
        value = parse_value(value) if isinstance(value, str) else value
        if value is SUPPRESSED:
            mask[:] = True
        elif isinstance(value, Interval):
            nums = self._numbers(col)
            mask = (nums >= value.lo) & ((nums <= value.hi) if value.closed else (nums < value.hi))
        elif isinstance(value, NodeValue):
            # positions by a dict built once per column: few calls per region (pandas' get_indexer
            # makes hundreds), so the metric reaches its cancellation checks often
            where = self.__dict__.setdefault("_leaf_positions", {})
            if col not in where:
                where[col] = {leaf: i for i, leaf in enumerate(leaves)}
            positions = where[col]
            mask[[positions[leaf] for leaf in value.leaves if leaf in positions]] = True
        else:
            label = value_label(value)
            try:
                under = self.hier[col].leaves_under(label)
            except BadInput:
                raise BadInput(f"the released value {label!r} of {col!r} is not in its hierarchy") from None
            mask[self._leaf_index(col).get_indexer(list(under))] = True
        if not mask.any():
            raise BadInput(f"the released value {value!r} of {col!r} covers no value of the column")
        return mask

    def estimates(self) -> tuple[dict, SensitiveSums]:
        """What a reader estimates from under the uniform assumption: each unit's region per
        attribute, and what each unit adds to a population's sensitive counts."""
        regions, _, kind = self.unit_regions()
        return regions, self.unit_sensitive(kind)

    def unit_sensitive(self, kind: str) -> SensitiveSums:
        """What each unit adds to a population's sensitive counts, held in O(records) memory."""
        return SensitiveSums(self, kind)


class SensitiveSums:
    """units → sensitive counts: :meth:`of` sums what the units contribute to each sensitive value,
    given each unit's weight in a population (its share under the uniform assumption).

    Never a dense units × S matrix (records × distinct sensitive values can be billions of cells):
    a generalised release keeps each group's counts sparse; a record-level release its codes.
    """

    def __init__(self, view: Anonymised, kind: str):
        self.S = S = view.S
        rel = view.release
        self.q = view.q
        self.codes = self.by_group = self.groups = None
        if kind == "groups":
            self.by_group = _group_counts(view.groups, view.sa_codes, S)
            self.n_units = self.by_group.shape[0]
        elif view.groups is not None and view.sensitive not in rel.frame.columns:
            counts = _group_counts(view.groups, view.sa_codes, S)  # bucketised: a record's value is its bucket's mix
            sizes = np.asarray(counts.sum(axis=1)).ravel()
            import scipy.sparse as sp

            self.by_group = sp.diags(1.0 / np.where(sizes > 0, sizes, 1.0)) @ counts
            self.groups, self.n_units = view.groups, view.n
        elif view.sensitive in rel.frame.columns:
            self.codes, self.n_units = view.sa_codes, view.n
        else:
            self.n_units = view.n  # the release says nothing of the sensitive value: the table's mix

    def of(self, weights: np.ndarray) -> np.ndarray:
        """S counts: Σ over units of weight × the unit's sensitive counts."""
        weights = np.asarray(weights, dtype=float)
        if self.groups is not None:
            per_group = np.bincount(self.groups, weights=weights, minlength=self.by_group.shape[0])
            return np.asarray(self.by_group.T @ per_group).ravel()
        if self.by_group is not None:
            return np.asarray(self.by_group.T @ weights).ravel()
        if self.codes is not None:
            return np.bincount(self.codes, weights=weights, minlength=self.S).astype(float)
        return weights.sum() * self.q

    def of_records(self, rows: np.ndarray) -> np.ndarray:
        """S counts of the records ``rows`` (each with weight 1) of a record-level release."""
        if self.groups is not None:
            per_group = np.bincount(self.groups[rows], minlength=self.by_group.shape[0]).astype(float)
            return np.asarray(self.by_group.T @ per_group).ravel()
        if self.codes is not None:
            return np.bincount(self.codes[rows], minlength=self.S).astype(float)
        return len(rows) * self.q


def _group_counts(groups: np.ndarray, codes: np.ndarray, S: int) -> sp.csr_matrix:
    """groups × S sparse counts (at most one entry per record)."""
    import scipy.sparse as sp

    G = int(groups.max()) + 1
    return sp.csr_matrix((np.ones(len(groups)), (groups, codes)), shape=(G, S))


def release_qis(table: Table, release) -> list[str]:
    """The table's quasi-identifiers (declared, else every non-role column), in table order."""
    declared = table.schema.by_role(Role.QUASI_IDENTIFIER)
    if declared:
        return declared
    qis = set(release.quasi_identifiers)
    return [c for c in table.columns if c in qis]


def blanks_as_suppressed(release):
    """The release with each blank quasi-identifier cell written ``*`` where a blank matches any
    value: a blank is charged as a suppressed cell, as ARX charges suppression
    (docs/reference.md#blanks)."""
    if release.blanks != ANY_VALUE or release.blank_codes() is None:
        return release
    frame = release.frame.copy()
    for c in release.quasi_identifiers:
        if c in frame.columns and frame[c].isna().any():
            frame[c] = frame[c].astype(object).where(frame[c].notna(), "*")
    values = release.group_values
    if values is not None:
        values = values.copy()
        for c in values.columns:
            values[c] = values[c].astype(object).where(values[c].notna(), SUPPRESSED)
    return dataclasses.replace(release, frame=frame, group_values=values)


def groups_of(release, n: int) -> np.ndarray | None:
    if release.groups is not None:
        return np.asarray(release.groups, dtype=np.int64)
    qi = [c for c in release.quasi_identifiers if c in release.frame.columns]
    if len(release.frame) != n:
        return None
    return group_ids(release.frame[qi])


def _leaf_index(hierarchy, series: pd.Series) -> np.ndarray:
    labels = hierarchy.generalise_series(series, 0)
    idx = pd.Index(hierarchy.leaves).get_indexer(labels)
    return idx.astype(np.int64)


def leaf_numbers(leaves) -> np.ndarray:
    try:
        return np.array([float(x) for x in leaves])
    except ValueError:
        raise BadInput("an interval was released for a column whose values are not numbers") from None


class NotApplicable(Exception):
    pass


def table_and_sensitive(original, release, need_sensitive=True):
    if not isinstance(original, Table) or isinstance(original, BinaryMatrix):
        raise NotApplicable
    sens = original.schema.by_role(Role.SENSITIVE)
    if need_sensitive and not sens:
        raise NotApplicable
    if release.n_rows != original.n_rows and (release.groups is None or len(release.groups) != original.n_rows):
        raise NotApplicable  # not one released row per record (a sample): no record-by-record comparison
    return original, (sens[0] if sens else None)


def nan_when_not_applicable(fn):
    def compute(self, original, release, params, ctx):
        try:
            return fn(self, original, release, params, ctx)
        except NotApplicable:
            return float("nan")

    compute.__doc__ = fn.__doc__
    return compute
