"""Each released group's count of matching population records, for the population models
(δ-presence, k-map; docs/reference.md#presence-map-and-risk-models). Registers nothing.

The engine counts a release's groups by the values it shows (:class:`~veil.engine.Population`'s
rule, the same on a run's release and on a written file). :class:`LatticeCounts` counts the classes of every node
global recoding judges without going back to
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
        codes = []
        for a in attrs:
            c, _ = population.value_masks(a.name, ["*"])  # each record's distinct value
            codes.append(c)
        # the population's distinct combinations of values, each with its count: matched once each
        combos, self.weight = np.unique(
            np.stack(codes) if codes else np.zeros((0, self.n), np.int64), axis=1, return_counts=True
        )
        self.nodes, self.spans = [], []
        for j, a in enumerate(attrs):
            per_level = []
            for level in range(a.height + 1):
                _, masks = population.value_masks(a.name, a.labels[level], a.hierarchy)
                hits = masks.sum(axis=0)
                if (hits > 1).any():
                    raise BadInput(
                        f"the hierarchy of {a.name!r} has overlapping nodes at level {level}: a population "
                        f"value matches more than one"
                    )
                node = np.where(hits == 1, masks.argmax(axis=0), -1)
                per_level.append(node.astype(np.int32)[combos[j]])  # nodes are few: 4 bytes each
            self.nodes.append(per_level)
            self.spans.append(a.n_nodes)

    def counts(self, levels, codes: np.ndarray) -> np.ndarray:
        """Per class (columns of ``codes``, one row per quasi-identifier at ``levels``): matching records."""
        if codes.shape[1] == 0:
            return np.zeros(0, dtype=np.int64)
        pop = np.stack([self.nodes[j][l] for j, l in enumerate(levels)])  # d × population combinations
        held = (pop >= 0).all(axis=0)
        pop, weight = pop[:, held], self.weight[held]
        spans = [self.spans[j][l] for j, l in enumerate(levels)]
        if np.prod([float(x) for x in spans]) < 2.0**62:
            radix = np.cumprod([1] + spans[:0:-1])[::-1].astype(np.int64)  # mixed radix, last column fastest
            pop_key = radix @ pop.astype(np.int64)
            class_key = radix @ np.asarray(codes, dtype=np.int64)
        else:  # too many combinations for one integer: number them jointly
            both = np.concatenate([np.asarray(codes, dtype=np.int64), pop.astype(np.int64)], axis=1)
            _, key = np.unique(both, axis=1, return_inverse=True)
            key = key.ravel()
            class_key, pop_key = key[: codes.shape[1]], key[codes.shape[1] :]
        keys, inverse = np.unique(pop_key, return_inverse=True)
        tally = np.bincount(inverse.ravel(), weights=weight, minlength=len(keys))
        at = np.searchsorted(keys, class_key)
        found = (at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == class_key)
        return np.where(found, tally[np.minimum(at, len(keys) - 1)], 0).astype(np.int64)
