"""Distributed PatternKa (Algorithm 5) on Spark ``local[2]`` against the single-machine path, on
BMS-WebView-2: the same grouping (checked), and the ratio of their times in one run. (The single
machine's cache keeps every pattern as long as its 32nd, Spark's the 32 its miner returns, so Spark may
mine more often; both are the defaults a user gets.)

Both run on this machine's two cores; the Spark session is started (and its JVM warmed by one tiny
job) before the clock starts, so the ratio is of the grouping alone. Needs pyspark (``pip install
-e .[spark]``) and Java 17. Run ``python benchmarks/bench_spark.py [k]``.

``--netflix N [k]``: instead of BMS-WebView-2, the paper's data shape (paper 002's Netflix-shaped
records: ``power_law_sets(N)``, 4,500 items, 56 items a record on average; N = 410,000 is the full
size) at N records, k = 100 unless given.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

from _bench import dataset, machine, markdown_table
from veil.engine import SetValued, read_transactions
from veil.plugins.setvalued._patternka import patternka_groups

MASTER = "local[2]"


def measure(k: int, netflix: int | None = None) -> dict:
    from veil.plugins._spark.patterns import spark_patternka_groups
    from veil.plugins._spark.session import spark_session

    if netflix:
        from synthetic import power_law_sets

        sets = power_law_sets(netflix)
    else:
        sets = SetValued.from_binary(read_transactions(dataset("bms_webview_2/BMS2_itemset_mining.txt")))
    started = time.perf_counter()
    session = spark_session(MASTER)
    session.sparkContext.parallelize(range(10), 2).sum()
    start_seconds = time.perf_counter() - started
    started = time.perf_counter()
    local = patternka_groups(sets, k)
    local_seconds = time.perf_counter() - started
    started = time.perf_counter()
    distributed = spark_patternka_groups(sets, k, session=session)
    spark_seconds = time.perf_counter() - started
    assert np.array_equal(local.groups, distributed.groups)
    return {
        "k": k,
        "records": sets.n_rows,
        "items": sets.n_items,
        "groups": local.n_groups,
        "minings": f"{local.minings} / {distributed.minings}",
        "local": local_seconds,
        "spark": spark_seconds,
        "start": start_seconds,
    }


def table(rows: list[dict]) -> str:
    return markdown_table(
        [
            "records",
            "items",
            "k",
            "groups",
            "minings (single / Spark)",
            "single machine s",
            f"Spark {MASTER} s",
            "Spark / single",
            "session start s",
        ],
        [
            [
                f"{r['records']:,}",
                f"{r['items']:,}",
                r["k"],
                r["groups"],
                r["minings"],
                f"{r['local']:.1f}",
                f"{r['spark']:.1f}",
                f"{r['spark'] / r['local']:.1f}×",
                f"{r['start']:.1f}",
            ]
            for r in rows
        ],
    )


@pytest.mark.benchmark
def test_spark_gives_the_same_grouping_and_the_single_machine_path_is_faster():
    pytest.importorskip("pyspark")
    if dataset("bms_webview_2/BMS2_itemset_mining.txt") is None:
        pytest.skip("BMS-WebView-2 not found")
    row = measure(200)
    print(machine())
    print(table([row]))
    assert row["local"] < row["spark"]  # where the data fits, the single-machine path is the faster


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--netflix"]:
        n, ks = int(args[1]), [int(a) for a in args[2:]] or [100]
        print(machine())
        print(table([measure(k, n) for k in ks]))
    else:
        ks = [int(a) for a in args] or [200]
        print(machine())
        print(table([measure(k) for k in ks]))
