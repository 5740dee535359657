"""The real `veil` process: exit codes and output a script sees, and never a traceback."""

from __future__ import annotations

import pytest

from .helpers import all_files, assert_bad_input, read_manifest, sha256


def test_run_and_verify_as_a_process(veil_process, small_csv, tmp_path):
    out = tmp_path / "out"
    result = veil_process(
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
    assert result.out.strip() == str(out)
    # no progress bar without a terminal and no warnings: one line saying what was released
    assert result.err == "released 12 records; k-anonymity holds: the smallest group has 2 records (k = 2); 6 groups\n"
    assert read_manifest(out)["verdict"]["holds"] is True
    verified = veil_process("verify", out, script=True)
    assert verified.code == 0 and verified.out.startswith("OK")


def test_privacy_failure_as_a_process(veil_process, tmp_path):
    out = tmp_path / "out"
    result = veil_process(
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
    assert len(result.err.splitlines()) == 1 and "Traceback" not in result.err
    assert all_files(out) == []


@pytest.mark.parametrize("script", [False, True], ids=["python -m veil.desktop", "veil script"])
@pytest.mark.parametrize(
    "argv",
    [
        ("run", "--demo", "--release-sensitive", "diagnosis_group", "--method", "all-features", "--frobnicate"),
        ("run", "--demo", "--method", "all-features:foo=1", "--out", "out"),
        (
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--model",
            "k-anonymity:k=abc",
            "--out",
            "out",
        ),
        ("verify", "nowhere.csv", "--model", "k-anonymity:k=2"),
        ("study", "nowhere.json", "--out", "out"),
    ],
    ids=["unknown flag", "unknown parameter", "wrong type", "verify missing file", "missing study"],
)
def test_bad_input_as_a_process(veil_process, argv, script):
    assert_bad_input(veil_process(*argv, script=script))


def test_bad_file_as_a_process(veil_process, write_file, importers):
    data = write_file("ragged.csv", b"a,b,c\n1,2,3\n4,5\n")
    before = sha256(data)
    assert_bad_input(veil_process("run", "--data", data, "--method", "all-features", "--out", "out"))
    assert sha256(data) == before


def test_out_below_a_file_as_a_process(veil_process, write_file):
    blocker = write_file("blocker", "x")
    assert_bad_input(
        veil_process(
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--out",
            blocker / "sub",
        )
    )


def test_version_and_help(veil_process):
    version = veil_process("--version", script=True)
    assert version.code == 0 and version.out.startswith("veil ")
    helped = veil_process("run", "--help")
    assert helped.code == 0 and "--model" in helped.out and helped.err == ""


def test_report_as_a_process(veil_process, small_csv, tmp_path):
    out = tmp_path / "out"
    assert (
        veil_process(
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
            "--no-report",
            "--out",
            out,
        ).code
        == 0
    )
    result = veil_process("report", out, "--no-utility", script=True)
    assert result.code == 0, result.err
    assert result.out.split() == [str(out / "report.html"), str(out / "report.pdf")] and result.err == ""


@pytest.mark.parametrize(
    "argv",
    [
        ("report", "nowhere"),
        ("report", ".", "--risk-threshold", "2"),
        (
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--risk-threshold",
            "x",
            "--out",
            "out",
        ),
    ],
    ids=["no manifest", "threshold above 1", "threshold not a number"],
)
def test_bad_report_input_as_a_process(veil_process, argv):
    assert_bad_input(veil_process(*argv))
