"""Noise addition for numeric columns (Kim 1986; Brand 2002; docs/perturbation.md#noise).

The level ℓ is a share of each column's standard deviation: the noise added to column j has standard
deviation ℓ·s_j.

* ``additive``: independent normal noise per column, N(0, (ℓ·s_j)²); the covariances between columns
  are kept in expectation, the variances grow by the factor 1 + ℓ².
* ``correlated``: multivariate normal noise with covariance ℓ²·Σ (Σ the columns' covariance on the
  records with every value), so the published covariance is (1 + ℓ²)·Σ in expectation and the
  correlations are kept.
* ``correlated-exact``: the correlated noise, then one affine map of the noisy records that gives them
  exactly the input's means and covariance matrix (y = x̄ + (z − z̄)·A with A = Σ_z^{-1/2}·Σ_x^{1/2},
  symmetric roots): the moments hold to rounding, each record still moved by noise.

Missing values stay missing; the exact variant maps the records whose every perturbed value is
present (the others keep their correlated noise unadjusted).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import TABLE, Algorithm, BadInput, MemoryCost, ReportFact, hookimpl, param

from ._common import (
    PERTURBED_NUMBERS,
    CHUNK,
    NUMERIC_KINDS,
    PROVIDES,
    chosen_columns,
    generator,
    perturbed_release,
    released_frame,
)

METHODS = ("additive", "correlated", "correlated-exact")
EIGEN_FLOOR = 1e-12  # eigenvalues below this share of the largest are taken as zero (constant columns)


def covariance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mean and covariance (n − 1 in the denominator) of the complete rows of ``x``, and which
    rows those are."""
    complete = ~np.isnan(x).any(axis=1)
    rows = x[complete]
    if len(rows) < 2:
        raise BadInput("noise-addition: fewer than two records have a value in every perturbed column")
    mean = rows.mean(axis=0)
    return mean, np.atleast_2d(np.cov(rows, rowvar=False)), complete


def sym_root(m: np.ndarray, inverse: bool = False) -> np.ndarray:
    """The symmetric square root of a covariance matrix (or of its pseudo-inverse), from its
    eigen-decomposition; eigenvalues near zero (a constant column) are zero."""
    values, vectors = np.linalg.eigh(m)
    floor = EIGEN_FLOOR * max(values.max(), 0.0)
    keep = values > floor
    roots = np.zeros_like(values)
    roots[keep] = np.sqrt(values[keep]) if not inverse else 1.0 / np.sqrt(values[keep])
    return (vectors * roots) @ vectors.T


def add_noise(x: np.ndarray, level: float, method: str, rng: np.random.Generator, progress=None) -> np.ndarray:
    """``x`` (records × columns, NaN for missing) with noise of ``method`` at ``level``."""
    n, p = x.shape
    if method not in METHODS:
        raise BadInput(f"noise-addition: method is one of {', '.join(METHODS)}, not {method!r}")
    mean, cov, complete = covariance(x)
    if method == "additive":
        scale = level * np.sqrt(np.diag(cov))
        root = np.diag(scale)
    else:
        root = level * sym_root(cov)  # e = g·root with g standard normal: cov(e) = ℓ²·Σ
    out = np.empty_like(x)
    for start in range(0, n, CHUNK):
        if progress is not None:
            progress(start / max(n, 1))
        stop = min(n, start + CHUNK)
        out[start:stop] = x[start:stop] + rng.standard_normal((stop - start, p)) @ root
    if method == "correlated-exact":
        z = out[complete]
        z_mean = z.mean(axis=0)
        z_cov = np.atleast_2d(np.cov(z, rowvar=False))
        a = sym_root(z_cov, inverse=True) @ sym_root(cov)
        out[complete] = mean + (z - z_mean) @ a
    return out


@dataclass(frozen=True)
class NoiseParams:
    columns: str = param(
        "", help="numeric columns to perturb, separated by semicolons (empty: the numeric quasi-identifiers)"
    )
    method: str = param(
        "correlated",
        choices=METHODS,
        help="additive: independent per column; correlated: with the data's covariance; "
        "correlated-exact: correlated, then means and covariances restored exactly",
    )
    level: float = param(
        0.2, minimum=0.0, maximum=10.0, help="the noise's standard deviation as a share of each column's"
    )


class Noise(Algorithm):
    name = "noise-addition"
    keeps_record_order = True  # every record, in the input's order
    title = "Noise addition"
    paper = "brand-noise"
    description = (
        "Adds normal noise to numeric columns at a level that is a share of each column's standard "
        "deviation: independent, correlated as the data (Kim 1986, Brand 2002), or correlated with the "
        "means and covariances then restored exactly."
    )
    accepts = (TABLE,)
    releases_sensitive = True
    randomised = True
    perturbs = True
    provides = (PROVIDES, PERTURBED_NUMBERS)
    Params = NoiseParams
    release_variants = {m: {"method": m} for m in METHODS}
    # the columns as floats, the noise and the noisy copy per record and perturbed column, the frame's copy
    memory_cost = MemoryCost(per_record=64.0, per_cell=48.0)

    def run(self, data, model, params, ctx):
        columns = chosen_columns(data, params.columns, NUMERIC_KINDS, self.name, "numbers")
        rng, source = generator(ctx)
        frame = released_frame(data)
        x = np.column_stack([frame[c].to_numpy(dtype=float, na_value=np.nan) for c in columns])
        if not np.isfinite(x[~np.isnan(x)]).all():
            raise BadInput(f"{self.name}: a perturbed column holds an infinite value")
        ctx.progress(0.0, "noise-addition: drawing")
        noisy = add_noise(
            x, params.level, params.method, rng, lambda f: ctx.progress(0.9 * f, "noise-addition: drawing")
        )
        for j, column in enumerate(columns):
            frame[column] = noisy[:, j]
        ctx.progress(1.0, "noise-addition: done")
        details = {"noise": {"method": params.method, "level": params.level, "variance_factor": 1 + params.level**2}}
        return perturbed_release(data, frame, columns, self.name, details, source, ctx)

    @classmethod
    def report_facts(cls, details, rows):
        noise = details.get("noise") or {}
        if not noise:
            return []
        return [
            ReportFact(
                "Noise",
                f"{noise.get('method')} noise, standard deviation {noise.get('level')} × each column's",
                key="noise.level",
                value=noise.get("level"),
            )
        ]


@hookimpl
def veil_register_algorithms():
    return [Noise]
