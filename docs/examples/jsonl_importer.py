"""JSON Lines: one JSON object per record, read as a table."""

import pandas as pd

from veil.engine import BadInput, Importer, Table, hookimpl


class JsonLinesImporter(Importer):
    name = "jsonl"
    title = "JSON Lines"
    description = "One JSON object per record, one record per line."
    paper = ""
    extensions = (".jsonl",)  # which files it reads (override sniff to look inside them)

    def read(self, path, options):
        try:
            frame = pd.read_json(path, orient="records", lines=True, dtype=False)
        except ValueError as exc:  # a bad line: one sentence for the user, never a traceback
            raise BadInput(f"{path.name} is not JSON Lines: {exc}") from None
        return Table.from_frame(frame)  # kinds detected and roles suggested, as for a CSV file


@hookimpl
def veil_register_importers():
    return [JsonLinesImporter]
