"""The metrics of paper 004 (docs/reference.md#privacy-aware-evaluation) on a feature-subset release
of a table: PBI, DistP_PBI and the cross-validated accuracy of the class from the released
attributes."""

from __future__ import annotations

from dataclasses import dataclass

from veil.engine import EXPENSIVE, TABLE, BadInput, Metric, Role, Table, form_of, hookimpl, param

from ._cv import CLASSIFIERS, CrossValidation, encode, label_codes
from ._privacy_aware import PAPER, evaluation_frame, pbi, resolve_roles


@dataclass(frozen=True)
class MetricParams:
    classifier: str = param("c4.5", choices=CLASSIFIERS, help="classifier of the cross-validation")
    folds: int = param(10, minimum=2, maximum=20, help="stratified cross-validation folds")
    form: str = param(
        "auto",
        choices=("auto", "sensitive-column", "sensitive-class"),
        help="SA: the column marked sensitive, or the class (C = SA); auto: the marked "
        "column if there is one, else the class",
    )


class _SubsetMetric(Metric):
    """A value of the released attributes of a feature-subset release of a Table.

    A release made by privacy-aware-candidates carries the value it was chosen with (same classifier,
    folds, records and seed) and it is reported as is; any other feature subset is evaluated here.
    Other releases (generalised tables, binary matrices) give NaN.
    """

    accepts = (TABLE,)

    paper = PAPER
    Params = MetricParams
    detail_key = ""
    cost = EXPENSIVE  # cross-validated classifiers on several attribute subsets
    seconds_per_cell = 1.5e-5  # seconds per record and column (the plan's estimate)
    fits_forms = (TABLE,)

    def compute(self, original, release, params, ctx):
        own = _chosen_value(release, self.detail_key)
        if own is not None:
            return own
        if form_of(original) != TABLE or release.selected_features is None:
            return float("nan")
        try:
            roles = resolve_roles(original, _same(original, params.form))
        except BadInput:
            return float("nan")
        subset = [c for c in release.selected_features if c in roles.baseline]
        known = self.known(roles, subset)
        if known is not None:
            return known
        frame = evaluation_frame(original, roles, "drop-rows", 0, int(ctx.seed or 0))
        if len(frame) < params.folds:
            return float("nan")
        kinds = {c.name: c.kind for c in original.schema.columns}
        targets = {roles.target: label_codes(frame[roles.target]), roles.sensitive: label_codes(frame[roles.sensitive])}
        try:
            cv = CrossValidation(
                encode(frame, kinds, roles.baseline),
                targets,
                params.classifier,
                params.folds,
                int(ctx.seed or 0),
                ctx,
                2,
            )
        except BadInput:  # too few records of every class to fill the folds: the value does not apply
            return float("nan")
        return float(self.value(cv, roles, subset))

    def known(self, roles, subset):
        """The value when it needs no classifier, else None."""
        return None

    def value(self, cv, roles, subset):  # pragma: no cover - interface
        raise NotImplementedError


def _same(table: Table, form: str) -> bool:
    if form == "auto":
        return not table.schema.by_role(Role.SENSITIVE)
    return form == "sensitive-class"


def _chosen_value(release, key: str):
    d = release.details or {}
    if "candidates" not in d or "chosen" not in d:
        return None
    if key == "distp_pbi":
        return float(d["baseline"]["distp_pbi"])
    row = next((r for r in d["candidates"] if r["label"] == d["chosen"]), None)
    return None if row is None else float(row[key])


class PbiMetric(_SubsetMetric):
    name = "pbi"
    title = "Privacy Breach Increase (PBI, %)"
    description = (
        "How much easier the released attributes make predicting the sensitive attribute than all "
        "attributes do: (Acc(SA | S) / Acc(SA | BL) − 1) × 100; with C = SA, of the class."
    )
    category = "privacy"
    higher_is_better = False
    detail_key = "pbi"

    def known(self, roles, subset):
        return 0.0 if set(subset) == set(roles.baseline) else None

    def value(self, cv, roles, subset):
        return pbi(cv.accuracy(roles.sensitive, subset).accuracy, cv.accuracy(roles.sensitive, roles.baseline).accuracy)


class DistPPbiMetric(_SubsetMetric):
    name = "distp-pbi"
    title = "DistP_PBI (%)"
    description = (
        "The PBI of an attacker who only guesses the sensitive attribute's most frequent value: the "
        "most privacy a release of these records can offer."
    )
    category = "privacy"
    higher_is_better = False
    detail_key = "distp_pbi"

    def value(self, cv, roles, subset):
        return pbi(cv.majority_share(roles.sensitive), cv.accuracy(roles.sensitive, roles.baseline).accuracy)


class CvAccuracyMetric(_SubsetMetric):
    name = "cv-accuracy"
    title = "Accuracy of the class from the released attributes (%, 10-fold CV)"
    description = "Perf(S): stratified cross-validated accuracy of C4.5 (or naive Bayes) predicting the class."
    category = "utility"
    higher_is_better = True
    detail_key = "perf"

    def value(self, cv, roles, subset):
        return cv.accuracy(roles.target, subset).accuracy


@hookimpl
def veil_register_metrics():
    return [PbiMetric, DistPPbiMetric, CvAccuracyMetric]
