"""The run context: progress, cooperative cancellation, a seeded RNG and a logger.

A method is a pure function of (data, parameters, seed); everything else it needs from its
surroundings comes through a :class:`Context`. Methods call :meth:`Context.progress` (or
:meth:`Context.check`) at least every 100 ms of work; both raise :class:`Cancelled` once the user
has asked to stop.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

import numpy as np

from ..base.errors import Cancelled
from .noise import SECURE, SEEDED, make_noise

ProgressCallback = Callable[[float, str], None]
MODES = ("study", "release")


def call_each(callbacks) -> None:
    """Call every cancel callback, once; one that fails is logged, and the others are still called
    (a backend failing to stop must not stop the others being told)."""
    for fn in callbacks:
        try:
            fn()
        except Exception:
            logging.getLogger("veil.run").exception("a cancel callback failed")


class CancelToken:
    """Thread-safe flag set by whoever wants a run to stop; cancelling also calls every callback a
    blocking backend registered (:meth:`on_cancel`), once, on the cancelling thread."""

    def __init__(self):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._holds = 0
        self._kept = 0  # holds of final steps that outlast them (see holding)
        self.deferred = None  # why a stop asked for during a held step waits for its end (see defer)

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        call_each(callbacks)

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn`` when the run is cancelled (at once if it already is); returns a function that
        unregisters it (call it when the blocking work is over)."""
        with self._lock:
            if not self._event.is_set():
                key, self._next = self._next, self._next + 1
                self._callbacks[key] = fn
                return lambda: self._callbacks.pop(key, None)
        fn()
        return lambda: None

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @contextmanager
    def holding(self, final: bool = False) -> Iterator[None]:
        """A step that, once begun, must finish (an export's commit and the removal of its private
        folder): a stop asked for meanwhile through :meth:`defer` takes effect when the step ends,
        as a cancel, so whatever comes after the step stops at its next check.

        ``final``: the step, when it succeeds, completes the work (an export's commit); its hold then
        outlasts it until :meth:`release`, so a stop asked for while the finished work is only being
        reported is deferred too, and the work is said to have finished rather than been stopped.

        No lock: the step and the one who defers (a signal handler, which Python runs on the main
        thread between two bytecodes of the step) share one thread, and a lock held by the step
        would deadlock the handler."""
        self._holds += 1
        succeeded = False
        try:
            yield
            succeeded = True
        finally:
            if final and succeeded:
                self._kept += 1
            else:
                self._let_go(1)

    def release(self) -> None:
        """End the holds that outlasted their final steps (:meth:`holding`); a stop deferred meanwhile
        then takes effect as a cancel."""
        kept, self._kept = self._kept, 0
        self._let_go(kept)

    def _let_go(self, holds: int) -> None:
        self._holds -= holds
        if not self._holds and self.deferred is not None:
            self.cancel()

    def defer(self, reason) -> bool:
        """Whether a held step is under way; then ``reason`` (a signal's number, say) is kept in
        :attr:`deferred` and the stop comes when the step ends: the caller (a signal handler) must
        not interrupt it. False when nothing is held: the caller stops the work itself."""
        if not self._holds:
            return False
        if self.deferred is None:
            self.deferred = reason
        return True


