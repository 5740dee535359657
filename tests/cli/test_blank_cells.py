"""A survey with blank cells, from the command line: numeric quasi-identifiers keep their blanks as
numbers, a blank sensitive value never makes a group diverse, the release verifies from its file
and says which rule counted the blanks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from veil.cli import main


def _survey(tmp_path):
    rng = np.random.default_rng(11)
    n = 300
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.integers(10, 200, n).astype(float) * 1000,
            "region": rng.choice(["n", "s", "e", "w"], n),
            "dx": rng.choice(["flu", "hiv", "cold", "asthma"], n),
        }
    )
    for column in frame.columns:
        frame.loc[rng.random(n) < 0.03, column] = np.nan
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _run(path, out, method, models):
    args = ["run", "--data", str(path), "--fill-missing", "value", "--quasi", "age,income,region"]
    args += ["--sensitive", "dx", "--release-sensitive", "dx", "--method", method, "--no-report", "--out", str(out)]
    for model in models:
        args += ["--model", model]
    return main(args)


def test_local_suppression_keeps_numbers_and_judges_known_sensitive_values(tmp_path, capsys):
    path, frame = _survey(tmp_path)
    out = tmp_path / "ls"
    assert _run(path, out, "local-suppression", ["k-anonymity:k=3", "l-diversity:l=2"]) == 0, capsys.readouterr().err
    released = pd.read_csv(out / "release.csv")
    assert pd.api.types.is_float_dtype(released["age"]) and pd.api.types.is_float_dtype(released["income"])
    assert released["dx"].isna().sum() == frame["dx"].isna().sum()  # no placeholder in the sensitive column
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["roles"]["blanks"] == "any-value"
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "any-value rule" in capsys.readouterr().out


def test_microaggregation_on_blanks_releases_numbers(tmp_path, capsys):
    path, frame = _survey(tmp_path)
    out = tmp_path / "ma"
    code = _run(path, out, "microaggregation:categorical=strata", ["k-anonymity:k=3"])
    err = capsys.readouterr().err
    if code == 2:  # a region stratum (with a blank region its own stratum) may hold fewer than k records
        assert "fewer than k" in err
        return
    assert code == 0, err
    released = pd.read_csv(out / "release.csv")
    # the file's records are in another order: the blanks are counted
    assert released["age"].isna().sum() == frame["age"].isna().sum() and released["age"].notna().any()
    assert main(["verify", str(out)]) == 0


def test_the_report_names_the_rule_blanks_were_counted_by(tmp_path, capsys):
    path, _ = _survey(tmp_path)
    out = tmp_path / "report"
    args = ["run", "--data", str(path), "--fill-missing", "value", "--quasi", "age,income,region", "--sensitive"]
    args += ["dx", "--release-sensitive", "dx", "--method", "local-suppression", "--model", "k-anonymity:k=3"]
    assert main(args + ["--out", str(out)]) == 0, capsys.readouterr().err
    assert "counted by the any-value rule" in (out / "report.html").read_text()


def test_global_recoding_and_mondrian_release_the_survey_with_its_blanks_and_verify(tmp_path, capsys):
    """The survey from the command line, blanks left as they are (no fill): global recoding and
    Mondrian under entropy l-diversity and t-closeness; each release verifies from its file and its
    blank sensitive values stay blank."""
    path, frame = _survey(tmp_path)
    quasi = ["--quasi", "age,income,region", "--sensitive", "dx", "--release-sensitive", "dx", "--no-report"]
    strict = [
        "--model",
        "k-anonymity:k=3",
        "--model",
        "l-diversity:l=2,variant=entropy",
        "--model",
        "t-closeness:t=0.4",
    ]
    runs = {
        "global-recoding:suppression=0.1": strict,
        "mondrian": strict,
    }
    for i, (method, models) in enumerate(runs.items()):
        out = tmp_path / f"run{i}"
        code = main(["run", "--data", str(path), *quasi, "--method", method, *models, "--out", str(out)])
        assert code == 0, (method, capsys.readouterr().err)
        released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
        assert "missing" not in set(released["dx"])
        assert (released["dx"] == "").sum() == frame["dx"].isna().sum()  # a blank sensitive value stays blank
        capsys.readouterr()
        assert main(["verify", str(out)]) == 0, method


def test_a_kind_a_column_cannot_take_is_one_line_and_exit_2(tmp_path, capsys):
    path, _ = _survey(tmp_path)
    args = ["run", "--data", str(path), "--quasi", "age,region", "--kind", "region=numeric", "--method", "mondrian"]
    assert main([*args, "--model", "k-anonymity:k=3", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'region' cannot be numeric" in err and "such as" in err
    assert not (tmp_path / "out").exists()
