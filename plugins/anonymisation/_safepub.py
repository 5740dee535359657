"""SafePub's parameters: the sampling probability β and the class size k that an (ε, δ)-differentially
private release by sampling, generalisation and suppression needs (docs/reference.md#dp-table-safepub).
Registers nothing.

Li, Qardaji and Su (“On Sampling, Anonymization, and Differential Privacy”, ASIACCS 2012) show that
sampling each record with probability β, generalising with a scheme chosen without looking at the
data, and suppressing every class smaller than k is (ε, δ)-differentially private when β = 1 − e^−ε
and δ ≥ d(k, β, ε) = max_{n ≥ n_m} Σ_{j > γn} f(j; n, β), with γ = (e^ε − 1 + β) / e^ε, n_m = ⌈k/γ − 1⌉
and f the binomial probability. Bild, Kuhn and Prasser (“SafePub: A Truthful Data Anonymization
Algorithm With Strong Privacy Guarantees”, PoPETs 2018) take the smallest such k; the maximum over n
is ended once the tail bound c(n) = exp(−n (γ ln(γ/β) − (γ − β))) falls below the maximum so far (the
Chernoff bound on every later term). The steps and their order are ARX's ``ParameterCalculation``,
which Veil's agree with: ARX's k is one more than the first k whose d falls below δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

DEGREES = {"none": 0.0, "low": 0.2, "low-medium": 0.4, "medium": 0.5, "medium-high": 0.6, "high": 0.8, "complete": 1.0}
MAX_K = 1_000_000  # beyond this k the computation is refused: ε and δ are too small to release anything
MAX_N = 1 << 22  # the binomial tails are computed for at most this many records (two arrays of 32 MiB)


@dataclass(frozen=True)
class Parameters:
    epsilon: float  # the part of ε the release by sampling and suppression spends
    delta: float
    beta: float  # each record is kept with this probability
    k: int  # classes smaller than this are suppressed

    def sentence(self, epsilon_text: str = "") -> str:
        """What a user is told before the run, e.g. "ε = 2, δ = 10⁻⁵: each record kept with probability
        0.865, classes smaller than k = 114 suppressed"; ``epsilon_text`` in place of ε's value (how
        a larger ε is split, this one's part among it)."""
        eps = epsilon_text or f"{self.epsilon:g}"
        return (
            f"ε = {eps}, δ = {_power(self.delta)}: each record kept with probability {self.beta:.3f}, "
            f"classes smaller than k = {self.k} suppressed"
        )


def _power(x: float) -> str:
    exponent = math.log10(x) if x > 0 else 0.0
    if x > 0 and abs(exponent - round(exponent)) < 1e-12 and exponent < -2:
        digits = str(int(round(exponent)))
        return "10" + digits.translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{x:g}"


def beta_of(epsilon: float) -> float:
    """β = 1 − e^−ε."""
    return -math.expm1(-epsilon)


def gamma_of(epsilon: float, beta: float) -> float:
    """γ = (e^ε − 1 + β) / e^ε."""
    power = math.exp(epsilon)
    return (power - 1.0 + beta) / power


class _Sequences:
    """a(n) and c(n) for n = 1 … N, grown on demand (they do not depend on k)."""

    def __init__(self, epsilon: float, beta: float):
        self.epsilon, self.gamma, self.beta = epsilon, gamma_of(epsilon, beta), beta
        self.a = self.c = np.zeros(1)  # index 0 unused
        self.grow(1024)

    def grow(self, size: int) -> None:
        if size > MAX_N:
            raise ValueError(
                f"ε = {self.epsilon:g} is too large: the bound on δ does not settle within {MAX_N:,} records "
                "(SafePub's k and β are for ε up to about 5)"
            )
        n = np.arange(len(self.a), size + 1)
        gamma, beta = self.gamma, self.beta
        from scipy.special import bdtrc  # on first use: registering the plugins imports no SciPy

        a = bdtrc(np.floor(n * gamma), n, beta)  # P(X > ⌊γn⌋), X binomial(n, β)
        c = np.exp(-n * (gamma * math.log(gamma / beta) - (gamma - beta)))
        self.a, self.c = np.concatenate([self.a, a]), np.concatenate([self.c, c])

    def delta(self, k: int) -> float:
        """d(k): the running maximum of a(n) from n_m = ⌈k/γ − 1⌉ up to the first n where it exceeds c(n)."""
        start = max(math.ceil(k / self.gamma - 1.0), 1)
        while True:
            worst = np.maximum.accumulate(self.a[start:])
            done = np.flatnonzero(worst > self.c[start:])
            if len(done):
                return float(worst[done[0]])
            self.grow(2 * (len(self.a) - 1))


