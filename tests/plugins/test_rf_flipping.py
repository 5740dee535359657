"""RF (randomisation flipping, Byun et al. 2007; docs/reference.md#feature-selection): the clustering rule against
a brute-force
oracle, the flipping rule, the privacy guarantee, the flip rate and reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from veil.engine import BadInput, BinaryMatrix, Cancelled, CancelToken, Context, PluginCall, RunSpec, execute
from veil.plugins.feature_selection.rf_flipping import flip_within_clusters, k_member_clusters, run_k_required


def random_matrix(seed=0, n=60, m=6, density=0.4) -> BinaryMatrix:
    rng = np.random.default_rng(seed)
    return BinaryMatrix.from_dense((rng.random((n, m)) < density).astype(np.uint8), labels=rng.choice([1, -1], n))


def reference_clusters(dense: np.ndarray, k: int, start: int) -> np.ndarray:
    """The rule of docs/reference.md#feature-selection written the slow, obvious way (the module docstring fixes
    ties and "nearest")."""
    n = len(dense)
    dist = (dense[:, None, :] != dense[None, :, :]).sum(axis=2)
    unassigned, last, clusters = list(range(n)), start, []
    while len(unassigned) >= k:
        seed = max(unassigned, key=lambda r: (dist[last, r], -r))
        unassigned.remove(seed)
        near = sorted(unassigned, key=lambda r: (dist[seed, r], r))[: k - 1]
        for r in near:
            unassigned.remove(r)
        clusters.append([seed, *near])
        last = seed
    label = np.empty(n, dtype=np.int64)
    for c, members in enumerate(clusters):
        label[members] = c
    for r in unassigned:
        means = [np.mean([dist[r, v] for v in members]) for members in clusters]
        label[r] = int(np.argmin(means))
    return label


class FixedStart:
    """An rng stand-in whose start record is chosen by the test."""

    def __init__(self, start):
        self.start = start

    def integers(self, n):
        return self.start


def run_rf(matrix, k=3, model="k-anonymity", seed=0, registry=None):
    from veil.engine import make_registry

    return execute(
        registry or make_registry(), matrix, RunSpec(PluginCall("rf-flipping"), PluginCall(model, {"k": k}), seed=seed)
    )


# -- clustering -------------------------------------------------------------------------------------------
def test_hand_made_example():
    rows = ["0000", "0001", "1111", "1110", "0011", "1000", "0000"]
    matrix = BinaryMatrix.from_dense([[int(c) for c in r] for r in rows])
    cluster, seeds = k_member_clusters(matrix, 3, FixedStart(0))
    # from row 0 the furthest is row 2 (1111): it seeds cluster 0 with its nearest, rows 3 (d 1) and 4 (d 2);
    # the furthest from row 2 among the rest are rows 0 and 6 (d 4): the lower index, row 0, seeds cluster 1
    # with rows 6 (d 0) and 1 (d 1, tied with row 5, lower index); row 5 (1000) is left over, with mean
    # distance 8/3 to cluster 0 and 4/3 to cluster 1.
    assert seeds.tolist() == [2, 0]
    assert cluster.tolist() == [1, 1, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 3, 5])
def test_clustering_matches_brute_force(seed, k):
    matrix = random_matrix(seed, n=23 + seed, m=4)  # few features: many ties
    start = int(np.random.default_rng(seed).integers(matrix.n_rows))
    cluster, _ = k_member_clusters(matrix, k, np.random.default_rng(seed))
    assert cluster.tolist() == reference_clusters(matrix.to_dense(), k, start).tolist()


@pytest.mark.parametrize("n, k", [(50, 5), (53, 5), (7, 7), (9, 4), (40, 1)])
def test_clusters_partition_the_rows_and_hold_k(n, k):
    matrix = random_matrix(n, n=n, m=8)
    cluster, seeds = k_member_clusters(matrix, k, np.random.default_rng(1))
    sizes = np.bincount(cluster)
    assert cluster.min() == 0 and len(sizes) == len(seeds) == n // k
    assert sizes.sum() == n and sizes.min() >= k and sizes.max() < 2 * k
    assert all(cluster[s] == c for c, s in enumerate(seeds))


def test_wide_rows_span_several_words():
    matrix = random_matrix(4, n=30, m=150, density=0.1)
    cluster, _ = k_member_clusters(matrix, 4, np.random.default_rng(4))
    start = int(np.random.default_rng(4).integers(30))
    assert cluster.tolist() == reference_clusters(matrix.to_dense(), 4, start).tolist()


# -- flipping -----------------------------------------------------------------------------------------------
def test_members_of_a_cluster_are_identical_after_flipping():
    matrix = random_matrix(2, n=47, m=9)
    rng = np.random.default_rng(2)
    cluster, _ = k_member_clusters(matrix, 4, rng)
    flipped = flip_within_clusters(matrix, cluster, rng).toarray()
    for c in np.unique(cluster):
        block = flipped[cluster == c]
        assert (block == block[0]).all()


def test_values_are_drawn_with_their_frequency_in_the_cluster():
    clusters = 3000
    one = np.array([[1, 1, 1, 0], [0, 1, 1, 0], [0, 0, 1, 0]])  # per feature: 1/3, 2/3, 3/3 and 0/3 ones
    matrix = BinaryMatrix.from_dense(np.tile(one, (clusters, 1)))
    cluster = np.repeat(np.arange(clusters), 3)
    values = flip_within_clusters(matrix, cluster, np.random.default_rng(5)).toarray()[::3]
    ones = values.sum(axis=0)
    assert ones[2] == clusters and ones[3] == 0
    for f, p in ((0, 1 / 3), (1, 2 / 3)):
        assert stats.binomtest(int(ones[f]), clusters, p).pvalue > 0.001


# -- the method -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["k-anonymity", "k-ac"])
def test_release_passes_both_models(model, registry):
    matrix = random_matrix(3, n=80, m=7)
    result = run_rf(matrix, k=4, model=model, registry=registry)
    assert result.verdict.holds
    other = "k-ac" if model == "k-anonymity" else "k-anonymity"
    bound = registry.privacy_model(other)
    assert bound.check(result.release, bound.params({"k": 4})).holds
    assert result.release.details["clusters"] == 80 // 4


def test_release_keeps_all_features_and_labels_and_reports_flip_rate(registry):
    matrix = random_matrix(6, n=61, m=5)
    release = run_rf(matrix, k=5, registry=registry).release
    assert list(release.selected_features) == matrix.feature_names
    assert (release.frame[release.target].to_numpy() == matrix.labels).all()
    changed = (release.frame[matrix.feature_names].to_numpy() != matrix.to_dense()).sum()
    assert changed > 0
    assert release.details["flipped_cells"] == changed
    assert release.details["flip_rate"] == pytest.approx(changed / (61 * 5))


def test_seeds_reproduce_and_differ(registry):
    matrix = random_matrix(7, n=70, m=8)
    first, again, other = (run_rf(matrix, k=5, seed=s, registry=registry).release.frame for s in (11, 11, 12))
    assert first.equals(again)
    assert not first.equals(other)


def test_k_one_changes_nothing(registry):
    matrix = random_matrix(8, n=30, m=6)
    release = run_rf(matrix, k=1, registry=registry).release
    assert (release.frame[matrix.feature_names].to_numpy() == matrix.to_dense()).all()
    assert release.details["flip_rate"] == 0.0


def test_needs_a_model_with_k(registry):
    matrix = random_matrix(9, n=20, m=4)
    with pytest.raises(BadInput, match="privacy model"):
        execute(registry, matrix, RunSpec(PluginCall("rf-flipping")))

    class NoK:
        params = object()

    with pytest.raises(BadInput, match="with a k"):
        run_k_required(NoK())
    with pytest.raises(BadInput, match="larger than the number of records"):
        run_rf(matrix, k=21, registry=registry)


def test_cancellation_stops_the_clustering():
    matrix = random_matrix(10, n=400, m=6)
    token = CancelToken()
    ctx = Context(0, on_progress=lambda f, msg: token.cancel(), token=token)
    with pytest.raises(Cancelled):
        k_member_clusters(matrix, 3, ctx.rng, ctx)
