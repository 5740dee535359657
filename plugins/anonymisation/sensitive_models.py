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

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, GroupVerdict, Judgement, PrivacyModel, hookimpl, kernels_loaded, param, value_label

_TOL = 1e-12  # floating-point slack: a group exactly at the bound passes
_SLACK = 1e-9  # looser still for a necessary condition, which must never turn a passing group away


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


def emd_hierarchical(p: np.ndarray, q: np.ndarray, paths: list[np.ndarray]) -> np.ndarray:
    """Earth mover's distance with the hierarchical ground distance of Li, Li and Venkatasubramanian
    (2007): two values are level(LCA)/H apart. ``paths[ℓ - 1]`` holds each value's ancestor (a node
    number) at level ℓ = 1 … H. With extra(v) = P(v) − Q(v) at a leaf and extra(N) the sum over N's
    children, a node N at level ℓ costs ℓ/H · min(Σ positive extras of its children, Σ |negative
    extras| of its children); the distance is the sum of the costs (docs/reference.md#t-closeness).

    >>> paths = [np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])]  # {a, b}, {c, d} under one root
    >>> float(emd_hierarchical(np.array([[1.0, 0, 0, 0]]), np.full(4, 0.25), paths)[0])
    0.625
    """
    p = np.atleast_2d(np.asarray(p, dtype=float))
    height = len(paths)
    if height == 0 or p.shape[-1] == 0:
        return np.zeros(p.shape[0])
    extra = p - np.asarray(q, dtype=float)  # extras of level 0 (the values themselves)
    below = np.arange(p.shape[-1])  # each value's node one level down (level 0: itself)
    cost = np.zeros(p.shape[0])
    for level, above in enumerate(paths, start=1):
        above = np.asarray(above, dtype=np.int64)
        nodes = int(above.max()) + 1
        parent = np.zeros(extra.shape[-1], dtype=np.int64)  # each node of the level below → its parent
        parent[below] = above
        up = np.zeros((extra.shape[-1], nodes))
        up[np.arange(extra.shape[-1]), parent] = 1.0
        pos, neg = np.clip(extra, 0, None) @ up, np.clip(-extra, 0, None) @ up
        cost += level / height * np.minimum(pos, neg).sum(axis=-1)
        extra, below = extra @ up, above
    return cost


def hierarchy_paths(view, model: str) -> list[np.ndarray]:
    """Each sensitive value's ancestor at every level 1 … H of the column's declared hierarchy (node
    numbers per level), for the hierarchical EMD; BadInput when none was declared."""
    h = _declared(view, model, "hierarchical", "whose levels give the distance between two values")
    values = pd.Series(list(view.values), dtype=object)
    return [pd.factorize(h.generalise_series(values, level), sort=False)[0] for level in range(1, h.height + 1)]


def declared_order(view, model: str) -> np.ndarray:
    """The view's sensitive codes in their declared order: ascending for numbers, else the order its
    hierarchy lists its values in (the hierarchy file's rows); BadInput when neither is known."""
    if view.numeric:
        return np.arange(len(view.values))
    h = _declared(view, model, "ordered", "whose rows list the values in their order")
    rank = {leaf: i for i, leaf in enumerate(h.leaves)}
    missing = [v for v in view.values if value_label(v) not in rank]
    if missing:
        raise BadInput(
            f"{model}: value {value_label(missing[0])!r} of the sensitive column is not in its hierarchy; "
            f"add it to the hierarchy"
        )
    return np.argsort([rank[value_label(v)] for v in view.values], kind="stable")


def _declared(view, model: str, distance: str, what: str):
    if view.hierarchy is None:
        raise BadInput(
            f"{model} with distance={distance} needs a hierarchy for the sensitive column {what}: "
            f"give one (--hierarchy COLUMN=FILE, or the column's “Hierarchy of …” in the desktop), "
            f"or choose distance=emd"
        )
    return view.hierarchy


