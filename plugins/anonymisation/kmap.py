"""k-map (Sweeney 2001; El Emam and Dankar 2008; docs/reference.md#presence-map-and-risk-models):
every released group matches at least k records of the *population* the data was drawn from, not
only of the data itself (k-anonymity is k-map with the data as its own population).

With a population table (``--population``) each group's count is the population records matching
its released values (docs/reference.md's matching rule). Without one, the count is estimated
from the sampling fraction π the user gives (the share of the population the data holds; never
assumed: without a population or π, k-map is refused): a group of f records in the data stands
for about f / π records of the population, the estimator ARX offers beside its Poisson models
and the one El Emam and Dankar's re-identification risk divides by. A group passes when f / π ≥ k,
i.e. when it holds at least ⌈k · π⌉ records (up to floating-point slack).

>>> import numpy as np
>>> estimated_population(np.array([1, 3, 10]), 0.25).tolist()
[4.0, 12.0, 40.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import BadInput, GroupVerdict, Judgement, MemoryCost, PrivacyModel, hookimpl, param

_TOL = 1e-9


@dataclass(frozen=True)
class KMapParams:
    k: int = param(5, minimum=1, help="smallest allowed number of population records a released group matches")
    sample_fraction: float | None = param(
        None,
        minimum=0.0,
        exclusive_minimum=True,
        maximum=1.0,
        help="the share of the population the data holds, when no population table is given: "
        "required then, never assumed (1: the data is the population, and k-map is k-anonymity)",
    )


def estimated_population(sizes: np.ndarray, fraction: float) -> np.ndarray:
    """Each group's estimated population count f / π."""
    return np.asarray(sizes, dtype=float) / float(fraction)


class KMap(PrivacyModel):
    name = "k-map"
    title = "k-map"
    paper = "el-emam-dankar"
    description = (
        "Every released group matches at least k people of the population the data was sampled from: "
        "counted in the population table when one is given, else estimated from the sampling fraction "
        "(a group of f records stands for f / π people)."
    )
    Params = KMapParams
    judges = (Judgement.GROUPS,)  # the groups' sizes against the population
    judges_groups = True
    higher_is_safer = True
    reads_population = True
    measure = "population records a group matches"
    memory_cost = MemoryCost(per_record=24.0, per_cell=0.0)
    caveats = (
        "k-map estimates each group's population count from the sampling fraction; a population whose "
        "groups are not proportional to the data's can hold fewer matching people.",
    )
    population_replaces = ("sample_fraction",)  # counted in the population table instead
    caveats_with_population = (
        "k-map counted each group's matching people in the population table the run was given; the "
        "guarantee holds for that population, not for people outside it.",
    )

    def monotonicity(self, params) -> str:
        return "suppression"  # a group of at least k·π records keeps them when others join

    def check_groups(self, view, params):
        if view.population is not None:  # counted in the population table
            if params.sample_fraction is not None:
                raise BadInput(
                    "k-map counts each group in the population given, so sample_fraction would not be used; drop it"
                )
            counts = view.population.astype(float)
            return GroupVerdict(counts, counts >= params.k, higher_is_safer=True)
        if params.sample_fraction is None:  # an assumed fraction would make any data pass
            raise BadInput(
                "k-map needs the population the data was drawn from (--population FILE, or \"population\" in a "
                "project's data section) or the share of it the data holds, which Veil never assumes "
                "(k-map:k=…,sample_fraction=0.1: each group then stands for an estimated 10 times its records)"
            )
        estimate = estimated_population(view.sizes, params.sample_fraction)
        return GroupVerdict(estimate, estimate >= params.k * (1 - _TOL), higher_is_safer=True)

    def summary(self, params, verdict):
        what = f"k-map with k = {params.k}"
        people = f"{verdict.worst:.4g} people of the population"
        if params.sample_fraction is not None:  # an estimate from the fraction given, not a count
            what += f", sampling fraction {params.sample_fraction:g} as given"
            people = (
                f"an estimated {verdict.worst:.4g} people of the population (its records / {params.sample_fraction:g})"
            )
        if verdict.holds:
            return f"holds: {what}; the smallest group matches {people}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (the smallest matches {people})"


@hookimpl
def veil_register_privacy_models():
    return [KMap]
