"""How much an anonymised table discloses and how much it still tells (paper 001,
docs/reference.md#anonymising-tables).

* ``ploss`` — privacy loss: the largest JS divergence between the whole table's sensitive
  distribution Q and that of any record's group. 0 when every group looks like the table.
* ``uloss`` — utility loss: the mean JS divergence, over the table's large populations (records
  under one hierarchy node per quasi-identifier, support ≥ minSup), between the true sensitive
  distribution and the one a researcher estimates from the release under the uniform assumption.
  The populations are walked one at a time (memory O(quasi-identifiers × records)); past
  ``max_populations`` of them the mean is taken over a seeded uniform sample (a Metropolis chain),
  and the manifest and report say so.
* ``query-error`` — the mean relative error of 1,000 seeded random COUNT queries.
* ``ncp`` — the normalised certainty penalty of the generalisation, averaged over records and
  quasi-identifiers (the relational GCP of docs/reference.md#set-valued-data): 0 for exact values, 1 for ``*``.
* ``discernibility`` and ``average-class-size`` — the classic group-size penalties.

Every metric works on a relational table's release: a generalised one (typed group values), a
bucketised one (exact quasi-identifiers, sensitive values per bucket), or a feature subset (a
withheld quasi-identifier counts as suppressed). Where a metric does not apply it returns NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # scipy.sparse is loaded where a measure needs it, not to register the plugins
    import scipy.sparse as sp

from veil.engine import (
    CHEAP,
    SUPPRESSED,
    TABLE,
    BadInput,
    MemoryCost,
    Metric,
    group_ids,
    hookimpl,
    param,
)

from ._view import Anonymised, SensitiveSums, groups_of, leaf_numbers, nan_when_not_applicable, table_and_sensitive

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


# ------------------------------------------------------------------------------------ the metrics
class PrivacyLoss(Metric):
    cost = CHEAP
    name = "ploss"
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Privacy loss (Ploss)"
    paper = PAPER
    description = (
        "How much the release teaches about the sensitive column: the largest Jensen–Shannon "
        "divergence between the whole table's distribution of the sensitive value and that of any "
        "record's group (0 = no group differs from the table; at most ln 2 ≈ 0.693)."
    )
    category = "privacy"
    higher_is_better = False

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, sens = table_and_sensitive(original, release)
        groups = groups_of(release, table.n_rows)
        if groups is None:
            return float("nan")
        codes, _ = pd.factorize(table.frame[sens], sort=True)
        known = codes >= 0  # a blank is never a sensitive value: groups are judged on their known values
        if not known.any():
            return float("nan")
        S = int(codes.max()) + 1
        G = int(groups.max()) + 1
        counts = np.bincount(groups[known] * S + codes[known], minlength=G * S).reshape(G, S).astype(float)
        counts = counts[counts.sum(axis=1) > 0]  # a group without a known value teaches nothing about it
        q = counts.sum(axis=0) / counts.sum()
        return float(js_divergence(counts / counts.sum(axis=1, keepdims=True), q).max())


@dataclass(frozen=True)
class UlossParams:
    min_support: float = param(
        0.05, minimum=0.001, maximum=1.0, help="a population counts when at least this fraction of the records is in it"
    )
    max_populations: int = param(
        20_000,
        minimum=1,
        help="evaluate every large population up to this many; past it, Uloss is the mean "
        "over a seeded random sample of them (the report says so)",
    )
    sample: int = param(2_000, minimum=100, help="large populations drawn when there are too many to evaluate all")
    seed: int = param(0, minimum=0, help="seed of that sample")


class UtilityLoss(Metric):
    cost = CHEAP
    name = "uloss"
    memory_cost = MemoryCost(per_cell=16.0, per_group_distinct=2)  # each published group's region over a column
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Utility loss (Uloss)"
    paper = PAPER
    description = (
        "How wrong a researcher's estimates from the release are: over every large population "
        "(records under one hierarchy node of some quasi-identifiers, at least minSup of the table), the "
        "mean Jensen–Shannon divergence between the true distribution of the sensitive value and the one "
        "estimated from the release (0 = the original table)."
    )
    category = "utility"
    higher_is_better = False
    Params = UlossParams

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, sens = table_and_sensitive(original, release)
        view = Anonymised.shared(table, release, sens, ctx)
        ctx.check()
        regions, sums = view.estimates()
        walker = _Populations(view, params.min_support, ctx)
        estimate = _Estimate(view, regions, sums, walker.masks)
        counted = walker.count(params.max_populations)
        exact = counted <= params.max_populations
        total = count = 0
        visited = (
            walker.walk(estimate)
            if exact
            else ((path, rows, estimate.along(path)) for path, rows in walker.sample(params.sample, params.seed))
        )
        for path, rows, state in visited:
            count += 1
            if count % 64 == 0:
                ctx.check()
            true = np.bincount(view.sa_codes[rows], minlength=view.S).astype(float)
            est = estimate.counts(state)
            mass = est.sum()
            total += float(js_divergence(true / true.sum(), est / mass if mass > 0 else view.q))
        if not exact:
            ctx.sampled(
                {"rows": count, "of": counted - 1, "more_than": True, "seed": params.seed, "unit": "large populations"}
            )
        return total / count if count else float("nan")


class _Populations:
    """The large populations of the original table (paper 001): conjunctions of (column, node)
    predicates, one non-root hierarchy node per column at most, holding at least ``min_support`` of
    the records.

    :meth:`walk` enumerates them depth first over the columns, a branch ending where its records fall
    below the support (support only falls as predicates are added): memory O(quasi-identifiers ×
    records) however many there are, nothing kept but the path being walked. :meth:`sample` draws a
    seeded uniform sample of them when there are too many to walk: uniform proposals over every
    conjunction, kept when large (rejection sampling), tested a column at a time so that most
    proposals are dropped after a column or two.
    """

    def __init__(self, view: Anonymised, min_support: float, ctx):
        self.view, self.ctx = view, ctx
        self.min_count = max(1, int(np.ceil(min_support * view.n)))
        self.masks = {c: _node_masks(view, c) for c in view.qis}

    def walk(self, estimate: _Estimate | None = None):
        """Yield (path, rows, state): the predicates ((column, node), …), the records inside, and
        ``estimate``'s state for the path, carried down from its parent's (None without one)."""
        start = estimate.start() if estimate is not None else None
        yield from self._walk(0, np.arange(self.view.n), (), estimate, start)

    def _walk(self, first: int, rows: np.ndarray, path: tuple, estimate, state):
        view = self.view
        for i in range(first, len(view.qis)):
            col = view.qis[i]
            masks = self.masks[col]
            leaf = view.record_leaf[col][rows]
            support = masks @ np.bincount(leaf, minlength=masks.shape[1])
            for node in np.flatnonzero(support >= self.min_count):
                inside = rows[_leaf_mask(masks, node)[leaf]]
                here = (*path, (col, int(node)))
                below = None if estimate is None else estimate.restrict(state, col, int(node))
                yield here, inside, below
                yield from self._walk(i + 1, inside, here, estimate, below)
            if first == 0:
                self.ctx.progress((i + 1) / len(view.qis), "large populations")

    def count(self, limit: int) -> int:
        """How many there are, counting no further than ``limit + 1``."""
        n = 0
        for n, _ in enumerate(self.walk(), start=1):
            if n % 256 == 0:
                self.ctx.check()
            if n > limit:
                break
        return n

    def sample(self, size: int, seed: int, thin: int = 8, burn_in: int = 2_000):
        """``size`` large populations drawn uniformly at random (seeded), for when there are too many
        to walk: a Metropolis chain over the conjunctions whose moves set one column's predicate to
        another of its nodes or to none, chosen uniformly; a move is taken when the conjunction it
        leads to is large. The proposal is symmetric, so the chain's stationary distribution is
        uniform over the large populations and the empty conjunction (the path between any two runs
        through fewer predicates, which stay large); every ``thin``-th state after ``burn_in`` steps
        that is not empty is a draw. Yields (path, rows)."""
        view, rng = self.view, np.random.default_rng(seed)
        q, n = len(view.qis), view.n
        state = [-1] * q  # per column: its node, or -1 for no predicate
        holds = np.full(n, q, dtype=np.int64)  # per record: how many of the predicates it meets
        member = [np.ones(n, bool) for _ in range(q)]
        drawn, step = 0, 0
        while drawn < size:
            step += 1
            if step % 256 == 0:
                self.ctx.check()
                self.ctx.progress(drawn / size, "large populations (random sample)")
            j = int(rng.integers(q))
            col = view.qis[j]
            options = self.masks[col].shape[0] + 1
            if options == 1:
                continue  # a column whose hierarchy is its root alone
            new = int(rng.integers(options - 1))
            new = new if new < state[j] + 1 else new + 1  # another option than the current, uniformly
            new -= 1
            mask = np.ones(n, bool) if new < 0 else _leaf_mask(self.masks[col], new)[view.record_leaf[col]]
            moved = holds + mask - member[j]
            if np.count_nonzero(moved == q) >= self.min_count:
                state[j], holds, member[j] = new, moved, mask
            if step > burn_in and step % thin == 0 and any(s >= 0 for s in state):
                drawn += 1
                yield (tuple((view.qis[i], state[i]) for i in range(q) if state[i] >= 0), np.flatnonzero(holds == q))


class _Estimate:
    """A population as a reader of the release sees it, one predicate at a time.

    Record-level releases: the records whose released (exact) values satisfy the predicates so far,
    and a factor for predicates on withheld columns (the node's share of the column's values).
    Generalised releases: each group's share of the population (its region's overlap with every
    node so far)."""

    def __init__(self, view, regions, sums, masks):
        self.view, self.regions, self.sums, self.masks = view, regions, sums, masks
        self.per_record = sums.n_units == view.n and all(r is None or r.ndim == 1 for r in regions.values())
        self._overlap: dict = {}

    def start(self):
        return (np.arange(self.view.n), 1.0) if self.per_record else np.ones(self.sums.n_units)

    def restrict(self, state, col, node):
        region = self.regions[col]
        if self.per_record:
            rows, factor = state
            if region is None:  # withheld: the node's share of the column's values
                return rows, factor * self.masks[col][node].nnz / self.masks[col].shape[1]
            return rows[_leaf_mask(self.masks[col], node)[region[rows]]], factor
        return state * self.overlap(col, node)

    def along(self, path):
        """The state after every predicate of ``path``."""
        state = self.start()
        for col, node in path:
            state = self.restrict(state, col, node)
        return state

    def counts(self, state) -> np.ndarray:
        if self.per_record:
            rows, factor = state
            return self.sums.of_records(rows) * factor
        return self.sums.of(state)

    def overlap(self, col, node) -> np.ndarray | float:
        """The fraction of each unit's region under ``node`` of ``col``: from a units × nodes table
        while that is small, else one node at a time from the regions' columns (sparse)."""
        region, masks = self.regions[col], self.masks[col]
        if region is None:  # withheld: the node's share of the column's values, for every unit
            return masks[node].nnz / masks.shape[1]
        if col not in self._overlap:
            import scipy.sparse as sp

            small = masks.shape[0] * region.shape[0] <= OVERLAP_CELLS
            self._overlap[col] = (
                _overlap(region, masks, masks.shape[1]) if small else (sp.csc_matrix(region), region.sum(axis=1))
            )
        table = self._overlap[col]
        if isinstance(table, np.ndarray):
            return table[:, node]
        columns, sizes = table
        leaves = masks.indices[masks.indptr[node] : masks.indptr[node + 1]]
        return np.asarray(columns[:, leaves].sum(axis=1)).ravel() / sizes


