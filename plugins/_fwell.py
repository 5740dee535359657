"""FWELL and Private FWELL, the mathematics (paper 003, docs/reference.md#feature-weighting), shared by the
weighting plugins (:mod:`veil.plugins.weighting.fwell`, :mod:`veil.plugins.weighting.fwell_eval`) and
Greedy-HamDist ranked by Private FWELL (:mod:`veil.plugins.feature_selection.greedy`).

* :func:`feature_matrix` turns a Table or BinaryMatrix into numbers (sparse where the input is);
  :func:`scale_unit` maps every feature to [0, 1].
* :func:`margins` finds each record's nearest hit and nearest miss by Manhattan distance (sklearn's
  chunked brute-force neighbour search, sparse input kept sparse) and returns the rows
  z_i = |x_i − NM(x_i)| − |x_i − NH(x_i)|, each divided by max(1, ‖z_i‖₂) so ‖z_i‖ ≤ 1.
* :func:`objective` is (1/n) Σ log(1 + exp(−wᵀz_i)) + (λ/2)‖w‖² with its gradient; :func:`solve_lbfgs`
  minimises it to a gradient norm below 1e-8, :func:`solve_paper_gd` takes the paper's normalised
  gradient steps (Algorithm 1).
* :func:`gamma_noise` draws b with density ∝ exp(−(nελ/2)‖b‖): ‖b‖ ~ Gamma(d, 2/(nελ)), uniform
  direction, from a seeded generator or from the operating system's cryptographic source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from veil.engine import BadInput, BinaryMatrix, Kind, MemoryEstimate, Table, check_memory

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp

GRADIENT_TOLERANCE = 1e-8
LAMBDA_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
# Private FWELL's λ, fixed in advance (choosing it on the data would spend privacy the ε claim does not
# cover): the grid's largest value, which gives the least noise relative to the weights (docs/fwell.md)
PRIVATE_LAMBDA = 1.0
WORKING_MEMORY_MB = 256  # distance rows computed at once
BYTES_PER_CELL = 32  # FWELL's peak per record and feature (see check_room)
CHUNK_STEPS = 2_000_000  # row × row × feature steps of the distance search between two cancellation checks
# every chunk pays a pass over the whole matrix (sklearn validates and, when sparse, copies it): at least
# this many rows a chunk keep that pass a small share of the chunk's own work
MIN_CHUNK_ROWS = 16
SPARSE_BELOW = 0.2  # densities below this go through the sparse neighbour search


# SciPy's special functions and optimiser and scikit-learn's neighbour search are imported on first
# use: registering the plugins (every `veil` command, the desktop's start) must not pay for them.
def expit(x):
    from scipy.special import expit as f

    return f(x)


def ndtri(x):
    from scipy.special import ndtri as f

    return f(x)


def gammaincinv(a, y):
    from scipy.special import gammaincinv as f

    return f(a, y)


def minimize(*args, **kwargs):
    from scipy.optimize import minimize as f

    return f(*args, **kwargs)


def pairwise_distances_chunked(*args, **kwargs):
    from sklearn.metrics import pairwise_distances_chunked as f

    return f(*args, **kwargs)


# -- data -----------------------------------------------------------------------------------------------
def feature_matrix(data) -> tuple[np.ndarray | sp.csr_matrix, list[str], np.ndarray]:
    """(X, feature names, labels) of a BinaryMatrix (sparse) or a Table (numeric and 0/1 columns as
    they are, categorical and text-valued binary ones one-hot as ``column=value``; identifiers, dates,
    item sets and the target left out)."""
    if isinstance(data, BinaryMatrix):
        if data.labels is None:
            raise BadInput("FWELL needs class labels; mark a target column")
        check_room(data.n_rows, data.n_features)
        return data.to_sparse().tocsr().astype(np.float64), list(data.feature_names), np.asarray(data.labels)
    assert isinstance(data, Table)
    target = data.schema.target
    if target is None:
        raise BadInput("FWELL needs class labels; mark a target column")
    # a released column is one feature at least: refuse at once what cannot fit even so
    check_room(data.n_rows, sum(1 for name in data.released_columns() if name != target))
    columns = []  # (name, its numbers or None, its text to one-hot or None)
    for name in data.released_columns():
        if name == target:
            continue
        col = data.schema[name]
        series = data.frame[name]
        numeric = pd.to_numeric(series, errors="coerce")
        if col.kind is Kind.NUMERIC or (col.kind is Kind.BINARY and numeric.notna().sum() == series.notna().sum()):
            columns.append((name, numeric, None))
        elif col.kind in (Kind.CATEGORICAL, Kind.BINARY):
            columns.append((name, None, series.astype("string")))
    check_room(data.n_rows, sum(1 if text is None else text.nunique() for _, _, text in columns))
    parts, names = [], []
    for name, numeric, text in columns:
        if text is None:
            parts.append(numeric.to_numpy(dtype=float)[:, None])
            names.append(name)
        else:
            dummies = pd.get_dummies(text, prefix=name, prefix_sep="=", dtype=float)
            parts.append(dummies.to_numpy())
            names.extend(dummies.columns)
    if not parts:
        raise BadInput("FWELL needs at least one numeric, binary or categorical feature besides the target")
    x = np.hstack(parts)
    if np.isnan(x).any():
        raise BadInput("FWELL cannot weigh features with missing values; drop or fill them first")
    return x, [str(n) for n in names], data.labels()


def check_room(n: int, d: int) -> None:
    """Refuse in one line, before anything is allocated, data whose features and margins would not fit
    in memory: FWELL holds the records × features dense (the features, their scaled copy and the
    margins z, measured at about 24 bytes a cell) beside the neighbour search's working memory."""
    need = BYTES_PER_CELL * n * d + WORKING_MEMORY_MB * 2**20
    check_memory(MemoryEstimate(((f"FWELL's {n:,} records × {d:,} features held dense", need),), need))


