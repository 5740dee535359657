"""Global recoding from the command line: ARX hierarchy files in, suppressed records written '*' and
kept, the manifest's generalisation details, the report's levels and loss, ``veil verify`` on the
file; no solution and bad input as one line and exit 2, with nothing written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from .helpers import all_files, assert_bad_input


@pytest.fixture
def files(tmp_path):
    """245 records: towns a, b, c with every (decade, sex) eight times, and five records of town d
    that no decade-level transformation groups by five: suppressing them is the cheapest solution."""
    rng = np.random.default_rng(5)
    rows = [
        (town, int(rng.integers(dec, dec + 10)), sex, str(rng.choice(["flu", "cold", "hiv"])))
        for town in "abc"
        for dec in range(20, 70, 10)
        for sex in "FM"
        for _ in range(8)
    ]
    rows += [("d", age, sex, "flu") for age, sex in zip([25, 35, 45, 55, 65], "FMFMF")]
    pd.DataFrame(rows, columns=["town", "age", "sex", "dx"]).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "town.csv").write_text("a;north;*\nb;north;*\nc;south;*\nd;south;*\n")
    (tmp_path / "age.csv").write_text(
        "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'20-49' if a < 50 else '50-79'};*\n" for a in range(20, 80))
    )
    return tmp_path


def _run(veil, files, method="global-recoding:suppression=0.04", model="k-anonymity:k=5", out="out", *extra):
    return veil(
        "run",
        "--data",
        files / "in.csv",
        "--quasi",
        "town,age,sex",
        "--hierarchy",
        f"town={files / 'town.csv'}",
        "--hierarchy",
        f"age={files / 'age.csv'}",
        "--model",
        model,
        "--method",
        method,
        "--out",
        files / out,
        *extra,
    )


def test_suppressed_records_are_written_kept_recorded_and_verified(veil, files):
    result = _run(veil, files, "global-recoding:suppression=0.04", "k-anonymity:k=5", "out", "--metrics", "loss")
    assert result.code == 0, result.err
    out = files / "out"
    written = pd.read_csv(out / "release.csv", dtype=str)
    assert len(written) == 245  # suppressed records are kept
    star = (written[["town", "age", "sex"]] == "*").all(axis=1)
    assert int(star.sum()) == 5 and set(written.loc[star, "dx"]) == {"flu"}
    assert set(written.loc[~star, "age"]) <= {f"{d}-{d + 9}" for d in range(20, 70, 10)}  # age at level 1
    manifest = json.loads((out / "manifest.json").read_text())
    gen = manifest["details"]["generalisation"]
    assert gen["levels"] == {"town": 0, "age": 1, "sex": 0}
    assert gen["suppressed_records"] == 5 and gen["metric"] == "loss" and gen["lattice_nodes"] == 24
    assert 1 <= gen["searched_nodes"] <= 24
    assert manifest["metrics"]["loss"] == pytest.approx(gen["loss"])
    html = (out / "report.html").read_text()
    assert "Generalisation levels" in html and "town 0, age 1, sex 0" in html
    assert "Suppressed records" in html and "5 of 245" in html and "Information loss" in html
    assert veil("verify", out).code == 0
    # the bare file, judged from its own columns: the five '*' records match any value and form no group
    # of their own, so the smallest group is the smallest of the others (8 records)
    assert veil("verify", out / "release.csv", "--model", "k-anonymity:k=8", "--quasi", "town,age,sex").code == 0
    assert veil("verify", out / "release.csv", "--model", "k-anonymity:k=9", "--quasi", "town,age,sex").code == 1


def test_a_chosen_transformation_and_a_model_on_the_sensitive_column(veil, files):
    result = _run(
        veil,
        files,
        "global-recoding:levels=town:1;age:2,suppression=0.1",
        "l-diversity:l=2,variant=distinct",
        "out",
        "--sensitive",
        "dx",
    )
    assert result.code == 0, result.err
    gen = json.loads((files / "out" / "manifest.json").read_text())["details"]["generalisation"]
    assert gen["levels"] == {"town": 1, "age": 2, "sex": 0} and gen["searched_nodes"] == 1
    written = pd.read_csv(files / "out" / "release.csv", dtype=str)
    assert set(written["town"]) <= {"north", "south", "*"}
    assert veil("verify", files / "out").code == 0


def test_no_solution_says_so_in_one_line_and_writes_nothing(veil, files):
    result = _run(veil, files, "global-recoding:suppression=0.04", "k-anonymity:k=300")
    assert_bad_input(result)
    assert "k-anonymity cannot hold on this data whatever the method does" in result.err
    assert all_files(files / "out") == []


@pytest.mark.parametrize(
    "method, words",
    [
        ("global-recoding:levels=country:1", "'country', which is not a quasi-identifier"),
        ("global-recoding:levels=age:4", "level 4 of 'age' is above its hierarchy's height 3"),
        ("global-recoding:suppression=1.5", "'suppression' must be ≥ 0 and ≤ 1"),
        ("global-recoding:suppression=-0.1", "'suppression' must be ≥ 0 and ≤ 1"),
        ("global-recoding:metric=utility", "'metric' must be one of"),
    ],
)
def test_bad_parameters_are_one_line(veil, files, method, words):
    result = _run(veil, files, method)
    assert_bad_input(result)
    assert words in result.err
    assert all_files(files / "out") == []


def test_a_hierarchy_missing_a_value_is_one_line(veil, files):
    (files / "town.csv").write_text("a;north;*\nb;north;*\nc;south;*\n")
    result = _run(veil, files)
    assert_bad_input(result)
    assert "'d'" in result.err and "hierarchy" in result.err


def test_a_lattice_too_large_says_how_large(veil, tmp_path):
    """The optimal search refuses a lattice it cannot hold and says how large it is (``search=auto``
    would walk it heuristically instead)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"q{i}": rng.integers(0, 1000, 30) for i in range(8)})
    frame.to_csv(tmp_path / "wide.csv", index=False)
    result = veil(
        "run",
        "--data",
        tmp_path / "wide.csv",
        "--quasi",
        ",".join(frame.columns),
        "--model",
        "k-anonymity:k=2",
        "--method",
        "global-recoding:search=optimal",
        "--out",
        tmp_path / "out",
    )
    assert_bad_input(result)
    assert "transformations" in result.err and "fewer quasi-identifiers" in result.err
    assert all_files(tmp_path / "out") == []
