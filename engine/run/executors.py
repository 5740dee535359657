"""Executor services: where a method's parallel work runs, chosen by the user, reached through ``ctx``.

A method that maps one function over many items (partitions of a set-valued table, folds, repeats)
calls ``ctx.executor.map(fn, items)`` and never asks where the work runs. The default is
:class:`InProcessExecutor` (this process, in order, checking for cancellation between items); an
optional backend — a Spark session for PatternKa's scale-out, a process pool — is a class a plugin
returns from the ``veil_register_executors`` hook, and the user chooses it by its name
(``veil run --executor NAME``; :func:`make_executor` with the registry).

A backend that blocks (a Spark job, a C miner) registers how to stop itself with
``ctx.on_cancel(fn)``, so cancelling the run stops it at once instead of at the next progress call.

An executor may also count a table held in files (:meth:`Executor.class_counts`): how many records
hold each combination of some columns, and how many records each file has. That is all a privacy
model judging groups needs of a release written in parts (docs/design.md#tables-larger-than-memory);
a cluster's executor reads the files where they lie, and without one :func:`read_counts` reads them
here, a file at a time.

An executor may also say how many threads a method may use in this process (its ``threads``; the
in-process one: every core unless told otherwise); ``ctx.threads`` passes it on, e.g. to a pattern
search (``SearchOptions(threads=ctx.threads)``).

>>> ex = make_executor("in-process")
>>> ex.map(lambda x: x * x, [1, 2, 3])
[1, 4, 9]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

import pandas as pd

from ..base.errors import BadInput

COUNT = "count"  # the column of class_counts holding each combination's records


class Executor(Protocol):
    """What a method may ask of an executor service."""

    name: str

    def map(self, fn: Callable, items: Iterable) -> list:
        """``[fn(x) for x in items]``, in order, wherever the service runs them."""

    def close(self) -> None:
        """Release what the service holds (sessions, worker processes)."""

    def class_counts(self, files: list[Path], fmt: str, columns: list[str]) -> tuple[pd.DataFrame, list[int]]:
        """Optional: the records of ``files`` (written by exporter ``fmt``) per combination of
        ``columns``, each value as its text (an empty cell: ""), with the count in column ``count``;
        and each file's records."""


class InProcessExecutor:
    """Runs every item here, in order; ``check`` (the run's cancel check) is called between items.
    ``threads``: how many threads a method may use (default: every core of the machine)."""

    name = "in-process"

    def __init__(self, check: Callable[[], None] | None = None, threads: int | None = None):
        if threads is not None and threads < 1:
            raise BadInput(f"an executor allows at least one thread, not {threads}")
        self._check = check
        self.threads = threads if threads is not None else max(1, os.cpu_count() or 1)

    @property
    def bound(self) -> bool:
        """Whether it checks a run's cancel token (a run context binds an unbound one to its own)."""
        return self._check is not None

    def map(self, fn: Callable, items: Iterable) -> list:
        out = []
        for item in items:
            if self._check is not None:
                self._check()
            out.append(fn(item))
        return out

    def close(self) -> None:
        pass


def read_counts(
    files, read: Callable[[Path], pd.DataFrame], columns: list[str], check=None
) -> tuple[pd.DataFrame, list[int]]:
    """:meth:`Executor.class_counts` in this process, each file read by ``read`` (an exporter's
    ``read_back``) one at a time: memory grows with one part and the combinations, not the records."""
    held: list[pd.Series] = []
    rows = []
    for path in files:
        if check is not None:
            check()
        frame = read(Path(path))
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise BadInput(f"{Path(path).name} lacks the column {missing[0]!r}")
        part = pd.DataFrame({c: frame[c].astype("string").fillna("").astype(object) for c in columns})
        rows.append(len(part))
        held.append(part.groupby(columns, sort=False, dropna=False).size() if columns else pd.Series([len(part)]))
        if len(held) > 8:  # fold the parts' counts together now and then
            held = [_fold(held, columns)]
    if not columns:
        return pd.DataFrame({COUNT: [sum(rows)]}), rows
    counts = _fold(held, columns) if held else pd.Series([], dtype="int64")
    frame = counts.rename(COUNT).reset_index() if len(counts) else pd.DataFrame(columns=[*columns, COUNT])
    return frame, rows


def _fold(held: list, columns: list[str]) -> pd.Series:
    return pd.concat(held).groupby(level=list(range(len(columns))), sort=False).sum()


def executor_names(registry=None) -> list[str]:
    """The executor services a run may choose: ``in-process`` and those ``registry``'s plugins register."""
    return registry.executor_names() if registry is not None else [InProcessExecutor.name]


def make_executor(name: str = "in-process", registry=None, **options) -> Executor:
    """A new executor service by its name: ``in-process``, or one a plugin of ``registry`` registers
    (hook ``veil_register_executors``), made with ``options``; BadInput naming the known ones otherwise."""
    if name == InProcessExecutor.name:
        return InProcessExecutor(**options)
    cls = registry.executor_class(name) if registry is not None else None
    if cls is None:
        raise BadInput(f"unknown executor {name!r}; available: {', '.join(executor_names(registry))}")
    return cls(**options)
