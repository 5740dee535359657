"""`veil run` never releases a column marked sensitive without the user agreeing:
a run that would release one no privacy model protects is refused (one line, exit 2, nothing
written) unless ``--release-sensitive COLUMN`` or the project's ``release_sensitive`` names it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from .helpers import all_files, read_manifest


@pytest.fixture
def table_file(tmp_path):
    """``dx`` (sensitive) predicts the class exactly; ``town`` hardly at all: a feature-selection
    method picks the features of ``dx`` first."""
    rng = np.random.default_rng(5)
    n = 120
    dx = rng.choice(["flu", "cold"], n)
    frame = pd.DataFrame(
        {
            "age": rng.choice([30, 40, 50, 60], n),
            "town": rng.choice(["a", "b", "c"], n),
            "dx": dx,
            "y": np.where(dx == "flu", "yes", "no"),
        }
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path


def roles(path):
    return (
        "--data",
        path,
        "--quasi",
        "age,town",
        "--sensitive",
        "dx",
        "--target",
        "y",
        "--no-report",
        "--metrics",
        "sfc",
    )


def assert_refused(result, out, column="dx"):
    assert result.code == 2, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.err
    assert column in lines[0] and f"--release-sensitive {column}" in lines[0]
    assert all_files(out) == []


def test_a_method_releasing_the_column_as_it_is_is_refused_before_it_runs(veil, table_file, tmp_path):
    out = tmp_path / "out"
    assert_refused(veil("run", *roles(table_file), "--method", "all-features", "--out", out), out)
    assert (
        veil("run", *roles(table_file), "--method", "all-features", "--release-sensitive", "dx", "--out", out).code == 0
    )
    assert read_manifest(out)["released_sensitive"] == ["dx"]


def test_features_selected_from_the_column_are_refused_after_the_run(veil, table_file, tmp_path):
    out = tmp_path / "out"
    run = ("run", *roles(table_file), "--method", "greedy-hamdist", "--model", "k-ac:k=2", "--out", out)
    result = veil(*run)
    assert_refused(result, out)
    assert "contains" in result.err  # said after the run: the method chose the features of dx
    assert veil(*run, "--release-sensitive", "dx").code == 0
    assert read_manifest(out)["released_sensitive"] == ["dx"]


def test_a_run_that_does_not_release_the_column_needs_no_acknowledgement(veil, table_file, tmp_path):
    """Features from town and age only: the refusal is about what is released, not what is marked."""
    out = tmp_path / "out"
    frame = pd.read_csv(table_file).drop(columns=["dx"]).assign(dx="flu")  # a constant dx: never selected
    frame.to_csv(table_file, index=False)
    assert veil("run", *roles(table_file), "--method", "greedy-hamdist", "--model", "k-ac:k=2", "--out", out).code == 0
    assert read_manifest(out)["released_sensitive"] == []


def test_a_model_protecting_the_column_releases_it_without_asking(veil, table_file, tmp_path):
    """Mondrian hands the sensitive column to l-diversity, which judges it; under k-anonymity alone it
    would leave every record's value as it is, so it must be acknowledged."""
    out = tmp_path / "out"
    pd.read_csv(table_file).assign(dx=lambda f: np.tile(["flu", "cold", "hiv"], 40)).to_csv(table_file, index=False)
    assert veil("run", *roles(table_file), "--method", "mondrian", "--model", "l-diversity:l=2", "--out", out).code == 0
    assert_refused(
        veil("run", *roles(table_file), "--method", "mondrian", "--model", "k-anonymity:k=5", "--out", tmp_path / "k"),
        tmp_path / "k",
    )


