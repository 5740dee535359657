"""File formats a release can be written in: CSV, TSV, Excel, Parquet and SPMF transactions.

The engine makes every write atomic and re-checks the file each exporter reads back. CSV, TSV and
Excel escape text cells a spreadsheet would run as a formula (leading ``= + - @``, tab or carriage
return) by prefixing an apostrophe; ``read_back`` reverses it, so a round trip is exact.

CSV and TSV follow RFC 4180: CRLF between records, so a cell holding a lone carriage return is
quoted and reads back whole. Excel stores line breaks as LF and no other control character: a
carriage return inside a cell is written as a line feed, and a cell with another control
character is refused (export CSV or Parquet instead).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import ITEMS_COLUMN, BadInput, Exporter, hookimpl

from .._formulas import escape_cell, escape_formulas, unescape_cell, unescape_formulas
from ._item_lines import read_item_lines, write_item_lines


def csv_bytes(frame: pd.DataFrame, sep: str, escape: bool = False) -> bytes | None:
    """The bytes ``frame.to_csv(index=False, sep=sep, lineterminator="\\r\\n")`` writes, built
    column-wise in Arrow (at much less cost on many rows); None when a column is of a type
    this does not format exactly as pandas does (dates, categories, mixed objects).

    ``escape``: write ``escape_formulas(frame)`` instead, escaping each distinct text value and
    name once while it is formatted (no second pass over the cells)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        return None
    cells = []
    for name in frame.columns:
        text = _csv_cells(frame[name], sep, pa, pc, escape)
        if text is None:
            return None
        cells.append(text)
    names = [escape_cell(str(c)) if escape else str(c) for c in frame.columns]
    header = sep.join(_quoted(n, sep) for n in names) + "\r\n"
    if not cells or len(frame) == 0:
        return header.encode("utf-8") if cells else None
    lines = pc.binary_join_element_wise(*cells, sep)
    lines = pc.binary_join_element_wise(lines, "", "\r\n")  # every record ends with CRLF
    body = pa.concat_arrays(lines.chunks) if isinstance(lines, pa.ChunkedArray) else lines
    offsets = np.frombuffer(body.buffers()[1], dtype=np.int32 if body.type == pa.string() else np.int64)
    offsets = offsets[body.offset : body.offset + len(body) + 1]
    data = body.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]]
    return header.encode("utf-8") + data


def _csv_cells(s: pd.Series, sep: str, pa, pc, escape: bool = False):
    """One column's cells as pandas writes them (missing: empty), or None.

    Text and floats are formatted once per distinct value (Python's repr for floats, as pandas
    writes them; quotes where RFC 4180 needs them) and spread to the cells by their codes."""
    if pd.api.types.is_bool_dtype(s) and s.dtype == bool:
        return pa.array(np.where(s.to_numpy(), "True", "False"), type=pa.string())
    if pd.api.types.is_integer_dtype(s):
        return pc.fill_null(pc.cast(pa.array(s, from_pandas=True), pa.string()), "")
    if pd.api.types.is_float_dtype(s) and s.dtype == np.float64:
        x = s.to_numpy()
        codes, bits = pd.factorize(x.view(np.int64))  # by bit pattern: -0.0 is written apart from 0.0
        shown = ["" if v != v else repr(v) for v in bits.view(np.float64).tolist()]
        return pa.array(shown, type=pa.string()).take(pa.array(codes))
    if pd.api.types.is_string_dtype(s) or s.dtype == object:
        if s.dtype == object and not all(isinstance(v, str) for v in pd.unique(s.dropna())):
            return None  # an object column holding other things than text
        if escape:
            return _by_distinct(s, lambda v: _quoted(escape_cell(v), sep), pa)
        return _by_distinct(s, lambda v: _quoted(v, sep), pa)
    return None


def _by_distinct(s: pd.Series, show, pa):
    codes, distinct = pd.factorize(s)  # missing: code -1, written as an empty cell
    shown = [show(v) for v in distinct.tolist()] + [""]
    return pa.array(shown, type=pa.string()).take(pa.array(np.where(codes < 0, len(shown) - 1, codes)))


