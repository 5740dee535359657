"""Estimates of the share of a population that is unique on the quasi-identifiers, from a sample's
class sizes (docs/reference.md#population-uniqueness): what the privacy model of population
uniqueness judges and ``veil risk`` reports (:func:`population_uniqueness`,
:func:`uniqueness_estimates`).

The sample holds n records in u classes; f_j classes hold j records; π = n / N is the sampling
fraction of a population of N records. Each estimator gives the expected number of population
uniques that the sample's uniques stand for; the model's value is that number divided by N.

* **Zayatz** (1991): the population's class sizes are taken to be distributed as the sample's, and a
  class of size j shows up once in a sample of n drawn from N with hypergeometric probability
  h_j = P(X = 1), X ~ Hypergeometric(N, j, n). A sample unique is then a population unique with
  probability (f_1 h_1) / Σ_j f_j h_j, and the uniques number f_1 · that / π.
* **Pitman** (Hoshino 2001): the classes follow Pitman's sampling formula with parameters θ and α,
  estimated by maximum likelihood from the f_j (the likelihood and its gradient in digamma
  functions, climbed from several starts); the population holds about
  Γ(θ + 1) / Γ(θ + α) · N^α uniques.
* **SNB**, the slide negative binomial (Chen and Keller-McNulty 1998): the population's K non-empty
  classes have sizes 1 + NB(α, β) and the sample draws each record with probability π. Veil solves
  K, α and β by the method of moments from u, f_1 and f_2 (the expected number of classes seen, of
  singletons and of pairs) and counts K · P(F = 1) = K β^α population uniques.
* **Dankar** et al. (2012): Pitman when π ≤ 0.1 (Zayatz when Pitman finds no estimate), else the
  smaller of Zayatz and SNB (Zayatz when SNB finds none).

>>> round(zayatz_uniques({1: 4, 2: 3}, 10, 0.5), 4)  # h_1 = 1/2, h_2 = 10/19: 4 · (2 / (2 + 30/19)) / 0.5
4.4706
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")
UNIQUENESS_ESTIMATORS = ESTIMATORS


def frequencies(sizes) -> dict[int, int]:
    """{j: f_j}, how many classes hold j records, from each class's size."""
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    if not len(sizes):
        return {}
    counts = np.bincount(sizes)
    return {int(j): int(c) for j, c in enumerate(counts) if c}


def population_size(n: int, fraction: float) -> int:
    return int(round(n / fraction))


def zayatz_uniques(freq: dict[int, int], n: int, fraction: float) -> float:
    from scipy import stats  # here: not loaded on importing the engine

    f1 = freq.get(1, 0)
    if not f1:
        return 0.0
    big = population_size(n, fraction)
    h = {j: float(stats.hypergeom.pmf(1, big, j, n)) for j in freq}
    total = sum(f * h[j] for j, f in freq.items())
    if total <= 0:
        return math.nan
    return f1 * (f1 * h[1] / total) / fraction


def _pitman_loglik(theta: float, alpha: float, freq: dict[int, int], u: int, n: int) -> float:
    """ln L of Pitman's sampling formula for u classes of n records with the sizes ``freq``."""
    from scipy import special  # here: not loaded on importing the engine

    r = theta / alpha
    out = (u - 1) * math.log(alpha) + special.gammaln(r + u) - special.gammaln(r + 1)
    out -= special.gammaln(theta + n) - special.gammaln(theta + 1)
    out += sum(f * (special.gammaln(j - alpha) - special.gammaln(1 - alpha)) for j, f in freq.items() if j > 1)
    return float(out)


def _pitman_gradient(theta: float, alpha: float, freq: dict[int, int], u: int, n: int) -> tuple[float, float]:
    """(∂ ln L / ∂θ, ∂ ln L / ∂α) of Pitman's sampling formula."""
    from scipy import special  # here: not loaded on importing the engine

    r = theta / alpha
    spread = special.digamma(r + u) - special.digamma(r + 1)
    d_theta = spread / alpha - (special.digamma(theta + n) - special.digamma(theta + 1))
    d_alpha = (u - 1) / alpha - theta / alpha**2 * spread
    d_alpha -= sum(f * (special.digamma(j - alpha) - special.digamma(1 - alpha)) for j, f in freq.items() if j > 1)
    return float(d_theta), float(d_alpha)


def pitman_parameters(freq: dict[int, int], n: int) -> tuple[float, float] | None:
    """The maximum-likelihood (θ, α) of Pitman's formula with θ > 0 and 0 < α < 1, or None: the
    likelihood climbed from several starts in the coordinates (ln θ, logit α), where it has no bounds."""
    from scipy import optimize, special  # here: not loaded on importing the engine

    u = sum(freq.values())
    if u < 2 or u >= n:
        return None

    def negative(x):
        theta, alpha = math.exp(x[0]), float(special.expit(x[1]))
        value = -_pitman_loglik(theta, alpha, freq, u, n)
        d_theta, d_alpha = _pitman_gradient(theta, alpha, freq, u, n)
        return value, -np.array([d_theta * theta, d_alpha * alpha * (1 - alpha)])

    best = None
    for t0 in (0.1 * u, u, 10.0 * u):
        for a0 in (0.2, 0.5, 0.8):
            try:
                with np.errstate(all="ignore"):
                    res = optimize.minimize(
                        negative,
                        np.array([math.log(t0), special.logit(a0)]),
                        jac=True,
                        method="BFGS",
                        options={"gtol": 1e-8, "maxiter": 500},
                    )
            except (ValueError, FloatingPointError, OverflowError):
                continue
            if np.all(np.isfinite(res.x)) and np.isfinite(res.fun) and (best is None or res.fun < best.fun):
                best = res
    if best is None:
        return None
    return math.exp(best.x[0]), float(special.expit(best.x[1]))