def test_the_project_file_remembers_the_acknowledgement(veil, table_file, tmp_path):
    from veil.engine import DataSource, PluginCall, Project, RunSpec

    source = DataSource.from_dict(
        {"path": str(table_file), "quasi_identifiers": ["age", "town"], "sensitive": ["dx"], "target": "y"}
    )
    runs = (RunSpec(PluginCall("all-features"), metrics=("sfc",)),)
    project = tmp_path / "p.veil.json"
    Project(source, runs=runs).save(project)
    assert_refused(veil("run", project, "--no-report", "--out", tmp_path / "a"), tmp_path / "a")
    assert veil("run", project, "--no-report", "--release-sensitive", "dx", "--out", tmp_path / "b").code == 0
    Project(source, runs=runs, release_sensitive=("dx",)).save(project)
    assert json.loads(project.read_text())["release_sensitive"] == ["dx"]
    assert veil("run", project, "--no-report", "--out", tmp_path / "c").code == 0


def test_acknowledging_a_column_not_marked_sensitive_is_refused(veil, table_file, tmp_path):
    result = veil(
        "run", *roles(table_file), "--method", "all-features", "--release-sensitive", "town", "--out", tmp_path / "o"
    )
    assert result.code == 2 and "town" in result.err and "not a column marked sensitive" in result.err


TWO = "age,zip,disease,salary\n30,1,flu,10\n31,1,cold,10\n32,2,flu,20\n33,2,cold,20\n"


@pytest.mark.parametrize("order", ["disease,salary", "salary,disease"])
def test_every_sensitive_column_is_judged_whatever_their_order(veil, write_file, importers, order):
    """A model on sensitive values judges each column marked sensitive and holds only when it holds for
    all: disease is 2-diverse in both groups, salary in neither, so the file fails in either order
    (it used to pass when disease came first)."""
    data = write_file("two.csv", TWO)
    result = veil("verify", data, "--quasi", "zip", "--sensitive", order, "--model", "l-diversity:l=2,variant=distinct")
    assert result.code == 1 and result.out.startswith("FAILED")
    assert "salary: fails" in result.out and "disease: holds" in result.out


def _two_columns(write_file):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 200),
            "zip": rng.integers(1, 6, 200),
            "disease": rng.choice(["flu", "cold", "hiv"], 200),
            "salary": rng.choice([10, 20, 30, 40], 200),
        }
    )
    return write_file("two_big.csv", frame.to_csv(index=False)), frame


