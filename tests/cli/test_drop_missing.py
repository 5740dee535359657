"""`--drop-missing`: records with a missing value are dropped on reading (as the papers do with
Adult), the manifest and the report say so; without it a method that cannot keep blanks (Hilbert)
refuses with a message that names the way out."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.cli import main


def _table(tmp_path):
    rng = np.random.default_rng(5)
    n = 240
    frame = pd.DataFrame(
        {"age": rng.integers(18, 80, n), "work": rng.choice(["a", "b", "c"], n), "y": rng.choice(["yes", "no"], n)}
    ).astype(object)
    gaps = rng.choice(n, 17, replace=False)
    frame.loc[gaps[:9], "work"] = "?"
    frame.loc[gaps[9:], "age"] = ""
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, n - len(gaps)


def test_a_method_refusing_missing_values_names_the_way_out(tmp_path, capsys):
    path, _ = _table(tmp_path)
    code = main(
        [
            "run",
            "--data",
            str(path),
            "--quasi",
            "age,work",
            "--target",
            "y",
            "--method",
            "hilbert",
            "--model",
            "k-anonymity:k=5",
            "--no-report",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--drop-missing" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_drop_missing_drops_them_and_the_report_says_so(tmp_path):
    path, kept = _table(tmp_path)
    before = path.read_bytes()
    out = tmp_path / "o"
    assert (
        main(
            [
                "run",
                "--data",
                str(path),
                "--drop-missing",
                "--quasi",
                "age,work",
                "--target",
                "y",
                "--method",
                "mondrian",
                "--model",
                "k-anonymity:k=5",
                "--metrics",
                "ncp",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert path.read_bytes() == before  # the input is never modified
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["input"]["rows"] == kept and manifest["input"]["read"]["drop_missing"] is True
    assert len(pd.read_csv(out / "release.csv")) == kept
    assert "after dropping every record with a missing value" in (out / "report.html").read_text()
    assert main(["verify", str(out)]) == 0


def test_the_refusal_names_every_column_with_blanks(tmp_path, capsys):
    path, _ = _table(tmp_path)
    main(
        [
            "run",
            "--data",
            str(path),
            "--quasi",
            "age,work",
            "--target",
            "y",
            "--method",
            "hilbert",
            "--model",
            "k-anonymity:k=5",
            "--no-report",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    err = capsys.readouterr().err
    assert "'age' (8 records) and 'work' (9 records)" in err and "--fill-missing" in err


def test_fill_missing_keeps_every_record_and_the_report_says_how(tmp_path, capsys):
    path, kept = _table(tmp_path)
    # a blank kept as a value: text columns get a value of their own, numbers stay numbers with their
    # blanks, which a method keeping blanks (local suppression) counts as matching any value
    for how, words, method in (
        ("impute", "imputed", "mondrian"),
        ("value", "kept as a value of its own", "local-suppression"),
    ):
        out = tmp_path / how
        assert (
            main(
                [
                    "run",
                    "--data",
                    str(path),
                    "--fill-missing",
                    how,
                    "--quasi",
                    "age,work",
                    "--target",
                    "y",
                    "--method",
                    method,
                    "--model",
                    "k-anonymity:k=5",
                    "--metrics",
                    "ncp",
                    "--out",
                    str(out),
                ]
            )
            == 0
        ), capsys.readouterr().err
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["input"]["rows"] == 240 and manifest["input"]["read"]["fill_missing"] == how
        assert words in (out / "report.html").read_text()
        assert main(["verify", str(out)]) == 0


@pytest.mark.parametrize(
    "method, rule",
    [
        ("global-recoding:suppression=0.05", "any-value"),
        ("global-recoding:blanks=own-value,suppression=0.1", "own-value"),
    ]
    + [("mondrian", "any-value")],
)
def test_a_numeric_quasi_identifier_with_blanks_is_anonymised_as_a_number(tmp_path, capsys, method, rule):
    path, _ = _table(tmp_path)
    out = tmp_path / "x"
    args = ["run", "--data", str(path), "--fill-missing", "value", "--quasi", "age,work", "--target", "y"]
    args += ["--model", "k-anonymity:k=5", "--no-report", "--out", str(out), "--method", method]
    assert main(args) == 0, capsys.readouterr().err
    original = pd.read_csv(path)
    released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    assert original["age"].isna().sum() == 8
    age = released["age"]  # the rows are shuffled: count them
    blank, star = int(age.eq("").sum()), int(age.eq("*").sum())
    assert 1 <= blank <= 8 and blank + star >= 8  # blank, or * where the record was suppressed
    assert age[age.ne("") & age.ne("*")].str.match(r"^(\[\d+\.0, \d+\.0\)|\[\d+, \d+\]|\d+-\d+|\d+)$").all()  # numbers
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["roles"]["blanks"] == rule
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert f"{rule} rule" in capsys.readouterr().out


def test_dropping_and_filling_together_is_refused(tmp_path, capsys):
    path, _ = _table(tmp_path)
    code = main(
        [
            "run",
            "--data",
            str(path),
            "--fill-missing",
            "value",
            "--drop-missing",
            "--method",
            "mondrian",
            "--quasi",
            "age,work",
            "--model",
            "k-anonymity:k=5",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    assert code == 2 and "dropped or filled, not both" in capsys.readouterr().err
    assert (
        main(
            ["run", "--data", str(path), "--fill-missing", "mean", "--method", "mondrian", "--out", str(tmp_path / "x")]
        )
        == 2
    )
