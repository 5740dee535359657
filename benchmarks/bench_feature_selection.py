"""Paper 000's methods on BASEHOCK (1,993 × 4,862, words present/absent), measured as ratios.

(a) the incremental k-AC kernel of a greedy step against recomputing kac from scratch per candidate;
(b) Greedy-HamDist and Greedy-DistCnt end to end at k = 5;
(c) Maximal end to end against the C miner (pyfim) alone on the same input.

Run: ``make benchmark`` or ``.venv/bin/python benchmarks/bench_feature_selection.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import dataset, markdown_table, median_times  # noqa: E402

from veil.engine import KacConstraint, Recipe, Step, make_registry, partition_of, read_data  # noqa: E402
from veil.plugins.feature_selection.greedy import greedy_distcnt, greedy_hamdist, maximal  # noqa: E402

pytestmark = pytest.mark.benchmark


def basehock():
    path = dataset("scikit_feature/BASEHOCK.mat")
    if path is None:
        return None
    table = read_data(make_registry(), path)
    steps = tuple(Step(c, "positive") for c in table.columns if c != "Y")
    return Recipe(steps, "Y").apply(table)


def incremental_vs_naive(matrix, k=5, sample=200, repeats=3):
    """Check ``sample`` candidates against the S Greedy-HamDist ends with (the most classes)."""
    selected, _ = greedy_hamdist(matrix, KacConstraint(matrix, k))
    part = partition_of(matrix, selected)
    rest = [f for f in range(matrix.n_features) if f not in selected]
    candidates = np.random.default_rng(0).choice(rest, size=min(sample, len(rest)), replace=False).tolist()

    def incremental():
        return [part.kac_feasible(f, k) for f in candidates]

    def naive():
        return [partition_of(matrix, [*selected, f]).kac() >= k for f in candidates]

    assert incremental() == naive()
    times = median_times({"incremental": incremental, "naive": naive}, repeats)
    return len(selected), part.n_classes, len(candidates), times


def end_to_end(matrix, k=5, repeats=3):
    return median_times(
        {
            "Greedy-HamDist": lambda: greedy_hamdist(matrix, KacConstraint(matrix, k)),
            "Greedy-DistCnt": lambda: greedy_distcnt(matrix, KacConstraint(matrix, k)),
        },
        repeats,
    )


def maximal_vs_miner(matrix, k, repeats=3):
    import fim

    def miner_alone():
        return fim.fim(matrix.transactions() + [[]], target="m", supp=-k, zmin=1, report="a")

    def veil_maximal():
        return maximal(matrix, k, top_r=50, backend="pyfim")

    return median_times({"pyfim alone": miner_alone, "Maximal": veil_maximal}, repeats)


def report(matrix, ks=(11, 8)) -> str:
    lines = []
    chosen, classes, n_cand, t = incremental_vs_naive(matrix)
    lines.append(
        markdown_table(
            ["case", "candidates", "incremental ms", "naive ms", "gain"],
            [
                [
                    f"kac check after Greedy-HamDist's {chosen} features ({classes} classes), k = 5",
                    n_cand,
                    f"{t['incremental'] * 1e3:.1f}",
                    f"{t['naive'] * 1e3:.1f}",
                    f"{t['naive'] / t['incremental']:.0f}×",
                ]
            ],
        )
    )
    e = end_to_end(matrix)
    lines.append(markdown_table(["method (k = 5, k-ac)", "seconds"], [[m, f"{s:.2f}"] for m, s in e.items()]))
    rows = []
    for k in ks:
        m = maximal_vs_miner(matrix, k, repeats=1)
        rows.append([k, f"{m['pyfim alone']:.2f}", f"{m['Maximal']:.2f}", f"{m['Maximal'] / m['pyfim alone']:.2f}"])
    lines.append(markdown_table(["k", "pyfim alone s", "Maximal s", "ratio"], rows))
    return "\n\n".join(lines)


@pytest.fixture(scope="module")
def matrix():
    m = basehock()
    if m is None:
        pytest.skip("BASEHOCK.mat not found under ../shared/datasets")
    return m


def test_incremental_kernel_gain(matrix, capsys):
    chosen, classes, n_cand, t = incremental_vs_naive(matrix)
    with capsys.disabled():
        print(
            f"\nincremental {t['incremental'] * 1e3:.1f} ms vs naive {t['naive'] * 1e3:.1f} ms "
            f"({t['naive'] / t['incremental']:.0f}×) for {n_cand} candidates"
        )
    assert t["naive"] / t["incremental"] >= 20


def test_maximal_within_1_5x_of_the_miner(matrix, capsys):
    pytest.importorskip("fim")
    m = maximal_vs_miner(matrix, 11, repeats=1)
    with capsys.disabled():
        print(f"\nMaximal {m['Maximal']:.2f} s vs pyfim alone {m['pyfim alone']:.2f} s")
    assert m["Maximal"] <= 1.5 * m["pyfim alone"]


if __name__ == "__main__":
    started = time.perf_counter()
    m = basehock()
    if m is None:
        sys.exit("BASEHOCK.mat not found under ../shared/datasets")
    print(report(m, ks=tuple(int(a) for a in sys.argv[1:]) or (11, 8)))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
