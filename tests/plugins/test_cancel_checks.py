"""Every method checks for cancellation often enough, counted, never timed.

The unit of work is a function call — a Python call or a call into C (NumPy, SciPy, pyfim) — made
while the method runs: a loop over records, candidates or patterns makes calls every round, so a loop
that never checks shows as an unbounded count of calls between two checks. Each method declares a
budget of calls between two checks (``BUDGETS``); ``benchmarks/bench_cancel_checks.py`` measures how
many calls each method makes per second on this machine class, and every budget is below what 100 ms
of its work makes (docs/benchmarks.md, "Cancellation checks"). One call into C that runs long by
itself (a pyfim mining, a Spark job) is out of reach of counting: those stop through ``ctx.on_cancel``
and the worker process (item 1).

Cases come from the plugin manager: a registered method without a case fails
:func:`test_every_registered_method_has_a_cancellation_case`.
"""

from __future__ import annotations

import functools
import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    EXPENSIVE,
    BinaryMatrix,
    Cancelled,
    Context,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
)

REGISTRY = make_registry()


# -- data: large enough that a method never checking would exceed its budget many times over ----
def table(scale=1, seed=0) -> Table:
    n = 1500 * scale
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "zip": rng.choice([f"z{i}" for i in range(30)], n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(list("abcdefgh"), n),
            "flag": rng.integers(0, 2, n),
            "dx": rng.choice(["x", "y", "z", "w"], n),
            "y": rng.integers(0, 2, n),
        }
    )
    return Table.from_frame(
        frame,
        roles={
            "age": Role.QUASI_IDENTIFIER,
            "zip": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "job": Role.QUASI_IDENTIFIER,
            "flag": Role.INSENSITIVE,
            "dx": Role.SENSITIVE,
            "y": Role.TARGET,
        },
    )


def numeric_table(scale=1, seed=0) -> Table:
    """The table with its one numeric quasi-identifier and a second numeric one (microaggregation's
    variable-size variant measures numbers only)."""
    data = table(scale, seed)
    frame = data.frame.assign(stay=np.random.default_rng(seed + 1).integers(1, 30, data.n_rows))
    return Table.from_frame(frame).with_roles(
        {"age": Role.QUASI_IDENTIFIER, "stay": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE, "y": Role.TARGET}
    )


def matrix(scale=1, m=60, density=0.3, seed=0) -> BinaryMatrix:
    n = 600 * scale
    rng = np.random.default_rng(seed)
    return BinaryMatrix.from_dense((rng.random((n, m)) < density).astype(np.uint8), labels=rng.choice([1, -1], n))


def baskets(scale=1, items=40, seed=0) -> BinaryMatrix:
    """Set-valued data with a power-law item popularity (PatternKa's kind of input)."""
    n = 800 * scale
    rng = np.random.default_rng(seed)
    p = 0.6 / np.arange(1, items + 1) ** 0.7
    return BinaryMatrix.from_dense((rng.random((n, items)) < p).astype(np.uint8))


