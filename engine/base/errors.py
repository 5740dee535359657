"""Errors and warnings that Veil reports to its users.

Every error a user can cause (a bad file, a bad parameter, data a method cannot take) is a
:class:`BadInput`: the command line prints its message on one line and exits with code 2, the
desktop shows it in a dialog. Anything else is a bug and is allowed to surface as a traceback.
"""

from __future__ import annotations


class VeilError(Exception):
    """Base class of Veil's own errors."""


class BadInput(VeilError):
    """The user's input (file, schema, parameter, data) cannot be used; the message says why."""


class PrivacyCheckFailed(VeilError):
    """A release does not satisfy its privacy model; nothing was written."""

    def __init__(self, message: str, verdict=None):
        super().__init__(message)
        self.verdict = verdict


class Cancelled(VeilError):
    """A run was cancelled by the user."""


class PluginError(VeilError):
    """A plugin is malformed or failed to load."""


class VeilWarning(UserWarning):
    """A warning issued by Veil itself (tests turn these into errors)."""


def printable(text: str) -> str:
    """``text`` safe to show on a terminal: every control character (C0, DEL, C1, the line and paragraph
    separators) written as ``\\xHH`` or ``\\uHHHH``, so a column name holding ESC or BEL sequences is
    seen, never obeyed; printable text, accented letters included, is left as it is."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}") for c in text
    )
