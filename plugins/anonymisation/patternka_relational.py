"""PatternKa on relational tables (docs/reference.md#set-valued-data, "Relational PatternKa"; paper 002 §3.2,
Algorithms 2 and 3).

The table's quasi-identifiers become items through the engine's one conversion
(:func:`veil.engine.table_to_items`): numbers into ``buckets`` equal-width buckets, categories by
their position in the in-order traversal of their hierarchy, one item ``(attribute, index)`` per
attribute and record. Algorithm 1 then runs on these items with the relational pattern selection:

* the candidates are **all** longest frequent patterns (support ≥ k) of the remaining records;
* for each candidate p, ``C_p_raw`` = the remaining records holding p; every record t of it gets the
  diversity score ζ(t) = Π_j freq(t_j in C_p_raw) (its items' counts in C_p_raw); ``C_p`` = the
  records whose ζ is at most the k-th smallest ζ (at least k records, more on ties);
* the group is the ``C_p`` of smallest NCP (ties: the smallest item list, or drawn with the run's
  seed under ``pattern_selection=random``), and is removed.

When no non-empty pattern is frequent, the remaining records form one group. The fewer than k
records left over join, one at a time in input order, the group whose total loss |g|·NCP(g) grows
least (the first such group on ties) — the relational counterpart of the set-valued rule.

NCP of a group (docs/reference.md#set-valued-data): Σ over quasi-identifiers of a number's (max − min) / (column
max − min) and a category's leaves under the lowest common ancestor / all leaves (0 for one value), on the original
values; GCP = Σ_g |g|·NCP(g) / (d·n). The release generalises every quasi-identifier to its group's
range or hierarchy node, exactly as Mondrian's generalised release, so ``veil verify`` checks
k-anonymity from the written file and the ``ncp`` metric applies.

The four speed-ups are switches of :func:`relational_groups`, each with a test that it changes no
output (``closed``, ``length_pruning``, ``cache``, ``bitset_update``; see :mod:`.patternka`).
The cache needs every longest pattern, not only the first: it is used only while its longest
still-frequent length is above its ``cut`` (then every frequent pattern of that length is in it,
because removing records creates no new closed pattern), and a mining whose list ends inside
the longest length is repeated with twice the room.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from veil.engine import (
    pack_mask,
    popcount,
    unpack_mask,
    CLOSED_ITEMSETS,
    FREQUENT_ITEMSETS,
    TABLE,
    Algorithm,
    BadInput,
    BinaryMatrix,
    Feature,
    HierarchyUse,
    Judgement,
    Longest,
    SearchOptions,
    grouping_columns,
    hookimpl,
    longest_itemsets,
    mine,
    param,
    table_to_items,
)

from ._regions import Loss, generalised, group_values, qi_columns, qis_and_sensitive, relational_gcp

PAPER = "002_aa8a8f08b56f3f6d"
SELECTIONS = ("lexicographic", "random")


# ---------------------------------------------------------------------------------- grouping
@dataclass(frozen=True)
class RelationalGrouping:
    groups: np.ndarray  # every record's group, 0 … G−1 in the order groups were made
    patterns: list  # the pattern (item codes) each group was made from; () for "all remaining"
    minings: int

    @property
    def n_groups(self) -> int:
        return len(self.patterns)


def relational_groups(
    table,
    k: int,
    *,
    qis=None,
    buckets: int = 20,
    pattern_selection: str = "lexicographic",
    seed: int = 0,
    cache_size: int = 32,
    closed: bool = True,
    length_pruning: bool = True,
    cache: bool = True,
    bitset_update: bool = True,
    max_seconds: float | None = None,
    check: Callable[[], None] | None = None,
    progress: Callable[[float, str], None] | None = None,
    options: SearchOptions = SearchOptions(),
) -> RelationalGrouping:
    """Group a table's records by relational PatternKa. See the module for the rules and switches.
    ``options``: how the searches may run, above all how many threads (the run passes its context's)."""
    import scipy.sparse as sp

    if pattern_selection not in SELECTIONS:
        raise BadInput(f"unknown pattern selection {pattern_selection!r}; choose lexicographic or random")
    qis = list(qis if qis is not None else grouping_columns(table))
    if not qis:
        raise BadInput("PatternKa needs quasi-identifiers: mark the columns that identify people as quasi-identifiers")
    n = table.n_rows
    if k < 1:
        raise BadInput("k must be at least 1")
    if k > n:
        raise BadInput(f"k = {k} is larger than the number of records ({n})")
    items = table_to_items(table, buckets=buckets, columns=qis)
    cols = qi_columns(table, qis)
    loss = Loss(cols)
    d = len(qis)
    codes = items.indices.reshape(n, d)  # record × attribute: the item of each attribute
    attr_of = np.zeros(items.n_items, dtype=np.int64)
    for j in range(d):
        attr_of[np.unique(codes[:, j])] = j
    csr = sp.csr_matrix((np.ones(n * d, dtype=bool), items.indices, items.indptr), shape=(n, items.n_items))
    rng = np.random.default_rng(seed)
    alive = np.ones(n, dtype=bool)
    groups = np.full(n, -1, dtype=np.int64)
    patterns: list[tuple] = []
    state = {"cached": [], "cut": 0, "minings": 0, "r": cache_size}

    def holding(pattern) -> np.ndarray:
        mask = alive.copy()
        for item in pattern:
            mask &= codes[:, attr_of[item]] == item
        return mask

    def mine_longest():
        rows = np.flatnonzero(alive)
        while True:
            state["minings"] += 1
            found = _mine(csr, rows, k, state["r"], closed, length_pruning, max_seconds, check, options)
            if found.cut and found.patterns and len(found.patterns[0][0]) == found.cut:
                state["r"] *= 2  # the longest length is cut: every longest pattern is needed (and kept room for)
                continue
            break
        state["cached"] = [[p, s, pack_mask(holding(p)) if bitset_update else None] for p, s in found.patterns]
        state["cut"] = found.cut

    def candidates():
        """Every longest frequent pattern, or None when the cache cannot tell (or nothing is frequent)."""
        valid = [c for c in state["cached"] if c[1] >= k]
        if not valid:
            return None
        length = max(len(c[0]) for c in valid)
        if length <= state["cut"]:
            return None
        return sorted((c for c in valid if len(c[0]) == length), key=lambda c: c[0])

    def select(tied):
        best, best_ncp = [], np.inf
        for c in tied:
            if check is not None:
                check()  # many tied patterns on a large table: each is a pass over its records
            raw = np.flatnonzero(unpack_mask(c[2], n) & alive) if bitset_update else np.flatnonzero(holding(c[0]))
            members = _diverse(codes[raw], raw, k)
            ncp = loss.widths(members)
            if ncp < best_ncp:
                best, best_ncp = [(c[0], members)], ncp
            elif ncp == best_ncp:
                best.append((c[0], members))
        if pattern_selection == "lexicographic":
            return best[0]
        return best[int(rng.integers(len(best)))]

    remaining = n
    while remaining >= k:
        if check is not None:
            check()
        tied = candidates() if cache else None
        if tied is None:
            mine_longest()
            tied = candidates()
        if tied is None:
            pattern, members = (), np.flatnonzero(alive)
        else:
            pattern, members = select(tied)
        gid = len(patterns)
        groups[members] = gid
        patterns.append(tuple(pattern))
        gone = np.zeros(n, dtype=bool)
        gone[members] = True
        alive &= ~gone
        remaining -= len(members)
        if cache and pattern:
            packed = pack_mask(gone) if bitset_update else None
            for c in state["cached"]:
                if c[1] < k:
                    continue
                if bitset_update:
                    c[1] -= popcount(c[2] & packed)
                    c[2] &= ~packed
                else:
                    c[1] = int(holding(c[0]).sum())
        else:
            state["cached"] = []
        if progress is not None:
            progress(1.0 - remaining / n, f"{gid + 1} groups, {remaining} records left")
    leftovers = np.flatnonzero(groups < 0)
    if len(leftovers):
        if not patterns:
            raise BadInput("fewer records than k: no group can be formed")
        _join_leftovers(loss, groups, len(patterns), leftovers, check)
    return RelationalGrouping(groups, patterns, state["minings"])


def _diverse(block: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """C_p: the records of C_p_raw (``rows``, their items ``block``) whose diversity score
    ζ(t) = Π_j freq(t_j in C_p_raw) is at most the k-th smallest (docs/reference.md#set-valued-data, paper eq.
    21–23)."""
    if len(rows) <= k:
        return rows
    counts = np.bincount(block.ravel())  # item codes differ between attributes
    zeta = counts[block].astype(float).prod(axis=1)
    threshold = np.partition(zeta, k - 1)[k - 1]
    return rows[zeta <= threshold]


def _join_leftovers(
    loss: Loss, groups: np.ndarray, g: int, leftovers: np.ndarray, check: Callable[[], None] | None = None
) -> None:
    """Each leftover, in input order, joins the group whose |g|·NCP(g) grows least (ties: the first)."""
    ext = loss.extents(groups, g)
    sizes = np.bincount(groups[groups >= 0], minlength=g).astype(float)
    before = sizes * loss.ncp_from_extents(ext)
    for done, i in enumerate(leftovers.tolist()):
        if check is not None and done % 64 == 0:
            check()
        grown = [(np.minimum(lo, col.codes[i]), np.maximum(hi, col.codes[i])) for col, (lo, hi) in zip(loss.cols, ext)]
        after = (sizes + 1) * loss.ncp_from_extents(grown)
        best = int(np.argmin(after - before))
        for (lo, hi), (glo, ghi) in zip(ext, grown):
            lo[best], hi[best] = glo[best], ghi[best]
        sizes[best] += 1
        before[best] = after[best]
        groups[i] = best


def _mine(
    csr, rows, k, r, closed, length_pruning, max_seconds, check, options: SearchOptions = SearchOptions()
) -> Longest:
    """The r longest closed patterns of the live records, with the speed-ups switched as asked."""
    if closed and length_pruning:
        return longest_itemsets(csr, k, r, rows=rows, max_seconds=max_seconds, check=check, options=options)
    sub = csr[rows].tocsc()
    sub.sort_indices()
    matrix = BinaryMatrix(sub.indptr, sub.indices, sub.shape[0], [Feature(str(j)) for j in range(sub.shape[1])])
    found = mine(matrix, k, CLOSED_ITEMSETS if closed else FREQUENT_ITEMSETS)
    if not closed:  # the longest patterns are closed: keep the closed ones of the frequent list
        support = dict(found)
        by_size: dict[int, list] = {}
        for items, _ in found:
            by_size.setdefault(len(items), []).append(set(items))
        found = [
            (p, s)
            for p, s in found
            if all(not set(p) <= t or support[tuple(sorted(t))] < s for t in by_size.get(len(p) + 1, []))
        ]
    found = sorted(found, key=lambda p: (-len(p[0]), p[0]))
    kept = found[:r]
    return Longest(kept, len(kept[-1][0]) if len(found) > r else 0, 0)


# ---------------------------------------------------------------------------------- plugin
@dataclass(frozen=True)
class RelationalParams:
    buckets: int = param(20, minimum=1, help="equal-width buckets each numeric quasi-identifier is cut into (B)")
    pattern_selection: str = param(
        "lexicographic",
        choices=SELECTIONS,
        help="which of several equally good patterns makes the next group: the smallest "
        "item list (reproducible) or one drawn with the run's seed (the paper)",
    )
    cache_size: int = param(32, minimum=1, help="longest closed patterns kept and revalidated between minings")
    max_seconds: float = param(
        3600.0, minimum=1.0, help="stop a pattern search that runs longer than this, with a message"
    )


class PatternKaRelational(Algorithm):
    name = "patternka-relational"
    keeps_record_order = True  # every record, in the input's order
    title = "PatternKa (relational)"
    paper = PAPER
    description = (
        "k-anonymity for relational tables by frequent patterns (paper 002, §3.2): numbers are "
        "bucketed and categories relabelled into items, records are grouped by their longest frequent "
        "pattern with a diversity score choosing each group, and each quasi-identifier is generalised "
        "to its group's range or hierarchy node."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUP_SIZE,)  # groups of at least k records
    releases_sensitive = True
    Params = RelationalParams
    uses_hierarchies = HierarchyUse.ALL  # numbers too, where a hierarchy is attached

    def run(self, data, model, params, ctx):
        qis, sensitive = qis_and_sensitive(data)
        grouping = relational_groups(
            data,
            model.params.k,
            qis=qis,
            buckets=params.buckets,
            pattern_selection=params.pattern_selection,
            seed=ctx.seed or 0,
            cache_size=params.cache_size,
            max_seconds=params.max_seconds,
            check=ctx.check,
            progress=ctx.progress,
            options=SearchOptions(threads=ctx.threads),
        )
        cols = qi_columns(data, qis)
        release = generalised(data, qis, sensitive, grouping.groups, group_values(cols, grouping.groups))
        release.details.update(
            {"gcp": relational_gcp(cols, grouping.groups), "minings": grouping.minings, "buckets": params.buckets}
        )
        return release


@hookimpl
def veil_register_algorithms():
    return [PatternKaRelational]
