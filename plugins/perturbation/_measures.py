"""Utility and risk measures of a perturbed release against its input (docs/perturbation.md#measures).

Every function takes the input's and the release's values of the perturbed columns as arrays of
records × columns (numbers as floats with NaN for missing; categories as integer codes shared by both,
−1 for missing) and returns one number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SQRT2 = np.sqrt(2.0)


def complete_rows(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = ~(np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1))
    return x[keep], y[keep]


def il1s(x: np.ndarray, y: np.ndarray) -> float:
    """IL1s (Mateo-Sanz, Sebé and Domingo-Ferrer 2004): the mean over records and columns of
    |x_ij − y_ij| / (√2·S_j), S_j the input column's standard deviation (n − 1). Cells missing on either
    side are left out; a constant column (S_j = 0) too."""
    sd = np.nanstd(x, axis=0, ddof=1)
    ok = sd > 0
    if not ok.any():
        return float("nan")
    d = np.abs(x[:, ok] - y[:, ok]) / (SQRT2 * sd[ok])
    return float(np.nanmean(d)) if np.isfinite(d).any() else float("nan")


def _correlation(x: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.corrcoef(x, rowvar=False))


def eigen_loss(x: np.ndarray, y: np.ndarray) -> float:
    """Σ_i |λ_i − λ'_i| / λ_i over the eigenvalues, largest first, of the input's and the release's
    correlation matrices (sdcMicro's "eigen" utility), on the records complete in both."""
    x, y = complete_rows(x, y)
    if len(x) < 2 or (np.std(x, axis=0) == 0).any() or (np.std(y, axis=0) == 0).any():
        return float("nan")
    a = np.sort(np.linalg.eigvalsh(_correlation(x)))[::-1]
    b = np.sort(np.linalg.eigvalsh(_correlation(y)))[::-1]
    keep = a > 1e-12
    return float(np.sum(np.abs(a[keep] - b[keep]) / a[keep]))


def mean_difference(x: np.ndarray, y: np.ndarray) -> float:
    """The mean over columns of |mean(y_j) − mean(x_j)| / S_j: how far the means moved, in standard
    deviations of the input."""
    sd = np.nanstd(x, axis=0, ddof=1)
    ok = sd > 0
    if not ok.any():
        return float("nan")
    return float(np.mean(np.abs(np.nanmean(y[:, ok], axis=0) - np.nanmean(x[:, ok], axis=0)) / sd[ok]))


def variance_difference(x: np.ndarray, y: np.ndarray) -> float:
    """The mean over columns of |var(y_j) − var(x_j)| / var(x_j)."""
    vx = np.nanvar(x, axis=0, ddof=1)
    ok = vx > 0
    if not ok.any():
        return float("nan")
    vy = np.nanvar(y[:, ok], axis=0, ddof=1)
    return float(np.mean(np.abs(vy - vx[ok]) / vx[ok]))


def correlation_difference(x: np.ndarray, y: np.ndarray) -> float:
    """The mean of |r'_jk − r_jk| over pairs of columns j < k (records complete in both); NaN with
    fewer than two columns."""
    x, y = complete_rows(x, y)
    p = x.shape[1]
    if p < 2 or len(x) < 3 or (np.std(x, axis=0) == 0).any() or (np.std(y, axis=0) == 0).any():
        return float("nan")
    upper = np.triu_indices(p, 1)
    return float(np.mean(np.abs(_correlation(y)[upper] - _correlation(x)[upper])))


def standardised_coefficients(x: np.ndarray) -> np.ndarray:
    """For every column j, the least-squares coefficients of j on the other columns, all standardised
    (z-scores, so the intercept is 0): a p × (p − 1) array."""
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    p = z.shape[1]
    out = np.empty((p, p - 1))
    for j in range(p):
        others = np.delete(np.arange(p), j)
        out[j] = np.linalg.lstsq(z[:, others], z[:, j], rcond=None)[0]
    return out


def regression_difference(x: np.ndarray, y: np.ndarray) -> float:
    """The mean absolute difference of the standardised coefficients of each column regressed on the
    others, fitted on the input and on the release; NaN with fewer than two columns."""
    x, y = complete_rows(x, y)
    p = x.shape[1]
    if p < 2 or len(x) <= p or (np.std(x, axis=0) == 0).any() or (np.std(y, axis=0) == 0).any():
        return float("nan")
    return float(np.mean(np.abs(standardised_coefficients(y) - standardised_coefficients(x))))


def frequency_difference(codes_x: np.ndarray, codes_y: np.ndarray) -> float:
    """The mean over columns of the total variation distance ½·Σ_c |f'_c − f_c| between the input's
    and the release's category shares (missing values a category of their own)."""
    out = []
    for j in range(codes_x.shape[1]):
        a, b = codes_x[:, j] + 1, codes_y[:, j] + 1
        size = int(max(a.max(initial=0), b.max(initial=0))) + 1
        fa = np.bincount(a, minlength=size) / max(len(a), 1)
        fb = np.bincount(b, minlength=size) / max(len(b), 1)
        out.append(0.5 * np.abs(fa - fb).sum())
    return float(np.mean(out)) if out else float("nan")


def interval_disclosure(x: np.ndarray, y: np.ndarray, k: float) -> float:
    """The share of records whose every input value lies within y_ij ± k·S'_j, S'_j the release
    column's standard deviation (sdcMicro's dRisk): values an intruder can tell from the published
    ones to within a small interval. A missing value counts as inside."""
    sd = np.nanstd(y, axis=0, ddof=1)
    outside = (x < y - k * sd) | (x > y + k * sd)
    return float(np.mean(~outside.any(axis=1))) if len(x) else float("nan")


def linkage_columns(numbers_x, numbers_y, codes_x, codes_y):
    """Both sides' numbers standardised by the input's mean and standard deviation (missing: the
    mean, i.e. 0), and the category codes as they are."""
    if numbers_x.shape[1]:
        mean = np.nanmean(numbers_x, axis=0)
        sd = np.nanstd(numbers_x, axis=0, ddof=1)
        sd[~(sd > 0)] = 1.0
        numbers_x = np.nan_to_num((numbers_x - mean) / sd)
        numbers_y = np.nan_to_num((numbers_y - mean) / sd)
    return numbers_x, numbers_y, codes_x, codes_y


def linkage_risk(numbers_x, numbers_y, codes_x, codes_y, check=None, block: int = 256) -> float:
    """Distance-based record linkage: for each input record, whether its own release record is the
    nearest (squared Euclidean distance over the standardised numbers plus one per category that
    differs); a record tied with t others at the nearest distance counts 1/(t + 1). The mean over
    records: 1 for an unperturbed table of distinct records, falling as the perturbation grows."""
    numbers_x, numbers_y, codes_x, codes_y = linkage_columns(numbers_x, numbers_y, codes_x, codes_y)
    n = len(numbers_x)
    if n == 0:
        return float("nan")
    credit = np.zeros(n)
    sq_y = (numbers_y**2).sum(axis=1)
    for start in range(0, n, block):
        if check is not None:
            check()
        stop = min(n, start + block)
        a = numbers_x[start:stop]
        d = (a**2).sum(axis=1)[:, None] + sq_y[None, :] - 2.0 * a @ numbers_y.T
        for j in range(codes_x.shape[1]):
            d += codes_x[start:stop, j][:, None] != codes_y[None, :, j]
        rows = np.arange(stop - start)
        own = d[rows, rows + start]
        tol = 1e-9 * (1.0 + np.abs(own))
        nearer = (d < (own - tol)[:, None]).any(axis=1)
        tied = (np.abs(d - own[:, None]) <= tol[:, None]).sum(axis=1)
        credit[start:stop] = np.where(nearer, 0.0, 1.0 / tied)
    return float(credit.mean())


def codes_of(original: pd.Series, released: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Both columns' values as codes over the union of their values (compared as text), −1 for
    missing."""
    both = pd.concat([original, released], ignore_index=True).astype("string")
    codes, _ = pd.factorize(both, sort=True)
    return codes[: len(original)].astype(np.int64), codes[len(original) :].astype(np.int64)
