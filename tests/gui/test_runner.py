"""The Runner: heavy runs keep the event loop responsive, cancel is fast and leaves no thread,
a failing plugin shows an error and the app stays usable."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt, QTimer

from veil.desktop.runner import Runner, live_workers
from veil.engine import TABLE, Algorithm, feature_subset, hookimpl, make_registry, param

from .helpers import load_demo_into, open_window


@dataclass(frozen=True)
class BusyParams:
    seconds: float = param(1.0, minimum=0.0, help="how long to work")


class Busy(Algorithm):
    """Pure-Python CPU work (it holds the GIL as a careless plugin would), checking in as a
    method must: ``ctx.progress`` at least every 100 ms (here every millisecond)."""

    name = "busy-test"
    title = "Busy (test)"
    accepts = (TABLE,)
    Params = BusyParams
    started = threading.Event()

    def run(self, data, model, params, ctx):
        Busy.started.set()
        end = time.perf_counter() + params.seconds
        while (now := time.perf_counter()) < end:
            x = 0
            for i in range(2_000):  # about a millisecond of interpreted work
                x += i * i
            ctx.progress(1 - (end - now) / params.seconds, "working")
        return feature_subset(data, [])


class Boom(Algorithm):
    name = "boom-test"
    title = "Boom (test)"
    accepts = (TABLE,)

    def run(self, data, model, params, ctx):
        raise RuntimeError("the boom plugin exploded")


class _TestPlugins:
    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [Busy, Boom]


@pytest.fixture
def slow_window(qtbot):
    window = open_window(qtbot, make_registry(modules=[_TestPlugins]))
    load_demo_into(window, qtbot)
    yield window
    window.close()


def choose(window, method: str, **values) -> None:
    window.config_panel.choose(None, [method], values=values, metrics=[])
    assert window.config_panel.run_button.isEnabled(), window.config_panel.plan_error.text()


def test_event_loop_never_stalls_during_a_heavy_run(slow_window, qtbot):
    choose(slow_window, "busy-test", seconds=1.5)
    slow_window.repaint()  # the freshly loaded data's first paint is not the run's doing
    gaps, last = [], [time.perf_counter()]

    def tick():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    with qtbot.waitSignal(slow_window.controller.batch_finished, timeout=20_000):
        slow_window.controller.run()
        last[0] = time.perf_counter()
    timer.stop()
    assert len(gaps) > 50  # the timer really ran through the job
    print(f"\nevent-loop gaps during a 1.5 s pure-Python run: max {1000 * max(gaps):.1f} ms, "
          f"{len(gaps)} ticks")
    assert max(gaps) < 0.100
    assert slow_window.controller.runs.entries[0].status == "done"


def test_esc_cancels_a_long_run_within_half_a_second(slow_window, qtbot):
    choose(slow_window, "busy-test", seconds=60.0)
    Busy.started.clear()
    slow_window.controller.run()
    qtbot.waitUntil(lambda: slow_window.controller.runs.entries[0].fraction > 0, timeout=10_000)
    assert slow_window.actions.cancel.isEnabled()
    with qtbot.waitActive(slow_window):  # a shortcut reaches the active window only
        slow_window.activateWindow()
    started = time.perf_counter()
    qtbot.keyClick(slow_window, Qt.Key_Escape)
    qtbot.waitUntil(slow_window.controller.runner.is_idle, timeout=500)
    latency = time.perf_counter() - started
    print(f"\ncancel latency: {1000 * latency:.1f} ms")
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
    qtbot.waitUntil(slow_window.controller.runner.is_idle, timeout=10_000)
    assert [e.status for e in entries] == ["done", "cancelled", "done"]
    assert slow_window.runs_panel.results_model.rowCount() == 2


def test_a_failing_plugin_shows_an_error_and_the_app_stays_usable(slow_window, qtbot):
    choose(slow_window, "boom-test")
    with qtbot.waitSignal(slow_window.controller.batch_finished, timeout=10_000):
        slow_window.controller.run()
    entry = slow_window.controller.runs.entries[0]
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
    with qtbot.waitSignal(slow_window.controller.batch_finished, timeout=10_000):
        slow_window.controller.run()
    assert slow_window.controller.runs.entries[-1].status == "done"
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
