"""The SQLite exporters (docs/formats.md); the writers live in :mod:`._sqlite`, shared with the
importers of :mod:`.sqlite`."""

from __future__ import annotations

from veil.engine import hookimpl

from ._sqlite import SqliteExporter


@hookimpl
def veil_register_exporters():
    return [SqliteExporter]