OVERLAP_CELLS = 1 << 24  # a units × nodes overlap table larger than this is computed a node at a time


def _leaf_mask(masks: sp.csr_matrix, node: int) -> np.ndarray:
    out = np.zeros(masks.shape[1], dtype=bool)
    out[masks.indices[masks.indptr[node] : masks.indptr[node + 1]]] = True
    return out


def _node_masks(view: Anonymised, col: str) -> sp.csr_matrix:
    """nodes × leaves (sparse): the leaves under every non-root node of a column's hierarchy."""
    import scipy.sparse as sp

    h = view.hier[col]
    position = {label: j for j, label in enumerate(view.leaves[col])}
    indptr, indices = [0], []
    for level in range(h.height):  # the root is excluded: "col ∈ *" restricts nothing
        for node in h.nodes(level):
            view.check()
            indices.extend(position[leaf] for leaf in h.leaves_under(node))
            indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.int64)
    return sp.csr_matrix(
        (data, np.asarray(indices, dtype=np.int64), np.asarray(indptr)), shape=(len(indptr) - 1, len(position))
    )


def _overlap(region, masks: sp.csr_matrix, n_leaves) -> np.ndarray:
    """units × nodes: the fraction of each unit's region lying under each node (uniform assumption)."""
    if region is None:  # withheld: the whole domain, the same fraction for every unit
        return np.asarray(masks.sum(axis=1)).ravel() / n_leaves
    sizes = region.sum(axis=1, keepdims=True)
    return np.asarray((masks @ region.T.astype(float)).T) / sizes


