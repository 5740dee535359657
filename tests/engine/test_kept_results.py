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
