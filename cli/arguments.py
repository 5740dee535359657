"""The flags several commands share: their types (a value refused with one line), the groups of flags
that say how to read a file and which roles its columns play, their typed form, and the data source
they describe."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from veil.engine.base.errors import BadInput
from veil.engine.base.validate import MAX_SEED


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number from 0 to {MAX_SEED}, got {value}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {value}")
    return value


def threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the risk threshold must be a number, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"the risk threshold must be between 0 and 1, got {value}")
    return value


def hierarchy_flag(text: str) -> tuple[str, str]:
    column, sep, path = text.partition("=")
    if not sep or not column.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"give a hierarchy as COLUMN=FILE or COLUMN=intervals:width=…, got {text!r}")
    return column.strip(), path.strip()


def kind_flag(text: str) -> tuple[str, str]:
    column, sep, kind = text.partition("=")
    if not sep or not column.strip() or not kind.strip():
        raise argparse.ArgumentTypeError(
            f"give a column's kind as COLUMN=KIND (numeric, categorical, date, …), got {text!r}"
        )
    return column.strip(), kind.strip()


def csv_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def columns(text: str) -> list[str]:
    """Column names, comma-separated: at least one (``--quasi ""``, from an unset shell variable,
    would otherwise leave the roles as if the flag were not there)."""
    names = csv_list(text)
    if not names:
        raise argparse.ArgumentTypeError(f"expected one or more column names, comma-separated, got {text!r}")
    return names


def read_options(p: argparse.ArgumentParser) -> None:
    """The flags saying how to read a data file (:class:`ReadOptions`)."""
    p.add_argument("--names", type=columns, help="column names for a headerless file, comma-separated")
    p.add_argument(
        "--names-from",
        dest="names_from",
        metavar="FILE",
        help="read the column names from FILE: a UCI .names file or a one-line header",
    )
    p.add_argument("--input-format", dest="input_format", help="importer name (default: detected)")
    p.add_argument("--delimiter", help="field separator (default: detected)")
    p.add_argument("--encoding", help="text encoding (default: detected)")
    p.add_argument(
        "--table", help="the table of a database (SQLite), the data frame of an R file or the sheet of a workbook"
    )
    p.add_argument("--query", help='a database\'s rows as a read-only query gives them ("SELECT …")')
    p.add_argument(
        "--skip-rows",
        dest="skip_rows",
        type=int,
        default=0,
        help="lines to skip at the top of a text file (e.g. 1 for UCI's adult.test)",
    )
    p.add_argument(
        "--drop-missing",
        dest="drop_missing",
        action="store_true",
        help="drop every record with a missing value (an empty cell or '?') in any column, as the "
        "papers do with Adult; the manifest records it",
    )
    p.add_argument(
        "--fill-missing",
        dest="fill_missing",
        choices=("value", "impute"),
        help="instead, fill every missing value: 'value' keeps a blank as a value of its own, 'impute' "
        "uses the column's median (numbers) or most frequent value; the manifest records it",
    )


def data_options(p: argparse.ArgumentParser) -> None:
    """The flags saying how to read a data file and the roles of its columns (:class:`DataOptions`)."""
    read_options(p)
    p.add_argument("--target", help="the column to predict")
    p.add_argument(
        "--sensitive",
        action="extend",
        type=columns,
        default=[],
        help="sensitive columns (comma-separated, repeatable)",
    )
    p.add_argument(
        "--identifier",
        action="extend",
        type=columns,
        default=[],
        help="direct identifier columns, never released (comma-separated, repeatable)",
    )
    p.add_argument(
        "--quasi",
        action="extend",
        type=columns,
        default=[],
        help="quasi-identifier columns (comma-separated, repeatable)",
    )
    p.add_argument("--weight", help="the column of survey weights (how many people each record stands for)")
    p.add_argument(
        "--household",
        help="the column of household ids: used by household risk, never released (an identifier)",
    )
    p.add_argument(
        "--hierarchy",
        action="append",
        type=hierarchy_flag,
        default=[],
        help="a column's generalisation hierarchy as COLUMN=FILE (ARX's CSV format) or generated as "
        "COLUMN=intervals:width=10,fanout=2,start=0,bottom=20,top=90 (also quantiles:bins=4, "
        "masking, dates; repeatable)",
    )
    p.add_argument(
        "--hierarchies",
        dest="hierarchy_folder",
        metavar="DIR",
        help="a folder of hierarchy files matched to the columns by name, as the desktop's \"Load hierarchies "
        "from a folder\" does: ARX's <data>_hierarchy_<column>.csv and <column>.csv (a column's --hierarchy "
        "takes precedence); prints what matched and what was not used",
    )
    p.add_argument(
        "--kind",
        action="append",
        type=kind_flag,
        default=[],
        help="a column's kind as COLUMN=KIND, overriding the detected one: numeric, categorical, date, … (repeatable)",
    )


@dataclass(frozen=True)
class ReadOptions:
    """How to read a data file (the flags of :func:`read_options`)."""

    names: list[str] | None
    names_from: str | None
    input_format: str | None
    delimiter: str | None
    encoding: str | None
    table: str | None
    query: str | None
    skip_rows: int
    drop_missing: bool
    fill_missing: str | None


@dataclass(frozen=True)
class DataOptions(ReadOptions):
    """How to read a data file and the roles of its columns (the flags of :func:`data_options`)."""

    target: str | None
    sensitive: list[str]
    identifier: list[str]
    quasi: list[str]
    weight: str | None
    household: str | None
    hierarchy: list[tuple[str, str]]
    hierarchy_folder: str | None
    kind: list[tuple[str, str]]


def source(options: ReadOptions, path: str | None, demo: bool = False):
    """The data source the flags describe: the file at ``path`` (or the demo data), read as they say."""
    from veil.engine.data.datasource import DataSource
    from veil.engine.data.names import read_column_names

    names = options.names
    if options.names_from:
        if names:
            raise BadInput("give --names or --names-from, not both")
        names = list(read_column_names(options.names_from))
    roles = options if isinstance(options, DataOptions) else None
    d = {
        "path": path,
        "demo": demo,
        "names": names,
        "fmt": options.input_format,
        "delimiter": options.delimiter,
        "encoding": options.encoding,
        "skip_rows": options.skip_rows,
        "sheet": options.table,
        "query": options.query,
        "drop_missing": options.drop_missing,
        "fill_missing": options.fill_missing,
        "target": roles.target if roles else None,
        "identifiers": roles.identifier if roles else [],
        "quasi_identifiers": roles.quasi if roles else [],
        "sensitive": roles.sensitive if roles else [],
        "weight": [roles.weight] if roles and roles.weight else [],
        "household": [roles.household] if roles and roles.household else [],
        "hierarchies": hierarchies(roles.hierarchy if roles else []),
        "hierarchy_folder": roles.hierarchy_folder if roles else None,
        "kinds": once_per_column(roles.kind if roles else [], "--kind"),
    }
    return DataSource.from_dict(d)


def once_per_column(given: list[tuple[str, str]], flag: str) -> dict:
    found: dict[str, str] = {}
    for column, value in given:
        if column in found:
            raise BadInput(
                f"{flag} is given twice for column {column!r} ({found[column]} and {value}); give one per column"
            )
        found[column] = value
    return found


def hierarchies(given: list[tuple[str, str]]) -> dict:
    """Column → hierarchy file of the --hierarchy flags; a column given two is refused (one would be
    dropped without a word)."""
    return once_per_column(given, "--hierarchy")


def models(texts) -> list:
    """The privacy models of repeated ``--model`` flags (each NAME[:key=value,...])."""
    from veil.engine.run.runs import PluginCall

    return [PluginCall.parse(t) for t in texts or ()]
