"""Re-identification risk under the prosecutor model, as ARX reports it.

The prosecutor knows that the person they look for is in the release and knows that person's
quasi-identifier values. Picking at random among the records that match, they re-identify the
person with probability 1 / (size of the record's equivalence class on the quasi-identifiers, or on
the released features of a feature selection). ARX summarises those per-record risks three ways:
the highest risk (1 / smallest class), the average risk (number of classes / number of records) and
the share of records whose risk exceeds a threshold.

Default threshold 0.2: a record is at risk when fewer than 5 records share its values, the k = 5
that Veil's k-anonymity and the papers use by default and a common bound for releases to known
recipients under a data-use agreement. Public releases call for less: EMA's guidance for clinical
reports (policy 0070) uses 0.09, i.e. groups of at least 11.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import CHEAP, MemoryCost, Metric, hookimpl, param, prosecutor_risks as risks_of_sizes


def prosecutor_risks(release) -> np.ndarray:
    """Each record's prosecutor risk: 1 / the size of its equivalence class (the engine's own figure)."""
    return risks_of_sizes(release.linkage_class_sizes())


class _Risk(Metric):
    cost = CHEAP
    category = "privacy"
    higher_is_better = False
    memory_cost = MemoryCost(per_record=64.0, per_cell=16.0)  # the quasi-identifiers' codes while grouped

    def compute(self, original, release, params, ctx):
        if release.n_rows == 0:
            return float("nan")
        return float(self.summarise(prosecutor_risks(release), params))


class HighestRisk(_Risk):
    name = "prosecutor-risk-max"
    title = "Highest re-identification risk"
    description = (
        "1 / the size of the smallest group of records sharing their quasi-identifier values "
        "(prosecutor model, as ARX reports it)."
    )

    def summarise(self, risks, params):
        return risks.max()


class AverageRisk(_Risk):
    name = "prosecutor-risk-avg"
    title = "Average re-identification risk"
    description = (
        "Mean over records of 1 / the size of their group: the number of groups divided by the number "
        "of records (prosecutor model, as ARX reports it)."
    )

    def summarise(self, risks, params):
        return risks.mean()


@dataclass(frozen=True)
class AtRiskParams:
    threshold: float = param(
        0.2,
        minimum=0.0,
        maximum=1.0,
        help="a record is at risk when its re-identification risk exceeds this (0.2: groups smaller than 5)",
    )


class RecordsAtRisk(_Risk):
    name = "records-at-risk"
    title = "Records at risk"
    description = "Share of records whose re-identification risk exceeds the threshold (prosecutor model)."
    Params = AtRiskParams

    def summarise(self, risks, params):
        return np.mean(risks > params.threshold)


@hookimpl
def veil_register_metrics():
    return [HighestRisk, AverageRisk, RecordsAtRisk]
