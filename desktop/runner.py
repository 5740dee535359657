"""The desktop's Runner (docs/design.md, "The worker process"): one background QThread serving a job queue.

The GUI thread never computes: it submits a job and hears back only through signals. The worker
thread emits its own signals; :class:`Runner`, a QObject living on the GUI thread, receives them
through queued connections and re-emits them. Everything else (panels, tests) connects to the
Runner's signals, which therefore always arrive on the GUI thread (waiting on a signal emitted
from another thread is a known pytest-qt trap).

Two kinds of job:

- a :class:`~veil.engine.run.worker.Remote` job (runs, exports) is handed to a supervised worker
  *process* (:mod:`veil.engine.run.worker`), started once and reused. Its GIL is not the window's: a
  method holding the interpreter for minutes, or stuck in C code, cannot freeze the window. Cancel
  asks the job politely, then ends the process after :data:`CANCEL_GRACE` seconds; a worker that
  dies (crash, out of memory, killed) fails its run with a clear message and the next job gets a
  new one.
- a plain function of a :class:`Context` (reading a file, whose result the window needs anyway)
  runs on the thread itself, and stops at its next ``ctx.progress``/``ctx.check``.

Cancelling a queued job takes effect at once. Closing the window calls :meth:`Runner.shutdown`,
which cancels everything and joins the thread; the idle worker process goes back to a small pool
(:func:`worker_process`) for the next window of the same plugins.
"""

from __future__ import annotations

import atexit
import itertools
import queue
import sys
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QThread, Signal, Slot

from veil.engine import CancelToken, Cancelled, Context, Remote, WorkerDied, WorkerProcess

from .state.tasks import Failure

_workers: weakref.WeakSet = weakref.WeakSet()
_stuck: list = []  # workers whose job ignored cancellation at shutdown (see Runner.shutdown)
# The GUI thread takes the GIL afresh for every call from Qt into Python (each model.data(), each
# delegate paint, each slot). Against a job running pure Python, every such take waits up to one
# switch interval (5 ms by default), so a repaint making a few dozen calls would stall the event
# loop for a few hundred ms. A shorter interval bounds that; it costs a job nothing while the GUI
# is idle (switches only happen when another thread asks for the GIL).
SWITCH_INTERVAL = 0.0005
CANCEL_GRACE = 0.5  # seconds a job in the worker process has to honour a cancel before it is ended
POLL = 0.02  # how often the runner thread looks at a remote job's cancel token
_idle_processes: list[WorkerProcess] = []  # worker processes no runner is using (see Runner.shutdown)


_open: dict = {}  # worker -> (its queue, its jobs), for each runner not shut down (see _stop_at_exit)


@atexit.register
def _stop_at_exit() -> None:
    """Stop the workers of runners nobody shut down (a script that returns without closing its window):
    a QThread destroyed while it runs aborts the whole process. Their jobs are cancelled first."""
    for jobs_queue, jobs in list(_open.values()):
        for job in list(jobs.values()):
            job.token.cancel()
        jobs_queue.put(None)
    for worker in list(_open):
        if not worker.wait(10_000):
            _stuck.append(worker)
    _open.clear()


def live_workers() -> list[QThread]:
    """Worker threads still running (tests assert there are none once a window has closed)."""
    return [w for w in list(_workers) if w.isRunning()]


