"""Mondrian from the command line: both release modes written, read back and verified from the files
alone; a bucketised release is two files and changing either is caught."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.cli import main


@pytest.fixture
def table_file(tmp_path):
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "town": rng.choice(["a", "b", "c", "d"], n),
            "dx": rng.choice(["flu", "hiv", "cold", "cancer"], n),
            "y": rng.choice(["yes", "no"], n),
        }
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "town.csv").write_text("a;north;*\nb;north;*\nc;south;*\nd;south;*\n")
    return path


def _run(table_file, out, mode, model):
    return main(
        [
            "run",
            "--data",
            str(table_file),
            "--quasi",
            "age,town",
            "--sensitive",
            "dx",
            "--target",
            "y",
            "--method",
            f"mondrian:mode={mode}",
            "--model",
            model,
            "--no-report",
            "--metrics",
            "ncp",
            "--out",
            str(out),
        ]
    )


def test_generalised_release_verifies_from_its_file(table_file, tmp_path, capsys):
    out = tmp_path / "g"
    assert _run(table_file, out, "generalise", "t-closeness:t=0.2") == 0
    written = pd.read_csv(out / "release.csv")
    assert written["age"].astype(str).str.startswith("[").any()  # ranges as ARX writes them
    assert main(["verify", str(out)]) == 0
    assert (
        main(["verify", str(out / "release.csv"), "--model", "t-closeness:t=0.2", "--sensitive", "dx", "--target", "y"])
        == 0
    )
    assert (
        main(
            ["verify", str(out / "release.csv"), "--model", "t-closeness:t=0.001", "--sensitive", "dx", "--target", "y"]
        )
        == 1
    )
    assert "FAILED" in capsys.readouterr().out


def test_bucketised_release_is_two_files_checked_together(table_file, tmp_path, capsys):
    out = tmp_path / "b"
    assert _run(table_file, out, "bucketise", "l-diversity:l=2") == 0
    main_file, part = pd.read_csv(out / "release.csv"), pd.read_csv(out / "release.sensitive.csv")
    assert "dx" not in main_file.columns and list(part.columns) == ["group", "dx"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["output"]["parts"]["sensitive"]["path"] == "release.sensitive.csv"
    original = pd.read_csv(table_file)
    assert sorted(part["dx"]) == sorted(original["dx"])  # every sensitive value, once
    assert main(["verify", str(out)]) == 0
    assert (
        main(
            [
                "verify",
                str(out / "release.csv"),
                "--model",
                "l-diversity:l=2",
                "--sensitive",
                "dx",
                "--quasi",
                "group",
                "--with-parts",
            ]
        )
        == 0
    )
    capsys.readouterr()
    # a sensitive table whose buckets no longer satisfy the model: caught by the hash and by the model
    tampered = part.copy()
    tampered.loc[tampered["group"] == tampered["group"].iloc[0], "dx"] = "hiv"
    tampered.to_csv(out / "release.sensitive.csv", index=False)
    assert main(["verify", str(out)]) == 1
    assert (
        main(
            [
                "verify",
                str(out / "release.csv"),
                "--model",
                "l-diversity:l=2",
                "--sensitive",
                "dx",
                "--quasi",
                "group",
                "--with-parts",
            ]
        )
        == 1
    )


def test_bucketising_without_a_sensitive_column_is_refused(table_file, tmp_path, capsys):
    code = main(
        [
            "run",
            "--data",
            str(table_file),
            "--quasi",
            "age,town",
            "--method",
            "mondrian:mode=bucketise",
            "--model",
            "k-anonymity:k=5",
            "--no-report",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    assert code == 2 and "sensitive" in capsys.readouterr().err


def test_bucketised_risk_is_the_exact_quasi_identifiers_risk(table_file, tmp_path):
    """A bucketised release publishes its quasi-identifiers exact: the report's risk groups on them
    (as an attacker links on them), not on the buckets the privacy model judges."""
    out = tmp_path / "b"
    assert (
        main(
            [
                "run",
                "--data",
                str(table_file),
                "--quasi",
                "age,town",
                "--sensitive",
                "dx",
                "--target",
                "y",
                "--method",
                "mondrian:mode=bucketise",
                "--model",
                "l-diversity:l=2",
                "--metrics",
                "ncp",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["roles"]["exact_quasi_identifiers"] == ["age", "town"]
    after = manifest["risk"]["after"]
    written = pd.read_csv(out / "release.csv")
    sizes = written.groupby(["age", "town"])["age"].transform("size").to_numpy()  # the oracle: exact look-alikes
    buckets = written.groupby("group")["group"].transform("size").to_numpy()
    assert after["columns"] == ["age", "town"]
    assert after["max"] == pytest.approx(1 / sizes.min()) and after["avg"] == pytest.approx(np.mean(1 / sizes))
    assert after["max"] > 1 / buckets.min()  # the buckets alone would have shown a lower risk
    assert after["max"] == pytest.approx(manifest["risk"]["before"]["max"])  # the input's, on the same columns
    html = (out / "report.html").read_text()
    assert "published exact" in html and "The guarantee covers the quasi-identifiers: group" not in html
    assert main(["verify", str(out)]) == 0
