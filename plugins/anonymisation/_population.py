"""Each released group's count of matching population records, for the population models
(δ-presence, k-map; docs/reference.md#presence-map-and-risk-models). Registers nothing.

The engine counts a release's groups by the values it shows (:class:`~veil.engine.Population`'s
rule, the same on a run's release and on a written file). :class:`LatticeCounts` counts the classes of every node global recoding judges without going back to
the records: each population record's node is found once per column and level by the same rule, and
a node's class table is matched against the population's combinations of nodes.
"""

from __future__ import annotations

import numpy as np

from veil.engine import BadInput


class LatticeCounts:
    """Population counts of the classes of any node of global recoding's lattice."""

    def __init__(self, population, attrs):
        self.n = population.n_rows
        nodes = []
        for a in attrs:
            codes, _ = population.value_masks(a.name, ["*"])  # distinct values once
            per_level = []
            for level in range(a.height + 1):
                _, masks = population.value_masks(a.name, a.labels[level])
                hits = masks.sum(axis=0)
                if (hits > 1).any():
                    raise BadInput(f"the hierarchy of {a.name!r} has overlapping nodes at level {level}: a population "
                                   f"value matches more than one")
                node = np.where(hits == 1, masks.argmax(axis=0), -1)
                per_level.append(node[codes])
            nodes.append(per_level)
        self.nodes = nodes

    def counts(self, levels, codes: np.ndarray) -> np.ndarray:
        """Per class (columns of ``codes``, one row per quasi-identifier at ``levels``): matching records."""
        pop = np.stack([self.nodes[j][l] for j, l in enumerate(levels)])  # d × population records
        pop = pop[:, (pop >= 0).all(axis=0)]
        if codes.shape[1] == 0:
            return np.zeros(0, dtype=np.int64)
        both = np.concatenate([np.asarray(codes, dtype=np.int64), pop.astype(np.int64)], axis=1)
        _, key = np.unique(both, axis=1, return_inverse=True)
        key = key.ravel()
        tally = np.bincount(key[codes.shape[1]:], minlength=int(key.max()) + 1)
        return tally[key[:codes.shape[1]]].astype(np.int64)
