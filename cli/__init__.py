"""Veil's command line: the same engine as the desktop, headless (``veil run``, ``veil verify``, …).

:mod:`.program` runs a command and maps its outcome to an exit code; :mod:`.parser` lists the commands,
one module each (:mod:`.run`, :mod:`.verify`, :mod:`.report`, :mod:`.study`, :mod:`.inspect`,
:mod:`.hierarchy`, :mod:`.plugins`); :mod:`.arguments` holds the flags several share and :mod:`.common`
the exit codes, signals and messages."""

from .parser import COMMANDS
from .program import main

__all__ = ["COMMANDS", "main"]
