"""FWELL and Private FWELL (paper 003, docs/reference.md#feature-weighting): feature weights by local learning,
and their
ε-differentially private release.

A data holder who will not release records may still release *which features matter*. Both methods
publish a ``feature-weights`` release: every feature (or the ``top`` m) by name, with its weight and
rank; no record leaves. With a privacy model (k-ac or k-anonymity), they instead release the records
on features tried in weight order, each kept while the model holds (the feature-selection machinery
of paper 000, on the data binarised by its default recipe when it is a table): the model covers
the records, ε covers the order.

The mathematics lives in :mod:`veil.plugins._fwell`; the evaluation metric of the paper
(``weights-accuracy``) in :mod:`.fwell_eval`.
"""

from __future__ import annotations

from dataclasses import dataclass


from veil.engine import (
    BINARY,
    TABLE,
    Algorithm,
    BinaryMatrix,
    Judgement,
    MemoryCost,
    Recipe,
    Table,
    feature_subset,
    feature_weights,
    hookimpl,
    param,
)

from .. import _fwell as core
from .._fwell import fwell_weights, private_fwell_weights, weight_table

PAPER = "003_5ee0bd0faa8a52c8"


# -- parameters -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FwellParams:
    lam: float | None = param(
        None,
        minimum=0,
        exclusive_minimum=True,
        label="λ",
        help="regularisation λ of (1/n)Σ log(1 + exp(−wᵀz)) + (λ/2)‖w‖²; empty = chosen by "
        "5-fold cross-validation from 1e-4, 1e-3, 1e-2, 1e-1, 1",
    )
    solver: str = param(
        "lbfgs",
        choices=("lbfgs", "paper-gd"),
        help="lbfgs: solved to optimality (gradient below 1e-8); paper-gd: the paper's normalised "
        "gradient steps (Algorithm 1, one pass)",
    )
    top: int | None = param(
        None,
        minimum=1,
        help="release only the m highest-weighted features (empty: all); with a privacy "
        "model, release the records on at most m features",
    )


@dataclass(frozen=True)
class PrivateFwellParams:
    epsilon: float = param(
        1.0,
        minimum=0,
        exclusive_minimum=True,
        label="ε",
        help="privacy budget ε of the weights: noise ‖b‖ ~ Gamma(d, 2/(nελ))",
    )
    lam: float = param(
        core.PRIVATE_LAMBDA,
        minimum=0,
        exclusive_minimum=True,
        label="λ",
        help="regularisation λ, fixed in advance (choosing it on the data is not covered by ε); "
        "a larger λ means less noise relative to the weights",
    )
    solver: str = param(
        "lbfgs",
        choices=("lbfgs", "paper-gd"),
        help="lbfgs: the exact minimiser the sensitivity proof needs; paper-gd: the paper's steps "
        "(not a minimiser, so the sensitivity bound is not guaranteed)",
    )
    top: int | None = param(
        None,
        minimum=1,
        help="release only the m highest-weighted features (empty: all); with a privacy "
        "model, release the records on at most m features",
    )


def select_in_order(matrix: BinaryMatrix, model, order: list[int], limit: int | None, ctx) -> list[int]:
    """Features tried in ``order``, each kept while ``model`` holds (at most ``limit``), through the
    model's incremental selection constraint (k-AC, k-anonymity) as in paper 000."""
    constraint = model.plugin.selection_constraint(matrix, model.params)
    for i, f in enumerate(order):
        if i % 64 == 0:
            ctx.progress(0.8 + 0.2 * i / max(len(order), 1), f"{len(constraint.selected)} features kept")
        if limit is not None and len(constraint.selected) >= limit:
            break
        if constraint.feasible(int(f)):
            constraint.add(int(f))
    return constraint.selected


def binary_for_records(data):
    """Records are released on binary features, as paper 000's selectors release them: a Table is
    binarised by its default recipe (one-hot, quantile intervals) first."""
    return Recipe.default_for(data).apply(data) if isinstance(data, Table) else data


