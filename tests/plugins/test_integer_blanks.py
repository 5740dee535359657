"""A column of whole numbers with blanks stays a column of whole numbers: local suppression's blanks in
an integer column, and integers a file held with blanks (read as floats), are written as integers by
every exporter (no ``.0``), read back as the same values, and the written release verifies."""

from __future__ import annotations

import csv
import sqlite3

import numpy as np
import openpyxl
import pandas as pd
import pytest

from veil.cli import main as veil
from veil.engine import ExportOptions, IntoTable, PluginCall, RunSpec, Table, execute, make_registry, write_release
from veil.engine.data.missing import holds_integers, keep_integers

REGISTRY = make_registry()
FILES = ["csv", "tsv", "xlsx", "parquet", "spss", "stata", "sas-xport", "r"]
WHOLE = ["age", "income"]  # age: int64 in the input, blanked by the method; income: floats with blanks


def _result():
    rng = np.random.default_rng(5)
    n = 40
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": rng.integers(10, 60, n) * 1000.0,
            "sex": rng.choice(["f", "m"], n),
            "score": rng.integers(0, 5, n) + 0.5,  # floats that are no whole numbers stay floats
        }
    )
    frame.loc[rng.random(n) < 0.1, "income"] = np.nan
    roles = {"age": "quasi-identifier", "income": "quasi-identifier", "sex": "quasi-identifier"}
    table = Table.from_frame(frame).with_roles(roles)
    spec = RunSpec(PluginCall("local-suppression", {"search": "greedy"}), PluginCall("k-anonymity", {"k": 3}))
    return execute(REGISTRY, table, spec)


RESULT = _result()


def _whole(values) -> list:
    return [None if pd.isna(v) else v for v in values]


def test_the_release_blanks_cells_of_an_integer_column():
    release = RESULT.release.frame
    assert release["age"].isna().any() and pd.api.types.is_float_dtype(release["age"])  # what the export fixes
    assert release["income"].isna().any()


def test_the_written_csv_holds_integers_and_verifies(tmp_path, capsys):
    out = tmp_path / "csv"
    manifest = write_release(REGISTRY, RESULT, out, ExportOptions("csv", shuffle=False))
    with open(out / manifest["output"]["path"], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for c in WHOLE:
        cells = [r[c] for r in rows]
        assert "" in cells and all(v == "" or v.lstrip("-").isdigit() for v in cells), c
        assert [None if v == "" else int(v) for v in cells] == _whole(RESULT.release.frame[c])
    assert all(r["score"].endswith(".5") for r in rows)
    assert veil(["verify", str(out)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("fmt", FILES)
def test_every_exporter_writes_whole_numbers_as_integers_and_reads_them_back(tmp_path, fmt):
    """The frame an export hands its exporter (integers kept), written and read back."""
    frame = keep_integers(RESULT.release.frame, RESULT.data.frame)
    assert all(pd.api.types.is_integer_dtype(frame[c]) for c in WHOLE)
    exporter = REGISTRY.exporter(fmt)
    path = tmp_path / f"release.{exporter.extension}"
    exporter.write(frame, path, exporter.params())
    back = exporter.read_back(path)
    for c in WHOLE:
        got = _whole(back[c])
        assert got == _whole(RESULT.release.frame[c]), c
        assert all(v is None or float(v).is_integer() for v in got)
    assert back["score"].tolist() == RESULT.release.frame["score"].tolist()
    if fmt == "tsv":
        with open(path, newline="", encoding="utf-8") as f:
            cells = [r["age"] for r in csv.DictReader(f, delimiter="\t")]
        assert "" in cells and all(v == "" or v.isdigit() for v in cells)
    if fmt == "xlsx":
        sheet = openpyxl.load_workbook(path).active
        header = [cell.value for cell in sheet[1]]
        for c in WHOLE:
            cells = [row[header.index(c)].value for row in sheet.iter_rows(min_row=2)]
            assert None in cells and all(v is None or type(v) is int for v in cells), c
    if fmt == "spss":
        import pyreadstat

        _, meta = pyreadstat.read_sav(str(path), metadataonly=True)
        assert meta.original_variable_types["age"] == "F8.0" and meta.original_variable_types["score"] == "F8.2"
    if fmt == "parquet":
        assert all(pd.api.types.is_integer_dtype(back[c]) for c in WHOLE)


def test_a_database_table_gets_integer_columns(tmp_path):
    database = tmp_path / "out.sqlite"
    sqlite3.connect(database).close()
    write_release(REGISTRY, RESULT, tmp_path / "db", ExportOptions("sqlite", shuffle=False, into=IntoTable(database)))
    with sqlite3.connect(database) as conn:
        kinds = {row[1]: row[2] for row in conn.execute("PRAGMA table_info(release)")}
        stored = {c: [r[0] for r in conn.execute(f"SELECT {c} FROM release ORDER BY rowid")] for c in WHOLE}
    assert kinds["age"] == kinds["income"] == "INTEGER"
    for c in WHOLE:
        assert stored[c] == _whole(int(v) if pd.notna(v) else v for v in RESULT.release.frame[c])
        assert all(v is None or type(v) is int for v in stored[c])


@pytest.mark.parametrize("seed", range(20))
def test_a_column_is_written_as_integers_exactly_when_its_input_and_its_release_hold_whole_numbers(seed):
    rng = np.random.default_rng(seed)
    n = 12
    kind = seed % 4  # int64; floats with blanks, whole; floats without blanks, whole; floats not whole
    source = pd.Series(rng.integers(-50, 50, n) * 1.0)
    if kind == 0:
        source = source.astype(np.int64)
    if kind in (1, 3):
        source[rng.random(n) < 0.3] = np.nan
        source[0] = np.nan
    if kind == 3:
        source[1] = 0.25
    released = pd.Series(rng.integers(-50, 50, n) * 1.0)
    released[rng.random(n) < 0.3] = np.nan
    if seed % 5 == 0:
        released[2] = 1.5  # a value no integer column holds
    out = keep_integers(pd.DataFrame({"x": released}), pd.DataFrame({"x": source}))["x"]
    whole_input = kind == 0 or kind == 1
    assert holds_integers(source) == whole_input
    assert pd.api.types.is_integer_dtype(out) == (whole_input and seed % 5 != 0)
    assert _whole(out) == _whole(released)  # the values never change


@pytest.mark.parametrize("method", ["microaggregation", "local-suppression", "mondrian", "global-recoding"])
def test_nullable_integers_as_a_parquet_file_gives_them_are_anonymised(method):
    """pandas' nullable integers (how Parquet and a careful CSV reading give integers with blanks)
    go through every method that keeps blanks, the blanks staying blank."""
    frame = RESULT.data.frame.copy()
    frame["income"] = frame["income"].astype("Int64")
    roles = {"age": "quasi-identifier", "income": "quasi-identifier", "sex": "quasi-identifier"}
    table = Table.from_frame(frame).with_roles(roles)
    release = execute(REGISTRY, table, RunSpec(PluginCall(method, {}), PluginCall("k-anonymity", {"k": 3}))).release
    blank = frame["income"].isna().to_numpy()
    written = release.frame["income"].astype(object)
    assert (written.isna() | (written == "*")).to_numpy()[blank].all()
