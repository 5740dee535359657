"""Distributed PatternKa (docs/reference.md#set-valued-data, paper 002 Algorithm 5): the longest-pattern search on
Apache Spark.

Only the mining moves to Spark; the grouping is :func:`veil.plugins.setvalued._patternka.patternka_groups` itself, given
:class:`SparkMiner` as its ``miner``, so the two paths share every line of Algorithm 1 (the cache,
its revalidation, the tie rule, the leftovers) and differ only in where the r longest closed
patterns of the remaining records are found.

Algorithm 5, one mining:

* **map**: each remaining record t, its items ordered by descending frequency (ties by item code, as
  PFP orders them so that frequent items make small conditional databases), becomes the pairs
  (t_j, t[1..j]) for every j;
* **reduce**: per key κ, the conditional database D_κ (every record holding κ, cut after κ) is
  mined for its r longest closed patterns (:func:`veil.engine.longest_itemsets`); κ is in every
  record of D_κ, so each of them ends in κ and its support in D_κ is its support in D;
* **merge** (driver): the union, longest first and ties by item list; a pattern closed in D_κ but
  not in D is recognised by a longer pattern of the union with the same support and dropped; the
  first r left are the r longest closed patterns of D.

Why the merge is exact: a closed pattern x of D ending in κ is closed in D_κ; if r patterns of D_κ
rank above it, each is either closed in D or has a closure in D that is strictly longer, ends after
κ and differs for different patterns (its items up to κ are the pattern itself), so r closed
patterns of D rank above x and x is not among the r longest. A pattern p of the union that is not
closed in D either has its closure in the union (and is dropped) or its closure was pushed out of
its key's list by r closed patterns of D ranking above it, and then p ranks below the first r.
``cut`` follows as in :func:`longest_itemsets`: the r-th length when r patterns were found.

Memory: the driver holds the records once (CSR and CSC, as the single-machine path) and the cache's
bitsets; the conditional databases, Σ|t|²/2 items per mining, live on the executors, one key at a
time per task. Spark starts only through :func:`.session.spark_session`; pyspark is imported inside functions only.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from veil.engine import BadInput, Cancelled, Longest, MiningLimit, SearchOptions, SetValued, longest_itemsets

from .session import one_line, spark_session


# -- the map and reduce steps (run on the executors) ------------------------------------------------
def _prefixes(record, rank, alive, frequent):
    """Algorithm 5's mapper: (t_j, t[1..j]) for the record's frequent items in rank order."""
    row, items = record
    if not alive[row]:
        return []
    items = items[frequent[items]]
    if len(items) == 0:
        return []
    items = items[np.argsort(rank[items], kind="stable")]
    return [(int(items[j]), items[: j + 1].tobytes()) for j in range(len(items))]


def _mine_key(key, prefixes, k, r, max_seconds):
    """Algorithm 5's reducer: the r longest closed patterns of the conditional database of ``key``,
    as (item codes ascending, support); or the miner's limit message. One thread: Spark runs a task on
    each core it has."""
    rows = [np.frombuffer(b, dtype=np.int32) for b in prefixes]
    if len(rows) < k:
        return key, [], None
    flat = np.concatenate(rows)
    codes = np.unique(flat)  # ascending, so local column order is item-code order (the tie rule)
    indptr = np.concatenate(([0], np.cumsum([len(t) for t in rows])))
    m = sp.csr_matrix(
        (np.ones(len(flat), dtype=bool), np.searchsorted(codes, flat), indptr), shape=(len(rows), len(codes))
    )
    try:
        found = longest_itemsets(m, k, r, max_seconds=max_seconds, options=SearchOptions(threads=1))
    except MiningLimit as exc:
        return key, [], str(exc)
    return key, [(tuple(int(codes[j]) for j in items), int(s)) for items, s in found.patterns], None


def merge_longest(per_key, r: int) -> Longest:
    """The r longest closed patterns of D from each key's r longest closed patterns of D_κ (module)."""
    union = sorted((p for patterns in per_key for p in patterns), key=lambda p: (-len(p[0]), p[0]))
    kept: list = []
    seen: dict[int, list[frozenset]] = defaultdict(list)
    for items, support in union:
        if len(kept) == r:
            break
        held = frozenset(items)
        if not any(held < longer for longer in seen[support]):  # else a longer pattern has its records
            kept.append((items, support))
        seen[support].append(held)
    return Longest(kept, len(kept[-1][0]) if len(kept) == r else 0, 0)


