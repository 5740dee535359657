"""k-anonymity: every combination of quasi-identifier values occurs at least k times.

On a binary release (feature selection, paper 000 §3) the quasi-identifiers are the released
features and the combinations are the distinct row vectors, zeros included.
"""

from __future__ import annotations

from dataclasses import dataclass

from veil.engine import BadInput, GroupSizeModel, Judgement, KAnonymityConstraint, hookimpl, param


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
        failing = int(verdict.values[~verdict.ok].sum())
        n = int(verdict.values.sum())
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


@hookimpl
def veil_register_privacy_models():
    return [KAnonymity]
