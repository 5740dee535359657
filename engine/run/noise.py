"""Where differential-privacy noise comes from: the operating system's secure source for a release,
a seeded generator for a study.

A release that claims ε-differential privacy must draw its noise from a source an attacker cannot
predict or replay, and must add it without the floating-point artefacts that leak through naive
Laplace sampling (Mironov, CCS 2012). :class:`SecureNoise` therefore delegates to OpenDP's
vetted samplers, which draw from the operating system's cryptographically secure source: integer
counts get the discrete Laplace (two-sided geometric) mechanism, real-valued scores OpenDP's
floating-point-safe Laplace. A study compares methods over repeats and needs the same numbers again
from the same seed; :class:`SeededNoise` draws the same distributions from the run's seeded NumPy
generator. Every DP release records which source it used (``details["noise_source"]``, the manifest's
``privacy_budget.noise``).

Example
-------
>>> noise = SeededNoise(np.random.default_rng(0))
>>> noise.discrete_laplace(np.array([10, 0, 3]), scale=2.0).dtype
dtype('int64')
"""

from __future__ import annotations

import secrets

import numpy as np

SECURE, SEEDED = "secure", "seeded"
NOISE_SOURCES = (SECURE, SEEDED)


class Noise:
    """Adds noise to values; ``source`` says where it comes from."""

    source = ""

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:  # pragma: no cover - interface
        """``values`` plus independent Laplace(0, scale) noise, as floats."""
        raise NotImplementedError

    def discrete_laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:  # pragma: no cover - interface
        """Integer ``counts`` plus independent discrete Laplace noise: P(z) ∝ exp(−|z|/scale), z ∈ ℤ."""
        raise NotImplementedError

    def uniform(self) -> float:  # pragma: no cover - interface
        """One number uniform in [0, 1)."""
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


class SeededNoise(Noise):
    """Noise from a seeded NumPy generator: reproducible, for studies and tests, not for release."""

    source = SEEDED

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def laplace(self, values, scale):
        values = np.asarray(values, dtype=float)
        return values + self.rng.laplace(0.0, scale, size=values.shape)

    def discrete_laplace(self, counts, scale):
        counts = np.asarray(counts, dtype=np.int64)
        return counts + two_sided_geometric(self.rng, scale, counts.shape)

    def uniform(self):
        return float(self.rng.random())

    def describe(self) -> str:
        return "seeded: NumPy's PCG64 generator from the run's seed (reproducible; for studies, not for release)"


def two_sided_geometric(rng: np.random.Generator, scale: float, shape) -> np.ndarray:
    """Discrete Laplace noise as the difference of two geometric draws on {0, 1, …} with success
    probability 1 − exp(−1/scale) (Inusah & Kozubowski 2006)."""
    p = -np.expm1(-1.0 / scale)
    return (rng.geometric(p, size=shape) - rng.geometric(p, size=shape)).astype(np.int64)


class SecureNoise(Noise):
    """Noise from the operating system's secure source, through OpenDP's samplers (not reproducible)."""

    source = SECURE

    def __init__(self):
        self._system = secrets.SystemRandom()

    def laplace(self, values, scale):
        values = np.asarray(values, dtype=float)
        if values.size == 0:
            return values.copy()
        dp = _opendp()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
        noisy = dp.m.make_laplace(*space, scale=float(scale))(values.ravel().tolist())
        return np.asarray(noisy, dtype=float).reshape(values.shape)

    def discrete_laplace(self, counts, scale):
        counts = np.asarray(counts, dtype=np.int64)
        if counts.size == 0:
            return counts.copy()
        dp = _opendp()
        space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
        noisy = dp.m.make_laplace(*space, scale=float(scale))([int(c) for c in counts.ravel()])
        return np.asarray(noisy, dtype=np.int64).reshape(counts.shape)

    def uniform(self):
        return self._system.random()

    def describe(self) -> str:
        return (
            f"secure: the operating system's random source, through OpenDP {_opendp_version()}'s discrete and "
            f"floating-point-safe Laplace samplers (not reproducible)"
        )


def _opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")  # the vector Laplace measurement is in OpenDP's contrib set
    return dp


def _opendp_version() -> str:
    from importlib.metadata import version

    return version("opendp")


def make_noise(source: str, rng: np.random.Generator) -> Noise:
    """The noise of ``source`` ("secure" or "seeded", the latter drawing from ``rng``)."""
    if source == SECURE:
        return SecureNoise()
    if source == SEEDED:
        return SeededNoise(rng)
    raise ValueError(f"unknown noise source {source!r}; choose one of {', '.join(NOISE_SOURCES)}")
