"""Run results kept beside a project: restored only when this workstation signed them, for this
Veil version and this input; otherwise nothing is unpickled and the reason is given."""

from __future__ import annotations

import json

import pytest

from veil.engine import keep_results, kept_folder, restore_results


@pytest.fixture(autouse=True)
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(tmp_path / "settings"))


def test_kept_results_round_trip(tmp_path):
    project = tmp_path / "p.veil.json"
    keep_results(project, {3: {"a": [1, 2]}, 5: ("x", 2.5)}, input_sha256="abc", version="1.0")
    back = restore_results(project, input_sha256="abc", version="1.0")
    assert back.results == {3: {"a": [1, 2]}, 5: ("x", 2.5)} and back.why_not == ""


def test_fewer_runs_kept_removes_the_earlier_files(tmp_path):
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: 1, 2: 2}, input_sha256="abc", version="1.0")
    keep_results(project, {2: 2}, input_sha256="abc", version="1.0")
    assert sorted(p.name for p in kept_folder(project).glob("*.pickle")) == ["run-2.pickle"]
    keep_results(project, {}, input_sha256="abc", version="1.0")
    assert restore_results(project, input_sha256="abc", version="1.0").results == {}


@pytest.mark.parametrize(
    ("sha", "version", "why"),
    [("other", "1.0", "the data has changed"), ("abc", "2.0", "made by Veil 1.0, this is Veil 2.0")],
)
def test_another_input_or_version_restores_nothing(tmp_path, sha, version, why):
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: "r"}, input_sha256="abc", version="1.0")
    back = restore_results(project, input_sha256=sha, version=version)
    assert back.results == {} and why in back.why_not


def test_an_edited_index_or_pickle_is_not_unpickled(tmp_path):
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: "r", 2: "s"}, input_sha256="abc", version="1.0")
    pickle_file = kept_folder(project) / "run-2.pickle"
    pickle_file.write_bytes(pickle_file.read_bytes() + b"\x00")
    back = restore_results(project, input_sha256="abc", version="1.0")
    assert back.results == {1: "r"} and "run #2" in back.why_not
    index = kept_folder(project) / "index.json"
    kept = json.loads(index.read_text(encoding="utf-8"))
    kept["runs"]["2"]["sha256"] = __import__("hashlib").sha256(pickle_file.read_bytes()).hexdigest()
    index.write_text(json.dumps(kept), encoding="utf-8")
    back = restore_results(project, input_sha256="abc", version="1.0")
    assert back.results == {} and "not kept by this workstation" in back.why_not


def test_another_workstation_s_results_are_not_unpickled(tmp_path, monkeypatch):
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: "r"}, input_sha256="abc", version="1.0")
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(tmp_path / "elsewhere"))
    back = restore_results(project, input_sha256="abc", version="1.0")
    assert back.results == {} and "not kept by this workstation" in back.why_not


def _run_on(registry, table):
    from veil.engine import Context, PluginCall, RunSpec, run_planned

    spec = RunSpec(PluginCall.parse("global-recoding"), (PluginCall.parse("k-anonymity:k=2"),), 0, (), None, "", {})
    return run_planned(registry, table, spec, Context()).result


def _table(rows: int):
    """Ages and sexes to generalise, and a long identifier column that is never released."""
    import numpy as np
    import pandas as pd

    from veil.engine import Table

    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "name": [f"person {i:06d} " + "x" * 200 for i in range(rows)],
            "age": rng.integers(20, 70, rows),
            "sex": rng.choice(["F", "M"], rows),
        }
    )
    return Table.from_frame(frame, roles={"name": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier"})


def test_a_kept_run_holds_its_release_not_its_input(tmp_path, registry):
    import pickle

    from veil.engine import input_parts

    table = _table(1000)
    result = _run_on(registry, table)
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: result}, input_sha256="abc", version="1.0", inputs=input_parts(table))
    kept = (kept_folder(project) / "run-1.pickle").stat().st_size
    release = len(pickle.dumps((result.release, result.verdict), protocol=5))
    records = len(pickle.dumps(table.frame, protocol=5))
    assert records > 2 * release  # the identifiers make the input far larger than the release
    assert kept < release + 20_000

    back = restore_results(project, input_sha256="abc", version="1.0", inputs=input_parts(table)).results[1]
    assert back.original.frame is table.frame and back.data is back.original
    assert back.release.frame.equals(result.release.frame)
    assert back.original.schema == table.schema  # the roles the run was made with


def test_a_kept_run_is_not_restored_onto_other_records(tmp_path, registry):
    import dataclasses

    from veil.engine import input_parts

    table = _table(50)
    project = tmp_path / "p.veil.json"
    keep_results(project, {1: _run_on(registry, table)}, input_sha256="abc", version="1.0", inputs=input_parts(table))
    other = table.frame.copy()
    other.loc[3, "age"] = 99
    changed = dataclasses.replace(table, frame=other)
    back = restore_results(project, input_sha256="abc", version="1.0", inputs=input_parts(changed))
    assert back.results == {} and "run #1 was made from differ" in back.why_not
    same = dataclasses.replace(table, frame=table.frame.copy())  # equal records read again: restored
    assert restore_results(project, input_sha256="abc", version="1.0", inputs=input_parts(same)).results
