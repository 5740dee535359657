"""Veil's command line: the same engine as the desktop, headless (``veil run``, ``veil verify``, …)."""

from .commands import COMMANDS, main

__all__ = ["COMMANDS", "main"]
