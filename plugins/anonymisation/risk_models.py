"""Re-identification risk as privacy models (docs/reference.md#presence-map-and-risk-models): the
figures ARX reports, turned into conditions a release must meet.

* ``highest-risk``: every record's prosecutor risk 1 / |its group| is at most the threshold, i.e.
  every group holds at least ⌈1 / threshold⌉ records.
* ``average-risk``: the mean over records of 1 / |its group| (the number of groups divided by the
  number of records) is at most the threshold.
* ``individual-risk``: every record's individual risk (Benedetti and Franconi's, as sdcMicro's
  ``indivRisk`` computes it from the group's sample frequency fk and the sum of its survey weights
  Fk; 1 / fk without a weight column) is at most the threshold.
* ``sample-uniqueness``: the share of the records that are unique in the data on the
  quasi-identifiers (in a group of one) is at most the threshold.
* ``population-uniqueness``: the estimated share of the population that is unique on the
  quasi-identifiers (Pitman, Zayatz, SNB or Dankar et al.'s rule, from the sample's class sizes and
  the sampling fraction) is at most the threshold.

``highest-risk`` and ``individual-risk`` judge each group: a method with a suppression limit
suppresses the groups above the threshold, as ARX suppresses the riskiest groups. ``average-risk``,
``sample-uniqueness`` and ``population-uniqueness`` judge the release as a whole: every group gets
the release's value and the same verdict; they declare ``suppresses_smallest``, so global recoding
with a suppression limit suppresses the fewest smallest groups that make them hold
(docs/reference.md). A method that judges a part of the records (Mondrian's candidate split) judges
that part as if it were the whole; the written release is judged again as a whole before it is
exported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from veil.engine import (
    UNIQUENESS_ESTIMATORS,
    GroupVerdict,
    Judgement,
    MemoryCost,
    PrivacyModel,
    hookimpl,
    individual_risk,
    param,
    population_uniqueness,
)

_TOL = 1e-12


def _threshold(help_text: str, default: float):
    return param(default, minimum=0.0, exclusive_minimum=True, maximum=1.0, help=help_text)


@dataclass(frozen=True)
class HighestRiskParams:
    threshold: float = _threshold(
        "largest allowed re-identification risk of any record, 1 / the size of its group (0.2: groups of at least 5)",
        0.2,
    )


@dataclass(frozen=True)
class AverageRiskParams:
    threshold: float = _threshold(
        "largest allowed mean re-identification risk over the records (groups / records)", 0.05
    )


@dataclass(frozen=True)
class SampleUniquenessParams:
    threshold: float = _threshold(
        "largest allowed share of the records that are unique in the data on the quasi-identifiers", 0.01
    )


@dataclass(frozen=True)
class UniquenessParams:
    threshold: float = _threshold(
        "largest allowed estimated share of the population that is unique on the quasi-identifiers", 0.01
    )
    estimator: str = param(
        "dankar",
        choices=UNIQUENESS_ESTIMATORS,
        help="pitman, zayatz or snb (slide negative binomial); dankar: Dankar et al.'s rule "
        "choosing among them by the sampling fraction",
    )
    sample_fraction: float = param(
        0.1,
        minimum=0.0,
        exclusive_minimum=True,
        maximum=1.0,
        help="the share of the population the data holds (1: the data is the population)",
    )


@dataclass(frozen=True)
class IndividualRiskParams:
    threshold: float = _threshold(
        "largest allowed individual risk of any record (sdcMicro's localSupp threshold, 0.15 there by default)",
        0.1,
    )
    method: str = param(
        "approx",
        choices=("approx", "exact"),
        help="the individual risk of keys seen 3 or more times: sdcMicro's approximation or the exact value",
    )


class _RiskModel(PrivacyModel):
    judges = (Judgement.GROUPS,)  # the groups' sizes
    judges_groups = True
    higher_is_safer = False
    memory_cost = MemoryCost(per_record=24.0, per_cell=0.0)  # group sizes and per-group values

    def summary(self, params, verdict):
        value = verdict.worst
        verb = "holds" if verdict.holds else "fails"
        return f"{verb}: {self.measure} {value:.4g} ({'at most' if verdict.holds else 'above'} {params.threshold:g})"


class HighestRiskModel(_RiskModel):
    name = "highest-risk"
    title = "Highest re-identification risk"
    paper = "el-emam-dankar"
    description = (
        "No record's re-identification risk (1 / the size of its group, the prosecutor's) exceeds the "
        "threshold: every group holds at least 1 / threshold records."
    )
    Params = HighestRiskParams
    measure = "highest re-identification risk"

    def monotonicity(self, params) -> str:
        return "suppression"  # a group of at least 1/threshold records keeps them when others join

    def check_groups(self, view, params):
        risk = 1.0 / np.maximum(view.sizes, 1).astype(float)
        return GroupVerdict(risk, (risk <= params.threshold * (1 + _TOL)) & (view.sizes > 0), higher_is_safer=False)


class IndividualRiskModel(_RiskModel):
    name = "individual-risk"
    title = "Individual risk (survey weights)"
    paper = "benedetti-franconi-1998"
    description = (
        "No record's individual risk exceeds the threshold: the probability that the record is correctly "
        "re-identified, from how many records share its released values (fk) and how many people their "
        "survey weights stand for (Fk), as sdcMicro's indivRisk computes it; 1 / fk without weights."
    )
    Params = IndividualRiskParams
    measure = "highest individual risk"
    reads_weights = True
    caveats = (
        "Individual risk is an expectation under a model of how the sample was drawn (Benedetti and Franconi): "
        "it is as good as the survey weights are; without a column marked weight every record stands for "
        "itself and the risk is 1 / (the size of its group).",
    )

    def monotonicity(self, params) -> str:
        # the risk falls when records join a group (fk and Fk both grow): docs/reference.md
        return "suppression"

    def check_groups(self, view, params):
        fk = np.asarray(view.sizes, dtype=float)
        held = fk > 0
        estimates = view.estimates()
        Fk = fk if estimates is None else np.asarray(estimates, dtype=float)
        risk = np.ones(len(fk))
        risk[held] = individual_risk(
            fk[held], np.maximum(Fk[held], fk[held]), weighted=estimates is not None, method=params.method
        )
        return GroupVerdict(risk, (risk <= params.threshold * (1 + _TOL)) & held, higher_is_safer=False)

    def summary(self, params, verdict):
        return f"{super().summary(params, verdict)} ({params.method})"


def _whole(view, value: float, holds: bool) -> GroupVerdict:
    """Every group carries the release's value and verdict."""
    g = len(view.sizes)
    return GroupVerdict(np.full(g, value), np.full(g, holds), higher_is_safer=False)


