"""The run context's cancel callbacks and executor service."""

from __future__ import annotations

import threading

import pytest

from veil.engine import (
    BadInput,
    Cancelled,
    CancelToken,
    Context,
    InProcessExecutor,
    executor_names,
    hookimpl,
    make_executor,
    make_registry,
)


def test_a_blocking_backend_is_stopped_by_its_cancel_callback():
    """A 'C miner' waits on an event only its stop function sets; cancelling the run sets it."""
    ctx = Context(0)
    stopped = threading.Event()
    remove = ctx.child(0.0, 0.5).on_cancel(stopped.set)  # a child shares the token
    worker = threading.Thread(target=lambda: stopped.wait(30))
    worker.start()
    ctx.token.cancel()
    worker.join(30)
    assert stopped.is_set() and not worker.is_alive()
    remove()


def test_callbacks_run_once_unregistered_ones_never_and_late_ones_at_once():
    token = CancelToken()
    calls = []
    token.on_cancel(lambda: calls.append("a"))
    remove = token.on_cancel(lambda: calls.append("b"))
    token.on_cancel(lambda: 1 / 0)  # a failing callback does not stop the others
    remove()
    token.cancel()
    token.cancel()
    assert calls == ["a"]
    token.on_cancel(lambda: calls.append("late"))
    assert calls == ["a", "late"]


def test_the_default_executor_runs_here_in_order_and_honours_cancel():
    ctx = Context(0)
    assert ctx.executor.name == "in-process" and ctx.executor.map(lambda x: x + 1, [3, 1, 2]) == [4, 2, 3]
    seen = []

    def work(x):
        seen.append(x)
        if x == 2:
            ctx.token.cancel()
        return x

    with pytest.raises(Cancelled):
        ctx.executor.map(work, [1, 2, 3, 4])
    assert seen == [1, 2]


class Recording(InProcessExecutor):
    name = "recording"
    used = 0

    def map(self, fn, items):
        Recording.used += 1
        return super().map(fn, items)


class RecordingPlugin:
    """A plugin registering an executor service through the hook, as every plugin kind registers."""

    @staticmethod
    @hookimpl
    def veil_register_executors():
        return [Recording]


def test_executors_are_registered_by_a_hook_chosen_by_name_and_shared_by_children():
    registry = make_registry(entry_points=False, modules=[RecordingPlugin])
    assert executor_names(registry) == ["in-process", "recording"]
    assert executor_names() == ["in-process"]  # without a registry only the engine's own
    ctx = Context(0, executor=make_executor("recording", registry))
    assert ctx.child(0.2, 0.4).executor.map(str, [1]) == ["1"] and Recording.used == 1
    with pytest.raises(BadInput, match="unknown executor 'recording'; available: in-process"):
        make_executor("recording")  # a plugin's executor needs the registry that loaded it
    with pytest.raises(BadInput, match="unknown executor"):
        make_executor("no-such-backend", registry)


def test_an_executor_name_taken_twice_is_refused_as_a_plugin_failure():
    class Again(Recording):
        pass

    class AgainPlugin:
        @staticmethod
        @hookimpl
        def veil_register_executors():
            return [Again]

    class InProcessAgain:
        @staticmethod
        @hookimpl
        def veil_register_executors():
            return [type("Mine", (InProcessExecutor,), {})]  # named in-process: the engine's own

    registry = make_registry(entry_points=False, modules=[RecordingPlugin, AgainPlugin, InProcessAgain])
    assert executor_names(registry) == ["in-process", "recording"]
    errors = [f.error for f in registry.failures]
    assert any("'recording' is already taken" in e for e in errors), errors
    assert any("'in-process' is already taken by veil" in e for e in errors), errors
    assert registry.executor_class("recording") is Recording


def test_the_built_in_spark_executor_comes_through_the_hook():
    registry = make_registry()
    assert "spark" in executor_names(registry)
    assert registry.executor_class("spark").name == "spark"


def test_the_cli_refuses_an_unknown_executor(tmp_path, capsys):
    from veil.cli import main

    assert main(["run", "--demo", "--method", "all-features", "--executor", "nowhere", "--out", str(tmp_path)]) == 2
    assert "unknown executor 'nowhere'" in capsys.readouterr().err
    ctx = Context(0, executor=make_executor())
    ctx.token.cancel()
    with pytest.raises(Cancelled):
        ctx.executor.map(str, [1])


def test_a_context_says_how_many_threads_a_method_may_use():
    """Its own count, else its executor's, else every core (no cap); children inherit it."""
    import os

    assert Context(0).threads == max(1, os.cpu_count() or 1)
    assert Context(0, threads=3).threads == 3 and Context(0, threads=3).child(0.0, 0.5).threads == 3
    ctx = Context(0, executor=InProcessExecutor(threads=5))
    assert ctx.threads == 5 and ctx.child(0.0, 0.5).threads == 5
    assert ctx.executor.threads == 5  # bound to the run's cancel check, still allowing as many
    assert Context(0, executor=InProcessExecutor(threads=5), threads=2).threads == 2
    with pytest.raises(ValueError):
        Context(0, threads=0)


def test_a_worker_process_token_calls_its_cancel_callbacks_when_the_window_cancels():
    """The desktop's worker checks a cross-process event; a blocking backend there (a Spark job)
    registers how to stop itself, and is told when the window sets the event."""
    import multiprocessing
    import threading

    from veil.engine.run.worker import _EventToken

    event = multiprocessing.get_context("spawn").Event()
    token = _EventToken(event)
    told, dropped = threading.Event(), []
    token.on_cancel(told.set)
    unregister = token.on_cancel(lambda: dropped.append(True))
    unregister()
    event.set()  # what the window's cancel does, from its own process
    assert told.wait(10) and dropped == []
    late = []
    token.on_cancel(lambda: late.append(True))  # registered after the cancel: called at once
    assert late == [True]


def test_a_stop_deferred_during_a_held_step_takes_effect_when_it_ends():
    token = CancelToken()
    assert not token.defer(2)  # nothing held: the caller stops the work itself
    with token.holding():
        with token.holding():
            assert token.defer(2) and token.defer(15)
        assert not token.cancelled  # the outer step still holds
    assert token.cancelled and token.deferred == 2  # the first reason is kept


def test_a_final_step_holds_until_released_and_a_failed_one_does_not():
    token = CancelToken()
    with token.holding(final=True):
        pass
    assert token.defer(2) and not token.cancelled  # the finished work is being reported
    token.release()
    assert token.cancelled
    failed = CancelToken()
    with pytest.raises(OSError), failed.holding(final=True):
        raise OSError("a rename failed")
    assert not failed.defer(2)  # rolled back: nothing finished, nothing held
