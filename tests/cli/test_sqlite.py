"""SQLite: a table or a read-only query's rows are read without changing the database; a query
that writes, a file that is no database and an unnamed table among several get one line; a
release is written as a new database that ``veil verify`` reads back."""

from __future__ import annotations

import io
import sqlite3

import pandas as pd

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
