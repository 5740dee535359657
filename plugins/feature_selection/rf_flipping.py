"""RF: randomisation flipping after greedy k-member clustering (Byun et al. 2007), the baseline of
paper 000 (Tables 4–6, docs/reference.md#feature-selection).

Records are grouped into clusters of at least k by Hamming distance; then, in every cluster and for
every feature, all members get one value drawn with probability equal to that value's frequency in
the cluster. Every cluster becomes ≥ k identical rows, so the release keeps all features and is
k-anonymous (hence k-AC) by construction. The price is the share of cells flipped.

The clustering rule, made precise where docs/reference.md#feature-selection leaves room:

* Distances are Hamming distances over all features, computed by XOR and popcount on rows packed
  into 64-bit words (one word per row for Adult's 19 features).
* A random record r₀ (from the run's seed) starts the walk. The first seed is the unassigned record
  furthest from r₀, each later seed the unassigned record furthest from the previous seed (Byun's
  Algorithm), while at least k records are unassigned.
* A seed's cluster is the seed plus the k − 1 unassigned records nearest to the seed.
* Ties, in both "furthest" and "nearest", go to the lower row index.
* The r < k records left over each join the *nearest cluster*: the one with the smallest mean
  Hamming distance to its members, taken over the clusters as the main loop formed them (exactly k
  members each), so a leftover's choice does not depend on the others'. Ties go to the cluster formed
  first. The mean distance to the members is the criterion that tracks the cost of flipping: a
  cluster's expected number of flips on a feature is proportional to the pairwise disagreements
  among its members.

The work is O(n²/k) distance evaluations: one distance vector from each seed to the unassigned
records, which serves both to fill the seed's cluster and to choose the next seed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from veil.engine import BINARY, Algorithm, BadInput, BinaryMatrix, Judgement, MemoryCost, feature_subset, hookimpl

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp

PAPER = "000_0106b4def2026c16"
CHUNK_WORDS = 1 << 22  # distance work between two cancellation checks (≈ a few ms)


def pack_rows_bits(matrix: BinaryMatrix) -> np.ndarray:
    """Rows as packed bitsets: an n × ⌈m/64⌉ uint64 array (feature j is bit j % 64 of word j // 64)."""
    n, m = matrix.shape
    words = max((m + 63) // 64, 1)
    packed = np.zeros((n, words), dtype=np.uint64)
    csc = matrix.to_sparse()
    cols = np.repeat(np.arange(m, dtype=np.int64), np.diff(csc.indptr))
    rows = csc.indices.astype(np.int64)
    bits = np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64))
    np.bitwise_or.at(packed, (rows, cols >> 6), bits)
    return packed


