"""SQLite databases: a table or a query's rows read, a release written as a new database file.

Reading opens the database read-only (``file:…?mode=ro``) and lets a statement only read
(an authoriser refuses anything else), so neither a table nor a query can change the file; a
query that would write is refused in one sentence. Writing makes a new database file holding the
release in one table (``release``), through the export's transaction like any file: staged,
read back and checked, then named (docs/formats.md, "SQLite").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from veil.engine import BadInput, Exporter, ImportOptions, Importer, Table, check_column_names

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


class SqliteExporter(Exporter):
    """A new SQLite database file holding the release as its one table, ``release``."""

    name = "sqlite"
    title = "SQLite database"
    extension = "sqlite"

    def write(self, frame, path, params):
        path = Path(path)
        out = frame.copy()
        for c in out.columns:
            s = out[c]
            if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(s):
                out[c] = s.astype(object).where(s.notna(), None)
        path.unlink(missing_ok=True)  # a new database: the staged file (never the user's) is made afresh
        conn = sqlite3.connect(str(path))
        try:
            out.to_sql(TABLE, conn, index=False)
            conn.commit()
        except Exception as exc:
            raise BadInput(f"the release cannot be written as SQLite: {str(exc).splitlines()[0]}") from None
        finally:
            conn.close()

    def read_back(self, path):
        conn = open_read_only(Path(path))
        try:
            return pd.read_sql_query(f"SELECT * FROM {_quoted(TABLE)}", conn)
        finally:
            conn.close()
