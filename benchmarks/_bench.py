"""Helpers shared by the benchmarks: interleaved repeated timing, the machine, the datasets."""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
ROOT = Path(__file__).resolve().parents[1]


def median_times(candidates: dict[str, Callable[[], object]], repeats: int = 7) -> dict[str, float]:
    """Median wall time of each candidate in seconds, after one warm-up call each.

    The candidates run in turn inside every repetition, so a burst of load from a neighbour on a
    shared machine hits all of them alike and the ratios between them stay meaningful.
    """
    for run in candidates.values():
        run()
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, run in candidates.items():
            start = time.perf_counter()
            run()
            samples[name].append(time.perf_counter() - start)
    return {name: float(np.median(s)) for name, s in samples.items()}


def timed(owner, name: str, into: dict, label: str, calls: dict | None = None):
    """Wrap ``owner.name`` (a module's function or a class's method, static or not) so that its calls add
    their seconds to ``into[label]`` (and one to ``calls[label]``); returns the undo."""
    real = owner.__dict__[name] if isinstance(owner.__dict__.get(name), staticmethod) else getattr(owner, name)
    static = isinstance(real, staticmethod)
    function = real.__func__ if static else real

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            into[label] = into.get(label, 0.0) + time.perf_counter() - started
            if calls is not None:
                calls[label] = calls.get(label, 0) + 1

    setattr(owner, name, staticmethod(wrapper) if static else wrapper)
    return lambda: setattr(owner, name, real)


def add_search_flags(parser, threads: int | None = None) -> None:
    """``--threads N`` (default ``threads``, None: every core) and ``--debug`` for a benchmark that runs
    pattern searches (see :func:`search_options`)."""
    parser.add_argument(
        "--threads",
        type=int,
        default=threads,
        help=f"the most threads a search may use (default: {threads or 'every core'})",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="the searches' and PatternKa's debug counts on stderr (logging at DEBUG level)",
    )


def search_options(threads: int | None = None, debug: bool = False):
    """The ``SearchOptions`` of ``--threads``; with ``--debug``, Veil's loggers at DEBUG level on stderr."""
    from veil.engine import SearchOptions

    if debug:
        logging.basicConfig(stream=sys.stderr, format="%(name)s: %(message)s")
        logging.getLogger("veil").setLevel(logging.DEBUG)
    return SearchOptions(threads=threads)


def dataset(relative: str) -> Path | None:
    path = DATASETS / relative
    return path if path.exists() else None


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import pandas as pd

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpus": str(cpus),
        "cpu": model,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
    }


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def checkout(rev: str, folder: Path) -> Path:
    """``rev``'s code laid out as the ``veil`` package (its source folders under ``veil/``) in
    ``folder``: put first on ``PYTHONPATH``, a child process imports that revision's Veil."""
    src = folder / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    package = folder / "veil"
    package.mkdir()
    for name in ("engine", "cli", "plugins", "desktop", "resources"):
        (package / name).symlink_to(src / name)
    return folder
