"""Headerless input: column names from --names or col1…colN, and --target choosing the class."""

from __future__ import annotations

import pytest

from .helpers import HEADERLESS_CSV, read_manifest, sha256


@pytest.fixture
def headerless(write_file, importers):
    return write_file("numbers.csv", HEADERLESS_CSV)


def run(veil, data, out, *extra):
    result = veil(
        "run", "--data", data, "--method", "all-features", "--metrics", "sfc", "--no-shuffle", *extra, "--out", out
    )
    assert result.code == 0, result.err
    return read_manifest(out)


def test_names_given(veil, headerless, tmp_path):
    m = run(veil, headerless, tmp_path / "out", "--names", "a,b,score,label", "--target", "label")
    assert m["input"]["rows"] == 6 and m["output"]["rows"] == 6  # the first line is data, not a header
    assert m["output"]["columns"] == ["a", "b", "score", "label"]
    assert m["roles"]["target"] == "label"
    assert m["selected_features"] == ["a", "b", "score"]
    lines = (tmp_path / "out" / "release.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "a,b,score,label"
    assert lines[1:] == HEADERLESS_CSV.splitlines()


def test_default_names(veil, headerless, tmp_path):
    m = run(veil, headerless, tmp_path / "out", "--target", "col4")
    assert m["output"]["columns"] == ["col1", "col2", "col3", "col4"]
    assert m["roles"]["target"] == "col4"
    assert m["output"]["rows"] == 6


def test_target_moves_to_the_end_and_out_of_the_features(veil, headerless, tmp_path):
    m = run(veil, headerless, tmp_path / "out", "--names", "a,b,score,label", "--target", "a")
    assert m["output"]["columns"] == ["b", "score", "label", "a"]
    assert m["selected_features"] == ["b", "score", "label"]
    assert m["metrics"]["sfc"] == 3.0


def test_no_target(veil, headerless, tmp_path):
    m = run(veil, headerless, tmp_path / "out")
    assert m["roles"]["target"] is None
    assert m["metrics"]["sfc"] == 4.0


def test_target_by_a_name_the_file_does_not_have(veil, headerless, tmp_path):
    result = veil(
        "run",
        "--data",
        headerless,
        "--names",
        "a,b,score,label",
        "--target",
        "col4",
        "--method",
        "all-features",
        "--out",
        tmp_path / "out",
    )
    assert result.code == 2 and "col4" in result.err


@pytest.mark.dataset
def test_pima_with_names(veil, datasets_dir, importers, tmp_path):
    pima = datasets_dir / "pima_indians_diabetes" / "pima-indians-diabetes.data.csv"
    before = sha256(pima)
    names = "pregnancies,glucose,pressure,skin,insulin,bmi,pedigree,age,class"
    m = run(veil, pima, tmp_path / "out", "--names", names, "--target", "class")
    assert m["input"]["rows"] == 768 and m["output"]["rows"] == 768
    assert m["output"]["columns"] == names.split(",")
    assert m["metrics"]["sfc"] == 8.0
    first = (tmp_path / "out" / "release.csv").read_text(encoding="utf-8").splitlines()[1]
    assert first == pima.read_text(encoding="utf-8").splitlines()[0]
    assert sha256(pima) == before


@pytest.mark.dataset
def test_pima_with_default_names(veil, datasets_dir, importers, tmp_path):
    pima = datasets_dir / "pima_indians_diabetes" / "pima-indians-diabetes.data.csv"
    m = run(veil, pima, tmp_path / "out", "--target", "col9")
    assert m["output"]["columns"] == [f"col{i}" for i in range(1, 10)]
    assert m["roles"]["target"] == "col9"


def test_names_from_a_uci_names_file(veil, headerless, write_file, tmp_path):
    """The names of a headerless file from a UCI .names file (the class last)."""
    names = write_file(
        "numbers.names", "| comment: not a name\n1, 0.\n\na: continuous.\nb: x, y.\nscore: continuous.\n"
    )
    m = run(veil, headerless, tmp_path / "out", "--names-from", names, "--target", "class")
    assert m["output"]["columns"] == ["a", "b", "score", "class"]
    assert veil("inspect", headerless, "--names-from", names, "--names", "a,b,c,d").code == 2
