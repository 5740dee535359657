"""Run numbers start at 1 for each file opened: the runs on the data before are gone with it."""

from __future__ import annotations

from veil.desktop.state import PlannedRun, RunsState
from veil.engine import PluginCall, RunSpec


def test_new_data_numbers_its_runs_from_one():
    runs = RunsState()
    planned = PlannedRun(RunSpec(PluginCall("all-features"), None), {})
    assert [e.id for e in runs.add([planned, planned])] == [1, 2]
    runs.reset()  # another file opened
    assert [e.id for e in runs.add([planned])] == [1]
