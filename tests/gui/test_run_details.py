"""Details… for every run, the no-privacy baseline keeps its utility
when it fails the model, and a sweep with several failures says so once, without a traceback."""

from __future__ import annotations

import math

import pytest

from veil.engine import TABLE, Algorithm, hookimpl, make_registry

from .helpers import load_demo_into, open_window


class Boom(Algorithm):
    name = "boom-test"
    title = "Boom (test)"
    accepts = (TABLE,)

    def run(self, data, model, params, ctx):
        raise RuntimeError("the boom plugin exploded")


class _Plugins:
    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [Boom]


@pytest.fixture
def window(qtbot):
    w = open_window(qtbot, make_registry(modules=[_Plugins]))
    load_demo_into(w, qtbot)
    yield w
    w.close()


def run_batch(window, qtbot, model, methods, sweep=None):
    window.config_panel.choose(model, methods, sweep=sweep or {}, metrics=["sfc", "min-group-size"])
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()


def test_details_of_a_run_that_holds(window, qtbot):
    run_batch(window, qtbot, "k-anonymity", ["greedy-hamdist"])
    panel = window.runs_panel
    panel.queue_view.selectRow(0)
    assert panel.details.isEnabled()
    panel.details.click()
    text = window.last_details.text.toPlainText()
    assert "Verdict: holds" in text and "Released: " in text and "the smallest: " in text
    assert "sfc: " in text and "min-group-size: " in text and "Method time: " in text
    window.last_details.close()


def test_the_baseline_keeps_its_utility_when_it_fails_the_model(window, qtbot):
    run_batch(window, qtbot, "k-anonymity", ["all-features"])
    entry = window.controller.runs.entries[0]
    assert entry.outcome.holds is False and entry.outcome.result is None  # never exportable
    assert entry.outcome.metrics["sfc"] > 0 and not math.isnan(entry.outcome.metrics["min-group-size"])
    frame = window.controller.runs.results()
    assert not frame[frame.metric == "sfc"]["value"].isna().any()
    window.last_error and window.last_error.close()


def test_several_failures_make_one_summary_without_a_traceback(window, qtbot):
    errors = []
    window.controller.error.connect(lambda *args: errors.append(args))
    window.config_panel.choose(None, ["boom-test", "all-features"], metrics=["sfc"])
    window.controller.config.set_seed(0, 3)
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()
    assert len(errors) == 1  # one box for three failures, not three
    title, message, details = errors[0]
    assert title == "3 of 6 runs failed" and message.count("exploded") == 3
    assert "Traceback" not in details and "veil-error-" in details
    window.last_error.close()


def test_a_summary_gives_each_failure_one_short_line():
    from types import SimpleNamespace

    from veil.desktop.state.tasks import SUMMARY_CHARS, Failure, failures_summary

    long = (
        "An attempt has been made to start a new process before the current process has finished its "
        "bootstrapping phase.\n\n        This probably means that you are not using fork to start your\n"
        "        child processes and you have forgotten to use the proper idiom\n" + "x" * 500
    )
    failed = [
        SimpleNamespace(id=i, label=f"run {i}", failure=Failure(long if i % 2 else "k is too large"))
        for i in range(1, 7)
    ]
    title, message = failures_summary(failed, 6)
    lines = message.splitlines()
    assert title == "6 of 6 runs failed" and len(lines) == 6
    assert all(len(line) <= SUMMARY_CHARS + len("#6 run 6: ") for line in lines)
    assert lines[0].endswith("bootstrapping phase. …") and lines[1] == "#2 run 2: k is too large"


def test_details_give_the_model_on_each_sensitive_column(window, qtbot):
    """Two columns marked sensitive: Mondrian's run under l-diversity holds on both, and its details
    say each column's effective l."""
    window.controller.dataset.set_roles(["marital_status"], "sensitive")
    window.controller.dataset.release_sensitive = {"diagnosis_group", "marital_status"}
    window.config_panel.choose(
        "l-diversity", ["mondrian"], values={"l": 2, "variant": "distinct"}, metrics=["min-group-size"]
    )
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()
    entry = window.controller.runs.entries[0]
    assert entry.outcome.holds is True, entry.outcome.verdict
    window.runs_panel.queue_view.selectRow(0)
    window.runs_panel.details.click()
    text = window.last_details.text.toPlainText()
    for column in ("diagnosis_group", "marital_status"):
        line = next(x for x in text.splitlines() if x.strip().startswith(f"l-diversity on {column}: effective l "))
        assert line.endswith("(holds)") and float(line.split("effective l ")[1].split()[0]) >= 2
    window.last_details.close()