class Context:
    """What a running method may use besides its data and parameters.

    Parameters
    ----------
    seed : int, optional
        Seed of :attr:`rng`; the same seed gives the same release.
    on_progress : callable(fraction, message), optional
    token : CancelToken, optional
    span : (start, end)
        The part of the parent's progress bar this context reports into.
    noise_source : "seeded" or "secure"
        Where differential-privacy noise (:attr:`noise`) comes from: the seeded :attr:`rng` (studies,
        reproducible) or the operating system's secure source (a release; see :mod:`veil.engine.noise`).
    mode : "study" or "release", optional
        The same choice by purpose: ``"release"`` (``veil run``, the desktop's runs, which may be
        exported) means the secure source — a seed written into a manifest must not let anyone
        subtract the noise again; ``"study"`` (studies, tests, sweeps) the seeded one. Given, it
        overrides ``noise_source``; :attr:`mode` always says which. Children inherit it.
    executor : executor service, optional
        Where :attr:`executor` runs parallel work (default: in this process; see
        :mod:`veil.engine.executors`).
    threads : int, optional
        How many threads a method may use in this process (:attr:`threads`); default: the
        executor's, else every core of the machine. Children inherit it.
    """

    def __init__(
        self,
        seed: int | None = 0,
        on_progress: ProgressCallback | None = None,
        token: CancelToken | None = None,
        logger: logging.Logger | None = None,
        span: tuple[float, float] = (0.0, 1.0),
        noise_source: str = SEEDED,
        executor=None,
        mode: str | None = None,
        threads: int | None = None,
    ):
        if threads is not None and threads < 1:
            raise ValueError(f"a context allows at least one thread, not {threads}")
        if mode is not None:
            if mode not in MODES:
                raise ValueError(f"a context's mode is one of {', '.join(MODES)}, not {mode!r}")
            noise_source = SECURE if mode == "release" else SEEDED
        mode = "release" if noise_source == SECURE else "study"
        self.seed = seed
        self.mode = mode
        self.rng = np.random.default_rng(seed)
        self.noise = make_noise(noise_source, self.rng)
        self.token = token or CancelToken()
        self.log = logger or logging.getLogger("veil.run")
        if on_progress is not None and not isinstance(on_progress, _Forward):
            on_progress = _Forward(on_progress)  # shared with the children: one run's progress never goes back
        self._on_progress = on_progress
        self._span = span
        self._last_emit = 0.0
        self.rerun = None  # for metrics: run the same method on a subset of the rows (nested protocols)
        self.sample: dict | None = None  # set by a metric computed on a sample (see :meth:`sampled`)
        # work the metrics of one measurement share (e.g. a release's regions over its hierarchies),
        # a dict for its duration (set by ``measure``), else None: each metric computes its own
        self.shared: dict | None = None
        self._executor = executor
        self._threads = threads

    @property
    def threads(self) -> int:
        """How many threads a method may use in this process (a search, a pool of its own): the
        context's own count when given, else its executor's (an executor may say how many it allows),
        else every core of the machine."""
        if self._threads is not None:
            return self._threads
        allowed = getattr(self._executor, "threads", None)
        return int(allowed) if allowed else max(1, os.cpu_count() or 1)

    @property
    def executor(self):
        """The executor service of the run (in-process, checking this context's cancel token, by default)."""
        from .executors import InProcessExecutor

        if self._executor is None or (type(self._executor) is InProcessExecutor and not self._executor.bound):
            # checks this run's cancel token between items (and allows as many threads as the one it replaces)
            self._executor = InProcessExecutor(self.check, getattr(self._executor, "threads", None))
        return self._executor

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Have ``fn`` called when the run is cancelled: how a blocking backend (a Spark job, a C
        miner) stops itself. Returns a function that unregisters it."""
        return self.token.on_cancel(fn)

    def holding(self, final: bool = False):
        """A context manager around a step that must finish once begun (:meth:`CancelToken.holding`);
        with a token that holds nothing (a worker process's, which no signal handler defers to), a
        plain step."""
        hold = getattr(self.token, "holding", None)
        return hold(final) if hold is not None else nullcontext()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the run was asked to stop."""
        if self.token.cancelled:
            raise Cancelled("the run was cancelled")

    def progress(self, fraction: float, message: str = "", *, check: bool = True) -> None:
        """Report progress in [0, 1] of this context's span; also checks for cancellation, unless
        ``check`` is False (for work that is done and can no longer be undone, e.g. a committed export)."""
        if check:
            self.check()
        if self._on_progress is None:
            return
        now = time.monotonic()
        if fraction < 1.0 and now - self._last_emit < 0.05:  # at most 20 updates a second
            return
        self._last_emit = now
        lo, hi = self._span
        self._on_progress(lo + (hi - lo) * min(max(fraction, 0.0), 1.0), message)

    def child(self, start: float, end: float, seed: int | None = None) -> Context:
        """A context reporting into [start, end] of this one's span, sharing the cancel token."""
        lo, hi = self._span
        span = (lo + (hi - lo) * start, lo + (hi - lo) * end)
        child = Context(
            self.seed if seed is None else seed,
            self._on_progress,
            self.token,
            self.log,
            span,
            self.noise.source,
            self._executor,
            threads=self._threads,
        )
        child.rerun = self.rerun
        child.shared = self.shared
        return child

    def sampled(self, sample: dict) -> None:
        """A metric says it was computed on a seeded sample: ``{"rows": drawn, "of": how many there
        are (or about), "seed": seed, "unit": what was drawn ("records" when omitted)}``. The run's
        manifest and report state it beside the value."""
        self.sample = dict(sample)

    def spawn_seed(self) -> int:
        """A fresh seed derived from this context's RNG (for sub-runs and repeats)."""
        return int(self.rng.integers(0, 2**31 - 1))


class _Forward:
    """A progress callback that never reports less than it reported before: a method's estimate of
    the work left may grow (Mondrian finds more to cut), but the bar a person watches only moves on."""

    def __init__(self, fn: ProgressCallback):
        self._fn = fn
        self.highest = 0.0

    def __call__(self, fraction: float, message: str = "") -> None:
        self.highest = max(self.highest, float(fraction))
        self._fn(self.highest, message)
