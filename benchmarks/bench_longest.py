"""The longest-pattern miner against pyfim's ``fim`` on the same patterns, as ratios in one run.

For each case the miner returns the ``r`` longest closed (maximal) itemsets with support ≥ k, where
``r`` is chosen so that its answer is exactly the set of patterns of length ≥ L (every pattern, when
L = 1); pyfim's ``fim`` (its default algorithm) and its fastest algorithm for the case are asked for
the same set (``zmin = L``). Both get the same records; pyfim gets them as a ready Python list (its
input conversion is not timed), the miner converts its CSR input itself (timed). Times are
medians of interleaved repeats; "per pattern" is time / patterns, so the ratio of times is the
ratio per pattern. Also: Maximal's search (top_r = 50 at k = 5) on FIMI chess and RELATHE.

Run: ``.venv/bin/python benchmarks/bench_longest.py [--repeats 7] [--threads N] [--debug]`` (writes
nothing; prints markdown tables): ``--threads`` is how many threads a search may use (default: every
core), ``--debug`` writes the searches' debug counts (Veil's loggers at DEBUG level) on stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pytest
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import add_search_flags, dataset, machine, markdown_table, median_times, search_options  # noqa: E402

from veil.engine import (
    CLOSED_ITEMSETS,
    MAXIMAL_ITEMSETS,
    SearchOptions,
    have_pyfim,
    longest_itemsets,  # noqa: E402
    read_transactions,
)

pytestmark = pytest.mark.benchmark

# (dataset, path, k, target, L, the pyfim algorithm that is fastest there)
CASES = [
    ("FIMI chess", "fimi_chess/chess.dat", 2000, CLOSED_ITEMSETS, 1, "fpgrowth"),
    ("FIMI chess", "fimi_chess/chess.dat", 1500, MAXIMAL_ITEMSETS, 1, "fpgrowth"),
    ("FIMI mushroom", "fimi_mushroom/mushroom.dat", 200, CLOSED_ITEMSETS, 1, "fpgrowth"),
    ("BMS-WebView-1", "bms_webview_1/BMS1_itemset_mining.space-separated.txt", 50, CLOSED_ITEMSETS, 1, "eclat"),
    ("FIMI chess", "fimi_chess/chess.dat", 5, MAXIMAL_ITEMSETS, 35, "carpenter"),
    ("RELATHE", "scikit_feature/RELATHE.mat", 5, MAXIMAL_ITEMSETS, 58, "carpenter"),
]


def load(relative: str) -> sp.csr_matrix | None:
    path = dataset(relative)
    if path is None:
        return None
    if path.suffix == ".mat":
        import scipy.io as sio

        return sp.csr_matrix(sp.csr_matrix(sio.loadmat(path)["X"]) > 0, dtype=bool)
    return sp.csr_matrix(read_transactions(path).to_sparse(), dtype=bool)


def transactions(m: sp.csr_matrix) -> list:
    return [m.indices[a:b].tolist() for a, b in zip(m.indptr[:-1], m.indptr[1:])] + [[]]


def one_case(m, k, target, floor, fastest, repeats, options: SearchOptions):
    import fim

    t = transactions(m)
    code = "c" if target == CLOSED_ITEMSETS else "m"
    reference = fim.fim(t, target=code, supp=-k, zmin=floor, report="a")
    r = len(reference)
    expected = sorted(((tuple(sorted(s)), int(n)) for s, n in reference), key=lambda p: (-len(p[0]), p[0]))
    found = longest_itemsets(m, k, r, target=target, options=options)
    assert found.patterns == expected, "the miner and pyfim disagree"
    slow = repeats if fastest != "fim" else 1
    times = median_times(
        {
            "longest": lambda: longest_itemsets(m, k, r, target=target, options=options),
            "fim": lambda: fim.fim(t, target=code, supp=-k, zmin=floor, report="a"),
            fastest: lambda: getattr(fim, fastest)(t, target=code, supp=-k, zmin=floor, report="a"),
        },
        slow,
    )
    return r, found.nodes, times


def main(repeats: int = 7, skip_slow_fim: bool = True, options: SearchOptions = SearchOptions()):
    if not have_pyfim():
        sys.exit("pyfim is not installed (pip install 'veil[mining]')")
    rows = []
    for name, rel, k, target, floor, fastest in CASES:
        m = load(rel)
        if m is None:
            continue
        if floor > 1 and skip_slow_fim:  # FP-growth needed > 100 s on chess at L = 35: fim not timed
            import fim

            t = transactions(m)
            code = "c" if target == CLOSED_ITEMSETS else "m"
            start = time.perf_counter()
            reference = getattr(fim, fastest)(t, target=code, supp=-k, zmin=floor, report="a")
            best = time.perf_counter() - start
            start = time.perf_counter()
            found = longest_itemsets(m, k, len(reference), target=target, options=options)
            ours = time.perf_counter() - start
            assert len(found.patterns) == len(reference)
            rows.append(
                [
                    name,
                    k,
                    target,
                    floor,
                    len(reference),
                    found.nodes,
                    f"{ours:.2f}",
                    "not timed",
                    f"{best:.2f} ({fastest})",
                    "—",
                    f"{ours / best:.2f}",
                ]
            )
            continue
        r, runs, times = one_case(m, k, target, floor, fastest, repeats, options)
        rows.append(
            [
                name,
                k,
                target,
                floor,
                r,
                runs,
                f"{times['longest']:.3f}",
                f"{times['fim']:.3f}",
                f"{times[fastest]:.3f} ({fastest})",
                f"{times['longest'] / times['fim']:.2f}",
                f"{times['longest'] / times[fastest]:.2f}",
            ]
        )
        print(rows[-1], flush=True)
    print(machine())
    print(
        markdown_table(
            [
                "data",
                "k",
                "target",
                "L",
                "patterns",
                "C runs",
                "longest_itemsets (s)",
                "pyfim fim (s)",
                "fastest pyfim (s)",
                "ratio to fim",
                "ratio to fastest",
            ],
            rows,
        )
    )


def test_longest_against_pyfim():
    main(repeats=1)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description="the longest-pattern miner against pyfim on the same patterns")
    p.add_argument("--repeats", type=int, default=7, help="interleaved repeats, of which the median is taken")
    add_search_flags(p)
    args = p.parse_args()
    main(args.repeats, options=search_options(args.threads, args.debug))
