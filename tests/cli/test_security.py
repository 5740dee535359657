"""What the security audit found, through the real command line: files written only as regular files
of the user's own folders, the signing key's public half, what ``veil verify`` takes in."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .helpers import SMALL_CSV
from .helpers import sha256 as sha256_of
from .test_audit_corpus import ROLES, changed, snapshot

KEY, PUB = "release-signing-key.pem", "release-signing-key.pub"


def _export(veil, folder: Path, out: str = "out", *extra):
    return veil(
        "run",
        "--data",
        folder / "in.csv",
        *ROLES,
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--model",
        "k-anonymity:k=2",
        "--no-report",
        *extra,
        "--out",
        folder / out,
    )


def test_a_link_planted_in_the_settings_folder_is_never_written_through(tmp_path, veil, monkeypatch):
    """The public key's temporary file is made new: a link planted where an earlier Veil put it (or any
    other name) leads nowhere, and the file outside keeps its content."""
    settings = tmp_path / "settings"
    settings.mkdir(mode=0o700)
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(settings))
    (tmp_path / "victim.txt").write_bytes(b"not Veil's to write\n")
    (settings / (PUB + ".tmp")).symlink_to(tmp_path / "victim.txt")
    (tmp_path / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    before = snapshot(tmp_path)
    result = _export(veil, tmp_path)
    assert result.code == 0, result.err
    assert sorted(changed(before, snapshot(tmp_path))) == [
        Path("out"),
        Path("out/manifest.json"),
        Path("out/release.csv"),
        Path("settings") / KEY,
        Path("settings") / PUB,
    ]
    assert (tmp_path / "victim.txt").read_bytes() == b"not Veil's to write\n"
    assert stat.S_ISREG(os.lstat(settings / PUB).st_mode)
    given = veil("verify", tmp_path / "out", "--public-key", settings / PUB)
    assert given.code == 0 and "signed by the given key" in given.out, given.out


def test_a_deleted_public_key_is_made_again_from_the_signing_key(tmp_path, veil, monkeypatch):
    settings = tmp_path / "settings"
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(settings))
    (tmp_path / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    assert _export(veil, tmp_path, "first").code == 0
    first = (settings / PUB).read_bytes()
    (settings / PUB).unlink()
    assert _export(veil, tmp_path, "second").code == 0
    assert (settings / PUB).read_bytes() == first  # the same half, of the same key
    for out in ("first", "second"):
        given = veil("verify", tmp_path / out, "--public-key", settings / PUB)
        assert given.code == 0 and "signed by the given key" in given.out, given.out


def test_an_output_folder_with_the_sticky_bit_is_used(tmp_path, veil):
    """A folder anyone may write to is refused, unless its sticky bit keeps others from replacing files
    they do not own (as /tmp does)."""
    (tmp_path / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    assert _export(veil, tmp_path, "shared/out").code == 0
    hierarchy = veil(
        "hierarchy", tmp_path / "in.csv", "--column", "age_band", "--build", "masking", "--out", shared / "h.csv"
    )
    assert hierarchy.code == 0, hierarchy.err
    assert stat.S_ISREG(os.lstat(shared / "h.csv").st_mode)


def test_a_generated_hierarchy_escapes_formulas_and_reads_back(tmp_path, veil):
    """Cells a spreadsheet would run (``=HYPERLINK(…)``, ``@SUM(…)``, ``+…``, ``-…``) are written after a
    ``'``, as every export writes them, and the file still generalises the data it was built from."""
    import csv

    values = ['=HYPERLINK("http://x")', "@SUM(1+1)", "+44 1", "-3", "'quoted", "plain"]
    with open(tmp_path / "in.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["code", "sex"], *([v, "FM"[i % 2]] for i, v in enumerate(values * 2))])
    out = tmp_path / "h.csv"
    result = veil("hierarchy", tmp_path / "in.csv", "--column", "code", "--build", "masking", "--out", out)
    assert result.code == 0, result.err
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter=";"))
    assert not [c for row in rows for c in row if c.startswith(("=", "+", "-", "@"))], rows
    assert {row[0] for row in rows} == {"'" + v if v[0] in "=+-@'" else v for v in values}
    run = veil(
        "run",
        "--data",
        tmp_path / "in.csv",
        "--quasi",
        "code",
        "--hierarchy",
        f"code={out}",
        "--method",
        "global-recoding",
        "--model",
        "k-anonymity:k=2",
        "--no-report",
        "--out",
        tmp_path / "out",
    )
    assert run.code == 0, run.err
    assert veil("verify", tmp_path / "out").code == 0


