"""Progress never goes back: a context (and its children) reports the highest fraction so far, and a
Mondrian run, whose estimate of the work left grows as it finds more to cut, reports a rising bar."""

from __future__ import annotations

import time

from veil.engine import Context, PluginCall, RunSpec, execute, load_demo, make_registry


def test_a_context_never_reports_less_than_before():
    seen = []
    ctx = Context(0, lambda f, m: seen.append(f))
    for fraction in (0.2, 0.5):
        ctx.progress(fraction)
        time.sleep(0.06)  # past the 20-a-second limit
    ctx.progress(0.4)  # an estimate that grew
    time.sleep(0.06)
    ctx.child(0.0, 0.5).progress(0.5)  # a child reporting below what its parent reached
    assert seen == [0.2, 0.5, 0.5, 0.5]


def test_a_mondrian_run_reports_a_rising_bar():
    registry = make_registry()
    seen = []
    data = load_demo()
    spec = RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 5}))
    execute(registry, data, spec, Context(0, lambda f, m: seen.append(f)))
    assert seen and all(b >= a for a, b in zip(seen, seen[1:]))
