"""How much an anonymised table discloses and how much it still tells (paper 001,
docs/reference.md#anonymising-tables).

* ``ploss`` — privacy loss: the largest JS divergence between the whole table's sensitive
  distribution Q and that of any record's group. 0 when every group looks like the table.
* ``uloss`` — utility loss: the mean JS divergence, over the table's large populations (records
  under one hierarchy node per quasi-identifier, support ≥ minSup), between the true sensitive
  distribution and the one a researcher estimates from the release under the uniform assumption.
* ``query-error`` — the mean relative error of 1,000 seeded random COUNT queries.
* ``ncp`` — the normalised certainty penalty of the generalisation, averaged over records and
  quasi-identifiers (the relational GCP of docs/reference.md#set-valued-data): 0 for exact values, 1 for ``*``.
* ``discernibility`` and ``average-class-size`` — the classic group-size penalties.

Every metric works on a relational table's release: a generalised one (typed group values), a
bucketised one (exact quasi-identifiers, sensitive values per bucket), or a feature subset (a
withheld quasi-identifier counts as suppressed). Where a metric does not apply it returns NaN.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (FREQUENT_ITEMSETS, SUPPRESSED, TABLE, BadInput, BinaryMatrix, Interval, Metric, NodeValue, Role, Table, group_ids,
                         hookimpl, mine, param, parse_value, value_label)

PAPER = "001_f1ec36403a5884c8"


# --------------------------------------------------------------------------------------------- JS
def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """JS(P, Q) in nats along the last axis (0·ln 0 = 0); rows of ``p`` against ``q``."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    return 0.5 * (_kl(p, m) + _kl(np.broadcast_to(q, p.shape), m))


def _kl(p, m):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / np.where(m > 0, m, 1)), 0.0)
    return terms.sum(axis=-1)


# ------------------------------------------------------------------------------ the common view
class _Anonymised:
    """The original table and its release seen per quasi-identifier as sets of hierarchy leaves.

    ``units`` are what the release lets a reader tell apart: groups for a generalised release
    (every record of a group has the same region), records otherwise. ``unit_sa`` (units × S) is
    what each unit contributes to the sensitive distribution of a population it lies in.
    """

    def __init__(self, table: Table, release, sensitive: str | None, check=None):
        self.table, self.release = table, release
        self.check = check or (lambda: None)  # cancellation: called per quasi-identifier (a pass over the records)
        self.qis = [c for c in release_qis(table, release)]
        if not self.qis:
            raise _NotApplicable
        frame = table.frame
        self.n = table.n_rows
        self.hier, self.leaves, self.record_leaf = {}, {}, {}
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
        self.groups = _groups_of(release, self.n)

    def leaf_order(self, col: str) -> np.ndarray:
        """A column's leaves in their natural order: by value for numbers, else the hierarchy's."""
        cache = self.__dict__.setdefault("_orders", {})
        if col not in cache:
            try:
                cache[col] = np.argsort(_leaf_numbers(self.leaves[col]), kind="stable")
            except BadInput:
                cache[col] = pd.Index(self.leaves[col]).get_indexer(list(self.hier[col].in_order()))
        return cache[col]

    # regions: units × leaves (bool) per attribute
    def unit_regions(self) -> tuple[dict, np.ndarray, str]:
        """Per attribute a units × leaves mask, each unit's record count, and the unit kind."""
        rel = self.release
        if rel.group_values is not None and rel.groups is not None:
            gv = rel.group_values
            regions = {}
            for c in self.qis:
                self.check()
                regions[c] = self._group_regions(c, gv[c]) if c in gv.columns \
                    else np.ones((len(gv), len(self.leaves[c])), bool)
            return regions, np.bincount(rel.groups, minlength=len(gv)), "groups"
        released = set(rel.frame.columns)
        regions = {}
        for c in self.qis:
            L = len(self.leaves[c])
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
        return np.vstack(rows)

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
            cache[col] = _leaf_numbers(self.leaves[col])
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
            mask[pd.Index(leaves).get_indexer(list(value.leaves))] = True
        else:
            label = value_label(value)
            try:
                under = self.hier[col].leaves_under(label)
            except BadInput:
                raise BadInput(f"the released value {label!r} of {col!r} is not in its hierarchy") from None
            mask[pd.Index(leaves).get_indexer(list(under))] = True
        if not mask.any():
            raise BadInput(f"the released value {value!r} of {col!r} covers no value of the column")
        return mask

    def estimates(self) -> tuple[dict, np.ndarray]:
        """What a reader estimates from under the uniform assumption: each unit's region per
        attribute, and what each unit adds to a population's sensitive counts."""
        regions, _, kind = self.unit_regions()
        return regions, self.unit_sensitive(kind)

    def unit_sensitive(self, kind: str) -> np.ndarray:
        """units × S: what each unit adds to a population's sensitive counts."""
        S, codes = self.S, self.sa_codes
        if kind == "groups":
            G = int(self.groups.max()) + 1
            return np.bincount(self.groups * S + codes, minlength=G * S).reshape(G, S).astype(float)
        rel = self.release
        if self.groups is not None and self.sensitive not in rel.frame.columns:
            # bucketised: a record's sensitive value is its bucket's distribution
            G = int(self.groups.max()) + 1
            counts = np.bincount(self.groups * S + codes, minlength=G * S).reshape(G, S).astype(float)
            dist = counts / counts.sum(axis=1, keepdims=True)
            return dist[self.groups]
        if self.sensitive in rel.frame.columns:
            return np.eye(S)[codes]
        return np.broadcast_to(self.q, (self.n, S))  # the release says nothing of the sensitive value


