"""`veil verify`: a manifest (its hash, then its privacy model) or a bare file against a model."""

from __future__ import annotations

import json

import pytest

from .helpers import assert_bad_input, sha256

# 2-anonymous on (a, b): every pair occurs twice; c makes each record unique.
BARE = "a,b,c\n1,x,10\n1,x,11\n2,y,12\n2,y,13\n2,z,14\n2,z,15\n"


@pytest.fixture
def bare(write_file):
    return write_file("bare.csv", BARE)


@pytest.mark.parametrize("k, code", [(1, 0), (2, 0), (3, 1)])
def test_bare_file_against_k(veil, bare, k, code):
    before = sha256(bare)
    result = veil("verify", bare, "--model", f"k-anonymity:k={k}", "--quasi", "a,b")
    assert result.code == code, result.err
    assert result.out.startswith("OK" if code == 0 else "FAILED")
    assert sha256(bare) == before


def test_bare_file_quasi_default_is_every_column_but_target_and_sensitive(veil, bare):
    assert veil("verify", bare, "--model", "k-anonymity:k=2").code == 1  # c makes every record unique
    assert veil("verify", bare, "--model", "k-anonymity:k=2", "--target", "c").code == 0
    assert veil("verify", bare, "--model", "k-anonymity:k=2", "--sensitive", "c").code == 0


def test_failure_message_says_how_many_records_fail(veil, bare):
    result = veil("verify", bare, "--model", "k-anonymity:k=2", "--quasi", "a,b,c")
    assert result.code == 1
    assert "6 of 6" in result.out


def test_failure_message_lists_a_few_failing_records_and_why(veil, bare):
    result = veil("verify", bare, "--model", "k-anonymity:k=3", "--quasi", "a,b")
    assert result.code == 1 and len(result.out.splitlines()) == 1
    assert (
        "failing records: row 1 (a=1, b=x: a group of 2), row 2 (a=1, b=x: a group of 2), "
        "row 3 (a=2, b=y: a group of 2) and 3 more"
    ) in result.out


def test_bare_binary_file_against_k_ac_with_a_target(veil, write_file):
    """{a,b} is contained in 2 records, {b} in 3, {a} in 4: k-AC holds for k = 2, not 3 (the target is no feature)."""
    data = write_file("bin.csv", "a,b,y\n1,0,0\n1,0,1\n1,1,0\n1,1,1\n0,1,0\n0,0,1\n")
    assert veil("verify", data, "--model", "k-ac:k=2", "--target", "y").code == 0
    assert veil("verify", data, "--model", "k-ac:k=3", "--target", "y").code == 1


def test_bare_file_in_another_format(veil, write_file):
    data = write_file("bare.tsv", BARE.replace(",", "\t"))
    assert veil("verify", data, "--model", "k-anonymity:k=2", "--quasi", "a,b").code == 0
    odd = write_file("bare.dat", BARE)
    assert_bad_input(veil("verify", odd, "--model", "k-anonymity:k=2", "--quasi", "a,b"))
    assert veil("verify", odd, "--format", "csv", "--model", "k-anonymity:k=2", "--quasi", "a,b").code == 0


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--model", "k-anonymity:k=7"),
        ("--model", "k-anonymity:k=0"),
        ("--model", "k-anonymity:k=two"),
        ("--model", "l-diversity:l=2"),
        ("--model", "k-anonymity:k=2", "--quasi", "a,nope"),
        ("--model", "k-anonymity:k=2", "--target", "nope"),
        ("--model", "k-anonymity:k=2", "--format", "docx"),
        ("--model", "k-anonymity:k=2", "--frobnicate"),
    ],
    ids=[
        "no model",
        "k above rows",
        "k zero",
        "k text",
        "unknown model",
        "unknown quasi",
        "unknown target",
        "unknown format",
        "unknown flag",
    ],
)
def test_bad_bare_verification(veil, bare, extra):
    before = sha256(bare)
    assert_bad_input(veil("verify", bare, *extra))
    assert sha256(bare) == before


def test_missing_bare_file(veil, tmp_path):
    assert_bad_input(veil("verify", tmp_path / "gone.csv", "--model", "k-anonymity:k=2"))


@pytest.mark.parametrize(
    "content",
    ["", "{not json", "[1, 2]", '{"output": {}}', "\ufeff\x00"],
    ids=["empty", "invalid json", "a list", "missing keys", "junk"],
)
def test_bad_manifest(veil, write_file, content):
    manifest = write_file("manifest.json", content)
    assert_bad_input(veil("verify", manifest))
    assert_bad_input(veil("verify", manifest.parent))


def test_manifest_not_found(veil, tmp_path):
    assert_bad_input(veil("verify", tmp_path / "manifest.json"))
    assert_bad_input(veil("verify", tmp_path))  # a folder without a manifest


def test_manifest_with_a_model_flag(veil, write_file):
    manifest = write_file("manifest.json", json.dumps({"output": {}, "privacy_model": {}, "roles": {}}))
    result = veil("verify", manifest, "--model", "k-anonymity:k=2")
    assert_bad_input(result)
    assert "--model" in result.err


def _released(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--data",
            small_csv,
            "--identifier",
            "name",
            "--quasi",
            "age_band,sex",
            "--method",
            "all-features",
            "--model",
            "k-anonymity:k=2",
            "--metrics",
            "sfc",
            "--out",
            out,
        ).code
        == 0
    )
    return out


def test_manifest_whose_release_is_missing(veil, small_csv, tmp_path):
    out = _released(veil, small_csv, tmp_path)
    (out / "release.csv").unlink()
    result = veil("verify", out)
    assert result.code == 1, result  # the export is incomplete: it fails verification
    assert result.out.strip() == "FAILED: incomplete export: release.csv is missing"


def test_release_of_no_privacy_claim_verifies_its_hash_only(veil, small_csv, tmp_path):
    out = tmp_path / "out"
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
            out,
        ).code
        == 0
    )
    result = veil("verify", out)
    assert result.code == 0 and "no privacy claim" in result.out
    with open(out / "release.csv", "a", encoding="utf-8") as f:
        f.write("30-39,M,LS9,1,0\n")
    assert veil("verify", out).code == 1


def test_a_tampered_manifest_model_is_caught(veil, small_csv, tmp_path):
    """Raising k in the manifest makes verify re-check with the stronger model, which fails."""
    out = _released(veil, small_csv, tmp_path)
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    m["privacy_model"]["params"]["k"] = 3
    (out / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    assert veil("verify", out).code == 1


@pytest.mark.parametrize("broken", ["output", "privacy_model"])
def test_manifest_with_wrong_types(veil, write_file, broken):
    release = write_file("release.csv", "a\n1\n")
    manifest = {
        "output": {"path": "release.csv", "format": "csv", "sha256": sha256(release)},
        "privacy_model": {"name": "k-anonymity", "params": {"k": 1}},
        "roles": {"quasi_identifiers": ["a"]},
    }
    manifest[broken] = 1 if broken == "output" else "k-anonymity"
    assert_bad_input(veil("verify", write_file("manifest.json", json.dumps(manifest))))


@pytest.mark.parametrize("k", [2, 3])
def test_the_verdict_is_said_once(veil, bare, k):
    """Never "OK: holds: …" or "FAILED: fails: …"."""
    out = veil("verify", bare, "--model", f"k-anonymity:k={k}", "--quasi", "a,b").out.lower()
    assert "holds:" not in out and "fails:" not in out
