"""The files statisticians keep: SPSS (``.sav``, ``.zsav``, ``.por``), Stata (``.dta``), SAS
(``.sas7bdat``, ``.xpt``) and R (``.rds``, ``.RData``), read and written through ReadStat
(pyreadstat) and librdata (pyreadr), with their value labels, variable labels and user-defined
missing codes (:mod:`._labelled`; docs/formats.md, "Labelled files").

What each library does (pyreadstat 1.3, pyreadr 0.5):

======================  ======  =====  ============  ==============  ==========
format                  read    write  value labels  variable label  user missing
======================  ======  =====  ============  ==============  ==========
SPSS .sav / .zsav       yes     yes    yes           yes             ranges, values
SPSS .por               yes     no     yes           yes             no
Stata .dta (104–119)    yes     yes    whole codes   yes             .a–.z
SAS .sas7bdat           yes     no     (catalog)     yes             .A–.Z, ._
SAS .xpt                yes     yes    no            yes             no
R .rds / .RData         yes     yes    factor levels no              no
======================  ======  =====  ============  ==============  ==========

An R file holding several data frames is read at the one named by ``--sheet`` (the first data
frame otherwise). Every problem becomes one :class:`BadInput` sentence naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from veil.engine import CELL_CODES, FILE_LABELS, BadInput, Exporter, ImportOptions, Importer, Table, check_column_names

from ._labelled import labelled_frame, written_frame

_INSTALL = "install the statistics-file readers: pip install 'veil[statfiles]'"
_DTA_READS = range(104, 120)  # the Stata formats ReadStat reads (Stata 8 to 18's 119)


def _pyreadstat():
    try:
        import pyreadstat
    except ImportError:
        raise BadInput(f"reading or writing SPSS, Stata and SAS files needs pyreadstat; {_INSTALL}") from None
    return pyreadstat


def _missing_library(name: str) -> str:
    """Why a format cannot be written here: its library is not installed ("" when it is)."""
    import importlib.util

    return "" if importlib.util.find_spec(name) else f"writing it needs {name}; {_INSTALL}"


def _pyreadr():
    try:
        import pyreadr
    except ImportError:
        raise BadInput(f"reading or writing R data files needs pyreadr; {_INSTALL}") from None
    return pyreadr


def _one_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# -- the file's own metadata --------------------------------------------------------------------


def spss_program(path: Path) -> str | None:
    """The program that wrote a .sav/.zsav file, from its header ("@(#) IBM SPSS STATISTICS …")."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head[:4] not in (b"$FL2", b"$FL3"):
        return None
    text = head[4:64].decode("latin-1").strip()
    return text.removeprefix("@(#) ").strip() or None