def scale_unit(x):
    """Every feature mapped to [0, 1] by its minimum and maximum (a constant feature becomes 0)."""
    import scipy.sparse as sp

    x = x.toarray() if sp.issparse(x) else np.asarray(x, dtype=np.float64)
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (x - lo) / span


def scale_span(x):
    """Every feature divided by its span (maximum − minimum; 1 for a constant feature).

    Manhattan distances and the margins z are differences of values, unchanged when a feature is
    shifted, so on them this equals scaling to [0, 1], and sparse data stays sparse. Dense data that
    is mostly zeros (text counts) is made sparse: sklearn's sparse Manhattan distance is far faster.
    """
    import scipy.sparse as sp

    if sp.issparse(x):
        x = sp.csr_matrix(x, dtype=np.float64)
        lo = x.min(axis=0).toarray().ravel()
        hi = x.max(axis=0).toarray().ravel()
    else:
        x = np.asarray(x, dtype=np.float64)
        lo, hi = x.min(axis=0), x.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    if sp.issparse(x):
        out = sp.csr_matrix(x @ sp.diags(1.0 / span))
        out.sum_duplicates()
        out.sort_indices()
        return out
    scaled = x / span
    if scaled.size and np.count_nonzero(scaled) < SPARSE_BELOW * scaled.size:
        return sp.csr_matrix(scaled)
    return scaled


def check_labels(y: np.ndarray) -> np.ndarray:
    """Class codes 0…c−1; every class needs two records (a nearest hit) and there must be two classes."""
    if pd.isna(pd.Series(y)).any():
        raise BadInput("the target column has missing values; drop or fill those records first")
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise BadInput(f"FWELL needs at least two classes in the target, found {len(classes)}")
    counts = np.bincount(codes)
    if counts.min() < 2:
        raise BadInput(
            f"class {classes[int(np.argmin(counts))]!r} has a single record: FWELL needs a nearest "
            f"record of the same class for every record"
        )
    return codes


