"""Built-in importers: delimited text, Excel, Parquet, ARFF, transactions, LIBSVM and MATLAB files.

Every importer opens its file read-only and never writes to it. Every problem a user can cause
(a wrong encoding, a ragged line, a missing variable) becomes one :class:`BadInput` sentence that
names the file and, where there is one, the line or column. Roles are left at the detected default
except for a file's known label column (LIBSVM ``label``, MATLAB ``Y``), which becomes the target.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import io
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import (
    BadInput,
    ImportOptions,
    Importer,
    Role,
    Table,
    check_column_names,
    hookimpl,
    open_regular,
    read_transactions,
)

MISSING = ("", "?")  # cell texts that mean "no value"
MAX_DENSE_CELLS = 100_000_000  # LIBSVM and sparse .mat data are held densely: refuse beyond ~800 MB
SAMPLE_BYTES = 1 << 16  # how much text delimiter and header detection look at
SAMPLE_ROWS = 1000

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_LEADING_ZERO = r"[+-]?0\d"  # codes such as ZIP 02139 stay text: a number would lose the zero
_DELIMITERS = ("\t", ";", "|", ",")  # preference order when two are equally consistent
_WHITESPACE = " "  # options.delimiter " " means runs of spaces and tabs
_ONE_COLUMN = "\x1f"  # ASCII unit separator: splits a one-column file nowhere
_DELIMITER_ALIASES = {"\\t": "\t", "tab": "\t", "space": _WHITESPACE, "whitespace": _WHITESPACE}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


# -- text decoding ------------------------------------------------------------------------------


def decode_text(data: bytes, name: str, encoding: str | None = None) -> str:
    """Decode a file's bytes: the given encoding, else a BOM's, else UTF-8, else cp1252.

    cp1252 (the Windows superset of latin-1) leaves five bytes undefined, so a file that is neither
    UTF-8 nor cp1252 is refused with the offset of the first byte that does not decode.
    """
    if encoding:
        return _decode(data, name, encoding)
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return _decode(data, name, enc)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"{name}: byte 0x{data[exc.start]:02x} at offset {exc.start} is neither UTF-8 nor "
            f"cp1252 text; choose the file's encoding"
        ) from None


def _decode(data: bytes, name: str, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except LookupError:
        raise BadInput(f"unknown encoding {encoding!r} for {name}; choose another encoding") from None
    except UnicodeDecodeError as exc:
        shift = len(codecs.BOM_UTF8) if encoding.replace("_", "-").lower() == "utf-8-sig" else 0
        raise BadInput(
            f"{name} is not valid {encoding}: the byte at offset {exc.start + shift} does not decode; "
            f"choose another encoding"
        ) from None


def _head_text(head: bytes) -> str:
    """The first bytes of a file as text, for sniffing (a character cut at the end is replaced)."""
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return head.decode(enc, errors="replace")
    return head.decode("utf-8", errors="replace")


def _looks_binary(head: bytes) -> bool:
    return b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


# -- cells to a typed frame (shared by the text and Excel importers) ----------------------------


def _is_missing(cell) -> bool:
    if cell is None:
        return True
    if isinstance(cell, str):
        return cell.strip() in MISSING
    return isinstance(cell, float) and np.isnan(cell)


def _is_number(cell) -> bool:
    if isinstance(cell, str):
        return bool(_NUMBER_RE.fullmatch(cell.strip()))
    return isinstance(cell, (int, float, np.number)) and not isinstance(cell, (bool, np.bool_)) and cell == cell


def _is_name(cell) -> bool:
    return isinstance(cell, str) and not _is_missing(cell) and not _is_number(cell)


def detect_header(rows: list[list]) -> bool:
    """Whether the first row names the columns.

    It does when no cell of it is a number and either some column is numeric below a textual first
    cell, or (an all-text table) no first-row cell recurs in its column below.
    """
    first, body = rows[0], rows[1:SAMPLE_ROWS]
    if any(_is_number(c) for c in first):
        return False
    if not body:
        return all(_is_name(c) or _is_missing(c) for c in first)
    for j, cell in enumerate(first):
        below = [r[j] for r in body if j < len(r) and not _is_missing(r[j])]
        if _is_name(cell) and below and all(_is_number(v) for v in below):
            return True
    return all(_is_name(c) and all(j >= len(r) or r[j] != c for r in body) for j, c in enumerate(first))


def column_names(rows: list[list], header: bool | None, options: ImportOptions, name: str) -> tuple[list[str], int]:
    """The column names and how many leading rows they took (0 or 1)."""
    n_cols = len(rows[0])
    if header is None:
        header = detect_header(rows)
    if header and len(rows) == 1:
        raise BadInput(f"{name} has a header row but no data rows")
    if options.names is not None:
        if len(options.names) != n_cols:
            raise BadInput(f"{name} has {n_cols} columns, but {len(options.names)} column names were given")
        names = [str(n) for n in options.names]
    elif header:
        names = ["" if _is_missing(c) and not isinstance(c, str) else str(c).strip() for c in rows[0]]
    else:
        names = [f"col{j + 1}" for j in range(n_cols)]
    try:
        check_column_names(names)
    except BadInput as exc:
        raise BadInput(f"{name}: {exc}") from None
    return names, int(bool(header))


def typed_text(s: pd.Series) -> pd.Series:
    """A column of strings as numbers when every present value is a plain number, else as text.

    Cells are stripped; empty and ``?`` cells become missing. Numbers with a leading zero (codes
    such as ZIP 02139) stay text, and so do words such as ``nan`` and ``inf``.

    The rules are applied to the column's distinct values, then spread to its cells by their codes:
    a column of 2,000,000 cells and 40 distinct values costs what 40 cells cost.
    """
    s = s.astype("str")
    codes, uniques = pd.factorize(s)
    raw = pd.Series(uniques, dtype="str")
    distinct = raw.str.strip()
    distinct = distinct.mask(distinct.isin(MISSING))
    present = distinct.dropna()
    if present.empty:
        return pd.Series(np.nan, index=s.index, dtype=float)
    if not present.str.fullmatch(_NUMBER).all() or present.str.match(_LEADING_ZERO).any():
        if distinct.eq(raw).fillna(False).all():
            return s  # text with nothing to strip and no missing marker: as read
        s = s.str.strip()
        return s.mask(s.isin(MISSING))
    integral = len(present) == len(distinct) and (codes >= 0).all() and present.str.fullmatch(r"[+-]?\d{1,18}").all()
    values = distinct.astype(np.int64 if integral else float).to_numpy()
    if integral:
        return pd.Series(values[codes], index=s.index)
    return pd.Series(np.where(codes >= 0, values[codes], np.nan), index=s.index)


def typed_cells(values: list) -> pd.Series:
    """A column of Python cells (as Excel gives them) with one dtype: bool, date, number or text."""
    cells = [None if _is_missing(c) else (c.strip() if isinstance(c, str) else c) for c in values]
    present = [c for c in cells if c is not None]
    if not present:
        return pd.Series(np.nan, index=range(len(cells)), dtype=float)
    if all(isinstance(c, (bool, np.bool_)) for c in present):
        return pd.Series(cells, dtype="boolean" if len(present) < len(cells) else bool)
    if all(isinstance(c, (dt.date, np.datetime64)) for c in present):
        return pd.to_datetime(pd.Series(cells, dtype=object))
    if all(_is_number(c) for c in present):
        if any(isinstance(c, str) for c in present):  # numbers typed as text in some cells
            return typed_text(pd.Series([None if c is None else str(c) for c in cells], dtype="str"))
        return pd.to_numeric(pd.Series(cells, dtype=object))
    return pd.Series([None if c is None else str(c) for c in cells], dtype="str")


def _wrap(name: str, exc: Exception, what: str) -> BadInput:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return BadInput(f"{name} is not a readable {what} file: {detail}")


# -- delimited text -----------------------------------------------------------------------------


def _sample(text: str) -> str:
    if len(text) <= SAMPLE_BYTES:
        return text
    cut = text.rfind("\n", 0, SAMPLE_BYTES)
    return text[: cut if cut > 0 else SAMPLE_BYTES]


def _sample_rows(sample: str, delimiter: str) -> list[list[str]]:
    if delimiter == _WHITESPACE:
        return [line.split() for line in sample.split("\n") if line.strip()]
    try:
        reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter, skipinitialspace=True)
        return [r for r in reader if r and not (len(r) == 1 and not r[0].strip())]
    except csv.Error:
        return []


def detect_delimiter(text: str) -> str:
    """The field separator among tab ; | , (then whitespace) that splits the most lines alike.

    Each candidate is scored by the share of sample lines having its most common field count, when
    that count is above one and the first line (usually the header) has it too, or at least 90% of
    the lines have it (so that a stray first line is reported rather than read as one column). Ties
    go to the larger field count, then to the order above. Without a candidate the text is one
    column, split on a control character that text files do not hold.
    """
    sample = _sample(text)
    best, best_score = None, (0.0, 0)
    for d in _DELIMITERS:
        score = _consistency(_sample_rows(sample, d))
        if score > best_score:
            best, best_score = d, score
    if best is not None:
        return best
    if _consistency(_sample_rows(sample, _WHITESPACE))[0] > 0:
        return _WHITESPACE
    return _ONE_COLUMN


def _consistency(rows: list[list[str]]) -> tuple[float, int]:
    """Share of rows with the most common field count, and that count (0, 0 when it does not count)."""
    if not rows:
        return 0.0, 0
    mode, freq = Counter(len(r) for r in rows).most_common(1)[0]
    share = freq / len(rows)
    return (share, mode) if mode > 1 and (len(rows[0]) == mode or share >= 0.9) else (0.0, 0)


def _field_counts(text: str, delimiter: str) -> list[tuple[int, int]]:
    """(line number, field count) of every non-blank line."""
    if delimiter == _WHITESPACE:
        return [(i, len(line.split())) for i, line in enumerate(text.split("\n"), 1) if line.strip()]
    if '"' not in text:
        return [(i, line.count(delimiter) + 1) for i, line in enumerate(text.split("\n"), 1) if line]
    out, line = [], 0
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    try:
        for row in reader:
            start, line = line + 1, reader.line_num
            if row and not (len(row) == 1 and not row[0].strip()):
                out.append((start, len(row)))
    except csv.Error as exc:
        raise BadInput(f"line {reader.line_num + 1} cannot be split into fields ({exc})") from None
    return out


def check_rectangular(text: str, delimiter: str, name: str) -> int:
    """The number of fields every line has; a line with another count is refused by number."""
    try:
        counts = _field_counts(text, delimiter)
    except BadInput as exc:
        raise BadInput(f"{name} {exc}") from None
    if not counts:
        raise BadInput(f"{name} holds no data")
    expected = Counter(k for _, k in counts).most_common(1)[0][0]
    for line, k in counts:
        if k != expected:
            raise BadInput(
                f"{name} line {line} has {k} fields, but the other lines have {expected}; "
                f"every line needs the same number of fields"
            )
    return expected


def read_delimited(path: Path, options: ImportOptions) -> Table:
    """Read CSV/TSV-like text into a Table (see :class:`CsvImporter`)."""
    name = path.name
    text = decode_text(path.read_bytes(), name, options.encoding).removeprefix("\ufeff")
    if options.skip_rows:
        lines = text.splitlines(keepends=True)
        if options.skip_rows >= len(lines):
            raise BadInput(f"{name} has {len(lines)} lines; skipping {options.skip_rows} leaves nothing to read")
        text = "".join(lines[options.skip_rows :])
    if "\x00" in text:
        raise BadInput(
            f"{name} contains NUL characters, so it is not delimited text in this encoding; "
            f"choose its encoding (UTF-16 without a byte-order mark?) or its format"
        )
    delimiter = _delimiter_option(options.delimiter, name) or detect_delimiter(text)
    raw = _parse_plain(text, delimiter)
    if raw is None:  # quotes, blank or ragged lines: the careful reader, which names a bad line
        blank = r"[ \r\f\v]" if delimiter == "\t" else r"[ \t\r\f\v]"  # in TSV a tab line is a row of gaps
        text = re.sub(rf"(?m)^{blank}+$", "", text)  # whitespace-only lines are blank lines: skipped
        n_fields = check_rectangular(text, delimiter, name)
        raw = _parse(text, delimiter, n_fields, name)
    n_fields = raw.shape[1]
    if n_fields > 1 and (raw[n_fields - 1].str.strip() == "").all():
        raw = raw.iloc[:, : n_fields - 1]  # every line ends with the delimiter: no column there
    if raw.apply(lambda col: col.str.strip() == "").to_numpy().all():
        raise BadInput(f"{name} holds no data: its lines are blank or hold only empty fields")
    head = raw.iloc[:SAMPLE_ROWS].to_numpy(dtype=object).tolist()
    names, skip = column_names(head, options.header, options, name)
    body = raw.iloc[skip:].reset_index(drop=True)
    frame = pd.DataFrame({n: typed_text(body[j]) for n, j in zip(names, body.columns)})
    return Table.from_frame(frame)


def _refuse_line_break(delimiter: str, name: str) -> None:
    """A delimiter holding a line break would split records, not fields (``"\\n".isspace()`` is true,
    so it would otherwise pass for "whitespace")."""
    if len(f"a{delimiter}b".splitlines()) > 1:
        raise BadInput(f"cannot split {name} on {delimiter!r}: a line break separates records, not fields")


def _delimiter_option(delimiter: str | None, name: str) -> str | None:
    if delimiter is None:
        return None
    delimiter = _DELIMITER_ALIASES.get(delimiter.lower(), delimiter)
    _refuse_line_break(delimiter, name)
    if delimiter.isspace():
        return _WHITESPACE if delimiter != "\t" else "\t"
    if len(delimiter) != 1 or delimiter in "\"\r\n":
        raise BadInput(f"cannot split {name} on {delimiter!r}: a delimiter is one character other than a quote")
    return delimiter


def _parse_plain(text: str, delimiter: str) -> pd.DataFrame | None:
    """Text without quotes whose every line has the same number of fields, read by Arrow's CSV
    reader (multi-threaded, at less cost than pandas' reader on many rows); None for
    anything else (quotes, whitespace-separated fields, blank or ragged lines), which the careful
    reader then reads or refuses with the line's number.

    Cells stay text, unstripped; :func:`typed_text` strips them as it does the careful reader's."""
    if delimiter in (_WHITESPACE, _ONE_COLUMN) or '"' in text or "\r\n" not in text and "\r" in text:
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return None
    try:
        table = pcsv.read_csv(
            io.BytesIO(text.encode("utf-8")),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(strings_can_be_null=False, column_types=_all_text(text, delimiter, pa)),
        )
    except (pa.ArrowInvalid, ValueError):
        return None
    if table.num_rows == 0:
        return None
    frame = table.to_pandas(types_mapper={pa.string(): pd.StringDtype("pyarrow", na_value=np.nan)}.get)
    frame.columns = range(frame.shape[1])
    return frame


def _all_text(text: str, delimiter: str, pa) -> dict:
    """Every column as text, the columns counted on the first line that is not blank (Arrow skips blank
    lines: counted on one, the other columns would be typed by their values)."""
    found = re.search(r"[^\r\n]*\S[^\r\n]*", text)
    first = found.group(0) if found else ""
    return {f"f{j}": pa.string() for j in range(first.count(delimiter) + 1)}


def _parse(text: str, delimiter: str, n_fields: int, name: str) -> pd.DataFrame:
    sep = r"\s+" if delimiter == _WHITESPACE else delimiter
    try:
        return pd.read_csv(
            io.StringIO(text),
            sep=sep,
            header=None,
            names=range(n_fields),
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            skip_blank_lines=True,
            quotechar='"',
            engine="c",
        )
    except pd.errors.ParserError as exc:
        found = re.search(r"line (\d+), saw (\d+)", str(exc))
        if found:
            raise BadInput(
                f"{name} line {found[1]} has {found[2]} fields, but the other lines have "
                f"{n_fields}; every line needs the same number of fields"
            ) from None
        raise _wrap(name, exc, "delimited text") from None


class CsvImporter(Importer):
    """Delimited text: CSV, TSV and the UCI-style ``.data`` files.

    Detects the encoding (BOM, else UTF-8, else cp1252), the delimiter (tab ; | , or whitespace),
    and the header (a textual first row over numeric columns); strips spaces around fields (UCI
    ``adult.data`` separates with ", "); reads empty and ``?`` cells as missing. Headerless columns
    are named ``col1`` … ``colN`` unless ``options.names`` gives names (which also replace a
    header's). Lines with a different number of fields are refused by line number.

    Its ``priority`` is the lowest, so specific formats win when a ``.txt`` or ``.dat`` file could be
    either; besides its extensions it accepts any text whose lines split alike on a delimiter.
    """

    name = "csv"
    title = "Delimited text (CSV, TSV)"
    description = "Comma-, semicolon-, tab-, pipe- or space-separated text with or without a header."
    extensions = (".csv", ".tsv", ".tab", ".txt", ".data", ".dat")
    priority = -10

    def sniff(self, path, head: bytes) -> bool:
        lower = str(path).lower()
        if lower.endswith((".csv", ".tsv", ".tab")):
            return True  # even when binary-looking: reading it explains what is wrong
        if _looks_binary(head):
            return False
        if lower.endswith(self.extensions):
            return True
        lines = _head_text(head).split("\n")
        sample = "\n".join(lines[:-1] if len(head) >= SAMPLE_BYTES else lines)  # drop a cut last line
        return any(_consistency(_sample_rows(sample, d))[0] == 1.0 for d in _DELIMITERS)

    def read(self, path, options=None) -> Table:
        table = read_delimited(Path(path), options or ImportOptions())
        if str(path).lower().endswith(TransactionsImporter.extensions) and not (options and options.fmt):
            with open_regular(path) as f:  # an item-set file's extension: say why its lines were read as rows
                head = f.read(SAMPLE_BYTES)
            kind, why = transaction_grammar(head, len(head) >= SAMPLE_BYTES)
            if kind == "table":
                table.meta["read_as"] = why
        return table


# -- Excel --------------------------------------------------------------------------------------


class ExcelImporter(Importer):
    """An Excel workbook (.xlsx, .xlsm) read through openpyxl: one sheet (``options.sheet``, else
    the first), with the header detected as for text and typed cells kept (numbers, dates, booleans)."""

    name = "excel"
    title = "Excel workbook"
    description = "A sheet of an .xlsx workbook."
    extensions = (".xlsx", ".xlsm")

    def read(self, path, options=None) -> Table:
        path, options = Path(path), options or ImportOptions()
        try:
            with pd.ExcelFile(path, engine="openpyxl") as book:
                sheet = _sheet(book.sheet_names, options.sheet, path.name)
                raw = pd.read_excel(book, sheet_name=sheet, header=None, dtype=object)
        except (BadInput, MemoryError):
            raise
        except Exception as exc:
            raise _wrap(path.name, exc, "Excel (.xlsx)") from None
        where = f"{path.name} sheet {sheet!r}"
        if raw.isna().to_numpy().any():  # an empty cell may be a formula whose value was never computed
            cell = _uncomputed_formula(path, sheet)
            if cell:
                raise BadInput(
                    f"{where} cell {cell} holds a formula whose value was never computed (the program "
                    f"that wrote the file does not calculate), so Veil would read it as empty; open and "
                    f"save the workbook in a spreadsheet program, or export the sheet as CSV"
                )
        raw = raw.dropna(how="all").dropna(axis=1, how="all")
        if raw.empty:
            raise BadInput(f"{where} holds no data")
        rows = raw.to_numpy(dtype=object).tolist()
        names, skip = column_names(rows, options.header, options, where)
        columns = list(zip(*rows[skip:]))
        frame = pd.DataFrame({n: typed_cells(list(col)) for n, col in zip(names, columns)})
        return Table.from_frame(frame)


def _uncomputed_formula(path: Path, sheet: str) -> str | None:
    """The first cell of ``sheet`` holding a formula without a cached value (read as empty), or None."""
    import openpyxl

    formulas = openpyxl.load_workbook(path, read_only=True, data_only=False)
    values = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        for row_f, row_v in zip(formulas[sheet].iter_rows(), values[sheet].iter_rows()):
            for f, v in zip(row_f, row_v):
                if f.data_type == "f" and v.value is None:
                    return f.coordinate
    finally:
        formulas.close()
        values.close()
    return None


def _sheet(sheets: list[str], wanted: str | None, name: str) -> str:
    if wanted is None:
        return sheets[0]
    if wanted in sheets:
        return wanted
    if str(wanted).isdigit() and 1 <= int(wanted) <= len(sheets):
        return sheets[int(wanted) - 1]
    raise BadInput(f"{name} has no sheet {wanted!r}; its sheets are {', '.join(sheets)}")


# -- Parquet ------------------------------------------------------------------------------------


class ParquetImporter(Importer):
    """An Apache Parquet file read through pyarrow; a stored index (named, or other than 0 … n-1)
    becomes leading columns."""

    name = "parquet"
    title = "Parquet"
    description = "A columnar Parquet file."
    extensions = (".parquet", ".pq")

    def sniff(self, path, head: bytes) -> bool:
        return head.startswith(b"PAR1") or super().sniff(path, head)

    def read(self, path, options=None) -> Table:
        path = Path(path)
        try:
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            nested = next(
                (
                    f
                    for f in schema
                    if f.type.num_fields or str(f.type).startswith(("list", "large_list", "map", "struct"))
                ),
                None,
            )
            if nested is None:
                frame = pd.read_parquet(path, engine="pyarrow")
        except MemoryError:
            raise
        except Exception as exc:
            raise _wrap(path.name, exc, "Parquet") from None
        if nested is not None:
            raise BadInput(
                f"{path.name}: column {nested.name!r} holds {_arrow_kind(nested.type)}, not one value per "
                f"record; Veil reads flat columns only (flatten or drop it before reading)"
            )
        if frame.shape[1] == 0:
            raise BadInput(f"{path.name} has no columns: there is nothing to read")
        if len(frame) == 0:
            raise BadInput(
                f"{path.name} has columns ({', '.join(map(str, frame.columns[:5]))}"
                f"{', …' if frame.shape[1] > 5 else ''}) but no records: there is nothing to anonymise"
            )
        if any(n is not None for n in frame.index.names) or not frame.index.equals(pd.RangeIndex(len(frame))):
            frame = frame.reset_index()  # a stored index is data (pandas writes it as columns)
        try:
            check_column_names(list(frame.columns))
        except BadInput as exc:
            raise BadInput(f"{path.name}: {exc}") from None
        return Table.from_frame(frame)


def _arrow_kind(t) -> str:
    text = str(t)
    for prefix, what in (
        ("struct", "records (a struct)"),
        ("map", "key–value maps (a map)"),
        ("large_list", "lists"),
        ("list", "lists"),
        ("fixed_size_list", "lists"),
    ):
        if text.startswith(prefix):
            return what
    return f"values of the nested type {text}"


# -- ARFF ---------------------------------------------------------------------------------------

_ATTRIBUTE = re.compile(r"^\s*@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(\S+)", re.I | re.M)


class ArffImporter(Importer):
    """A Weka ARFF file read through :func:`scipy.io.arff.loadarff`.

    Nominal attributes become categorical columns with the declared categories, ``integer``
    attributes without missing values become integers, and ``?`` is missing. String and relational
    attributes and sparse ARFF are not supported by scipy and are refused.
    """

    name = "arff"
    title = "ARFF (Weka)"
    description = "Attribute-Relation File Format with numeric, nominal and date attributes."
    extensions = (".arff",)

    def read(self, path, options=None) -> Table:
        from scipy.io import arff

        path, options = Path(path), options or ImportOptions()
        text = decode_text(path.read_bytes(), path.name, options.encoding)
        try:
            data, meta = arff.loadarff(io.StringIO(_ascii_escape(text)))
        except MemoryError:
            raise
        except Exception as exc:
            raise _wrap(path.name, exc, "ARFF") from None
        names = [_ascii_unescape(n) for n in meta.names()]
        try:
            check_column_names(names)
        except BadInput as exc:
            raise BadInput(f"{path.name}: {exc}") from None
        integers = {n.strip("'\"") for n, t in _ATTRIBUTE.findall(text) if t.lower() == "integer"}
        frame = pd.DataFrame({n: _arff_column(data[e], meta[e], n in integers) for n, e in zip(names, meta.names())})
        return Table.from_frame(frame)


def _ascii_escape(text: str) -> str:
    """scipy keeps nominal values as ASCII bytes: carry other characters as ASCII tokens."""
    return re.sub(r"[^\x00-\x7f]", lambda m: f"\x1au{ord(m[0]):x}\x1a", text)


def _ascii_unescape(text: str) -> str:
    return re.sub(r"\x1au([0-9a-f]+)\x1a", lambda m: chr(int(m[1], 16)), text)


def _arff_column(values: np.ndarray, declared, integer: bool) -> pd.Series:
    kind, categories = declared
    if kind == "nominal":
        text = [_ascii_unescape(v.decode("ascii") if isinstance(v, bytes) else str(v)) for v in values]
        categories = [_ascii_unescape(c) for c in categories]
        return pd.Series(pd.Categorical([None if v == "?" else v for v in text], categories=categories))
    s = pd.Series(values)
    if integer and s.notna().all() and np.all(np.mod(s.to_numpy(dtype=float), 1) == 0):
        return s.astype(np.int64)
    return s


# -- transactions -------------------------------------------------------------------------------

_TRANSACTION_LINE = re.compile(rb"\d+(?:[ ,]\d+)*[ ,]?")
_COMMENT = (b"#", b"%", b"@")
_ID = re.compile(rb"\d+")
_NUMBER_TOKEN = re.compile(rb"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _grammar_lines(head: bytes, truncated: bool) -> list[tuple[int, bytes]]:
    """The sample's lines that hold items (comments and blank lines left out), with their numbers."""
    lines = head.replace(b"\r", b"").split(b"\n")
    if truncated and len(lines) > 1:
        lines = lines[:-1]
    return [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip() and not ln.startswith(_COMMENT)]


def transaction_grammar(head: bytes, truncated: bool, spmf: bool = False) -> tuple[str | None, str]:
    """What the lines of an item-set file (``.dat``, ``.spmf``, ``.txt``) are, by their grammar, and
    why: ``("transactions", …)``, ``("table", …)``, ``("neither", why)``, or ``(None, "")`` when the
    lines are not numbers separated by spaces or commas (a table of words, say: the CSV reader's).

    Transactions (SPMF, FIMI): every line lists whole-number item ids (0 or more) separated by single
    spaces or commas. Lines of different lengths can only be transactions; lines of one length are
    transactions when each lists its items in increasing order (SPMF's rule) or the file is ``.spmf``,
    and otherwise a table (a file of equal rows of numbers). A line with a negative or fractional
    number, or a quoted field, is no transaction: with lines of equal length it is a table, otherwise
    the file is neither, and is refused naming the line."""
    lines = _grammar_lines(head, truncated)
    if not lines:
        return None, ""
    sep = rb"," if any(b"," in ln for _, ln in lines) else rb" "
    rows = [(i, [t.strip() for t in re.split(sep + rb"+", ln.strip(b" ,"))]) for i, ln in lines]
    lengths = {len(r) for _, r in rows}
    odd = None  # the first field that is no item id: (line, text, what it is)
    for i, row in rows:
        for t in row:
            if _ID.fullmatch(t):
                continue
            if _NUMBER_TOKEN.fullmatch(t):
                what = "a negative number" if t.startswith(b"-") else "not a whole number"
            elif t[:1] in (b'"', b"'") or t[-1:] in (b'"', b"'"):
                what = "a quoted field"
            else:
                return None, ""  # words: items of text, or a table's cells; not this grammar's to judge
            odd = odd or (i, t.decode("utf-8", "replace"), what)
    if odd is not None:
        if len(lengths) == 1:
            return "table", (
                f"a table of {lengths.pop()} columns: line {odd[0]} holds {odd[1]!r}, {odd[2]}, so its "
                f"lines are rows, not item sets"
            )
        return "neither", (
            f"line {odd[0]} holds {odd[1]!r}, {odd[2]}: item ids are whole numbers 0 or more, so it "
            f"is no list of transactions, and its lines have {min(lengths)} to {max(lengths)} fields, "
            f"so it is no table either"
        )
    ids = [[int(t) for t in r] for _, r in rows]
    repeats = next(((i, r) for (i, _), r in zip(rows, ids) if len(set(r)) != len(r)), None)
    if len(lengths) > 1:
        why = "transactions: one item set per line, lines of different lengths"
        if repeats:
            why += f" (line {repeats[0]} repeats an item: it counts once)"
        return "transactions", why
    if spmf and max(lengths) > 0:
        return "transactions", "transactions: one item set per line (an SPMF file)"
    if max(lengths) > 1 and not repeats and all(a < b for r in ids for a, b in zip(r, r[1:])):
        return "transactions", "transactions: one item set per line, each listing its items in increasing order"
    reason = f"line {repeats[0]} repeats a number" if repeats else "some line lists its numbers out of order"
    return "table", (
        f"a table of {lengths.pop()} columns: its lines have one length and {reason}, so they are rows "
        f"(give --input-format transactions to read each line as an item set)"
    )


def looks_like_transactions(head: bytes, truncated: bool) -> bool:
    """The lines follow the transaction grammar (:func:`transaction_grammar`)."""
    return transaction_grammar(head, truncated)[0] == "transactions"


class TransactionsImporter(Importer):
    """Set-valued data in the SPMF/FIMI layout: one transaction per line, integer items separated
    by spaces or commas; lines starting with ``#``, ``%`` or ``@`` are SPMF comments. Returns a
    :class:`BinaryMatrix` whose features are the items. ``options.delimiter`` (space or comma)
    overrides detection."""

    name = "transactions"
    title = "Transactions (SPMF, FIMI)"
    description = "One transaction per line, items as integers separated by spaces or commas."
    extensions = (".dat", ".spmf", ".txt")

    def sniff(self, path, head: bytes) -> bool:
        """Claims what reads as transactions, and what is neither transactions nor a table (so that
        reading it refuses it by its grammar rather than a table's reader by a ragged line)."""
        if not str(path).lower().endswith(self.extensions):
            return False
        kind, _ = transaction_grammar(head, len(head) >= SAMPLE_BYTES, str(path).lower().endswith(".spmf"))
        return kind in ("transactions", "neither")

    def read(self, path, options=None):
        options = options or ImportOptions()
        path = Path(path)
        with open_regular(path) as f:
            head = f.read(SAMPLE_BYTES)
        kind, why = transaction_grammar(head, len(head) >= SAMPLE_BYTES, path.name.lower().endswith(".spmf"))
        if kind == "neither":
            raise BadInput(f"{path.name} is neither transactions nor a table: {why}")
        sep = options.delimiter
        if sep is not None:
            sep = _DELIMITER_ALIASES.get(sep.lower(), sep)
            _refuse_line_break(sep, Path(path).name)
            if sep.isspace():
                sep = " "
            if sep not in (" ", ","):
                raise BadInput(f"transactions in {Path(path).name} are separated by spaces or commas, not {sep!r}")
        matrix = read_transactions(path, sep=sep)
        matrix.meta["read_as"] = why if kind == "transactions" else "transactions (as asked)"
        return matrix


# -- LIBSVM -------------------------------------------------------------------------------------

_SVM_LINE = re.compile(r"\s*[-+]?[\w.+-]+(?:,[-+]?[\w.+-]+)*(?:\s+qid:\d+)?(?:\s+\d+:\S+)*\s*(?:#.*)?")


class LibsvmImporter(Importer):
    """A LIBSVM/SVMlight file read through :func:`sklearn.datasets.load_svmlight_file`.

    The sparse rows are held densely, as columns ``f1`` … ``fm`` (m is the largest feature index,
    indices counted from one unless a zero index appears) plus a ``label`` column that becomes the
    target; a file over ``MAX_DENSE_CELLS`` cells is refused rather than exhausting memory.
    Integral labels become integers.
    """

    name = "libsvm"
    title = "LIBSVM / SVMlight"
    description = "Sparse 'label index:value ...' lines, as used by LIBSVM and SVMlight."
    extensions = (".svm", ".libsvm", ".svmlight")

    def read(self, path, options=None) -> Table:
        from sklearn.datasets import load_svmlight_file

        path = Path(path)
        try:
            x, y = load_svmlight_file(str(path), zero_based="auto")
        except MemoryError:
            raise
        except Exception as exc:
            raise _svm_error(path, exc) from None
        if x.shape[0] == 0:
            raise BadInput(f"{path.name} holds no data")
        features = _dense(x, path.name)
        frame = pd.DataFrame(features, columns=[f"f{j + 1}" for j in range(features.shape[1])])
        frame["label"] = _labels(y)
        return Table.from_frame(frame, roles={"label": Role.TARGET})


def _svm_error(path: Path, exc: Exception) -> BadInput:
    text = decode_text(path.read_bytes(), path.name)
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip() and not _SVM_LINE.fullmatch(line.rstrip("\r")):
            return BadInput(f"{path.name} line {i} is not 'label index:value ...' LIBSVM data")
    return _wrap(path.name, exc, "LIBSVM")


def _dense(x, name: str) -> np.ndarray:
    n, m = x.shape
    if n * m > MAX_DENSE_CELLS:
        raise BadInput(
            f"{name} has {n} rows and {m} features, more than Veil holds densely ({MAX_DENSE_CELLS:,} cells)"
        )
    return x.toarray() if hasattr(x, "toarray") else np.asarray(x)


def _labels(y) -> np.ndarray:
    y = np.asarray(y).ravel()
    if y.dtype.kind == "f" and np.isfinite(y).all() and np.all(np.mod(y, 1) == 0):
        return y.astype(np.int64)
    return y


# -- MATLAB -------------------------------------------------------------------------------------


class MatImporter(Importer):
    """A MATLAB (v4–v7.2) ``.mat`` file with a samples × features matrix ``X`` and a class vector
    ``Y``, as in the scikit-feature repository. Gives columns ``f1`` … ``fm`` and ``Y`` (the target);
    a sparse ``X`` is held densely (refused beyond ``MAX_DENSE_CELLS`` cells)."""

    name = "mat"
    title = "MATLAB .mat (X, Y)"
    description = "A .mat file holding a data matrix X and a label vector Y (scikit-feature layout)."
    extensions = (".mat",)

    def read(self, path, options=None) -> Table:
        from scipy.io import loadmat

        path = Path(path)
        try:
            variables = loadmat(str(path))
        except MemoryError:
            raise
        except NotImplementedError:
            raise BadInput(f"{path.name} is a MATLAB v7.3 (HDF5) file; save it with -v7 to read it") from None
        except Exception as exc:
            raise _wrap(path.name, exc, "MATLAB .mat") from None
        present = sorted(k for k in variables if not k.startswith("__"))
        for key, what in (("X", "data matrix"), ("Y", "class vector")):
            if key not in variables:
                raise BadInput(
                    f"{path.name} has no variable {key} (the {what}); it holds {', '.join(present) or 'no variables'}"
                )
        x = variables["X"]
        if x.ndim != 2:
            raise BadInput(f"{path.name}: X has {x.ndim} dimensions, but a samples × features matrix has 2")
        x = _dense(x, path.name)
        if x.dtype.kind not in "biuf":
            raise BadInput(f"{path.name}: X holds {x.dtype} values, but a numeric matrix is needed")
        y = np.asarray(variables["Y"]).ravel()
        if len(y) != x.shape[0]:
            raise BadInput(f"{path.name}: Y has {len(y)} labels for the {x.shape[0]} rows of X")
        frame = pd.DataFrame(x, columns=[f"f{j + 1}" for j in range(x.shape[1])])
        frame["Y"] = _labels(y)
        return Table.from_frame(frame, roles={"Y": Role.TARGET})


@hookimpl
def veil_register_importers():
    return [
        CsvImporter,
        ExcelImporter,
        ParquetImporter,
        ArffImporter,
        TransactionsImporter,
        LibsvmImporter,
        MatImporter,
    ]
