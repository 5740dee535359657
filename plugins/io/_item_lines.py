"""Item sets one record a line (the SPMF/FIMI layout), written from a set-valued release's group
centres and read back streamed; shared by the itemsets exporter (:mod:`.itemsets`) and the SPMF
exporter (:mod:`.exporters`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.engine import ITEMS_COLUMN, SetValued

READ_CHUNK_BYTES = 4 << 20  # how much of a released file read_back parses at a time


def _count_lines(path) -> int:
    """How many lines a file has (a last line without its newline counts), read in blocks."""
    count, last = 0, b"\n"
    with open(path, "rb") as f:
        while block := f.read(READ_CHUNK_BYTES):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def write_item_lines(f, sets, rows, *, by_name: bool) -> None:
    """Each record's item set a line (``rows``: the records in the order written): items by name, or
    numbered 1 … n after ``@ITEM=i=name`` lines that name them (SPMF's converted-from-text form)."""
    if not by_name:
        names = list(sets.item_names)
        f.write("@CONVERTED_FROM_TEXT\n")
        for i, n in enumerate(names, start=1):
            f.write(f"@ITEM={i}={n}\n")
        sets = SetValued(sets.indptr, sets.indices, [str(i) for i in range(1, len(names) + 1)])
    for lines in sets.iter_chunks(rows):
        f.write("\n".join(lines))
        f.write("\n")


def read_item_lines(path) -> pd.DataFrame:
    """One row per record: its item set as text, items sorted, so equal sets compare equal.

    Streamed: the file is read :data:`READ_CHUNK_BYTES` at a time and each line becomes a code
    into the distinct published sets (a categorical column), so memory is the distinct sets (a
    group's centre each, O(items) apiece), one chunk of lines and four bytes a record, never one
    text per record. Every line is still parsed from the file's bytes."""
    names: dict[str, str] = {}
    codes: dict[str, int] = {}  # distinct published set -> its code
    each = np.empty(_count_lines(path), dtype=np.int32)  # at most one record a line
    n = 0
    with open(path, encoding="utf-8", newline="\n") as f:  # lines end at \n only, as they were counted
        while lines := f.readlines(READ_CHUNK_BYTES):
            for line in lines:
                if line.startswith("@ITEM="):
                    _, ident, label = line.rstrip("\n").split("=", 2)
                    names[ident] = label
                elif not line.startswith(("@", "#", "%")):
                    each[n] = codes.setdefault(" ".join(sorted(set(line.split()))), len(codes))
                    n += 1
            del lines
    each = each[:n]
    cells = pd.Categorical.from_codes(each, categories=pd.Index(list(codes), dtype=object))
    frame = pd.DataFrame({ITEMS_COLUMN: cells})
    frame.attrs["item_names"] = names
    return frame
