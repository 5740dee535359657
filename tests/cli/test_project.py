"""Project files: `veil run PROJECT.json`, the data's SHA-256 guard, and save/load round trips."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from veil.engine import DataSource, PluginCall, Project, Recipe, RunSpec, Schema, Step, make_registry

from .helpers import SMALL_ROWS, all_files, assert_bad_input, read_manifest, sha256

RUN = {"method": {"name": "all-features", "params": {}}, "model": None, "seed": 3, "metrics": ["sfc"]}


def project_file(folder: Path, data: Path, *, runs=(RUN,), **fields) -> Path:
    project = {
        "veil_project": 1,
        "data": {"path": data.name, "sha256": sha256(data), "roles": {"name": "identifier"}},
        "schema": None,
        "recipe": None,
        "runs": list(runs),
        **fields,
    }
    path = folder / "project.json"
    path.write_text(json.dumps(project), encoding="utf-8")
    return path


def test_run_a_project(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    result = veil("run", project_file(tmp_path, small_csv), "--out", out)
    assert result.code == 0, result.err
    assert result.out.strip() == str(out)
    m = read_manifest(out)
    assert m["seed"] == 3
    assert m["method"]["name"] == "all-features"
    assert list(m["metrics"]) == ["sfc"]
    assert m["input"]["sha256"] == sha256(small_csv) and m["input"]["rows"] == SMALL_ROWS
    assert "name" not in m["output"]["columns"]
    assert veil("verify", out).code == 0


def test_a_project_with_two_runs_writes_two_folders(veil, small_csv, tmp_path):
    guarded = {**RUN, "model": {"name": "k-anonymity", "params": {"k": 1}}, "seed": 4}
    out = tmp_path / "out"
    result = veil("run", project_file(tmp_path, small_csv, runs=[RUN, guarded]), "--out", out)
    assert result.code == 0, result.err
    assert result.out.split() == [str(out / "run-1"), str(out / "run-2")]
    assert read_manifest(out / "run-1")["seed"] == 3
    second = read_manifest(out / "run-2")
    assert second["seed"] == 4 and second["privacy_model"] == {"name": "k-anonymity", "params": {"k": 1}}


def test_a_project_run_that_fails_its_model(veil, small_csv, tmp_path):
    failing = {**RUN, "model": {"name": "k-anonymity", "params": {"k": 2}}}
    out = tmp_path / "out"
    assert veil("run", project_file(tmp_path, small_csv, runs=[failing]), "--out", out).code == 1
    assert all_files(out) == []


def test_data_changed_since_the_project_was_saved(veil, small_csv, tmp_path):
    project = project_file(tmp_path, small_csv)
    with open(small_csv, "a", encoding="utf-8") as f:
        f.write("Max,40-49,M,WN3,0,1\n")
    before = sha256(small_csv)
    out = tmp_path / "out"
    result = veil("run", project, "--out", out)
    assert_bad_input(result)
    assert "changed" in result.err
    assert sha256(small_csv) == before
    assert all_files(out) == []


def test_project_and_data_flags_together(veil, small_csv, tmp_path):
    assert_bad_input(veil("run", project_file(tmp_path, small_csv), "--data", small_csv, "--out", tmp_path / "o"))
    assert_bad_input(veil("run", project_file(tmp_path, small_csv), "--demo", "--out", tmp_path / "o"))
    # a shell pattern matching two files: the second is taken for a project file, and the message says so
    other = tmp_path / "other.csv"
    other.write_text(small_csv.read_text(encoding="utf-8"), encoding="utf-8")
    result = veil("run", "--data", small_csv, other, "--method", "all-features", "--out", tmp_path / "o")
    assert_bad_input(result)
    assert "other.csv" in result.err and "several files" in result.err


BAD_PROJECTS = {
    "no runs": {"runs": []},
    "run without method": {"runs": [{"seed": 1}]},
    "unknown method": {"runs": [{**RUN, "method": {"name": "mondrian"}}]},
    "unknown parameter": {"runs": [{**RUN, "method": {"name": "all-features", "params": {"foo": 1}}}]},
    "k zero": {"runs": [{**RUN, "model": {"name": "k-anonymity", "params": {"k": 0}}}]},
    "newer version": {"veil_project": 99},
    "schema of other columns": {"schema": [{"name": "a", "kind": "numeric"}]},
    "malformed schema": {"schema": [{"name": "a"}]},
    "bad recipe rule": {"recipe": {"steps": [{"column": "sex", "rule": "bogus"}]}},
    "item sets from no column": {"item_sets": "nowhere"},
    "item sets from a categorical column": {"item_sets": "sex"},
    "item sets a number": {"item_sets": 3},
}


@pytest.mark.parametrize("fields", BAD_PROJECTS.values(), ids=BAD_PROJECTS.keys())
def test_bad_project(veil, small_csv, tmp_path, fields):
    assert_bad_input(veil("run", project_file(tmp_path, small_csv, **fields), "--out", tmp_path / "out"))
    assert all_files(tmp_path / "out") == []


def test_project_whose_data_is_gone(veil, small_csv, tmp_path):
    project = project_file(tmp_path, small_csv)
    small_csv.unlink()
    assert_bad_input(veil("run", project, "--out", tmp_path / "out"))


@pytest.mark.parametrize(
    "content", ["", "{", "[]", '{"data": {}}'], ids=["empty", "truncated", "a list", "not a project"]
)
def test_not_a_project(veil, write_file, tmp_path, content):
    assert_bad_input(veil("run", write_file("project.json", content), "--out", tmp_path / "out"))


def test_project_file_missing(veil, tmp_path):
    assert_bad_input(veil("run", tmp_path / "nowhere.json", "--out", tmp_path / "out"))


@pytest.mark.parametrize(
    "fields",
    [{"veil_project": "one"}, {"runs": [{**RUN, "seed": "x"}]}, {"runs": [{**RUN, "method": 5}]}],
    ids=["version a string", "seed a string", "method a number"],
)
def test_project_fields_of_the_wrong_type(veil, small_csv, tmp_path, fields):
    assert_bad_input(veil("run", project_file(tmp_path, small_csv, **fields), "--out", tmp_path / "out"))


def test_save_load_round_trip(small_csv, tmp_path):
    schema = Schema.from_dict(
        [
            {"name": n, "kind": k, "role": r}
            for n, k, r in [
                ("name", "categorical", "identifier"),
                ("age_band", "categorical", "quasi-identifier"),
                ("sex", "categorical", "quasi-identifier"),
                ("postcode", "categorical", "insensitive"),
                ("smoker", "binary", "insensitive"),
                ("outcome", "binary", "target"),
            ]
        ]
    )
    recipe = Recipe(
        (Step("age_band", "one-hot", values=("20-29", "30-39", "40-49")), Step("smoker", "binary")),
        "outcome",
        fitted=True,
    )
    runs = (
        RunSpec(PluginCall("all-features"), None, 3, ("sfc",)),
        RunSpec(
            PluginCall("all-features", {}), PluginCall("k-anonymity", {"k": 2}), 5, ("sfc", "min-group-size"), recipe
        ),
    )
    source = DataSource(
        path=str(small_csv.resolve()), names=None, delimiter=",", encoding="utf-8", roles={"name": "identifier"}
    )
    project = Project(source, schema, recipe, runs, sha256(small_csv), [{"note": "kept as is"}])
    path = project.save(tmp_path / "saved.json")
    loaded = Project.load(path)
    assert loaded == project
    assert json.loads(path.read_text(encoding="utf-8"))["data"]["path"] == small_csv.name  # stored relative
    assert Project.load(loaded.save(tmp_path / "again.json")) == project
    with_sets = dataclasses.replace(project, item_sets="postcode")
    assert Project.load(with_sets.save(tmp_path / "sets.json")) == with_sets
    agreed = dataclasses.replace(project, release_household=True)  # the household id may be released
    assert Project.load(agreed.save(tmp_path / "household.json")) == agreed != project
    data = loaded.load_data(make_registry())
    assert data.schema == schema


def test_saved_project_runs_from_another_folder(veil, small_csv, tmp_path, monkeypatch):
    """The data path is relative to the project file, not to the current folder."""
    project = Project(
        DataSource(path=str(small_csv), roles={"name": "identifier"}),
        runs=(RunSpec(PluginCall("all-features"), None, 3, ("sfc",)),),
        sha256=sha256(small_csv),
    )
    (tmp_path / "sub").mkdir()
    path = project.save(tmp_path / "sub" / "p.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = veil("run", path, "--out", tmp_path / "out")
    assert result.code == 0, result.err
    assert read_manifest(tmp_path / "out")["input"]["sha256"] == sha256(small_csv)


def test_demo_project(veil, tmp_path):
    path = tmp_path / "demo.json"
    path.write_text(
        json.dumps(
            {"veil_project": 1, "data": {"demo": True}, "runs": [RUN], "release_sensitive": ["diagnosis_group"]}
        ),
        encoding="utf-8",
    )
    assert veil("run", path, "--out", tmp_path / "out").code == 0
    assert read_manifest(tmp_path / "out")["input"]["rows"] == 5000


def test_the_manifest_records_the_project_file_and_the_report_reads_its_data_again(veil, small_csv, tmp_path):
    project = project_file(tmp_path, small_csv)
    out = tmp_path / "out"
    assert veil("run", project, "--out", out).code == 0
    m = read_manifest(out)
    assert m["project"] == {"path": str(project.resolve()), "sha256": sha256(project)}
    assert m["input"]["read"]["path"] == str(small_csv.resolve())
    assert m["risk"]["before"]["max"] == 1.0  # postcode makes every input record unique
    regenerated = veil("report", out, "--no-utility")
    assert regenerated.code == 0, regenerated.err
    assert regenerated.out.split() == [str(out / "report.html"), str(out / "report.pdf")]
    assert read_manifest(out) == m
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Project file" in html and m["project"]["sha256"] in html and "The input file matches" in html


def test_a_run_without_a_project_records_none(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--data",
            small_csv,
            "--identifier",
            "name",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            out,
        ).code
        == 0
    )
    assert read_manifest(out)["project"] is None
    assert sorted(p.name for p in all_files(out)) == ["manifest.json", "release.csv"]


def test_a_failing_run_does_not_stop_the_others(veil, small_csv, tmp_path):
    """Every run is run and reported; the exit code says one failed."""
    failing = {**RUN, "model": {"name": "k-anonymity", "params": {"k": 2}}}
    guarded = {**RUN, "model": {"name": "k-anonymity", "params": {"k": 1}}, "seed": 4}
    out = tmp_path / "out"
    result = veil("run", project_file(tmp_path, small_csv, runs=[RUN, failing, guarded]), "--out", out)
    assert result.code == 1
    assert result.out.split() == [str(out / "run-1"), str(out / "run-3")]
    assert "run 2 (all-features): privacy check failed" in result.err
    assert "1 of 3 runs failed" in result.err
    assert read_manifest(out / "run-3")["seed"] == 4
    assert not (out / "run-2").exists()