def hamming_to(bits: np.ndarray, target, check=None) -> np.ndarray:
    """Hamming distances (int64) from the packed row ``target`` to every packed row of ``bits`` (an
    n × words array, or a 1-D array when one word holds a row)."""
    n_words = 1 if bits.ndim == 1 else bits.shape[1]
    out = np.empty(len(bits), dtype=np.int64)
    step = max(CHUNK_WORDS // n_words, 1)
    for start in range(0, len(bits), step):
        counts = np.bitwise_count(bits[start : start + step] ^ target)
        out[start : start + step] = counts if bits.ndim == 1 else counts.sum(axis=1, dtype=np.int64)
        if check is not None and len(bits) > step:
            check()
    return out


def k_member_clusters(
    matrix: BinaryMatrix, k: int, rng: np.random.Generator, ctx=None
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy k-member clustering on Hamming distance (module docstring has the exact rule).

    Returns
    -------
    cluster : int64 array of length n
        Cluster index of every record; clusters are numbered in the order they were formed.
    seeds : int64 array
        The seed record of each cluster.
    """
    n, m = matrix.shape
    if not 1 <= k <= n:
        raise BadInput(f"k = {k} must be between 1 and the number of records ({n})")
    if k == 1:  # every record is its own cluster; nothing to search
        return np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64)
    packed = pack_rows_bits(matrix)
    if packed.shape[1] == 1:
        packed = packed[:, 0]  # one word per row: 1-D arrays compact and XOR fastest
    check = ctx.check if ctx is not None else None
    cluster = np.full(n, -1, dtype=np.int64)
    seeds: list[int] = []
    # The unassigned records, ascending, with their packed rows and their distance to the last seed;
    # the three shrink together, so ties resolved by position are resolved by lower row index.
    remaining, bits = np.arange(n, dtype=np.int64), packed
    dist = hamming_to(bits, packed[int(rng.integers(n))], check)
    while len(remaining) >= k:
        if ctx is not None:
            ctx.progress((n - len(remaining)) / n, f"RF: {len(seeds)} clusters of {k}")
        s = int(np.argmax(dist))  # furthest from the last seed (the first of equals: lower index)
        dist = hamming_to(bits, bits[s], check)
        dist[s] = m + 1  # the seed is not its own neighbour
        members = _nearest(dist, k - 1)
        cluster[remaining[s]] = cluster[remaining[members]] = len(seeds)
        seeds.append(int(remaining[s]))
        keep = np.ones(len(remaining), dtype=bool)
        keep[s] = False
        keep[members] = False
        remaining, bits, dist = remaining[keep], bits[keep], dist[keep]
    if len(remaining):
        cluster[remaining] = _nearest_clusters(packed, remaining, cluster, len(seeds), check)
    return cluster, np.asarray(seeds, dtype=np.int64)


def _nearest(dist: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` smallest distances, ties to the lower position.

    Distances are small integers, so a histogram finds the cut-off distance t in one pass: every
    position below t, then the first positions at t (cheaper than a partial sort of the whole array)."""
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    cumulative = np.cumsum(np.bincount(dist))
    t = int(np.searchsorted(cumulative, count))  # the smallest distance with at least `count` at or below it
    below = np.flatnonzero(dist < t)
    return np.concatenate([below, np.flatnonzero(dist == t)[: count - len(below)]])


def _nearest_clusters(
    packed: np.ndarray, leftovers: np.ndarray, cluster: np.ndarray, n_clusters: int, check=None
) -> np.ndarray:
    """For each leftover, the cluster with the smallest mean distance to its members (ties: first)."""
    members = np.flatnonzero(cluster >= 0)
    sizes = np.bincount(cluster[members], minlength=n_clusters)
    chosen = np.empty(len(leftovers), dtype=np.int64)
    member_bits = packed[members]
    for i, r in enumerate(leftovers):
        d = hamming_to(member_bits, packed[r], check)
        mean = np.bincount(cluster[members], weights=d, minlength=n_clusters) / sizes
        chosen[i] = int(np.argmin(mean))
    return chosen


def flip_within_clusters(matrix: BinaryMatrix, cluster: np.ndarray, rng: np.random.Generator) -> sp.csr_matrix:
    """Per cluster and feature, one value for every member: 1 with probability (ones in the cluster) /
    (cluster size). Sparse throughout: a (cluster, feature) pair with no 1 stays 0 without a draw."""
    import scipy.sparse as sp

    n, m = matrix.shape
    n_clusters = int(cluster.max()) + 1 if n else 0
    indicator = sp.csr_matrix((np.ones(n, dtype=np.int64), (cluster, np.arange(n))), shape=(n_clusters, n))
    ones = (indicator @ matrix.to_sparse().astype(np.int64).tocsr()).tocsr()
    ones.sort_indices()
    sizes = np.bincount(cluster, minlength=n_clusters)
    row_of = np.repeat(np.arange(n_clusters), np.diff(ones.indptr))
    draws = rng.random(ones.nnz) < ones.data / sizes[row_of]
    values = sp.csr_matrix(
        (np.ones(int(draws.sum()), dtype=np.uint8), (row_of[draws], ones.indices[draws])), shape=(n_clusters, m)
    )
    return values[cluster]


def flipped_cells(before: BinaryMatrix, after: BinaryMatrix) -> int:
    """Number of cells whose value differs (nnz of the XOR)."""
    common = before.to_sparse().multiply(after.to_sparse()).nnz
    return before.nnz + after.nnz - 2 * int(common)


def run_k_required(model) -> int:
    each = getattr(model, "models", None) or ((model,) if model is not None else ())
    ks = [k for k in (getattr(getattr(m, "params", None), "k", None) for m in each) if k is not None]
    k = max(ks) if ks else None  # under combined models, the largest k keeps every one of them
    if k is None:
        raise BadInput(
            "RF makes every cluster of k records identical; choose a privacy model with a k (k-anonymity or k-ac)"
        )
    return int(k)


class RandomisationFlipping(Algorithm):
    """RF (Byun et al. 2007): greedy k-member clustering, then per-cluster random flipping.

    The release keeps every feature, with the flipped values; ``details["flip_rate"]`` is flipped
    cells / (n·m) and ``details["clusters"]`` the number of clusters. k is the run's privacy model's
    k. The method is randomised (the start record and the flips come from the run's seed): the paper
    reports mean ± std over 10 runs, which a Study gets with ``"repeats": 10``.
    """

    name = "rf-flipping"
    memory_cost = MemoryCost(per_record_column=24)  # the records × features matrix it flips, dense
    title = "RF (randomisation flipping)"
    paper = PAPER
    description = (
        "Baseline: clusters records into groups of at least k by Hamming distance and sets each group's "
        "features to one randomly drawn value, so every group is identical (Byun et al. 2007; paper 000, "
        "Tables 4–6). Keeps all features; reports the share of flipped cells."
    )
    accepts = (BINARY,)
    needs_labels = False
    needs_model = True
    satisfies = (Judgement.GROUP_SIZE, Judgement.CONTAINMENT)  # clusters of ≥ k identical records
    randomised = True
    default_repeats = 10  # docs/reference.md#feature-selection: report mean ± std over 10 repeats
    Params = None

    def run(self, data, model, params, ctx):
        k = run_k_required(model)
        n, m = data.shape
        if k > n:
            raise BadInput(f"k = {k} is larger than the number of records ({n})")
        cluster, seeds = k_member_clusters(data, k, ctx.rng, ctx)
        ctx.progress(0.95, "RF: flipping")
        flipped = BinaryMatrix.from_sparse(
            flip_within_clusters(data, cluster, ctx.rng), features=data.features, labels=data.labels
        )
        ctx.check()
        changed = flipped_cells(data, flipped)
        sizes = np.bincount(cluster)
        details = {
            "flip_rate": changed / (n * m) if n and m else 0.0,
            "flipped_cells": changed,
            "clusters": len(seeds),
            "k": k,
            "smallest_cluster": int(sizes.min()) if n else 0,
            "largest_cluster": int(sizes.max()) if n else 0,
        }
        notes = (
            f"RF: {len(seeds)} clusters of at least {k} records; {100 * details['flip_rate']:.2f} % of the "
            f"cells were flipped. Randomised: the paper reports mean ± std over 10 repeats.",
        )
        ctx.progress(1.0)
        return feature_subset(flipped, list(range(m)), notes=notes, details=details)


@hookimpl
def veil_register_algorithms():
    return [RandomisationFlipping]
