"""SQLite databases: a table or a query's rows read, a release written as a new database file or
as a new table of an existing database.

Reading opens the database read-only (``file:…?mode=ro``) and lets a statement only read
(an authoriser refuses anything else), so neither a table nor a query can change the file; a
query that would write is refused in one sentence. Writing makes a new database file holding the
release in one table (``release``), through the export's transaction like any file: staged,
read back and checked, then named. Writing into an existing database is one SQLite transaction
that creates the one table (after dropping a table of that name only when asked to replace it),
read back and checked inside the transaction and committed with the export's files; the
manifest records the table's content digest, :func:`table_sha256` (docs/formats.md, "SQLite").
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import struct
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from veil.engine import BadInput, Exporter, ImportOptions, Importer, Table, TableWrite, check_column_names

MAGIC = b"SQLite format 3\x00"
TABLE = "release"  # the table an export writes
_READING = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}


def _only_reading(action, *_):
    return sqlite3.SQLITE_OK if action in _READING else sqlite3.SQLITE_DENY


def open_read_only(path: Path) -> sqlite3.Connection:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    conn.set_authorizer(_only_reading)
    return conn


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def tables(conn: sqlite3.Connection) -> list[str]:
    conn.set_authorizer(None)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name").fetchall()
    finally:
        conn.set_authorizer(_only_reading)
    return [r[0] for r in rows if not r[0].startswith("sqlite_")]


class SqliteImporter(Importer):
    """A table (``--table``) or a query's rows (``--query "SELECT …"``) of an SQLite database; a
    database of one table needs neither."""

    name = "sqlite"
    title = "SQLite database"
    description = "A table or the rows of a read-only query of an SQLite database file."
    extensions = (".sqlite", ".sqlite3", ".db")
    priority = 1

    def sniff(self, path, head: bytes) -> bool:
        return head.startswith(MAGIC) or super().sniff(path, head)

    def head(self, path, options, rows: int) -> Table:
        return self.read(path, options, limit=rows)

    def read(self, path, options=None, limit: int | None = None) -> Table:
        path, options = Path(path), options or ImportOptions()
        if options.sheet and options.query:
            raise BadInput(f"{path.name}: give a table or a query, not both")
        try:
            conn = open_read_only(path)
            try:
                if options.query:
                    sql, what = options.query, "the query"
                    if not sqlite3.complete_statement(sql.rstrip().rstrip(";") + ";") or ";" in sql.strip().rstrip(";"):
                        raise BadInput(f"{path.name}: the query must be one SELECT statement")
                else:
                    names = tables(conn)
                    table = options.sheet
                    if table is None:
                        if len(names) != 1:
                            listed = ", ".join(names) or "none"
                            raise BadInput(f"{path.name} holds {len(names)} tables ({listed}); name one with --table")
                        table = names[0]
                    elif table not in names:
                        raise BadInput(
                            f"{path.name} has no table {table!r}; its tables are {', '.join(names) or 'none'}"
                        )
                    sql, what = f"SELECT * FROM {_quoted(table)}", f"table {table!r}"
                cursor = conn.execute(sql)
                rows = cursor.fetchall() if limit is None else cursor.fetchmany(limit)
                if cursor.description is None:
                    raise BadInput(f"{path.name}: {what} returns no rows to read")
                frame = pd.DataFrame.from_records(rows, columns=[d[0] for d in cursor.description])
            finally:
                conn.close()
        except BadInput:
            raise
        except MemoryError:
            raise
        except Exception as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "not authorized" in detail or "readonly" in detail:
                raise BadInput(f"{path.name}: the query may only read (SELECT); it was refused: {detail}") from None
            raise BadInput(f"{path.name} is not a readable SQLite database: {detail}") from None
        if frame.empty and len(frame.columns) == 0:
            raise BadInput(f"{path.name}: {what} gives no columns")
        try:
            check_column_names([str(c) for c in frame.columns])
        except BadInput as exc:
            raise BadInput(f"{path.name}: {exc}") from None
        table = Table.from_frame(frame)
        table.meta["file"] = {"format": self.title, "read": what, "sqlite": sqlite3.sqlite_version}
        return table


# -- a table's content digest ------------------------------------------------------------------

DIGEST_TAG = b"veil-sqlite-table-1\x00"
_CHUNK = 10_000


def _length(data: bytes) -> bytes:
    return struct.pack(">Q", len(data)) + data


def _value_bytes(kind: bytes, value) -> bytes:
    """One cell as the digest takes it, by its SQLite storage class (``typeof``)."""
    if kind == b"null":
        return b"N"
    if kind == b"integer":
        return b"I" + struct.pack(">q", value)
    if kind == b"real":
        return b"R" + struct.pack(">d", value)
    if kind == b"text":
        return b"T" + _length(value)
    return b"B" + _length(bytes(value))


def table_sha256(conn: sqlite3.Connection, table: str) -> str:
    """The SHA-256 of a table's content, canonically serialised (docs/formats.md, "SQLite"):
    the tag ``veil-sqlite-table-1`` and a NUL; ``C`` and the column count as 8 bytes; each column
    name as ``T`` + its UTF-8 length (8 bytes) + the bytes; then every row in rowid order, each
    cell by its storage class: ``N`` (NULL), ``I`` + 8-byte signed integer, ``R`` + 8-byte IEEE 754
    double, ``T`` + length + UTF-8 bytes, ``B`` + length + bytes. Every number is big-endian. The
    rows' order counts; two tables hash alike exactly when their names, cells and types are equal."""
    digest = hashlib.sha256(DIGEST_TAG)
    name = _quoted(table)
    names = [d[0] for d in conn.execute(f"SELECT * FROM {name} LIMIT 0").description]
    digest.update(b"C" + struct.pack(">Q", len(names)))
    for n in names:
        digest.update(b"T" + _length(n.encode("utf-8")))
    cells = ", ".join(f"typeof({_quoted(n)}), {_quoted(n)}" for n in names)
    before = conn.text_factory
    conn.text_factory = bytes  # text as the bytes stored (UTF-8), never decoded and encoded again
    try:
        cursor = conn.execute(f"SELECT {cells} FROM {name} ORDER BY rowid")
        while rows := cursor.fetchmany(_CHUNK):
            digest.update(b"".join(_value_bytes(r[i], r[i + 1]) for r in rows for i in range(0, len(r), 2)))
    finally:
        conn.text_factory = before
    return digest.hexdigest()