def _records_release(data, model, w, limit, details, notes, ctx):
    order = [int(i) for i in core.ranking(w)]
    chosen = select_in_order(data, model, order, limit, ctx)
    details = {**details, "selected_indices": chosen}
    if not chosen:
        notes = (*notes, f"no feature can be released under {model.name}: the release holds the class only")
    return feature_subset(data, chosen, notes=tuple(notes), details=details)


# -- FWELL ----------------------------------------------------------------------------------------------
class Fwell(Algorithm):
    """FWELL (paper 003, Algorithm 1; docs/reference.md#feature-weighting): weights minimising the local-margin
    logistic loss.

    No privacy claim: the weights are computed from every record.
    """

    provides = ("feature-ranking",)

    name = "fwell"
    memory_cost = MemoryCost(fixed=192 * 2**20)  # the neighbour search's distance chunks (working memory)
    title = "FWELL feature weights"
    paper = PAPER
    description = (
        "Weighs every feature by local learning (nearest hit and miss, logistic loss, L2) and releases "
        "the weights and ranking instead of records (paper 003, Algorithm 1). No privacy claim."
    )
    accepts = (TABLE, BINARY)
    needs_labels = True
    satisfies = (Judgement.FEATURE_SETS,)  # with a model: records on the features its selection constraint allows
    Params = FwellParams

    def run(self, data, model, params, ctx):
        data = binary_for_records(data) if model is not None else data
        found = fwell_weights(data, params.lam, params.solver, ctx)
        sol = found.solution
        details = {
            "lambda": found.lam,
            "lambda_source": "user" if params.lam is not None else "cross-validation",
            "lambda_losses": found.lambda_losses,
            "solver": sol.solver,
            "objective": sol.objective,
            "gradient_norm": sol.gradient_norm,
            "iterations": sol.iterations,
            "records": found.n,
            "features": len(found.names),
            "weights": weight_table(found.names, found.w),
        }
        notes = ("FWELL weights computed from every record: this release makes no privacy claim.",)
        ctx.progress(0.8, "FWELL: release")
        if model is not None:
            return _records_release(data, model, found.w, params.top, details, notes, ctx)
        return feature_weights(found.names, found.w, top=params.top, notes=notes, details=details)


class PrivateFwell(Algorithm):
    """Private FWELL (paper 003 §III; docs/reference.md#feature-weighting): FWELL's weights plus noise b with density
    ∝ exp(−(nελ/2)‖b‖) — ‖b‖ ~ Gamma(d, 2/(nελ)) in a uniform direction — for ε-differential privacy of
    the weights (under the assumptions in ``release.details["assumptions"]``).
    """

    provides = ("feature-ranking",)

    name = "private-fwell"
    memory_cost = MemoryCost(fixed=192 * 2**20)  # the neighbour search's distance chunks (working memory)
    title = "Private FWELL (ε-DP feature weights)"
    paper = PAPER
    description = (
        "Releases FWELL's feature weights and ranking with ε-differential privacy (Gamma-norm noise; "
        "paper 003). With a privacy model, also the records on features tried in DP-weight order."
    )
    accepts = (TABLE, BINARY)
    needs_labels = True
    satisfies = (Judgement.FEATURE_SETS,)  # with a model: records on the features its selection constraint allows
    randomised = True
    Params = PrivateFwellParams

    def run(self, data, model, params, ctx):
        data = binary_for_records(data) if model is not None else data
        epsilon = float(params.epsilon)
        noisy, names, details = private_fwell_weights(
            data, epsilon, params.lam, params.solver, model.name if model is not None else None, ctx
        )
        notes = (
            f"Private FWELL: the weights are ε = {epsilon:g}-differentially private under the assumptions "
            f"listed; noise from the {details['noise_source']}.",
            *details["assumptions"],
        )
        if model is not None:
            return _records_release(data, model, noisy, params.top, details, notes, ctx)
        return feature_weights(names, noisy, top=params.top, notes=notes, details=details)


@hookimpl
def veil_register_algorithms():
    return [Fwell, PrivateFwell]