def large_populations(view: Anonymised, min_support: float, limit: int, ctx) -> list:
    """Every large population as a tuple of (column, node index) predicates (for inspection and tests;
    the metric itself walks them without keeping them)."""
    out = []
    for path, _, _ in _Populations(view, min_support, ctx).walk():
        out.append(path)
        if len(out) > limit:
            raise BadInput(f"the table has more than {limit} large populations at minSup {min_support}")
    return out


@dataclass(frozen=True)
class QueryParams:
    qd: int = param(4, minimum=1, help="how many quasi-identifiers each query restricts")
    sel: float = param(
        0.05,
        minimum=0.001,
        maximum=1.0,
        help="the fraction of each restricted quasi-identifier's values a query selects",
    )
    queries: int = param(1000, minimum=1, maximum=1_000_000, help="how many random queries")
    seed: int = param(0, minimum=0, help="seed of the random queries (the same seed asks the same queries)")
    sel_of: str = param(
        "attribute",
        choices=("attribute", "query"),
        help="attribute: each restricted quasi-identifier keeps a fraction sel of its values and the "
        "query asks for one sensitive value (docs/reference.md); "
        "query: the query as a whole selects about sel of the records, as in Anatomy (Xiao and "
        "Tao 2006): each of the qd quasi-identifiers and the sensitive column keep sel^(1/(qd+1)) "
        "of their values",
    )