@dataclass
class Job:
    id: int
    label: str
    work: Callable[[Context], object] | Remote
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

    def __init__(self, jobs: queue.Queue, registry_recipe: dict):
        super().__init__()
        self.setObjectName("veil-worker")
        self._jobs = jobs
        self._recipe = registry_recipe
        self._process: WorkerProcess | None = None

    def run(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                if job.token.cancelled:
                    continue  # the Runner already reported it
                self.started_job.emit(job.id)
                if isinstance(job.work, Remote):
                    self._run_remote(job)
                else:
                    self._run_here(job)
        finally:
            if self._process is not None:
                _idle_processes.append(self._process)
                self._process = None

    def _run_here(self, job: Job) -> None:
        # every run the desktop makes may be exported: DP noise comes from the secure source
        ctx = Context(job.seed, _Progress(self, job.id), job.token, mode="release" if job.kind == "run" else "study")
        try:
            value = job.work(ctx)
        except Cancelled:
            self.cancelled.emit(job.id)
        except BaseException as exc:  # a plugin's bug must not end the worker
            self.failed.emit(job.id, Failure.from_exception(exc))
        else:
            self._ended(job, value)

    def _ended(self, job: Job, value: object) -> None:
        # a job that finished work it cannot undo (a committed export) succeeded, whenever the cancel came
        if job.token.cancelled and not getattr(value, "committed", False):
            self.cancelled.emit(job.id)
        else:
            self.succeeded.emit(job.id, value)

    # -- jobs in the worker process ----------------------------------------------------------------
    def _run_remote(self, job: Job) -> None:
        asked = None  # when the polite cancel was sent
        try:
            process = self._ready_process(job)
            if process is None:
                self.cancelled.emit(job.id)
                return
            process.submit(job.id, job.work, job.seed)
            while True:
                if job.token.cancelled and asked is None:
                    process.cancel()
                    asked = time.monotonic()
                if asked is not None and time.monotonic() - asked > CANCEL_GRACE:
                    self._end_process()  # the job ignored the cancel (C code, Spark, a careless loop)
                    self.cancelled.emit(job.id)
                    return
                message = process.receive(POLL)
                if message is not None and self._handle(job, message):
                    return
        except WorkerDied as exc:
            self._process = None
            if job.token.cancelled:
                self.cancelled.emit(job.id)
            else:
                self.failed.emit(
                    job.id,
                    Failure(
                        f"the worker process running this job ended unexpectedly: {exc}. The window is "
                        "unaffected and the next run starts a new worker.",
                        str(exc),
                        True,
                    ),
                )
        except Exception as exc:  # arguments that cannot be sent, a broken pipe: this job fails
            self._end_process()
            self.failed.emit(job.id, Failure.from_exception(exc))

    def _handle(self, job: Job, message: tuple) -> bool:
        """React to one message of the worker; True when the job has ended."""
        kind = message[0]
        if kind == "progress":
            self.progressed.emit(job.id, float(message[2]), message[3])
            return False
        if kind == "done":
            self._ended(job, message[2])
        elif kind == "failed":
            error = message[2]
            self.failed.emit(job.id, Failure.from_exception(error.exception, error.details))
        elif kind == "cancelled":
            self.cancelled.emit(job.id)
        else:
            return False  # "started", "ready"
        return True

    def _ready_process(self, job: Job) -> WorkerProcess | None:
        """The worker process, started if need be and ready (None: cancelled while it started)."""
        if self._process is not None and not self._process.alive():
            self._process = None
        if self._process is None:
            self._process = worker_process(self._recipe)
        while self._process.pid is None:
            if job.token.cancelled:
                return None
            self.progressed.emit(job.id, 0.0, "starting the worker process")
            self._process.receive(0.1)
        return self._process

    def _end_process(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process = None


def worker_process(registry_recipe: dict) -> WorkerProcess:
    """An idle worker process built for these plugins, or a new one (started, not yet ready)."""
    while _idle_processes:
        process = _idle_processes.pop()
        if process.alive() and process.recipe == registry_recipe:
            return process
        process.stop()
    return WorkerProcess(registry_recipe)


def stop_idle_processes() -> None:
    """End the pooled worker processes (they are daemons: the interpreter's exit ends them too)."""
    while _idle_processes:
        _idle_processes.pop().stop()


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

    def __init__(self, parent: QObject | None = None, *, registry_recipe: dict | None = None):
        """``registry_recipe``: how the worker process builds its registry (``Registry.recipe``;
        by default every installed plugin)."""
        super().__init__(parent)
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._queue: queue.Queue = queue.Queue()
        self._jobs: dict[int, Job] = {}  # submitted and not yet ended
        self._running: int | None = None
        self._ids = itertools.count(1)
        self._worker = _Worker(self._queue, registry_recipe or {"entry_points": True, "modules": ()})
        self._worker.started_job.connect(self._on_started)
        self._worker.progressed.connect(self._on_progress)
        self._worker.succeeded.connect(self._on_succeeded)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)
        _workers.add(self._worker)
        _open[self._worker] = (self._queue, self._jobs)  # kept (and stopped at exit) until shut down
        self._worker.start()
        self._closed = False

    # -- the GUI thread's side ------------------------------------------------------------------
    def submit(
        self, label: str, work: Callable[[Context], object] | Remote, *, kind: str = "run", seed: int = 0
    ) -> int:
        """Queue ``work``: a :class:`Remote` job runs in the worker process, a function of a
        :class:`Context` on the runner's thread."""
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

    def worker_pid(self) -> int | None:
        """The process id of the worker process serving this runner (None before its first job)."""
        process = self._worker._process
        return None if process is None else process.pid

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel every job, stop the worker and wait for it; True when the thread has ended.

        A job in the worker process that ignores cancellation is ended with the process. A job on
        the thread cannot be killed (Python threads cannot be); its thread is then kept referenced
        until the process ends, rather than destroyed while running (which would abort the whole
        application)."""
        if not self._closed:
            self._closed = True
            for job in self._jobs.values():
                job.token.cancel()
            self._queue.put(None)
        ended = self._worker.wait(timeout_ms)
        if not ended:
            _stuck.append(self._worker)
        _open.pop(self._worker, None)
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
