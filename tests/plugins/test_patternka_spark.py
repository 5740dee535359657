"""Distributed PatternKa (Algorithm 5): its map, reduce and merge against the single-machine miner (no
Spark needed), and on Spark (skipped without pyspark, a failure on CI) the same grouping as the single-machine path."""

from __future__ import annotations

import os
import sys
import threading
from collections import defaultdict

import numpy as np
import pytest

from veil.engine import (
    BadInput,
    Cancelled,
    Context,
    PluginCall,
    RunSpec,
    SetValued,
    execute,
    longest_itemsets,
    read_transactions,
)
from veil.plugins.setvalued._patternka import patternka_groups
from veil.plugins._spark.patterns import _mine_key, _prefixes, merge_longest
from veil.plugins._spark.session import pyspark_available


def random_sets(rng, n, m, p):
    rows = [{j for j in range(m) if rng.random() < p[j]} for _ in range(n)]
    return rows, SetValued(
        np.concatenate(([0], np.cumsum([len(r) for r in rows]))),
        [j for r in rows for j in sorted(r)],
        [f"i{j:02d}" for j in range(m)],
    )


# skipped where pyspark is absent, except on CI, where the fixture fails instead (`make test` installs it)
needs_spark = pytest.mark.skipif(
    not pyspark_available() and os.environ.get("CI") != "true",
    reason="pyspark is not installed (pip install veil[spark])",
)


def algorithm_5_here(sets: SetValued, rows, k, r, rank=None):
    """Algorithm 5 in this process with the very functions Spark runs: map, group by key, reduce, merge."""
    n, m = sets.n_rows, sets.n_items
    alive = np.zeros(n, dtype=bool)
    alive[rows] = True
    counts = np.bincount(
        np.concatenate([sets.row(i) for i in rows] + [np.zeros(0, np.int64)]).astype(np.int64), minlength=m
    )
    if rank is None:
        rank = np.arange(m)
    by_key = defaultdict(list)
    for i in range(n):
        for key, prefix in _prefixes((i, sets.row(i).astype(np.int32)), rank, alive, counts >= k):
            by_key[key].append(prefix)
    reduced = [_mine_key(key, prefixes, k, r, None) for key, prefixes in by_key.items()]
    assert all(message is None for _, _, message in reduced)
    return merge_longest((patterns for _, patterns, _ in reduced), r)


def test_map_reduce_merge_finds_the_r_longest_closed_patterns():
    rng = np.random.default_rng(5)
    for trial in range(60):
        n, m = int(rng.integers(3, 40)), int(rng.integers(1, 10))
        _, sets = random_sets(rng, n, m, rng.uniform(0.1, 0.95, size=m))
        k, r = int(rng.integers(1, min(n, 5) + 1)), int(rng.integers(1, 8))
        rows = np.flatnonzero(rng.random(n) < 0.8)
        if len(rows) < k:
            continue
        # any fixed item order is an Algorithm 5 order: codes, reversed codes, random
        rank = [np.arange(m), np.arange(m)[::-1].copy(), rng.permutation(m)][trial % 3]
        want = longest_itemsets(sets, k, r, rows=rows)
        got = algorithm_5_here(sets, rows, k, r, rank)
        assert got.patterns == want.patterns, (trial, got.patterns, want.patterns)
        assert got.cut == want.cut


def test_merge_drops_patterns_closed_only_in_their_conditional_database():
    # {a} is closed in D_a (records cut after a) but every record holding a also holds b
    sets = SetValued.from_sets([["a", "b"], ["a", "b"], ["b"], ["c"]])
    got = algorithm_5_here(sets, np.arange(4), 2, 3)
    assert got.patterns == [((0, 1), 2), ((1,), 3)]
    assert got.cut == 0


def test_grouping_with_the_distributed_miner_is_the_single_machine_grouping():
    rng = np.random.default_rng(17)
    for trial in range(16):
        n, m = int(rng.integers(4, 40)), int(rng.integers(1, 9))
        _, sets = random_sets(rng, n, m, rng.uniform(0.1, 0.9, size=m))
        k = int(rng.integers(1, min(n, 6) + 1))
        selection = ("lexicographic", "random")[trial % 2]
        size = int(rng.integers(1, 6))
        want = patternka_groups(sets, k, pattern_selection=selection, seed=trial, cache_size=size)
        got = patternka_groups(
            sets,
            k,
            pattern_selection=selection,
            seed=trial,
            cache_size=size,
            miner=lambda rows, kk, r: algorithm_5_here(sets, rows, kk, r),
        )
        assert got.groups.tolist() == want.groups.tolist()
        assert got.patterns == want.patterns
        assert got.centres.fingerprint() == want.centres.fingerprint()