def max_log_ratio(counts: np.ndarray, q: np.ndarray, sides: int = 1) -> np.ndarray:
    """Of each row of ``counts`` (a group's count of each sensitive value; P(s) its share of the
    group's values): max over s with P(s) > 0 of ln(P(s) / Q(s)) (``sides=1``, the one-sided
    δ-disclosure), or of |ln(P(s) / Q(s))| (``sides=2``, Brickell and Shmatikov's); −∞ for a row holding
    nothing, a value of Q(s) = 0 divided by 1. The logarithm being increasing, it is taken of each row's
    largest and smallest ratio only, and a ratio is its count times 1 / Q(s), divided by the group's
    size once, as :func:`group_log_ratios`'s compiled pass rounds them."""
    c = np.atleast_2d(np.asarray(counts, dtype=float))
    if not c.shape[-1]:
        return np.zeros(c.shape[0])
    scaled = c * _scale(np.asarray(q, dtype=float))
    held = np.maximum(c.sum(axis=-1), 1.0)
    most = scaled.max(axis=-1) / held  # a cell not held has ratio 0, below every held one
    least = np.where(c > 0, scaled, np.inf).min(axis=-1) / held if sides == 2 else None  # ∞ where none held
    return _log_extremes(most, least)


def _scale(q: np.ndarray) -> np.ndarray:
    return 1.0 / np.where(q > 0, q, 1.0)


def _log_extremes(most: np.ndarray, least: np.ndarray | None) -> np.ndarray:
    top = np.log(most, out=np.full(len(most), -np.inf), where=most > 0)
    return top if least is None else np.maximum(top, -np.log(least))  # −ln ∞ = −∞


def group_log_ratios(view, sides: int) -> np.ndarray:
    """:func:`max_log_ratio` of each group of ``view``, in one compiled pass over its counts when numba is
    loaded (the same ratios, rounded the same way; the logarithm libm's, which may differ from NumPy's
    in the last bit: far inside the tolerance a verdict allows)."""
    counts = view.counts()
    kernel = _kernel("_log_ratios") if kernels_loaded() else None
    if kernel is None or not counts.shape[1] or counts.dtype != np.float64:
        return max_log_ratio(counts, view.q(), sides)
    return kernel(counts, _facts(view.q())[1], sides == 2)


_KNOWN_Q: list = []  # (Q, its facts) for the last few Q judged: a search judges thousands of views of each