K5, KAC = PluginCall("k-anonymity", {"k": 5}), PluginCall("k-ac", {"k": 5})
# (case id, method call, model call, data builder); a method with several modes has one case per mode
CASES = [
    ("all-features", PluginCall("all-features"), None, table),
    ("cm-greedy", PluginCall("cm-greedy"), KAC, matrix),
    ("exponential-dp-fs", PluginCall("exponential-dp-fs"), None, matrix),
    ("laplace-dp-fs", PluginCall("laplace-dp-fs"), None, matrix),
    ("fwell", PluginCall("fwell", {"lam": 0.01}), None, matrix),
    ("fwell-cv", PluginCall("fwell"), None, matrix),  # λ cross-validated: five folds × five values
    ("private-fwell", PluginCall("private-fwell", {"lam": 0.01}), None, matrix),
    ("greedy-distcnt", PluginCall("greedy-distcnt"), KAC, matrix),
    ("greedy-hamdist", PluginCall("greedy-hamdist"), KAC, matrix),
    ("greedy-hamdist-fwell", PluginCall("greedy-hamdist", {"score": "private-fwell", "lam": 0.01}), KAC, matrix),
    ("maximal", PluginCall("maximal", {"backend": "numpy"}), PluginCall("k-ac", {"k": 30}), matrix),
    ("maximal-longest", PluginCall("maximal", {"backend": "longest"}), PluginCall("k-ac", {"k": 30}), matrix),
    (
        "maximal-distcnt",
        PluginCall("maximal", {"backend": "numpy", "criterion": "distcnt"}),
        PluginCall("k-ac", {"k": 30}),
        matrix,
    ),
    ("mondrian", PluginCall("mondrian"), K5, table),
    ("mondrian-bucketise", PluginCall("mondrian", {"mode": "bucketise"}), PluginCall("l-diversity", {"l": 2}), table),
    ("patternka", PluginCall("patternka"), PluginCall("set-k-anonymity", {"k": 5}), baskets),
    (
        "patternka-spark",
        # the master of the suite's one Spark session (tests/conftest.py), which this case then shares
        PluginCall("patternka", {"executor": "spark", "spark_master": "local[2]"}),
        PluginCall("set-k-anonymity", {"k": 5}),
        baskets,
    ),
    ("privacy-aware-candidates", PluginCall("privacy-aware-candidates", {"folds": 3}), None, table),
    ("rf-flipping", PluginCall("rf-flipping"), K5, matrix),
    ("hilbert", PluginCall("hilbert"), K5, table),
    ("microaggregation", PluginCall("microaggregation"), K5, table),
    ("local-suppression", PluginCall("local-suppression"), K5, table),
    ("local-recoding", PluginCall("local-recoding", {"suppression": 0.02}), K5, table),
    (
        "local-suppression-l-diversity",
        PluginCall("local-suppression"),
        PluginCall("l-diversity", {"l": 2}),
        table,
    ),
    (
        "microaggregation-variable",
        PluginCall("microaggregation", {"variant": "variable"}),
        K5,
        numeric_table,
    ),
    ("global-recoding", PluginCall("global-recoding", {"suppression": 0.02}), K5, table),
    ("dp-table", PluginCall("dp-table", {"epsilon": 1.0, "delta": 1e-4}), None, table),
    (
        "dp-table-data-dependent",
        PluginCall("dp-table", {"epsilon": 1.0, "delta": 1e-4, "mode": "data-dependent", "steps": 20}),
        None,
        table,
    ),
    ("patternka-relational", PluginCall("patternka-relational"), K5, table),
    ("top-down", PluginCall("top-down"), PluginCall("set-k-anonymity", {"k": 5}), baskets),
    ("pram", PluginCall("pram", {"strata": "sex"}), None, table),
    ("noise-addition", PluginCall("noise-addition", {"method": "correlated-exact"}), None, table),
    ("rank-swap", PluginCall("rank-swap", {"p": 10}), None, table),
]
# the metrics that can run long (EXPENSIVE: cross-validated classifiers, PBI) and the utility losses
# computed over many populations or queries, each after the cheapest method that fits it
FOLDED = ("accuracy", "auc", "cv-accuracy")  # three folds instead of five or ten: the same loop, shorter
METRIC_CASES = [
    (f"metric:{name}", PluginCall(method), model, table, (f"{name}:folds=3" if name in FOLDED else name,))
    for name, method, model in [
        ("accuracy", "all-features", None),
        ("auc", "all-features", None),
        ("cv-accuracy", "all-features", None),
        ("distp-pbi", "all-features", None),
        ("pbi", "all-features", None),
        ("uloss", "mondrian", K5),
        ("query-error", "mondrian", K5),
        ("suda-dis-max", "all-features", None),
    ]
]
SPARK = importlib.util.find_spec("pyspark") is not None
RUNNABLE_IDS = [c[0] for c in CASES] + [c[0] for c in METRIC_CASES]

