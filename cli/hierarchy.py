"""``veil hierarchy``: generate a column's hierarchy (intervals, quantiles, masking, dates) in ARX's format."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from veil.engine.base.errors import BadInput

from .arguments import ReadOptions, read_options, source
from .common import EXIT_OK, Stop

NAME = "hierarchy"
HELP = "generate a column's hierarchy (e.g. intervals) and write it in ARX's format"


def add_arguments(h: argparse.ArgumentParser) -> None:
    h.add_argument("path", help="the data file")
    h.add_argument("--column", required=True, help="the column to build the hierarchy for")
    h.add_argument(
        "--build",
        required=True,
        metavar="SPEC",
        help="what to generate: intervals:width=10,fanout=2,start=0,bottom=20,top=90 (width of the first "
        "level, neighbours merged per level, where the intervals start, bottom and top coding), "
        "quantiles:bins=4,fanout=2, masking or dates",
    )
    h.add_argument("--out", help="the ARX hierarchy file to write (default: print it)")
    read_options(h)


@dataclass(frozen=True)
class Options(ReadOptions):
    """The flags of ``veil hierarchy``."""

    path: str
    column: str
    build: str
    out: str | None


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.base.io import check_output_path, write_text_atomic
    from veil.engine.data.hierarchy import hierarchy_from_spec, preview_groups
    from veil.engine.data.table import Table

    if options.out:
        check_output_path(options.out)  # before any work: a device, FIFO, link or folder is refused
    data = source(options, options.path).load(registry)
    if not isinstance(data, Table):
        raise BadInput("a hierarchy generalises a table's column; this file holds item sets")
    if options.column not in data.frame.columns:
        raise BadInput(f"no column named {options.column!r}; columns are {', '.join(map(str, data.frame.columns))}")
    values = data.frame[options.column]
    hierarchy = hierarchy_from_spec(options.build, values, name=options.column)
    hierarchy.check_values(values.dropna())
    text = hierarchy.to_arx_csv()
    for level in range(1, hierarchy.height):
        groups = preview_groups(hierarchy, values, level)
        shown = ", ".join(f"{g} ({n:,})" for g, n in zip(groups["group"][:8], groups["records"][:8]))
        more = f", … {len(groups) - 8} more" if len(groups) > 8 else ""
        print(f"level {level}: {len(groups)} groups: {shown}{more}", file=sys.stderr)
    if not options.out:
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(options.out)
    if out.resolve() == Path(options.path).resolve():
        raise BadInput(f"{out} is the data file; write the hierarchy to another file")
    write_text_atomic(out, text)
    print(out)
    return EXIT_OK
