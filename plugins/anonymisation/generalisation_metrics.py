"""The information losses of a generalisation, as ARX reports them (docs/reference.md#global-recoding).

Each is also the ``metric`` the ``global-recoding`` search minimises, with the same definition: a
release's value here equals the ``loss`` its ``details["generalisation"]`` records. Per record and
quasi-identifier, a released value covers a region of the column's hierarchy leaves (a node its
leaves, a range the values in it, ``*`` every leaf, an exact value itself):

* ``loss`` (Iyengar 2002): (|region| − 1) / (|leaves| − 1), averaged over records and
  quasi-identifiers: 0 for exact values, 1 for ``*``;
* ``entropy`` (non-uniform entropy, Gionis and Tassa 2009): Σ −log2(c(v) / c(region)) over records
  and quasi-identifiers, c(v) the records holding the record's own value and c(region) those whose
  value lies in the region, in bits;
* ``precision`` (Sweeney 2002): level / height of the column's hierarchy, averaged; ``*`` counts
  1. Sweeney's precision is 1 minus this;
* ``height``: Σ over quasi-identifiers of the level, the transformation's height in the lattice;
* ``suppressed``: the share of the records written ``*`` in every quasi-identifier.

The levels are those of a global recoding (``details["generalisation"]["levels"]``, ``*`` at the
top); for another release, each value's lowest hierarchy node covering it (``height`` takes each
column's highest). A withheld quasi-identifier counts as ``*``. Discernibility and the average
class size are in :mod:`metrics`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.engine import CHEAP, SUPPRESSED, Metric, TABLE, hookimpl

from ._view import Anonymised, nan_when_not_applicable, table_and_sensitive

IYENGAR, GIONIS, SWEENEY, ARX = "iyengar", "gionis-tassa", "sweeney", "arx"  # keys of the engine's papers


class _Regions:
    """Per quasi-identifier: each unit's region (units × leaves, or each record's own leaf when exact,
    None when withheld), the records per unit, and the levels a global recoding recorded."""

    def __init__(self, original, release, ctx):
        table, _ = table_and_sensitive(original, release, need_sensitive=False)
        self.view = Anonymised.shared(table, release, None, ctx)
        self.regions, self.counts, self.kind = self.view.unit_regions()
        self.n, self.qis = self.view.n, self.view.qis
        gen = (release.details or {}).get("generalisation") or {}
        self.levels = gen.get("levels") if isinstance(gen.get("levels"), dict) else None
        self.suppressed = {}
        gv = release.group_values if self.kind == "groups" else None
        for col in self.qis:
            if gv is not None and col in gv.columns:
                self.suppressed[col] = np.array([v is SUPPRESSED for v in gv[col]], dtype=bool)

    def leaf_records(self, col: str) -> np.ndarray:
        return np.bincount(self.view.record_leaf[col], minlength=len(self.view.leaves[col])).astype(float)

    def unit_levels(self, col: str) -> np.ndarray | float:
        """Each unit's level in ``col``'s hierarchy (a number when every unit shares it)."""
        h = self.view.hier[col]
        region = self.regions[col]
        if region is None:
            return float(h.height)
        if region.ndim == 1:
            return 0.0
        if self.levels is not None and col in self.levels:
            out = np.full(len(region), float(self.levels[col]))
            out[self.suppressed.get(col, np.zeros(len(region), dtype=bool))] = h.height
            return out
        covering = self.view.__dict__.setdefault("_covering_levels", {})  # shared by precision and height
        if col not in covering:
            covering[col] = _covering_level(h, region)
            covering[col].setflags(write=False)
        return covering[col]


def _covering_level(hierarchy, region: np.ndarray) -> np.ndarray:
    """The lowest level at which one node holds every leaf of each region (units × leaves)."""
    first = region.argmax(axis=1)
    found = np.full(len(region), float(hierarchy.height))
    leaves = list(hierarchy.leaves)
    for level in range(hierarchy.height, -1, -1):
        above = pd.Index([n.label for n in hierarchy.nodes(level)]).get_indexer(
            hierarchy.generalise_series(pd.Series(leaves, dtype=object), level)
        )
        node = above[first]
        same = ((above[None, :] == node[:, None]) | ~region).all(axis=1)
        found[same] = level
    return found


class _GeneralisationMetric(Metric):
    cost = CHEAP
    accepts = (TABLE,)  # a table's records (generalised or not); NaN on binary features
    category = "utility"
    higher_is_better = False


class Loss(_GeneralisationMetric):
    name = "loss"
    title = "Information loss (Iyengar's LM)"
    paper = IYENGAR
    description = (
        "How much each released value widens the record's own: (values in its range or node − 1) / "
        "(values of the column − 1), averaged over records and quasi-identifiers (0 = exact, 1 = '*')."
    )

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        r = _Regions(original, release, ctx)
        total = 0.0
        for col in r.qis:
            ctx.check()
            region, L = r.regions[col], len(r.view.leaves[col])
            if region is None:
                total += r.n * (1.0 if L > 1 else 0.0)
            elif region.ndim == 2 and L > 1:
                total += float(((region.sum(axis=1) - 1) / (L - 1) * r.counts).sum())
        return total / (len(r.qis) * r.n)


class Entropy(_GeneralisationMetric):
    name = "entropy"
    title = "Non-uniform entropy"
    paper = GIONIS
    description = (
        "The information a reader lacks to tell each record's value from the others its released value "
        "covers: Σ −log2(records with the value / records whose value the released one covers), over "
        "records and quasi-identifiers, in bits (0 = exact)."
    )

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        r = _Regions(original, release, ctx)
        total = 0.0
        for col in r.qis:
            ctx.check()
            region, held = r.regions[col], r.leaf_records(col)
            if region is not None and region.ndim == 1:
                continue
            leaf = r.view.record_leaf[col]
            own = np.log2(held[leaf])
            if region is None:
                total += float((np.log2(r.n) - own).sum())
                continue
            covered = region.astype(float) @ held  # records in each unit's region
            unit = r.view.groups
            total += float((np.log2(covered[unit]) - own).sum())
        return total


class Precision(_GeneralisationMetric):
    name = "precision"
    title = "Precision loss (Sweeney)"
    paper = SWEENEY
    description = (
        "How far up its hierarchy each value is released: level / height, averaged over records and "
        "quasi-identifiers (0 = exact, 1 = '*'); Sweeney's precision is 1 minus this."
    )

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        r = _Regions(original, release, ctx)
        total = 0.0
        for col in r.qis:
            ctx.check()
            h = r.view.hier[col].height
            if h == 0:
                continue
            levels = r.unit_levels(col)
            total += float((np.asarray(levels) * r.counts).sum() if np.ndim(levels) else levels * r.n) / h
        return total / (len(r.qis) * r.n)


class Height(_GeneralisationMetric):
    name = "height"
    title = "Generalisation height"
    paper = ARX
    description = (
        "The transformation's height in the lattice of hierarchy levels: the sum over quasi-identifiers "
        "of the level each is released at (for a release that mixes levels, each column's highest)."
    )

    @nan_when_not_applicable
    def compute(self, original, release, params, ctx):
        r = _Regions(original, release, ctx)
        if r.levels is not None and all(c in r.levels for c in r.qis):
            return float(sum(r.levels[c] for c in r.qis))
        total = 0.0
        for col in r.qis:
            levels = r.unit_levels(col)
            total += float(np.max(levels)) if np.ndim(levels) and len(levels) else float(levels)
        return total


class Suppressed(_GeneralisationMetric):
    name = "suppressed"
    title = "Suppressed records (share)"
    paper = ARX
    description = (
        "The share of the records written * in every quasi-identifier (suppressed, the records kept), "
        "what a global recoding gives up to lose less elsewhere: 0 when none is."
    )

    def compute(self, original, release, params, ctx):
        values, groups = release.group_values, release.groups
        qis = [c for c in release.quasi_identifiers if values is not None and c in values.columns]
        if groups is None or not qis or not len(groups):
            return 0.0  # no group written * in every quasi-identifier: no record is suppressed
        starred = np.logical_and.reduce([np.array([v is SUPPRESSED for v in values[c]], dtype=bool) for c in qis])
        return float(starred[np.asarray(groups)].mean())


@hookimpl
def veil_register_metrics():
    return [Loss, Entropy, Precision, Height, Suppressed]
