"""The utility metric of a set-valued grouped release: its information loss (the GCP of
docs/reference.md#set-valued-data)."""

from __future__ import annotations

from veil.engine import CHEAP, SETS, Metric, hookimpl

from ._grouping import PAPER, information_loss


class SetGcp(Metric):
    cost = CHEAP
    name = "gcp"
    title = "Global certainty penalty (GCP)"
    paper = PAPER
    description = (
        "Information lost by a grouped release, 0 (none) to 1 (everything): for set-valued data the "
        "fraction of items suppressed (docs/reference.md#set-valued-data)."
    )
    higher_is_better = False
    category = "utility"
    accepts = (SETS,)
    requires = "set-groups"

    def compute(self, original, release, params, ctx):
        if release.sets is None or release.groups is None or not hasattr(original, "item_names"):
            return float("nan")
        return information_loss(original, release.groups, release.sets)


@hookimpl
def veil_register_metrics():
    return [SetGcp]
