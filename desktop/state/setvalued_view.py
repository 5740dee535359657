"""What the desktop shows of set-valued data, without Qt: counts and the item-frequency chart.

Set-valued data (an SPMF/FIMI file read as a transaction :class:`~veil.engine.BinaryMatrix`, a
:class:`~veil.engine.SetValued`, or a table's column of kind "item set") is thousands of items wide
and very sparse: no records × items table can show it. :func:`summarise` reduces it to what a
reader needs — records, items, ones held, density, items per record — and the item counts for a
rank/frequency chart, in time and memory O(number of ones): the sparse arrays are read as they
are, never made dense. :func:`draw_items` draws that chart on a matplotlib figure in the style of
the result charts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import BinaryMatrix, Kind, SetValued, Table, column_sets

TOP_ITEMS = 10


@dataclass(frozen=True)
class SetSummary:
    """The shape of set-valued data: counts, items per record and every item's frequency."""

    n_records: int
    n_items: int
    n_ones: int  # items held, summed over the records
    mean_items: float
    max_items: int
    median_items: float
    empty_records: int
    frequencies: np.ndarray  # how many records hold each item, most frequent first (n_items,)
    lengths: np.ndarray  # lengths[j]: how many records hold exactly j items (max_items + 1,)
    top: tuple[tuple[str, int], ...]  # the most frequent items with their counts
    column: str | None = None  # the table column the sets came from, if any

    @property
    def density(self) -> float:
        cells = self.n_records * self.n_items
        return self.n_ones / cells if cells else 0.0

    def facts(self) -> list[tuple[str, str]]:
        """The summary in words: (what, value) pairs."""
        out = [
            ("records", f"{self.n_records:,}"),
            ("distinct items", f"{self.n_items:,}"),
            ("items held", f"{self.n_ones:,}"),
            ("density", f"{self.density:.4%}"),
            ("items per record", f"mean {self.mean_items:.2f}, median {self.median_items:g}, max {self.max_items:,}"),
        ]
        if self.empty_records:
            out.append(("empty records", f"{self.empty_records:,}"))
        if self.top:
            out.append(("most frequent", ", ".join(f"{name} ({count:,})" for name, count in self.top[:5])))
        return out


def itemset_columns(table: Table | None) -> list[str]:
    """The columns of kind "item set" of a table."""
    if table is None:
        return []
    return [c.name for c in table.schema.columns if c.kind is Kind.ITEMSET]


CHUNK = 1 << 20


def _counts(codes: np.ndarray, size: int) -> np.ndarray:
    """``np.bincount(codes, minlength=size)`` a million codes at a time: bincount copies int32 codes
    to int64 first, which on 23 million items held would double the memory the data takes."""
    out = np.zeros(size, dtype=np.int64)
    for start in range(0, len(codes), CHUNK):
        out += np.bincount(codes[start : start + CHUNK], minlength=size)
    return out


def summarise(data, column: str | None = None) -> SetSummary:
    """The :class:`SetSummary` of a transaction matrix, set-valued records or a table's item-set
    ``column``; O(number of ones), never a dense records × items matrix."""
    if isinstance(data, Table):
        if column is None:
            raise ValueError("name the item-set column of the table")
        data = column_sets(data, column)
    if isinstance(data, BinaryMatrix):  # column-wise: a column's length is its item's count
        counts = np.diff(data.indptr)
        lengths = _counts(data.indices, data.n_rows)
        names = data.feature_names
    elif isinstance(data, SetValued):
        counts, lengths, names = _counts(data.indices, data.n_items), data.row_lengths(), data.item_names
    else:
        raise TypeError(f"not set-valued data: {type(data).__name__}")
    counts = np.asarray(counts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    n = len(lengths)
    top = tuple((str(names[j]), int(counts[j])) for j in order[:TOP_ITEMS] if counts[j] > 0)
    return SetSummary(
        n_records=n,
        n_items=len(counts),
        n_ones=int(counts.sum()),
        mean_items=float(lengths.mean()) if n else 0.0,
        max_items=int(lengths.max()) if n else 0,
        median_items=float(np.median(lengths)) if n else 0.0,
        empty_records=int((lengths == 0).sum()),
        frequencies=counts[order],
        lengths=np.bincount(lengths) if n else np.zeros(1, np.int64),
        top=top,
        column=column,
    )


def draw_items(figure, summary: SetSummary) -> None:
    """Two panels: every item's frequency against its rank (log-log: a straight line is a power
    law), and how many records hold how many items (log count)."""
    figure.clear()
    rank_ax, length_ax = figure.subplots(1, 2)
    freq = summary.frequencies[summary.frequencies > 0]
    if len(freq):
        ranks = np.arange(1, len(freq) + 1)
        rank_ax.loglog(ranks, freq, marker=".", markersize=3, lw=1)
    rank_ax.set_xlabel("item rank (most frequent first)")
    rank_ax.set_ylabel("records holding the item")
    rank_ax.set_title("Item frequency by rank", fontsize="medium")
    rank_ax.grid(alpha=0.3, which="both")
    held = np.flatnonzero(summary.lengths)
    if len(held):
        length_ax.bar(held, summary.lengths[held], width=1.0, color="C1")
        length_ax.set_yscale("log")
    length_ax.axvline(summary.mean_items, color="black", lw=1, ls="--", label=f"mean {summary.mean_items:.1f}")
    length_ax.set_xlabel("items in the record")
    length_ax.set_ylabel("records")
    length_ax.set_title("Items per record", fontsize="medium")
    length_ax.legend(fontsize="small")
    length_ax.grid(axis="y", alpha=0.3)


def shape_text(data) -> str:
    """``"59,602 records × 497 items"`` or ``"1,000 rows × 12 columns"``."""
    if isinstance(data, Table):
        return f"{data.n_rows:,} rows × {len(data.columns)} columns"
    items = data.n_items if isinstance(data, SetValued) else data.n_features
    return f"{data.n_rows:,} records × {items:,} items"
