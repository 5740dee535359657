"""A reopened project is alive: the transformation chosen in a solution space is a run of the
project, and its runs' releases, solution spaces and exports come back without running again; the
tabs always show the selected run, or say why they cannot."""

from __future__ import annotations

import json
import pickle

import numpy as np
from PySide6.QtCore import Qt

from veil.engine import NodeStatus, kept_folder
from veil.cli import main as cli_main

from .helpers import open_window


def _run_and_choose(window, qtbot):
    """A global-recoding run, then the costliest solution of its lattice released as a run of its own."""
    c = window.controller
    window.config_panel.choose("k-anonymity", ["global-recoding"], values={"k": 5, "suppression": 0.05})
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    first = c.runs.entries[-1]
    window.runs_panel.select_run(first.id)
    view = window.lattice_view
    space = view.space
    solutions = [int(r) for r in np.flatnonzero(space.status == NodeStatus.SOLUTION) if r != view.selected]
    chosen = max(solutions, key=lambda r: space.loss[r])
    view.select(chosen)
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        qtbot.mouseClick(view.apply_button, Qt.LeftButton)
    second = c.runs.entries[-1]
    assert second.outcome is not None and second.outcome.result is not None, second.failure
    return first, second, tuple(int(x) for x in space.levels[chosen])


def test_a_reopened_project_shows_and_exports_its_runs_without_running_them(demo_window, qtbot, registry, tmp_path):
    first, second, levels = _run_and_choose(demo_window, qtbot)
    c = demo_window.controller
    path = tmp_path / "ward.veil.json"
    with qtbot.waitSignal(c.project_saved):
        assert c.save_project(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert len(saved["runs"]) == 1 and len(saved["chosen"]) == 1  # the chosen transformation is a run of the project
    assert (kept_folder(path) / "index.json").is_file()
    released = second.outcome.result.release
    before = tmp_path / "before"
    with qtbot.waitSignal(c.exported, timeout=60_000):
        c.export(second.id, before, _options(demo_window))
    # the kept run holds its release, not the input it was made from
    kept = (kept_folder(path) / f"run-{second.id}.pickle").stat().st_size
    assert kept < len(pickle.dumps((released, second.outcome.result.verdict), protocol=5)) + 20_000
    demo_window.close()

    window = open_window(qtbot, registry)
    c2 = window.controller
    with qtbot.waitSignal(c2.data_loaded, timeout=20_000):
        window.actions.open_any(path)
    assert c2.not_restored == ""
    assert [e.id for e in c2.runs.entries] == [first.id, second.id]
    assert all(e.status == "done" and e.started is not None for e in c2.runs.entries)
    assert c2.batch == [] and not c2._runs  # nothing was run again
    back = c2.runs.entry(second.id).outcome.result.release
    assert back.frame.equals(released.frame)
    assert back.details["generalisation"]["levels"] == released.details["generalisation"]["levels"]

    selected = window.runs_panel.selected_run()  # what is selected on opening is what the tabs show
    if selected is not None:
        assert window.release_panel.summary.text().startswith(f"Run #{selected}")
    window.runs_panel.select_run(first.id)  # the tabs follow the selection
    assert window.lattice_view.space is not None and window.lattice_view.space.optimum is not None
    assert window.release_panel.summary.text().startswith(f"Run #{first.id}")
    window.runs_panel.select_run(second.id)
    assert window.release_panel.summary.text().startswith(f"Run #{second.id}")
    assert window.lattice_view.space is None

    out = tmp_path / "export"
    with qtbot.waitSignal(c2.exported, timeout=60_000) as blocker:
        c2.export(second.id, out, _options(window))
    assert blocker.args[0].verified
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["verdict"]["holds"]
    release_file = manifest["output"]["path"]  # the same release, byte for byte, without running again
    assert (out / release_file).read_bytes() == (before / release_file).read_bytes()
    window.close()

    # the CLI repeats the project, the chosen transformation included
    assert cli_main(["run", str(path), "--no-report", "--out", str(tmp_path / "cli")]) == 0
    repeated = json.loads((tmp_path / "cli" / "run-2" / "manifest.json").read_text(encoding="utf-8"))
    again = repeated["details"]["generalisation"]["levels"]
    assert tuple(again[col] for col in first.outcome.result.release.solution_space.columns) == levels


def _options(window):
    from veil.engine import ExportOptions

    return ExportOptions(fmt=window.registry.preferred("exporter"))


def test_runs_that_cannot_be_trusted_are_not_restored_and_the_tabs_say_why(demo_window, qtbot, registry, tmp_path):
    first, second, _ = _run_and_choose(demo_window, qtbot)
    path = tmp_path / "ward.veil.json"
    assert demo_window.controller.save_project(path)
    index = kept_folder(path) / "index.json"
    kept = json.loads(index.read_text(encoding="utf-8"))
    kept["veil_version"] = "0.0.1"  # edited after signing: not this workstation's any more
    index.write_text(json.dumps(kept), encoding="utf-8")
    demo_window.close()

    window = open_window(qtbot, registry)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        window.actions.open_any(path)
    assert window.controller.runs.entries == []
    assert "not kept by this workstation" in window.controller.not_restored
    assert window.runs_panel.results_model.rowCount() == 2  # the saved figures stay
    window.runs_panel.select_run(first.id)
    assert "has no release in memory" in window.release_panel.summary.text()
    assert "not kept by this workstation" in window.lattice_view.summary.text()
    window.close()


def test_the_window_title_names_veil_once(demo_window):
    # Qt appends the application's display name ("Veil") unless the title already ends with it
    assert demo_window.windowTitle() == "demo hospital admissions — Veil"
