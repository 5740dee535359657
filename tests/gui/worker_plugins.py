"""Test-only methods for the runner's tests, in a module of their own: the worker process imports
it (by reference, through the registry's recipe) to build the same registry as the window's.
Nothing here imports Qt."""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass

from veil.engine import TABLE, Algorithm, ScaleOut, feature_subset, hookimpl, param


def hold_the_gil(seconds: int) -> None:
    """Sleep in C *without* releasing the GIL (a ``PyDLL`` call keeps it), as a careless C
    extension or a miner returning millions of itemsets does: no other thread of this process can
    run Python meanwhile, and no ``ctx.check`` can happen."""
    ctypes.PyDLL(None).sleep(int(seconds))


@dataclass(frozen=True)
class BusyParams:
    seconds: float = param(1.0, minimum=0.0, help="how long to work")


class Busy(Algorithm):
    """Pure-Python CPU work (it holds the GIL as a careless plugin would), checking in as a
    method must: ``ctx.progress`` at least every 100 ms (here every millisecond). Its release
    records the process it ran in."""

    name = "busy-test"
    title = "Busy (test)"
    accepts = (TABLE,)
    Params = BusyParams

    def run(self, data, model, params, ctx):
        end = time.perf_counter() + params.seconds
        while (now := time.perf_counter()) < end:
            x = 0
            for i in range(2_000):  # about a millisecond of interpreted work
                x += i * i
            ctx.progress(1 - (end - now) / params.seconds, "working")
        return feature_subset(data, [], details={"pid": os.getpid()})


@dataclass(frozen=True)
class GilParams:
    seconds: int = param(1, minimum=0, maximum=3600, help="how long to hold the GIL in C")


class GilHog(Algorithm):
    """Holds the GIL in one C call, never checking for cancellation."""

    name = "gil-hog-test"
    title = "GIL hog (test)"
    accepts = (TABLE,)
    Params = GilParams

    def run(self, data, model, params, ctx):
        ctx.progress(0.0, "holding the GIL")
        hold_the_gil(params.seconds)
        return feature_subset(data, [], details={"pid": os.getpid()})


class Boom(Algorithm):
    name = "boom-test"
    title = "Boom (test)"
    accepts = (TABLE,)

    def run(self, data, model, params, ctx):
        raise RuntimeError("the boom plugin exploded")


class Kernels(Busy):
    """Waits (up to ``seconds``) for the worker to have loaded the compiled kernels in the background
    and records whether a roll-up would now take the compiled path."""

    name = "kernels-test"
    title = "Kernels (test)"

    def run(self, data, model, params, ctx):
        from veil.engine.kernels import grouping

        end = time.perf_counter() + params.seconds
        while not grouping._SETTLED.is_set() and time.perf_counter() < end:
            ctx.check()
            time.sleep(0.05)
        made = len(grouping._COMPILED) == 2 and all(k is not None for k in grouping._COMPILED)
        return feature_subset(data, [], details={"pid": os.getpid(), "compiled": grouping.loaded() and made})


class TestPlugins:
    __test__ = False  # not a pytest class

    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [Busy, GilHog, Boom, Kernels]


@dataclass(frozen=True)
class SparkSleepParams:
    executor: str = param("local", choices=("local", "spark"))
    spark_master: str = param("local[2]")


class SparkSleep(Algorithm):
    """On Spark, a job whose two tasks sleep ten minutes: only cancelling its job group ends it in time."""

    name = "spark-sleep-test"
    title = "Spark sleep (test)"
    accepts = (TABLE,)
    Params = SparkSleepParams
    scale_out = ScaleOut("spark")

    def run(self, data, model, params, ctx):
        if params.executor == "spark":
            from veil.plugins._spark.tables import run_job
            from veil.plugins._spark.session import spark_session

            sc = spark_session(params.spark_master).sparkContext
            run_job(
                sc, lambda: sc.parallelize(range(2), 2).map(lambda x: time.sleep(600) or x).collect(), ctx, "sleeping"
            )
        return feature_subset(data, [], details={"pid": os.getpid()})


class SparkTestPlugins:
    __test__ = False  # not a pytest class

    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [SparkSleep]
