"""How often every method checks for cancellation, in calls and in milliseconds.

For each case of ``tests/plugins/test_cancel_checks.py``, at the test's size (×1; ``SCALES`` takes
larger ones, e.g. 2, at a cost: Maximal's itemsets grow steeply): the calls the method makes (counted once under a
profiler), its time without the
profiler, hence its rate in calls per second and the calls 100 ms of its work makes, and the longest
wall-clock interval between two checks measured directly (a real Context timing its own checks, no
profiler). The test's budgets (calls between checks) must stay below the calls of 100 ms. Run with
``make benchmark``; figures in docs/benchmarks.md ("Cancellation checks").
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from _bench import machine, markdown_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "plugins"))
cases = pytest.importorskip("test_cancel_checks")

from veil.engine import Context, RunSpec, execute  # noqa: E402

pytestmark = pytest.mark.benchmark
SCALES = (1,)


class TimedContext(Context):
    """A run context that records the longest interval between two of its (or its children's) checks."""

    stamps: list

    def check(self):
        self.stamps.append(time.perf_counter())
        super().check()

    def child(self, start, end, seed=None):
        child = super().child(start, end, seed)
        child.__class__ = TimedContext
        child.stamps = self.stamps
        return child


def measure(case_id: str, scale: int) -> dict:
    _, method, model, build, metrics = cases.runnable(case_id)
    data = build(scale)
    spec = RunSpec(method, model, seed=0, metrics=metrics)
    execute(cases.REGISTRY, data, spec)  # warm-up: imports and caches are not the method's work
    meter = cases.Meter()
    ctx = cases.counting_context(meter)
    with meter:
        execute(cases.REGISTRY, data, spec, ctx)
    timed = TimedContext(0)
    timed.stamps = [time.perf_counter()]
    start = time.perf_counter()
    execute(cases.REGISTRY, data, spec, timed)
    end = time.perf_counter()
    stamps = [*timed.stamps, end]
    longest = max(b - a for a, b in zip(stamps, stamps[1:]))
    seconds = end - start
    rate = meter.calls / seconds
    return {
        "calls": meter.calls,
        "seconds": seconds,
        "rate": rate,
        "per_100ms": int(rate / 10),
        "max_gap": max(meter.gaps),
        "longest_ms": 1000 * longest,
        "checks": len(meter.gaps) - 1,
    }


def test_cancellation_checks(capsys):
    rows = []
    spark = importlib.util.find_spec("pyspark") is not None
    for case_id in cases.RUNNABLE:
        if "spark" in case_id and not spark:
            continue
        for scale in SCALES:
            m = measure(case_id, scale)
            rows.append(
                [
                    case_id,
                    f"×{scale}",
                    f"{m['calls']:,}",
                    f"{m['seconds']:.2f}",
                    f"{m['rate'] / 1e6:.2f}",
                    f"{m['per_100ms']:,}",
                    f"{m['max_gap']:,}",
                    f"{cases.BUDGETS[case_id]:,}",
                    f"{m['longest_ms']:.0f}",
                    f"{m['checks']:,}",
                ]
            )
    with capsys.disabled():
        print(machine())
        print(
            markdown_table(
                [
                    "case",
                    "size",
                    "calls",
                    "s",
                    "M calls/s",
                    "calls in 100 ms",
                    "most calls between checks",
                    "budget",
                    "longest ms between checks",
                    "checks",
                ],
                rows,
            )
        )
