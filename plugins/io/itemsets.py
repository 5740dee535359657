"""Set-valued releases as item sets, one record a line (the SPMF/FIMI layout): written from the group
centres, never as a records × items frame, and read back streamed."""

from __future__ import annotations


from veil.engine import ITEMS_COLUMN, BadInput, Exporter, hookimpl

from ._item_lines import read_item_lines, write_item_lines


class ItemsetsExporter(Exporter):
    """A set-valued release, one record per line: its published item set (SPMF/FIMI layout), streamed in
    chunks from the group centres, never as a records × items frame. Items are written by name when
    every name is one token, else by number with SPMF's ``@ITEM=number=name`` lines."""

    name = "itemsets"
    title = "Item sets (SPMF/FIMI)"
    extension = "dat"
    writes_sets = True

    @classmethod
    def refuses(cls, release) -> str:
        if getattr(release, "sets", None) is None:
            return "the itemsets format writes set-valued releases only (one item set per record)"
        return ""

    def write(self, frame, path, params):
        if ITEMS_COLUMN not in frame.columns:
            raise BadInput("the itemsets format writes set-valued releases only (an 'items' column or item sets)")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for cell in frame[ITEMS_COLUMN]:
                f.write(f"{cell}\n")

    def write_sets(self, sets, rows, path, params):
        names = list(sets.item_names)
        plain = all(n and not any(ch.isspace() for ch in n) and n[0] not in "#%@" for n in names)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            write_item_lines(f, sets, rows, by_name=plain)

    def read_back(self, path):
        """One row per record: its item set as text, items sorted, so equal sets compare equal
        (streamed: :func:`read_item_lines`)."""
        return read_item_lines(path)


@hookimpl
def veil_register_exporters():
    return [ItemsetsExporter]
