"""k-anonymity: every combination of quasi-identifier values occurs at least k times.

On a binary release (feature selection, paper 000 §3) the quasi-identifiers are the released
features and the combinations are the distinct row vectors, zeros included.

``k-anonymity-subsets`` asks it of every combination of at most m quasi-identifiers, each on its own
(the guarantee sdcMicro's ``kAnon(…, combs = m)`` makes: docs/models.md#k-anonymity-on-every-m-quasi-identifiers).
"""

from __future__ import annotations

from dataclasses import dataclass

from veil.engine import (
    BadInput,
    GroupSizeModel,
    Judgement,
    KAnonymityConstraint,
    MemoryCost,
    hookimpl,
    param,
)


@dataclass(frozen=True)
class KParams:
    k: int = param(5, minimum=1, help="smallest allowed size of a group of indistinguishable records")


class KAnonymity(GroupSizeModel):
    name = "k-anonymity"
    title = "k-anonymity"
    paper = "000_0106b4def2026c16"
    description = "Every record shares its quasi-identifier values with at least k−1 others."
    Params = KParams
    # the group sizes, group by group, and on binary data the features that may be released together
    judges = (Judgement.GROUP_SIZE, Judgement.GROUPS, Judgement.FEATURE_SETS)
    preferred = True  # the model a new configuration starts with: the one every data holder knows
    caveats = (
        "k-anonymity hides who a record belongs to, not what a group has in common: when everyone in a "
        "group shares a sensitive value (a diagnosis, say), finding the group reveals it. l-diversity or "
        "t-closeness protect sensitive columns.",
    )

    def monotonicity(self, params) -> str:
        return "suppression"  # a group holding k records still holds them when more join it

    def summary(self, params, verdict):
        smallest = int(verdict.worst) if len(verdict.values) else 0
        if verdict.holds:
            return f"holds: the smallest group has {smallest} record{'' if smallest == 1 else 's'} (k = {params.k})"
        failing = verdict.failing_records
        failing = int(verdict.values[~verdict.ok].sum()) if failing is None else failing
        n = int(verdict.values.sum()) if verdict.records is None else verdict.records
        return (
            f"fails: {failing} of {n} records are in groups smaller than k = {params.k} "
            f"(smallest group: {smallest})"
        )  # the engine lists the failing records themselves

    @staticmethod
    def explain(params: dict, holds: bool, value) -> str:
        """The verdict in one sentence for the report's headline."""
        k = int(params.get("k", 0))
        if not holds:
            return (
                f"k-anonymity with k = {k} does not hold: some records share their quasi-identifiers with "
                f"fewer than {k - 1} others."
            )
        if k <= 1:
            return (
                "k-anonymity with k = 1 holds, which protects nothing: a record may be the only one with its "
                "quasi-identifiers."
            )
        others = "1 other" if k == 2 else f"{k - 1} others"
        return f"k-anonymity with k = {k} holds: every record shares its quasi-identifiers with at least {others}."

    def selection_constraint(self, matrix, params):
        if params.k > matrix.n_rows:
            raise BadInput(f"k = {params.k} is larger than the number of records ({matrix.n_rows})")
        return KAnonymityConstraint(matrix, params.k)


@dataclass(frozen=True)
class SubsetParams:
    k: int = param(5, minimum=1, help="smallest allowed size of a group on any combination of the columns")
    combinations: int = param(
        3,
        minimum=1,
        help="the most quasi-identifiers an intruder is assumed to know: every combination of at most this many "
        "is k-anonymous on its own (sdcMicro's combs); the number of quasi-identifiers or more: all of them together",
    )


class KAnonymitySubsets(GroupSizeModel):
    name = "k-anonymity-subsets"
    title = "k-anonymity on every m quasi-identifiers"
    paper = "sdcmicro"
    description = (
        "Every record shares its values on any m of the quasi-identifiers with at least k−1 others: protection "
        "against an intruder who knows at most m of them, with fewer cells blanked than k-anonymity on all."
    )
    Params = SubsetParams
    judges = (Judgement.COMBINATIONS,)  # only a method that works combination by combination meets it exactly
    # the codes of the quasi-identifiers and, per combination, its patterns and each record's group size
    memory_cost = MemoryCost(per_record=64.0, per_cell=8.0)
    caveats = (
        "An intruder who knows more than m of the quasi-identifiers may single a record out: the release is "
        "k-anonymous on each combination of m of them, not on all of them together.",
        *KAnonymity.caveats,
    )

    def combined_columns(self, params) -> int:
        return params.combinations

    def monotonicity(self, params) -> str:
        return "suppression"  # on every combination, a group holding k records still holds them when more join it

    def summary(self, params, verdict):
        smallest = int(verdict.worst) if len(verdict.values) else 0
        on = f"any {params.combinations} quasi-identifier{'s' if params.combinations != 1 else ''}"
        if verdict.holds:
            records = f"{smallest} record{'' if smallest == 1 else 's'}"
            return f"holds: on {on}, the smallest group has {records} (k = {params.k})"
        failing = int((~verdict.ok).sum())
        return (
            f"fails: {failing} records are in groups smaller than k = {params.k} on {on} (smallest group: {smallest})"
        )

    @staticmethod
    def explain(params: dict, holds: bool, value) -> str:
        k, m = int(params.get("k", 0)), int(params.get("combinations", 0))
        known = f"any {m} of the quasi-identifiers"
        if not holds:
            return (
                f"k-anonymity with k = {k} on {known} does not hold: some records share those values with "
                f"fewer than {k - 1} others."
            )
        return (
            f"k-anonymity with k = {k} holds on {known}: whoever knows at most {m} of a person's quasi-identifiers "
            f"finds at least {k} records that fit. It is not promised on more of them together."
        )

    @classmethod
    def display_title(cls, params: dict) -> str:
        return f"k-anonymity on every {params.get('combinations', 3)} quasi-identifiers"


@hookimpl
def veil_register_privacy_models():
    return [KAnonymity, KAnonymitySubsets]
