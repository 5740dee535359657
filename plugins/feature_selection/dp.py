"""Laplace-DP and Exponential-DP: differentially private feature selection followed by a private
synthetic release, the DP baselines of paper 000 (Figure 1, docs/reference.md#feature-selection).

Budget ε: ε/2 selects m features, ε₁ = ε/(2m) per pick; ε/2 releases the data.

* Score s(f) = P1_f·N0_f + P0_f·N1_f (unnormalised HamDist). Neighbouring datasets differ in the
  feature values of one record and class sizes are public, so one record moves s(f) by at most
  Δs = max(|P|, |N|).
* Laplace-DP: m rounds of report-noisy-max, fresh Lap(Δs/ε₁) noise on every remaining feature's score.
* Exponential-DP: m rounds, each picking a remaining f with probability ∝ exp(ε₁·s(f) / (2Δs)).
* Release: the histogram of D over the 2^m cells of the selected features × class, each count plus
  discrete Laplace noise of scale 2/(ε/2) (one record moves between two cells: L1 sensitivity 2;
  the integer mechanism replaces the paper's rounded continuous Laplace, which floating point makes
  unsafe), negatives set to 0; then that many synthetic records per cell.

Noise comes from ``ctx.noise``: the operating system's secure source through OpenDP when the run
makes a release (``veil run``), the seeded generator in a study; ``details["noise_source"]`` says which.

m defaults to the number of features Greedy-HamDist selects at k = 5 under k-AC (the paper's choice).
That count comes from a non-private run on the same data; the release's ``assumptions`` say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    BINARY,
    SYNTHETIC,
    Algorithm,
    BadInput,
    BinaryMatrix,
    KacConstraint,
    Noise,
    Release,
    SeededNoise,
    hookimpl,
    param,
    target_name,
)

from ._common import greedy_hamdist
from ._common import hamdist_scores, positive_mask

PAPER = "000_0106b4def2026c16"
MAX_M = 20  # 2^20 cells × 2 classes is the largest histogram we build
DEFAULT_M_K = 5
MIN_EPSILON, MAX_EPSILON = 0.001, 1000.0


@dataclass(frozen=True)
class DPParams:
    epsilon: float = param(
        1.0,
        minimum=MIN_EPSILON,
        maximum=MAX_EPSILON,
        help="privacy budget ε: half selects the features, half releases the data "
        f"(between {MIN_EPSILON} and {MAX_EPSILON:g}: below, noise drowns every count; "
        "above, the guarantee means nothing and the noise underflows)",
    )
    m: int | None = param(
        None,
        minimum=1,
        maximum=MAX_M,
        help="number of features to select (at most 20: the release histogram has 2^m × 2 cells); "
        "empty = the count Greedy-HamDist selects at k = 5 under k-ac, as in the paper",
    )


# -- selection ------------------------------------------------------------------------------------------
def score_sensitivity(pos: np.ndarray) -> int:
    """Δs = max(|P|, |N|): how far one record's feature values can move a score s(f)."""
    return max(int(pos.sum()), int((~pos).sum()))


def laplace_scale(delta: float, eps1: float) -> float:
    """Scale of the report-noisy-max noise per pick: Δs/ε₁."""
    return delta / eps1


def _noise(source: Noise | np.random.Generator) -> Noise:
    return source if isinstance(source, Noise) else SeededNoise(source)


def select_laplace(
    scores: np.ndarray, m: int, eps1: float, delta: float, rng: Noise | np.random.Generator, ctx=None
) -> list[int]:
    """m rounds of report-noisy-max with fresh Lap(Δs/ε₁) noise over the remaining features."""
    noise = _noise(rng)
    remaining = np.arange(len(scores))
    picks = []
    for i in range(m):
        if ctx is not None:
            ctx.progress(i / max(m, 1), f"Laplace-DP: pick {i + 1} of {m}")
        noisy = noise.laplace(scores[remaining], laplace_scale(delta, eps1))
        j = int(np.argmax(noisy))
        picks.append(int(remaining[j]))
        remaining = np.delete(remaining, j)
    return picks


def exponential_probabilities(scores: np.ndarray, eps1: float, delta: float) -> np.ndarray:
    """P(f) ∝ exp(ε₁·s(f) / (2Δs)), normalised in log space (scores in the millions do not overflow)."""
    from scipy.special import logsumexp

    logits = eps1 * np.asarray(scores, dtype=float) / (2.0 * delta)
    return np.exp(logits - logsumexp(logits))