def release_qis(table: Table, release) -> list[str]:
    """The table's quasi-identifiers (declared, else every non-role column), in table order."""
    declared = table.schema.by_role(Role.QUASI_IDENTIFIER)
    if declared:
        return declared
    qis = set(release.quasi_identifiers)
    return [c for c in table.columns if c in qis]


def _groups_of(release, n: int) -> np.ndarray | None:
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


def _leaf_numbers(leaves) -> np.ndarray:
    try:
        return np.array([float(x) for x in leaves])
    except ValueError:
        raise BadInput("an interval was released for a column whose values are not numbers") from None


class _NotApplicable(Exception):
    pass


def _table_and_sensitive(original, release, need_sensitive=True):
    if not isinstance(original, Table) or isinstance(original, BinaryMatrix):
        raise _NotApplicable
    sens = original.schema.by_role(Role.SENSITIVE)
    if need_sensitive and not sens:
        raise _NotApplicable
    if release.n_rows != original.n_rows and release.groups is None:
        raise _NotApplicable
    return original, (sens[0] if sens else None)


def _nan_when_not_applicable(fn):
    def compute(self, original, release, params, ctx):
        try:
            return fn(self, original, release, params, ctx)
        except _NotApplicable:
            return float("nan")
    compute.__doc__ = fn.__doc__
    return compute


# ------------------------------------------------------------------------------------ the metrics
class PrivacyLoss(Metric):
    name = "ploss"
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Privacy loss (Ploss)"
    paper = PAPER
    description = ("How much the release teaches about the sensitive column: the largest Jensen–Shannon "
                   "divergence between the whole table's distribution of the sensitive value and that of any "
                   "record's group (0 = no group differs from the table; at most ln 2 ≈ 0.693).")
    category = "privacy"
    higher_is_better = False

    @_nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, sens = _table_and_sensitive(original, release)
        groups = _groups_of(release, table.n_rows)
        if groups is None:
            return float("nan")
        codes, _ = pd.factorize(table.frame[sens], sort=True)
        S = int(codes.max()) + 1
        G = int(groups.max()) + 1
        counts = np.bincount(groups * S + codes, minlength=G * S).reshape(G, S).astype(float)
        q = counts.sum(axis=0) / counts.sum()
        return float(js_divergence(counts / counts.sum(axis=1, keepdims=True), q).max())


@dataclass(frozen=True)
class UlossParams:
    min_support: float = param(0.05, minimum=0.001, maximum=1.0,
                               help="a population counts when at least this fraction of the records is in it")
    max_populations: int = param(200_000, minimum=1, help="refuse when the table has more large populations")