@pytest.mark.parametrize("mode", ["generalise", "bucketise"])
def test_mondrian_splits_on_every_sensitive_column(veil, write_file, importers, tmp_path, mode):
    """Mondrian's search judges each sensitive column: with two it finds a partition l-diverse on both
    (it used to split on the first only, and the release was then refused), and the manifest and the
    report give the model's value on each column; the written file verifies on each."""
    data, frame = _two_columns(write_file)
    out = tmp_path / "out"
    result = veil(
        "run",
        "--data",
        data,
        "--quasi",
        "age,zip",
        "--sensitive",
        "disease,salary",
        "--method",
        f"mondrian:mode={mode}",
        "--model",
        "l-diversity:l=3,variant=distinct",
        "--release-sensitive",
        "disease,salary",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    manifest = json.loads((out / "manifest.json").read_text())
    by_column = manifest["verdict"]["by_column"]
    assert set(by_column) == {"disease", "salary"} and manifest["verdicts"][0]["by_column"] == by_column
    assert all(v["holds"] and v["value"] >= 3 for v in by_column.values())
    assert manifest["verdict"]["value"] == min(v["value"] for v in by_column.values())
    report = (out / "report.html").read_text()
    assert "l-diversity, on each sensitive column: disease, effective l" in report and "salary, effective l" in report
    assert veil("verify", out / "manifest.json").code == 0
    if mode == "generalise":
        for column in ("disease", "salary"):
            checked = veil(
                "verify",
                out / "release.csv",
                "--quasi",
                "age,zip",
                "--sensitive",
                column,
                "--model",
                "l-diversity:l=3,variant=distinct",
            )
            assert checked.code == 0, checked.out
    else:  # Anatomy: one sensitive table holding both columns (the written rows are shuffled)
        written = pd.read_csv(out / "release.csv")
        part = next(pd.read_csv(f) for f in out.iterdir() if f.suffix == ".csv" and f.name != "release.csv")
        assert set(part.columns) == {"group", "disease", "salary"} and "disease" not in written.columns
        assert (part["group"].value_counts().sort_index() == written["group"].value_counts().sort_index()).all()
        for column in ("disease", "salary"):
            assert sorted(part[column]) == sorted(frame[column])
            assert part.groupby("group")[column].nunique().min() >= 3


DX_HIERARCHY = (
    "flu;respiratory;*\npneumonia;respiratory;*\nbronchitis;respiratory;*\n"
    "gastritis;digestive;*\nulcer;digestive;*\ncolitis;digestive;*\n"
)


def test_hierarchical_t_closeness_runs_and_verifies_from_its_manifest(veil, write_file, importers, tmp_path):
    """t-closeness with the hierarchical EMD follows the sensitive column's hierarchy (--hierarchy): the
    run holds, the manifest keeps the hierarchy so the export verifies alone, and a bare file needs
    --hierarchy again (refused in one line without it)."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, 300),
            "zip": rng.integers(1, 9, 300),
            "dx": rng.choice(["flu", "pneumonia", "bronchitis", "gastritis", "ulcer", "colitis"], 300),
        }
    )
    data = write_file("h.csv", frame.to_csv(index=False))
    tree = write_file("dx.csv", DX_HIERARCHY)
    out = tmp_path / "out"
    model = "t-closeness:t=0.15,distance=hierarchical"
    result = veil(
        "run",
        "--data",
        data,
        "--quasi",
        "age,zip",
        "--sensitive",
        "dx",
        "--hierarchy",
        f"dx={tree}",
        "--method",
        "mondrian",
        "--model",
        model,
        "--release-sensitive",
        "dx",
        "--out",
        out,
        "--no-report",
    )
    assert result.code == 0, result.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["sensitive_hierarchies"]) == ["dx"]
    assert manifest["verdict"]["by_column"]["dx"]["value"] <= 0.15
    assert veil("verify", out / "manifest.json").code == 0
    bare = ("verify", out / "release.csv", "--quasi", "age,zip", "--sensitive", "dx", "--model", model)
    refused = veil(*bare)
    assert refused.code == 2 and "needs a hierarchy for the sensitive column" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    assert veil(*bare, "--hierarchy", f"dx={tree}").code == 0
    # without the hierarchy the run is refused before it starts, in one line
    missing = veil(
        "run",
        "--data",
        data,
        "--quasi",
        "age,zip",
        "--sensitive",
        "dx",
        "--method",
        "mondrian",
        "--model",
        model,
        "--release-sensitive",
        "dx",
        "--out",
        tmp_path / "none",
        "--no-report",
    )
    assert missing.code == 2 and "distance=hierarchical needs a hierarchy" in missing.err
    assert not (tmp_path / "none").exists()


def test_one_sided_delta_disclosure_says_so_in_the_report(veil, write_file, importers, tmp_path):
    data, _ = _two_columns(write_file)
    out = tmp_path / "out"
    result = veil(
        "run",
        "--data",
        data,
        "--quasi",
        "age,zip",
        "--sensitive",
        "disease",
        "--method",
        "mondrian",
        "--model",
        "delta-disclosure:delta=1.5,sides=1",
        "--release-sensitive",
        "disease",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    report = (out / "report.html").read_text()
    assert "One-sided δ-disclosure with δ = 1.5 holds" in report
    assert "one-sided δ-disclosure (delta-disclosure)" in report


def test_a_model_judging_every_sensitive_column_protects_them_all(veil, write_file, importers, tmp_path):
    """Mondrian under l-diversity releases both sensitive columns as attributes the model judges: no
    agreement is asked for either; under k-anonymity alone both must be agreed to."""
    data, _ = _two_columns(write_file)
    args = (
        "run",
        "--data",
        data,
        "--quasi",
        "age,zip",
        "--sensitive",
        "disease,salary",
        "--method",
        "mondrian",
        "--no-report",
    )
    assert veil(*args, "--model", "l-diversity:l=2,variant=distinct", "--out", tmp_path / "l").code == 0
    refused = veil(*args, "--model", "k-anonymity:k=5", "--out", tmp_path / "k")
    assert refused.code == 2 and "disease" in refused.err and "salary" in refused.err
