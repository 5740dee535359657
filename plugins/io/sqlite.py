"""The SQLite importers (the formats, their labels and missing codes: docs/formats.md); the
readers themselves live in :mod:`._sqlite`, shared with the exporters of :mod:`.sqlite_export`."""

from __future__ import annotations

from veil.engine import hookimpl

from ._sqlite import SqliteImporter


@hookimpl
def veil_register_importers():
    return [SqliteImporter]
