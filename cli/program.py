"""``veil COMMAND``: parse the command line, run the command, and turn every outcome into its exit code
and one line on stderr (:mod:`.common` lists the codes)."""

from __future__ import annotations

import gc
import signal
import sys
import warnings
from collections.abc import Sequence
from contextlib import contextmanager

from veil.engine.base.errors import BadInput, Cancelled, PluginError, PrivacyCheckFailed, printable

from .common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_PRIVACY,
    Interrupted,
    Stop,
    log_traceback,
    make_registry,
    one_line,
    signals_interrupt,
)
from .parser import COMMANDS, build_parser, options_of

__all__ = ["COMMANDS", "EXIT_INTERNAL", "main", "make_registry"]


def main(argv: Sequence[str] | None = None, *, program: bool | None = None) -> int:
    """Run a command; return its exit code (never raises for user errors). ``program``: called as the
    process's own entry point, which exits with the code (default: when ``argv`` is None)."""
    program = argv is None if program is None else program
    argv = list(sys.argv[1:] if argv is None else argv)
    stop = Stop()
    args = None
    try:
        with signals_interrupt(stop, program), warnings.catch_warnings():
            if not sys.warnoptions:  # NumPy's overflow notes name source lines: not for the terminal (-W shows them)
                warnings.simplefilter("ignore", RuntimeWarning)
            args = build_parser().parse_args(argv)
            if args.command is None:
                raise BadInput("no command given (see `veil --help`)")
            options = options_of(args)
            with _start_up(program):
                registry = make_registry(args.plugin)
            code = COMMANDS[args.command].execute(options, registry, stop)
        if stop.deferred is not None:  # the signal came while the export's files were moved into place
            what = "termination" if stop.deferred == signal.SIGTERM else "interrupt"
            print(f"veil: finished before the {what} took effect", file=sys.stderr)
        return code
    except Interrupted as exc:
        print("veil: terminated" if exc.signum == signal.SIGTERM else "veil: interrupted", file=sys.stderr)
        return 128 + exc.signum
    except PrivacyCheckFailed as exc:
        print(printable(f"veil: privacy check failed: {exc}"), file=sys.stderr)
        return EXIT_PRIVACY
    except (BadInput, PluginError) as exc:
        print(f"veil: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (Cancelled, KeyboardInterrupt):  # a signal deferred by a held step stops the work at its next check
        print("veil: terminated" if stop.deferred == signal.SIGTERM else "veil: interrupted", file=sys.stderr)
        return 128 + stop.deferred if stop.deferred is not None else EXIT_INTERRUPTED
    except OSError as exc:  # a folder that is a file, a full disk, no permission: say which path
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        if not where and getattr(args, "out", None):  # a write's error names no file: name the folder written
            where = f" the output folder {args.out}"
        print(printable(f"veil: error: cannot access{where}: {exc.strerror or exc}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print("veil: error: not enough memory for this data", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug in Veil or a plugin: one line for the user, details in a log
        log = log_traceback()
        print(
            f"veil: internal error: {type(exc).__name__}: {one_line(str(exc))} (details in {log}; please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())


@contextmanager
def _start_up(program: bool):
    """Loading the libraries and the plugins, with Python's cycle collector paused: the objects made
    are the modules' own, which live as long as the process, so the collector's passes over them as
    they grow (and once more at exit) are wasted work. They are then set aside (``gc.freeze``) and the
    collector resumes for what the command itself makes. Only a process of its own does this (a
    caller's ``main(argv)`` keeps its collector as it was)."""
    if not program or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