def test_cancel_callbacks_run_once_and_can_be_withdrawn():
    ctx = Context()
    calls = []
    ctx.on_cancel(lambda: calls.append("a"))
    withdraw = ctx.on_cancel(lambda: calls.append("b"))
    withdraw()
    ctx.token.cancel()
    ctx.token.cancel()
    assert calls == ["a"]
    ctx.on_cancel(lambda: calls.append("late"))  # already cancelled: called at once
    assert calls == ["a", "late"]


def test_without_pyspark_spark_is_refused_with_how_to_install(monkeypatch):
    from veil.plugins._spark.session import spark_session

    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(BadInput, match=r"needs pyspark; install it with: pip install 'veil\[spark\]'"):
        spark_session("local[1]")


def test_only_the_spark_modules_import_pyspark_and_only_inside_functions():
    import re
    from pathlib import Path

    import veil.plugins._spark.session as module

    root = Path(module.__file__).resolve().parents[2]
    importing = {}
    for path in (p for folder in ("engine", "cli", "plugins", "desktop") for p in (root / folder).rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*(from|import)\s+pyspark\b", line):
                importing.setdefault(path.name, []).append(line)
    assert set(importing) == {"session.py", "patterns.py", "tables.py"}, importing  # plugins/_spark only
    assert all(line.startswith(" ") for lines in importing.values() for line in lines)  # never at import time


# -- on Spark ----------------------------------------------------------------------------------------
MASTER = "local[2]"


@pytest.fixture
def spark(spark_local):
    """The run's one Spark session (tests/conftest.py)."""
    return spark_local


@needs_spark
def test_spark_grouping_equals_the_single_machine_grouping_on_random_data(spark):
    from veil.plugins._spark.patterns import spark_patternka_groups

    rng = np.random.default_rng(23)
    for trial in range(2):  # about 8 minings each: every mining is a Spark job of a few seconds
        _, sets = random_sets(rng, 300, 12, rng.uniform(0.05, 0.7, size=12))
        k, selection = (10, 20)[trial], ("lexicographic", "random")[trial]
        want = patternka_groups(sets, k, pattern_selection=selection, seed=trial, cache_size=16)
        got = spark_patternka_groups(sets, k, session=spark, pattern_selection=selection, seed=trial, cache_size=16)
        assert got.groups.tolist() == want.groups.tolist()
        assert got.patterns == want.patterns
        assert got.minings == want.minings


@needs_spark
@pytest.mark.dataset
def test_spark_run_equals_the_single_machine_run_on_bms_webview_1(spark, registry, datasets_dir):
    matrix = read_transactions(datasets_dir / "bms_webview_1" / "BMS1_itemset_mining.txt")
    sets = SetValued.from_binary(matrix).take(np.arange(10_000))
    progress = []

    def run(executor):
        method = PluginCall("patternka", {"executor": executor, "spark_master": MASTER})
        spec = RunSpec(method, PluginCall("set-k-anonymity", {"k": 50}))
        return execute(registry, sets, spec, Context(0, on_progress=lambda f, msg: progress.append(msg)))

    local, distributed = run("local"), run("spark")
    assert np.array_equal(distributed.release.groups, local.release.groups)
    assert distributed.release.sets.fingerprint() == local.release.sets.fingerprint()
    assert distributed.release.details["executor"] == "spark"
    assert progress and progress[-1]  # the grouping reported through the run context


@needs_spark
def test_cancel_stops_the_spark_job(spark):
    from veil.plugins._spark.patterns import spark_patternka_groups

    rng = np.random.default_rng(3)
    _, sets = random_sets(rng, 2000, 40, np.full(40, 0.5))  # dense: mining takes far longer than the cancel
    ctx = Context()
    started = threading.Event()
    ctx._on_progress = lambda f, msg: started.set()
    timer = threading.Thread(target=lambda: (started.wait(120), ctx.token.cancel()))
    timer.start()
    with pytest.raises(Cancelled):
        spark_patternka_groups(sets, 2, session=spark, ctx=ctx)
    timer.join()
    assert spark.sparkContext.parallelize(range(10), 2).sum() == 45  # the session still works
