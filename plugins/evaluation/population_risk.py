"""Journalist and marketer re-identification risk, as ARX reports them, against the population the
data was drawn from when the run has one (``--population``; docs/reference.md#re-identification-risk).

The journalist does not know whether the person they look for is in the release, only that they are
in the population: a record's risk is 1 / the population records matching its group's released
values. The marketer re-identifies as many records as they can: the expected share is the mean of
those risks over the records. Without a population the data set is its own population and both
equal the prosecutor's figures. A release whose columns are not the population's (the binary
features of a feature selection) has no figure against it (NaN).
"""

from __future__ import annotations


from veil.engine import CHEAP, BadInput, MemoryCost, Metric, hookimpl, population_sizes, reidentification_risk


class _PopulationRisk(Metric):
    cost = CHEAP
    category = "privacy"
    higher_is_better = False
    memory_cost = MemoryCost(per_record=64.0, per_cell=16.0)  # the quasi-identifiers' codes while grouped

    def compute(self, original, release, params, ctx):
        if release.n_rows == 0:
            return float("nan")
        sizes = release.linkage_class_sizes()
        try:
            people = population_sizes(release)
        except BadInput:  # the release's columns are not the population's (binary features of a selection)
            return float("nan")
        return float(self.pick(reidentification_risk(sizes, population_sizes=people)))


class JournalistRisk(_PopulationRisk):
    name = "journalist-risk-max"
    title = "Highest journalist risk"
    description = (
        "1 / the fewest population records matching a released group (the data itself when no population "
        "is given), as ARX reports it."
    )

    def pick(self, risk):
        return risk.journalist_max


class MarketerRisk(_PopulationRisk):
    name = "marketer-risk"
    title = "Marketer risk"
    description = (
        "The expected share of records re-identified by matching every released record against the "
        "population (the data itself when no population is given), as ARX reports it."
    )

    def pick(self, risk):
        return risk.marketer


@hookimpl
def veil_register_metrics():
    return [JournalistRisk, MarketerRisk]