def pitman_uniques(freq: dict[int, int], n: int, fraction: float) -> float:
    from scipy import special  # here: not loaded on importing the engine

    if not freq.get(1, 0):
        return 0.0
    fitted = pitman_parameters(freq, n)
    if fitted is None:
        return math.nan
    theta, alpha = fitted
    big = population_size(n, fraction)
    value = math.exp(special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * math.log(big))
    return value if 0 <= value <= big else math.nan


def _snb_moments(k: float, a: float, b: float, pi: float) -> tuple[float, float, float]:
    """Expected classes seen, singletons and pairs in the sample under the slide negative binomial."""
    d = (1 - b) * (1 - pi)
    denominator = 1 - d
    ratio = (b / denominator) ** a
    seen = k * (1 - (1 - pi) * ratio)
    ones = k * pi * ratio * (1 + a * d / denominator)
    twos = k * pi * pi / 2 * a * (1 - b) * b**a * denominator ** (-(a + 2)) * (2 - (1 - a) * d)
    return seen, ones, twos


def snb_parameters(freq: dict[int, int], fraction: float) -> tuple[float, float, float] | None:
    """(K, α, β) whose expected classes seen, singletons and pairs are the sample's u, f_1 and f_2, or None."""
    from scipy import optimize, special  # here: not loaded on importing the engine

    f1, f2, u = freq.get(1, 0), freq.get(2, 0), sum(freq.values())
    if not f1 or not f2 or fraction >= 1:
        return None
    target = np.array([u, f1, f2], dtype=float)

    def residual(x):
        x = np.clip(x, -50.0, 50.0)  # far outside any fit: keeps exp() finite
        k, a, b = math.exp(x[0]), math.exp(x[1]), special.expit(x[2])
        with np.errstate(all="ignore"):
            out = (np.array(_snb_moments(k, a, b, fraction)) - target) / target
        return np.where(np.isfinite(out), out, 1e6)

    best = None
    for a0 in (0.2, 1.0, 5.0):
        for b0 in (0.1, 0.5, 0.9):
            x0 = np.array([math.log(u / fraction), math.log(a0), special.logit(b0)])
            try:
                with np.errstate(all="ignore"):
                    res = optimize.least_squares(residual, x0, method="lm", xtol=1e-12, ftol=1e-12)
            except (OverflowError, ValueError, ZeroDivisionError):
                continue
            if res.success and np.all(np.isfinite(res.fun)) and (best is None or res.cost < best.cost):
                best = res
    if best is None or best.cost > 1e-10 or np.any(np.abs(best.x) >= 50.0):
        return None
    return math.exp(best.x[0]), math.exp(best.x[1]), float(special.expit(best.x[2]))


def snb_uniques(freq: dict[int, int], n: int, fraction: float) -> float:
    if not freq.get(1, 0):
        return 0.0
    fitted = snb_parameters(freq, fraction)
    if fitted is None:
        return math.nan
    k, a, b = fitted
    value = k * b**a
    return value if 0 <= value <= population_size(n, fraction) else math.nan


def dankar_uniques(freq: dict[int, int], n: int, fraction: float) -> tuple[float, str]:
    """Dankar et al.'s choice: (uniques, the estimator it took)."""
    if not freq.get(1, 0):
        return 0.0, "none (no sample uniques)"
    if fraction <= 0.1:
        value = pitman_uniques(freq, n, fraction)
        if math.isfinite(value):
            return value, "pitman"
        return zayatz_uniques(freq, n, fraction), "zayatz"
    zayatz = zayatz_uniques(freq, n, fraction)
    snb = snb_uniques(freq, n, fraction)
    if math.isfinite(snb) and snb < zayatz:
        return snb, "snb"
    return zayatz, "zayatz"


def population_uniqueness(sizes, fraction: float, estimator: str) -> tuple[float, str]:
    """(estimated share of the population unique on the quasi-identifiers, the estimator used) from
    the sample's class sizes. With π = 1 the sample is the population: its share of uniques."""
    freq = frequencies(sizes)
    n = sum(j * f for j, f in freq.items())
    if not n:
        return 0.0, estimator
    if fraction >= 1:
        return freq.get(1, 0) / n, "the sample is the population"
    if estimator == "dankar":
        uniques, used = dankar_uniques(freq, n, fraction)
    else:
        uniques = {"pitman": pitman_uniques, "zayatz": zayatz_uniques, "snb": snb_uniques}[estimator](freq, n, fraction)
        used = estimator
    return uniques / population_size(n, fraction), used


@dataclass(frozen=True)
class UniquenessEstimate:
    """One estimator's answer: the share of the population unique on the quasi-identifiers, how many
    people that is (the share times the population's size n / π), and the estimator that gave it
    (Dankar et al.'s rule names the one it chose); ``share`` is NaN where the estimator finds none."""

    estimator: str
    share: float
    uniques: float
    used: str


def uniqueness_estimates(sizes, fraction: float) -> list[UniquenessEstimate]:
    """Every estimator's :class:`UniquenessEstimate` from the sample's class sizes and the sampling
    fraction π (0 < π ≤ 1)."""
    freq = frequencies(sizes)
    n = sum(j * f for j, f in freq.items())
    big = population_size(n, fraction) if n else 0
    out = []
    for estimator in ESTIMATORS:
        share, used = population_uniqueness(sizes, fraction, estimator)
        out.append(UniquenessEstimate(estimator, share, share * big if math.isfinite(share) else math.nan, used))
    return out