# -- nearest hit and miss ------------------------------------------------------------------------------
def nearest_hit_miss(x, codes: np.ndarray, check=None, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """For every record, the index of its nearest hit (same class, itself excluded) and nearest miss
    (any other class), by Manhattan distance.

    sklearn's brute-force neighbour search (the one ``NearestNeighbors(metric="manhattan")`` runs on
    high-dimensional data), in row chunks so memory stays bounded; sparse input stays sparse. Ties go
    to the lower index: distances equal to 9 decimals count as equal, so dense and sparse input, whose
    sums round differently, find the same neighbours. ``progress`` (optional) is told the records
    done after each chunk: the search compares every pair of records, so it is most of FWELL's time.
    """
    import scipy.sparse as sp

    n = len(codes)
    hit = np.empty(n, dtype=np.int64)
    miss = np.empty(n, dtype=np.int64)
    start = 0
    # a chunk of r rows costs r × n × (the features a pair of rows compares: d, or a sparse row's
    # non-zeros twice) steps: keep that near CHUNK_STEPS, so ``check`` comes often
    per_pair = 2 * x.nnz / max(1, n) if sp.issparse(x) else x.shape[1]
    rows = max(MIN_CHUNK_ROWS, int(CHUNK_STEPS // max(1.0, n * per_pair)))
    memory = min(WORKING_MEMORY_MB, (rows + 0.5) * n * 8 / 2**20)
    # the sparse distances run in OpenMP threads that are woken for every chunk: on a busy machine each
    # wake-up costs more than a chunk's work (as with BLAS in solve_lbfgs), so the search runs single-threaded
    with threadpool_limits(1, user_api="openmp"):
        if check is not None:
            check()  # finding the thread pools takes its own stretch of calls
        for chunk in pairwise_distances_chunked(x, x, metric="manhattan", working_memory=memory):
            if check is not None:
                check()
            rows = np.arange(start, start + len(chunk))
            d = np.round(chunk, 9)
            same = codes[rows][:, None] == codes[None, :]
            d_hit = np.where(same, d, np.inf)
            d_hit[np.arange(len(rows)), rows] = np.inf  # the record itself is not its own hit
            hit[rows] = d_hit.argmin(axis=1)
            miss[rows] = np.where(same, np.inf, d).argmin(axis=1)
            start += len(chunk)
            if progress is not None:
                progress(start, n)
    return hit, miss


def margins(x, codes: np.ndarray, check=None, progress=None) -> np.ndarray:
    """z_i = |x_i − NM(x_i)| − |x_i − NH(x_i)| on the features scaled to [0, 1], each row divided by
    max(1, ‖z_i‖₂) (dense n × d). ``x`` is the unscaled feature matrix (dense or sparse)."""
    import scipy.sparse as sp

    x = scale_span(x)
    if check is not None:
        check()
    hit, miss = nearest_hit_miss(x, codes, check, progress)
    if sp.issparse(x):
        z = (abs(x - x[miss]) - abs(x - x[hit])).toarray()
    else:
        z = np.abs(x - x[miss]) - np.abs(x - x[hit])
    return normalise_rows(z)


def normalise_rows(z: np.ndarray) -> np.ndarray:
    """Each row divided by max(1, its Euclidean norm): afterwards every ‖z_i‖ ≤ 1."""
    norms = np.linalg.norm(z, axis=1)
    return z / np.maximum(1.0, norms)[:, None]


# -- the objective and its solvers ---------------------------------------------------------------------
def objective(w: np.ndarray, z: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """(1/n) Σ log(1 + exp(−wᵀz_i)) + (λ/2)‖w‖² and its gradient."""
    margin = z @ w
    value = np.logaddexp(0.0, -margin).mean() + 0.5 * lam * float(w @ w)
    grad = -(z.T @ expit(-margin)) / len(z) + lam * w
    return float(value), grad


@dataclass(frozen=True)
class Solution:
    w: np.ndarray
    objective: float
    gradient_norm: float
    iterations: int
    solver: str


def solve_lbfgs(z: np.ndarray, lam: float, w0: np.ndarray | None = None, check=None) -> Solution:
    """L-BFGS to a gradient norm below 1e-8; a few Newton steps (Hessian-vector products, conjugate
    gradients) finish the job when L-BFGS's line search stalls first on a flat, badly scaled problem.
    ``check`` (cancellation) is called after every iteration and Newton step: each is a pass over z."""
    d = z.shape[1]
    w = np.zeros(d) if w0 is None else np.asarray(w0, dtype=float)
    # L-BFGS-B calls BLAS on tiny vectors thousands of times; threaded BLAS on a busy machine turns each
    # call into milliseconds of thread wake-ups, so it runs single-threaded
    with threadpool_limits(1, user_api="blas"):
        res = minimize(
            objective,
            w,
            args=(z, lam),
            jac=True,
            method="L-BFGS-B",
            options={"gtol": GRADIENT_TOLERANCE / 10, "ftol": 0.0, "maxiter": 20_000, "maxcor": 20},
            callback=None if check is None else lambda _w: check(),
        )
    w, iterations = res.x, int(res.nit)
    value, grad = objective(w, z, lam)
    for _ in range(50):
        if np.linalg.norm(grad) < GRADIENT_TOLERANCE:
            break
        if check is not None:
            check()
        w = w + newton_step(w, z, lam, grad)
        value, grad = objective(w, z, lam)
        iterations += 1
    return Solution(w, value, float(np.linalg.norm(grad)), iterations, "lbfgs")


def newton_step(w: np.ndarray, z: np.ndarray, lam: float, grad: np.ndarray) -> np.ndarray:
    """Solve H s = −g by conjugate gradients, H = (1/n) Zᵀ diag(σ(1−σ)) Z + λI (positive definite)."""
    from scipy.sparse.linalg import LinearOperator, cg

    p = expit(z @ w)
    weight = p * (1 - p) / len(z)
    d = len(w)
    hess = LinearOperator((d, d), matvec=lambda v: z.T @ (weight * (z @ v)) + lam * v, dtype=float)
    step, _ = cg(hess, -grad, rtol=1e-12, maxiter=10 * d)
    return step


def solve_paper_gd(z: np.ndarray, lam: float, epochs: int = 1, check=None) -> Solution:
    """Algorithm 1 as printed: w = (1, …, 1); for each record i, ∇ = (1/n)∂ℓ(wᵀz_i)/∂w + λw and
    w ← w − ∇/‖∇‖₂ (a step of length one); ``epochs`` passes over the records."""
    n, d = z.shape
    w = np.ones(d)
    for _ in range(epochs):
        for i in range(n):
            if check is not None and i % 256 == 0:
                check()
            zi = z[i]
            grad = -zi * expit(-(zi @ w)) / n + lam * w
            norm = np.linalg.norm(grad)
            if norm > 0:
                w = w - grad / norm
    value, grad = objective(w, z, lam)
    return Solution(w, value, float(np.linalg.norm(grad)), epochs * n, "paper-gd")


def solve(z: np.ndarray, lam: float, solver: str = "lbfgs", check=None) -> Solution:
    if solver == "lbfgs":
        return solve_lbfgs(z, lam, check=check)
    if solver == "paper-gd":
        return solve_paper_gd(z, lam, check=check)
    raise BadInput(f"unknown solver {solver!r}; choose lbfgs or paper-gd")


def choose_lambda(
    z: np.ndarray, codes: np.ndarray, grid=LAMBDA_GRID, folds: int = 5, seed: int = 0, check=None
) -> tuple[float, dict]:
    """λ from ``grid`` with the smallest mean held-out logistic loss of the margins, by stratified
    cross-validation over the rows of z (ties: the larger λ, the smaller sensitivity)."""
    from sklearn.model_selection import StratifiedKFold

    folds = max(2, min(folds, int(np.bincount(codes).min())))
    split = StratifiedKFold(folds, shuffle=True, random_state=seed)
    losses = {}
    for lam in grid:
        total = 0.0
        for train, test in split.split(z, codes):
            if check is not None:
                check()
            w = solve_lbfgs(z[train], lam, check=check).w
            total += float(np.logaddexp(0.0, -(z[test] @ w)).mean())
        losses[float(lam)] = total / folds
    best = min(losses.items(), key=lambda kv: (round(kv[1], 12), -kv[0]))[0]
    return best, losses


@dataclass(frozen=True)
class Weights:
    """FWELL's result on one dataset."""

    names: list[str]
    w: np.ndarray
    lam: float
    solution: Solution
    n: int
    lambda_losses: dict | None = None


def fwell(data, lam: float | None = None, solver: str = "lbfgs", seed: int = 0, check=None, progress=None) -> Weights:
    """FWELL's weights of ``data`` (a Table or BinaryMatrix with a target); ``progress``: see
    :func:`nearest_hit_miss`."""
    x, names, y = feature_matrix(data)
    codes = check_labels(y)
    z = margins(x, codes, check, progress)
    losses = None
    if lam is None:
        lam, losses = choose_lambda(z, codes, seed=seed, check=check)
    sol = solve(z, float(lam), solver, check)
    return Weights(names, sol.w, float(lam), sol, len(codes), losses)


def fold_weights(
    x, codes: np.ndarray, train: np.ndarray, lam: float | None = None, solver: str = "lbfgs", seed: int = 0
) -> Weights:
    """FWELL's weights of the training rows ``train`` of (x, codes) alone: the margins are built among the
    training records and, when ``lam`` is empty, λ is cross-validated on those margins only, so nothing of
    the held-out records reaches the ranking (the paper's protocol: λ tuned inside each training fold)."""
    train = np.asarray(train)
    sub_codes = np.asarray(codes)[train]
    z = margins(x[train], sub_codes)
    losses = None
    if lam is None:
        lam, losses = choose_lambda(z, sub_codes, seed=seed)
    sol = solve(z, float(lam), solver)
    return Weights([str(i) for i in range(z.shape[1])], sol.w, float(lam), sol, len(train), losses)


def large_lambda_epsilon(z: np.ndarray) -> float:
    """The ε at which the expected noise norm equals the weights' norm as λ grows without bound.

    For large λ the minimiser is w ≈ z̄/(2λ) (one gradient step from w = 0, where the loss's gradient is
    −z̄/2), so ‖w‖ ≈ ‖z̄‖/(2λ), while E‖b‖ = d · 2/(nελ); they are equal at ε = 4d/(n‖z̄‖), whatever λ.
    Below this ε no λ makes the noise smaller than the weights."""
    n, d = z.shape
    return 4.0 * d / (n * float(np.linalg.norm(np.asarray(z.mean(axis=0)).ravel())))


def fwell_arrays(x, y, lam: float, solver: str = "lbfgs") -> np.ndarray:
    """FWELL's weights of a feature matrix and labels (for the evaluation's training folds)."""
    codes = check_labels(np.asarray(y))
    return solve(margins(x, codes), lam, solver).w


# -- noise ---------------------------------------------------------------------------------------------
def noise_scale(n: int, epsilon: float, lam: float) -> float:
    """Scale of the Gamma law of ‖b‖: 2/(nελ), i.e. the sensitivity 2/(nλ) over ε."""
    return 2.0 / (n * epsilon * lam)


class SecureSource:
    """Random numbers from the operating system's cryptographic source (``os.urandom``), turned into
    uniforms on (0, 1) with 53 random bits each, and into normal and Gamma variates by inverting
    their distribution functions. Nothing about it can be replayed from a seed."""

    name = "os.urandom (cryptographically secure; not reproducible)"

    def uniform(self, size: int) -> np.ndarray:
        bits = np.frombuffer(os.urandom(8 * size), dtype=np.uint64) >> np.uint64(11)
        return (bits.astype(np.float64) + 0.5) * 2.0**-53

    def standard_normal(self, size: int) -> np.ndarray:
        return ndtri(self.uniform(size))

    def gamma(self, shape: float, scale: float) -> float:
        return float(gammaincinv(shape, self.uniform(1)[0]) * scale)


class SeededSource:
    """The run's seeded generator: the same seed gives the same noise (studies, tests)."""

    name = "seeded generator (study mode: reproducible from the seed, so not a private release)"

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def standard_normal(self, size: int) -> np.ndarray:
        return self.rng.standard_normal(size)

    def gamma(self, shape: float, scale: float) -> float:
        return float(self.rng.gamma(shape, scale))


def gamma_noise(d: int, scale: float, source) -> np.ndarray:
    """b with density ∝ exp(−‖b‖/scale) in ℝ^d: ‖b‖ ~ Gamma(d, scale) and a uniform direction."""
    direction = source.standard_normal(d)
    norm = np.linalg.norm(direction)
    while norm == 0:  # probability zero; never loop on it in practice
        direction = source.standard_normal(d)
        norm = np.linalg.norm(direction)
    return source.gamma(d, scale) * direction / norm


def private_weights(w: np.ndarray, n: int, epsilon: float, lam: float, source) -> np.ndarray:
    """w + b, b drawn for ε-differential privacy of weights with sensitivity 2/(nλ)."""
    return w + gamma_noise(len(w), noise_scale(n, epsilon, lam), source)


def ranking(w: np.ndarray) -> np.ndarray:
    """Feature indices by weight descending (ties: lower index first)."""
    return np.lexsort((np.arange(len(w)), -np.asarray(w)))


# -- the plugins' shared steps: weights with a run's progress, Private FWELL's noisy weights ---------------
MAX_REPORTED_WEIGHTS = 20_000  # details["weights"] lists every feature up to this many


def fwell_weights(data, lam, solver, ctx) -> Weights:
    ctx.progress(0.0, "FWELL: nearest hits and misses")

    def searched(done: int, total: int) -> None:
        ctx.progress(0.7 * done / total, f"FWELL: nearest hits and misses of {done:,} of {total:,} records")

    return fwell(data, lam, solver, seed=ctx.seed if ctx.seed is not None else 0, check=ctx.check, progress=searched)


def weight_table(names, w) -> dict | None:
    if len(names) > MAX_REPORTED_WEIGHTS:
        return None
    return {str(n): float(v) for n, v in zip(names, w)}


def noise_source(ctx):
    """The OS's cryptographic source in release mode; the run's seeded generator in study mode."""
    return SecureSource() if getattr(ctx, "mode", "study") == "release" else SeededSource(ctx.rng)


def assumptions(source, model_name: str | None, solver: str) -> list[str]:
    """Plain sentences stating what the ε guarantee rests on (the caveat of docs/reference.md#feature-weighting
    first)."""
    said = [
        "The paper's proof assumes each margin z_i depends on record x_i only; here z_i is built from x_i's "
        "nearest hit and nearest miss, so changing one record can also change the margins of the records whose "
        "nearest neighbour it was. The ε guarantee is exact for neighbouring margin matrices (one z_i changed), "
        "not strictly for neighbouring datasets.",
        "Neighbouring datasets have the same number of records n (public; it sets the noise scale) and differ in "
        "one record; the weights' sensitivity is 2/(nλ) (objective with λ/2, every ‖z_i‖ ≤ 1).",
        "Features are scaled to [0, 1] by their minimum and maximum in the data; those bounds are treated as public.",
        "Each run spends ε: several runs on the same data (a sweep, repeats) spend the sum, and choosing one of "
        "several runs by its utility on the private data is not covered.",
    ]
    if solver != "lbfgs":
        said.append(
            "The weights come from the paper's gradient steps, not from the exact minimiser the "
            "sensitivity bound is proved for: the ε claim needs solver = lbfgs."
        )
    if isinstance(source, SeededSource):
        said.append(
            "The noise came from the seeded generator (study mode): anyone who knows the seed, which "
            "the manifest records, can remove it. Such a release is for studies only, never for "
            "publication; `veil run` and the desktop draw from the operating system's secure source."
        )
    if model_name is not None:
        said.append(
            f"Two guarantees: ε-differential privacy covers only the noisy weights that set the order in "
            f"which features were tried; the released records are protected by {model_name} (checked on "
            f"the written file), not by differential privacy, and which features were kept also depends "
            f"on those non-private {model_name} checks."
        )
    return said


def private_fwell_weights(data, epsilon: float, lam: float, solver: str, model_name: str | None, ctx):
    """(noisy weights, feature names, details) of Private FWELL on ``data``: the one place the noise is
    drawn, shared by ``private-fwell`` and by Greedy-HamDist's ``score = private-fwell``. λ is fixed in
    advance, never chosen on the data (that choice would not be covered by ε)."""
    if lam is None or not float(lam) > 0:
        raise BadInput(
            "Private FWELL needs λ fixed in advance (a positive number): choosing it on the data is not covered by ε"
        )
    found = fwell_weights(data, float(lam), solver, ctx)
    ctx.progress(0.7, "Private FWELL: noise")
    source = noise_source(ctx)
    noisy = private_weights(found.w, found.n, epsilon, found.lam, source)
    said = assumptions(source, model_name, solver)
    details = {
        "epsilon_spent": epsilon,
        "assumptions": said,
        "noise_source": source.name,
        "context_mode": getattr(ctx, "mode", "study"),
        "lambda": found.lam,
        "lambda_source": "fixed in advance",
        "sensitivity": 2.0 / (found.n * found.lam),
        "noise_scale": noise_scale(found.n, epsilon, found.lam),
        "records": found.n,
        "features": len(found.names),
        "solver": solver,
        "weights": weight_table(found.names, noisy),
    }
    return noisy, found.names, details
