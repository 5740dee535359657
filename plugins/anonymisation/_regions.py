"""Regions of the quasi-identifier space, as the partitioning methods (Mondrian, Hilbert-curve
k-anonymity, relational PatternKa) and global recoding measure and release them: each
quasi-identifier as a column of codes (:func:`qi_columns`: a number's ranks, a hierarchy's leaves in
depth-first order, or an ordered set of values), each group's generalised value
(:func:`group_values`: the range, the lowest common ancestor or the set its records span), the
generalised release (:func:`generalised`), and the relational NCP and GCP of groups (:class:`Loss`,
:func:`relational_gcp`, docs/reference.md#set-valued-data). docs/anonymisation.md#mondrian-and-hierarchies.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.engine import (
    GENERALISED_TABLE,
    ROOT,
    BadInput,
    Hierarchy,
    Interval,
    Kind,
    NodeValue,
    Release,
    Role,
    format_value,
    grouping_columns,
    missing_message,
    value_label,
)


# ---------------------------------------------------------------------------------- columns
class NumericColumn:
    """A numeric quasi-identifier: each record's rank among the distinct values."""

    categorical = False

    def __init__(self, name: str, series: pd.Series):
        """A blank's code is −1 (a column read with blanks: :func:`qi_columns`)."""
        self.name = name
        values = series.to_numpy(dtype=float) if series.isna().any() else series.to_numpy()
        known = ~pd.isna(values)
        self.codes = np.full(len(values), -1, dtype=np.int64)
        self.uniques, self.codes[known] = ranks(values[known])
        self.n_codes = len(self.uniques)
        self._bounds = None
        with np.errstate(over="ignore", invalid="ignore"):
            self.span = float(self.uniques[-1]) - float(self.uniques[0]) if len(self.uniques) else 0.0
        if not np.isfinite(self.span):
            raise BadInput(
                f"the quasi-identifier {name!r} runs from {float(self.uniques[0]):g} to "
                f"{float(self.uniques[-1]):g}: its range is not a finite number, so its intervals cannot "
                f"be measured; rescale it, or read it as categorical (--kind {name}=categorical)"
            )

    def width(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        if self.span <= 0:
            return np.zeros(len(lo))
        return (self.uniques[hi].astype(float) - self.uniques[lo].astype(float)) / self.span

    def value(self, lo: int, hi: int):
        if self._bounds is None:
            self._bounds = self.uniques.tolist()  # as Python numbers, as python_value gives them
        return Interval(self._bounds[lo], self._bounds[hi])


def ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values in increasing order and each value's rank among them (``np.unique`` with
    its inverse); integers of a narrow range by counting instead of sorting."""
    if (values.dtype.kind == "i" or (values.dtype.kind == "u" and values.dtype.itemsize < 8)) and len(values):
        lo, hi = int(values.min()), int(values.max())
        if hi - lo <= 4 * len(values) + (1 << 16):
            shifted = values.astype(np.int64) - lo
            held = np.bincount(shifted, minlength=hi - lo + 1) > 0
            rank = np.cumsum(held) - 1
            return (np.flatnonzero(held) + lo).astype(values.dtype), rank[shifted]
    uniques, inverse = np.unique(values, return_inverse=True)
    return uniques, inverse.reshape(-1)


class CategoricalColumn:
    """A categorical quasi-identifier: each record's leaf, and the leaves' ancestors level by level."""

    categorical = True

    def __init__(self, name: str, series: pd.Series, hierarchy):
        self.name = name
        self.hierarchy = hierarchy
        leaves = list(hierarchy.leaves)
        where = {leaf: i for i, leaf in enumerate(leaves)}
        codes, uniques = pd.factorize(series, use_na_sentinel=True)  # a blank: −1, kept as −1
        table = np.array([where.get(value_label(u), -1) for u in uniques], dtype=np.int64)
        if (table < 0).any():
            bad = value_label(uniques[int(np.flatnonzero(table < 0)[0])])
            raise BadInput(f"value {bad!r} of column {name!r} is not in its hierarchy; add it to the hierarchy")
        # leaves renumbered in depth-first order: the leaves under any node are then one run, so
        # the lowest common ancestor of a set is that of its first and last leaf
        dfs = list(hierarchy.in_order())
        rank = {leaf: i for i, leaf in enumerate(dfs)}
        ranks = np.array([rank[leaf] for leaf in leaves] + [-1], dtype=np.int64)  # the last: a blank
        self.codes = ranks[np.append(table, len(leaves))[codes]]
        self.labels, ancestors = [], []
        row_rank = np.array([rank[leaf] for leaf in leaves], dtype=np.int64)
        for level in range(hierarchy.height + 1):
            nodes = hierarchy.nodes(level)
            above = np.empty(len(dfs), dtype=np.int64)
            above[row_rank] = hierarchy.ancestor_codes(level)  # one pass, not one per node (quadratic)
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


class ValueSetColumn:
    """A categorical quasi-identifier without a hierarchy, its values put in an order (most frequent
    first, or by the target): cut at the median of that order like a number, each group released as
    the set of values it holds (``{a, b}``; ``*`` when it holds them all)."""

    categorical = False
    sets = True

    def __init__(self, name: str, labels: list[str], codes: np.ndarray):
        self.name = name
        self.labels = labels  # the values in their order
        self.codes = codes.astype(np.int64)  # each record's rank in that order
        self.n_codes = len(labels)

    def width(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        # the share of the column's values a group may hold: its set's size over the domain, as NCP counts it
        return np.where(hi > lo, (hi - lo + 1) / max(self.n_codes, 1), 0.0)

    def values(self, ranks) -> NodeValue:
        """The released value of a group holding the values of these ranks (ascending)."""
        labels = self.labels
        under = tuple([labels[int(r)] for r in ranks])
        if len(under) == 1:
            return NodeValue(under[0], under)
        if len(under) == self.n_codes:
            return NodeValue(ROOT, under)
        return NodeValue(set_label(under), under)


def set_label(values) -> str:
    """How a set of categorical values is written: ``{a, b, c}``."""
    return "{" + ", ".join(values) + "}"


def python_value(x):
    return x.item() if isinstance(x, np.generic) else x


def is_numeric(table, name: str) -> bool:
    """Whether Mondrian and its relational kin read a quasi-identifier as a number."""
    series = table.frame[name]
    return (
        table.schema[name].kind is Kind.NUMERIC
        and pd.api.types.is_numeric_dtype(series)
        and not pd.api.types.is_bool_dtype(series)
    )


def value_order(table, name: str, order: str) -> tuple[list[str], np.ndarray]:
    """A categorical column's values in the chosen order (``frequency``: most frequent first;
    ``target``: by the share of the target's most frequent class among each value's records), ties
    in order of first appearance; and each record's rank in it."""
    codes, uniques = pd.factorize(table.frame[name], use_na_sentinel=True)
    known = codes >= 0  # a blank keeps its code −1
    counts = np.bincount(codes[known], minlength=len(uniques)).astype(float)
    if order == "target":
        target = table.schema.target
        if target is None or target == name:
            raise BadInput(
                "order=target orders a column's values by the target: mark a column as the target, "
                "or choose order=frequency"
            )
        t, _ = pd.factorize(table.frame[target], use_na_sentinel=True)
        if (t < 0).any():
            raise BadInput(f"the target {target!r} has missing values; order=frequency does not need it")
        top = int(np.bincount(t).argmax())
        key = np.bincount(codes[known], weights=(t[known] == top).astype(float), minlength=len(uniques)) / counts
    else:
        key = -counts
    ranked = np.lexsort((np.arange(len(uniques)), key))
    rank = np.empty(len(ranked), dtype=np.int64)
    rank[ranked] = np.arange(len(ranked))
    objects = np.asarray(uniques, dtype=object)  # one conversion, not one look-up per value
    return [value_label(objects[i]) for i in ranked.tolist()], np.append(rank, -1)[codes]


