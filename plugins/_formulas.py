"""Spreadsheet formulas escaped in text cells and column names (a leading ``=``, ``+``, ``-``, ``@``,
tab or carriage return gets a ``'``), and unescaped when read back: docs/release.md. Shared by the CSV,
TSV and Excel exporters (:mod:`veil.plugins.io.exporters`) and the release Spark writes in parts
(:mod:`veil.plugins._spark.tables`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


_ESCAPED = (*DANGEROUS, "'")


def escape_cell(v):
    if isinstance(v, str) and v.startswith(_ESCAPED):
        return "'" + v
    return v


def unescape_cell(v):
    if isinstance(v, str) and len(v) > 1 and v[0] == "'" and v[1:].startswith(_ESCAPED):
        return v[1:]
    return v


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Every text cell and every column name escaped (a header cell is a cell too)."""
    out = frame.copy(deep=False)
    for c in out.columns:
        if not pd.api.types.is_numeric_dtype(out[c]) and not pd.api.types.is_bool_dtype(out[c]):
            out[c] = _changed(out[c], _starts(out[c], _ESCAPED), escape_cell)
    out.columns = [escape_cell(str(c)) for c in out.columns]
    return out


def unescape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    for c in frame.columns:
        if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c]):
            frame[c] = _changed(frame[c], _starts(frame[c], ("'",)), unescape_cell)
    frame.columns = [unescape_cell(str(c)) for c in frame.columns]
    return frame


def _starts(s: pd.Series, prefixes: tuple[str, ...]) -> np.ndarray:
    """Which cells are text starting with one of ``prefixes``, judged once per distinct value (a
    column of millions of cells and a few hundred values costs a few hundred checks)."""
    codes, distinct = pd.factorize(s)
    hit = np.fromiter((isinstance(v, str) and v.startswith(prefixes) for v in distinct), bool, len(distinct))
    return np.append(hit, False)[codes]  # code -1 (missing) picks the False


def _changed(s: pd.Series, candidates: np.ndarray, cell) -> pd.Series:
    if not candidates.any():
        return s
    if isinstance(s.dtype, pd.CategoricalDtype):  # a generalised column: its cells become text of their own
        s = s.astype(object)
    s = s.copy()
    s[candidates] = s[candidates].map(cell)
    return s