def select_exponential(
    scores: np.ndarray, m: int, eps1: float, delta: float, rng: Noise | np.random.Generator, ctx=None
) -> list[int]:
    """m rounds of the exponential mechanism over the remaining features."""
    noise = _noise(rng)
    remaining = np.arange(len(scores))
    picks = []
    for i in range(m):
        if ctx is not None:
            ctx.progress(i / max(m, 1), f"Exponential-DP: pick {i + 1} of {m}")
        p = exponential_probabilities(scores[remaining], eps1, delta)
        j = int(np.searchsorted(np.cumsum(p), noise.uniform() * p.sum(), side="right"))
        j = min(j, len(remaining) - 1)  # guards the last bin against rounding in the cumulative sum
        picks.append(int(remaining[j]))
        remaining = np.delete(remaining, j)
    return picks


# -- release --------------------------------------------------------------------------------------------
def cell_counts(matrix: BinaryMatrix, picks: list[int], pos: np.ndarray) -> np.ndarray:
    """Histogram over the 2^m cells × class: counts[cell, 0] negatives, counts[cell, 1] positives.

    A record's cell has bit i set when it holds the i-th picked feature."""
    code = np.zeros(matrix.n_rows, dtype=np.int64)
    for i, f in enumerate(picks):
        code[matrix.column_rows(f)] |= 1 << i
    flat = np.bincount(code * 2 + pos.astype(np.int64), minlength=2 ** len(picks) * 2)
    return flat.reshape(-1, 2)


def histogram_scale(epsilon_release: float) -> float:
    """Scale of the discrete Laplace noise per cell: L1 sensitivity 2 over the release budget ε/2."""
    return 2.0 / epsilon_release


def noisy_counts(counts: np.ndarray, epsilon_release: float, rng: Noise | np.random.Generator) -> np.ndarray:
    """Counts plus discrete Laplace noise, P(z) ∝ exp(−|z|·ε_release/2) (the geometric mechanism:
    ε_release-DP for L1 sensitivity 2 with no floating-point rounding), negatives set to 0."""
    noisy = _noise(rng).discrete_laplace(np.asarray(counts, dtype=np.int64), histogram_scale(epsilon_release))
    return np.maximum(noisy, 0).astype(np.int64)