class UtilityLoss(Metric):
    name = "uloss"
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Utility loss (Uloss)"
    paper = PAPER
    description = ("How wrong a researcher's estimates from the release are: over every large population "
                   "(records under one hierarchy node of some quasi-identifiers, at least minSup of the table), the "
                   "mean Jensen–Shannon divergence between the true distribution of the sensitive value and the one "
                   "estimated from the release (0 = the original table).")
    category = "utility"
    higher_is_better = False
    Params = UlossParams

    @_nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, sens = _table_and_sensitive(original, release)
        view = _Anonymised(table, release, sens, ctx.check)
        ctx.check()
        populations, true_counts = _populations_of(view, params, ctx)
        if not populations:
            return float("nan")
        regions, unit_sa = view.estimates()
        ctx.check()
        node_masks = {c: _node_masks(view, c) for c in view.qis}
        per_record = unit_sa.shape[0] == view.n and all(r is None or r.ndim == 1 for r in regions.values())
        if per_record:  # exact or withheld values: a record is in a population or not (withheld: a fraction)
            exact = [c for c in view.qis if regions[c] is not None]
            under = {c: node_masks[c][1][:, view.record_leaf[c]] for c in exact}
            fraction = {c: node_masks[c][1].sum(axis=1) / len(view.leaves[c]) for c in view.qis}
        else:  # groups with regions: each group's share of a population under the uniform assumption
            overlap = {c: _overlap(regions[c], node_masks[c], len(view.leaves[c])) for c in view.qis}
        chunk = _chunk(view.n)
        total = 0.0
        for start in range(0, len(populations), chunk):
            ctx.progress(start / len(populations), "utility loss")
            batch = populations[start:start + chunk]
            true = true_counts[start:start + chunk]
            if per_record:
                seen = np.ones((len(batch), view.n), dtype=bool)  # in the population as far as the release shows
                for i, population in enumerate(batch):
                    ctx.check()
                    for col, node in population:
                        if col in under:
                            seen[i] &= under[col][node]
                est = seen.astype(float) @ unit_sa
                for i, population in enumerate(batch):
                    for col, node in population:
                        if col not in under:  # withheld: the node's share of the column's values
                            est[i] *= fraction[col][node]
            else:
                weight = np.ones((len(batch), unit_sa.shape[0]))
                for i, population in enumerate(batch):
                    ctx.check()
                    for col, node in population:
                        weight[i] *= overlap[col][..., node]
                est = weight @ unit_sa
            mass = est.sum(axis=1, keepdims=True)
            est = np.where(mass > 0, est / np.where(mass > 0, mass, 1.0), view.q)
            total += float(js_divergence(true / true.sum(axis=1, keepdims=True), est).sum())
        return total / len(populations)


