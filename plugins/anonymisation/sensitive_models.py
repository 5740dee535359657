"""Privacy models on the sensitive values of equivalence groups: l-diversity, t-closeness and
δ-disclosure (docs/reference.md#anonymising-tables, paper 001).

Each judges every group at once from a :class:`~veil.engine.GroupView`: the G × S matrix of sensitive
counts per group (``view.counts()``), the groups' distributions P_g and the whole table's
distribution Q. The same call answers Mondrian's "may this split stand?" and ``veil verify`` on a
written file (groups = records equal on the written quasi-identifiers).

>>> import numpy as np
>>> q = np.array([0.5, 0.5])
>>> float(js_divergence(np.array([[1.0, 0.0]]), q)[0]).__round__(4)
0.2158
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import BadInput, GroupVerdict, Judgement, PrivacyModel, hookimpl, param

_TOL = 1e-12  # floating-point slack: a group exactly at the bound passes


# ---------------------------------------------------------------------------------- distances
def _kl_terms(p: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Σ p ln(p / m) along the last axis, with 0 · ln 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / np.where(m > 0, m, 1.0)), 0.0)
    return terms.sum(axis=-1)


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen–Shannon divergence (natural log) of each row of ``p`` to ``q``: ½[KL(P,M) + KL(Q,M)],
    M = ½(P + Q). Bounded by ln 2 (docs/reference.md#anonymising-tables)."""
    p = np.atleast_2d(np.asarray(p, dtype=float))
    q = np.broadcast_to(np.asarray(q, dtype=float), p.shape)
    m = 0.5 * (p + q)
    return 0.5 * (_kl_terms(p, m) + _kl_terms(q, m))


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Earth mover's distance with equal ground distance (categorical): ½ Σ |P − Q|."""
    p = np.atleast_2d(np.asarray(p, dtype=float))
    return 0.5 * np.abs(p - np.asarray(q, dtype=float)).sum(axis=-1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Earth mover's distance with ordered ground distance |i − j| / (m − 1) (numeric values in
    ascending order; Li et al. 2007): Σ_i |Σ_{j≤i} (P_j − Q_j)| / (m − 1)."""
    p = np.atleast_2d(np.asarray(p, dtype=float))
    m = p.shape[-1]
    if m <= 1:
        return np.zeros(p.shape[0])
    return np.abs(np.cumsum(p - np.asarray(q, dtype=float), axis=-1)[:, :-1]).sum(axis=-1) / (m - 1)


def max_log_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """max over s with P(s) > 0 of ln(P(s) / Q(s)): the one-sided δ-disclosure of each row."""
    p = np.atleast_2d(np.asarray(p, dtype=float))
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, np.log(np.where(p > 0, p, 1.0) / np.where(q > 0, q, 1.0)), -np.inf)
    return ratio.max(axis=-1) if p.shape[-1] else np.zeros(p.shape[0])


# ---------------------------------------------------------------------------------- l-diversity
VARIANTS = ("probabilistic", "distinct", "entropy", "recursive")


@dataclass(frozen=True)
class LParams:
    l: float = param(2.0, minimum=1, help="how many well-represented sensitive values each group needs")
    variant: str = param("probabilistic", choices=VARIANTS,
                         help="probabilistic: no value above 1/l of a group (the paper's); distinct: at least l "
                              "values; entropy: entropy at least ln l; recursive (c,l): the most frequent value "
                              "below c times the l-th and rarer ones together")
    c: float = param(1.0, minimum=0, exclusive_minimum=True,
                     help="the c of recursive (c, l)-diversity (ignored by the other variants)")


def l_values(counts: np.ndarray, variant: str, c: float = 1.0) -> np.ndarray:
    """Each group's effective l (higher is safer) under ``variant``, from its sensitive counts.

    probabilistic: 1 / max_s P_g(s); distinct: number of values present; entropy: exp(H(P_g));
    recursive: the largest l for which r_1 < c (r_l + … + r_m) holds (r sorted descending, 0 if none).
    """
    counts = np.asarray(counts, dtype=float)
    sizes = counts.sum(axis=1)
    if variant == "probabilistic":
        top = counts.max(axis=1) if counts.shape[1] else np.zeros(len(counts))
        with np.errstate(divide="ignore"):
            return np.where(top > 0, sizes / np.maximum(top, 1e-300), 0.0)
    if variant == "distinct":
        return (counts > 0).sum(axis=1).astype(float)
    if variant == "entropy":
        p = counts / np.maximum(sizes, 1)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
        return np.exp(h)
    if variant == "recursive":
        r = -np.sort(-counts, axis=1)
        tails = np.cumsum(r[:, ::-1], axis=1)[:, ::-1]  # tails[:, j] = r_{j+1} + … + r_m (0-based j)
        with np.errstate(over="ignore"):  # c of 1e308: the product is inf, and (c, l) holds
            holds = r[:, :1] < c * tails  # whether (c, j+1) holds
        holds &= tails > 0
        # the largest l with holds: holds is monotone (tails shrink), so count the leading Trues
        return np.cumprod(holds, axis=1).sum(axis=1).astype(float)
    raise BadInput(f"unknown l-diversity variant {variant!r}; choose one of {', '.join(VARIANTS)}")


def l_holds(counts: np.ndarray, variant: str, l: float, c: float = 1.0) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    sizes = counts.sum(axis=1)
    if variant == "probabilistic":  # max P ≤ 1/l, without dividing
        top = counts.max(axis=1) if counts.shape[1] else np.zeros(len(counts))
        with np.errstate(over="ignore"):  # l of 1e308: the product is inf, and l-diversity fails
            return (top * l <= sizes * (1 + _TOL)) & (sizes > 0)
    if variant == "entropy":
        return l_values(counts, variant) >= l * (1 - _TOL)
    return l_values(counts, variant, c) >= l - _TOL


class LDiversity(PrivacyModel):
    name = "l-diversity"
    title = "l-diversity"
    paper = "001_f1ec36403a5884c8"
    description = ("Every group of indistinguishable records holds at least l well-represented sensitive values, "
                   "so finding someone's group does not reveal their sensitive value.")
    Params = LParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = True
    needs_sensitive = True
    measure = "effective l"
    caveats = ("l-diversity bounds what can be guessed inside a group, not how far a group's sensitive values are "
               "from the whole table's: a group with many cancer diagnoses is still l-diverse (t-closeness "
               "bounds that).",)

    def monotonicity(self, params) -> str:
        # l distinct values stay when any records join; the other variants hold for a union of
        # passing groups (a mixture's largest share, its entropy, and recursive (c, l) as
        # Machanavajjhala et al. prove), not when a failing group joins a passing one
        return "suppression" if params.variant == "distinct" else "generalisation"

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        if params.variant in ("distinct", "recursive") and not float(params.l).is_integer():
            raise BadInput(f"{params.variant} l-diversity needs a whole number l, got {params.l}")
        counts = view.counts()
        return GroupVerdict(l_values(counts, params.variant, params.c),
                            l_holds(counts, params.variant, params.l, params.c), higher_is_safer=True)

    def summary(self, params, verdict):
        worst = verdict.worst
        what = f"{params.variant} l-diversity with l = {params.l:g}" + (
            f", c = {params.c:g}" if params.variant == "recursive" else "")
        if verdict.holds:
            return f"holds: {what}; the least diverse group has effective l {worst:.4g}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (least diverse: effective l {worst:.4g})"


# ---------------------------------------------------------------------------------- t-closeness
@dataclass(frozen=True)
class TParams:
    t: float = param(0.2, minimum=0, help="largest allowed distance between a group's sensitive distribution "
                                          "and the whole table's")
    distance: str = param("js", choices=("js", "emd"),
                          help="js: Jensen–Shannon divergence (the paper's, at most ln 2); emd: earth mover's "
                               "distance (equal ground distance for categories, ordered for numbers)")


def t_values(view, distance: str) -> np.ndarray:
    p, q = view.distributions(), view.q()
    if distance == "js":
        return js_divergence(p, q)
    return emd_ordered(p, q) if view.numeric else emd_equal(p, q)


class TCloseness(PrivacyModel):
    name = "t-closeness"
    title = "t-closeness"
    paper = "001_f1ec36403a5884c8"
    description = ("Every group's distribution of the sensitive value lies within distance t of the whole table's, "
                   "so finding someone's group teaches little beyond what the table as a whole says.")
    Params = TParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = False
    needs_sensitive = True
    measure = "distance to the table's distribution"

    def monotonicity(self, params) -> str:
        return "generalisation"  # both distances are convex in P: a union's is at most its parts' largest

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        d = t_values(view, params.distance)
        return GroupVerdict(d, d <= params.t + _TOL, higher_is_safer=False)

    def summary(self, params, verdict):
        what = f"t-closeness with t = {params.t:g} ({params.distance.upper()})"
        if verdict.holds:
            return f"holds: {what}; the farthest group is at {verdict.worst:.4g}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (farthest: {verdict.worst:.4g})"


# ---------------------------------------------------------------------------------- δ-disclosure
@dataclass(frozen=True)
class DeltaParams:
    delta: float = param(1.0, minimum=0, help="largest allowed ln(P_group(s) / P_table(s)) for any sensitive value s")


class DeltaDisclosure(PrivacyModel):
    name = "delta-disclosure"
    title = "δ-disclosure (semantic privacy)"
    paper = "001_f1ec36403a5884c8"
    description = ("No sensitive value is more than e^δ times as frequent in any group as in the whole table "
                   "(one-sided; see caveats).")
    Params = DeltaParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = False
    needs_sensitive = True
    measure = "largest log-ratio to the table's distribution"
    caveats = ("One-sided δ-disclosure (docs/reference.md): only values more frequent in a group than in the "
               "table count. Brickell and Shmatikov's two-sided bound also limits values rarer in a group, "
               "and cannot hold once a group lacks a value, which contradicts paper 001's curves.",)

    def monotonicity(self, params) -> str:
        return "generalisation"  # a union's P(s) / Q(s) is a weighted mean of its parts'

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        d = max_log_ratio(view.distributions(), view.q())
        return GroupVerdict(d, d <= params.delta + _TOL, higher_is_safer=False)

    def summary(self, params, verdict):
        what = f"δ-disclosure with δ = {params.delta:g}"
        if verdict.holds:
            return f"holds: {what}; the largest log-ratio is {verdict.worst:.4g}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (largest log-ratio: {verdict.worst:.4g})"


@hookimpl
def veil_register_privacy_models():
    return [LDiversity, TCloseness, DeltaDisclosure]
