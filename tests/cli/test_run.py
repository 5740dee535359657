"""`veil run`: the release and its manifest, shuffling and seeds, and refusing a release that fails
its privacy model."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import stat
from pathlib import Path

import pytest

from veil.engine import (
    ExportOptions,
    PluginCall,
    PrivacyCheckFailed,
    RunSpec,
    demo_path,
    execute,
    load_demo,
    make_registry,
    write_release,
)
from veil.engine import __version__
from veil.cli import main

from .helpers import (
    SMALL_CSV,
    SMALL_QUASI,
    SMALL_ROWS,
    all_files,
    assert_bad_input,
    demo_columns,
    read_manifest,
    sha256,
)


def read_rows(path: Path) -> tuple[list[str], list[tuple[str, ...]]]:
    """Header and rows of a CSV file, every cell as the text it is written as."""
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    return rows[0], [tuple(r) for r in rows[1:]]


def input_rows_as(path: Path, columns: list[str]) -> list[tuple[str, ...]]:
    """The rows of the input file restricted to (and ordered as) ``columns``."""
    header, rows = read_rows(path)
    idx = [header.index(c) for c in columns]
    return [tuple(r[i] for i in idx) for r in rows]


@pytest.fixture(scope="module")
def demo_release(tmp_path_factory) -> Path:
    """One run of all-features on the demo with seed 7 (no privacy model)."""
    out = tmp_path_factory.mktemp("demo") / "out"
    assert (
        main(
            [
                "run",
                "--demo",
                "--release-sensitive",
                "diagnosis_group",
                "--method",
                "all-features",
                "--metrics",
                "sfc",
                "--seed",
                "7",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return out


def test_demo_run_prints_the_folder_and_warns_no_privacy_claim(veil, tmp_path):
    out = tmp_path / "out"
    result = veil(
        "run",
        "--demo",
        "--release-sensitive",
        "diagnosis_group",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    assert result.out.strip() == str(out)
    assert "no privacy" in result.err
    assert sorted(p.name for p in all_files(out)) == ["manifest.json", "release.csv", "report.html", "report.pdf"]


def test_manifest_describes_the_run(demo_release, demo_schema):
    m = read_manifest(demo_release)
    assert m["veil_version"] == __version__
    assert m["method"] == {"name": "all-features", "params": {}}
    assert m["privacy_model"]["name"] is None
    assert m["privacy_model"]["params"] == {}
    assert "no privacy claim" in m["privacy_model"]["note"]
    assert m["seed"] == 7
    assert {k: m["input"][k] for k in ("path", "sha256", "rows")} == {
        "path": str(demo_path()),
        "sha256": sha256(demo_path()),
        "rows": 5000,
    }
    assert m["input"]["read"]["demo"] is True  # how to read it again, for `veil report`
    assert [c["name"] for c in m["input"]["schema"]] == [c["name"] for c in demo_schema["columns"]]
    released = demo_columns(demo_schema, "quasi-identifier", "sensitive", "insensitive", "target")
    assert m["output"]["path"] == "release.csv"
    assert m["output"]["rows"] == 5000
    assert m["output"]["columns"] == released
    assert m["verdict"]["holds"] is None and m["verdict"]["value"] is None
    features = [c for c in released if c != "readmitted_30d"]
    assert m["selected_features"] == features
    assert m["metrics"] == {"sfc": float(len(features))}


def test_output_sha256_is_the_files(demo_release):
    m = read_manifest(demo_release)
    assert m["output"]["sha256"] == sha256(demo_release / "release.csv")


def test_identifiers_never_reach_the_release(demo_release, demo_schema):
    identifiers = demo_columns(demo_schema, "identifier")
    assert identifiers == ["patient_name", "mrn"]
    text = (demo_release / "release.csv").read_text(encoding="utf-8")
    header, rows = read_rows(demo_release / "release.csv")
    assert not set(identifiers) & set(header)
    _, originals = read_rows(demo_path())
    first = originals[0]
    assert first[1].startswith("MRN-") and first[1] not in text and first[0] not in text


def test_rows_are_shuffled_but_the_same_records(demo_release):
    header, rows = read_rows(demo_release / "release.csv")
    original = input_rows_as(demo_path(), header)
    assert rows != original
    assert sorted(rows) == sorted(original)


def test_no_shuffle_keeps_the_input_order(veil, tmp_path):
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-shuffle",
            "--out",
            out,
        ).code
        == 0
    )
    header, rows = read_rows(out / "release.csv")
    assert rows == input_rows_as(demo_path(), header)
    assert read_manifest(out)["shuffled"] is False


def test_same_seed_same_bytes_other_seed_other_order(veil, tmp_path, demo_release):
    again, other = tmp_path / "again", tmp_path / "other"
    for out, seed in ((again, 7), (other, 8)):
        assert (
            veil(
                "run",
                "--demo",
                "--release-sensitive",
                "diagnosis_group",
                "--method",
                "all-features",
                "--metrics",
                "sfc",
                "--seed",
                seed,
                "--out",
                out,
            ).code
            == 0
        )
    assert (again / "release.csv").read_bytes() == (demo_release / "release.csv").read_bytes()
    _, first = read_rows(demo_release / "release.csv")
    _, second = read_rows(other / "release.csv")
    assert first != second and sorted(first) == sorted(second)
    assert read_manifest(other)["output"]["sha256"] != read_manifest(demo_release)["output"]["sha256"]


def test_failing_model_writes_nothing(veil, tmp_path):
    out = tmp_path / "out"
    result = veil(
        "run",
        "--demo",
        "--release-sensitive",
        "diagnosis_group",
        "--method",
        "all-features",
        "--model",
        "k-anonymity:k=5",
        "--metrics",
        "sfc",
        "--out",
        out,
    )
    assert result.code == 1
    assert "privacy check failed" in result.err and "k-anonymity" in result.err
    assert len(result.err.splitlines()) == 1
    assert result.out == ""
    assert not (out / "release.csv").exists()
    assert all_files(out) == []


def test_failing_model_keeps_an_earlier_release(veil, tmp_path):
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--out",
            out,
        ).code
        == 0
    )
    before = {p.name: sha256(p) for p in all_files(out)}
    assert (
        veil(
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--model",
            "k-anonymity:k=5",
            "--metrics",
            "sfc",
            "--seed",
            1,
            "--out",
            out,
        ).code
        == 1
    )
    assert {p.name: sha256(p) for p in all_files(out)} == before


def test_release_failing_its_recheck_leaves_no_file(tmp_path):
    """write_release re-checks the written file; a failure there leaves neither the release nor a
    temporary file behind (the CLI path stops earlier, in execute)."""
    registry = make_registry()
    data = load_demo()
    ran = execute(registry, data, RunSpec(PluginCall("all-features"), seed=0))
    failing = RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 5}), 0)
    result = dataclasses.replace(ran, spec=failing)
    out = tmp_path / "out"
    with pytest.raises(PrivacyCheckFailed):
        write_release(registry, result, out, ExportOptions("csv"))
    assert all_files(out) == []


def test_model_that_holds_releases_and_verifies(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    before = sha256(small_csv)
    result = veil(
        "run",
        "--data",
        small_csv,
        "--identifier",
        "name",
        "--quasi",
        "age_band",
        "--quasi",
        "sex",
        "--target",
        "outcome",
        "--model",
        "k-anonymity:k=2",
        "--method",
        "all-features",
        "--metrics",
        "sfc,min-group-size",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    assert sha256(small_csv) == before
    m = read_manifest(out)
    assert m["privacy_model"] == {"name": "k-anonymity", "params": {"k": 2}}
    assert m["verdict"]["holds"] is True and m["verdict"]["value"] == 2
    assert m["roles"]["quasi_identifiers"] == SMALL_QUASI
    assert m["metrics"]["min-group-size"] == 2.0
    assert m["output"]["rows"] == SMALL_ROWS and "name" not in m["output"]["columns"]
    verified = veil("verify", out / "manifest.json")
    assert verified.code == 0, verified.err
    assert verified.out.startswith("OK")
    assert veil("verify", out).code == 0  # the folder works too


def _release_of(veil, small_csv, out: Path) -> Path:
    assert (
        veil(
            "run",
            "--data",
            small_csv,
            "--identifier",
            "name",
            "--quasi",
            "age_band",
            "--quasi",
            "sex",
            "--model",
            "k-anonymity:k=2",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--out",
            out,
        ).code
        == 0
    )
    return out / "release.csv"


def test_verify_fails_after_a_cell_changes(veil, small_csv, tmp_path):
    release = _release_of(veil, small_csv, tmp_path / "out")
    lines = release.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    cells = lines[1].rstrip("\n").split(",")
    col = header.index("smoker")
    cells[col] = "1" if cells[col] == "0" else "0"  # a change that keeps the release 2-anonymous
    lines[1] = ",".join(cells) + "\n"
    release.write_text("".join(lines), encoding="utf-8")
    result = veil("verify", tmp_path / "out" / "manifest.json")
    assert result.code == 1
    assert result.out.startswith("FAILED") and "changed" in result.out


def test_verify_fails_after_a_row_is_deleted(veil, small_csv, tmp_path):
    release = _release_of(veil, small_csv, tmp_path / "out")
    lines = release.read_text(encoding="utf-8").splitlines(keepends=True)
    release.write_text("".join(lines[:-1]), encoding="utf-8")
    assert veil("verify", tmp_path / "out").code == 1


def test_role_flags_take_comma_lists_like_verify(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    result = veil(
        "run",
        "--data",
        small_csv,
        "--identifier",
        "name",
        "--quasi",
        "age_band,sex",
        "--model",
        "k-anonymity:k=2",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    assert read_manifest(out)["roles"]["quasi_identifiers"] == SMALL_QUASI
    failing = veil(
        "run",
        "--data",
        small_csv,
        "--identifier",
        "name",
        "--quasi",
        "age_band,sex",
        "--quasi",
        "postcode",
        "--model",
        "k-anonymity:k=2",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--out",
        tmp_path / "other",
    )
    assert failing.code == 1


def test_input_and_output_folder_may_be_the_same(veil, small_csv):
    """Writing release.csv beside people.csv must leave people.csv alone."""
    before = sha256(small_csv)
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
            "--out",
            small_csv.parent,
        ).code
        == 0
    )
    assert sha256(small_csv) == before


def test_the_input_file_is_never_the_output(veil, write_file, importers):
    """An input named release.csv in the output folder is refused, not overwritten."""
    data = write_file("release.csv", SMALL_CSV)
    before = sha256(data)
    result = veil(
        "run",
        "--data",
        data,
        "--identifier",
        "name",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--out",
        data.parent,
    )
    assert result.code == 2 and "input" in result.err
    assert sha256(data) == before


def test_a_table_without_identifiers_keeps_every_column(veil, write_file, importers, tmp_path):
    data = write_file("plain.csv", "a,b,c\n1,x,0\n2,y,1\n")
    out = tmp_path / "out"
    assert (
        veil("run", "--data", data, "--method", "all-features", "--metrics", "sfc", "--no-shuffle", "--out", out).code
        == 0
    )
    assert read_rows(out / "release.csv") == (["a", "b", "c"], [("1", "x", "0"), ("2", "y", "1")])


def test_quotes_commas_newlines_and_unicode_round_trip(veil, write_file, importers, tmp_path):
    data = write_file(
        "quoted.csv",
        'city,note,q\n"Zürich, CH","line1\nline2",a\n"Zürich, CH","x""y",a\nKöln,plain,b\nKöln,-5 units,b\n',
    )
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--data",
            data,
            "--quasi",
            "city",
            "--model",
            "k-anonymity:k=2",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-shuffle",
            "--out",
            out,
        ).code
        == 0
    )
    header, rows = read_rows(out / "release.csv")
    assert header == ["city", "note", "q"]
    assert rows == [
        ("Zürich, CH", "line1\nline2", "a"),
        ("Zürich, CH", 'x"y', "a"),
        ("Köln", "plain", "b"),
        ("Köln", "'-5 units", "b"),
    ]  # a leading minus is escaped for spreadsheets
    assert veil("verify", out).code == 0


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_release_files_honour_the_umask(veil, tmp_path):
    out = tmp_path / "out"
    previous = os.umask(0o022)
    try:
        assert (
            veil(
                "run",
                "--demo",
                "--release-sensitive",
                "diagnosis_group",
                "--method",
                "all-features",
                "--metrics",
                "sfc",
                "--out",
                out,
            ).code
            == 0
        )
    finally:
        os.umask(previous)
    for name in ("release.csv", "manifest.json", "report.html", "report.pdf"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name


def test_a_method_under_a_model_it_cannot_satisfy_is_refused(veil, tmp_path):
    """Maximal's frequent itemsets satisfy a containment judgement (k-ac), not k-anonymity's groups."""
    result = veil("run", "--demo", "--method", "maximal", "--model", "k-anonymity:k=5", "--out", tmp_path / "out")
    assert_bad_input(result)
    assert "method 'maximal' works under k-ac" in result.err and "not k-anonymity" in result.err, result.err
    assert not (tmp_path / "out").exists()


def test_the_report_says_which_classifier_protocol_it_used(tmp_path, small_csv):
    """A release's report cross-validates once with a fixed C by default, tunes C
    per fold when asked, and says which."""
    import json

    from veil.cli import main

    for flags, words in (
        ([], "C = 1, tolerance 0.001), one stratified 5-fold cross-validation"),
        (["--tuned-report"], "C tuned per fold on an inner 75/25 split"),
    ):
        out = tmp_path / ("tuned" if flags else "fixed")
        assert (
            main(
                [
                    "run",
                    "--data",
                    str(small_csv),
                    "--identifier",
                    "name",
                    "--quasi",
                    "age_band,sex",
                    "--target",
                    "outcome",
                    "--method",
                    "all-features",
                    "--model",
                    "k-anonymity:k=2",
                    "--metrics",
                    "sfc",
                    *flags,
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert words in manifest["utility"]["classifier"]
        assert words in (out / "report.html").read_text(encoding="utf-8")