# Calls between two checks each method may make: below what 100 ms of its work makes on this machine
# class (benchmarks/bench_cancel_checks.py measures calls per second; docs/benchmarks.md has the rates).
# Each is what 100 ms of the method's own work makes at the rate the benchmark measured (the lower of
# two runs at ×1, rounded down), except the three marked: a one-off stretch of cheap calls there (pandas
# dtype parsing) is longer than 100 ms of the method's average, heavier call, and the benchmark's direct
# timing of the longest interval between two checks shows it under 100 ms (docs/benchmarks.md).
BUDGETS = {
    "all-features": 7_800,
    "cm-greedy": 22_000,
    "exponential-dp-fs": 13_000,
    "laplace-dp-fs": 12_000,
    "fwell": 3_100,
    "fwell-cv": 6_500,
    "private-fwell": 3_500,
    "greedy-distcnt": 20_000,
    "greedy-hamdist": 12_000,
    "greedy-hamdist-fwell": 3_800,
    "maximal": 37_000,
    "maximal-longest": 23_000,
    "maximal-distcnt": 37_000,
    "mondrian": 20_000,
    "mondrian-bucketise": 15_000,
    "patternka": 22_000,
    "patternka-spark": 22_000,
    "privacy-aware-candidates": 12_000,
    "rf-flipping": 33_000,
    "hilbert": 61_000,
    "microaggregation": 61_000,
    "local-suppression": 61_000,
    "local-recoding": 137_000,  # global recoding's budget: each pass is its search
    "local-suppression-l-diversity": 61_000,
    "microaggregation-variable": 61_000,
    "global-recoding": 137_000,
    "dp-table": 137_000,  # global recoding's class tables at one node, after sampling checked every 8,192 records
    "dp-table-data-dependent": 137_000,  # a search step: the pivot's specialisations rolled up and scored
    "patternka-relational": 54_000,
    "top-down": 133_000,
    "pram": 20_000,
    "noise-addition": 16_000,
    "rank-swap": 17_000,
    "metric:accuracy": 10_000,
    "metric:auc": 11_000,
    "metric:pbi": 13_000,
    "metric:uloss": 26_000,
    "metric:cv-accuracy": 10_000,  # rate: 8,100; encoding the table for the classifier, 9,300 calls, 67–87 ms
    "metric:distp-pbi": 10_000,  # rate: 8,300; the same encoding, 9,400 calls, 39–49 ms
    "metric:query-error": 25_000,
    "metric:suda-dis-max": 91_000,  # rate: 13,000; the release's group values, one property of 24,400 calls, 70–82 ms
}


def runnable(case_id):
    """(case id, method, model, data builder, metrics) of a case."""
    found = [c for c in CASES if c[0] == case_id] + [c for c in METRIC_CASES if c[0] == case_id]
    return (*found[0][:4], found[0][4] if len(found[0]) > 4 else ())


RUNNABLE = RUNNABLE_IDS


def _skip_without_spark(case_id):
    if "spark" in case_id and not SPARK:
        pytest.skip("pyspark is not installed (veil[spark])")


# -- counting ------------------------------------------------------------------------------------
class Meter:
    """Counts calls (Python and C) on this thread while installed, and the calls between checks."""

    def __init__(self, cancel_after: int | None = None, token=None):
        self.calls = 0
        self.at_last_check = 0
        self.gaps: list[int] = []
        self.cancel_after, self.token, self.cancelled_at = cancel_after, token, None

    def profile(self, frame, event, arg):
        if event in ("call", "c_call"):
            self.calls += 1
            if self.cancel_after is not None and self.cancelled_at is None and self.calls >= self.cancel_after:
                self.cancelled_at = self.calls
                self.token.cancel()  # as the user's Cancel would, between two checks

    def checked(self):
        self.gaps.append(self.calls - self.at_last_check)
        self.at_last_check = self.calls

    def __enter__(self):
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(None)
        self.gaps.append(self.calls - self.at_last_check)  # the work after the last check counts too


class CountingContext(Context):
    """A real run context whose checks (``check`` and ``progress``, its children's too) tell a Meter."""

    meter: Meter

    def check(self):
        self.meter.checked()
        super().check()

    def child(self, start, end, seed=None):
        child = super().child(start, end, seed)
        child.__class__ = CountingContext
        child.meter = self.meter
        return child


def counting_context(meter: Meter, seed=0) -> CountingContext:
    ctx = CountingContext(seed)
    ctx.meter = meter
    return ctx


def run_counted(case_id, meter: Meter | None, ctx: Context | None = None):
    """Run a case, counting calls with ``meter`` (None: a plain run, e.g. to warm up)."""
    _, method, model, build, metrics = runnable(case_id)
    spec, data = RunSpec(method, model, seed=0, metrics=metrics), build()
    if meter is None:
        return execute(REGISTRY, data, spec, ctx)
    with meter:
        return execute(REGISTRY, data, spec, ctx)


