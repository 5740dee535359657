"""δ-presence (Nergiz, Atzori and Clifton, "Hiding the Presence of Individuals from Shared
Databases", SIGMOD 2007; docs/reference.md#presence-map-and-risk-models).

The data is the research subset T of a public population P that an attacker knows. Seeing a
released group, the attacker learns that each population record matching the group's values is in
T with probability δ = |records of T in the group| / |population records matching the group|. The
release is δ-present when every released group has dmin ≤ δ ≤ dmax: no one's membership of T
is learnt beyond dmax, and (with dmin > 0) no one's absence either.

Only the released groups are judged, as ARX does; a population record matching no released group
is known not to be in T, which dmin does not cover.

Merging passing groups keeps δ ≤ dmax (a mediant of the parts' ratios, over at least as many
population records) but can take it below dmin; and suppressed records, written ``*``, match the
whole population. So the model promises no monotonicity and a search over generalisations does not
prune by it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import BadInput, GroupVerdict, Judgement, MemoryCost, PrivacyModel, hookimpl, param

_TOL = 1e-12


@dataclass(frozen=True)
class PresenceParams:
    dmin: float = param(
        0.0,
        minimum=0.0,
        maximum=1.0,
        help="smallest allowed share of a group's matching population records that are in the data",
    )
    dmax: float = param(
        0.5,
        minimum=0.0,
        maximum=1.0,
        help="largest allowed share of a group's matching population records that are in the data",
    )


def needs_population(view, model: str) -> np.ndarray:
    if view.population is None:
        raise BadInput(
            f"{model} needs the population the data was drawn from, opened beside the data (on the "
            f"command line: --population FILE, or --subset-column NAME marking the data in it; in a study or "
            f"project file: \"population\" in its data section)"
        )
    return view.population


class DeltaPresence(PrivacyModel):
    name = "delta-presence"
    title = "δ-presence"
    paper = "nergiz-presence"
    description = (
        "Whoever knows the population cannot tell whether a person is in the data with a probability "
        "outside [dmin, dmax]: each group's records are that share of the population records matching it."
    )
    Params = PresenceParams
    judges = (Judgement.GROUPS,)  # each group against the population
    judges_groups = True
    higher_is_safer = False
    reads_population = True
    measure = "share of the matching population in the data (δ)"
    memory_cost = MemoryCost(per_record=64.0, per_cell=16.0)  # the population's codes per column beside the data's
    caveats = (
        "δ-presence bounds what the release says about who is in the data, given the population; it says "
        "nothing about sensitive values.",
    )

    def monotonicity(self, params) -> str:
        # Nothing is promised. Merging two groups whose population matches are disjoint keeps δ ≤ dmax
        # (a mediant, over at least as many matches) but can take it below dmin; and the group of
        # suppressed records matches the whole population, overlapping every other group's matches,
        # so a release with suppression can pass where the whole table as one group fails.
        return ""

    def check_groups(self, view, params):
        if params.dmin > params.dmax:
            raise BadInput(f"delta-presence: dmin = {params.dmin:g} is above dmax = {params.dmax:g}")
        population = needs_population(view, self.name).astype(float)
        sizes = view.sizes.astype(float)
        delta = np.where(population > 0, sizes / np.maximum(population, 1), np.inf)
        ok = (delta >= params.dmin - _TOL) & (delta <= params.dmax + _TOL)
        return GroupVerdict(delta, ok, higher_is_safer=False)

    def summary(self, params, verdict):
        what = f"δ-presence with δ in [{params.dmin:g}, {params.dmax:g}]"
        low = float(verdict.values.min()) if len(verdict.values) else float("nan")
        if verdict.holds:
            return f"holds: {what}; the groups' δ run from {low:.4g} to {verdict.worst:.4g}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (δ from {low:.4g} to {verdict.worst:.4g})"


@hookimpl
def veil_register_privacy_models():
    return [DeltaPresence]