def ordered_hierarchy(labels: list[str], name: str):
    """A binary hierarchy over values in a given order: level l joins the values whose ranks agree
    but for their last l bits (halves, quarters, … of the order), each node labelled by its set of
    values; the root ``*`` above the level where one node holds them all."""
    m = len(labels)
    if m == 0:  # every value blank: the root alone
        return Hierarchy([[ROOT]], name=name)
    height = max(1, int(np.ceil(np.log2(m)))) if m > 1 else 1
    rows = []
    for r, leaf in enumerate(labels):
        row = [leaf]
        for level in range(1, height):
            start = (r >> level) << level
            members = labels[start : min(start + (1 << level), m)]
            row.append(members[0] if len(members) == 1 else set_label(members))
        rows.append(row + [ROOT])
    return Hierarchy(rows, name=name)


def qi_columns(
    table, qis, *, numbers: str = "hierarchy", categories: str = "star", order: str = "frequency", blanks: bool = False
):
    """Each quasi-identifier as Mondrian measures it; a clear message for a column with missing
    values. Shared with the relational baselines (Hilbert, relational PatternKa), which measure NCP
    the same way.

    A column with a hierarchy attached is cut along it (a numeric one too, unless ``numbers`` is
    ``median``); a number without one by its range; a category without one as ``categories`` says:
    ``star`` (its generated hierarchy, the value or ``*``), ``set`` (:class:`ValueSetColumn`) or
    ``hierarchy`` (:func:`ordered_hierarchy`). With ``blanks`` a blank in a number or a category cut
    along a hierarchy is taken, its code −1 (Mondrian: docs/reference.md#blanks); else refused."""
    refused = None if blanks else missing_message(table.frame, qis)
    if refused:  # every column with blanks named at once
        raise BadInput(refused)
    cols = []
    for name in qis:
        series = table.frame[name]
        attached = table.schema[name].hierarchy
        if is_numeric(table, name):
            use = attached is not None and numbers == "hierarchy"
            cols.append(CategoricalColumn(name, series, attached) if use else NumericColumn(name, series))
        elif attached is not None or categories == "star":
            cols.append(CategoricalColumn(name, series, table.hierarchy(name)))
        elif categories == "set":
            cols.append(ValueSetColumn(name, *value_order(table, name, order)))
        else:
            labels, _ = value_order(table, name, order)
            cols.append(CategoricalColumn(name, series, ordered_hierarchy(labels, name)))
    return cols


