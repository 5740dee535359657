"""Sending runs to a Spark master: the setting (Edit ▸ Settings…), kept between sessions; the plan's runs
of a method that declares how it scales out go there with the master's URL, others stay here; a real
run on Spark ``local[2]`` from the desktop shows Spark's tasks as its progress and releases what the
in-memory run releases."""

from __future__ import annotations

import os

import pytest
import shiboken6
from PySide6.QtCore import Qt

from veil.desktop.settings import Settings
from veil.plugins._spark.session import pyspark_available

from .test_flow import set_role


def _needs_pyspark():
    if not pyspark_available():
        if os.environ.get("CI") == "true":
            pytest.fail("pyspark is missing on CI; `make test` installs the spark extra")
        pytest.skip("pyspark is not installed (pip install veil[spark])")


@pytest.fixture
def spark_window(qtbot):
    """The demo in a window whose plugins add a Spark job that only a cancel ends: the two Spark tests
    build the same plugins, so the second reuses the first's idle worker process and its Spark session
    (a Python process and a JVM started once for the file)."""
    from veil.engine import make_registry

    from veil.desktop.runner import live_workers

    from .helpers import load_demo_into, open_window
    from .worker_plugins import SparkTestPlugins

    window = open_window(qtbot, make_registry(modules=[SparkTestPlugins]))
    load_demo_into(window, qtbot)
    yield window
    window.close()
    assert live_workers() == []


def _settings(window, qtbot, url: str):
    dialog = window.actions.show_settings()
    qtbot.waitExposed(dialog)
    dialog.master.setText(url)
    dialog.accept()
    return dialog


def test_the_master_url_is_a_setting_and_sends_only_methods_that_scale_out(demo_window, qtbot, tmp_path):
    window = demo_window
    dialog = _settings(window, qtbot, "spark:/nowhere")
    assert dialog.isVisible() and "is not a Spark master URL" in dialog.error.text()
    from PySide6.QtWidgets import QLabel

    said = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "Global recoding" in said and "PatternKa" in said and "Mondrian" not in said  # by declaration
    assert dialog.grab().save(str(tmp_path / "settings.png"))  # looked at: the field, the methods, the error
    dialog.master.setText("local[2]")
    dialog.accept()
    assert not dialog.isVisible()
    assert Settings().get("cluster/master") == "local[2]"
    config = window.controller.config
    assert config.cluster == "local[2]"
    window.config_panel.choose("k-anonymity", ["global-recoding", "mondrian"])
    runs = {
        r.spec.method.name: r.spec.method.params for r in config.plan(window.registry, window.controller.dataset.table)
    }
    assert runs["global-recoding"]["executor"] == "spark" and runs["global-recoding"]["spark_master"] == "local[2]"
    assert "executor" not in runs["mondrian"]  # it declares no way to scale out: it runs here
    _settings(window, qtbot, "")  # empty: every run here again
    runs = {
        r.spec.method.name: r.spec.method.params for r in config.plan(window.registry, window.controller.dataset.table)
    }
    assert runs["global-recoding"].get("executor", "local") == "local"


def test_a_run_sent_to_spark_shows_its_tasks_and_releases_as_here(spark_window, qtbot):
    _needs_pyspark()
    window = spark_window
    for column in ("postcode_district", "admission_month"):
        set_role(window, column, "insensitive")
    window.config_panel.choose("k-anonymity", ["global-recoding"], values={"suppression": 0.02})
    messages = []
    window.controller.runner.job_progress.connect(lambda job, fraction, message: messages.append(message))
    results = {}
    for url in ("", "local[2]"):
        _settings(window, qtbot, url)
        with qtbot.waitSignal(window.controller.batch_finished, timeout=300_000):
            qtbot.mouseClick(window.config_panel.run_button, Qt.LeftButton)
            box = window.sensitive_box  # the demo marks a column sensitive: agree to release it, once
            if box is not None and shiboken6.isValid(box) and box.isVisible():
                window.sensitive_release_button.click()
        entry = window.controller.runs.entries[-1]
        assert entry.failure is None and entry.outcome.holds, (entry.failure, entry.outcome)
        results[url] = entry.outcome.result
    here, spark = results[""], results["local[2]"]
    assert spark.release.details["executor"] == "spark"
    assert spark.release.details["generalisation"] == here.release.details["generalisation"]
    assert spark.release.frame.astype(str).equals(here.release.frame.astype(str))
    assert any("on Spark: " in m and " tasks" in m for m in messages), messages


def test_cancel_stops_the_spark_job_and_keeps_the_worker(spark_window, qtbot):
    _needs_pyspark()
    window = spark_window
    _settings(window, qtbot, "local[2]")
    window.config_panel.choose(None, ["spark-sleep-test"], metrics=[])
    entry = window.controller.run()[0]
    qtbot.waitUntil(lambda: "sleeping on Spark: 0/2 tasks" in entry.message, timeout=240_000)
    pid = window.controller.runner.worker_pid()
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.cancel(entry)
    assert entry.status == "cancelled"
    assert window.controller.runner.worker_pid() == pid  # the job stopped; the worker was not killed