def delta_of(k: int, epsilon: float, beta: float) -> float:
    """d(k) for one k (docstring above)."""
    return _Sequences(epsilon, beta).delta(k)


def parameters(epsilon: float, delta: float) -> Parameters:
    """β and k for an (ε, δ) release, as SafePub (and ARX) compute them.

    ARX tries k = 1, 2, … in turn. d(k) is the largest a(n) over n ≥ n_m(k) (the Chernoff bound
    only says where that largest value has been seen), and n_m grows with k, so d never increases
    with k: the first k with d(k) < δ is found by doubling k and then halving the interval, the same
    k in a few dozen evaluations rather than k of them (a large ε needs k in the thousands)."""
    if not epsilon > 0 or not 0 < delta < 1:
        raise ValueError("ε must be above 0 and δ between 0 and 1")
    beta = beta_of(epsilon)
    gamma = gamma_of(epsilon, beta)
    rate = gamma * math.log(gamma / beta) - (gamma - beta)  # c(n) = exp(−n·rate)
    if not rate > 0 or math.log(1 / delta) / rate > MAX_N:  # c(n) reaches δ only beyond MAX_N records
        raise ValueError(
            f"ε = {epsilon:g} is too large for δ = {delta:g}: the bound on δ does not settle within "
            f"{MAX_N:,} records (SafePub's k and β are for ε up to about 5)"
        )
    sequences = _Sequences(epsilon, beta)
    high = 1
    while not sequences.delta(high) < delta:
        if high > MAX_K:
            raise ValueError(f"ε = {epsilon:g} and δ = {delta:g} need classes of more than {MAX_K:,} records")
        high *= 2
    low = high // 2  # d(low) ≥ δ, or low = 0
    while high - low > 1:
        middle = (low + high) // 2
        if sequences.delta(middle) < delta:
            high = middle
        else:
            low = middle
    return Parameters(epsilon, delta, beta, high + 1)  # ARX's loop increments k once more after the test


def level_of(degree: str, height: int) -> int:
    """The level a degree of generalisation gives a hierarchy of ``height``: the degree's share of the
    height, rounded half up (ARX's ``DataGeneralizationScheme``)."""
    return min(max(math.floor(DEGREES[degree] * height + 0.5), 0), height)


# ---------------------------------------------------------------------------------- data-dependent mode
# SafePub's score functions (docs/reference.md#dp-table-safepub), each with its sensitivity: higher is
# better. The names are Veil's metrics they stand for (SafePub's granularity, intensity,
# discernibility, non-uniform entropy and group size).
SCORES = ("loss", "precision", "discernibility", "entropy", "average-class-size")


def sensitivity(score: str, k: int, m: int) -> float:
    """Δ of a score function for classes of at least k records and m quasi-identifiers."""
    if score in ("loss", "precision"):
        return float(m * max(k - 1, 1))
    if score in ("discernibility", "entropy"):
        return 5.0 if k == 1 else k * k / (k - 1) + 1.0
    if score == "average-class-size":
        return 1.0
    raise ValueError(score)


