"""The solution space of a full-domain generalisation: the lattice of level combinations a method
searched, what it learnt of each node and the optimum it chose (docs/anonymisation.md#the-solution-space).

A method that searches such a lattice puts a :class:`SolutionSpace` on its release
(``Release.solution_space``), so the desktop can draw it and release another node without
knowing the method: :meth:`SolutionSpace.params_for` gives the method parameters that apply one
node instead of searching.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


class NodeStatus(IntEnum):
    """What a search knows of one transformation."""

    NOT_CHECKED = 0  # pruned by the metric's bound, or never reached: whether it is a solution is unknown
    NOT_SOLUTION = 1  # evaluated, or below a node that fails a condition every solution meets
    SOLUTION = 2  # evaluated: satisfies the privacy models within the suppression limit

    @property
    def words(self) -> str:
        return {
            NodeStatus.NOT_CHECKED: "not checked",
            NodeStatus.NOT_SOLUTION: "not a solution",
            NodeStatus.SOLUTION: "a solution",
        }[self]


@dataclass(frozen=True)
class SolutionSpace:
    """Nodes of a lattice of generalisation levels (each row of ``levels`` one node: a level per
    column, 0 the values themselves, ``heights`` the top), with each node's :class:`NodeStatus`, its
    metric value and suppressed records where known (NaN and −1 otherwise), and the optimum.

    ``apply`` names the method parameter that applies one transformation, written
    ``COLUMN:LEVEL;…`` (:meth:`params_for`). ``complete`` is False when only the nodes the search
    evaluated are listed (a lattice too large to list every node)."""

    columns: tuple[str, ...]
    heights: tuple[int, ...]
    metric: str
    levels: np.ndarray  # nodes × columns
    status: np.ndarray  # per node, a NodeStatus value
    loss: np.ndarray  # per node, the metric where the node was evaluated as a solution, else NaN
    suppressed: np.ndarray  # per node, records suppressed where evaluated, else -1
    optimum: tuple[int, ...] | None = None
    apply: str = "levels"
    complete: bool = True
    lattice_nodes: int = 0
    limit: int = field(default=0)  # records that may be suppressed
    # the levels the search was allowed, per column (lowest, highest); None: 0 to the height
    lowest: tuple[int, ...] | None = None
    highest: tuple[int, ...] | None = None
    weights: tuple[float, ...] | None = None  # the attributes' weights in the metric (None: equal)
    also_metric: str = ""  # a second metric measured at every solution, shown beside ``metric``
    also: np.ndarray | None = None  # per node, its value at a solution, else NaN

    def __post_init__(self):
        n = len(self.levels)
        if self.levels.ndim != 2 or self.levels.shape[1] != len(self.columns) or len(self.heights) != len(self.columns):
            raise ValueError("a solution space needs one level per column for every node")
        if not (len(self.status) == len(self.loss) == len(self.suppressed) == n):
            raise ValueError("a solution space needs a status, a loss and a suppressed count for every node")
        if self.also is not None and len(self.also) != n:
            raise ValueError("a solution space's second metric needs a value (or NaN) for every node")

    def limits_text(self) -> str:
        """The level limits and weights the search honoured, in words ("" when there were none)."""
        parts = []
        lo = self.lowest or (0,) * len(self.columns)
        hi = self.highest or self.heights
        for c, a, b, top in zip(self.columns, lo, hi, self.heights):
            if (a, b) != (0, top):
                parts.append(f"{c} levels {a}–{b} of 0–{top}")
        if self.weights is not None and len(set(self.weights)) > 1:  # the columns weighing other than 1
            parts.append("weights " + ", ".join(f"{c} {w:g}" for c, w in zip(self.columns, self.weights) if w != 1))
        return "; ".join(parts)

    @property
    def n_nodes(self) -> int:
        return len(self.levels)

    def index(self, levels) -> int | None:
        """The row of the node with these levels, or None when it is not listed."""
        hit = np.flatnonzero((self.levels == np.asarray(levels, dtype=self.levels.dtype)[None, :]).all(axis=1))
        return int(hit[0]) if len(hit) else None

    def height(self) -> np.ndarray:
        """Each node's height in the lattice: the sum of its levels."""
        return self.levels.sum(axis=1)

    def params_for(self, levels) -> dict:
        """The method parameters that release exactly this transformation."""
        return {self.apply: ";".join(f"{c}:{int(l)}" for c, l in zip(self.columns, levels))}

    def describe(self, i: int) -> str:
        """One node in words: its levels, what is known of it and, when known, its metric and suppression."""
        levels = ", ".join(f"{c} {int(l)}" for c, l in zip(self.columns, self.levels[i]))
        status = NodeStatus(int(self.status[i]))
        text = f"{levels}: {status.words}"
        if tuple(int(x) for x in self.levels[i]) == self.optimum:
            text += " (the optimum)"
        if status is NodeStatus.SOLUTION:
            text += f"; {self.metric} {float(self.loss[i]):.4g}"
            if self.also is not None and not np.isnan(self.also[i]):
                text += f" ({self.also_metric} {float(self.also[i]):.4g})"
            text += f"; {int(self.suppressed[i]):,} records suppressed"
        elif int(self.suppressed[i]) >= 0:
            text += f"; {int(self.suppressed[i]):,} records in groups failing the model (limit {self.limit:,})"
        return text

    def frontier(self) -> np.ndarray:
        """Rows of the solutions no other solution beats on both suppressed records and metric (the
        efficient frontier of privacy cost against information loss), by suppressed records."""
        rows = np.flatnonzero(self.status == NodeStatus.SOLUTION)
        if not len(rows):
            return rows
        order = rows[np.lexsort((self.loss[rows], self.suppressed[rows]))]
        keep, best = [], np.inf
        for r in order:
            if self.loss[r] < best:
                keep.append(r)
                best = self.loss[r]
        return np.asarray(keep, dtype=np.int64)