class QueryError(Metric):
    cost = CHEAP
    name = "query-error"
    memory_cost = MemoryCost(per_cell=16.0, per_group_distinct=2)  # each published group's region over a column
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Aggregate query error (%)"
    paper = PAPER
    description = (
        "How far COUNT queries answered from the release are from the truth: random queries "
        "restricting qd quasi-identifiers to a fraction sel of their values and asking for one sensitive "
        "value; the mean relative error in percent, estimated under the uniform assumption."
    )
    category = "utility"
    higher_is_better = False
    Params = QueryParams

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, sens = table_and_sensitive(original, release)
        view = Anonymised.shared(table, release, sens, ctx)
        ctx.check()
        regions, sums = view.estimates()
        errors = []
        for i, (selections, s) in enumerate(random_queries(view, params)):
            ctx.check()  # a query is a pass over the records
            if i % 100 == 0:
                ctx.progress(i / params.queries, "query error")
            act, est = answer_query(view, regions, sums, selections, s)
            if act > 0:
                errors.append(abs(est - act) / act)
        return float(np.mean(errors) * 100) if errors else float("nan")


def random_queries(view: Anonymised, params):
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


def answer_query(view: Anonymised, regions, sums: SensitiveSums, selections: dict, s) -> tuple[int, float]:
    """The true count of a query and its estimate from the release (uniform assumption); ``s`` is one
    sensitive code or an array of them (the query asks for any of them)."""
    wanted = np.zeros(view.S, dtype=bool)
    wanted[s] = True
    inside = wanted[view.sa_codes]
    weight = np.ones(sums.n_units)
    for col, chosen in selections.items():
        inside &= chosen[view.record_leaf[col]]
        weight = weight * _selection_overlap(regions[col], chosen, view, col)
    return int(inside.sum()), float(sums.of(weight)[wanted].sum())


def _random_selection(view: Anonymised, col: str, sel: float, rng) -> np.ndarray:
    """A random fraction ``sel`` of a column's leaves: a contiguous run for numbers (and for any
    column in its hierarchy's order), at least one value."""
    L = len(view.leaves[col])
    size = max(1, int(round(sel * L)))
    start = int(rng.integers(0, L - size + 1))
    mask = np.zeros(L, dtype=bool)
    mask[view.leaf_order(col)[start : start + size]] = True
    return mask


def _selection_overlap(region, chosen: np.ndarray, view: Anonymised | None = None, col: str | None = None):
    """Each unit's share of its region that the selection covers. A selection that is one run of the
    column's leaf order (every query's is) is answered from the regions' running sums along that order,
    built once per column: two lookups per unit, not a pass over units × leaves per query."""
    if region is None:
        return float(chosen.mean())
    if region.ndim == 1:
        return chosen[region].astype(float)
    if view is not None:
        order = view.leaf_order(col)
        picked = np.flatnonzero(chosen[order])
        if len(picked) and picked[-1] - picked[0] + 1 == len(picked):
            running, sizes = _running_sums(view, col, region, order)
            covered = running[:, picked[-1] + 1] - running[:, picked[0]]
            return covered / sizes
    return (region & chosen).sum(axis=1) / region.sum(axis=1)


