"""A study or project file naming the population its data was drawn from: read beside the data (or
marking it), its path resolved against the file's folder as the data's is, judged by δ-presence and
recorded in the manifest; a bad population is refused in one line with nothing written."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest

from .helpers import all_files, assert_bad_input, sha256


@pytest.fixture
def files(tmp_path):
    """A population of 400 people in a subfolder, a 30 % sample of it, and the sample marked in it."""
    rng = np.random.default_rng(0)
    n = 400
    pop = pd.DataFrame(
        {
            "town": rng.choice(list("abcd"), n),
            "age": rng.integers(20, 70, n),
            "sex": rng.choice(list("FM"), n),
            "dx": rng.choice(["flu", "cold", "hiv"], n),
        }
    )
    pop["in_study"] = (rng.random(n) < 0.3).astype(int)
    (tmp_path / "people").mkdir()
    pop.to_csv(tmp_path / "people" / "marked.csv", index=False)
    pop.drop(columns="in_study").to_csv(tmp_path / "people" / "pop.csv", index=False)
    pop.drop(columns=["in_study", "sex"]).to_csv(tmp_path / "people" / "no_sex.csv", index=False)
    pop[pop.in_study == 1].drop(columns="in_study").to_csv(tmp_path / "sample.csv", index=False)
    (tmp_path / "town.csv").write_text("a;north;*\nb;north;*\nc;south;*\nd;south;*\n")
    (tmp_path / "age.csv").write_text(
        "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'20-49' if a < 50 else '50-79'};*\n" for a in range(20, 80))
    )
    return tmp_path


DATA = {
    "path": "sample.csv",
    "quasi_identifiers": ["town", "age", "sex"],
    "hierarchies": {"age": "age.csv", "town": "town.csv"},
}


def _study(files, data, model="delta-presence:dmax=0.5"):
    path = files / "study.json"
    path.write_text(
        json.dumps({"data": data, "models": [model], "methods": ["global-recoding"], "sweep": {}, "metrics": ["loss"]}),
        encoding="utf-8",
    )
    return path


def _rows(out):
    return list(csv.DictReader(io.StringIO((out / "results.csv").read_text(encoding="utf-8"))))


@pytest.mark.parametrize(
    "population",
    [{"path": "people/pop.csv"}, "people/pop.csv", {"path": "people/marked.csv", "subset_column": "in_study"}],
)
def test_a_study_judges_delta_presence_against_its_population(veil, files, population, monkeypatch):
    data = {**DATA, "population": population}
    if isinstance(population, dict) and population.get("subset_column"):
        data.pop("path")
    monkeypatch.chdir(files / "people")  # relative to the study file's folder, not the working folder
    out = files / "out"
    result = veil("study", _study(files, data), "--out", out)
    assert result.code == 0, result.err
    rows = _rows(out)
    assert rows and all(r["holds"] == "True" and r["error"] == "" for r in rows), rows


def test_a_study_without_its_population_cannot_judge_delta_presence(veil, files):
    out = files / "out"
    result = veil("study", _study(files, DATA), "--out", out)
    assert_bad_input(result)  # refused before any run, saying where a study names its population
    assert "delta-presence needs the population the data was drawn from" in result.err
    assert '"population" in its data section' in result.err
    assert all_files(out) == []


@pytest.mark.parametrize(
    "population, said",
    [
        ({"path": "people/no_sex.csv"}, "the population has no column 'sex', a quasi-identifier of the data"),
        ({"path": "people/gone.csv"}, "gone.csv"),
        ({"path": "people/pop.csv", "subset": "in_study"}, "unknown key 'subset'"),
        ({"subset_column": "in_study"}, "give its file as \"path\""),
        (3, "'population' must be an object"),
    ],
)
def test_a_bad_population_in_a_study_is_refused_in_one_line(veil, files, population, said):
    out = files / "out"
    result = veil("study", _study(files, {**DATA, "population": population}), "--out", out)
    assert_bad_input(result)
    assert said in result.err, result.err
    assert all_files(out) == []


def _project(files, population):
    run = {
        "method": {"name": "global-recoding", "params": {}},
        "model": {"name": "delta-presence", "params": {"dmin": 0.0, "dmax": 0.5}},
        "seed": 0,
        "metrics": [],
    }
    path = files / "project.json"
    path.write_text(
        json.dumps(
            {
                "veil_project": 1,
                "data": {**DATA, "sha256": sha256(files / "sample.csv"), "population": population},
                "schema": None,
                "recipe": None,
                "runs": [run],
            }
        ),
        encoding="utf-8",
    )
    return path


def test_a_project_run_records_its_population_in_the_manifest(veil, files, monkeypatch):
    monkeypatch.chdir(files / "people")
    out = files / "out"
    result = veil("run", _project(files, {"path": "people/pop.csv"}), "--out", out, "--no-report")
    assert result.code == 0, result.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["verdict"]["holds"] and "δ-presence" in manifest["verdict"]["message"]
    assert manifest["population"]["path"] == str((files / "people" / "pop.csv").resolve())
    assert manifest["population"]["rows"] == 400
    assert veil("verify", out).code == 0


def test_a_project_with_a_population_lacking_a_quasi_identifier_is_refused(veil, files):
    out = files / "out"
    result = veil("run", _project(files, {"path": "people/no_sex.csv"}), "--out", out, "--no-report")
    assert_bad_input(result)
    assert "the population has no column 'sex'" in result.err
    assert all_files(out) == []


def test_a_project_keeps_its_population_through_save_and_load(files):
    from veil.engine import DataSource, Project

    source = DataSource(path=str(files / "sample.csv"), population=str(files / "people" / "pop.csv"))
    saved = Project(source, None, None, ()).save(files / "p.json")
    written = json.loads(saved.read_text())["data"]
    assert written["population"] == {"path": "people/pop.csv", "subset_column": None}
    assert Project.load(saved).data.population == str((files / "people" / "pop.csv").resolve())
    assert str((files / "people" / "pop.csv").resolve()) in Project.load(saved).data.files()


def test_global_recoding_against_a_population_without_attached_hierarchies(veil, files):
    """No hierarchy given: global recoding generalises age along its generated intervals ("20-29"),
    and the population is read by the same hierarchy in the search, in the run's check and in
    ``veil verify`` from the manifest (which records it). The search used to fail with an
    IndexError: no population value matched a generated label."""
    out = files / "out"
    result = veil(
        "run",
        "--data",
        files / "sample.csv",
        "--quasi",
        "town,age,sex",
        "--population",
        files / "people" / "pop.csv",
        "--model",
        "delta-presence:dmax=0.5",
        "--method",
        "global-recoding",
        "--out",
        out,
        "--no-report",
    )
    assert result.code == 0, result.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["verdict"]["holds"]
    assert "age" in manifest["population"]["hierarchies"]
    released = pd.read_csv(next(out.glob("release.*")), dtype=str)
    assert released["age"].str.contains("-").any()  # generalised along the generated intervals
    assert veil("verify", out).code == 0