def _quoted(cell: str, sep: str) -> str:
    if any(ch in cell for ch in (sep, '"', "\r", "\n")):
        return '"' + cell.replace('"', '""') + '"'
    return cell


class SpreadsheetText:
    """An exporter whose file a spreadsheet opens: its header names are escaped like its cells."""

    def header(self, names):
        return [escape_cell(str(n)) for n in names]


class CsvExporter(SpreadsheetText, Exporter):
    name = "csv"
    preferred = True  # the format a release is written in unless the user chooses another
    title = "CSV (comma-separated)"
    extension = "csv"
    sep = ","

    def write(self, frame, path, params):
        # CRLF (RFC 4180): the writer quotes any cell holding \r or \n, so a lone \r cannot split a record
        fast = csv_bytes(frame, self.sep, escape=True)
        if fast is None:
            escape_formulas(frame).to_csv(path, index=False, sep=self.sep, lineterminator="\r\n", encoding="utf-8")
        else:
            Path(path).write_bytes(fast)

    def read_back(self, path):
        return read_delimited_back(path, self.sep)


def read_delimited_back(path, sep: str) -> pd.DataFrame:
    """The file as :func:`read_delimited_back_nullable` reads it, parsed once by pandas' C reader
    with NumPy types and text as Arrow strings (at less cost on many rows): a column it
    types as whole numbers, as floats without a gap, or as text is the same column either way;
    any other column (whole numbers with gaps, true/false, mixed) is read again on its own the
    careful way. Formula escapes are undone by Arrow, per cell, only where a cell starts with an
    apostrophe."""
    frame = pd.read_csv(path, sep=sep, keep_default_na=False, na_values=[""])
    careful = []
    for i, c in enumerate(frame.columns):
        s = frame[c]
        if s.dtype == np.int64 or (s.dtype == np.float64 and not s.isna().any()):
            continue
        if isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow":
            frame[c] = _unescaped_text(s)
        else:
            careful.append(i)
    if careful:
        again = pd.read_csv(
            path, sep=sep, keep_default_na=False, na_values=[""], dtype_backend="numpy_nullable", usecols=careful
        )
        again = unescape_formulas(_plain_dtypes(again))
        for j, i in enumerate(careful):
            frame.isetitem(i, again.iloc[:, j])
    frame.columns = [unescape_cell(str(c)) for c in frame.columns]
    return frame


def read_delimited_back_nullable(path, sep: str) -> pd.DataFrame:
    """The careful reading: pandas' nullable types, then plain NumPy types where nothing is missing."""
    frame = pd.read_csv(path, sep=sep, keep_default_na=False, na_values=[""], dtype_backend="numpy_nullable")
    return unescape_formulas(_plain_dtypes(frame))


def _unescaped_text(s: pd.Series) -> pd.Series:
    """An Arrow text column as Python strings (missing: None), escaped formula cells restored; each
    distinct value becomes a Python string, and is unescaped, once."""
    import pyarrow as pa

    values = pa.array(s.array) if not hasattr(s.array, "_pa_array") else s.array._pa_array
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.string())
    encoded = values.dictionary_encode()
    distinct = np.array([unescape_cell(v) for v in encoded.dictionary.to_pylist()] + [None], dtype=object)
    codes = encoded.indices.fill_null(len(distinct) - 1).to_numpy(zero_copy_only=False)
    return pd.Series(distinct[codes], index=s.index, name=s.name, dtype=object)


class TsvExporter(CsvExporter):
    name = "tsv"
    title = "TSV (tab-separated)"
    extension = "tsv"
    sep = "\t"


class ExcelExporter(SpreadsheetText, Exporter):
    name = "xlsx"
    title = "Excel workbook"
    extension = "xlsx"

    def write(self, frame, path, params):
        if len(frame) > 1_048_575 or frame.shape[1] > 16_384:
            raise BadInput("the release is larger than an Excel sheet allows; export CSV or Parquet instead")
        for c in frame.columns:
            if "\r" in str(c) or _EXCEL_ILLEGAL.search(str(c)):
                raise BadInput(
                    f"the column name {str(c)!r} holds a carriage return or control character that an "
                    f"Excel header cannot keep; rename the column, or export CSV or Parquet instead"
                )
        escape_formulas(excel_text(frame)).to_excel(path, index=False, engine="openpyxl")

    def read_back(self, path):
        frame = pd.read_excel(path, engine="openpyxl", keep_default_na=False, na_values=[""])
        return unescape_formulas(_plain_dtypes(frame))