# -- the tests -----------------------------------------------------------------------------------
def test_every_registered_method_has_a_cancellation_case():
    covered = {c[1].name for c in CASES}
    registered = set(REGISTRY.names("algorithm"))
    assert registered <= covered, f"methods without a cancellation case: {sorted(registered - covered)}"
    expensive = {m.name for m in REGISTRY.classes("metric") if m.cost == EXPENSIVE}
    assert expensive <= {c[0].removeprefix("metric:") for c in METRIC_CASES}, "every expensive metric has a case"
    assert set(RUNNABLE) == set(BUDGETS), "every case declares its budget of calls between checks"


@functools.cache
def counted(case_id) -> Meter:
    """The calls and checks of a case, after a warm-up run (first imports and caches are not the
    method's work); shared by the tests below."""
    run_counted(case_id, None)
    meter = Meter()
    run_counted(case_id, meter, counting_context(meter))
    return meter


@pytest.mark.parametrize("case_id", RUNNABLE)
def test_the_calls_between_two_checks_stay_within_the_budget(case_id):
    _skip_without_spark(case_id)
    meter = counted(case_id)
    budget = BUDGETS[case_id]
    assert len(meter.gaps) > 2, f"{case_id}: the method never checks"
    assert max(meter.gaps) <= budget, (
        f"{case_id}: {max(meter.gaps):,} calls without a check "
        f"(budget {budget:,}; {len(meter.gaps) - 1} checks in {meter.calls:,} calls)"
    )


@pytest.mark.parametrize("case_id", RUNNABLE)
def test_a_cancel_request_stops_the_method_soon(case_id):
    """Cancel half-way through the work, between two checks: the run raises Cancelled within the
    method's budget of calls, and no release comes back."""
    _skip_without_spark(case_id)
    meter = counted(case_id)
    ctx = Context(0)
    stopper = Meter(cancel_after=meter.calls // 2, token=ctx.token)
    with pytest.raises(Cancelled):
        run_counted(case_id, stopper, ctx)
    assert stopper.cancelled_at is not None
    assert stopper.calls - stopper.cancelled_at <= BUDGETS[case_id]


def test_the_meter_sees_a_loop_that_never_checks():
    """The counting can fail: a loop of feasibility-sized passes with no check exceeds any budget."""
    meter = Meter()
    ctx = counting_context(meter)
    rows = np.arange(1000)
    with meter:
        ctx.check()
        for _ in range(30_000):
            np.count_nonzero(rows > 3)
        ctx.check()
    assert max(meter.gaps) > 20_000


def planted(n=300, m=40, block=24, rows=60, density=0.1, seed=1) -> BinaryMatrix:
    """Sparse records, and 60 of them sharing a block of 24 items: one maximal itemset is that long."""
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, m)) < density).astype(np.uint8)
    dense[:rows, :block] = 1
    return BinaryMatrix.from_dense(dense, labels=rng.choice([1, -1], n))


def test_maximal_distcnt_scoring_checks_between_every_refinement(monkeypatch):
    """DistCnt checks for cancellation per refinement, counted in work units: it scores an itemset
    by refining a partition of the records one item at a time (a pass over the records each); a
    check comes before every refinement, so a cancel during the scoring of a long itemset is seen at
    the next refinement. Checking once per itemset would let all 24 refinements of the planted
    itemset pass between two checks."""
    from veil.engine.kernels import containment
    from veil.plugins.feature_selection import greedy

    units = {"since": 0, "most": 0, "done": 0, "cancel_at": None}
    refine = containment.Partition.add

    def counted_add(self, feature):
        units["since"] += 1
        units["done"] += 1
        units["most"] = max(units["most"], units["since"])
        if units["cancel_at"] is not None and units["done"] == units["cancel_at"]:
            ctx.token.cancel()  # between two checks, as the user's Cancel would
        return refine(self, feature)

    class Counting(Context):
        def check(self):
            units["since"] = 0
            super().check()

    monkeypatch.setattr(containment.Partition, "add", counted_add)
    ctx = Counting(0)
    _, scored = greedy.maximal(planted(), 30, top_r=5, criterion="distcnt", backend="longest", ctx=ctx)
    assert max(len(items) for items, _, _ in scored) == 24
    assert units["most"] == 1  # never two refinements without a check between them

    ctx = Counting(0)
    units.update(since=0, most=0, done=0, cancel_at=5)  # inside the long itemset's scoring
    with pytest.raises(Cancelled):
        greedy.maximal(planted(), 30, top_r=5, criterion="distcnt", backend="longest", ctx=ctx)
    assert units["done"] == 5  # the check before the next refinement saw it
