"""The share of the released quasi-identifier cells that keep the input's value exactly."""

from veil.engine import CHEAP, TABLE, Metric, hookimpl


class ExactShare(Metric):
    name = "exact-share"
    title = "Cells kept exact"
    description = "The share of the released quasi-identifier cells neither generalised nor suppressed."
    paper = ""
    cost = CHEAP  # one pass over the records: computed by default for every run it fits
    accepts = (TABLE,)  # a number on a table's release; NaN on binary features
    category = "utility"
    higher_is_better = True

    def compute(self, original, release, params, ctx):
        columns = [c for c in release.quasi_identifiers if c in release.frame.columns]
        if not columns or release.frame.empty:
            return float("nan")
        written = release.frame[columns].astype(str)  # a release keeps each record's index
        before = original.frame[columns].reindex(written.index).astype(str)
        return float((written == before).to_numpy().mean())


@hookimpl
def veil_register_metrics():
    return [ExactShare]
