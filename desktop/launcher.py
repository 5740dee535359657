"""The ``veil`` command: with no command it opens the desktop, otherwise it runs the headless CLI.

Qt is imported only when the desktop opens, so every headless command works without a display.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from veil.cli import COMMANDS
from veil.cli import main as cli_main


def wants_desktop(argv: Sequence[str]) -> bool:
    """No arguments, or a file to open: the desktop. A command, a request for help anywhere
    (``veil risk --help``), or a bare word that names no file (a mistyped command): the CLI, which
    prints help or says the command is unknown. Leading ``--plugin MODULE`` options are set aside."""
    argv = tried_plugins(argv)[1]
    if not argv:
        return True
    first = argv[0]
    if first in COMMANDS or first in ("-h", "--help", "--version") or "-h" in argv or "--help" in argv:
        return False
    return first.startswith("-") or os.path.lexists(first) or bool(Path(first).suffix)


def tried_plugins(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The plugins the leading ``--plugin MODULE`` options name (loaded without installing them,
    docs/design.md's plugin guide, "Trying one out"), and the arguments after them."""
    plugins, rest = [], list(argv)
    while rest and (rest[0] == "--plugin" and len(rest) > 1 or rest[0].startswith("--plugin=")):
        option = rest.pop(0)
        plugins.append(option.partition("=")[2] if "=" in option else rest.pop(0))
    return plugins, rest


def main(argv: Sequence[str] | None = None) -> int:
    program = argv is None  # the process's entry point (the `veil` script, `python -m veil.desktop`)
    argv = list(sys.argv[1:] if argv is None else argv)
    if wants_desktop(argv):
        try:
            from .app import run_desktop
        except ImportError as exc:
            print(
                f"veil: error: the desktop needs PySide6 ({exc}); install with `pip install veil[gui]`", file=sys.stderr
            )
            return 2
        plugins, rest = tried_plugins(argv)
        return run_desktop(rest, plugins)
    return cli_main(argv, program=program)


if __name__ == "__main__":
    sys.exit(main())