class AverageRiskModel(_RiskModel):
    name = "average-risk"
    title = "Average re-identification risk"
    paper = "el-emam-dankar"
    description = (
        "The mean re-identification risk over the records (the number of groups divided by the number "
        "of records, the prosecutor's) is at most the threshold."
    )
    Params = AverageRiskParams
    measure = "average re-identification risk"
    suppresses_smallest = True  # removing a group smaller than the mean lowers the mean risk

    def monotonicity(self, params) -> str:
        # merging groups lowers the number of groups: a release that passes still passes once coarser
        return "generalisation"

    def check_groups(self, view, params):
        sizes = view.sizes
        held = int((sizes > 0).sum())
        records = int(sizes.sum())
        value = held / records if records else math.nan
        return _whole(view, value, bool(records) and value <= params.threshold * (1 + _TOL))


class SampleUniquenessModel(_RiskModel):
    name = "sample-uniqueness"
    title = "Sample uniqueness"
    paper = "el-emam-dankar"
    description = (
        "The share of the records that are unique in the data on the quasi-identifiers (alone in their "
        "group, ARX's sample uniqueness) is at most the threshold."
    )
    Params = SampleUniquenessParams
    measure = "sample uniqueness"
    suppresses_smallest = True  # the uniques are the smallest groups: suppressing them lowers the share

    def monotonicity(self, params) -> str:
        # merging groups never makes a record unique: a release that passes still passes once coarser
        return "generalisation"

    def check_groups(self, view, params):
        sizes = view.sizes
        records = int(sizes.sum())
        value = int(sizes[sizes == 1].sum()) / records if records else math.nan
        return _whole(view, value, bool(records) and value <= params.threshold * (1 + _TOL))


class PopulationUniquenessModel(_RiskModel):
    name = "population-uniqueness"
    title = "Population uniqueness"
    paper = "dankar-uniqueness"
    description = (
        "The estimated share of the population that is unique on the quasi-identifiers is at most the "
        "threshold, estimated from the data's group sizes and the share of the population it holds "
        "(Pitman, Zayatz, SNB or Dankar et al.'s rule)."
    )
    Params = UniquenessParams
    measure = "estimated population uniqueness"
    suppresses_smallest = True  # the estimate is driven by the small groups, the uniques first
    caveats = (
        "Population uniqueness is estimated from a model of how the data was sampled from the population: "
        "it is an expectation under that model, not a count.",
    )
    memory_cost = MemoryCost(fixed=24 * (1 << 20), per_record=24.0, per_cell=0.0)

    def check_groups(self, view, params):
        value, _ = population_uniqueness(view.sizes[view.sizes > 0], params.sample_fraction, params.estimator)
        if not math.isfinite(value):  # no estimate: nothing vouches for the groups
            return _whole(view, math.inf, False)
        return _whole(view, value, value <= params.threshold * (1 + _TOL) + _TOL)

    def summary(self, params, verdict):
        how = f"{params.estimator} estimator, sampling fraction {params.sample_fraction:g}"
        if len(verdict.values) and not math.isfinite(verdict.worst):
            return (
                f"fails: the {params.estimator} estimator finds no estimate on these groups ({how}); "
                f"estimator=dankar falls back to Zayatz's"
            )
        return f"{super().summary(params, verdict)}, {how}"


@hookimpl
def veil_register_privacy_models():
    return [AverageRiskModel, HighestRiskModel, IndividualRiskModel, PopulationUniquenessModel, SampleUniquenessModel]
