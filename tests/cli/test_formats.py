"""`veil run --format`: every export format writes release.<ext> that reads back to the same records
and that `veil verify` accepts, both through the manifest and as a bare file."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from veil.cli import main
from veil.engine import make_registry

from .helpers import SMALL_CSV, SMALL_QUASI, all_files, read_manifest

EXTENSIONS = {
    "csv": "csv",
    "tsv": "tsv",
    "xlsx": "xlsx",
    "parquet": "parquet",
    "spmf": "txt",
    "spss": "sav",
    "stata": "dta",
    "sas-xport": "xpt",
    "r": "rds",
    "sqlite": "sqlite",
}


def released_input_rows(columns: list[str]) -> list[tuple[str, ...]]:
    rows = list(csv.DictReader(io.StringIO(SMALL_CSV)))
    return sorted(tuple(r[c] for c in columns) for r in rows)


@pytest.mark.parametrize("fmt", EXTENSIONS)
def test_format_writes_a_release_verify_accepts(veil, small_csv, tmp_path, fmt):
    out = tmp_path / "out"
    result = veil(
        "run",
        "--data",
        small_csv,
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
        "--format",
        fmt,
        "--out",
        out,
    )
    assert result.code == 0, result.err
    release = out / f"release.{EXTENSIONS[fmt]}"
    assert sorted(p.name for p in all_files(out)) == sorted(
        ["manifest.json", release.name, "report.html", "report.pdf"]
    )
    m = read_manifest(out)
    assert m["output"]["path"] == release.name and m["output"]["format"] == fmt
    columns = m["output"]["columns"]
    assert columns == ["age_band", "sex", "postcode", "smoker", "outcome"]
    back = make_registry().exporter(fmt).read_back(release)
    assert list(back.columns) == columns
    assert sorted(tuple(str(v) for v in row) for row in back.itertuples(index=False)) == released_input_rows(columns)
    assert veil("verify", out / "manifest.json").code == 0
    assert veil("verify", release, "--model", "k-anonymity:k=2", "--quasi", ",".join(SMALL_QUASI)).code == 0
    assert veil("verify", release, "--model", "k-anonymity:k=2", "--quasi", "postcode").code == 1


@pytest.mark.parametrize("fmt", ["xlsx", "parquet", "spmf"])
def test_tampered_binary_formats_fail_verification(veil, small_csv, tmp_path, fmt):
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
            "--model",
            "k-anonymity:k=2",
            "--quasi",
            "age_band,sex",
            "--format",
            fmt,
            "--out",
            out,
        ).code
        == 0
    )
    release = out / f"release.{EXTENSIONS[fmt]}"
    data = bytearray(release.read_bytes())
    data[-3] ^= 0x01
    release.write_bytes(bytes(data))
    assert veil("verify", out).code == 1


def test_formula_cells_are_escaped_and_round_trip(veil, write_file, importers, tmp_path):
    data = write_file("formulas.csv", "q,note\na,=1+1\na,@SUM(A1)\nb,+cmd\nb,plain\n")
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--data",
            data,
            "--quasi",
            "q",
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
    text = (out / "release.csv").read_text(encoding="utf-8")
    assert "'=1+1" in text and "'@SUM(A1)" in text and "'+cmd" in text
    assert "\n=" not in text and ",=" not in text
    back = make_registry().exporter("csv").read_back(out / "release.csv")
    assert back["note"].tolist() == ["=1+1", "@SUM(A1)", "+cmd", "plain"]


def test_a_set_valued_release_exports_as_spmf_with_the_items_it_was_read_with(tmp_path, capsys):
    """SPMF is one item set per line; a user who opened an SPMF file gets SPMF back,
    with the same integer items, read again by the SPMF importer, and `veil verify` holds."""
    rng = np.random.default_rng(3)
    lines = [
        " ".join(map(str, sorted(rng.choice(np.arange(1, 30), rng.integers(1, 6), replace=False)))) for _ in range(200)
    ]
    data = tmp_path / "baskets.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                "--data",
                str(data),
                "--method",
                "patternka",
                "--model",
                "set-k-anonymity:k=3",
                "--format",
                "spmf",
                "--no-report",
                "--no-shuffle",
                "--out",
                str(out),
            ]
        )
        == 0
    ), capsys.readouterr().err
    written = (out / "release.txt").read_text(encoding="utf-8").splitlines()
    assert written[0].startswith("%") and not any(ln.startswith("@") for ln in written)  # the ids kept as read
    records = written[1:]
    assert len(records) == 200
    assert all(set(r.split()) <= set(l.split()) for r, l in zip(records, lines))  # generalised by suppression
    again = make_registry().create("importer", "transactions").read(out / "release.txt")
    assert again.shape[0] == 200
    assert main(["verify", str(out)]) == 0
