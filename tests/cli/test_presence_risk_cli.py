"""The presence, map and risk models through the real command line: ``veil run`` with a population
beside the data or marking it, ``veil verify`` of the manifest and of the bare file, the new names
under global recoding and Mondrian, and one-line refusals with nothing written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from .helpers import all_files, assert_bad_input


@pytest.fixture
def files(tmp_path):
    """A population of 400 people; a 30 % sample of it, also marked in the population by a column."""
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
    pop.to_csv(tmp_path / "pop_marked.csv", index=False)
    pop.drop(columns="in_study").to_csv(tmp_path / "pop.csv", index=False)
    pop[pop.in_study == 1].drop(columns="in_study").to_csv(tmp_path / "sample.csv", index=False)
    (tmp_path / "town.csv").write_text("a;north;*\nb;north;*\nc;south;*\nd;south;*\n")
    (tmp_path / "age.csv").write_text(
        "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'20-49' if a < 50 else '50-79'};*\n" for a in range(20, 80))
    )
    return tmp_path


def _hier(files):
    return ["--hierarchy", f"town={files / 'town.csv'}", "--hierarchy", f"age={files / 'age.csv'}"]


def _run(veil, files, model, method="global-recoding:suppression=0.05", out="out", *extra):
    return veil(
        "run",
        "--data",
        files / "sample.csv",
        "--quasi",
        "town,age,sex",
        *_hier(files),
        "--model",
        model,
        "--method",
        method,
        "--out",
        files / out,
        "--no-report",
        *extra,
    )


def test_delta_presence_with_a_population_is_run_recorded_and_verified(veil, files):
    result = _run(
        veil,
        files,
        "delta-presence:dmin=0.1,dmax=0.5",
        "global-recoding:suppression=0.05",
        "out",
        "--population",
        files / "pop.csv",
    )
    assert result.code == 0, result.err
    manifest = json.loads((files / "out" / "manifest.json").read_text())
    assert manifest["population"]["rows"] == 400 and manifest["population"]["path"].endswith("pop.csv")
    assert manifest["verdict"]["holds"] and "δ-presence" in manifest["verdict"]["message"]
    assert veil("verify", files / "out").code == 0
    bare = (
        "verify",
        files / "out" / "release.csv",
        "--quasi",
        "town,age,sex",
        "--population",
        files / "pop.csv",
        *_hier(files),
    )
    assert veil(*bare, "--model", "delta-presence:dmin=0.1,dmax=0.5").code == 0
    tight = veil(*bare, "--model", "delta-presence:dmin=0.1,dmax=0.2")
    assert tight.code == 1 and "FAILED" in tight.out
    # the population changed after the export: the verdict no longer stands
    (files / "pop.csv").write_text((files / "pop.csv").read_text() + "a,30,F,flu\n")
    changed = veil("verify", files / "out")
    assert changed.code == 1 and "population" in changed.out and "changed" in changed.out


def test_the_data_marked_in_the_population_with_k_map_and_mondrian(veil, files):
    result = veil(
        "run",
        "--population",
        files / "pop_marked.csv",
        "--subset-column",
        "in_study",
        "--quasi",
        "town,age,sex",
        *_hier(files),
        "--model",
        "k-map:k=8",
        "--model",
        "delta-presence:dmin=0.05,dmax=0.6",
        "--method",
        "mondrian",
        "--out",
        files / "out",
        "--no-report",
    )
    assert result.code == 0, result.err
    written = pd.read_csv(files / "out" / "release.csv")
    assert len(written) == int(pd.read_csv(files / "pop_marked.csv")["in_study"].sum())
    assert "in_study" not in written.columns
    assert veil("verify", files / "out").code == 0


def test_the_report_of_a_subset_column_export_reads_the_marked_records_again(veil, files):
    """The input of a ``--subset-column`` export is the population file's marked records: read again
    by ``veil report``, its columns are the recorded ones and the "before" figures are recomputed."""
    result = veil(
        "run",
        "--population",
        files / "pop_marked.csv",
        "--subset-column",
        "in_study",
        "--quasi",
        "town,age,sex",
        *_hier(files),
        "--model",
        "k-map:k=8",
        "--method",
        "global-recoding",
        "--out",
        files / "out",
    )
    assert result.code == 0, result.err
    assert veil("report", files / "out").code == 0
    html = (files / "out" / "report.html").read_text()
    assert "columns differ" not in html and "The input file matches its fingerprint" in html
    assert "“before” figures are left out" not in html and "no “before” figures" not in html


@pytest.mark.parametrize(
    "model",
    [
        "beta-likeness:beta=1.5",
        "beta-likeness:beta=2,variant=enhanced",
        "highest-risk:threshold=0.2",
        "average-risk:threshold=0.1",
        "k-map:k=20,sample_fraction=0.3",
        "population-uniqueness:threshold=0.02,estimator=dankar,sample_fraction=0.3",
    ],
)
@pytest.mark.parametrize("method", ["global-recoding:suppression=0.1", "mondrian"])
def test_each_model_by_its_name_runs_and_verifies(veil, files, model, method):
    extra = ("--sensitive", "dx", "--release-sensitive", "dx") if model.startswith("beta") else ()
    result = _run(veil, files, model, method, "out", *extra)
    assert result.code == 0, result.err
    name = model.split(":")[0]
    assert name in result.err and "holds" in result.err
    assert veil("verify", files / "out").code == 0
    quasi = ["--quasi", "town,age,sex"] + (["--sensitive", "dx"] if model.startswith("beta") else [])
    assert veil("verify", files / "out" / "release.csv", "--model", model, *quasi).code == 0


def test_global_recoding_satisfies_each_risk_model_on_this_data(veil, files):
    for model in (
        "highest-risk:threshold=0.2",
        "average-risk:threshold=0.1",
        "k-map:k=20,sample_fraction=0.3",
        "beta-likeness:beta=1",
    ):
        extra = ("--sensitive", "dx", "--release-sensitive", "dx") if model.startswith("beta") else ()
        out = model.split(":")[0]
        result = _run(veil, files, model, "global-recoding:suppression=0.1", out, *extra)
        assert result.code == 0, (model, result.err)


@pytest.mark.parametrize(
    "argv, words",
    [
        (("--model", "delta-presence:dmin=0.6,dmax=0.2", "--population", "{pop}"), "dmin = 0.6 is above dmax = 0.2"),
        (("--model", "delta-presence:dmax=0.5"), "needs the population"),
        (("--model", "k-map:k=401", "--population", "{pop}"), "cannot hold on this data"),
        (("--model", "k-map:k=2000,sample_fraction=0.1"), "cannot hold on this data"),  # 117 records stand for 1,170
        (("--model", "k-map:k=5", "--subset-column", "in_study"), "--subset-column marks"),
        (("--model", "k-map:k=5", "--population", "{files}/nowhere.csv"), "nowhere.csv"),
        (("--model", "k-map:k=5,sample_fraction=0"), "'sample_fraction' must be > 0"),
        (
            (
                "--model",
                "beta-likeness:beta=1",
                "--sensitive",
                "dx",
                "--release-sensitive",
                "dx",
                "--population",
                "{files}/small.csv",
            ),
            "smaller than the data",
        ),
        (("--model", "population-uniqueness:estimator=best"), "'estimator' must be one of"),
    ],
)
def test_refusals_are_one_line_and_write_nothing(veil, files, argv, words):
    pd.read_csv(files / "pop.csv").head(10).to_csv(files / "small.csv", index=False)
    argv = [str(a).format(pop=files / "pop.csv", files=files) for a in argv]
    result = veil(
        "run",
        "--data",
        files / "sample.csv",
        "--quasi",
        "town,age,sex",
        *_hier(files),
        "--method",
        "global-recoding",
        "--out",
        files / "out",
        *argv,
    )
    assert_bad_input(result)
    assert words in result.err, result.err
    assert not (files / "out").exists() or not all_files(files / "out")


def test_the_report_gives_journalist_and_marketer_risk_against_the_population(veil, files):
    result = veil(
        "run",
        "--data",
        files / "sample.csv",
        "--quasi",
        "town,age,sex",
        *_hier(files),
        "--model",
        "k-map:k=10",
        "--method",
        "global-recoding",
        "--population",
        files / "pop.csv",
        "--out",
        files / "out",
    )
    assert result.code == 0, result.err
    after = json.loads((files / "out" / "manifest.json").read_text())["risk"]["after"]
    assert after["journalist_max"] <= 1 / 10 < after["max"]  # k-map: every group matches 10 people or more
    assert after["marketer"] < after["avg"]
    assert "against the population of 400 records" in (files / "out" / "report.html").read_text()
    assert veil("report", files / "out").code == 0
    again = json.loads((files / "out" / "manifest.json").read_text())["risk"]["after"]
    assert again["journalist_max"] == pytest.approx(after["journalist_max"])


def test_an_export_never_writes_over_the_population(veil, files):
    (files / "out").mkdir()
    pop = files / "out" / "release.csv"
    pop.write_bytes((files / "pop.csv").read_bytes())
    before = pop.read_bytes()
    result = _run(veil, files, "k-map:k=8", "global-recoding", "out", "--population", pop)
    assert_bad_input(result)
    assert pop.read_bytes() == before


def test_a_bare_file_with_hierarchy_labels_needs_its_hierarchies(veil, files):
    assert (
        _run(
            veil,
            files,
            "delta-presence:dmin=0.1,dmax=0.5",
            "global-recoding:suppression=0.05",
            "out",
            "--population",
            files / "pop.csv",
        ).code
        == 0
    )
    result = veil(
        "verify",
        files / "out" / "release.csv",
        "--quasi",
        "town,age,sex",
        "--population",
        files / "pop.csv",
        "--model",
        "delta-presence:dmin=0.1,dmax=0.5",
    )
    assert_bad_input(result)
    assert "matches no record of the population" in result.err and "--hierarchy" in result.err