def known_extent(col, codes: np.ndarray, local: np.ndarray, count: int):
    """Per group (``local`` numbers ``count`` of them) the (lowest, highest) code of a number or the
    (level, node) of the lowest common ancestor of a category, over its known values; (0, 0), the
    extent of no width, for a group whose every value is blank."""
    known = codes >= 0
    if known.all():
        return lca(col, codes, local, count) if col.categorical else extent(codes, local, count, col.n_codes)
    a, b = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
    held = np.bincount(local[known], minlength=count) > 0
    if held.any():
        dense = np.cumsum(held) - 1  # the groups holding a known value, numbered in order
        sub = dense[local[known]]
        x, y = (
            lca(col, codes[known], sub, int(held.sum()))
            if col.categorical
            else extent(codes[known], sub, int(held.sum()), col.n_codes)
        )
        a[held], b[held] = x, y
    return a, b


def small_table(count: int, span: int, n: int) -> bool:
    """Whether a count × span table of codes per group is cheap next to sorting n records."""
    return count * span <= 4 * n + (1 << 16)


def extent(values: np.ndarray, local: np.ndarray, count: int, span: int):
    """Smallest and largest code (0 … span−1) of each of ``count`` groups (``local`` numbers them):
    from a table of which codes each group holds when that table is small, else from one sort."""
    if small_table(count, span, len(values)):
        held = np.bincount(local * span + values, minlength=count * span).reshape(count, span) > 0
        return held.argmax(axis=1), span - 1 - held[:, ::-1].argmax(axis=1)
    key = np.sort(local * span + values)
    first = np.searchsorted(key, np.arange(count) * span)
    last = np.searchsorted(key, np.arange(1, count + 1) * span) - 1
    base = np.arange(count) * span
    return key[first] - base, key[last] - base


def lca(col: CategoricalColumn, leaves: np.ndarray, local: np.ndarray, count: int):
    """(level, node) of the lowest common ancestor of each group's leaves."""
    first, last = extent(leaves, local, count, col.n_leaves)
    return col.lca(first, last)


def released_columns(table) -> list[str]:
    return [c for c in table.released_columns()]


def group_values(cols, groups, check=lambda: None, distinct: dict | None = None, extents=None) -> pd.DataFrame:
    """One row per group: each quasi-identifier's typed generalised value (``check``: a cancellation,
    called every few hundred groups). Groups holding the same value share one object, built once.
    ``distinct``, when given, receives per column (each group's index into its distinct values, −1
    for a group of blanks; those values; each record's cell blank), which :func:`generalised` then
    formats once each. ``extents``: each group's extent per column, (lowest, highest) arrays of group ×
    column as the compiled rounds give them (every group then holds a known value of each column),
    which the groups' ranges and nodes are read from instead of the records."""
    count = int(groups.max()) + 1
    out = {}
    for j, col in enumerate(cols):
        check()
        given = None if extents is None else (extents[0][:, j], extents[1][:, j])
        index, made = distinct_values(col, groups, count, check, given)
        if distinct is not None:
            distinct[col.name] = (index, made, col.codes < 0)  # a blank's code is −1 (qi_columns)
        each = np.empty(len(made) + 1, dtype=object)
        each[: len(made)] = made  # the last: a group of blanks, blank
        out[col.name] = each[index]
    return pd.DataFrame(out)


