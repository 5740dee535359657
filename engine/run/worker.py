"""A supervised worker process that runs jobs away from the caller's interpreter (Qt-free).

The desktop's runner thread owns the queue and the signals; the work of a :class:`Remote` job runs
here, in a separate process started with the ``spawn`` method (the same on every platform: no
forked Qt state, no inherited locks). Because the process has its own interpreter, a job holding
the GIL for minutes, or stuck inside C code (a miner, Spark's gateway), cannot freeze the window,
and cancel can always end it: first politely (the job's :class:`Context` sees the cancel at its
next ``check``), then by ending the process after a grace period.

Protocol (over one duplex :func:`multiprocessing.Pipe`)::

    parent → worker   ("data", key, obj)            a dataset, sent once and cached by key
                      ("job", id, seed, func, args, kwargs)
                      ("stop",)
    worker → parent   ("ready", pid)
                      ("started", id) ("progress", id, fraction, message)
                      ("done", id, value) ("failed", id, JobError) ("cancelled", id)

Datasets (:class:`Table`, :class:`BinaryMatrix`) travel once: both sides pickle a known dataset
as a reference to its key (``persistent_id``), so a run's arguments and its :class:`RunResult`
(which holds the data it ran on) cost only the release to send. Pickle protocol 5 sends a frame's
NumPy blocks as raw bytes; ``docs/benchmarks.md`` has the measured transfer times.

The worker builds its own plugin registry from the parent's :attr:`Registry.recipe`, so plugins
registered on the fly (tests) must be importable by reference (a module-level class or module).
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import pickle
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ..data.binary import BinaryMatrix
from ..base.errors import Cancelled
from .jobs import Context, call_each

CACHED_DATASETS = 2  # the data of the current run and of the one before (a reloaded file)
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class Remote:
    """A job for the worker process: ``func(registry, *args, ctx, **kwargs)``.

    ``func`` must be importable by reference (a module-level function); the worker passes its own
    registry first and the job's :class:`Context` after the positional arguments.
    """

    func: Callable
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class JobError:
    """A job's exception as it crosses the pipe: the exception itself when it pickles, its text
    and traceback always."""

    exception: BaseException
    details: str


class WorkerDied(RuntimeError):
    """The worker process ended while a job was running."""


class _EventToken:
    """A cancel token backed by a cross-process event (what the job's Context checks). The callbacks
    a blocking backend registers (:meth:`on_cancel`) are called in this process, by a watcher
    thread that waits for the event while any is registered."""

    def __init__(self, event):
        self._event = event
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._watcher: threading.Thread | None = None

    def cancel(self) -> None:
        self._event.set()
        self._fire()

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """As :meth:`CancelToken.on_cancel`: ``fn`` is called when the run is cancelled (at once if it is)."""
        with self._lock:
            if not self._event.is_set():
                key, self._next = self._next, self._next + 1
                self._callbacks[key] = fn
                if self._watcher is None or not self._watcher.is_alive():
                    self._watcher = threading.Thread(target=self._watch, name="veil-cancel-watch", daemon=True)
                    self._watcher.start()
                return lambda: self._drop(key)
        fn()
        return lambda: None

    def _drop(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)

    def _watch(self) -> None:
        while True:
            if self._event.wait(0.2):
                self._fire()
                return
            with self._lock:
                if not self._callbacks:
                    self._watcher = None
                    return

    def _fire(self) -> None:
        with self._lock:
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        call_each(callbacks)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


# -- pickling with shared datasets -------------------------------------------------------------


def _is_dataset(obj) -> bool:
    from ..data.table import Table

    return isinstance(obj, (Table, BinaryMatrix))


class _Pickler(pickle.Pickler):
    def __init__(self, file, keys: dict[int, int]):
        super().__init__(file, protocol=5)
        self._keys = keys

    def persistent_id(self, obj):
        if _is_dataset(obj):
            key = self._keys.get(id(obj))
            if key is not None:
                return ("dataset", key)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, datasets: dict[int, object]):
        super().__init__(file)
        self._datasets = datasets

    def persistent_load(self, pid):
        kind, key = pid
        if kind != "dataset" or key not in self._datasets:
            raise pickle.UnpicklingError(f"unknown shared dataset {pid!r}")
        return self._datasets[key]


class _Channel:
    """One end of the pipe, with the datasets both ends know by key."""

    def __init__(self, conn):
        self.conn = conn
        self.datasets: OrderedDict[int, object] = OrderedDict()

    def keep(self, key: int, obj) -> None:
        self.datasets[key] = obj
        while len(self.datasets) > CACHED_DATASETS:
            self.datasets.popitem(last=False)

    def key_of(self, obj) -> int | None:
        for key, known in self.datasets.items():
            if known is obj:
                return key
        return None

    def send(self, message: tuple) -> None:
        buf = io.BytesIO()
        _Pickler(buf, {id(o): k for k, o in self.datasets.items()}).dump(message)
        self.conn.send_bytes(buf.getbuffer())

    def send_plain(self, message: tuple) -> None:
        """A message whose datasets are sent in full (the ``data`` message itself)."""
        self.conn.send_bytes(pickle.dumps(message, protocol=5))

    def recv(self):
        return _Unpickler(io.BytesIO(self.conn.recv_bytes()), self.datasets).load()


# -- the worker's side -------------------------------------------------------------------------


def serve(conn, cancel_event, registry_recipe: dict) -> None:
    """The worker process's main loop (the target of :class:`WorkerProcess`)."""
    from ..model.registry import make_registry

    channel = _Channel(conn)
    registry = make_registry(**registry_recipe)
    channel.send(("ready", os.getpid()))
    # a long-lived process: the compiled kernels load while its user is still choosing a run, which until
    # they are loaded takes the NumPy path (docs/benchmarks.md#against-arx-in-one-run)
    threading.Thread(target=_warm_kernels, name="veil-warm-kernels", daemon=True).start()
    while True:
        try:
            message = channel.recv()
        except EOFError:  # the parent has gone
            return
        if message[0] == "stop":
            return
        if message[0] == "data":
            _, key, obj = message
            channel.keep(key, obj)
        elif message[0] == "job":
            _run_job(channel, registry, cancel_event, *message[1:])


def _warm_kernels() -> None:
    from ..kernels.grouping import warm

    try:
        warm()
    except Exception:  # noqa: BLE001 - a kernel that cannot load leaves the NumPy path, which every run can take
        pass


def _run_job(channel: _Channel, registry, cancel_event, job_id: int, seed: int, func, args, kwargs) -> None:
    channel.send(("started", job_id))

    def report(fraction: float, message: str) -> None:
        channel.send(("progress", job_id, fraction, message))

    # every run the desktop makes may be exported: DP noise comes from the secure source
    ctx = Context(seed, report, _EventToken(cancel_event), mode="release")
    try:
        value = func(registry, *args, ctx, **kwargs)
    except Cancelled:
        channel.send(("cancelled", job_id))
        return
    except BaseException as exc:  # a plugin's bug must not end the worker
        _send_failure(channel, job_id, exc)
        return
    if cancel_event.is_set() and not getattr(value, "committed", False):  # a committed export stands
        channel.send(("cancelled", job_id))
        return
    try:
        channel.send(("done", job_id, value))
    except Exception as exc:  # a result that cannot be pickled is the job's failure, not ours
        _send_failure(channel, job_id, exc)


def _send_failure(channel: _Channel, job_id: int, exc: BaseException) -> None:
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        pickle.dumps(exc)
        carried = exc
    except Exception:
        carried = RuntimeError(f"{type(exc).__name__}: {exc}")
    channel.send(("failed", job_id, JobError(carried, details)))


# -- the parent's side -------------------------------------------------------------------------


class WorkerProcess:
    """A spawned worker process and the parent's end of its pipe.

    Parameters
    ----------
    registry_recipe : dict
        Keyword arguments of :func:`make_registry` for the worker's own registry
        (:attr:`Registry.recipe`).
    """

    def __init__(self, registry_recipe: dict):
        context = mp.get_context("spawn")
        self.recipe = registry_recipe
        self._cancel = context.Event()
        parent, child = context.Pipe(duplex=True)
        self._channel = _Channel(parent)
        self.process = context.Process(
            target=serve, args=(child, self._cancel, registry_recipe), name="veil-worker", daemon=True
        )
        self.process.start()
        child.close()
        self._next_key = 1
        self.pid: int | None = None

    # -- state ---------------------------------------------------------------------------------
    def alive(self) -> bool:
        return self.process.is_alive()

    def exit_description(self) -> str:
        code = self.process.exitcode
        if code is None:
            return "it stopped answering"
        if code < 0:
            import signal

            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = " (the system may have ended it for want of memory)" if name == "SIGKILL" else ""
            return f"it was ended by {name}{hint}"
        return f"it exited with code {code}"

    # -- jobs ----------------------------------------------------------------------------------
    def submit(self, job_id: int, remote: Remote, seed: int = 0) -> None:
        """Send the job (and, once, each dataset it names); it starts at once."""
        self._cancel.clear()
        for obj in (*remote.args, *remote.kwargs.values()):
            if _is_dataset(obj) and self._channel.key_of(obj) is None:
                key, self._next_key = self._next_key, self._next_key + 1
                self._channel.send_plain(("data", key, obj))
                self._channel.keep(key, obj)
        self._channel.send(("job", job_id, seed, remote.func, tuple(remote.args), dict(remote.kwargs)))

    def cancel(self) -> None:
        """Ask the running job to stop at its next check."""
        self._cancel.set()

    def receive(self, timeout: float):
        """The next message, or None after ``timeout`` seconds; :class:`WorkerDied` if the process
        has ended (its pipe closed)."""
        try:
            if not self._channel.conn.poll(timeout):
                if not self.alive():
                    raise WorkerDied(self.exit_description())
                return None
            message = self._channel.recv()
        except (EOFError, OSError, ConnectionError):
            self.process.join(1.0)
            raise WorkerDied(self.exit_description()) from None
        if message[0] == "ready":
            self.pid = message[1]
        return message

    def wait_ready(self, timeout: float = 120.0) -> None:
        while self.pid is None:
            if self.receive(timeout) is None:
                raise WorkerDied("it did not start")

    # -- ending ----------------------------------------------------------------------------------
    def kill(self) -> None:
        """End the process now (a job that ignored the polite cancel, or shutdown)."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(STOP_SECONDS)
        self._channel.conn.close()

    def stop(self) -> None:
        """Ask the idle worker to exit; end it if it does not."""
        try:
            self._channel.send(("stop",))
        except (OSError, ValueError):
            pass
        self.process.join(STOP_SECONDS)
        self.kill()
