"""What every command shares: the exit codes, the signals that stop a command, and how it speaks to the
person at the terminal (one-line messages, a progress bar).

Exit codes: 0 success, 1 a privacy check failed, 2 bad input (one line on stderr, no traceback),
3 an internal error (a bug: one line, the traceback in a log file), 130 interrupted (Ctrl+C, SIGINT),
143 terminated (SIGTERM). An interrupted or terminated export leaves the output folder as it was; a
signal that arrives while an export's files are being moved into place lets that finish, and the
command ends normally saying "finished before the interrupt took effect".
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from contextlib import contextmanager

from veil.engine.base.errors import printable

EXIT_OK, EXIT_PRIVACY, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def make_registry(plugins: Sequence[str] | None = ()):
    """The plugin registry (imported when a command runs, not for --help), with the plugins being
    tried out (``--plugin``, ``VEIL_PLUGINS``)."""
    from veil.engine.model.registry import make_registry as make, plugins_to_try

    return make(extra=plugins_to_try(plugins, os.environ.get("VEIL_PLUGINS", "")))


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM: unwinds like Ctrl+C, so an export under way removes what it prepared."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class Stop:
    """The cancel token a command's runs and exports share, made on first use (``--help`` imports no
    run module). While an export holds a step that must finish (its commit), the signal handler
    defers to the token instead of raising: :attr:`deferred` then names the signal."""

    def __init__(self):
        self._token = None

    def token(self):
        if self._token is None:
            from veil.engine.run.jobs import CancelToken

            self._token = CancelToken()
        return self._token

    def defer(self, signum: int) -> bool:
        return self._token is not None and self._token.defer(signum)

    def next_run(self) -> bool:
        """Before the next run: the last export's hold ends (it has been reported); whether a signal
        came meanwhile (the command then stops)."""
        if self._token is not None:
            self._token.release()
        return self.deferred is not None

    @property
    def deferred(self) -> int | None:
        return None if self._token is None else self._token.deferred


@contextmanager
def signals_interrupt(stop: Stop, program: bool = False):
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (the first one; a second
    one while cleaning up is ignored, so the clean-up finishes), unless an export's commit is under
    way: then ``stop`` keeps it and the commit finishes first. Elsewhere, nothing changes.

    Afterwards the earlier handlers are back; for the ``program`` itself, the signals are ignored
    instead: the process is about to exit with the command's code, and a signal now comes too late
    to stop anything (Python's default would end a finished run as if it had been interrupted)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen = []

    def handler(signum, frame):
        if seen:
            return
        seen.append(signum)
        if stop.defer(signum):
            return
        raise Interrupted(signum)

    wanted = [signal.SIGINT, signal.SIGTERM]
    previous = {s: signal.getsignal(s) for s in wanted}
    for s in wanted:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, signal.SIG_IGN if program else h)


class Progress:
    """A tqdm bar on a terminal; silent otherwise."""

    def __init__(self, label: str):
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=1000,
                desc=label,
                file=sys.stderr,
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed} {postfix}",
            )

    def __call__(self, fraction: float, message: str) -> None:
        if self.bar is not None:
            self.bar.n = int(fraction * 1000)
            self.bar.set_postfix_str(message, refresh=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def hierarchy_notes(registry, data, specs) -> None:
    """Before any run: a note for each hierarchy given that a run (a RunSpec) will not use."""
    from veil.engine.run.runs import unused_hierarchies

    notes = dict.fromkeys(
        note for spec in specs for note in unused_hierarchies(registry, data, spec.method, spec.models, spec.aggregates)
    )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def folder_notes(source, data) -> None:
    """What a data source's hierarchy folder matched and what it left unused, a line each (one
    matching for the CLI and the desktop: :func:`veil.engine.read_hierarchy_folder`)."""
    from veil.engine.data.table import Table

    if source is None or not source.hierarchy_folder or not isinstance(data, Table):
        return
    found = source.folder_hierarchies(data)
    print(printable(f"hierarchies from {source.hierarchy_folder}:"), file=sys.stderr)
    for line in found.describe() or ["no file names a column (ARX's <data>_hierarchy_<column>.csv, or <column>.csv)"]:
        print(printable(f"  {line}"), file=sys.stderr)


def one_line(text: str) -> str:
    """The first line of a message, its spaces collapsed and its control characters escaped (a column
    name holding ESC or BEL sequences is shown, never obeyed by the terminal)."""
    return printable(" ".join(text.split("\n")[0].split()))


def log_traceback() -> str:
    """The traceback being handled, written to a log file; the file's name."""
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="veil-error-", suffix=".log", delete=False) as f:
        traceback.print_exc(file=f)
        return f.name