def synthetic_frame(
    noisy: np.ndarray, names: list[str], classes: tuple, target: str, rng: np.random.Generator
) -> pd.DataFrame:
    """``noisy[cell, c]`` records of every cell and class, in a random order."""
    m = len(names)
    flat = noisy.ravel()
    index = np.repeat(np.arange(len(flat), dtype=np.int64), flat)
    index = index[rng.permutation(len(index))]
    cells, is_pos = index // 2, index % 2
    bits = ((cells[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
    frame = pd.DataFrame(bits, columns=names)
    negative, positive = classes
    frame[target] = np.where(is_pos == 1, positive, negative)
    return frame


# -- the methods ----------------------------------------------------------------------------------------
def default_m(matrix: BinaryMatrix, ctx=None) -> int:
    """The number of features Greedy-HamDist selects at k = 5 under k-AC (the paper's m), counted up to
    MAX_M + 1: past MAX_M the run is refused, and every further feature would only cost time and the
    k-AC classes' memory."""
    selected, _ = greedy_hamdist(matrix, KacConstraint(matrix, DEFAULT_M_K), ctx=ctx, limit=MAX_M + 1)
    return len(selected)


def assumptions(m_from_greedy: bool) -> list[str]:
    """Plain sentences stating what the ε guarantee rests on."""
    said = [
        "Class sizes are public: the sensitivity Δs = max(|P|, |N|) and the class column of the histogram "
        "assume they are known.",
        "Neighbouring datasets differ in the feature values of one record (its class is unchanged); adding or "
        "removing a record is not covered.",
        "ε is split by sequential composition: ε/2 over the m picks (ε/(2m) each), ε/2 for the noisy histogram "
        "(L1 sensitivity 2: one record leaves one cell and enters another).",
        "Laplace-DP uses the paper's noise Lap(Δs/ε₁) per pick. Report-noisy-max with that scale is ε₁-private "
        "when all scores move the same way between neighbours; here one record can raise one feature's score and "
        "lower another's, for which the standard bound is 2ε₁ per pick (Lap(2Δs/ε₁) would restore ε₁). "
        "Exponential-DP's exp(ε₁·s/(2Δs)) has no such gap.",
        "Setting negative noisy counts to 0 and emitting synthetic records are post-processing "
        "and spend no budget; the number of synthetic records is itself a noisy statistic.",
    ]
    if m_from_greedy:
        said.append(
            "m was not set, so it is the count Greedy-HamDist selects at k = 5 on the same data: a "
            "non-private choice, so strictly the release spends more than ε unless m is fixed in advance "
            "(set m to make the claim hold)."
        )
    return said


class _DPFeatureSelection(Algorithm):
    accepts = (BINARY,)
    needs_labels = True
    needs_model = False
    randomised = True
    Params = DPParams
    mechanism = ""

    def select(self, scores, m, eps1, delta, rng, ctx) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def run(self, data, model, params, ctx):
        pos = positive_mask(data)
        m_from_greedy = params.m is None
        m = default_m(data, ctx.child(0.0, 0.3)) if m_from_greedy else int(params.m)
        _check_m(m, data, m_from_greedy)
        epsilon = float(params.epsilon)
        eps1 = epsilon / (2 * m) if m else 0.0
        delta = score_sensitivity(pos)
        picks = self.select(hamdist_scores(data, pos), m, eps1, delta, ctx.noise, ctx.child(0.3, 0.6)) if m else []
        ctx.progress(0.6, f"{self.title}: noisy histogram of {2**m * 2} cells")
        counts = cell_counts(data, picks, pos)
        noisy = noisy_counts(counts, epsilon / 2, ctx.noise)
        names = [data.feature_names[f] for f in picks]
        target = _free_name(target_name(data), names)  # the target keeps its column name
        classes = (data.labels[~pos][0], data.labels[pos][0])
        frame = synthetic_frame(noisy, names, classes, target, ctx.rng)
        details = {
            "epsilon_spent": epsilon,
            "m": m,
            "m_source": "greedy-hamdist k=5" if m_from_greedy else "user",
            "epsilon_per_pick": eps1,
            "epsilon_release": epsilon / 2,
            "score_sensitivity": delta,
            "selection_noise_scale": laplace_scale(delta, eps1) if self.mechanism == "laplace" and m else None,
            "histogram_noise_scale": histogram_scale(epsilon / 2),
            "cells": int(counts.size),
            "original_records": data.n_rows,
            "synthetic_records": len(frame),
            "selected_indices": picks,
            "noise_source": ctx.noise.describe(),
            "assumptions": assumptions(m_from_greedy),
        }
        notes = (
            f"{self.title}: ε = {epsilon:g}-differential privacy claimed (not k-anonymity); {m} features "
            f"selected, {len(frame)} synthetic records from a noisy histogram of {counts.size} cells.",
            *details["assumptions"],
        )
        ctx.progress(1.0)
        return Release(
            SYNTHETIC, frame, tuple(names), target=target, selected_features=tuple(names), details=details, notes=notes
        )


def _check_m(m: int, data: BinaryMatrix, m_from_greedy: bool) -> None:
    source = "the default m (Greedy-HamDist's count at k = 5)" if m_from_greedy else "m"
    if m > MAX_M:
        count = f"more than {MAX_M}" if m_from_greedy else str(m)
        raise BadInput(
            f"{source} is {count}, but at most {MAX_M} features can be released this way: the noisy "
            f"histogram has 2^m × 2 cells; set m ≤ {MAX_M}"
        )
    if m > data.n_features:
        raise BadInput(f"m = {m} but the data has only {data.n_features} features")


def _free_name(base: str, taken: list[str]) -> str:
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


class LaplaceDP(_DPFeatureSelection):
    """Laplace-DP: report-noisy-max feature selection, then a noisy-histogram synthetic release.

    ε-differential privacy under the assumptions of docs/reference.md#feature-selection
    (``release.details["assumptions"]``); randomised — the paper reports mean ± std over 10 repeats (a Study's
    ``"repeats": 10``).
    """

    name = "laplace-dp-fs"
    title = "Laplace-DP"
    paper = PAPER
    description = (
        "Baseline: picks m features by report-noisy-max with Laplace noise, then releases synthetic "
        "records from a histogram noised by the discrete Laplace mechanism "
        "(ε-differential privacy; paper 000, Figure 1a)."
    )
    mechanism = "laplace"

    def select(self, scores, m, eps1, delta, rng, ctx):
        return select_laplace(scores, m, eps1, delta, rng, ctx)


class ExponentialDP(_DPFeatureSelection):
    """Exponential-DP: exponential-mechanism feature selection, then a noisy-histogram synthetic release.

    ε-differential privacy under the assumptions of docs/reference.md#feature-selection
    (``release.details["assumptions"]``); randomised — the paper reports mean ± std over 10 repeats (a Study's
    ``"repeats": 10``).
    """

    name = "exponential-dp-fs"
    title = "Exponential-DP"
    paper = PAPER
    description = (
        "Baseline: picks m features with the exponential mechanism, then releases synthetic records "
        "from a histogram noised by the discrete Laplace mechanism (ε-differential privacy; paper 000, Figure 1b)."
    )
    mechanism = "exponential"

    def select(self, scores, m, eps1, delta, rng, ctx):
        return select_exponential(scores, m, eps1, delta, rng, ctx)


@hookimpl
def veil_register_algorithms():
    return [LaplaceDP, ExponentialDP]
