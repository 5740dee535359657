"""The desktop's Runner (DESIGN "The engine/Runner"): one background QThread serving a job queue.

The GUI thread never computes: it submits a job (a function of a :class:`Context`) and hears back
only through signals. The worker thread emits its own signals; :class:`Runner`, a QObject living
on the GUI thread, receives them through queued connections and re-emits them. Everything else
(panels, tests) connects to the Runner's signals, which therefore always arrive on the GUI thread
(waiting on a signal emitted from another thread is the pytest-qt trap of
``research/environment.md``).

Cancelling a queued job takes effect at once; a running job stops at its next
``ctx.progress``/``ctx.check`` (methods call them at least every 100 ms). Closing the window calls
:meth:`Runner.shutdown`, which cancels everything and joins the thread.
"""

from __future__ import annotations

import itertools
import queue
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QThread, Signal, Slot

from veil.engine import CancelToken, Cancelled, Context

from .tasks import Failure

_workers: weakref.WeakSet = weakref.WeakSet()
_stuck: list = []  # workers whose job ignored cancellation at shutdown (see Runner.shutdown)
# The GUI thread takes the GIL afresh for every call from Qt into Python (each model.data(), each
# delegate paint, each slot). Against a job running pure Python, every such take waits up to one
# switch interval (5 ms by default), so a repaint making a few dozen calls would stall the event
# loop for a few hundred ms. A shorter interval bounds that; it costs a job nothing while the GUI
# is idle (switches only happen when another thread asks for the GIL).
SWITCH_INTERVAL = 0.0005


def live_workers() -> list[QThread]:
    """Worker threads still running (tests assert there are none once a window has closed)."""
    return [w for w in list(_workers) if w.isRunning()]


@dataclass
class Job:
    id: int
    label: str
    work: Callable[[Context], object]
    kind: str = "run"
    seed: int = 0
    token: CancelToken = field(default_factory=CancelToken)


class _Worker(QThread):
    """Takes jobs off the queue one at a time, until it takes ``None``."""

    started_job = Signal(int)
    progressed = Signal(int, float, str)
    succeeded = Signal(int, object)
    failed = Signal(int, object)
    cancelled = Signal(int)

    def __init__(self, jobs: queue.Queue):
        super().__init__()
        self.setObjectName("veil-worker")
        self._jobs = jobs

    def run(self) -> None:
        while (job := self._jobs.get()) is not None:
            if job.token.cancelled:
                continue  # the Runner already reported it
            self.started_job.emit(job.id)
            ctx = Context(job.seed, _Progress(self, job.id), job.token)
            try:
                value = job.work(ctx)
            except Cancelled:
                self.cancelled.emit(job.id)
            except BaseException as exc:  # a plugin's bug must not end the worker
                self.failed.emit(job.id, Failure.from_exception(exc))
            else:
                # a job that finished work it cannot undo (a committed export) succeeded, whenever the cancel came
                if job.token.cancelled and not getattr(value, "committed", False):
                    self.cancelled.emit(job.id)
                else:
                    self.succeeded.emit(job.id, value)


class _Progress:
    def __init__(self, worker: _Worker, job_id: int):
        self._worker, self._id = worker, job_id

    def __call__(self, fraction: float, message: str) -> None:
        self._worker.progressed.emit(self._id, float(fraction), message)


class Runner(QObject):
    """The GUI thread's handle on the worker: submit, cancel, and signals for each job's life."""

    job_started = Signal(int)
    job_progress = Signal(int, float, str)
    job_finished = Signal(int, object)
    job_failed = Signal(int, object)
    job_cancelled = Signal(int)
    idle = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._queue: queue.Queue = queue.Queue()
        self._jobs: dict[int, Job] = {}  # submitted and not yet ended
        self._running: int | None = None
        self._ids = itertools.count(1)
        self._worker = _Worker(self._queue)
        self._worker.started_job.connect(self._on_started)
        self._worker.progressed.connect(self._on_progress)
        self._worker.succeeded.connect(self._on_succeeded)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)
        _workers.add(self._worker)
        self._worker.start()
        self._closed = False

    # -- the GUI thread's side ------------------------------------------------------------------
    def submit(self, label: str, work: Callable[[Context], object], *, kind: str = "run", seed: int = 0) -> int:
        if self._closed:
            raise RuntimeError("the runner has shut down")
        job = Job(next(self._ids), label, work, kind, seed)
        self._jobs[job.id] = job
        self._queue.put(job)
        return job.id

    def cancel(self, job_id: int) -> None:
        job = self._jobs.get(job_id)
        if job is None:
            return
        job.token.cancel()
        if job_id != self._running:  # still queued: the worker will skip it
            self._end(job_id)
            self.job_cancelled.emit(job_id)
            self._maybe_idle()

    def cancel_all(self, kind: str | None = None) -> None:
        for job_id in [j.id for j in self._jobs.values() if kind is None or j.kind == kind]:
            self.cancel(job_id)

    def is_idle(self) -> bool:
        return not self._jobs

    def pending(self, kind: str | None = None) -> int:
        return sum(1 for j in self._jobs.values() if kind is None or j.kind == kind)

    def running(self) -> int | None:
        return self._running

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel every job, stop the worker and wait for it; True when the thread has ended.

        A job that ignores cancellation cannot be killed (Python threads cannot be); its thread is
        then kept referenced until the process ends, rather than destroyed while running (which
        would abort the whole application)."""
        if not self._closed:
            self._closed = True
            for job in self._jobs.values():
                job.token.cancel()
            self._queue.put(None)
        ended = self._worker.wait(timeout_ms)
        if not ended:
            _stuck.append(self._worker)
        return ended

    # -- the worker's reports, received on the GUI thread ---------------------------------------
    @Slot(int)
    def _on_started(self, job_id: int) -> None:
        if job_id in self._jobs:
            self._running = job_id
            self.job_started.emit(job_id)

    @Slot(int, float, str)
    def _on_progress(self, job_id: int, fraction: float, message: str) -> None:
        if job_id in self._jobs:
            self.job_progress.emit(job_id, fraction, message)

    @Slot(int, object)
    def _on_succeeded(self, job_id: int, value: object) -> None:
        if self._end(job_id):
            self.job_finished.emit(job_id, value)
            self._maybe_idle()

    @Slot(int, object)
    def _on_failed(self, job_id: int, failure: object) -> None:
        if self._end(job_id):
            self.job_failed.emit(job_id, failure)
            self._maybe_idle()

    @Slot(int)
    def _on_cancelled(self, job_id: int) -> None:
        if self._end(job_id):
            self.job_cancelled.emit(job_id)
            self._maybe_idle()

    def _end(self, job_id: int) -> bool:
        if self._running == job_id:
            self._running = None
        return self._jobs.pop(job_id, None) is not None

    def _maybe_idle(self) -> None:
        if not self._jobs:
            self.idle.emit()
