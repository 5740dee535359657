"""The Runner: runs happen in a worker process, so the window keeps ticking while a job holds the
GIL; cancel ends even a job stuck in C code; a dead worker fails its run and the app stays usable.

How long the event loop stalls, and how fast cancel is, are measured by
``benchmarks/bench_runner.py`` (timings on a shared machine are not pass/fail facts)."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest
from PySide6.QtCore import Qt, QTimer

from veil.desktop.runner import Runner, live_workers
from veil.engine import make_registry

from .helpers import load_demo_into, open_window
from .worker_plugins import TestPlugins

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="holds the GIL through libc's sleep")


@pytest.fixture
def slow_window(qtbot):
    window = open_window(qtbot, make_registry(modules=[TestPlugins]))
    load_demo_into(window, qtbot)
    yield window
    window.close()


def choose(window, method: str, **values) -> None:
    window.config_panel.choose(None, [method], values=values, metrics=[])
    assert window.config_panel.run_button.isEnabled(), window.config_panel.plan_error.text()


def run_and_wait(window, qtbot, timeout=60_000):
    with qtbot.waitSignal(window.controller.batch_finished, timeout=timeout):
        window.controller.run()
    return window.controller.runs.entries[-1]


def test_a_run_happens_in_the_worker_process_not_the_window(slow_window, qtbot):
    choose(slow_window, "busy-test", seconds=0.1)
    first = run_and_wait(slow_window, qtbot)
    assert first.status == "done"
    pid = first.outcome.result.release.details["pid"]
    assert pid != os.getpid() and pid == slow_window.controller.runner.worker_pid()
    second = run_and_wait(slow_window, qtbot)
    assert second.outcome.result.release.details["pid"] == pid  # started once, reused
    assert second.outcome.result.original is slow_window.controller.dataset.data  # the data came back by reference


def test_the_worker_loads_the_compiled_kernels_in_the_background(slow_window, qtbot):
    """A long-lived worker loads numba's kernels after it starts, unasked: its runs then roll class
    tables up compiled (docs/benchmarks.md#against-arx-in-one-run)."""
    from veil.engine.kernels import grouping

    if grouping.compiled_units() is None:
        pytest.skip("numba is not installed: every run takes the NumPy path")
    choose(slow_window, "kernels-test", seconds=60)
    entry = run_and_wait(slow_window, qtbot, timeout=90_000)
    assert entry.status == "done" and entry.outcome.result.release.details["compiled"] is True


@posix_only
def test_the_event_loop_ticks_while_a_job_holds_the_gil_in_its_process(slow_window, qtbot):
    choose(slow_window, "busy-test", seconds=0.0)
    run_and_wait(slow_window, qtbot)  # the worker is up: what follows counts only the job
    choose(slow_window, "gil-hog-test", seconds=2)
    ticks, during = [0], []
    runner = slow_window.controller.runner
    runner.job_started.connect(lambda _: during.append(ticks[0]))
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    entry = run_and_wait(slow_window, qtbot)
    timer.stop()
    assert entry.status == "done"
    # in the window's own process the timer could not fire once in the two seconds the GIL is held
    assert ticks[0] - during[0] >= 20, f"{ticks[0] - during[0]} ticks while the job held the GIL"


@posix_only
def test_cancel_ends_a_job_stuck_in_c_code(slow_window, qtbot):
    choose(slow_window, "gil-hog-test", seconds=600)
    entry = slow_window.controller.run()[0]
    qtbot.waitUntil(lambda: entry.message == "holding the GIL", timeout=60_000)
    pid = slow_window.controller.runner.worker_pid()
    with qtbot.waitSignal(slow_window.controller.batch_finished, timeout=30_000):
        slow_window.controller.cancel(entry)
    assert entry.status == "cancelled"
    choose(slow_window, "busy-test", seconds=0.0)
    after = run_and_wait(slow_window, qtbot)
    assert after.status == "done" and after.outcome.result.release.details["pid"] != pid  # a new worker


def test_killing_the_worker_mid_run_fails_the_run_and_the_window_stays_usable(slow_window, qtbot):
    choose(slow_window, "busy-test", seconds=600.0)
    entry = slow_window.controller.run()[0]
    qtbot.waitUntil(lambda: entry.fraction > 0, timeout=60_000)
    with qtbot.waitSignal(slow_window.controller.batch_finished, timeout=30_000):
        os.kill(slow_window.controller.runner.worker_pid(), signal.SIGKILL)
    assert entry.status == "failed"
    assert "worker process" in entry.failure.message and "ended unexpectedly" in entry.failure.message
    assert "SIGKILL" in entry.failure.message
    slow_window.last_error.close()
    choose(slow_window, "all-features")
    assert run_and_wait(slow_window, qtbot).status == "done"


def test_esc_cancels_a_long_run(slow_window, qtbot):
    choose(slow_window, "busy-test", seconds=600.0)
    slow_window.controller.run()
    qtbot.waitUntil(lambda: slow_window.controller.runs.entries[0].fraction > 0, timeout=60_000)
    assert slow_window.actions.cancel.isEnabled()
    with qtbot.waitActive(slow_window):  # a shortcut reaches the active window only
        slow_window.activateWindow()
    qtbot.keyClick(slow_window, Qt.Key_Escape)
    qtbot.waitUntil(slow_window.controller.runner.is_idle, timeout=30_000)
    entry = slow_window.controller.runs.entries[0]
    assert entry.status == "cancelled" and slow_window.controller.runner.running() is None
    assert not slow_window.actions.cancel.isEnabled()
    slow_window.close()
    assert live_workers() == []


def test_cancel_one_queued_run_keeps_the_others(slow_window, qtbot):
    slow_window.config_panel.choose(None, ["busy-test"], sweep={"seconds": "0.2, 0.3, 0.4"}, metrics=[])
    entries = slow_window.controller.run()
    assert len(entries) == 3
    slow_window.controller.cancel(entries[1])
    assert entries[1].status == "cancelled"  # a queued run is cancelled at once
    qtbot.waitUntil(slow_window.controller.runner.is_idle, timeout=60_000)
    assert [e.status for e in entries] == ["done", "cancelled", "done"]
    assert slow_window.runs_panel.results_model.rowCount() == 2


def test_a_failing_plugin_shows_an_error_and_the_app_stays_usable(slow_window, qtbot):
    choose(slow_window, "boom-test")
    entry = run_and_wait(slow_window, qtbot)
    assert entry.status == "failed" and "exploded" in entry.failure.message
    box = slow_window.last_error
    assert box.isVisible() and "exploded" in box.text()
    assert "Traceback" not in box.detailedText()  # never a traceback: the log file that keeps it
    log = box.detailedText().split(" are in ")[1].split(";")[0].rstrip(".")
    assert "RuntimeError" in open(log, encoding="utf-8").read()
    assert "failed" in slow_window.runs_panel.runs_model.index(0, 1).data()
    box.close()
    panel = slow_window.runs_panel
    panel.queue_view.selectRow(0)
    assert panel.details.isEnabled()
    panel.details.click()  # details on demand, again
    details = slow_window.last_details
    assert details.isVisible() and "exploded" in details.text.toPlainText()
    assert "Traceback" not in details.text.toPlainText()
    details.close()

    choose(slow_window, "all-features")
    assert run_and_wait(slow_window, qtbot).status == "done"
    assert slow_window.runs_panel.results_model.rowCount() == 1


def test_runner_reports_on_the_gui_thread_and_joins(qtbot):
    runner = Runner()
    threads = []

    def work(ctx):
        threads.append(threading.get_ident())
        ctx.progress(0.5, "half")
        return 42

    with qtbot.waitSignal(runner.job_finished, timeout=5_000) as blocker:
        runner.submit("answer", work)
    assert blocker.args[1] == 42 and threads[0] != threading.get_ident()
    assert runner.shutdown() and live_workers() == []


LEFT_RUNNING = """
import threading, time
from PySide6.QtWidgets import QApplication
from veil.desktop.runner import Runner

def main():
    app = QApplication([])
    runner = Runner()
    started = threading.Event()

    def work(ctx):
        started.set()
        while True:  # ends only by a cancel
            ctx.check()
            time.sleep(0.01)

    runner.submit("endless", work)
    assert started.wait(10)
    print("returning", flush=True)  # without shutting the runner down, as a careless script does

main()
"""


def test_a_script_that_never_shuts_its_runner_down_still_exits_cleanly(tmp_path):
    """A runner nobody shut down (its job still running) is stopped at exit: no abort for a QThread
    destroyed while it runs, whose core dump would lose the script's output."""
    import subprocess

    script = tmp_path / "careless.py"
    script.write_text(LEFT_RUNNING, encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "returning"
    assert "Destroyed while thread" not in done.stderr
