"""β-likeness (Cao and Karras, "Publishing Microdata with a Robust Privacy Guarantee", VLDB 2012;
docs/reference.md#presence-map-and-risk-models).

A group's share p_v of a sensitive value v may exceed the table's share q_v by a bounded *relative*
gain: (p_v − q_v) / q_v ≤ β for every v with p_v > q_v (basic β-likeness). The enhanced variant
bounds the gain of a frequent value more tightly, by min(β, −ln q_v), so a value held by most of the
table cannot become certain in a group.

Both conditions read p_v ≤ q_v · (1 + bound_v): linear in p_v, so a group made of passing groups
passes (its p_v is their size-weighted mean).

>>> import numpy as np
>>> beta_values(np.array([[0.5, 0.5]]), np.array([0.25, 0.75]), "basic").tolist()
[1.0]
>>> beta_values(np.array([[0.5, 0.5]]), np.array([0.25, 0.75]), "enhanced").tolist()  # 1 > −ln 0.25? no: 1 ≤ 1.386
[1.0]
>>> beta_values(np.array([[0.0, 1.0]]), np.array([0.25, 0.75]), "enhanced").tolist()  # 1/3 > −ln 0.75 = 0.288
[inf]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import GroupVerdict, Judgement, MemoryCost, PrivacyModel, hookimpl, param

_TOL = 1e-12  # floating-point slack: a group exactly at the bound passes
VARIANTS = ("basic", "enhanced")


@dataclass(frozen=True)
class BetaParams:
    beta: float = param(
        1.0,
        minimum=0,
        exclusive_minimum=True,
        help="largest allowed relative gain (p − q) / q of a sensitive value's share in a group "
        "over its share q in the whole table",
    )
    variant: str = param(
        "basic",
        choices=VARIANTS,
        help="basic: every gain at most β; enhanced: at most min(β, −ln q), tighter for values most of the table holds",
    )


def gain_bounds(q: np.ndarray, beta: float, variant: str) -> np.ndarray:
    """Each sensitive value's largest allowed relative gain: β, or min(β, −ln q_v) (enhanced)."""
    q = np.asarray(q, dtype=float)
    if variant == "basic":
        return np.full(q.shape, float(beta))
    with np.errstate(divide="ignore"):
        return np.minimum(float(beta), -np.log(np.where(q > 0, q, 1.0)))


def beta_values(p: np.ndarray, q: np.ndarray, variant: str) -> np.ndarray:
    """Each group's smallest β under which it passes: its largest relative gain max_v (p_v − q_v) / q_v
    over the values with p_v > q_v (0 when none gains); enhanced: the same, or ∞ when some value
    gains more than −ln q_v, which no β allows."""
    p = np.atleast_2d(np.asarray(p, dtype=float))
    q = np.asarray(q, dtype=float)
    gain = np.where((p > q) & (q > 0), (p - q) / np.where(q > 0, q, 1.0), 0.0)
    worst = gain.max(axis=1) if p.shape[1] else np.zeros(p.shape[0])
    if variant == "enhanced":
        cap = gain_bounds(q, np.inf, variant)
        beyond = (gain > cap * (1 + _TOL) + _TOL).any(axis=1)
        worst = np.where(beyond, np.inf, worst)
    return worst


class BetaLikeness(PrivacyModel):
    name = "beta-likeness"
    title = "β-likeness"
    paper = "cao-karras"
    description = (
        "No sensitive value is much more frequent in any group than in the whole table: its share may "
        "grow by at most a factor 1 + β (enhanced: 1 + min(β, −ln q), tighter for common values)."
    )
    Params = BetaParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = False
    needs_sensitive = True
    measure = "smallest β the groups meet (largest relative gain)"
    memory_cost = MemoryCost(per_record=48.0, per_cell=0.0, per_record_distinct=16.0)  # the G × S counts
    caveats = (
        "β-likeness bounds how much more frequent a sensitive value becomes in a group, not how much rarer: "
        "learning that a value is less likely is not limited.",
    )

    def monotonicity(self, params) -> str:
        return "generalisation"  # p_v ≤ q_v (1 + bound_v) is linear in p_v: a union of passing groups passes

    def necessary_groups(self, view, params):
        # the shares of the values a group holds sum to 1 and each is at most q_v (1 + bound_v), so those
        # values' Σ q_v (1 + bound_v) is at least 1, which only grows as records join
        q = view.q()
        if not (q > 0).all():
            return None
        room = q * (1 + gain_bounds(q, params.beta, params.variant))
        return (view.counts() > 0).astype(float) @ room >= 1 - 1e-9

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        values = beta_values(view.distributions(), view.q(), params.variant)
        return GroupVerdict(values, values <= params.beta * (1 + _TOL) + _TOL, higher_is_safer=False)

    def summary(self, params, verdict):
        what = f"{params.variant} β-likeness with β = {params.beta:g}"
        if verdict.holds:
            return f"holds: {what}; the groups meet β = {verdict.worst:.4g}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (they meet β = {verdict.worst:.4g} at best)"


@hookimpl
def veil_register_privacy_models():
    return [BetaLikeness]
