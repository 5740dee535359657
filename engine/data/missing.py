"""Missing values: which columns hold them, one message naming every one, and what to do with them
when a table is read.

An anonymisation method cannot place a missing cell in a group, so a table with blanks in the
columns a run uses is refused by the method. The choices, made when the file is read and recorded
by its :class:`~veil.engine.data.datasource.DataSource` (so a project and the manifest say which was
taken):

``drop``
    drop every record with a missing value in any column (what the papers do with Adult);
A column marked sensitive keeps its blanks whatever the choice: a blank is never a sensitive value
(diversity and closeness are judged on the known values).

``value``
    treat a missing cell of a text column as a value of its own, :data:`MISSING_VALUE`; a numeric
    column keeps its blanks, so numbers stay numbers (what a blank quasi-identifier means when
    groups are counted is the run's rule, engine/model/blanks.py; a blank sensitive value is never a
    value);
``impute``
    fill a numeric column's blanks with its median and any other column's with its most frequent
    value (the smallest of those tied, as text, so the result does not depend on row order); a
    column without any value keeps its blanks.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..base.errors import BadInput

FILL_CHOICES = ("value", "impute")  # besides dropping the records (DataSource.drop_missing)
MISSING_VALUE = "missing"


def missing_counts(frame: pd.DataFrame, columns: Iterable[str] | None = None) -> dict[str, int]:
    """Records with a missing value, per column that has any (in the frame's column order)."""
    wanted = list(frame.columns) if columns is None else [c for c in frame.columns if c in set(columns)]
    counts = frame[wanted].isna().sum()
    return {str(c): int(n) for c, n in counts.items() if n}


def describe_missing(counts: dict[str, int]) -> str:
    """``"'a' (12 records) and 'b' (1 record)"``: every column with blanks, named."""
    parts = [f"{name!r} ({n:,} record{'s' if n != 1 else ''})" for name, n in counts.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def missing_message(
    frame: pd.DataFrame, columns: Iterable[str], doing: str = "anonymising", instead: str | None = None
) -> str | None:
    """One line naming every one of ``columns`` with missing values and what to do about it; None
    when none has any. ``instead``: the way out besides filling or dropping the blanks (by default,
    a method that keeps them)."""
    counts = missing_counts(frame, columns)
    return blanks_message(counts, doing, instead) if counts else None


def blanks_message(counts: dict[str, int], doing: str = "anonymising", instead: str | None = None) -> str:
    """The line of :func:`missing_message` for records with blanks counted per column (``counts``)."""
    which = "column" if len(counts) == 1 else "columns"
    way = instead or "use a method that keeps blanks, where a blank matches any value"
    return (
        f"{which} {describe_missing(counts)} {'has' if len(counts) == 1 else 'have'} missing values: when "
        f"opening the file, drop those records, treat a blank in a text column as a value or impute it (the "
        f"import options; --drop-missing or --fill-missing on the command line) before {doing}, or {way}"
    )


def fill_missing(frame: pd.DataFrame, how: str, keep: Iterable[str] = ()) -> pd.DataFrame:
    """A copy of ``frame`` with its missing cells filled as ``how`` (``"value"`` or ``"impute"``) says;
    the columns in ``keep`` (those marked sensitive: a blank is never a sensitive value) keep theirs."""
    if how not in FILL_CHOICES:
        raise BadInput(f"missing values are filled by one of {', '.join(FILL_CHOICES)}, not {how!r}")
    out = frame.copy()
    kept = set(keep)
    for name in missing_counts(frame):
        if name in kept:
            continue
        series = frame[name]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if how == "value":
            if not numeric:  # a number column keeps its blanks: a word would make it text
                out[name] = series.astype(object).where(series.notna(), MISSING_VALUE)
        elif numeric:
            out[name] = series.fillna(series.median()) if series.notna().any() else series
        else:
            out[name] = series.fillna(_mode(series)) if series.notna().any() else series
    return out


def _mode(series: pd.Series):
    counts = series.dropna().value_counts()
    top = counts[counts == counts.max()].index
    return min(top, key=lambda v: (str(v), repr(v)))


_EXACT = 2**53  # every whole number up to this is exact as a float


def holds_integers(series: pd.Series) -> bool:
    """Whether ``series`` is a column of whole numbers: of an integer type, or of floats with blanks
    whose known values are all whole (a file's integers read as floats because of their blanks)."""
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_integer_dtype(series):
        return True
    if not pd.api.types.is_float_dtype(series) or not series.isna().any():
        return False
    return _whole(series)


def _whole(series: pd.Series) -> bool:
    x = series.to_numpy(dtype=np.float64, na_value=np.nan)
    known = x[~np.isnan(x)]
    return bool(np.all(np.abs(known) < _EXACT) and np.all(known == np.floor(known)))


def keep_integers(frame: pd.DataFrame, source: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each float column whose column of ``source`` holds integers
    (:func:`holds_integers`) and whose own values are all whole as pandas' nullable integers, so
    its blanks stay blank and its numbers are written without ``.0``; the frame itself when none
    is."""
    out = frame
    for name in frame.columns:
        s = frame[name]
        if not pd.api.types.is_float_dtype(s) or name not in source.columns or not holds_integers(source[name]):
            continue
        if not _whole(s):
            continue
        if out is frame:
            out = frame.copy(deep=False)
        out[name] = s.astype("Int64")
    return out