def distinct_values(col, groups, count: int, check=lambda: None, extent=None) -> tuple[np.ndarray, list]:
    """Each group's index into the distinct generalised values of a column (−1 for a group whose
    every value is blank), and those values, in order of the first group holding each. ``extent``:
    each group's (lowest, highest) code or (level, node), when known (no group is then blank)."""
    known = col.codes >= 0
    if getattr(col, "sets", False):  # a group's value: the set of ranks it holds
        n = max(col.n_codes, 1)
        if n < 63 and small_table(count, n, len(groups)):  # each set as the bits of one integer
            held = np.bincount(groups[known] * n + col.codes[known], minlength=count * n).reshape(count, n) > 0
            key = held.astype(np.int64) @ (np.int64(1) << np.arange(n, dtype=np.int64))
            index, first = _first_kinds(key, key != 0)
            which, ranks = np.nonzero(held[first])  # each kind's ranks, kind after kind
            bounds = np.searchsorted(which, np.arange(len(first) + 1)).tolist()
            ranks = ranks.tolist()
            made = []
            for i in range(len(first)):
                if i % 256 == 0:
                    check()
                made.append(col.values(ranks[bounds[i] : bounds[i + 1]]))
            return index, made
        pairs = np.unique(groups[known] * n + col.codes[known])  # its distinct (group, rank) pairs
        ranks = pairs % n
        bounds = np.searchsorted(pairs, np.arange(count + 1) * n).tolist()
        index = np.full(count, -1, dtype=np.int64)
        made, memo = [], {}
        for i in range(count):
            if i % 256 == 0:
                check()
            p = ranks[bounds[i] : bounds[i + 1]]
            if len(p):
                key = p.tobytes()
                if key not in memo:
                    memo[key] = len(made)
                    made.append(col.values(p))
                index[i] = memo[key]
        return index, made
    if extent is not None:
        a, b = extent
        held = np.ones(count, dtype=bool)
    else:
        a, b = known_extent(col, col.codes, groups, count)
        held = np.bincount(groups[known], minlength=count) > 0  # a group of blanks: blank
    key = a * (int(b.max()) + 1) + b
    index, first = _first_kinds(key, held)
    made = []
    for i, (x, y) in enumerate(zip(a[first].tolist(), b[first].tolist())):
        if i % 256 == 0:
            check()
        made.append(col.value(x, y))
    return index, made


