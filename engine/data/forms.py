"""One dataset protocol over the three forms, and the one place the engine converts between them.

The forms: a relational :class:`~veil.engine.Table` (``"table"``), a :class:`~veil.engine.BinaryMatrix`
(``"binary"``; transactions read as one too) and :class:`~veil.engine.SetValued` item sets
(``"sets"``). Every form answers the same questions through these functions, so plugins never
test ``isinstance`` chains: :func:`form_of`, :func:`n_rows`, :func:`labels_of`,
:func:`provenance_of`, :func:`grouping_columns`. :func:`convert` turns data into the form a method
accepts, including the relational → items conversion of docs/reference.md#set-valued-data for relational PatternKa.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from .setvalued import SetValued
from .table import Kind, Role, Table

TABLE, BINARY, TRANSACTIONS, SETS = "table", "binary", "transactions", "sets"
_FORM_WORDS = {
    TABLE: "a relational table",
    BINARY: "a binary matrix",
    SETS: "set-valued records",
    TRANSACTIONS: "set-valued records",
}


def form_of(data) -> str:
    """``"table"``, ``"binary"`` or ``"sets"``."""
    form = getattr(type(data), "form", None)
    if form is None:
        raise BadInput(f"not a dataset Veil can work on: {type(data).__name__}")
    return form


def describe_form(form: str) -> str:
    return _FORM_WORDS.get(form, form)


def n_rows(data) -> int:
    return data.n_rows


def labels_of(data) -> np.ndarray | None:
    """The target of every record, or None."""
    return data.labels() if form_of(data) == TABLE else data.labels


def target_name(data) -> str | None:
    """The name of the target column: a table's, or the column a binary matrix's labels came from
    (recorded by its recipe or importer), so every release keeps it; None when there is no target."""
    if form_of(data) == TABLE:
        return data.schema.target
    if data.labels is None:
        return None
    meta = data.meta
    return meta.get("target") or (meta.get("recipe") or {}).get("target") or "class"


def provenance_of(data) -> dict:
    """Where the data came from: ``{"source": path or None, "sha256": hash or None}``."""
    if form_of(data) == TABLE:
        return {"source": data.source, "sha256": data.sha256}
    return {"source": data.meta.get("source"), "sha256": data.meta.get("sha256")}


def grouping_columns(data) -> list[str]:
    """What a privacy model may group records on: a table's declared quasi-identifiers (every
    column that is not identifying, sensitive or the target when none is declared), a binary
    matrix's features, a set's items (every item is quasi-identifying, docs/reference.md#set-valued-data)."""
    form = form_of(data)
    if form == TABLE:
        schema = data.schema
        declared = schema.by_role(Role.QUASI_IDENTIFIER)
        return declared or schema.by_role(Role.INSENSITIVE)
    if form == BINARY:
        return list(data.feature_names)
    return list(data.item_names)


def convert(data, accepts, *, recipe=None, buckets: int = 20):
    """``data`` in the first form of ``accepts`` it can take, or a clear refusal.

    A table goes to binary through its recipe (an explicit ``recipe`` asks for binary even when the
    method also takes tables), to sets through :func:`table_to_items`; a binary matrix and sets
    convert into each other losslessly.
    """
    accepts = tuple(accepts)
    form = form_of(data)
    if form == TABLE:
        from .recipe import Recipe

        if BINARY in accepts and (recipe is not None or TABLE not in accepts):
            return (recipe or Recipe.default_for(data)).apply(data)
        if TABLE in accepts:
            return data
        if SETS in accepts:
            return table_to_items(data, buckets=buckets)
    elif form == BINARY:
        if BINARY in accepts or TRANSACTIONS in accepts:
            return data
        if SETS in accepts:
            return SetValued.from_binary(data)
    elif form == SETS:
        if SETS in accepts:
            return data
        if BINARY in accepts or TRANSACTIONS in accepts:
            return data.to_binary()
    forms = " or ".join(describe_form(a) for a in accepts)
    raise BadInput(f"this method works on {forms}, not on {describe_form(form)}")


def table_to_items(table: Table, *, buckets: int = 20, columns: list[str] | None = None) -> SetValued:
    """The items of a relational table (docs/reference.md#set-valued-data): each quasi-identifier becomes one item
    per record,
    ``(attribute, index)``: numeric values in ``buckets`` equal-width buckets, categorical values
    by their position in the in-order traversal of the column's hierarchy (their sorted order when
    the column has none). Item names read ``age=3``; ``meta["item_columns"]`` records, for each item,
    its column and index, so a release can be mapped back."""
    if buckets < 1:
        raise BadInput(f"the number of buckets must be at least 1, got {buckets}")
    columns = columns or grouping_columns(table)
    if not columns:
        raise BadInput("no quasi-identifiers to turn into items: mark the quasi-identifying columns")
    names, codes_per_column, offset = [], [], 0
    for col in columns:
        index, labels = _column_index(table, col, buckets)
        codes_per_column.append(index + offset)
        names += [f"{col}={lab}" for lab in labels]
        offset += len(labels)
    n, d = table.n_rows, len(columns)
    indices = np.column_stack(codes_per_column).astype(np.int64).reshape(-1) if n else np.zeros(0, np.int64)
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    meta = {"source": table.source, "sha256": table.sha256, "item_columns": list(columns), "buckets": buckets}
    return SetValued(indptr, indices, names, table.labels(), meta)


def _column_index(table: Table, col: str, buckets: int) -> tuple[np.ndarray, list[str]]:
    series = table.frame[col]
    if series.isna().any():
        raise BadInput(f"column {col!r} has missing values; remove or fill them before turning it into items")
    kind = table.schema[col].kind
    if kind is Kind.NUMERIC:
        x = series.to_numpy(dtype=float)
        lo, hi = float(x.min()), float(x.max())
        width = (hi - lo) / buckets if hi > lo else 1.0
        index = np.minimum(((x - lo) / width).astype(np.int64), buckets - 1)
        used = np.unique(index)  # keep only buckets that occur, in order
        remap = np.full(buckets, -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        return remap[index], [str(int(b)) for b in used]
    hierarchy = table.schema[col].hierarchy
    order = list(hierarchy.in_order()) if hierarchy is not None else sorted(pd.unique(series.astype(str)))
    position = pd.Index(order).get_indexer(series.astype(str))
    if (position < 0).any():
        missing = series.astype(str)[position < 0].iloc[0]
        raise BadInput(f"value {missing!r} of column {col!r} is not in its hierarchy")
    used = np.unique(position)
    remap = np.full(len(order), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return remap[position], [order[i] for i in used]


def column_sets(table: Table, column: str) -> SetValued:
    """A table's column of kind "item set" as set-valued records (the target, if any, as their labels);
    a clear message when ``column`` is not one."""
    if column not in table.schema.names:
        raise BadInput(f"there is no column {column!r} to take item sets from")
    if table.schema[column].kind is not Kind.ITEMSET:
        raise BadInput(f"column {column!r} is not of kind {Kind.ITEMSET.value}: mark it so first")
    return SetValued.from_column(
        table.frame[column],
        labels=table.labels(),
        meta={"source": table.source, "sha256": table.sha256, "item_column": column},
    )