_EXCEL_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def excel_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Text as an Excel cell can hold it: CR and CRLF become LF; any other control character is refused."""
    out = frame.copy()
    for j, c in enumerate(out.columns):
        if isinstance(out[c].dtype, pd.CategoricalDtype) and not pd.api.types.is_numeric_dtype(out[c].cat.categories):
            out[c] = out[c].astype(object)  # checked and rewritten cell by cell like any text
        if not (out[c].dtype == object or pd.api.types.is_string_dtype(out[c])):
            continue
        for i, v in enumerate(out[c]):
            if isinstance(v, str) and _EXCEL_ILLEGAL.search(v):
                raise BadInput(
                    f"row {i + 1}, column {c!r} holds a control character that Excel cannot store; "
                    f"export CSV or Parquet instead"
                )
        out[c] = out[c].map(lambda v: v.replace("\r\n", "\n").replace("\r", "\n") if isinstance(v, str) else v)
    return out


class ParquetExporter(Exporter):
    name = "parquet"
    title = "Apache Parquet"
    extension = "parquet"

    def write(self, frame, path, params):
        frame.to_parquet(path, index=False, engine="pyarrow")

    def read_back(self, path):
        return pd.read_parquet(path, engine="pyarrow")


_SPMF_BREAKS = re.compile(r"[\x00-\x1f\x85\u2028\u2029]")
_SPMF_ID = re.compile(r"[0-9]+")


_ITEM_ESCAPES = re.compile(r"[\\=\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _item_text(text: str) -> str:
    """A column name or value in an ``@ITEM`` line: printable, one line, ``=`` and ``\\`` escaped, so
    ``@ITEM=id=column=value`` splits at its unescaped ``=`` and the terminal shows it as it is."""
    return _ITEM_ESCAPES.sub(lambda m: "\\" + m.group() if m.group() in "\\=" else f"\\u{ord(m.group()):04x}", text)


def _item_parts(label: str) -> tuple[str, str | None]:
    """``column`` or ``column=value`` of an ``@ITEM`` line, unescaped (see :func:`_item_text`)."""
    parts, current, i = [], [], 0
    while i < len(label):
        ch = label[i]
        if ch == "\\" and label[i + 1 : i + 2] == "u" and len(label) >= i + 6:
            current.append(chr(int(label[i + 2 : i + 6], 16)))
            i += 6
            continue
        if ch == "\\" and i + 1 < len(label):
            current.append(label[i + 1])
            i += 2
            continue
        if ch == "=" and not parts:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return (parts[0], parts[1]) if len(parts) == 2 else (parts[0], None)


class SpmfExporter(Exporter):
    """One transaction per record: the integer ids of its 1-features (SPMF/FIMI format).

    ``@ITEM=id=column`` (a 0/1 column) and ``@ITEM=id=column=value`` lines keep the feature names,
    printable (``=``, ``\\`` and control characters escaped with ``\\``); a non-binary target column is written as one
    extra item per class (``class=value``), so the file reads back to the same table.

    A set-valued release is SPMF's own shape, one item set per line: its items keep their ids when
    they are integers already (a file read as SPMF comes back as SPMF), and are numbered with
    ``@ITEM=id=name`` lines otherwise. Its first line, a comment SPMF skips (:data:`SETS_MARK`),
    tells the reading back that the lines are records' item sets, not a table's features.
    """

    name = "spmf"
    title = "SPMF transactions"
    extension = "txt"
    writes_sets = True
    SETS_MARK = "% item sets, one record a line"

    def write_sets(self, sets, rows, path, params):
        names = [str(n) for n in sets.item_names]
        for n in names:
            if _SPMF_BREAKS.search(n):
                raise BadInput(
                    f"the item {n!r} holds a line break or control character that SPMF item names "
                    f"cannot hold; export the itemsets format instead"
                )
        numbered = all(_SPMF_ID.fullmatch(n) for n in names)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(self.SETS_MARK + "\n")
            write_item_lines(f, sets, rows, by_name=numbered)  # ids already numbers: written as they are

    def _read_sets(self, path) -> pd.DataFrame:
        """A set-valued release's file: each record's item set as text, by item name, sorted."""
        frame = read_item_lines(path)
        names = frame.attrs.get("item_names") or {}
        if names:
            cells = frame[ITEMS_COLUMN].cat
            frame[ITEMS_COLUMN] = cells.rename_categories(
                [" ".join(sorted(names.get(i, i) for i in text.split())) for text in cells.categories]
            )
        return frame

    @classmethod
    def refuses(cls, release) -> str:
        refused = super().refuses(release)
        qis = [c for c in getattr(release, "quasi_identifiers", ()) if c in release.frame.columns]
        if refused or getattr(release, "sets", None) is not None or not release.frame[qis].isna().any().any():
            return refused
        return (
            "a blank quasi-identifier cell has no item to stand for it in SPMF, so the file would not "
            "read back to the release; export csv, tsv, xlsx or parquet"
        )

    def write(self, frame, path, params):
        for c in frame.columns:
            if _SPMF_BREAKS.search(str(c)):
                raise BadInput(
                    f"the column name {str(c)!r} holds a line break or control character that SPMF "
                    f"item names cannot hold; rename it or export another format"
                )
        features, encoded = [], []
        for c in frame.columns:
            col = frame[c]
            values = pd.unique(col.dropna())
            if set(values.tolist()) <= {0, 1} and not col.isna().any():
                features.append((str(c), None))
                encoded.append(col.to_numpy(dtype=bool))
            else:
                for v in sorted(values.tolist(), key=str):
                    features.append((str(c), v))
                    encoded.append((col == v).to_numpy(dtype=bool))
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("@CONVERTED_FROM_TEXT\n")
            for i, (c, v) in enumerate(features, start=1):
                f.write(f"@ITEM={i}={_item_text(c)}" + ("" if v is None else f"={_item_text(str(v))}") + "\n")
            if not encoded:
                return
            dense = np.column_stack(encoded)
            for row in dense:
                f.write(" ".join(str(j + 1) for j in np.flatnonzero(row)) + "\n")

    def read_back(self, path):
        with open(path, encoding="utf-8") as f:
            if f.readline().rstrip("\n") == self.SETS_MARK:
                return self._read_sets(path)
        names, rows = {}, []
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("@ITEM="):
                    _, ident, label = line.split("=", 2)
                    if "\x1f" in label:  # written by an earlier Veil: column and value split by a control character
                        col, _, value = label.partition("\x1f")
                        names[int(ident)] = (col, value)
                    else:
                        names[int(ident)] = _item_parts(label)
                elif not line.startswith("@"):
                    rows.append([int(t) for t in line.split()])
        columns: dict[str, list] = {}
        for ident in sorted(names):
            col, value = names[ident]
            columns.setdefault(col, [])
        data = {c: [0] * len(rows) for c in columns}
        for r, items in enumerate(rows):
            for ident in items:
                col, value = names[ident]
                data[col][r] = 1 if value is None else _typed(value)
        return pd.DataFrame(data)


def _typed(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _plain_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    """Nullable integer columns without missing values back to int64, so equal data compares equal."""
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_integer_dtype(s) and not s.isna().any():
            frame[c] = s.astype(np.int64)
        elif pd.api.types.is_float_dtype(s) and not s.isna().any():
            frame[c] = s.astype(np.float64)
        elif pd.api.types.is_string_dtype(s) or s.dtype == object:
            frame[c] = s.astype(object).where(s.notna(), None)
    return frame


@hookimpl
def veil_register_exporters():
    return [CsvExporter, TsvExporter, ExcelExporter, ParquetExporter, SpmfExporter]
