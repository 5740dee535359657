"""The papers' no-privacy baseline: release every feature (every non-identifier column).

Paper 000 (Tables 4–6, "Full Feature Set"). With a privacy model it does not try to satisfy it:
the release is checked and refused when it fails, as for any method.
"""

from __future__ import annotations

from veil.engine import BINARY, SETS, TABLE, Algorithm, SetValued, feature_subset, form_of, grouped_sets, hookimpl


class AllFeatures(Algorithm):
    name = "all-features"
    title = "All features (no privacy)"
    paper = "000_0106b4def2026c16"
    description = "Releases every non-identifier column unchanged; the baseline every method is compared to."
    accepts = (TABLE, BINARY, SETS)
    baseline = True
    Params = None

    def run(self, data, model, params, ctx):
        ctx.progress(0.0, "selecting all features")
        note = "all features released" + ("" if model else "; no privacy model was applied")
        if form_of(data) == SETS or (form_of(data) == BINARY and data.baskets):
            # every record's items as they are, in O(items held): records with the same items form a group
            sets = data if form_of(data) == SETS else SetValued.from_binary(data)
            groups, distinct = sets.distinct()
            ctx.progress(1.0)
            return grouped_sets(distinct, groups, notes=(note,))
        if form_of(data) == BINARY:
            selected = list(range(data.n_features))
        else:
            target = data.schema.target
            selected = [c for c in data.released_columns() if c != target]
        ctx.progress(1.0)
        return feature_subset(data, selected, notes=(note,))


@hookimpl
def veil_register_algorithms():
    return [AllFeatures]
