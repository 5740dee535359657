"""Utility and risk of a perturbed release, measured against its input (docs/perturbation.md#measures).

Each metric requires what a perturbation method's release carries (``perturbed-values``), so it is
computed by default for those runs and never for others. The utility measures compare the perturbed
numeric columns (IL1s, the eigenvalue measure, the differences of means, variances, correlations and
regression coefficients) or categorical ones (category shares); the risk measures are computed on
the perturbed release itself: distance-based record linkage over the quasi-identifiers and perturbed
columns, on a seeded sample of stated size, and interval disclosure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import CHEAP, TABLE, Kind, MemoryCost, Metric, hookimpl, param

from . import _measures as measures
from ._common import PERTURBED_CATEGORIES, PERTURBED_NUMBERS, PROVIDES

LINKAGE_SAMPLE = 5_000  # records linked by default: the distances are a sample × sample matrix, in blocks


def perturbed_columns(release) -> list[str]:
    return list(((release.details or {}).get("perturbation") or {}).get("columns") or [])


def numeric_columns(original, release) -> list[str]:
    """Every column of numbers the release publishes (numeric, or binary held as numbers): the
    relations between columns that the structure measures compare."""
    frame = release.frame
    return [
        c
        for c in frame.columns
        if c in original.schema.names
        and pd.api.types.is_numeric_dtype(frame[c].dtype)  # not generalised by a first step
        and (
            original.schema[c].kind is Kind.NUMERIC
            or (original.schema[c].kind is Kind.BINARY and pd.api.types.is_numeric_dtype(original.frame[c]))
        )
    ]


def numeric_pair(original, release, columns) -> tuple[np.ndarray, np.ndarray]:
    """The input's and the release's values of the numeric ``columns`` as float arrays."""
    numeric = [
        c
        for c in columns
        if c in release.frame.columns
        and pd.api.types.is_numeric_dtype(release.frame[c].dtype)
        and original.schema[c].kind in (Kind.NUMERIC, Kind.BINARY)
        and pd.api.types.is_numeric_dtype(original.frame[c])
    ]
    x = (
        np.column_stack([original.frame[c].to_numpy(dtype=float, na_value=np.nan) for c in numeric])
        if numeric
        else None
    )
    y = np.column_stack([release.frame[c].to_numpy(dtype=float, na_value=np.nan) for c in numeric]) if numeric else None
    return x, y


class _NumericMeasure(Metric):
    """A measure of the perturbed numeric columns (``structure``: of every numeric column released,
    perturbed or not, whose relations the perturbation changes); NaN for a release with none."""

    accepts = (TABLE,)
    cost = CHEAP  # linear in the records (the linkage risk: a sample of fixed size)
    requires = PERTURBED_NUMBERS
    memory_cost = MemoryCost(per_record=32.0, per_cell=48.0)  # both sides' columns as floats, and their difference
    measure = staticmethod(measures.il1s)
    structure = False

    def compute(self, original, release, params, ctx):
        columns = numeric_columns(original, release) if self.structure else perturbed_columns(release)
        x, y = numeric_pair(original, release, columns)
        if x is None or len(x) != len(y):
            return float("nan")
        return type(self).measure(x, y)


class IL1s(_NumericMeasure):
    name = "il1s"
    title = "IL1s (mean standardised distance)"
    paper = "mateo-sanz-il"
    description = (
        "Mean over records and perturbed numeric columns of |x − x'| / (√2·s), s the column's standard deviation."
    )
    higher_is_better = False
    measure = staticmethod(measures.il1s)


class EigenLoss(_NumericMeasure):
    name = "eigen-loss"
    title = "Eigenvalue loss"
    description = "Σ |λ − λ'| / λ over the eigenvalues of the released numeric columns' correlation matrices."
    higher_is_better = False
    structure = True
    measure = staticmethod(measures.eigen_loss)


class MeanDifference(_NumericMeasure):
    name = "mean-difference"
    title = "Difference of means"
    description = "Mean over perturbed numeric columns of |mean' − mean| in standard deviations of the input."
    higher_is_better = False
    measure = staticmethod(measures.mean_difference)


class VarianceDifference(_NumericMeasure):
    name = "variance-difference"
    title = "Difference of variances"
    description = "Mean over perturbed numeric columns of |var' − var| / var."
    higher_is_better = False
    measure = staticmethod(measures.variance_difference)


class CorrelationDifference(_NumericMeasure):
    name = "correlation-difference"
    title = "Difference of correlations"
    description = "Mean of |r' − r| over pairs of released numeric columns."
    higher_is_better = False
    structure = True
    measure = staticmethod(measures.correlation_difference)


class RegressionDifference(_NumericMeasure):
    name = "regression-difference"
    title = "Difference of regression coefficients"
    description = (
        "Mean |β' − β| of the standardised coefficients of each released numeric column regressed on the others."
    )
    higher_is_better = False
    structure = True
    measure = staticmethod(measures.regression_difference)


class FrequencyDifference(Metric):
    name = "frequency-difference"
    title = "Difference of category shares"
    description = "Mean over perturbed categorical columns of the total variation distance between category shares."
    accepts = (TABLE,)
    cost = CHEAP  # linear in the records (the linkage risk: a sample of fixed size)
    requires = PERTURBED_CATEGORIES
    higher_is_better = False
    memory_cost = MemoryCost(per_record=48.0, per_cell=48.0)

    def compute(self, original, release, params, ctx):
        columns = [c for c in perturbed_columns(release) if original.schema[c].kind is not Kind.NUMERIC]
        if not columns or original.n_rows != release.n_rows:
            return float("nan")
        pairs = [measures.codes_of(original.frame[c].reset_index(drop=True), release.frame[c]) for c in columns]
        return measures.frequency_difference(
            np.column_stack([a for a, _ in pairs]), np.column_stack([b for _, b in pairs])
        )


@dataclass(frozen=True)
class IntervalParams:
    k: float = param(
        0.05, minimum=0.0, help="half-width of the interval, in standard deviations of the published column"
    )


class IntervalDisclosure(Metric):
    name = "interval-disclosure"
    title = "Interval disclosure"
    description = (
        "Share of records whose every perturbed numeric value lies within ±k standard deviations of its "
        "published value (sdcMicro's dRisk)."
    )
    category = "privacy"
    accepts = (TABLE,)
    cost = CHEAP  # linear in the records (the linkage risk: a sample of fixed size)
    requires = PERTURBED_NUMBERS
    higher_is_better = False
    Params = IntervalParams
    memory_cost = MemoryCost(per_record=32.0, per_cell=48.0)

    def compute(self, original, release, params, ctx):
        x, y = numeric_pair(original, release, perturbed_columns(release))
        if x is None or len(x) != len(y):
            return float("nan")
        return measures.interval_disclosure(x, y, params.k)


@dataclass(frozen=True)
class LinkageParams:
    sample: int = param(
        LINKAGE_SAMPLE, minimum=2, help="records linked (a seeded sample of the input and the same records released)"
    )


class LinkageRisk(Metric):
    name = "linkage-risk"
    title = "Record-linkage risk"
    description = (
        "Share of records whose nearest published record, over the quasi-identifiers and perturbed columns "
        "(numbers standardised, one per differing category), is their own: 1 unperturbed, falling with the noise."
    )
    category = "privacy"
    accepts = (TABLE,)
    cost = CHEAP  # linear in the records (the linkage risk: a sample of fixed size)
    requires = PROVIDES
    higher_is_better = False
    Params = LinkageParams
    # the sample's columns on both sides, and a block of 256 × sample distances
    memory_cost = MemoryCost(fixed=16 * (1 << 20) + 256 * 8 * 3 * LINKAGE_SAMPLE, per_record=16.0, per_cell=16.0)

    @classmethod
    def memory(cls, shape, params=None):
        sample = getattr(params, "sample", LINKAGE_SAMPLE)
        return int(
            16 * (1 << 20) + 256 * 8 * 3 * min(sample, shape.rows) + 16 * shape.rows + 32 * sample * shape.columns
        )

    def compute(self, original, release, params, ctx):
        perturbed = perturbed_columns(release)
        columns = list(dict.fromkeys([*release.quasi_identifiers, *perturbed]))
        columns = [c for c in columns if c in release.frame.columns and c in original.schema.names]
        n = original.n_rows
        if not columns or n != release.n_rows or n == 0:
            return float("nan")
        rows = np.arange(n)
        if n > params.sample:
            seed = 0 if ctx.seed is None else int(ctx.seed)
            rows = np.sort(np.random.default_rng(seed).choice(n, params.sample, replace=False))
            ctx.sampled({"rows": int(params.sample), "of": int(n), "seed": seed})
        numeric = [
            c
            for c in columns
            if original.schema[c].kind is Kind.NUMERIC and pd.api.types.is_numeric_dtype(release.frame[c].dtype)
        ]
        other = [c for c in columns if c not in numeric]
        x_frame = original.frame.reset_index(drop=True).iloc[rows][columns].copy()
        y_frame = release.frame.iloc[rows]
        for c in columns:  # a column not perturbed, the attacker knows as published (generalised, if it was)
            if c not in perturbed:
                x_frame[c] = y_frame[c].to_numpy()
        nx = np.column_stack([x_frame[c].to_numpy(dtype=float, na_value=np.nan) for c in numeric]) if numeric else None
        ny = np.column_stack([y_frame[c].to_numpy(dtype=float, na_value=np.nan) for c in numeric]) if numeric else None
        if nx is None:
            nx = ny = np.zeros((len(rows), 0))
        pairs = [measures.codes_of(x_frame[c].reset_index(drop=True), y_frame[c].reset_index(drop=True)) for c in other]
        cx = np.column_stack([a for a, _ in pairs]) if pairs else np.zeros((len(rows), 0), dtype=np.int64)
        cy = np.column_stack([b for _, b in pairs]) if pairs else np.zeros((len(rows), 0), dtype=np.int64)
        return measures.linkage_risk(nx, ny, cx, cy, check=ctx.check)


@hookimpl
def veil_register_metrics():
    return [
        IL1s,
        EigenLoss,
        MeanDifference,
        VarianceDifference,
        CorrelationDifference,
        RegressionDifference,
        FrequencyDifference,
        IntervalDisclosure,
        LinkageRisk,
    ]