# -- writing ------------------------------------------------------------------------------------

TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
LOCK_SECONDS = 5.0  # how long a write waits for another connection's lock on the database


def check_table_name(name: str) -> None:
    """BadInput unless ``name`` is one a released table may have: letters, digits and ``_``,
    starting with a letter or ``_``, at most 64 characters, not SQLite's own ``sqlite_…``."""
    if not isinstance(name, str) or not TABLE_NAME.fullmatch(name) or name.lower().startswith("sqlite_"):
        raise BadInput(
            f"{name!r} cannot name the released table: use letters, digits and _ (starting with a letter "
            f"or _, at most 64 characters, not starting with sqlite_)"
        )


def _column_type(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_integer_dtype(s):
        return "INTEGER"
    if pd.api.types.is_float_dtype(s):
        return "REAL"
    return "TEXT"


def _cell(v):
    """A cell as SQLite stores it: None for a blank, Python numbers and text."""
    if v is None or (not isinstance(v, (str, bytes)) and pd.isna(v)):
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float, str, bytes)):
        return v
    return str(v)


def _insert(conn: sqlite3.Connection, table: str, frame: pd.DataFrame, create: bool) -> None:
    name = _quoted(table)
    columns = [str(c) for c in frame.columns]
    if create:
        defs = ", ".join(f"{_quoted(c)} {_column_type(frame.iloc[:, i])}" for i, c in enumerate(columns))
        conn.execute(f"CREATE TABLE {name} ({defs})")
    marks = ", ".join("?" for _ in columns)
    sql = f"INSERT INTO {name} VALUES ({marks})"
    for start in range(0, len(frame), _CHUNK):
        chunk = frame.iloc[start : start + _CHUNK]
        cols = [[_cell(v) for v in chunk.iloc[:, i].astype(object)] for i in range(len(columns))]
        conn.executemany(sql, zip(*cols))