def _facts(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(Q as floats, 1 / Q where Q > 0 and 1 elsewhere, whether every value has Q > 0), kept for the
    last few Q asked about (one per sensitive column a run judges; the list is replaced whole, never
    changed in place: threads may share it)."""
    known = _KNOWN_Q[0] if _KNOWN_Q else ()
    for seen, facts in known:
        if seen is q:
            return facts
    floats = np.asarray(q, dtype=float)
    facts = (floats, _scale(floats), bool((floats > 0).all()))
    _KNOWN_Q[:] = [((q, facts), *known[:7])]
    return facts


def held_mass(view) -> np.ndarray | None:
    """Each group's Q-mass of the sensitive values it holds (compiled when numba is loaded); None when
    some value has Q = 0."""
    q, _, positive = _facts(view.q())
    if not positive:
        return None
    counts = view.counts()
    kernel = _kernel("_held_mass") if kernels_loaded() else None
    if kernel is None or counts.dtype != np.float64:
        return (counts > 0).astype(float) @ q
    return kernel(counts, q)


def _log_ratios(counts, scale, two_sided):
    """:func:`max_log_ratio` in one pass value by value (a view's counts are often a column-major
    transposition), then a logarithm per row."""
    g, s = counts.shape
    held = np.zeros(g)
    most = np.zeros(g)
    least = np.full(g, np.inf)
    for j in range(s):
        w = scale[j]
        for i in range(g):
            c = counts[i, j]
            held[i] += c
            r = c * w
            most[i] = max(most[i], r)
            if c > 0:
                least[i] = min(least[i], r)
    out = np.empty(g)
    for i in range(g):
        n = max(held[i], 1.0)
        top = np.log(most[i] / n) if most[i] > 0 else -np.inf
        out[i] = max(top, -np.log(least[i] / n)) if two_sided else top
    return out


def _held_mass(counts, q):
    g, s = counts.shape
    mass = np.zeros(g)
    for j in range(s):
        m = q[j]
        for i in range(g):
            mass[i] += m if counts[i, j] > 0 else 0.0
    return mass


_COMPILED: dict = {}


def _kernel(name: str):
    """A compiled kernel (numba, cached beside this module), or None without numba."""
    if not _COMPILED:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - where numba is not installed
            made = dict.fromkeys(("_log_ratios", "_held_mass"))
        else:
            made = {fn.__name__: njit(cache=True, nogil=True)(fn) for fn in (_log_ratios, _held_mass)}
        _COMPILED.update(made)  # all at once: another thread never finds one without the other
    return _COMPILED[name]


# ---------------------------------------------------------------------------------- l-diversity
VARIANTS = ("probabilistic", "distinct", "entropy", "recursive")
ESTIMATORS = ("shannon", "grassberger")


@dataclass(frozen=True)
class LParams:
    l: float = param(2.0, minimum=1, help="how many well-represented sensitive values each group needs")
    variant: str = param(
        "probabilistic",
        choices=VARIANTS,
        help="probabilistic: no value above 1/l of a group (the paper's); distinct: at least l "
        "values; entropy: entropy at least ln l; recursive (c,l): the most frequent value "
        "below c times the l-th and rarer ones together",
    )
    c: float = param(
        1.0,
        minimum=0,
        exclusive_minimum=True,
        help="the c of recursive (c, l)-diversity (ignored by the other variants)",
    )
    estimator: str = param(
        "shannon",
        choices=ESTIMATORS,
        help="how entropy l-diversity estimates a group's entropy: shannon, from the group's "
        "shares (the plug-in estimate); grassberger, Grassberger's estimate, which corrects "
        "the plug-in's bias on small groups (ignored by the other variants)",
    )


def _grassberger_g(n: np.ndarray) -> np.ndarray:
    """G(n) = ψ(n) + ½ (−1)^n (ψ((n+1)/2) − ψ(n/2)), ψ the digamma function (G(2m+1) = G(2m))."""
    from scipy.special import digamma  # here: scipy.special is not loaded to register the plugins

    sign = np.where(n % 2 == 0, 1.0, -1.0)
    return digamma(n) + 0.5 * sign * (digamma((n + 1) / 2) - digamma(n / 2))


def grassberger_entropy(counts: np.ndarray) -> np.ndarray:
    """Grassberger's estimate of each row's entropy (nats) from its counts n_i, N = Σ n_i, in the form
    Stammler et al. (2016) give for entropy l-diversity and ARX computes: Ĥ = G(N) − (1/N) Σ n_i G(n_i)
    (docs/reference.md#l-diversity). A row holding one value has Ĥ = 0.

    >>> round(float(grassberger_entropy(np.array([[2, 1]]))[0]), 4)  # G(3) − (2 G(2) + G(1))/3 = 2/3
    0.6667
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    sizes = counts.sum(axis=1)
    terms = np.where(counts > 0, counts * _grassberger_g(np.where(counts > 0, counts, 1.0)), 0.0).sum(axis=1)
    whole = _grassberger_g(np.maximum(sizes, 1.0))
    return np.where(sizes > 0, whole - terms / np.maximum(sizes, 1), 0.0)


def l_values(counts: np.ndarray, variant: str, c: float = 1.0, estimator: str = "shannon") -> np.ndarray:
    """Each group's effective l (higher is safer) under ``variant``, from its sensitive counts.

    probabilistic: 1 / max_s P_g(s); distinct: number of values present; entropy: exp(H(P_g)), H the
    plug-in (``shannon``) or Grassberger's estimate, then never above the number of values present;
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
        if estimator == "grassberger":  # never weaker than distinct l-diversity (as ARX requires l values)
            if not len(counts):
                return np.zeros(0)
            return np.minimum(np.exp(grassberger_entropy(counts)), (counts > 0).sum(axis=1))
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


def l_holds(counts: np.ndarray, variant: str, l: float, c: float = 1.0, estimator: str = "shannon") -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    sizes = counts.sum(axis=1)
    if variant == "probabilistic":  # max P ≤ 1/l, without dividing
        top = counts.max(axis=1) if counts.shape[1] else np.zeros(len(counts))
        with np.errstate(over="ignore"):  # l of 1e308: the product is inf, and l-diversity fails
            return (top * l <= sizes * (1 + _TOL)) & (sizes > 0)
    if variant == "entropy":
        return l_values(counts, variant, estimator=estimator) >= l * (1 - _TOL)
    return l_values(counts, variant, c) >= l - _TOL


class LDiversity(PrivacyModel):
    name = "l-diversity"
    title = "l-diversity"
    paper = "001_f1ec36403a5884c8"
    description = (
        "Every group of indistinguishable records holds at least l well-represented sensitive values, "
        "so finding someone's group does not reveal their sensitive value."
    )
    Params = LParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = True
    needs_sensitive = True
    measure = "effective l"
    caveats = (
        "l-diversity bounds what can be guessed inside a group, not how far a group's sensitive values are "
        "from the whole table's: a group with many cancer diagnoses is still l-diverse (t-closeness "
        "bounds that).",
    )

    def monotonicity(self, params) -> str:
        # l distinct values stay when any records join; the other variants hold for a union of
        # passing groups (a mixture's largest share, its entropy, and recursive (c, l) as
        # Machanavajjhala et al. prove), not when a failing group joins a passing one. Grassberger's
        # estimate is not a function of the shares alone, so no such promise is made for it.
        if params.variant == "distinct":
            return "suppression"
        if params.variant == "entropy" and params.estimator == "grassberger":
            return ""
        return "generalisation"

    def necessary_groups(self, view, params):
        # every variant but Grassberger's needs l distinct values: exp(H) and 1 / max share are at most
        # their number, and recursive (c, l) reads the l-th most frequent; more records keep them
        if params.variant == "distinct" or (params.variant == "entropy" and params.estimator == "grassberger"):
            return None
        return (view.counts() > 0).sum(axis=1) >= params.l * (1 - _SLACK)

    def infeasible(self, view, params) -> str:
        counts = view.counts().sum(axis=0, keepdims=True)
        distinct = int((counts > 0).sum())
        if params.l > distinct * (1 + _TOL):
            return (
                f"l = {params.l:g} is above the number of distinct sensitive values ({distinct}), so no group "
                f"can hold {params.l:g} well-represented values"
            )
        if params.variant == "probabilistic" and not l_holds(counts, params.variant, params.l).all():
            top = float(counts.max() / counts.sum())
            value = value_label(view.values[int(counts.argmax())]) if view.values else "one value"
            return (
                f"l = {params.l:g} allows no value above 1/l = {1 / params.l:.3g} of a group, but {value!r} is "
                f"{top:.3g} of the whole table, so some group holds at least that share (at most l = {1 / top:.4g})"
            )
        return ""

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        if params.variant in ("distinct", "recursive") and not float(params.l).is_integer():
            raise BadInput(f"{params.variant} l-diversity needs a whole number l, got {params.l}")
        counts = view.counts()
        return GroupVerdict(
            l_values(counts, params.variant, params.c, params.estimator),
            l_holds(counts, params.variant, params.l, params.c, params.estimator),
            higher_is_safer=True,
        )

    def summary(self, params, verdict):
        worst = verdict.worst
        what = (
            f"{params.variant} l-diversity with l = {params.l:g}"
            + (f", c = {params.c:g}" if params.variant == "recursive" else "")
            + (
                " (Grassberger's entropy estimate)"
                if params.variant == "entropy" and params.estimator == "grassberger"
                else ""
            )
        )
        if verdict.holds:
            return f"holds: {what}; the least diverse group has effective l {worst:.4g}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (least diverse: effective l {worst:.4g})"


# ---------------------------------------------------------------------------------- t-closeness
DISTANCES = ("emd", "hierarchical", "ordered", "js")


@dataclass(frozen=True)
class TParams:
    t: float = param(
        0.2,
        minimum=0,
        maximum=1,
        help="largest allowed distance between a group's sensitive distribution and the whole table's "
        "(every distance is at most 1: a larger t would constrain nothing, as ARX's range says)",
    )
    distance: str = param(
        "emd",
        choices=DISTANCES,
        help="emd: earth mover's distance, ordered for numbers and equal between categories (what "
        "ARX and pycanon mean by t); hierarchical: EMD whose distance between two categories "
        "is the level of their lowest common ancestor in the column's hierarchy; ordered: EMD "
        "over the values in order (a category's order is its hierarchy's row order); js: "
        "Jensen–Shannon divergence (Li and Li's trade-off paper, at most ln 2)",
    )


def t_values(view, distance: str, model: str = "t-closeness") -> np.ndarray:
    """Each group's distance to the table's distribution under ``distance`` (docs/reference.md#t-closeness)."""
    p, q = view.distributions(), view.q()
    if distance == "js":
        return js_divergence(p, q)
    if distance == "hierarchical":
        return emd_hierarchical(p, q, hierarchy_paths(view, model))
    if distance == "ordered":
        order = declared_order(view, model)
        return emd_ordered(p[:, order], q[order])
    return emd_ordered(p, q) if view.numeric else emd_equal(p, q)


class TCloseness(PrivacyModel):
    name = "t-closeness"
    title = "t-closeness"
    paper = "001_f1ec36403a5884c8"
    description = (
        "Every group's distribution of the sensitive value lies within distance t of the whole table's, "
        "so finding someone's group teaches little beyond what the table as a whole says."
    )
    Params = TParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = False
    needs_sensitive = True
    measure = "distance to the table's distribution"

    @classmethod
    def reads_sensitive_hierarchy(cls, params) -> bool:
        return params.distance in ("hierarchical", "ordered")  # its levels, or its rows' order

    def monotonicity(self, params) -> str:
        # every distance is convex in P (EMD is a linear programme's optimum, JS a convex function):
        # a union's distance is at most its parts' largest
        return "generalisation"

    def necessary_groups(self, view, params):
        # EMD with equal ground distance is ½ Σ |P − Q|, at least the table's share of the values a group
        # lacks (each moved in whole), which only shrinks as records join
        if params.distance != "emd" or view.numeric:
            return None
        return (view.counts() == 0) @ view.q() <= params.t + _SLACK

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        d = t_values(view, params.distance, self.name)
        return GroupVerdict(d, d <= params.t + _TOL, higher_is_safer=False)

    def summary(self, params, verdict):
        what = f"t-closeness with t = {params.t:g} ({_DISTANCE_WORDS[params.distance]})"
        if verdict.holds:
            return f"holds: {what}; the farthest group is at {_shown(verdict.worst)}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} (farthest: {_shown(verdict.worst)})"


def _shown(value: float) -> str:
    """A distance or log-ratio for a message: 4 significant digits, rounding noise (2.2e-16 for a group
    whose distribution is the table's) shown as the 0 it is."""
    return "0" if abs(value) < _TOL else f"{value:.4g}"


_DISTANCE_WORDS = {"emd": "EMD", "hierarchical": "hierarchical EMD", "ordered": "ordered EMD", "js": "JS"}


# ---------------------------------------------------------------------------------- δ-disclosure
@dataclass(frozen=True)
class DeltaParams:
    delta: float = param(
        1.0,
        minimum=0,
        help="largest allowed |ln(P_group(s) / P_table(s))| for any sensitive value "
        "s a group holds (with sides=1, ln(P_group(s) / P_table(s)) itself)",
    )
    sides: int = param(
        2,
        choices=(2, 1),
        help="2: values rarer in a group than in the table count too (Brickell and Shmatikov's, "
        "as ARX and pycanon compute it); 1: one-sided, only values more frequent in a group "
        "count (Li and Li's trade-off paper)",
    )


class DeltaDisclosure(PrivacyModel):
    name = "delta-disclosure"
    title = "δ-disclosure (semantic privacy)"
    paper = "001_f1ec36403a5884c8"
    description = (
        "No sensitive value a group holds is more than e^δ times as frequent, nor less than e^−δ times as "
        "frequent, in the group as in the whole table (sides=1: only the first, one-sided)."
    )
    Params = DeltaParams
    judges = (Judgement.GROUPS,)  # its sensitive values, group by group
    judges_groups = True
    higher_is_safer = False
    needs_sensitive = True
    measure = "largest log-ratio to the table's distribution"
    caveats = (
        "δ-disclosure judges only the values a group holds: a value the group lacks is not counted "
        "(as ARX and pycanon do).",
        "One-sided δ-disclosure (sides=1) bounds only values more frequent in a group than in the table: "
        "a value far rarer in a group is not limited.",
    )

    @classmethod
    def display_title(cls, params: dict) -> str:
        return "one-sided δ-disclosure" if _one_sided(params) else cls.title

    def monotonicity(self, params) -> str:
        # one-sided: a union's P(s) / Q(s) is a weighted mean of its parts'; two-sided: a part lacking a
        # value pulls the union's ratio below every part's, so merging passing groups may fail
        return "generalisation" if params.sides == 1 else ""

    def necessary_groups(self, view, params):
        # either side bounds each held value's share P(s) ≤ e^δ Q(s); the shares sum to 1, so the values a
        # group holds have Q-mass at least e^−δ, which only grows as records join
        mass = held_mass(view)
        return None if mass is None else mass >= math.exp(-params.delta) * (1 - _SLACK)

    def check_groups(self, view, params):
        view.require_sensitive(self.name)
        d = group_log_ratios(view, params.sides)
        return GroupVerdict(d, d <= params.delta + _TOL, higher_is_safer=False)

    def summary(self, params, verdict):
        what = f"{_sides(params.sides)}δ-disclosure with δ = {params.delta:g}"
        measure = "largest log-ratio" if params.sides == 1 else "largest |log-ratio|"
        if verdict.holds:
            return f"holds: {what}; the {measure} is {_shown(verdict.worst)}"
        return f"fails: {len(verdict.failing_groups)} group(s) break {what} ({measure}: {_shown(verdict.worst)})"

    @staticmethod
    def explain(params: dict, holds: bool, value) -> str:
        sides = int(params.get("sides", 2))
        word = "holds" if holds else "does not hold"
        shown = (
            f" (largest {'|log-ratio|' if sides == 2 else 'log-ratio'} {value:.4g})"
            if isinstance(value, (int, float)) and np.isfinite(value)
            else ""
        )
        return f"{_sides(sides).capitalize()}δ-disclosure with δ = {params.get('delta')} {word}{shown}."


def _one_sided(params: dict) -> bool:
    try:
        return int(params.get("sides", 2)) == 1
    except (TypeError, ValueError):
        return False


def _sides(sides: int) -> str:
    return "one-sided " if int(sides) == 1 else "two-sided "


@hookimpl
def veil_register_privacy_models():
    return [LDiversity, TCloseness, DeltaDisclosure]
