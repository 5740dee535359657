"""What the configuration panel says before runs start: the cost of the chosen expensive metrics
and the memory the planned runs need.
"""

from __future__ import annotations

from collections.abc import Iterable

from veil.engine import CHEAP, METRIC_SAMPLE_ROWS, BadInput, available_memory, check_memory, estimate_runs, format_bytes


def metric_cost_note(registry, metrics: Iterable[str], data, runs: int = 1) -> str:
    """What the chosen expensive metrics will cost, said before the runs start: an estimate from
    each metric's declared cost, and the sample they use on a large input."""
    expensive = [
        registry.get("metric", m)
        for m in metrics
        if m in registry.names("metric") and registry.get("metric", m).cost != CHEAP
    ]
    if not expensive or data is None:
        return ""
    rows = data.n_rows
    columns = len(data.columns) if hasattr(data, "columns") else data.n_features
    seconds = runs * sum(cls.estimate_seconds(rows, columns) for cls in expensive)
    names = ", ".join(cls.name for cls in expensive)
    text = f"Expensive metrics ({names}): about {_duration(seconds)} in all"
    if rows > METRIC_SAMPLE_ROWS:
        text += f", each on a seeded sample of {METRIC_SAMPLE_ROWS:,} of the {rows:,} records"
    return text + "."


def memory_note(registry, planned, data) -> tuple[str, str]:
    """(what the runs need of memory, or "" and why they cannot run): the engine's estimate of the
    largest run, said before the runs start, against what the worker may allocate."""
    if data is None or not planned:
        return "", ""
    estimate = estimate_runs(registry, data, [run.spec for run in planned])
    free, where = available_memory()
    try:
        check_memory(estimate, (free, where))
    except BadInput as exc:
        return "", str(exc)[:1].upper() + str(exc)[1:] + "."
    return f"Memory: {estimate.text()} at most; {format_bytes(free)} {where}.", ""


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
