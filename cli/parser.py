"""The command line's parser: one subcommand per command module, and each command's typed options built
from what argparse read.

A command is a module with ``NAME``, ``HELP``, ``add_arguments(parser)``, a frozen ``Options``
dataclass whose fields are its flags' destinations, and ``execute(options, registry, stop)`` returning
the exit code; adding one is adding its module to :data:`COMMANDS`."""

from __future__ import annotations

import argparse
import dataclasses

from veil.engine import __version__
from veil.engine.base.errors import BadInput

from . import hierarchy, inspect, plugins, report, risk, run, study, utility, verify

COMMANDS = {
    command.NAME: command for command in (run, report, study, verify, utility, risk, inspect, hierarchy, plugins)
}


class _StoreOnce(argparse.Action):
    """argparse's "store", refusing a second value: ``--seed 1 --seed 2`` would silently run seed 2."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in seen:
            parser.error(f"{option_string or self.dest} is given twice; give it once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)  # every option that takes one value
        self.register("action", "store", _StoreOnce)

    def error(self, message):  # one line, exit 2 (argparse's default prints the usage too)
        raise BadInput(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="veil", description="Release sensitive tables safely. With no command, opens the desktop.")
    p.add_argument("--version", action="version", version=f"veil {__version__}")
    p.add_argument(
        "--plugin",
        action="append",
        metavar="MODULE",
        help="load a plugin without installing it: a module's name or a .py file (repeatable; also VEIL_PLUGINS)",
    )
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for command in COMMANDS.values():
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP))
    return p


def options_of(namespace: argparse.Namespace):
    """The typed options of the command ``namespace`` was parsed for (its ``Options`` dataclass)."""
    cls = COMMANDS[namespace.command].Options
    return cls(**{field.name: getattr(namespace, field.name) for field in dataclasses.fields(cls)})
