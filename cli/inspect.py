"""``veil inspect``: describe a data file (rows, columns, kinds, suggested roles)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from .arguments import ReadOptions, read_options, source
from .common import EXIT_OK, Stop

NAME = "inspect"
HELP = "describe a data file: rows, columns, kinds, suggested roles"


def add_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument("path")
    read_options(i)


@dataclass(frozen=True)
class Options(ReadOptions):
    """The flags of ``veil inspect``."""

    path: str


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.data.inspect import inspect_report

    data = source(options, options.path).load(registry)
    print(inspect_report(data))
    return EXIT_OK