def test_a_recipient_can_require_a_signature(tmp_path, veil, monkeypatch):
    """Without --require-signature an unsigned or foreign-signed manifest passes, said to be so; with it,
    only this workstation's key or the given one passes (exit 1 otherwise)."""
    import json

    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(tmp_path / "maker"))
    (tmp_path / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    assert _export(veil, tmp_path).code == 0
    out = tmp_path / "out"
    assert veil("verify", out, "--require-signature").code == 0  # the maker's own key

    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(tmp_path / "recipient"))  # another workstation
    assert veil("verify", out).code == 0
    foreign = veil("verify", out, "--require-signature")
    assert foreign.code == 1 and "not this workstation's" in foreign.out, foreign.out
    given = veil("verify", out, "--require-signature", "--public-key", tmp_path / "maker" / PUB)
    assert given.code == 0 and "signed by the given key" in given.out

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["signature"], manifest["signed_by"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    unsigned = veil("verify", out)
    assert unsigned.code == 0 and "the manifest is not signed" in unsigned.out
    required = veil("verify", out, "--require-signature")
    assert required.code == 1 and "--require-signature asks for a signature" in required.out, required.out
    bare = veil("verify", out / "release.csv", "--model", "k-anonymity:k=2", "--require-signature")
    assert bare.code == 2 and "a bare file has none" in bare.err


def test_an_unknown_command_never_opens_the_desktop(tmp_path, veil_process):
    """``veil riskk --help`` (a command Veil does not have, help asked) and ``veil riskk`` (a bare word
    that names no file) get the command line's one-line answer, not a window opening a file named riskk."""
    for argv in (("riskk", "--help"), ("riskk",), ("verify", "--help")):
        result = veil_process(*argv)
        if argv[0] == "verify":
            assert result.code == 0 and "--require-signature" in result.out, result.err
            continue
        assert result.code == 2 and "invalid choice: 'riskk'" in result.err, (argv, result.code, result.err)
        assert len(result.err.splitlines()) == 1


def test_a_report_never_reads_the_input_an_unsigned_manifest_names(tmp_path, veil):
    """An unsigned manifest (or one another key signed) may name any file as its input: ``veil report``
    leaves it unread, says so on stderr and in the report, and leaves out the "before" figures."""
    import json

    (tmp_path / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    assert _export(veil, tmp_path).code == 0
    out = tmp_path / "out"
    secret = tmp_path / "secret.csv"
    secret.write_text("name,age_band,sex,postcode,smoker,outcome\n" + "Zed,90-99,M,ZZ9,1,1\n" * 3, encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["signature"], manifest["signed_by"]
    manifest["input"]["path"] = str(secret)
    manifest["input"]["sha256"] = sha256_of(secret)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = veil("report", out, "--no-utility")
    assert result.code == 0, result.err
    assert result.err.startswith("note: The manifest is not signed by this workstation's key"), result.err
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "input file was not read: the manifest is not signed by this workstation&#x27;s key" in html
    assert "90-99" not in html and "ZZ9" not in html


def test_the_report_of_noisy_counts_says_the_records_are_not_the_inputs(tmp_path, veil):
    """A differentially private release drawing noisy counts holds another number of records than its
    input; the report says so, with both numbers as the manifest records them."""
    import json

    out = tmp_path / "out"
    result = veil("run", "--demo", "--method", "laplace-dp-fs", "--release-sensitive", "diagnosis_group", "--out", out)
    assert result.code == 0, result.err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    rows_in, rows_out = manifest["input"]["rows"], manifest["output"]["rows"]
    assert rows_in != rows_out
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"The release holds {rows_out:,} records made from {rows_in:,}: the mechanism draws noisy counts" in html


def test_a_run_says_how_an_item_set_file_was_read(tmp_path, veil):
    """Equal lines holding a negative id are a table, not item sets: ``veil run`` says so, as
    ``veil inspect`` does, rather than reading it one way without a word."""
    (tmp_path / "in.dat").write_bytes(b"1 -2 3\n4 5 6\n1 -2 3\n4 5 6\n")
    result = veil(
        "run",
        "--data",
        tmp_path / "in.dat",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--no-report",
        "--out",
        tmp_path / "out",
    )
    assert result.code == 0, result.err
    said = f"note: {tmp_path / 'in.dat'} was read as a table of 3 columns: line 1 holds '-2', a negative number"
    assert result.err.startswith(said), result.err


def test_intervals_wider_than_64_bits_over_whole_numbers(tmp_path, veil):
    """A width of 1e308 over whole numbers puts every value in one interval (it overflowed 64 bits)."""
    (tmp_path / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    out = tmp_path / "h.csv"
    result = veil(
        "hierarchy", tmp_path / "in.csv", "--column", "smoker", "--build", "intervals:width=1e308", "--out", out
    )
    assert result.code == 0, result.err
    assert out.read_text(encoding="utf-8").splitlines() == ["0;*", "1;*"]
