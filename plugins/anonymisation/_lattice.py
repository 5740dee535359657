"""Full-domain generalisation over the lattice of hierarchy levels, with record suppression: what
the ``global-recoding`` method searches and the generalisation metrics measure
(docs/anonymisation.md#global-recoding). Registers nothing.

**The lattice.** Each quasi-identifier j has a hierarchy of height h_j; a transformation (a *node*)
is one level l_j ∈ 0 … h_j per quasi-identifier, applied to every record. Node X is a
*specialisation* of Y (X ≤ Y) when l_j(X) ≤ l_j(Y) for every j; Y is then a generalisation of X.

**Class tables, rolled up.** A node's equivalence classes are the records equal on every
generalised value. They are never regrouped from the records: a node's table (each class's node
per quasi-identifier, its size and, when a model reads the sensitive value, its sensitive counts)
is rolled up from a table already computed at one of its specialisations, by mapping each class's
nodes up their hierarchies and merging the classes that meet (Incognito's rollup: LeFevre, DeWitt
and Ramakrishnan, “Incognito: Efficient Full-Domain K-Anonymity”, SIGMOD 2005). The smallest
such table at hand is used.

**Suppression.** The classes a privacy model fails are suppressed: every quasi-identifier of
their records is written ``*``, the records kept, as ARX writes them. A node is a *solution* when
at most ``limit`` records are suppressed. As in ARX (``HashGroupify``), the suppressed records are
left out of the check: a record written ``*`` everywhere matches any value and forms no group of
its own (docs/reference.md#blanks), which ``veil verify`` follows too. Under a population model
(δ-presence, k-map) they are still judged as one group, every population record matching it. A class
whose every value is already labelled ``*`` (the top of every hierarchy) is written the same way:
it joins that group, and the metrics count its records as suppressed, as the file shows them.

**Monotonicity, and where the search prunes.** Generalising merges classes. A model's
``monotonicity(params)`` says what merging does to its verdict: ``"generalisation"`` (a union of
passing groups passes: every model Veil ships) or ``"suppression"`` (a group that contains a passing
group passes, whatever else it holds: k-anonymity and distinct l-diversity). Two monotone facts
prune the search, and only they:

* a *necessary condition* C that holds on every generalisation of a node where it holds: without
  suppression, "every class passes each merge-monotone model"; with suppression, "the records in
  classes that fail some suppression-monotone model are at most ``limit``". A node failing C is no
  solution, nor is any of its specialisations (Flash's and OLA's downward pruning: Kohlmayer, Prasser,
  Eckert, Kemper and Kuhn, “Flash: Efficient, Stable and Optimal K-Anonymity”, PASSAT 2012;
  El Emam et al., “A Globally Optimal k-Anonymity Method for the De-identification of Health
  Data”, JAMIA 2009). With suppression the solutions themselves are not monotone, even for
  k-anonymity: a generalisation may leave fewer than k records suppressed, a group too small;
* a *lower bound* of the metric at a node and every generalisation of it: the metric as if no
  record were suppressed, which never decreases upwards (coarser values, coarser partition) and
  never exceeds the metric with suppression (a suppressed record costs the most a record can). A
  node whose bound cannot beat the best solution found prunes its generalisations.

The search takes the nodes best bound first. For each one not yet settled, a binary search up a
chain of its generalisations (each step the one that raises the bound least and keeps the partition
finest) finds the highest node failing C on it, whose specialisations, the node among them, are
settled at once; or it shows that C holds at the node, which is then judged and measured. The
search stops when no node left can beat the best solution. Ties between equal metric values go to
the lower node (smaller Σ l_j), then to the smaller levels in column order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    BadInput,
    CompatibleSums,
    count_units,
    GroupView,
    NodeStatus,
    NodeValue,
    SolutionSpace,
    group_rows,
    merge_classes,
    missing_message,
)

MAX_NODES = 1_000_000  # lattices larger than this are refused: the search keeps every node's levels
STAR = "*"
_CACHE_CELLS = 40_000_000  # class-table cells (classes × quasi-identifiers) kept for rolling up
METRICS = ("loss", "arx-loss", "entropy", "discernibility", "average-class-size", "precision", "height")
WEIGHTED = ("loss", "arx-loss", "entropy", "precision", "height")  # the metrics summed over attributes
GENERALISATION = "generalisation"
SUPPRESSION = "suppression"


# ---------------------------------------------------------------------------------- attributes
class Attribute:
    """One quasi-identifier under its hierarchy: each record's leaf, and each leaf's node level by level."""

    def __init__(
        self, name: str, series: pd.Series, hierarchy, weights: np.ndarray | None = None, blanks: bool = False
    ):
        """``weights``: how many records each row of ``series`` stands for (a class table's counts:
        one row per distinct combination, as the Spark path gives them); default one each.
        ``blanks``: a blank cell is taken (it stays blank at every level: one more leaf, and one more
        node at every level, the last, that no level merges with another) instead of refused."""
        if not blanks:
            refused = missing_message(series.to_frame(name), [name])
            if refused:
                raise BadInput(refused)
        h = hierarchy if hierarchy.name else hierarchy.with_name(name)
        self.name, self.hierarchy, self.height = name, h, h.height
        leaves = list(h.leaves)
        self.domain = len(leaves)  # the hierarchy's leaves: what the loss metrics normalise by
        where = {leaf: i for i, leaf in enumerate(leaves)}
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        labels = h.generalise_series(pd.Series(np.asarray(uniques, dtype=object), dtype=object), 0)  # BadInput
        self.has_blank = bool((codes < 0).any())
        table = np.array([where[x] for x in labels] + [self.domain], dtype=np.int64)  # a blank: the last leaf
        self.leaf = table[codes]  # each record's leaf (code −1 picks the blank's)
        self.n_leaves = self.domain + self.has_blank
        self.weights = weights
        self.anc, self.labels, self.star = [], [], []
        as_series = pd.Series(leaves, dtype=object)
        for level in range(self.height + 1):
            nodes = h.nodes(level)
            index = {node.label: i for i, node in enumerate(nodes)}
            above = [index[x] for x in h.generalise_series(as_series, level)]
            self.anc.append(np.array(above + [len(nodes)] * self.has_blank, dtype=np.int64))
            self.labels.append([node.label for node in nodes] + [None] * self.has_blank)
            self.star.append(index.get(STAR, -1))
        self.n_nodes = [len(x) for x in self.labels]
        self.leaf_records = np.bincount(self.leaf, weights=weights, minlength=self.n_leaves).astype(np.int64)
        self.node_leaves = [np.bincount(a, minlength=m) for a, m in zip(self.anc, self.n_nodes)]
        self.node_records = [
            np.bincount(a, weights=self.leaf_records, minlength=m).astype(np.int64)
            for a, m in zip(self.anc, self.n_nodes)
        ]
        self.present = [int((r > 0).sum()) for r in self.node_records]  # nodes holding a record, per level
        self.offset, self.full_height = 0, self.height  # see window
        self._up: dict = {}
        self._values: dict = {}

    def window(self, lo: int, hi: int) -> Attribute:
        """This attribute with only the levels ``lo`` … ``hi`` of its hierarchy, for a search limited
        to them: its level 0 is the hierarchy's ``lo`` (``offset``), its ``height`` ``hi - lo``
        (``full_height`` stays the hierarchy's)."""
        if not 0 <= lo <= hi <= self.full_height:
            raise BadInput(
                f"the levels of {self.name!r} may not run from {lo} to {hi}: its hierarchy's levels run "
                f"from 0 to {self.full_height}"
            )
        if (lo, hi) == (self.offset, self.offset + self.height):
            return self
        import copy

        out = copy.copy(self)
        keep = slice(lo - self.offset, hi - self.offset + 1)
        for attr in ("anc", "labels", "star", "n_nodes", "node_leaves", "node_records", "present"):
            setattr(out, attr, getattr(self, attr)[keep])
        out.offset, out.height, out._up, out._values = lo, hi - lo, {}, {}
        return out

    def blank_node(self, level: int) -> int:
        """The node of a blank at ``level`` (the last), or −1 when the column has no blank."""
        return self.n_nodes[level] - 1 if self.has_blank else -1

    def is_blank(self, level: int, node) -> bool:
        return self.has_blank and node == self.n_nodes[level] - 1

    def _as_suppressed(self, level: int, cost: np.ndarray, value) -> np.ndarray:
        """``cost`` with the blank's node charged ``value`` (as a suppressed cell, at every level)."""
        if self.has_blank:
            cost = np.array(cost, dtype=float)
            cost[self.n_nodes[level] - 1] = value
        return cost

    def up(self, a: int, b: int) -> np.ndarray:
        """Node index at level b of every node of level a (b ≥ a)."""
        key = (a, b)
        if key not in self._up:
            m = np.zeros(self.n_nodes[a], dtype=np.int64)
            m[self.anc[a]] = self.anc[b]
            self._up[key] = m
        return self._up[key]

    def value(self, level: int, node: int) -> NodeValue:
        """The typed released value of a node: its label and the leaves below it."""
        if self.is_blank(level, node):
            return None  # a blank stays blank
        key = (level, node)
        if key not in self._values:
            leaves = self.hierarchy.leaves
            under = tuple(leaves[i] for i in np.flatnonzero(self.anc[level] == node))
            self._values[key] = NodeValue(self.labels[level][node], under)
        return self._values[key]

    # -- per-cell costs of the separable metrics (docs/reference.md#global-recoding) -------------
    def cell_cost(self, metric: str, level: int) -> np.ndarray:
        """Each node's cost at ``level`` per record holding it (loss, precision); for entropy the
        cost summed over the node's records (it depends on each record's own value). A blank costs
        what a suppressed cell costs, at every level (docs/reference.md#blanks)."""
        if metric == "loss":
            cost = (
                (self.node_leaves[level] - 1) / (self.domain - 1) if self.domain > 1 else np.zeros(self.n_nodes[level])
            )
            return self._as_suppressed(level, cost, 1.0)
        if metric == "precision":  # of the hierarchy's own level and height
            top = self.full_height
            cost = np.full(self.n_nodes[level], (self.offset + level) / top if top else 0.0)
            return self._as_suppressed(level, cost, 1.0)
        if metric == "entropy":
            held = self.leaf_records > 0
            leaf_cost = np.zeros(self.n_leaves)
            leaf_cost[held] = -np.log2(self.leaf_records[held] / self.node_records[level][self.anc[level][held]])
            cost = np.bincount(self.anc[level], weights=leaf_cost * self.leaf_records, minlength=self.n_nodes[level])
            if self.has_blank:
                r = float(self.leaf_records[-1])
                return self._as_suppressed(level, cost, r * np.log2(float(self.leaf_records.sum()) / r) if r else 0.0)
            return cost
        raise ValueError(metric)

    def total(self, metric: str, level: int) -> float:
        """The metric's cost of this column at ``level`` summed over every record, nothing suppressed."""
        cost = self.cell_cost(metric, level)
        return float(cost.sum() if metric == "entropy" else (cost * self.node_records[level]).sum())

    def penalty(self, metric: str, level: int) -> np.ndarray:
        """Per node of ``level``: how much a record of it costs more when it is suppressed (written
        ``*``); nothing for a blank, which already costs as much."""
        if metric == "loss":
            return self._as_suppressed(level, 1.0 - self.cell_cost(metric, level), 0.0)
        if metric == "precision":
            return self._as_suppressed(level, 1.0 - self.cell_cost(metric, level), 0.0)
        if metric == "entropy":  # −log2(c/n) suppressed against −log2(c/R_node): log2(n / R_node)
            r = self.node_records[level]
            n = float(self.leaf_records.sum())
            return self._as_suppressed(level, np.where(r > 0, np.log2(n / np.maximum(r, 1)), 0.0), 0.0)
        raise ValueError(metric)


def attributes(
    table, qis, check=lambda: None, weights: np.ndarray | None = None, blanks: bool = False
) -> list[Attribute]:
    """Each quasi-identifier with its hierarchy: the one attached, else the generated one (numbers:
    intervals; others: one level to ``*``). ``check`` is called between columns (a cancellation);
    ``weights``: the records each row stands for (see :class:`Attribute`); ``blanks``: blank cells
    are taken (they stay blank), else refused with every column holding one named at once."""
    refused = None if blanks else missing_message(table.frame, qis)
    if refused:
        raise BadInput(refused)
    out = []
    for name in qis:
        check()
        out.append(Attribute(name, table.frame[name], table.hierarchy(name), weights, blanks))
    return out


# ---------------------------------------------------------------------------------- class tables
class Classes:
    """The equivalence classes of one node: each class's size, its node per quasi-identifier ((d, G)
    ``codes``), when a model reads the sensitive value the (class, sensitive value, count) units, and
    when a model reads survey weights each class's (and unit's) sum of them."""

    def __init__(self, levels: tuple, size: np.ndarray, codes: np.ndarray, survey: np.ndarray | None = None):
        self.levels, self.size, self.codes = tuple(levels), size, codes
        self.survey = survey  # each class's sum of survey weights (None: no model reads them)
        self.unit_class = self.unit_sens = self.unit_w = self.unit_survey = None
        self.n_values = 0  # the sensitive codes the units may hold (0 … n_values − 1), when they are kept
        # the (class × sensitive value) counts the units were taken from, while the table is judged (the
        # models' G × S matrix, not counted again); dropped once it is (evaluate), too large to keep
        self.dense: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return len(self.size)


def bottom(
    attrs: list[Attribute],
    sensitive: np.ndarray | None,
    n_values: int,
    weights: np.ndarray | None = None,
    survey: np.ndarray | None = None,
) -> Classes:
    """The class table of the untransformed data (every quasi-identifier at level 0), kept for the
    whole search: without its (class × value) counts, which only judging reads."""
    table = classes_at(attrs, tuple(0 for _ in attrs), sensitive, n_values, weights, survey)[0]
    table.dense = None
    return table


def _units(
    table: Classes,
    cls: np.ndarray,
    sens: np.ndarray,
    w: np.ndarray,
    n_values: int,
    survey: np.ndarray | None = None,
    inverse: np.ndarray | None = None,
) -> None:
    """Merge (class, sensitive value) pairs with their counts (and sums of survey weights) into
    ``table``'s units (``inverse``: when given, ``cls`` are classes of a finer table, merged as it says):
    counted densely over every (class, value) when there are not many more of those than pairs, else
    grouped. A blank sensitive value (code −1, never a value) is a unit of its own, counted one place up."""
    table.n_values = n_values
    counted = count_units(table.n_classes, cls, sens, w, n_values, inverse)
    if inverse is not None and (counted is None or survey is not None):  # else count_units mapped them
        cls = inverse[cls]
    if counted is not None:
        # counted value by value (a class's counts one per row of a value's): the models' G × S matrix is
        # then a transposed view, whose sums and maxima over a group's values run along whole rows
        table.unit_class, table.unit_sens, table.unit_w, counts = counted
        table.dense = counts[1:].T  # known values' (blanks aside), whole numbers
        if survey is not None:  # each unit's sum of survey weights, at the same (value, class) cells
            rows = max(table.n_classes, 1)
            sums = np.bincount((sens + 1) * rows + cls, weights=survey, minlength=counts.size)
            table.unit_survey = sums[(table.unit_sens + 1) * rows + table.unit_class]
        return
    up, span = sens + 1, n_values + 1
    inverse, first = group_rows([cls, up], [table.n_classes, span])
    table.unit_class = cls[first]
    table.unit_sens = sens[first]
    table.unit_w = np.bincount(inverse, weights=w, minlength=len(first)).astype(np.int64)
    if survey is not None:
        table.unit_survey = np.bincount(inverse, weights=survey, minlength=len(first))


def rollup(source: Classes, levels: tuple, attrs: list[Attribute]) -> Classes:
    """The class table of ``levels`` from that of a specialisation, merging classes (never records)."""
    maps = [a.up(s, t) if s != t else None for a, s, t in zip(attrs, source.levels, levels)]
    inverse, _, codes, size = merge_classes(
        source.codes, maps, [a.n_nodes[t] for a, t in zip(attrs, levels)], source.size
    )
    survey = None if source.survey is None else np.bincount(inverse, weights=source.survey, minlength=len(size))
    table = Classes(levels, size, codes, survey)
    if source.unit_class is not None:
        _units(table, source.unit_class, source.unit_sens, source.unit_w, source.n_values, source.unit_survey, inverse)
    return table


# ---------------------------------------------------------------------------------- judging
class Judge:
    """The run's privacy models on class tables: which classes fail, the necessary condition C, and
    whether the suppressed records pass as one group."""

    def __init__(
        self, model, limit: int, sensitive, population=None, survey: np.ndarray | None = None, blank_attrs=None
    ):
        """``blank_attrs``: the attributes, when a blank in them matches any value (the any-value
        rule, with a blank in some column): the classes are then judged as :meth:`failing_blanks` says."""
        self.model = model
        # each record's survey weight when a model reads them (GroupView.survey), else None
        self.survey = survey if getattr(model, "reads_weights", False) else None
        self.blank_attrs = blank_attrs
        self.population = population  # a LatticeCounts when the run has a population (δ-presence, k-map)
        self.limit = int(limit)
        # a GroupView of every record's sensitive code, Q, values (or without codes), or one per
        # sensitive column: each is judged on its own, a class passing only when it passes on every one
        views = list(sensitive) if isinstance(sensitive, (list, tuple)) else [sensitive]
        self.sens = views[0]
        self.columns = [(v, None) for v in views]
        self.codes = views[0].sensitive  # what tells units apart: one column's codes, or a joint code
        self.n_codes = len(views[0].values) if views[0].sensitive is not None else 1
        if len(views) > 1 and all(v.sensitive is not None for v in views):
            joint = pd.factorize(pd.MultiIndex.from_arrays([v.sensitive for v in views]))[0]
            one = np.zeros(int(joint.max()) + 1, dtype=np.int64)
            one[joint] = np.arange(len(joint))  # a record holding each joint code
            self.columns = [(v, v.sensitive[one]) for v in views]  # joint code → the column's code
            self.codes, self.n_codes = joint.astype(np.int64), len(one)
        self.models = [m for m in getattr(model, "models", (model,)) if m.judges_groups]
        if not self.models:
            raise BadInput(f"global recoding needs a privacy model that judges groups of records, not {model.name}")
        kinds = [m.plugin.monotonicity(m.params) for m in self.models]
        # with blanks matching any value, a generalisation adds records to a group that are no union of
        # groups: only a model that a group containing a passing group passes prunes
        want = (SUPPRESSION,) if self.limit > 0 or blank_attrs else (SUPPRESSION, GENERALISATION)
        self.pruning = [k in want for k in kinds]  # the models C is made of
        # a union of passing groups passes every model: a table failing one has no solution at all
        self.merge_monotone = not blank_attrs and all(k in (SUPPRESSION, GENERALISATION) for k in kinds)
        if blank_attrs and (population is not None or any(m.plugin.reads_population for m in self.models)):
            raise BadInput(
                "the population models (δ-presence, k-map) count a group's matches as written, which a blank "
                "matching any value has not: fill or drop the blank quasi-identifiers, or choose blanks=own-value"
            )

    def views(self, table: Classes, keep: np.ndarray | None = None) -> list[GroupView]:
        """One view of the classes per sensitive column (one without sensitive codes when no model reads
        them), each with the classes' counts of matching population records when the run has one;
        with ``keep`` (a mask), of those classes only, numbered in order."""
        matches = None if self.population is None else self.population.counts(table.levels, table.codes)
        size, unit_class, unit_sens, unit_w = table.size, table.unit_class, table.unit_sens, table.unit_w
        survey, unit_survey, dense = table.survey, table.unit_survey, table.dense
        if keep is not None:
            size = size[keep]
            dense = None if dense is None else dense.T[:, keep].T  # the rows kept, in the layout they have
            matches = None if matches is None else matches[keep]
            survey = None if survey is None else survey[keep]
            if unit_class is not None:
                number = np.cumsum(keep) - 1
                held = keep[unit_class]
                unit_class, unit_sens, unit_w = number[unit_class[held]], unit_sens[held], unit_w[held]
                unit_survey = None if unit_survey is None else unit_survey[held]
        if unit_class is None:
            return [
                GroupView.from_codes(
                    np.arange(len(size)), None, None, weights=size, population=matches, survey=survey, sizes=size
                )
            ]
        return [
            GroupView.from_codes(
                unit_class,
                unit_sens if to is None else to[unit_sens],
                s.overall,
                s.values,
                s.numeric,
                unit_w,
                hierarchy=s.hierarchy,
                population=matches,
                survey=unit_survey,
                sizes=size,
                counts=dense if to is None and dense is not None and dense.shape[1] == len(s.values) else None,
            )
            for s, to in self.columns
        ]

    def _ok(self, model, views) -> np.ndarray:
        if len(views) == 1:
            return model.check_groups(views[0]).ok
        return np.logical_and.reduce([model.check_groups(v).ok for v in views])

    def _necessary(self, model, views) -> np.ndarray | None:
        masks = [model.plugin.necessary_groups(v, model.params) for v in views]
        if any(m is None for m in masks):
            return None
        return masks[0] if len(masks) == 1 else np.logical_and.reduce(masks)

    def failing(self, table: Classes, stars: list[int] | None = None) -> tuple[np.ndarray | None, np.ndarray]:
        """``stars``: each quasi-identifier's node labelled ``*`` at the table's levels (or −1), when
        known: the class written ``*`` throughout is then left out of a whole-release model's judgement."""
        if self.blank_attrs:
            return self.failing_blanks(table)
        return self._failing(table, stars)

    def failing_blanks(self, table: Classes) -> tuple[np.ndarray | None, np.ndarray]:
        """:meth:`failing` where a blank matches any value (docs/reference.md#blanks): a class's
        group is every record compatible with it among the records not suppressed, so suppressing a
        failing class shrinks the others' groups. The classes failing are those left out when,
        from all of them, the ones failing among those still kept are dropped until none fails: the
        largest set of classes that all pass among themselves, for a model a group containing a
        passing group passes (k-anonymity, distinct l-diversity). A class written ``*`` throughout,
        or blank throughout, joins no other group and is not judged: its group is the whole table,
        as ``veil verify`` counts it. C is the same with the pruning models (and the other models'
        necessary conditions): where C holds at a node it holds at every generalisation, whose
        groups contain those of the node."""
        codes = table.codes.astype(np.int64)  # (d, G): a column at a time
        for j, a in enumerate(self.blank_attrs):
            if a.has_blank:
                codes[j, codes[j] == a.blank_node(table.levels[j])] = -1
        stars = [a.star[level] for a, level in zip(self.blank_attrs, table.levels)]
        codes[:, star_class(table, stars)] = -1
        free = np.logical_and.reduce(codes < 0, axis=0)  # judged with the whole table, joining no group
        live = np.flatnonzero(~free)
        join = CompatibleSums(codes[:, live].T)  # the classes keyed once, their groups summed every round
        pruning = [(m, p) for m, p in zip(self.models, self.pruning)]
        kept = self._fixed_point(table, join, live, np.ones(len(live), dtype=bool), pruning, necessary=True)
        some = np.zeros(table.n_classes, dtype=bool)
        some[live[kept]] = True
        if int(table.size[~some & ~free].sum()) > self.limit:
            return None, ~some & ~free
        if not all(self.pruning):  # else every model was judged by its own check: nothing more fails
            kept = self._fixed_point(table, join, live, kept, [(m, True) for m in self.models])
        every = np.zeros(table.n_classes, dtype=bool)
        every[live[kept]] = True
        return ~every & ~free, ~some & ~free

    def _fixed_point(self, table: Classes, join, live: np.ndarray, keep: np.ndarray, models, necessary=False):
        """Which of the classes ``live`` (the ones ``join`` keyed) stay kept when those of ``keep`` (a
        mask over ``live``) failing ``models`` (each (model, judged by its own check or else by its
        necessary condition)) among the kept ones are dropped until none fails."""
        keep = keep.copy()
        while keep.any():
            views = self._compatible_views(table, join, live, keep)
            ok = np.ones(int(keep.sum()), dtype=bool)
            for model, own in models:
                verdict = self._ok(model, views) if own else (self._necessary(model, views) if necessary else None)
                if verdict is not None:
                    ok &= verdict
            if ok.all():
                break
            keep[np.flatnonzero(keep)[~ok]] = False
        return keep

    def _compatible_views(self, table: Classes, join, live: np.ndarray, keep: np.ndarray) -> list[GroupView]:
        """One view per sensitive column of the groups of the classes ``live[keep]`` under the any-value
        rule, group g that of the g-th of them: its size, sensitive counts and survey weights summed by
        ``join`` over the kept classes compatible with it (what :func:`~veil.engine.blank_view` gives,
        without keying the classes again)."""
        classes = live[keep]
        sizes = join.sums(np.where(keep, table.size[live], 0))[keep]
        estimates = None if table.survey is None else join.sums(np.where(keep, table.survey[live], 0.0))[keep]
        if table.unit_class is None:
            view = GroupView.from_codes(
                np.arange(len(classes)),
                None,
                None,
                (),
                self.sens.numeric,
                table.size[classes],
                hierarchy=self.sens.hierarchy,
                survey=None if table.survey is None else table.survey[classes],
            )
            view._cache.update(sizes=sizes, **({} if estimates is None else {"estimates": estimates}))
            return [view]
        number = np.full(table.n_classes, -1, dtype=np.int64)
        number[live] = np.arange(len(live))  # a class's place among the live ones
        kept = np.zeros(table.n_classes, dtype=bool)
        kept[classes] = True
        held = kept[table.unit_class]
        place, unit_sens, unit_w = number[table.unit_class[held]], table.unit_sens[held], table.unit_w[held]
        unit_survey = None if table.unit_survey is None else table.unit_survey[held]
        group = np.cumsum(keep) - 1  # a live class's group among the kept ones
        views = []
        for s, to in self.columns:
            sens = unit_sens if to is None else to[unit_sens]
            width = s.n_values
            known = sens >= 0  # a blank sensitive value is no value
            counts = np.bincount(
                place[known] * width + sens[known], weights=unit_w[known], minlength=len(live) * width
            ).astype(np.int64)
            view = GroupView.from_codes(
                group[place],
                sens,
                s.overall,
                s.values,
                s.numeric,
                unit_w,
                hierarchy=s.hierarchy,
                survey=unit_survey,
            )
            view._cache.update(sizes=sizes, counts=join.sums(counts.reshape(len(live), width))[keep])
            if estimates is not None:
                view._cache["estimates"] = estimates
            views.append(view)
        return views

    def _failing(self, table: Classes, stars: list[int] | None = None) -> tuple[np.ndarray | None, np.ndarray]:
        """(classes failing any model, classes failing C) as boolean masks; the first is None when C
        fails (more than ``limit`` records in classes failing it), no other model then being judged.

        C is made of the models monotone enough to prune on (``pruning``) and, for each other model,
        its necessary condition monotone under suppression when it offers one
        (``necessary_groups``). Those other models matter only on the classes C passes, the others
        failing anyway: a class's verdict comes from its own sensitive counts (and the table's Q), so
        they are judged on the view of every class (a view of the passing ones alone costs more to build
        than the others cost to judge)."""
        views = self.views(table)
        some = None  # the classes passing C (never changed in place: a verdict's own array may be it)
        for model, pruning in zip(self.models, self.pruning):
            ok = self._ok(model, views) if pruning else self._necessary(model, views)
            if ok is not None:
                some = ok if some is None else some & ok
        if some is None:
            some = np.ones(table.n_classes, dtype=bool)
        failing_c = ~some
        if int(table.size[failing_c].sum()) > self.limit:
            return None, failing_c
        rest = [m for m, p in zip(self.models, self.pruning) if not p and not self._smallest(m)]
        every = some
        if rest and not failing_c.all():
            for m in rest:
                every = every & self._ok(m, views)
        smallest = [m for m, p in zip(self.models, self.pruning) if not p and self._smallest(m)]
        if smallest:
            star = star_class(table, stars) if stars is not None else np.zeros(table.n_classes, dtype=bool)
            every = self._suppress_smallest(table, every, smallest, star)
        return ~every, failing_c

    def _smallest(self, model) -> bool:
        """Whether a suppression limit meets ``model`` by suppressing its smallest classes."""
        return self.limit > 0 and model.plugin.suppresses_smallest

    def _suppress_smallest(self, table: Classes, kept: np.ndarray, models, star: np.ndarray) -> np.ndarray:
        """The classes kept once the fewest smallest of ``kept`` are suppressed that make every one
        of ``models`` (each judging the kept classes as a whole) hold, within what the limit leaves;
        none kept when no such prefix fits (docs/reference.md#suppressing-the-riskiest-groups); a class
        written ``*`` throughout is neither among them nor judged, as a suppressed one, unless it is
        all there is. The
        classes go smallest first, ties in the order of their values (each quasi-identifier's node,
        column by column); the prefix is found by bisection between none and as many as the limit
        allows, as ARX finds it: the fewest when suppressing more never makes a model fail, as for
        the average risk."""
        budget = self.limit - int(table.size[~kept].sum())
        candidates = np.flatnonzero(kept & ~star)
        if budget < 0:
            return np.zeros_like(kept)
        if not len(candidates):  # nothing but the class written '*': judged as it stands
            holds = kept.any() and all(bool(self._ok(m, self.views(table, kept)).all()) for m in models)
            return kept if holds else np.zeros_like(kept)
        order = candidates[np.lexsort(tuple(table.codes[::-1, candidates]) + (table.size[candidates],))]
        most = int(np.searchsorted(np.cumsum(table.size[order]), budget, side="right"))

        def holds(k: int) -> bool:
            keep = kept & ~star
            keep[order[:k]] = False
            if not keep.any():
                return False
            subset = self.views(table, keep)
            return all(bool(self._ok(m, subset).all()) for m in models)

        if holds(0):
            return kept
        if not most or not holds(most):
            return np.zeros_like(kept)
        lo, hi = 0, most  # fails with lo suppressed, holds with hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if holds(mid):
                hi = mid
            else:
                lo = mid
        out = kept.copy()
        out[order[:hi]] = False
        return out

    def group_passes(self, table: Classes, members: np.ndarray) -> bool:
        """Whether the classes ``members`` (a mask), taken as one group, satisfy every model (the group is
        written ``*`` in every quasi-identifier, so every population record matches it). Without a
        population model they need not: a suppressed record matches any value and forms no group of
        its own (docs/reference.md#blanks), as ARX leaves suppressed records out of the check."""
        if self.population is None and not any(m.plugin.reads_population for m in self.models):
            return True
        matches = None if self.population is None else np.array([self.population.n])
        if table.unit_class is None:
            view = GroupView.from_codes(
                np.zeros(1, dtype=np.int64),
                None,
                None,
                weights=np.array([table.size[members].sum()]),
                population=matches,
                survey=None if table.survey is None else np.array([table.survey[members].sum()]),
            )
            return all(bool(m.check_groups(view).ok.all()) for m in self.models)
        keep = members[table.unit_class]
        codes = table.unit_sens[keep]
        views = [
            GroupView.from_codes(
                np.zeros(int(keep.sum()), dtype=np.int64),
                codes if to is None else to[codes],
                s.overall,
                s.values,
                s.numeric,
                table.unit_w[keep],
                hierarchy=s.hierarchy,
                population=matches,
                survey=None if table.unit_survey is None else table.unit_survey[keep],
            )
            for s, to in self.columns
        ]
        return all(bool(self._ok(m, views).all()) for m in self.models)


# ---------------------------------------------------------------------------------- metrics
class Objective:
    """The search's metric on a node: a cheap bound for many nodes at once, the exact bound from a
    class table, and the value with suppression. Definitions: docs/reference.md#global-recoding.

    ``weights`` (one per attribute, default 1 each) weigh the attributes in the metrics summed over
    them (``WEIGHTED``): Veil's loss and precision are then the weighted mean over attributes,
    entropy and height the weighted sum. ``arx-loss`` is ARX's loss: per attribute the share of its
    domain each value covers, normalised between the least and the most loss, weighted by each
    weight over the largest, and aggregated by ARX's geometric mean; ``gs_factor`` is ARX's factor
    between generalisation (1) and suppression (0), 0.5 counting both alike."""

    def __init__(
        self, metric: str, attrs: list[Attribute], n: int, monotonic: bool = True, weights=None, gs_factor=0.5
    ):
        if metric not in METRICS:
            raise BadInput(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
        self.metric, self.attrs, self.n, self.monotonic = metric, attrs, n, monotonic
        d = max(len(attrs), 1)
        self.w = np.ones(len(attrs)) if weights is None else np.asarray(weights, dtype=float)
        self.offset = float(sum(w * a.offset for w, a in zip(self.w, attrs)))  # height: levels below the window
        self.arx = metric == "arx-loss"
        self.separable = metric in ("loss", "entropy", "precision")
        self.scale = 1.0 / (n * float(self.w.sum() or d)) if metric in ("loss", "precision") else 1.0
        if self.separable:
            self.totals = [
                w * np.array([a.total(metric, l) for l in range(a.height + 1)]) for w, a in zip(self.w, attrs)
            ]
            self.penalties = [[w * a.penalty(metric, l) for l in range(a.height + 1)] for w, a in zip(self.w, attrs)]
            self._penalty_flat, self._penalty_at = _end_to_end(self.penalties)
        if self.arx:
            self.g = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)  # ARX's generalisation factor
            self.s = 2.0 * gs_factor if gs_factor < 0.5 else 1.0  # and its suppression factor
            # a blank's share is the whole domain, as a suppressed cell's
            self.shares = [
                [a._as_suppressed(l, a.node_leaves[l] / a.domain, 1.0) for l in range(a.height + 1)] for a in attrs
            ]
            self.share_sums = [
                np.array([float(sh @ a.node_records[l]) for l, sh in enumerate(sh_)])
                for a, sh_ in zip(attrs, self.shares)
            ]
            top = float(self.w.max()) if len(self.w) and self.w.max() > 0 else 1.0
            self.arx_w = self.w / top if self.w.max() > 0 else np.ones(len(attrs))
            self._share_flat, self._share_at = _end_to_end(self.shares)
            self._share_sums = np.zeros((len(attrs), max(a.height for a in attrs) + 1))  # (attribute, level)
            for j, t in enumerate(self.share_sums):
                self._share_sums[j, : len(t)] = t
            self._least = np.array([self.g * float(n) / a.domain for a in attrs])  # see _arx_aggregate
            self._spread = float(n) - self._least > 0
            self._span = np.where(self._spread, float(n) - self._least, 1.0)
        self._columns = np.arange(len(attrs))
        self.present = [np.array(a.present, dtype=float) for a in attrs]
        self.companion: Objective | None = None  # a second metric measured at every solution, shown beside

    def _arx_aggregate(self, per_attribute: np.ndarray) -> np.ndarray:
        """ARX's loss from each attribute's summed shares (rows: nodes; columns: attributes):
        normalised to [0, 1] between the least loss (every value its own leaf, g·n/|domain|) and the
        most (n), weighted, then Π (v_j·w_j + 1)^(1/d) − 1."""
        d = max(len(self.attrs), 1)
        v = np.where(self._spread, (per_attribute - self._least) / self._span, 0.0)
        v = np.maximum(v, 0.0)
        return np.prod((v * self.arx_w + 1.0) ** (1.0 / d), axis=1) - 1.0

    def bounds(self, levels: np.ndarray) -> np.ndarray:
        """A lower bound of the metric at each node (rows of ``levels``) and every generalisation of it,
        from the hierarchies and the column counts alone."""
        if self.metric == "height":
            return levels @ self.w + self.offset
        if self.arx:  # nothing suppressed: every record costs g × its share
            sums = np.column_stack([self.g * t[levels[:, j]] for j, t in enumerate(self.share_sums)])
            return self._arx_aggregate(sums.reshape(len(levels), len(self.attrs)))
        if self.separable:
            total = np.zeros(len(levels))
            for j, t in enumerate(self.totals):
                total += t[levels[:, j]]
            return total * self.scale
        return self._partition_bounds(levels)

    def _partition_bounds(self, levels: np.ndarray) -> np.ndarray:
        """The partition metrics' bound at each node, from the column counts and the counts of every pair of
        columns (docs/reference.md#global-recoding). A node's classes refine the blocks of any set S of
        its columns (records equal on S at the node's levels), and a block of |B| records splits into at
        most min(|B|, P) classes, P = Π_{j∉S} (nodes of column j holding records at its level). So the
        node has at most Σ_B min(|B|, P) classes, and Σ|E|² ≥ Σ_B max(|B|, |B|² / P) (each class holds
        a record; |B| records in P classes, Cauchy–Schwarz)."""
        d = len(self.attrs)
        logp = np.zeros((len(levels), d))
        for j, p in enumerate(self.present):
            logp[:, j] = np.log(np.maximum(p[levels[:, j]], 1.0))
        total = logp.sum(axis=1)
        classes = np.minimum(float(self.n), np.exp(total))
        squares = np.maximum(float(self.n) * self.n / classes, float(self.n))
        for subset, shape, tables in self._subsets():
            index = np.ravel_multi_index(tuple(levels[:, j] for j in subset), shape)
            rest = np.exp(total - logp[:, list(subset)].sum(axis=1))  # P: the classes a block may split into
            order = np.argsort(index, kind="stable")
            cuts = np.searchsorted(index[order], np.arange(len(tables) + 1))
            for combo, (cells, sums, sums2) in enumerate(tables):
                rows = order[cuts[combo] : cuts[combo + 1]]
                if not len(rows):
                    continue
                p = rest[rows]
                small = np.searchsorted(cells, p, side="right")  # blocks no larger than P
                classes[rows] = np.minimum(classes[rows], sums[small] + p * (len(cells) - small))
                squares[rows] = np.maximum(squares[rows], sums[small] + (sums2[-1] - sums2[small]) / p)
        if self.metric == "average-class-size":
            return self.n / classes
        return squares

    def _subsets(self):
        """For each column and each pair of columns S: the shape of S's levels and, for each combination
        of them (flat), the sizes of the blocks holding records, sorted, with their running sums and
        running sums of squares (each from 0)."""
        attrs, out = self.attrs, []

        def sizes(cells: np.ndarray) -> tuple:
            c = np.sort(cells[cells > 0].astype(np.float64))
            return c, np.concatenate([[0.0], np.cumsum(c)]), np.concatenate([[0.0], np.cumsum(c * c)])

        for j, a in enumerate(attrs):
            out.append(((j,), (a.height + 1,), [sizes(r) for r in a.node_records]))
        for i in range(len(attrs)):
            for j in range(i + 1, len(attrs)):
                a, b = attrs[i], attrs[j]
                joint = np.bincount(
                    a.leaf * b.n_leaves + b.leaf, weights=a.weights, minlength=a.n_leaves * b.n_leaves
                ).reshape(a.n_leaves, b.n_leaves)
                tables = []
                for li in range(a.height + 1):
                    rows = np.zeros((a.n_nodes[li], b.n_leaves))
                    np.add.at(rows, a.anc[li], joint)
                    for lj in range(b.height + 1):
                        cells = np.zeros((a.n_nodes[li], b.n_nodes[lj]))
                        np.add.at(cells.T, b.anc[lj], rows.T)
                        tables.append(sizes(cells))
                out.append(((i, j), (a.height + 1, b.height + 1), tables))
        return out

    def lower(self, table: Classes, bound: float) -> float:
        """The bound at a node from its class table: the metric with nothing suppressed."""
        if self.metric == "discernibility":
            return float(np.square(table.size.astype(np.float64)).sum())
        if self.metric == "average-class-size":
            return self.n / table.n_classes
        return bound

    def written_shares(self, table: Classes, written: np.ndarray) -> np.ndarray:
        """What ARX's loss at a node needs of its classes ``written`` ``*``, whatever its factor: their
        records, then per attribute their records' shares of its domain summed (d + 1 numbers)."""
        gone = table.size[written].astype(float)
        shares = self._share_flat[table.codes[:, written] + self._share_at[self._columns, table.levels][:, None]]
        out = np.empty(len(self.attrs) + 1)
        out[0] = gone.sum()
        out[1:] = shares @ gone
        return out

    def arx_values(self, levels: np.ndarray, written: np.ndarray) -> np.ndarray:
        """ARX's loss at each node (rows of ``levels``) from its :meth:`written_shares` (rows of
        ``written``): a kept record costs g × its share, a suppressed one its share + s × the rest,
        so an attribute costs g × (all shares − the written ones') + the written ones' + s × (their
        records − their shares). With nothing written it is the bound, g × all shares."""
        whole = self._share_sums[self._columns, levels]
        gone, shares = written[:, :1], written[:, 1:]
        return self._arx_aggregate(self.g * (whole - shares) + (shares + self.s * (gone - shares)))

    def value(self, table: Classes, written: np.ndarray, bound: float) -> float:
        """The metric at a node whose classes ``written`` (a mask) are written ``*`` in every
        quasi-identifier: the suppressed classes, with a class already all ``*`` when there are any."""
        if self.metric == "height":
            return bound
        size = table.size
        out = int(size[written].sum())
        if self.arx:
            levels = np.asarray([table.levels], dtype=np.int64)
            return float(self.arx_values(levels, self.written_shares(table, written)[None, :])[0])
        if self.separable:
            if not out:
                return bound
            at = self._penalty_at[self._columns, table.levels][:, None]
            extra = self._penalty_flat[table.codes[:, written] + at].sum(axis=0)  # a column at a time, in order
            return bound + float((extra * size[written]).sum()) * self.scale
        kept = size[~written].astype(np.float64)
        if self.metric == "average-class-size":
            return self.n / (len(kept) + (1 if out else 0))
        return float(np.square(kept).sum()) + (float(out) ** 2 if self.monotonic else float(self.n) * out)


def _end_to_end(arrays: list[list[np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Arrays per attribute and level laid end to end, and where each starts ((attribute, level))."""
    flat = [x for row in arrays for x in row]
    starts = np.cumsum([0] + [len(x) for x in flat])
    at = np.zeros((len(arrays), max((len(row) for row in arrays), default=0)), dtype=np.int64)
    i = 0
    for j, row in enumerate(arrays):
        at[j, : len(row)] = starts[i : i + len(row)]
        i += len(row)
    return (np.concatenate(flat) if flat else np.zeros(0)), at


def same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# ---------------------------------------------------------------------------------- one node
@dataclass
class Outcome:
    """What the search knows of one node it evaluated."""

    levels: tuple
    condition: bool  # the necessary condition C
    lower: float = math.inf  # the metric's bound at this node (and above)
    solution: bool = False
    value: float = math.inf
    suppressed: int = 0
    also: float = math.nan  # the companion metric's value at a solution (Objective.companion)
    shares: np.ndarray | None = None  # for ARX's loss, a solution's Objective.written_shares


def evaluate(
    table: Classes, judge: Judge, objective: Objective, bound: float, stars: list[int], also_bound: float | None = None
) -> Outcome:
    """C and the metric's bound at a node and, when C holds, whether it is a solution and its metric
    (``also_bound``: the companion metric's bound at the node, when known)."""
    fail, fail_pruning = judge.failing(table, stars)
    table.dense = None  # judged: the counts the models read are not kept with the table
    out = Outcome(table.levels, fail is not None)
    out.lower = objective.lower(table, bound)
    if not out.condition:
        return out
    out.suppressed = int(table.size[fail].sum())
    if out.suppressed > judge.limit:
        return out  # no solution: which classes the file would write '*' does not matter
    written = written_classes(table, fail, stars)
    out.solution = not fail.any() or judge.group_passes(table, written)
    if out.solution:
        if objective.arx:
            out.shares = objective.written_shares(table, written)
            out.value = float(objective.arx_values(np.asarray([table.levels], dtype=np.int64), out.shares[None, :])[0])
        else:
            out.value = objective.value(table, written, bound)
        other = objective.companion
        if other is not None:
            if also_bound is None:
                also_bound = float(other.bounds(np.asarray([table.levels], dtype=np.int64))[0])
            out.also = other.value(table, written, also_bound)
    return out


class Memo:
    """What searches of the same records under the same model learn of each node evaluated that ARX's
    generalisation/suppression factor leaves alone, for a search at another factor (local recoding
    searches the records of a pass that published none again at a higher factor,
    docs/reference.md#local-recoding): each node's :class:`Outcome` (its necessary condition,
    suppressed records, whether it is a solution, its :meth:`Objective.written_shares` and companion
    metric), from which ARX's loss at any factor follows, and the class tables kept for rolling up.
    Only a search minimising ARX's loss reads and fills it; ``key`` (:meth:`bind`) is every other
    setting of the searches, and the memo forgets what it holds when that changes."""

    def __init__(self):
        self.key = None
        self.outcomes: dict[tuple, Outcome] = {}
        self.kept: Kept | None = None

    def bind(self, key) -> None:
        if key != self.key:
            self.key, self.outcomes, self.kept = key, {}, None

    def recall(self, objective: Objective, cheap: np.ndarray, strides: np.ndarray) -> dict[tuple, Outcome]:
        """Every node learnt, measured at ``objective``'s factor (``cheap``: the lattice's bounds)."""
        known = list(self.outcomes.values())
        if not known:
            return {}
        levels = np.array([o.levels for o in known], dtype=np.int64)
        lower = cheap[levels @ strides]
        solutions = [i for i, o in enumerate(known) if o.solution]
        values = np.full(len(known), math.inf)
        if solutions:
            shares = np.stack([known[i].shares for i in solutions])
            values[solutions] = objective.arx_values(levels[solutions], shares)
        return {
            o.levels: Outcome(
                o.levels, o.condition, float(lower[i]), o.solution, float(values[i]), o.suppressed, o.also, o.shares
            )
            for i, o in enumerate(known)
        }


def star_class(table: Classes, stars: list[int]) -> np.ndarray:
    """A mask of the class whose every value is labelled ``*`` (written as the suppressed records are)."""
    if any(s < 0 for s in stars):
        return np.zeros(table.n_classes, dtype=bool)
    return np.all(table.codes == np.asarray(stars, dtype=np.int64)[:, None], axis=0)


def written_classes(table: Classes, fail: np.ndarray, stars: list[int]) -> np.ndarray:
    """The classes written ``*`` in every quasi-identifier: the failing ones, and the class whose every
    node is labelled ``*`` (``stars``: each quasi-identifier's node labelled ``*`` at the node's levels,
    or −1). The file cannot tell them apart: they are one group, and the metrics count every record
    of it as suppressed (only the failing ones count towards the limit)."""
    return fail | star_class(table, stars)


def classes_at(
    attrs: list[Attribute],
    levels,
    sensitive: np.ndarray | None,
    n_values: int,
    weights: np.ndarray | None = None,
    survey: np.ndarray | None = None,
):
    """The class table of one node grouped from the records, and each record's class (``weights``:
    the records each row stands for, when the rows are a class table's; ``survey``: each row's
    survey weight, when a model reads them)."""
    cols = [a.anc[l][a.leaf] for a, l in zip(attrs, levels)]
    inverse, first = group_rows(cols, [a.n_nodes[l] for a, l in zip(attrs, levels)])
    codes = np.empty((len(cols), len(first)), dtype=np.int32)
    for j, c in enumerate(cols):
        codes[j] = c[first]
    size = np.bincount(inverse, weights=weights, minlength=len(first)).astype(np.int64)
    total = None if survey is None else np.bincount(inverse, weights=survey, minlength=len(first))
    table = Classes(tuple(int(l) for l in levels), size, codes, total)
    if sensitive is not None:
        w = np.ones(len(inverse), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
        _units(table, inverse, sensitive, w, n_values, survey)
    return table, inverse


# ---------------------------------------------------------------------------------- the search
def lattice_size(attrs: list[Attribute]) -> int:
    return math.prod(a.height + 1 for a in attrs)


def check_size(attrs: list[Attribute]) -> int:
    """The number of transformations; BadInput when there are too many to search."""
    size = lattice_size(attrs)
    if size > MAX_NODES:
        shape = " × ".join(f"{a.height + 1}" for a in attrs)
        raise BadInput(
            f"the lattice of {len(attrs)} quasi-identifiers has {size:,} transformations ({shape} levels), "
            f"more than the {MAX_NODES:,} global recoding searches; choose fewer quasi-identifiers, "
            f"hierarchies with fewer levels, or one transformation with levels="
        )
    return size


class Cones:
    """Nodes settled as a whole cone at a time: every specialisation of a node failing C, every
    generalisation of a node where C holds, or of one no generalisation of which beats the best. A
    boolean per node (numbered in mixed radix, the last column's level fastest), a cone marked as
    the box of levels it is, one slice of the booleans seen as an array with an axis per column."""

    def __init__(self, levels: np.ndarray, strides: np.ndarray, top: tuple):
        self.levels, self.strides, self.top = levels, strides, np.asarray(top)
        self.tops = [int(t) for t in top]
        self.mask = np.zeros(len(levels), dtype=bool)
        self.box = self.mask.reshape(tuple(int(t) + 1 for t in top))  # a view: the same booleans
        self.apexes: set = set()

    def __contains__(self, levels) -> bool:
        return levels in self.apexes

    def below(self, apex: tuple) -> None:
        self.apexes.add(apex)
        self.box[tuple(slice(0, int(a) + 1) for a in apex)] = True

    def above(self, apex: tuple) -> None:
        self.apexes.add(apex)
        self.box[tuple(slice(int(a), t + 1) for a, t in zip(apex, self.tops))] = True


class Kept:
    """Class tables kept for rolling up, with their levels and sizes as arrays; the oldest go when
    they hold more than ``_CACHE_CELLS`` cells, the data's own never.

    With ``top`` (each column's highest level) each table's levels are also packed into one integer,
    a field per column with a guard bit above it, so that "every level of A ≤ B's" is one subtraction
    for all the tables at once: (B | guards) − A keeps every guard bit exactly when no field of A
    exceeds B's (a field never borrows past its guard)."""

    def __init__(self, base: Classes, top: tuple | None = None):
        d = len(base.levels)
        self.levels = np.zeros((64, d), dtype=np.int16)
        self.columns = np.zeros((d, 64), dtype=np.int16)  # the same levels a column at a time
        self.sizes = np.zeros(64, dtype=np.float64)
        self.tables: list = []
        self.count, self.cells, self.d = 0, 0, max(d, 1)
        self.shifts, self.guards = None, 0
        if top is not None:
            shifts, at = [], 0
            for height in top:
                shifts.append(at)
                at += int(height).bit_length() + 1  # the field, then its guard bit
            if at <= 62:
                self.shifts = shifts
                self.guards = sum(1 << (s + int(h).bit_length()) for s, h in zip(shifts, top))
                self.packed = np.zeros(64, dtype=np.int64)
        self.add(base)

    def pack(self, levels) -> int:
        return sum(int(level) << shift for level, shift in zip(levels, self.shifts))

    def add(self, table: Classes) -> None:
        if self.count == len(self.sizes):
            self.levels = np.concatenate([self.levels, np.zeros_like(self.levels)])
            self.columns = np.concatenate([self.columns, np.zeros_like(self.columns)], axis=1)
            self.sizes = np.concatenate([self.sizes, np.zeros_like(self.sizes)])
            if self.shifts is not None:
                self.packed = np.concatenate([self.packed, np.zeros_like(self.packed)])
        self.levels[self.count] = table.levels
        self.columns[:, self.count] = table.levels
        self.sizes[self.count] = table.n_classes
        if self.shifts is not None:
            self.packed[self.count] = self.pack(table.levels)
        self.tables.append(table)
        self.count += 1
        self.cells += table.n_classes * self.d
        oldest = 1
        while self.cells > _CACHE_CELLS and oldest < self.count - 1:
            if self.tables[oldest] is not None:
                self.cells -= self.tables[oldest].n_classes * self.d
                self.tables[oldest] = None
                self.sizes[oldest] = np.inf
            oldest += 1

    def smallest_below(self, levels: tuple) -> Classes:
        """The smallest table kept of a specialisation of ``levels`` (the first of the smallest)."""
        if self.shifts is not None:
            room = (self.pack(levels) | self.guards) - self.packed[: self.count]
            room &= self.guards
            below = np.flatnonzero(room == self.guards)
        else:
            top = np.asarray(levels, dtype=np.int16)[:, None]
            below = np.flatnonzero((self.columns[:, : self.count] <= top).all(axis=0))
        return self.tables[below[np.argmin(self.sizes[below])]]


class Search:
    """The optimal solution over the whole lattice (module docstring): best bound first, pruning by C
    downwards and by the bound upwards, class tables rolled up from the smallest specialisation."""

    BLOCK = 256  # nodes filtered at once against the cones settled so far

    def __init__(self, attrs, base: Classes, judge: Judge, objective: Objective, ctx, memo: Memo | None = None):
        """``memo``: what searches of the same records at another factor of ARX's loss learnt (read
        and filled when the metric is ARX's loss)."""
        self.attrs, self.judge, self.objective, self.ctx = attrs, judge, objective, ctx
        self.size = check_size(attrs)
        radix = [a.height + 1 for a in attrs]
        self.top = tuple(a.height for a in attrs)
        self.levels = np.stack(np.unravel_index(np.arange(self.size), radix), axis=1).astype(np.int16)
        self.strides = np.array([math.prod(radix[j + 1 :]) for j in range(len(radix))], dtype=np.int64)
        wide = self.levels.astype(np.int64)
        self.cheap = objective.bounds(wide)
        other = objective.companion
        self.also_cheap = None if other is None else other.bounds(wide)  # the companion's bounds
        self.height = self.levels.sum(axis=1, dtype=np.int64)
        self.memo = memo if objective.arx else None
        self.recalled: dict[tuple, Outcome] = {}
        if self.memo is None:
            self.kept = Kept(base, self.top)
        else:
            self.kept = self.memo.kept = self.memo.kept or Kept(base, self.top)
            self.recalled = self.memo.recall(objective, self.cheap, self.strides)
        self.known: dict[tuple, Outcome] = {}
        # the nodes where C fails (below a node failing it), holds (above one where it holds), and
        # those no generalisation of which beats the best
        self.cfalse, self.ctrue, self.dead = (Cones(self.levels, self.strides, self.top) for _ in range(3))
        self.best: Outcome | None = None
        self.step = np.full(self.size, -1, dtype=np.int16)  # a node's step up its chain, once worked out
        self.stride_list = [int(x) for x in self.strides]
        self.top_height = sum(self.top)
        self.fine = [np.log(np.maximum(np.array(a.present, dtype=float), 1)) for a in attrs]
        spread = float(self.cheap.max() - self.cheap.min())
        self.span_cheap = 1.0 / spread if spread > 0 else 0.0
        fine = sum(float(f[0] - f[-1]) for f in self.fine)
        self.span_fine = 1.0 / fine if fine > 0 else 0.0

    # -- one node ------------------------------------------------------------------------------
    def table(self, levels: tuple) -> Classes:
        """The node's class table, rolled up from the smallest table kept of a specialisation."""
        source = self.kept.smallest_below(levels)
        self.ctx.check()
        table = rollup(source, levels, self.attrs)
        self.kept.add(table)
        return table

    def node(self, levels: tuple) -> Outcome:
        if levels in self.known:
            return self.known[levels]
        out = self.recalled.get(levels)
        if out is None:
            idx = int(np.dot(levels, self.strides))
            stars = [a.star[l] for a, l in zip(self.attrs, levels)]
            also = None if self.also_cheap is None else float(self.also_cheap[idx])
            out = evaluate(self.table(levels), self.judge, self.objective, float(self.cheap[idx]), stars, also)
            if self.memo is not None:
                self.memo.outcomes[levels] = out
        self.known[levels] = out
        if out.condition:
            self.ctrue.above(levels)
        else:
            self.cfalse.below(levels)
        self.consider(out)
        return out

    def beyond(self, idx: int) -> bool:
        """Whether a node (numbered ``idx``) of unknown C is not worth evaluating to climb past: it
        lies in a dead cone (an evaluated specialisation's bound shows no generalisation of it beats
        the best). The binary search then looks only below it: what it settles is still a node shown
        to fail C, with a smaller cone, or the node it started from, evaluated."""
        if self.cfalse.mask[idx] or self.ctrue.mask[idx] or self.best is None:
            return False
        return bool(self.dead.mask[idx])

    def condition(self, levels: tuple, idx: int) -> bool:
        if self.cfalse.mask[idx]:
            return False
        if self.ctrue.mask[idx]:
            return True
        return self.node(levels).condition

    def consider(self, out: Outcome) -> None:
        """Keep the best solution; remember nodes no generalisation of which can beat it (when the best
        improves, every node evaluated so far is looked at again)."""
        if out.solution and (self.best is None or better(out, self.best)):
            self.best = out
            for other in self.known.values():
                if (
                    other is not out
                    and other.levels not in self.dead
                    and not self.cone_can_beat(other.lower, other.levels)
                ):
                    self.dead.above(other.levels)
        if out.levels in self.dead:
            return
        if out.solution and (out.value <= out.lower or same(out.value, out.lower)):
            self.dead.above(out.levels)  # above it: metric ≥ bound ≥ this value, ties to the lower node
        elif self.best is not None and not self.cone_can_beat(out.lower, out.levels):
            self.dead.above(out.levels)

    def cone_can_beat(self, lower: float, levels) -> bool:
        if same(lower, self.best.value):
            return sum(levels) <= sum(self.best.levels)  # only a tie, which a lower node wins
        return lower < self.best.value

    # -- climbing: the highest node failing C on a chain ------------------------------------------
    def chain(self, levels: tuple, idx: int) -> tuple[list[tuple], list[int]]:
        """Generalisations of ``levels`` (numbered ``idx``) up to the top, each step the one raising
        the cheap bound least (:meth:`_steps`), and their numbers."""
        chain, at, cur = [levels], [idx], list(levels)
        step, strides = self.step, self.stride_list
        for _ in range(self.top_height - sum(levels)):
            j = int(step[idx])
            if j < 0:
                self._steps(idx)
                j = int(step[idx])
            cur[j] += 1
            idx += strides[j]
            chain.append(tuple(cur))
            at.append(idx)
        return chain, at

    STEPS = 4096  # nodes whose steps are worked out at once

    def _steps(self, idx: int) -> None:
        """The step up the chain of every node of ``idx``'s block of :attr:`STEPS`: the column whose
        next level raises the cheap bound least, the partition's fineness weighed in, the first such
        column on a tie (chains share their tails)."""
        lo = idx - idx % self.STEPS
        hi = min(lo + self.STEPS, self.size)
        nodes, levels = np.arange(lo, hi), self.levels[lo:hi]
        score = np.full((hi - lo, len(self.attrs)), np.inf)
        for j, a in enumerate(self.attrs):
            can = levels[:, j] < a.height
            i, level = nodes[can], levels[can, j].astype(np.int64)
            score[can, j] = (self.cheap[i + self.strides[j]] - self.cheap[i]) * self.span_cheap + (
                self.fine[j][level] - self.fine[j][level + 1]
            ) * self.span_fine
        self.step[lo:hi] = np.argmin(score, axis=1) if len(self.attrs) else 0

    def resolve(self, levels: tuple, idx: int) -> None:
        """Settle a node (numbered ``idx``): binary search up its chain for the highest node failing C
        (whose specialisations, this node among them, then all fail it), or evaluate the node itself
        when C holds there. Probing the chain's middle first spares evaluating a low node (a large
        class table) that a higher one already shows to fail C."""
        chain, at = self.chain(levels, idx)
        lo, hi = -1, len(chain) - 1  # C holds at chain[hi] (the top) or is not worth learning; fails at chain[lo]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.beyond(at[mid]) or self.condition(chain[mid], at[mid]):
                hi = mid
            else:
                lo = mid
        if lo < 0:
            self.node(levels)  # C holds at the node itself: its bound, solution and metric
            return
        if chain[lo] not in self.cfalse:
            self.cfalse.below(chain[lo])

    # -- the search ------------------------------------------------------------------------------
    def run(self) -> Outcome | None:
        """The optimal solution, or None when no node is one."""
        top = self.node(self.top)
        if not top.condition:
            return None  # C holds nowhere below the top either
        if not top.solution and self.judge.merge_monotone:
            return None  # the whole table fails a model no partition of it can satisfy
        order, n = np.lexsort((np.arange(self.size), self.height, self.cheap)), self.size
        for start in range(0, n, self.BLOCK):
            self.ctx.progress(start / n, f"global recoding: {len(self.known):,} of {n:,} transformations checked")
            block = order[start : start + self.BLOCK]
            alive = block[~(self.cfalse.mask[block] | self.dead.mask[block])]
            for idx in alive:
                cheap = float(self.cheap[idx])
                best = self.best
                if best is not None and not same(cheap, best.value) and cheap > best.value:
                    return best  # every node left is bounded above the best
                if self.cfalse.mask[idx] or self.dead.mask[idx]:
                    continue
                levels = tuple(self.levels[idx].tolist())
                if best is not None and same(cheap, best.value) and key(levels) >= key(best.levels):
                    continue  # at best a tie, which the best wins
                if levels in self.known:
                    continue
                self.ctx.check()
                self.resolve(levels, int(idx))
        return self.best


def key(levels) -> tuple:
    return (sum(levels), tuple(levels))


def better(a: Outcome, b: Outcome) -> bool:
    """Whether solution ``a`` beats ``b``: a lower metric, then the lower node, then smaller levels."""
    if same(a.value, b.value):
        return key(a.levels) < key(b.levels)
    return a.value < b.value


MAX_LISTED = 50_000  # lattices up to this many nodes are listed whole in the solution space; larger, the checked ones


def solution_space(search: Search, metric: str, optimum: tuple, limit: int) -> SolutionSpace:
    """What the search learnt of every node, as the engine's typed :class:`SolutionSpace`: a node it
    evaluated is a solution or not; one below a node failing the necessary condition is not a
    solution; any other was pruned by the metric's bound (not checked). Levels are the hierarchies'
    own (a column's window of allowed levels shifted back); ``optimum`` is given in them too."""
    known = search.known
    if search.size <= MAX_LISTED:
        levels = search.levels
        status = np.where(search.cfalse.mask, NodeStatus.NOT_SOLUTION, NodeStatus.NOT_CHECKED).astype(np.int8)
        rows = {levels_: int(np.dot(levels_, search.strides)) for levels_ in known}
    else:
        levels = np.array(list(known), dtype=np.int16).reshape(-1, len(search.attrs))
        status = np.full(len(levels), NodeStatus.NOT_CHECKED, dtype=np.int8)
        rows = {levels_: i for i, levels_ in enumerate(known)}
    loss = np.full(len(levels), np.nan)
    also = np.full(len(levels), np.nan)
    suppressed = np.full(len(levels), -1, dtype=np.int64)
    for node, out in known.items():
        i = rows[node]
        status[i] = NodeStatus.SOLUTION if out.solution else NodeStatus.NOT_SOLUTION
        if out.solution:
            loss[i], also[i] = out.value, out.also
        if out.condition:
            suppressed[i] = out.suppressed
    attrs = search.attrs
    offsets = np.array([a.offset for a in attrs], dtype=np.int16)
    objective = search.objective
    companion = objective.companion
    return SolutionSpace(
        tuple(a.name for a in attrs),
        tuple(a.full_height for a in attrs),
        metric,
        np.asarray(levels, dtype=np.int16) + offsets[None, :],
        status,
        loss,
        suppressed,
        tuple(int(x) for x in optimum),
        complete=search.size <= MAX_LISTED,
        lattice_nodes=int(search.size),
        limit=int(limit),
        lowest=tuple(a.offset for a in attrs),
        highest=tuple(a.offset + a.height for a in attrs),
        weights=tuple(float(w) for w in objective.w),
        also_metric=companion.metric if companion is not None else "",
        also=also if companion is not None else None,
    )
