"""A generalisation then a perturbation in one run, from the command line (``--then``) and from a
project file (a run's ``then``): the manifest and the report name both steps."""

from __future__ import annotations

import json

from .helpers import assert_bad_input, read_manifest, sha256

QUASI = ["--identifier", "name", "--quasi", "age_band,sex"]


def test_then_on_the_command_line_and_in_a_project_file(veil, small_csv, tmp_path):
    flags = tmp_path / "flags"
    result = veil(
        "run", "--data", small_csv, *QUASI, "--method", "global-recoding", "--model", "k-anonymity:k=2",
        "--then", "pram:columns=smoker,retention=0.5,invariant=false", "--no-report", "--out", flags,
    )  # fmt: skip
    assert result.code == 0, result.err
    manifest = read_manifest(flags)
    assert manifest["method"]["name"] == "global-recoding"
    assert manifest["method"]["then"] == {
        "name": "pram",
        "params": {**manifest["method"]["then"]["params"], "columns": "smoker", "retention": 0.5, "invariant": False},
    }
    assert manifest["perturbation"]["columns"] == ["smoker"]
    assert [t["matrix"] for t in manifest["perturbation"]["transitions"]] == [[[0.5, 0.5], [0.5, 0.5]]]
    assert manifest["verdict"]["holds"] and "frequency-difference" in manifest["metrics"]

    project = tmp_path / "project.json"
    run = {
        "method": {"name": "global-recoding", "params": {}},
        "model": {"name": "k-anonymity", "params": {"k": 2}},
        "then": {"name": "pram", "params": {"columns": "outcome", "retention": 0.9}},
        "seed": 3,
        "metrics": ["loss", "frequency-difference"],
    }
    roles = {"name": "identifier", "age_band": "quasi-identifier", "sex": "quasi-identifier"}
    project.write_text(
        json.dumps(
            {
                "veil_project": 1,
                "data": {"path": small_csv.name, "sha256": sha256(small_csv), "roles": roles},
                "runs": [run],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "project-out"
    result = veil("run", project, "--out", out)
    assert result.code == 0, result.err
    manifest = read_manifest(out)
    assert manifest["method"]["then"]["name"] == "pram"
    assert set(manifest["metrics"]) == {"loss", "frequency-difference"}
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Then</th>" in report and "retention = 0.9" in report and "perturbing the method" in report


def test_then_names_a_method_that_perturbs(veil, small_csv, tmp_path):
    base = ["run", "--data", small_csv, *QUASI, "--method", "global-recoding", "--model", "k-anonymity:k=2"]
    assert_bad_input(veil(*base, "--then", "mondrian", "--out", tmp_path / "a"))
    # the table is 2-diverse in outcome on age_band and sex as it is, so the recoding keeps both; PRAM
    # publishing every outcome as 0 leaves one outcome per group, and l-diversity, judged on the final
    # release, refuses it
    matrix = tmp_path / "all-0.csv"
    matrix.write_text(",0,1\n0,1,0\n1,1,0\n", encoding="utf-8")
    failed = veil(
        *base, "--sensitive", "outcome", "--model", "l-diversity:l=2", "--out", tmp_path / "b",
        "--then", f"pram:columns=outcome,matrix={matrix}",
    )  # fmt: skip
    assert failed.code == 1 and "the release of 'global-recoding' then 'pram' fails" in failed.err, failed.err
    assert "l-diversity" in failed.err and not (tmp_path / "b").exists()