def score_of(score: str, table, attrs, k: int, n: int) -> float:
    """The score of the sample's class table ``table`` (a :class:`._lattice.Classes` at its levels) when
    every class smaller than k is suppressed. ``n`` is the number of records before sampling: the
    records not sampled count as suppressed, as in ARX (a constant for every transformation, which
    the exponential mechanism's probabilities do not see)."""
    size = table.size.astype(np.float64)
    kept = table.size >= k
    suppressed = float(size[~kept].sum()) + (n - float(size.sum()))
    m = len(attrs)
    if score == "average-class-size":
        return float(kept.sum()) + (1.0 if suppressed > 0 else 0.0)
    if score == "discernibility":
        return -(float(np.square(size[kept]).sum()) + n * suppressed) / n
    total = 0.0
    for j, (a, level) in enumerate(zip(attrs, table.levels)):
        codes, weight = table.codes[j, kept], size[kept]
        if score == "loss":  # each kept value's share of the domain, a suppressed one 1
            total += float((a.node_leaves[level][codes] / a.n_leaves) @ weight) + suppressed
        elif score == "precision":  # each kept value's level over the height, a suppressed one 1
            total += (float(weight.sum()) * level / a.height if a.height else 0.0) + suppressed
        elif score == "entropy":  # Σ c_v² over kept values below the root; n for a suppressed or root one
            counts = np.bincount(codes, weights=weight, minlength=a.n_nodes[level])
            root = a.node_leaves[level] == a.n_leaves
            total += float(np.square(counts[~root]).sum()) + n * (float(counts[root].sum()) + suppressed)
        else:
            raise ValueError(score)
    return -total / (n * m) if score == "entropy" else -total


def select(scores: np.ndarray, epsilon: float, delta_score: float, u: float) -> int:
    """The exponential mechanism: index i with probability exp(ε·s_i / 2Δ) / Σ_j exp(ε·s_j / 2Δ),
    ``u`` one number uniform in [0, 1) (computed from the largest exponent down: no overflow)."""
    logits = epsilon * np.asarray(scores, dtype=float) / (2.0 * delta_score)
    weights = np.exp(logits - logits.max())
    cumulative = np.cumsum(weights)
    return min(int(np.searchsorted(cumulative, u * cumulative[-1], side="right")), len(weights) - 1)


def probabilities(scores: np.ndarray, epsilon: float, delta_score: float) -> np.ndarray:
    """The exponential mechanism's probability of each index (what :func:`select` draws from)."""
    logits = epsilon * np.asarray(scores, dtype=float) / (2.0 * delta_score)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


@dataclass
class Walk:
    """What the data-dependent search did: the pivots in the order chosen (the top first), every
    candidate's score, and the best-scored pivot (the one released)."""

    pivots: list
    scores: dict
    best: tuple


def search(top: tuple, score, steps: int, epsilon_step: float, delta_score: float, uniform, check=None) -> Walk:
    """SafePub's search as ARX runs it: the top is the first pivot; each of ``steps`` steps adds the
    pivot's direct specialisations to the candidates (a former pivot among them comes back), removes
    the pivot, and draws the next pivot
    from every candidate by the exponential mechanism with ``epsilon_step``; it ends early when no
    candidate is left. ``score(levels)`` is a node's score (called once per node), ``uniform()`` one
    draw in [0, 1). The best pivot is the highest-scored, ties to the lower node (then the first)."""
    scores = {top: score(top)}
    candidates = {top}
    pivot, pivots, best = top, [top], top
    for _ in range(steps):
        if check is not None:
            check()
        for j, level in enumerate(pivot):
            if level > 0:
                below = pivot[:j] + (level - 1,) + pivot[j + 1 :]
                if below not in scores:
                    scores[below] = score(below)
                candidates.add(below)  # a former pivot too, as SafePub's union and ARX's map have it
        candidates.discard(pivot)
        if not candidates:
            break
        order = sorted(candidates)  # a fixed order: the same draws choose the same node
        pivot = order[select(np.array([scores[c] for c in order]), epsilon_step, delta_score, uniform())]
        pivots.append(pivot)
        if scores[pivot] > scores[best] or (scores[pivot] == scores[best] and sum(pivot) < sum(best)):
            best = pivot
    return Walk(pivots, scores, best)
