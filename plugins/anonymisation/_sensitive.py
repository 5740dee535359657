"""The sensitive columns a search over groups judges, shared by Mondrian and global recoding: which
columns (:func:`sensitive_columns`), whether the model reads them at all (:func:`reads_sensitive`),
each record's sensitive code with the column's distribution (:func:`sensitive_view`), and each
record's survey weight when a model judges groups by them (:func:`survey_of`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.engine import GroupView, Role, weights_of

from ._regions import python_value


def sensitive_columns(table, sensitive) -> list[str]:
    """The sensitive columns a search judges: ``sensitive`` (a name or several), else every column
    marked sensitive."""
    if sensitive is None:
        return list(table.schema.by_role(Role.SENSITIVE))
    return [sensitive] if isinstance(sensitive, str) else list(sensitive)


def reads_sensitive(model) -> bool:
    """Whether any of the (possibly combined) model's models judges sensitive values; one that does
    without saying so finds no sensitive column and refuses, never judges wrongly."""
    return any(getattr(m.plugin, "needs_sensitive", True) for m in getattr(model, "models", (model,)))


def sensitive_view(table, sensitive):
    """Every record's sensitive code and Q for one column, as GroupView.from_labels would give them
    (first-appearance order for categories, ascending for numbers), from one factorisation, with the
    column's declared hierarchy."""
    if sensitive is None:
        marked = table.schema.by_role(Role.SENSITIVE)
        sensitive = marked[0] if marked else None
    zeros = np.zeros(table.n_rows, dtype=np.int64)
    if sensitive is None:
        return GroupView.from_codes(zeros, None, None)
    series = table.frame[sensitive]
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    known = codes >= 0  # a blank is never a sensitive value: code −1, left out of Q and every count
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    values = np.asarray(uniques)
    if numeric:
        order = np.argsort(values, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes, values = np.where(known, rank[np.maximum(codes, 0)] if len(rank) else -1, -1), values[order]
    q = np.bincount(codes[known], minlength=len(values)) / max(int(known.sum()), 1)
    return GroupView.from_codes(
        zeros,
        codes.astype(np.int64),
        q,
        tuple(python_value(v) for v in values),
        numeric,
        hierarchy=table.schema[sensitive].hierarchy,
    )


def survey_of(table, model) -> np.ndarray | None:
    """Each record's survey weight (the column marked ``weight``) when one of the (possibly combined)
    model's models reads them (``reads_weights``), else None."""
    if not getattr(model, "reads_weights", False) or table.schema.weight is None:
        return None
    return weights_of(table.frame, table.schema.weight)
