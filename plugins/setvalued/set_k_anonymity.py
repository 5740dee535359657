"""Set-valued k-anonymity (paper 002): every published item set is shared by at least k records, the
privacy model of PatternKa's and the top-down baseline's grouped releases."""

from __future__ import annotations

from dataclasses import dataclass

from veil.engine import GroupSizeModel, hookimpl, param

from ._grouping import PAPER


@dataclass(frozen=True)
class SetKParams:
    k: int = param(5, minimum=1, help="smallest allowed number of records publishing the same item set")


class SetKAnonymity(GroupSizeModel):
    name = "set-k-anonymity"
    title = "Set-valued k-anonymity"
    paper = PAPER
    description = (
        "Records are grouped into groups of at least k; each record is published as its group's "
        "centre (the items every member holds), so every published set is shared by ≥ k records."
    )
    Params = SetKParams
    caveats = (
        "Every item is treated as quasi-identifying; an item left in a centre is held by every member of "
        "the group, so membership in a group reveals it.",
    )

    def summary(self, params, verdict):
        smallest = int(verdict.worst) if len(verdict.values) else 0
        if verdict.holds:
            return f"holds: every published item set is shared by at least {smallest} records (k = {params.k})"
        return (
            f"fails: {len(verdict.failing_groups)} published item sets are shared by fewer than "
            f"k = {params.k} records (smallest: {smallest})"
        )


@hookimpl
def veil_register_privacy_models():
    return [SetKAnonymity]
