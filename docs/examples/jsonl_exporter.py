"""JSON Lines: one JSON object per record."""

import pandas as pd

from veil.engine import Exporter, hookimpl


class JsonLinesExporter(Exporter):
    name = "jsonl"
    title = "JSON Lines"
    description = "One JSON object per record, one record per line."
    paper = ""
    extension = "jsonl"

    def write(self, frame, path, params):
        frame.to_json(path, orient="records", lines=True, force_ascii=False)

    def read_back(self, path):
        return pd.read_json(path, orient="records", lines=True, dtype=False)


@hookimpl
def veil_register_exporters():
    return [JsonLinesExporter]