def _read(conn: sqlite3.Connection, table: str) -> pd.DataFrame:
    cursor = conn.execute(f"SELECT * FROM {_quoted(table)} ORDER BY rowid")
    names = [d[0] for d in cursor.description]
    return pd.DataFrame.from_records(cursor.fetchall(), columns=names)


def _failure(database: Path, exc: Exception) -> BadInput:
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return BadInput(f"the release cannot be written into {database.name}: {detail}; nothing in it was changed")


class SqliteTableWrite(TableWrite):
    """The transaction adding one table to an existing database (see :class:`~veil.engine.TableWrite`).

    ``BEGIN IMMEDIATE`` takes the database's write lock first, so no other writer comes between the
    check that the name is free and the commit; the only statements are ``DROP TABLE`` of the one
    name (when replacing), ``CREATE TABLE`` and ``INSERT`` into it, names always quoted and values
    always bound, so nothing else in the database is touched and no user text is run as SQL. A
    close before :meth:`commit` rolls it all back."""

    def __init__(self, database: Path, table: str, replace: bool):
        check_table_name(table)
        self.database, self.table = Path(database), table
        self.committed = False
        try:
            self.conn = sqlite3.connect(str(self.database), timeout=LOCK_SECONDS, isolation_level=None)
        except sqlite3.Error as exc:
            raise _failure(self.database, exc) from None
        try:
            self.conn.execute("PRAGMA foreign_keys = OFF")  # a drop never cascades into another table
            self.conn.execute("BEGIN IMMEDIATE")
            found = self.conn.execute(
                "SELECT type, name FROM sqlite_master WHERE lower(name) = lower(?)", (table,)
            ).fetchone()
            if found is not None:
                kind, existing = found
                if kind != "table":
                    raise BadInput(
                        f"{self.database.name} already holds {'an' if kind[0] in 'aeiou' else 'a'} {kind} named "
                        f"{existing!r}: choose another table name"
                    )
                if not replace:
                    raise BadInput(
                        f"{self.database.name} already holds a table {existing!r}: choose another table name, or "
                        f"ask for it to be replaced (--replace-table; the export dialog's Replace box)"
                    )
                self.conn.execute(f"DROP TABLE {_quoted(existing)}")
        except BadInput:
            self.close()
            raise
        except sqlite3.Error as exc:
            self.close()
            raise _failure(self.database, exc) from None

    def write(self, frame: pd.DataFrame) -> None:
        try:
            _insert(self.conn, self.table, frame, create=True)
        except sqlite3.Error as exc:
            raise _failure(self.database, exc) from None

    def read_back(self) -> pd.DataFrame:
        return _read(self.conn, self.table)

    def sha256(self) -> str:
        return table_sha256(self.conn, self.table)

    def commit(self) -> None:
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _failure(self.database, exc) from None
        self.committed = True

    def close(self) -> None:
        conn, self.conn = getattr(self, "conn", None), None
        if conn is None:
            return
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        finally:
            conn.close()


class SqliteExporter(Exporter):
    """A new SQLite database file holding the release as its one table, ``release``; or, into an
    existing database, the release as a new table of the name given."""

    name = "sqlite"
    title = "SQLite database"
    extension = "sqlite"
    writes_tables = True

    def write(self, frame, path, params):
        path = Path(path)
        path.unlink(missing_ok=True)  # a new database: the staged file (never the user's) is made afresh
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            conn.execute("BEGIN")
            _insert(conn, TABLE, frame, create=True)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise BadInput(f"the release cannot be written as SQLite: {str(exc).splitlines()[0]}") from None
        finally:
            conn.close()

    def read_back(self, path):
        return self.read_table(Path(path), TABLE)

    def open_table(self, database, table, replace):
        return SqliteTableWrite(Path(database), table, replace)

    def read_table(self, database, table):
        conn = open_read_only(Path(database))
        try:
            if table not in tables(conn):
                raise BadInput(f"{Path(database).name} holds no table {table!r}")
            return _read(conn, table)
        finally:
            conn.close()

    def table_sha256(self, database, table):
        conn = open_read_only(Path(database))
        try:
            if table not in tables(conn):
                raise BadInput(f"{Path(database).name} holds no table {table!r}")
            return table_sha256(conn, table)
        finally:
            conn.close()
