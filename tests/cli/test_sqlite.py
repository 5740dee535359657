"""SQLite: a table or a read-only query's rows are read without changing the database; a query
that writes, a file that is no database and an unnamed table among several get one line; a
release is written as a new database that ``veil verify`` reads back."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import struct

import pandas as pd
import pytest

from veil.engine import BadInput
from veil.plugins.io._sqlite import check_table_name

from .helpers import SMALL_CSV, sha256


def database(tmp_path):
    path = tmp_path / "clinic.db"
    conn = sqlite3.connect(path)
    pd.read_csv(io.StringIO(SMALL_CSV)).to_sql("people", conn, index=False)
    conn.execute("CREATE TABLE visits (id INTEGER)")
    conn.commit()
    conn.close()
    return path


def test_a_table_and_a_query_are_read_and_the_database_is_unchanged(veil, tmp_path):
    db = database(tmp_path)
    before = sha256(db)
    table = veil("inspect", db, "--table", "people")
    assert table.code == 0, table.err
    assert "rows     12" in table.out and "postcode" in table.out
    query = veil("inspect", db, "--query", "SELECT age_band, sex FROM people WHERE sex = 'F'")
    assert query.code == 0, query.err
    assert "rows     6" in query.out and "columns  2" in query.out and "postcode" not in query.out
    assert sha256(db) == before


def test_a_writing_query_a_non_database_and_an_unnamed_table_get_one_line(veil, tmp_path):
    db = database(tmp_path)
    before = sha256(db)
    for sql in ("DELETE FROM people", "SELECT 1; DROP TABLE people", "INSERT INTO visits VALUES (1)"):
        done = veil("inspect", db, "--query", sql)
        assert done.code == 2 and len(done.err_lines) == 1 and "clinic.db" in done.err, (sql, done.err)
    assert sha256(db) == before
    assert len(sqlite3.connect(db).execute("SELECT * FROM people").fetchall()) == 12
    unnamed = veil("inspect", db)
    assert unnamed.code == 2 and "holds 2 tables (people, visits); name one with --table" in unnamed.err
    text = tmp_path / "notes.db"
    text.write_text("these are notes, not a database\n" * 10)
    bad = veil("inspect", text)
    assert bad.code == 2 and bad.err_lines == [
        "veil: error: notes.db is not a readable SQLite database: file is not a database"
    ]


def test_a_release_is_written_as_a_new_database_verify_reads(veil, tmp_path):
    db = database(tmp_path)
    out = tmp_path / "out"
    done = veil(
        "run", "--data", db, "--table", "people", "--identifier", "name", "--quasi", "age_band,sex",
        "--model", "k-anonymity:k=2", "--method", "global-recoding", "--format", "sqlite", "--no-report", "--out", out,
    )  # fmt: skip
    assert done.code == 0, done.err
    written = sqlite3.connect(out / "release.sqlite")
    rows = written.execute("SELECT age_band, sex FROM release").fetchall()
    expected = pd.read_csv(io.StringIO(SMALL_CSV))
    assert sorted(rows) == sorted(zip(expected["age_band"], expected["sex"]))
    assert [r[1] for r in written.execute("PRAGMA table_info(release)")] == [
        "age_band",
        "sex",
        "postcode",
        "smoker",
        "outcome",
    ]
    assert veil("verify", out).code == 0
    written.execute("UPDATE release SET sex = 'X' WHERE rowid = 1")  # a changed table fails verification
    written.commit()
    written.close()
    assert veil("verify", out).code != 0


def _into(veil, data, out, *extra):
    return veil(
        "run", "--data", data, "--identifier", "name", "--quasi", "age_band,sex", "--model", "k-anonymity:k=2",
        "--method", "global-recoding", "--no-report", "--out", out, *extra,
    )  # fmt: skip


def _target(tmp_path):
    """A database the hospital keeps, with a table and a view of its own the export must not touch."""
    path = tmp_path / "warehouse.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE wards (ward TEXT, beds INTEGER)")
    conn.executemany("INSERT INTO wards VALUES (?, ?)", [("A", 10), ("B", 12)])
    conn.execute("CREATE VIEW big AS SELECT ward FROM wards WHERE beds > 11")
    conn.commit()
    conn.close()
    return path


def _schema(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()


def test_a_release_is_written_into_an_existing_database_as_a_new_table(veil, tmp_path):
    data = tmp_path / "people.csv"
    data.write_text(SMALL_CSV)
    db = _target(tmp_path)
    wards = sqlite3.connect(db).execute("SELECT * FROM wards ORDER BY rowid").fetchall()
    out = tmp_path / "out"
    done = _into(veil, data, out, "--into", db, "--into-table", "cohort_2024")
    assert done.code == 0, done.err
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]  # the release is in the database only
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "people.csv", "warehouse.db"]  # no journal left
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT age_band, sex FROM cohort_2024").fetchall()
    expected = pd.read_csv(io.StringIO(SMALL_CSV))
    assert sorted(rows) == sorted(zip(expected["age_band"], expected["sex"]))
    assert conn.execute("SELECT * FROM wards ORDER BY rowid").fetchall() == wards  # nothing else touched
    assert [r[1] for r in _schema(db)] == ["big", "cohort_2024", "wards"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["output"]["path"] == str(db.resolve()) and manifest["output"]["table"] == "cohort_2024"
    assert manifest["output"]["sha256"] == _digest(conn, "cohort_2024")  # the documented serialisation
    conn.close()
    assert veil("verify", out).code == 0
    risk = veil("risk", out, "--no-suda", "--json")  # the release read from its table, by the manifest
    assert risk.code == 0, risk.err

    with sqlite3.connect(db) as conn:  # one cell of one row changed: verification fails and says so
        conn.execute("UPDATE cohort_2024 SET outcome = 1 - outcome WHERE rowid = 3")
    changed = veil("verify", out)
    assert changed.code != 0 and "cohort_2024" in changed.err + changed.out and "changed" in changed.err + changed.out


def test_an_existing_table_is_replaced_only_when_asked(veil, tmp_path):
    data = tmp_path / "people.csv"
    data.write_text(SMALL_CSV)
    db = _target(tmp_path)
    before, schema = sha256(db), _schema(db)
    refused = _into(veil, data, tmp_path / "out", "--into", db, "--into-table", "WARDS")  # names are caseless
    assert refused.code == 2 and len(refused.err_lines) == 1
    assert "already holds a table 'wards'" in refused.err and "--replace-table" in refused.err
    assert sha256(db) == before and not (tmp_path / "out").exists()
    view = _into(veil, data, tmp_path / "out", "--into", db, "--into-table", "big", "--replace-table")
    assert view.code == 2 and "a view named 'big'" in view.err and sha256(db) == before
    named = _into(veil, data, tmp_path / "out", "--into", db, "--into-table", 'x"; DROP TABLE wards; --')
    assert named.code == 2 and "cannot name the released table" in named.err
    for bad in ("sqlite_master", "Sqlite_x", "1st", "", "a b", "é", "x" * 65):
        with pytest.raises(BadInput, match="cannot name the released table"):
            check_table_name(bad)
    check_table_name("_cohort_2024_" + "x" * 51)  # 64 characters
    assert sha256(db) == before and _schema(db) == schema
    replaced = _into(veil, data, tmp_path / "out", "--into", db, "--into-table", "wards", "--replace-table")
    assert replaced.code == 0, replaced.err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM wards").fetchone() == (12,)
        assert [r[1] for r in conn.execute("PRAGMA table_info(wards)")][:2] == ["age_band", "sex"]
    assert veil("verify", tmp_path / "out").code == 0


def test_the_input_database_and_a_missing_one_are_refused(veil, tmp_path):
    db = database(tmp_path)
    before = sha256(db)
    same = _into(veil, db, tmp_path / "out", "--table", "people", "--into", db, "--into-table", "released")
    assert same.code == 2 and "never written into a file the run read" in same.err and sha256(db) == before
    data = tmp_path / "people.csv"
    data.write_text(SMALL_CSV)
    gone = _into(veil, data, tmp_path / "out", "--into", tmp_path / "none.db")
    assert gone.code == 2 and "existing database" in gone.err
    alone = _into(veil, data, tmp_path / "out", "--replace-table")
    assert alone.code == 2 and "give --into DATABASE" in alone.err


def test_a_failed_commit_leaves_the_database_and_the_folder_as_they_were(veil, tmp_path, monkeypatch):
    from veil.plugins.io import _sqlite

    data = tmp_path / "people.csv"
    data.write_text(SMALL_CSV)
    db = _target(tmp_path)
    out = tmp_path / "out"
    assert _into(veil, data, out, "--into", db, "--into-table", "first").code == 0
    folder = {p.name: sha256(p) for p in out.iterdir()}
    before, schema = sha256(db), _schema(db)
    monkeypatch.setattr(_sqlite, "LOCK_SECONDS", 0.05)
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT * FROM wards").fetchall()  # a reader's lock: the commit cannot take the database
    failed = _into(veil, data, out, "--into", db, "--into-table", "second")
    reader.execute("ROLLBACK")
    reader.close()
    assert failed.code == 2 and "database is locked" in failed.err and "nothing in it was changed" in failed.err
    assert sha256(db) == before and _schema(db) == schema  # no table "second"
    assert {p.name: sha256(p) for p in out.iterdir()} == folder  # the earlier manifest put back
    assert veil("verify", out).code == 0

    from veil.engine.release import staging

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(staging, "_replace", full_disk)  # the folder's commit fails before the database's
    failed = _into(veil, data, out, "--into", db, "--into-table", "third")
    assert failed.code != 0 and "No space left" in failed.err
    assert sha256(db) == before and _schema(db) == schema
    assert {p.name: sha256(p) for p in out.iterdir()} == folder


def _digest(conn, table: str) -> str:
    """The table digest docs/formats.md defines, worked independently of the plugin's code."""
    h = hashlib.sha256(b"veil-sqlite-table-1\x00")
    names = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    h.update(b"C" + len(names).to_bytes(8, "big"))
    for n in names:
        h.update(b"T" + len(n.encode()).to_bytes(8, "big") + n.encode())
    for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
        for v in row:
            if v is None:
                h.update(b"N")
            elif isinstance(v, int):
                h.update(b"I" + v.to_bytes(8, "big", signed=True))
            elif isinstance(v, float):
                h.update(b"R" + struct.pack(">d", v))
            else:
                b = v.encode() if isinstance(v, str) else v
                h.update((b"T" if isinstance(v, str) else b"B") + len(b).to_bytes(8, "big") + b)
    return h.hexdigest()


def test_a_database_an_earlier_export_wrote_in_the_folder_is_written_into_and_kept(veil, tmp_path):
    data = tmp_path / "people.csv"
    data.write_text(SMALL_CSV)
    out = tmp_path / "out"
    assert _into(veil, data, out, "--format", "sqlite").code == 0  # out/release.sqlite, listed by its manifest
    db = out / "release.sqlite"
    done = _into(veil, data, out, "--into", db, "--into-table", "again")
    assert done.code == 0, done.err
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "release.sqlite"]  # not removed as stale
    assert [r[1] for r in _schema(db)] == ["again", "release"]
    assert veil("verify", out).code == 0