def _running_sums(view: Anonymised, col: str, region: np.ndarray, order: np.ndarray):
    """(units × leaves+1 running counts of each unit's region along ``order``, each region's size)."""
    cache = view.__dict__.setdefault("_running_sums", {})
    if col not in cache:
        dtype = np.uint16 if region.shape[1] < 65_536 else np.uint32  # counts of at most the leaves
        running = np.zeros((region.shape[0], region.shape[1] + 1), dtype=dtype)
        for start in range(0, region.shape[0], 4096):  # in blocks: no int64 temporary of units × leaves
            view.check()
            block = region[start : start + 4096][:, order]
            np.cumsum(block, axis=1, dtype=dtype, out=running[start : start + 4096, 1:])
        cache[col] = (running, running[:, -1].astype(float))
    return cache[col]


class Ncp(Metric):
    cost = CHEAP
    name = "ncp"
    memory_cost = MemoryCost(per_cell=16.0, per_group_distinct=2)  # each published group's region over a column
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    title = "Normalised certainty penalty (NCP)"
    paper = "002_aa8a8f08b56f3f6d"
    description = (
        "How much precision the generalisation costs, averaged over records and quasi-identifiers: "
        "a released range counts its width over the column's range, a hierarchy node its leaves over "
        "the column's values, '*' counts 1 and an exact value 0 (the relational GCP)."
    )
    category = "utility"
    higher_is_better = False

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        table, _ = table_and_sensitive(original, release, need_sensitive=False)
        view = Anonymised.shared(table, release, None, ctx)
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
        nums = leaf_numbers(view.leaves[col])
        span = nums.max() - nums.min()
        lo = np.where(region, nums, np.inf).min(axis=1)
        hi = np.where(region, nums, -np.inf).max(axis=1)
        per_unit = (hi - lo) / span if span > 0 else np.zeros(len(region))
    except BadInput:
        per_unit = np.where(width > 1, width / L, 0.0)
    return float((per_unit * counts).sum())


@dataclass(frozen=True)
class DiscernibilityParams:
    monotonic: bool = param(
        True,
        help="true: every group charges its size to each of its records, the records "
        "written * in every quasi-identifier one group like any other (DM*, Σ|E|²); "
        "false: each of those records is charged n instead (Bayardo and Agrawal's DM)",
    )


class Discernibility(Metric):
    cost = CHEAP
    name = "discernibility"
    title = "Discernibility penalty"
    paper = PAPER
    description = (
        "The sum over groups of the squared group size: how many records each record is "
        "indistinguishable from, added up (n for the original table of distinct records, n² when "
        "everything is one group). Not monotonic: a record suppressed ('*' in every quasi-identifier) "
        "is charged n (Bayardo and Agrawal 2005)."
    )
    category = "utility"
    higher_is_better = False
    Params = DiscernibilityParams
    memory_cost = MemoryCost(per_record=64.0, per_cell=16.0)  # the quasi-identifiers' codes while grouped

    def compute(self, original, release, params, ctx):
        codes = release.blank_codes()
        blank = None if codes is None else codes == -1
        if blank is not None and (blank.any(axis=1) & ~blank.all(axis=1)).any():
            # a record with some cells blanked is indistinguishable from every record it could join;
            # records suppressed whole (every quasi-identifier *) stay one group, as the search counts them
            return float(release.class_sizes().sum())
        groups = _release_groups(release)
        if not len(groups):
            return float("nan")
        sizes = np.bincount(groups).astype(float)
        if params is None or params.monotonic:
            return float(np.square(sizes).sum())
        out = _suppressed_groups(release, len(sizes))
        return float(np.square(sizes[~out]).sum() + len(groups) * sizes[out].sum())


def _suppressed_groups(release, count: int) -> np.ndarray:
    """Which groups are written ``*`` in every quasi-identifier (suppressed records)."""
    qis = [c for c in release.quasi_identifiers if c in release.frame.columns]
    if not qis:
        return np.zeros(count, dtype=bool)
    gv = release.group_values
    if gv is not None and release.groups is not None and all(c in gv.columns for c in qis):
        return np.logical_and.reduce([np.array([v is SUPPRESSED for v in gv[c]], dtype=bool) for c in qis])
    groups = _release_groups(release)
    star = np.logical_and.reduce([release.frame[c].astype(str).str.strip().eq("*").to_numpy() for c in qis])
    out = np.zeros(count, dtype=bool)
    out[groups[star]] = True
    return out


class AverageClassSize(Metric):
    cost = CHEAP
    name = "average-class-size"
    title = "Average group size"
    paper = PAPER
    description = "Records per group on the quasi-identifiers: n divided by the number of groups (larger = coarser)."
    category = "utility"
    higher_is_better = False
    memory_cost = MemoryCost(per_record=64.0, per_cell=16.0)  # the quasi-identifiers' codes while grouped

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