def stata_release(path: Path) -> int | None:
    """A .dta file's format number: 118 in ``<stata_dta><header><release>118</release>``, or the
    first byte of the older binary header (102–115)."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b"<stata_dta>"):
        m = re.search(rb"<release>(\d+)</release>", head)
        return int(m.group(1)) if m else None
    return head[0] if head and 100 <= head[0] <= 115 else None


# -- reading ------------------------------------------------------------------------------------


class _ReadStatImporter(Importer):
    what = ""
    reader = ""
    user_missing = True  # the reader keeps user-missing codes as cells when asked

    def _read(self, path: Path, options: ImportOptions, **kw):
        lib = _pyreadstat()
        kwargs = dict(kw)
        if self.user_missing:
            kwargs["user_missing"] = True
        if options.encoding and self.reader in ("read_sav", "read_sas7bdat", "read_xport"):
            kwargs["encoding"] = options.encoding
        try:
            return getattr(lib, self.reader)(str(path), **kwargs)
        except MemoryError:
            raise
        except Exception as exc:
            raise BadInput(f"{path.name} is not a readable {self.what} file: {_one_line(exc)}") from None

    def file_info(self, path: Path, meta) -> dict:
        info = {"format": self.title, "encoding": getattr(meta, "file_encoding", None)}
        if getattr(meta, "file_label", None):
            info["file label"] = meta.file_label
        if getattr(meta, "creation_time", None):
            info["created"] = str(meta.creation_time)
        if getattr(meta, "table_name", None):
            info["table"] = meta.table_name
        return info

    def head(self, path, options, rows: int) -> Table:
        return self.read(path, options, row_limit=rows)

    def read(self, path, options=None, row_limit: int = 0) -> Table:
        path, options = Path(path), options or ImportOptions()
        raw, meta = self._read(path, options, row_limit=row_limit)
        missing = {}
        for c, ranges in (getattr(meta, "missing_ranges", None) or {}).items():
            missing[c] = [(r["lo"], r["hi"]) for r in ranges]
        for c, letters in (getattr(meta, "missing_user_values", None) or {}).items():
            missing.setdefault(c, []).extend(letters)
        names = [str(c) for c in raw.columns]
        try:
            check_column_names(names)
        except BadInput as exc:
            raise BadInput(f"{path.name}: {exc}") from None
        variable = {c: v for c, v in (meta.column_names_to_labels or {}).items() if v}
        frame, labels, cells = labelled_frame(raw, meta.variable_value_labels or {}, variable, missing)
        table = Table.from_frame(frame)
        table.meta[FILE_LABELS] = labels
        if cells:  # each missing cell's own code, for the export to write back
            table.meta[CELL_CODES] = {"rows": len(frame), "columns": cells}
        table.meta["file"] = self.file_info(path, meta)
        return table


class SpssImporter(_ReadStatImporter):
    """SPSS system files (``.sav``, compressed ``.zsav``); value labels, variable labels and
    user-missing values and ranges are kept (see the module's table)."""

    name = "spss"
    title = "SPSS (.sav, .zsav)"
    description = "SPSS system files, with value labels, variable labels and user-defined missing values."
    extensions = (".sav", ".zsav")
    what = "SPSS"
    reader = "read_sav"

    def file_info(self, path, meta):
        info = super().file_info(path, meta)
        info["program"] = spss_program(path)
        return info


class SpssPortableImporter(_ReadStatImporter):
    name = "spss-portable"
    title = "SPSS portable (.por)"
    description = "SPSS portable files, with value labels and variable labels."
    extensions = (".por",)
    what = "SPSS portable"
    reader = "read_por"
    user_missing = False


class StataImporter(_ReadStatImporter):
    """Stata ``.dta`` files of formats 104 to 119 (Stata 8 to 18), with value labels, variable
    labels and the extended missing values ``.a`` to ``.z``."""

    name = "stata"
    title = "Stata (.dta)"
    description = "Stata data files, with value labels, variable labels and missing codes .a to .z."
    extensions = (".dta",)
    what = "Stata"
    reader = "read_dta"

    def read(self, path, options=None, row_limit: int = 0):
        path = Path(path)
        release = stata_release(path)
        if release is not None and release not in _DTA_READS:
            raise BadInput(
                f"{path.name} is a Stata file of format {release}, which Veil's reader (ReadStat) does not "
                f"read (it reads formats {_DTA_READS.start} to {_DTA_READS.stop - 1}); save it from Stata "
                f"with saveold, or export CSV"
            )
        return super().read(path, options, row_limit)

    def file_info(self, path, meta):
        info = super().file_info(path, meta)
        info["format"] = f"Stata .dta format {stata_release(path)}"
        return info


class SasImporter(_ReadStatImporter):
    name = "sas"
    title = "SAS data set (.sas7bdat)"
    description = "SAS data sets, with variable labels and the special missing values .A to .Z."
    extensions = (".sas7bdat",)
    what = "SAS data set"
    reader = "read_sas7bdat"


class XportImporter(_ReadStatImporter):
    name = "sas-xport"
    title = "SAS transport (.xpt)"
    description = "SAS transport (XPORT) files, as regulators ask for, with variable labels."
    extensions = (".xpt",)
    what = "SAS transport"
    reader = "read_xport"
    user_missing = False


class RImporter(Importer):
    """An R data file: ``.rds`` (one object) or ``.RData``/``.rda`` (named objects; ``--sheet``
    names the data frame to read). Factors become categories, their levels the value labels."""

    name = "r"
    title = "R data (.rds, .RData)"
    description = "R data frames saved with saveRDS or save; factor levels become the categories."
    extensions = (".rds", ".rdata", ".rda")

    def read(self, path, options=None) -> Table:
        path, options = Path(path), options or ImportOptions()
        lib = _pyreadr()
        try:
            objects = lib.read_r(str(path))
        except MemoryError:
            raise
        except Exception as exc:
            raise BadInput(f"{path.name} is not a readable R data file: {_one_line(exc)}") from None
        frames = {k: v for k, v in objects.items() if isinstance(v, pd.DataFrame)}
        if not frames:
            raise BadInput(f"{path.name} holds no data frame")
        if options.sheet is not None:
            if options.sheet not in frames:
                names = ", ".join(str(k) for k in frames)
                raise BadInput(f"{path.name} holds no data frame {options.sheet!r}; it holds {names}")
            key = options.sheet
        else:
            key = next(iter(frames))
        raw = frames[key]
        names = [str(c) for c in raw.columns]
        try:
            check_column_names(names)
        except BadInput as exc:
            raise BadInput(f"{path.name}: {exc}") from None
        value_labels = {}
        for c in raw.columns:
            if isinstance(raw[c].dtype, pd.CategoricalDtype):
                levels = list(raw[c].cat.categories)
                value_labels[c] = {i + 1: str(t) for i, t in enumerate(levels)}
                raw[c] = pd.Series(raw[c].cat.codes.to_numpy() + 1, index=raw.index).where(raw[c].notna())
        frame, labels, _ = labelled_frame(raw.reset_index(drop=True), value_labels, {}, {})
        table = Table.from_frame(frame)
        table.meta[FILE_LABELS] = labels
        info = {"format": self.title, "object": key}
        if len(frames) > 1:
            info["other objects"] = ", ".join(str(k) for k in frames if k != key)
        table.meta["file"] = info
        return table


# -- writing ------------------------------------------------------------------------------------


def _labels_of(frame: pd.DataFrame) -> dict:
    return dict(frame.attrs.get(FILE_LABELS) or {})


def _cells_of(frame: pd.DataFrame) -> dict:
    """The blank cells the export found held a user-missing code in the input, with their codes."""
    return dict(frame.attrs.get(CELL_CODES) or {})


def _bad_name(columns, what: str, pattern: str, longest: int) -> str:
    """Why ``what`` cannot hold one of the column names ("" when it holds them all)."""
    for c in columns:
        name = str(c)
        if not re.fullmatch(pattern, name) or len(name.encode("utf-8")) > longest:
            return (
                f"{what} cannot hold the column name {name!r} (letters, digits and _ only, starting with a "
                f"letter, at most {longest} bytes); rename the column"
            )
    return ""


def _refuse_names(frame: pd.DataFrame, what: str, pattern: str, longest: int):
    why = _bad_name(frame.columns, what, pattern, longest)
    if why:
        raise BadInput(f"{why} or export another format")


def _text_columns(frame: pd.DataFrame, keep=()) -> pd.DataFrame:
    """Categories and Arrow text as plain text (ReadStat writes numbers and Python strings);
    ``keep``: columns of numbers and Stata's missing letters, written as they are."""
    out = frame.copy()
    for c in out.columns:
        s = out[c]
        if c in keep:
            continue
        if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(s) or s.dtype == object:
            if not pd.api.types.is_numeric_dtype(s):
                out[c] = s.astype(object).where(s.notna(), None)
        elif pd.api.types.is_bool_dtype(s):
            out[c] = s.astype(float)
    return out


class _ReadStatExporter(Exporter):
    importer = _ReadStatImporter
    name_rule: tuple[str, str, int] = ("", r".+", 1 << 20)  # what the file is, its names' pattern, longest

    @classmethod
    def refuses(cls, release) -> str:
        why = super().refuses(release) or _missing_library("pyreadstat")
        frame = getattr(release, "frame", None)
        if why or frame is None:
            return why
        return _bad_name(frame.columns, *cls.name_rule)

    def write_checked_names(self, frame):
        _refuse_names(frame, *self.name_rule)

    def read_back(self, path):
        frame = self.importer().read(Path(path)).frame
        # SPSS, Stata and SAS have no missing text value: a text cell the release left blank comes back
        # as "", which stands for that blank again
        for c in frame.columns:
            if not pd.api.types.is_numeric_dtype(frame[c]):
                frame[c] = frame[c].astype(object).mask(frame[c].astype(object).eq(""))
        return frame


class SpssExporter(_ReadStatExporter):
    """An SPSS ``.sav`` file with the value labels of the values the release holds, the variable
    labels, and the user-missing declarations the input had."""

    name = "spss"
    title = "SPSS (.sav)"
    extension = "sav"
    importer = SpssImporter
    name_rule = ("an SPSS file", r"[A-Za-z@][A-Za-z0-9_.@#$]*", 64)

    def write(self, frame, path, params):
        self.write_checked_names(frame)
        data, values, variables, missing = written_frame(frame, _labels_of(frame), cells=_cells_of(frame))
        try:
            _pyreadstat().write_sav(
                _text_columns(data),
                str(path),
                column_labels=variables or None,
                variable_value_labels=values or None,
                missing_ranges=missing or None,
                variable_format=_integer_formats(frame) or None,
            )
        except Exception as exc:
            raise BadInput(f"the release cannot be written as SPSS: {_one_line(exc)}") from None


def _integer_formats(frame: pd.DataFrame) -> dict[str, str]:
    """SPSS's display format ``Fw.0`` for each column of whole numbers (blanks allowed), so SPSS
    shows them without decimals as it showed the input's; ReadStat writes every other number F8.2."""
    out = {}
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s):
            known = s.dropna()
            digits = max((len(str(int(v))) for v in (known.min(), known.max())), default=1) if len(known) else 1
            out[c] = f"F{max(8, digits)}.0"
    return out


