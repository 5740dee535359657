"""k-anonymity by containment (k-AC), paper 000 §3, docs/reference.md#feature-selection.

kac(u, S) = |{v : C(u, S) ⊆ C(v, S)}| counts the records whose 1-features on the released set S
include all of u's; D_S satisfies k-AC when every record has kac ≥ k. Only the 1s are treated as
identifying (a "like", a purchase, a diagnosis code present): a relaxation of k-anonymity that
keeps far more features on sparse data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import (
    BadInput,
    BinaryMatrix,
    Judgement,
    KacConstraint,
    PrivacyModel,
    Verdict,
    hookimpl,
    kac_per_record,
    param,
)


@dataclass(frozen=True)
class KacParams:
    k: int = param(5, minimum=1, help="every record's released 1-features must be contained in at least k records")


def binary_view(frame) -> BinaryMatrix:
    """The released quasi-identifier columns as a BinaryMatrix (refused unless every value is 0/1)."""
    values = frame.to_numpy()
    try:
        numeric = values.astype(float)
    except (TypeError, ValueError):
        bad = next(c for c in frame.columns if not _numeric(frame[c]))
        raise BadInput(f"k-AC needs binary (0/1) columns, but column {bad!r} holds text") from None
    if not np.isin(numeric, (0.0, 1.0)).all():
        r, c = np.argwhere(~np.isin(numeric, (0.0, 1.0)))[0]
        raise BadInput(
            f"k-AC needs binary (0/1) columns, but column {frame.columns[c]!r} row {r + 1} holds {values[r, c]!r}"
        )
    return BinaryMatrix.from_dense(numeric.astype(np.uint8), features=[str(c) for c in frame.columns])


def _numeric(series) -> bool:
    try:
        series.astype(float)
        return True
    except (TypeError, ValueError):
        return False


class KAnonymityByContainment(PrivacyModel):
    name = "k-ac"
    title = "k-anonymity by containment"
    paper = "000_0106b4def2026c16"
    description = (
        "Every record's set of released 1-features is contained in the 1-features of at least k "
        "records (itself included)."
    )
    Params = KacParams
    judges = (Judgement.CONTAINMENT, Judgement.FEATURE_SETS)

    def check(self, release, params):
        n = release.n_rows
        if params.k > n:
            raise BadInput(f"k = {params.k} is larger than the number of records ({n})")
        matrix = binary_view(release.quasi_identifier_frame())
        per_record = kac_per_record(matrix, list(range(matrix.n_features)))
        value = int(per_record.min()) if n else 0
        failing = np.flatnonzero(per_record < params.k)
        if len(failing) == 0:
            msg = f"holds: every record's released features are shared by at least {value} records (k = {params.k})"
        else:
            msg = (
                f"fails: {len(failing)} of {n} records have kac below k = {params.k} "
                f"(smallest kac: {value}; first failing record: row {failing[0] + 1})"
            )
        return Verdict(
            self.name,
            {"k": params.k},
            len(failing) == 0,
            value,
            msg,
            per_record,
            failing,
            measure="containment support",
        )

    @staticmethod
    def explain(params: dict, holds: bool, value) -> str:
        """The verdict in one sentence for the report's headline."""
        k = int(params.get("k", 0))
        if not holds:
            return (
                f"k-anonymity by containment with k = {k} does not hold: some records' released features "
                f"are shared by fewer than {k} records."
            )
        if k <= 1:
            return "k-anonymity by containment with k = 1 holds, which protects nothing."
        return (
            f"k-anonymity by containment with k = {k} holds: the released features of every record are also "
            f"present in at least {k - 1} other records."
        )

    def selection_constraint(self, matrix, params):
        if params.k > matrix.n_rows:
            raise BadInput(f"k = {params.k} is larger than the number of records ({matrix.n_rows})")
        return KacConstraint(matrix, params.k)


@hookimpl
def veil_register_privacy_models():
    return [KAnonymityByContainment]