def _first_kinds(key: np.ndarray, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups numbered by their distinct ``key`` among those ``held`` (the others −1), in order of
    the first group of each; and that first group of each."""
    index = np.full(len(key), -1, dtype=np.int64)
    rows = np.flatnonzero(held)
    if not len(rows):
        return index, rows
    kind, uniques = pd.factorize(key[rows])  # numbered in order of first appearance
    first = np.empty(len(uniques), dtype=np.int64)
    first[kind[::-1]] = np.arange(len(kind) - 1, -1, -1)  # the first group of each kind
    index[rows] = kind
    return index, rows[first]


def generalised(table, qis, sensitive, groups, values, blanks: str | None = None, distinct=None) -> Release:
    """The release with each quasi-identifier written as its group's value (``values``, one row per
    group), a blank cell blank; ``blanks``: the rule a blank follows, where a quasi-identifier has one;
    ``distinct``: the distinct values per column as :func:`group_values` gives them, each formatted once."""
    written, any_blank = {}, False
    for name in qis:
        if distinct is not None and name in distinct:
            # the distinct values come in order of their first group, so their texts numbered in order
            # of first appearance give the categories in the order of the groups, as factorising every
            # group's text would
            index, made, blank = distinct[name]
            texts = [format_value(v) for v in made]
            number = {t: i for i, t in enumerate(dict.fromkeys(texts))}
            cats = pd.Index(list(number), dtype=object)
            text = np.fromiter((number[t] for t in texts), np.int64, len(texts))
            cells = np.append(text, -1)[index][groups]  # −1: a group of blanks
        else:
            # format each value once: group_values builds a value shared by several groups once, so its
            # groups are found by identity, without hashing sets and intervals (equal values that are
            # distinct objects meet again in their text, factorised below)
            per_group = values[name].tolist()
            seen: dict[int, int] = {}
            kinds = np.fromiter((seen.setdefault(id(v), len(seen)) for v in per_group), np.int64, len(per_group))
            uniques = list({id(v): v for v in per_group}.values())
            blank = [v is None or (isinstance(v, float) and v != v) for v in uniques]  # a group of blanks
            text = np.array([None if b else format_value(v) for v, b in zip(uniques, blank)], dtype=object)[kinds]
            codes, cats = pd.factorize(pd.Series(text, dtype=object))
            cells = codes[groups]
            blank = table.frame[name].isna().to_numpy()
        cells[blank] = -1  # a blank stays blank
        any_blank = any_blank or bool(blank.any())
        written[name] = pd.Categorical.from_codes(cells, categories=cats, validate=False)  # −1 … len(cats) − 1
    released = released_columns(table)
    order = released + [c for c in written if c not in released]
    source = table.frame
    frame = pd.DataFrame(
        {c: written[c] if c in written else source[c].array for c in order}, index=pd.RangeIndex(len(source))
    )
    sizes = np.bincount(groups)
    # every sensitive column the release publishes is judged, not only the one the search split on
    published = tuple(c for c in table.schema.by_role(Role.SENSITIVE) if c in frame.columns and c != sensitive)
    return Release(
        GENERALISED_TABLE,
        frame,
        tuple(qis),
        target=table.schema.target,
        sensitive=((sensitive,) if sensitive else ()) + published,
        groups=groups,
        group_values=values,
        details={
            "groups": int(len(sizes)),
            "smallest_group": int(sizes.min()),
            "average_group_size": float(sizes.mean()),
        },
        blanks=blanks if blanks is not None and any_blank else None,
    )


# ----------------------------------------------------------------------------------------- NCP
class Loss:
    """NCP of groups of a table's records on its quasi-identifiers (original values,
    docs/reference.md#set-valued-data).

    Widths come from lookup tables: a number's by its smallest and largest value's rank, a
    category's by its first and last leaf in depth-first order (their lowest common ancestor is
    that of the whole set, since the leaves under a node are one run)."""

    def __init__(self, cols):
        self.cols = cols
        self.d = len(cols)
        self.codes = np.column_stack([col.codes for col in cols])  # record × attribute ranks
        self.tables = []
        for col in cols:
            if col.categorical:
                first, last = np.meshgrid(np.arange(col.n_leaves), np.arange(col.n_leaves), indexing="ij")
                self.tables.append(col.width(*col.lca(first.ravel(), last.ravel())).reshape(first.shape))
            else:
                self.tables.append(None)

    def width(self, j: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        table = self.tables[j]
        return table[lo, hi] if table is not None else self.cols[j].width(lo, hi)

    def widths(self, rows: np.ndarray) -> float:
        """NCP(g) of one group: the sum over attributes of its normalised width."""
        block = self.codes[rows]
        lo, hi = block.min(axis=0), block.max(axis=0)
        return float(sum(self.width(j, lo[j : j + 1], hi[j : j + 1])[0] for j in range(self.d)))

    def extents(self, groups: np.ndarray, g: int):
        """Per attribute each group's smallest and largest code (DFS rank for categories)."""
        return [group_min_max(col.codes[groups >= 0], groups[groups >= 0], g) for col in self.cols]

    def ncp_from_extents(self, ext) -> np.ndarray:
        out = np.zeros(len(ext[0][0]))
        for j, (lo, hi) in enumerate(ext):
            out += self.width(j, lo, hi)
        return out


def relational_gcp(cols, groups: np.ndarray) -> float:
    """The relational GCP of docs/reference.md#set-valued-data: Σ_g |g|·NCP(g) / (d·n)."""
    loss = Loss(cols)
    g = int(groups.max()) + 1
    sizes = np.bincount(groups, minlength=g)
    return float((sizes * loss.ncp_from_extents(loss.extents(groups, g))).sum() / (loss.d * len(groups)))


def group_min_max(values: np.ndarray, local: np.ndarray, count: int):
    """Smallest and largest value of each of ``count`` groups (``local`` numbers them; a group
    with no record keeps the empty extent max > min)."""
    lo = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(count, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(lo, local, values)
    np.maximum.at(hi, local, values)
    return lo, hi


def qis_and_sensitive(table):
    """The columns to group on (the quasi-identifiers marked, without the sensitive one) and the first
    column marked sensitive (None without one); shared with the Hilbert baseline."""
    qis = list(grouping_columns(table))
    marked = table.schema.by_role(Role.SENSITIVE)
    sensitive = marked[0] if marked else None
    if sensitive in qis:
        qis.remove(sensitive)
    return qis, sensitive