class SparkMiner:
    """``miner(rows, k, r)`` for :func:`patternka_groups`: Algorithm 5 on a Spark session.

    The records are sent to Spark once (``partitions`` slices, default Spark's parallelism) and kept
    there; each mining broadcasts which records remain. ``check`` is polled while a job runs (it
    raises to cancel), ``on_cancel`` registers how to stop the job from another thread, ``progress``
    is told the job's finished tasks.
    """

    def __init__(
        self,
        sets: SetValued,
        session,
        *,
        max_seconds: float | None = None,
        partitions: int | None = None,
        check: Callable[[], None] | None = None,
        on_cancel: Callable[[Callable[[], None]], Callable[[], None]] | None = None,
        progress: Callable[[str], None] | None = None,
    ):
        self.session, self.sc = session, session.sparkContext
        self.n, self.n_items = sets.n_rows, sets.n_items
        self.indptr, self.indices = sets.indptr, sets.indices.astype(np.int32)
        freq = np.bincount(self.indices, minlength=self.n_items)
        order = np.lexsort((np.arange(self.n_items), -freq))  # descending frequency, ties by code
        self.rank = np.empty(self.n_items, dtype=np.int64)
        self.rank[order] = np.arange(self.n_items)
        self.max_seconds, self.check, self.on_cancel, self.progress = max_seconds, check, on_cancel, progress
        slices = partitions or self.sc.defaultParallelism
        records = [(i, self.indices[self.indptr[i] : self.indptr[i + 1]]) for i in range(self.n)]
        self.records = self.sc.parallelize(records, max(1, min(slices, self.n))).cache()
        self.jobs = 0
        self.nodes = 0

    def __call__(self, rows: np.ndarray, k: int, r: int) -> Longest:
        alive = np.zeros(self.n, dtype=bool)
        alive[rows] = True
        counts = np.bincount(self.indices[np.repeat(alive, np.diff(self.indptr))], minlength=self.n_items)
        frequent = counts >= k
        if not frequent.any():
            return Longest([], 0, 0)
        sc, rank, max_seconds = self.sc, self.rank, self.max_seconds
        b_alive, b_frequent, b_rank = sc.broadcast(alive), sc.broadcast(frequent), sc.broadcast(rank)
        keys = int(frequent.sum())

        def job():
            pairs = self.records.flatMap(lambda rec: _prefixes(rec, b_rank.value, b_alive.value, b_frequent.value))
            grouped = pairs.groupByKey(numPartitions=max(1, min(keys, sc.defaultParallelism)))
            return grouped.map(lambda kv: _mine_key(kv[0], kv[1], k, r, max_seconds)).collect()

        try:
            results = self._run(job)
        finally:
            for b in (b_alive, b_frequent, b_rank):
                b.unpersist()
        limits = [message for _, _, message in results if message]
        if limits:
            raise MiningLimit(limits[0])
        self.jobs += 1
        return merge_longest((patterns for _, patterns, _ in results), r)

    def _run(self, job):
        """Run ``job`` in its own job group on a helper thread; cancel the group when asked."""
        from pyspark import InheritableThread

        group = f"veil-patternka-{uuid.uuid4().hex}"
        out: dict = {}

        def work():
            self.sc.setJobGroup(group, "Veil PatternKa: longest closed patterns", interruptOnCancel=True)
            try:
                out["value"] = job()
            except BaseException as exc:  # reported on the calling thread
                out["error"] = exc

        stop = lambda: self.sc.cancelJobGroup(group)
        unregister = self.on_cancel(stop) if self.on_cancel is not None else (lambda: None)
        thread = InheritableThread(target=work, daemon=True)
        try:
            thread.start()
            while thread.is_alive():
                thread.join(0.2)
                if self.check is not None:
                    try:
                        self.check()
                    except Cancelled:
                        stop()
                        raise
                if self.progress is not None and thread.is_alive():
                    self.progress(self._tasks(group))
        finally:
            unregister()
        if "error" in out:
            if self.check is not None:
                self.check()  # a job stopped by a cancel: say Cancelled, not the Java error
            raise BadInput(f"the Spark job failed: {one_line(out['error'])}") from None
        return out["value"]

    def _tasks(self, group: str) -> str:
        tracker = self.sc.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job_id)
            for stage_id in info.stageIds if info else []:
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    done, total = done + stage.numCompletedTasks, total + stage.numTasks
        return f"mining on Spark: {done}/{total} tasks" if total else "mining on Spark"

    def close(self) -> None:
        self.records.unpersist()


def spark_patternka_groups(
    sets: SetValued,
    k: int,
    *,
    master: str = "local[*]",
    session=None,
    pattern_selection: str = "lexicographic",
    seed: int = 0,
    cache_size: int = 32,
    max_seconds: float | None = None,
    partitions: int | None = None,
    ctx=None,
):
    """:func:`patternka_groups` with its mining on Spark (``session``, else :func:`spark_session`)."""
    from ..setvalued._patternka import SELECTIONS, patternka_groups

    if k < 1 or k > sets.n_rows or pattern_selection not in SELECTIONS:
        return patternka_groups(sets, k, pattern_selection=pattern_selection)  # its message, before Spark starts
    state = {"fraction": 0.0}

    def grouping_progress(fraction, message):
        state["fraction"] = fraction
        ctx.progress(fraction, message)

    def mining_progress(message):
        ctx.progress(state["fraction"], message)

    miner = SparkMiner(
        sets,
        session or spark_session(master),
        max_seconds=max_seconds,
        partitions=partitions,
        check=ctx.check if ctx else None,
        on_cancel=ctx.on_cancel if ctx else None,
        progress=mining_progress if ctx else None,
    )
    try:
        return patternka_groups(
            sets,
            k,
            pattern_selection=pattern_selection,
            seed=seed,
            cache_size=cache_size,
            check=ctx.check if ctx else None,
            progress=grouping_progress if ctx else None,
            miner=miner,
        )
    finally:
        miner.close()