class StataExporter(_ReadStatExporter):
    """A Stata ``.dta`` file (format 118): value labels of the values the release holds (Stata
    labels whole numbers only) and the variable labels."""

    name = "stata"
    title = "Stata (.dta)"
    extension = "dta"
    importer = StataImporter
    name_rule = ("a Stata file", r"[A-Za-z_][A-Za-z0-9_]*", 32)

    def write(self, frame, path, params):
        self.write_checked_names(frame)
        data, values, variables, letters = written_frame(
            frame, _labels_of(frame), integer_codes=True, cells=_cells_of(frame)
        )
        try:
            _pyreadstat().write_dta(
                _text_columns(data, keep=letters),
                str(path),
                version=15,
                column_labels={c: v[:80] for c, v in variables.items()} or None,
                variable_value_labels=values or None,
                missing_user_values=letters or None,
            )
        except Exception as exc:
            raise BadInput(f"the release cannot be written as Stata: {_one_line(exc)}") from None


class XportExporter(_ReadStatExporter):
    """A SAS transport file (version 8): cells and variable labels. A transport file holds no value
    labels, so a labelled column is written as its labels' text."""

    name = "sas-xport"
    title = "SAS transport (.xpt)"
    extension = "xpt"
    importer = XportImporter
    name_rule = ("a SAS transport file", r"[A-Za-z_][A-Za-z0-9_]*", 32)

    def write(self, frame, path, params):
        self.write_checked_names(frame)
        variables = {c: e["label"] for c, e in _labels_of(frame).items() if c in frame.columns and e.get("label")}
        try:
            _pyreadstat().write_xport(
                _text_columns(frame), str(path), column_labels=variables or None, table_name="RELEASE"
            )
        except Exception as exc:
            raise BadInput(f"the release cannot be written as SAS transport: {_one_line(exc)}") from None


class RdsExporter(Exporter):
    """An R ``.rds`` file: one data frame, labelled columns as factors whose levels are the values
    the release holds (no level of a removed value)."""

    name = "r"
    title = "R data (.rds)"
    extension = "rds"

    @classmethod
    def refuses(cls, release) -> str:
        return super().refuses(release) or _missing_library("pyreadr")

    def write(self, frame, path, params):
        labels = _labels_of(frame)
        out = _text_columns(frame)
        for c in frame.columns:
            s = frame[c]
            if (labels.get(str(c)) or {}).get("coded") or isinstance(s.dtype, pd.CategoricalDtype):
                text = s.astype(object).where(s.notna(), None)
                present = [str(v) for v in pd.unique(text.dropna())]
                order = [str(t) for t in (labels.get(str(c)) or {}).get("values", {}).values()]
                levels = [t for t in order if t in present] + sorted(t for t in present if t not in order)
                out[c] = pd.Categorical(text, categories=levels)
        try:
            _pyreadr().write_rds(str(path), out)
        except Exception as exc:
            raise BadInput(f"the release cannot be written as R data: {_one_line(exc)}") from None

    def read_back(self, path):
        return RImporter().read(Path(path)).frame