def _chunk(n: int) -> int:
    """Populations per batch: a batch × records matrix of about 8 million entries."""
    return max(1, min(256, 8_000_000 // max(n, 1)))


def _true_counts(view: _Anonymised, populations: list) -> np.ndarray:
    """populations × S: how many records of each population hold each sensitive value."""
    under = {c: _node_masks(view, c)[1][:, view.record_leaf[c]] for c in view.qis}
    truth = np.zeros((view.n, view.S))
    truth[np.arange(view.n), view.sa_codes] = 1.0
    out = np.zeros((len(populations), view.S))
    step = _chunk(view.n)
    for start in range(0, len(populations), step):
        batch = populations[start:start + step]
        inside = np.ones((len(batch), view.n), dtype=bool)
        for i, population in enumerate(batch):
            for col, node in population:
                inside[i] &= under[col][node]
        out[start:start + step] = inside.astype(float) @ truth
    return out


_POPULATIONS: dict = {}  # id(table) → (weak reference to it, {(qis, min_support, limit): populations})


def _populations_of(view: _Anonymised, params, ctx) -> tuple[list, np.ndarray]:
    """:func:`large_populations` of the original table and their true sensitive counts, found once
    per table object: a study computes Uloss of many releases of one table, and both depend on the
    table alone (tables are immutable; the weak reference tells a new table at a reused address
    from the old one)."""
    key = (tuple(view.qis), view.sensitive, params.min_support, params.max_populations)
    entry = _POPULATIONS.get(id(view.table))
    if entry is None or entry[0]() is not view.table:
        try:
            entry = (weakref.ref(view.table), {})
        except TypeError:  # pragma: no cover - tables take weak references
            entry = (lambda: None, {})
        if len(_POPULATIONS) > 8:
            _POPULATIONS.clear()
        _POPULATIONS[id(view.table)] = entry
    if key not in entry[1]:
        populations = large_populations(view, params.min_support, params.max_populations, ctx)
        entry[1][key] = populations, _true_counts(view, populations)
    return entry[1][key]


def _node_masks(view: _Anonymised, col: str):
    """(node labels, nodes × leaves mask) of every non-root node of a column's hierarchy."""
    h = view.hier[col]
    leaves = pd.Index(view.leaves[col])
    labels, rows = [], []
    for level in range(h.height):  # the root is excluded: "col ∈ *" restricts nothing
        for node in h.nodes(level):
            view.check()
            mask = np.zeros(len(leaves), dtype=bool)
            mask[leaves.get_indexer(list(h.leaves_under(node)))] = True
            labels.append((level, node.label))
            rows.append(mask)
    return labels, np.vstack(rows) if rows else np.zeros((0, len(leaves)), bool)


def _overlap(region, node_masks, n_leaves) -> np.ndarray:
    """units × nodes: the fraction of each unit's region lying under each node (uniform assumption)."""
    _, masks = node_masks
    if region is None:  # withheld: the whole domain, the same fraction for every unit
        return masks.sum(axis=1) / n_leaves
    if region.ndim == 1:  # exact leaf per record
        return masks[:, region].T.astype(float)
    sizes = region.sum(axis=1, keepdims=True)
    return (region.astype(float) @ masks.T.astype(float)) / sizes


def large_populations(view: _Anonymised, min_support: float, limit: int, ctx) -> list:
    """Every conjunction of (column, node) predicates, one node per column at most, holding at least
    ``min_support`` of the records: frequent itemsets of the records' (column, ancestor) items."""
    items, names = [], []
    offsets = {}
    for col in view.qis:
        ctx.check()
        labels, masks = _node_masks(view, col)
        offsets[col] = len(names)
        names += [(col, j) for j in range(len(labels))]
        items.append(masks[:, view.record_leaf[col]].T)  # records × nodes of this column
    dense = np.hstack(items)
    matrix = BinaryMatrix.from_dense(dense.astype(np.uint8))
    minsup = max(1, int(np.ceil(min_support * view.n)))
    found = mine(matrix, minsup, FREQUENT_ITEMSETS, check=ctx.check)
    out = []
    for i, (itemset, _support) in enumerate(found):
        if i % 1024 == 0:
            ctx.check()
        cols = [names[j][0] for j in itemset]
        if len(set(cols)) != len(cols):
            continue  # a node and its ancestor: not one node per column
        out.append(tuple(names[j] for j in itemset))
        if len(out) > limit:
            raise BadInput(f"the table has more than {limit} large populations at minSup {min_support}; "
                           f"raise minSup or max_populations")
    return out


@dataclass(frozen=True)
class QueryParams:
    qd: int = param(4, minimum=1, help="how many quasi-identifiers each query restricts")
    sel: float = param(0.05, minimum=0.001, maximum=1.0,
                       help="the fraction of each restricted quasi-identifier's values a query selects")
    queries: int = param(1000, minimum=1, maximum=1_000_000, help="how many random queries")
    seed: int = param(0, minimum=0, help="seed of the random queries (the same seed asks the same queries)")
    sel_of: str = param("attribute", choices=("attribute", "query"),
                        help="attribute: each restricted quasi-identifier keeps a fraction sel of its values and the "
                             "query asks for one sensitive value (docs/reference.md); "
                             "query: the query as a whole selects about sel of the records, as in Anatomy (Xiao and "
                             "Tao 2006): each of the qd quasi-identifiers and the sensitive column keep sel^(1/(qd+1)) "
                             "of their values")


class QueryError(Metric):
    name = "query-error"
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Aggregate query error (%)"
    paper = PAPER
    description = ("How far COUNT queries answered from the release are from the truth: random queries "
                   "restricting qd quasi-identifiers to a fraction sel of their values and asking for one sensitive "
                   "value; the mean relative error in percent, estimated under the uniform assumption.")
    category = "utility"
    higher_is_better = False
    Params = QueryParams

    @_nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, sens = _table_and_sensitive(original, release)
        view = _Anonymised(table, release, sens, ctx.check)
        ctx.check()
        regions, unit_sa = view.estimates()
        unit_sa = np.asfortranarray(unit_sa)  # one sensitive value's column is read per query: contiguous
        errors = []
        for i, (selections, s) in enumerate(random_queries(view, params)):
            ctx.check()  # a query is a pass over the records
            if i % 100 == 0:
                ctx.progress(i / params.queries, "query error")
            act, est = answer_query(view, regions, unit_sa, selections, s)
            if act > 0:
                errors.append(abs(est - act) / act)
        return float(np.mean(errors) * 100) if errors else float("nan")


def random_queries(view: _Anonymised, params):
    """``params.queries`` seeded queries: ({column: leaf mask}, sensitive code, or with
    ``sel_of="query"`` an array of sensitive codes: a contiguous run of the sorted values)."""
    rng = np.random.default_rng(params.seed)
    qd = min(params.qd, len(view.qis))
    overall = params.sel_of == "query"
    fraction = params.sel ** (1 / (qd + 1)) if overall else params.sel
    for _ in range(params.queries):
        cols = sorted(rng.choice(len(view.qis), size=qd, replace=False))
        if overall:
            size = max(1, int(round(fraction * view.S)))
            start = int(rng.integers(0, view.S - size + 1))
            s = np.arange(start, start + size)
        else:
            s = int(rng.integers(view.S))
        yield {view.qis[j]: _random_selection(view, view.qis[j], fraction, rng) for j in cols}, s


def answer_query(view: _Anonymised, regions, unit_sa, selections: dict, s: int) -> tuple[int, float]:
    """The true count of a query and its estimate from the release (uniform assumption); ``s`` is one
    sensitive code or an array of them (the query asks for any of them)."""
    if np.ndim(s):
        wanted = np.zeros(view.S, dtype=bool)
        wanted[s] = True
        inside = wanted[view.sa_codes]
        per_unit = unit_sa[:, wanted].sum(axis=1)
    else:
        inside = view.sa_codes == s
        per_unit = unit_sa[:, s]
    weight = 1.0
    for col, chosen in selections.items():
        inside &= chosen[view.record_leaf[col]]
        weight = weight * _selection_overlap(regions[col], chosen)
    # a plain multiply-and-add: BLAS's threaded dot waits on its threads on a busy machine (ms per call)
    est = float((weight * per_unit).sum()) if np.ndim(weight) else float(weight * per_unit.sum())
    return int(inside.sum()), est


def _random_selection(view: _Anonymised, col: str, sel: float, rng) -> np.ndarray:
    """A random fraction ``sel`` of a column's leaves: a contiguous run for numbers (and for any
    column in its hierarchy's order), at least one value."""
    L = len(view.leaves[col])
    size = max(1, int(round(sel * L)))
    start = int(rng.integers(0, L - size + 1))
    mask = np.zeros(L, dtype=bool)
    mask[view.leaf_order(col)[start:start + size]] = True
    return mask


def _selection_overlap(region, chosen: np.ndarray) -> np.ndarray:
    if region is None:
        return float(chosen.mean())
    if region.ndim == 1:
        return chosen[region].astype(float)
    return (region & chosen).sum(axis=1) / region.sum(axis=1)


class Ncp(Metric):
    name = "ncp"
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Normalised certainty penalty (NCP)"
    paper = "002_aa8a8f08b56f3f6d"
    description = ("How much precision the generalisation costs, averaged over records and quasi-identifiers: "
                   "a released range counts its width over the column's range, a hierarchy node its leaves over "
                   "the column's values, '*' counts 1 and an exact value 0 (the relational GCP).")
    category = "utility"
    higher_is_better = False

    @_nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, _ = _table_and_sensitive(original, release, need_sensitive=False)
        view = _Anonymised(table, release, None)
        regions, counts, kind = view.unit_regions()
        total = 0.0
        for col in view.qis:
            region, L = regions[col], len(view.leaves[col])
            total += _column_ncp(view, col, region, counts, L)
        return total / (len(view.qis) * view.n)


def _column_ncp(view, col, region, counts, L) -> float:
    if region is None:
        return float(view.n)  # withheld: every record's value is "*"
    if region.ndim == 1:
        return 0.0
    width = region.sum(axis=1)
    try:
        nums = _leaf_numbers(view.leaves[col])
        span = nums.max() - nums.min()
        lo = np.where(region, nums, np.inf).min(axis=1)
        hi = np.where(region, nums, -np.inf).max(axis=1)
        per_unit = (hi - lo) / span if span > 0 else np.zeros(len(region))
    except BadInput:
        per_unit = np.where(width > 1, width / L, 0.0)
    return float((per_unit * counts).sum())


class Discernibility(Metric):
    name = "discernibility"
    title = "Discernibility penalty"
    paper = PAPER
    description = ("The sum over groups of the squared group size: how many records each record is "
                   "indistinguishable from, added up (n for the original table of distinct records, n² when "
                   "everything is one group).")
    category = "utility"
    higher_is_better = False

    def compute(self, original, release, params, ctx):
        groups = _release_groups(release)
        return float(np.square(np.bincount(groups).astype(float)).sum()) if len(groups) else float("nan")


class AverageClassSize(Metric):
    name = "average-class-size"
    title = "Average group size"
    paper = PAPER
    description = "Records per group on the quasi-identifiers: n divided by the number of groups (larger = coarser)."
    category = "utility"
    higher_is_better = False

    def compute(self, original, release, params, ctx):
        groups = _release_groups(release)
        return float(len(groups) / (groups.max() + 1)) if len(groups) else float("nan")


def _release_groups(release) -> np.ndarray:
    if release.groups is not None:
        return np.asarray(release.groups, dtype=np.int64)
    qi = [c for c in release.quasi_identifiers if c in release.frame.columns]
    return group_ids(release.frame[qi])


@hookimpl
def veil_register_metrics():
    return [PrivacyLoss, UtilityLoss, QueryError, Ncp, Discernibility, AverageClassSize]
