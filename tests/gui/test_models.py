"""Item models: they pass Qt's model checks, read lazily, and a 100,000-row table only ever
formats the cells on screen."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from veil.desktop.models import (
    ColumnsModel,
    FeaturesModel,
    MatrixModel,
    PluginsModel,
    ResultsModel,
    RunsModel,
    StepsModel,
    TableModel,
    format_value,
)
from veil.desktop.state import DatasetState, PlannedRun, RunsState
from veil.desktop.state.tasks import Loaded, RunOutcome, table_stats
from veil.desktop.widgets import fast_table
from veil.engine import BinaryMatrix, Context, DataSource, PluginCall, RunSpec, Table, load_demo


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture
def dataset(demo):
    state = DatasetState()
    state.load(Loaded(demo, DataSource(demo=True), table_stats(demo, Context())))
    return state


def test_table_model_reads_cells_roles_and_colours(qtmodeltester, demo):
    model = TableModel(Table(demo.frame.head(40), demo.schema))
    qtmodeltester.check(model)
    age = demo.columns.index("age")
    assert model.data(model.index(3, age)) == str(demo.frame["age"].iloc[3])
    assert model.headerData(0, Qt.Horizontal) == demo.columns[0]
    assert model.data(model.index(0, 0), Qt.BackgroundRole) is not None  # the identifier is coloured
    assert model.data(model.index(0, age), Qt.TextAlignmentRole) & int(Qt.AlignRight)


def test_a_new_schema_keeps_the_rows(qtbot, demo):
    model = TableModel(demo)
    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.headerDataChanged):
        model.set_table(demo.with_roles({"mrn": "insensitive"}))
    assert model.data(model.index(0, 1), Qt.BackgroundRole) is None


def test_schema_recipe_and_features_models(qtmodeltester, dataset):
    for model in (ColumnsModel(dataset), StepsModel(dataset), FeaturesModel(dataset)):
        dataset.changed.emit("data")
        qtmodeltester.check(model)
    columns = ColumnsModel(dataset)
    role = columns.index(dataset.table.columns.index("age"), ColumnsModel.ROLE)
    assert columns.data(role, Qt.UserRole + 1) == [r.value for r in type(dataset.column("age").role)]
    assert columns.setData(role, "insensitive") and dataset.column("age").role.value == "insensitive"
    problems = []
    columns.problem.connect(problems.append)
    assert not columns.setData(role, "no-such-role") and problems


def test_steps_model_edits_rules_and_cut_points(dataset):
    steps = StepsModel(dataset)
    dataset.changed.emit("data")
    row = dataset.binarisable().index("age")
    assert steps.setData(steps.index(row, StepsModel.RULE), "cuts")
    assert dataset.step("age").rule == "cuts" and len(dataset.step("age").cuts) == 3
    assert steps.setData(steps.index(row, StepsModel.CUTS), "30; 60")
    assert dataset.step("age").cuts == (30.0, 60.0)
    assert steps.data(steps.index(row, StepsModel.COUNT)) == "3"  # three features
    assert steps.setData(steps.index(row, StepsModel.RULE), "leave out") and dataset.step("age") is None


def test_matrix_model_lists_each_records_items(qtmodeltester):
    matrix = BinaryMatrix.from_transactions([["bread", "milk"], ["milk"], []], labels=[1, 0, 1])
    model = MatrixModel(matrix)
    qtmodeltester.check(model)
    assert [model.data(model.index(r, 0)) for r in range(3)] == ["bread, milk", "milk", ""]
    assert model.data(model.index(0, 1)) == "1"


def test_runs_and_results_models(qtmodeltester):
    runs = RunsState()
    spec = RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2}), metrics=("sfc",))
    entry = runs.add([PlannedRun(spec, {"k": 2})])[0]
    (
        queue,
        results,
    ) = RunsModel(runs), ResultsModel(runs)
    runs.start(entry)
    runs.progress(entry, 0.5, "half way")
    queue.tick()
    assert queue.data(queue.index(0, RunsModel.PROGRESS), Qt.UserRole + 2) == 0.5
    assert queue.data(queue.index(0, RunsModel.STATUS)) == "half way"
    assert queue.data(queue.index(0, RunsModel.STATUS), Qt.ToolTipRole) == "half way"  # all of a long line
    runs.finish(entry, RunOutcome(True, "holds: smallest group 3", 3.0, {"sfc": 4.0}, 0.2))
    qtmodeltester.check(queue)
    qtmodeltester.check(results)
    assert results.header == ["run", "method", "model", "k", "seed", "verdict", "sfc", "privacy-value", "seconds"]
    assert results.data(results.index(0, 2)) == "k-anonymity"
    assert results.data(results.index(0, 5)) == "holds"
    assert results.data(results.index(0, 5), Qt.ToolTipRole) == "holds: smallest group 3"


def test_plugins_model_lists_the_registry(qtmodeltester, registry):
    model = PluginsModel(registry)
    qtmodeltester.check(model)
    names = {model.data(model.index(r, 1)) for r in range(model.rowCount())}
    assert names == {i.cls.name for i in registry.all()}


def test_format_value():
    assert [format_value(v) for v in (None, np.nan, pd.NA, 3, 2.5, 1 / 3, np.datetime64("2024-01-02"))] == [
        "",
        "",
        "",
        "3",
        "2.5",
        "0.333333",
        "2024-01-02 00:00:00",
    ]


class CountingModel(TableModel):
    calls = 0

    def data(self, index, role=Qt.DisplayRole):
        CountingModel.calls += 1
        return super().data(index, role)


def test_100k_rows_format_only_the_visible_cells(qtbot):
    rng = np.random.default_rng(0)
    n = 100_000
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(18, 95, n),
            "score": rng.random(n),
            **{f"c{i}": rng.choice(["a", "b", "c"], n) for i in range(7)},
        }
    )
    model = CountingModel(Table.from_frame(frame))
    view = fast_table(QTableView())
    view.setModel(model)
    view.resize(900, 600)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    view.grab()  # renders the view as a paint would (offscreen, repaint() may not reach the viewport)
    first = CountingModel.calls
    CountingModel.calls = 0
    times = []
    for value in np.linspace(0, view.verticalScrollBar().maximum(), 20).astype(int):
        started = time.perf_counter()
        view.verticalScrollBar().setValue(int(value))
        view.grab()
        times.append(time.perf_counter() - started)
    per_page = CountingModel.calls / 20
    print(
        f"\n100k rows: first paint {first} data() calls; scrolling {per_page:.0f} calls and "
        f"{1000 * np.median(times):.1f} ms (median; max {1000 * max(times):.1f} ms) per page"
    )
    visible_cells = (view.height() // view.verticalHeader().defaultSectionSize() + 2) * model.columnCount()
    assert per_page < 20 * visible_cells  # a few roles per visible cell, never per row of the model
    # the time per page is printed, not asserted: the machines are shared (docs/benchmarks.md has it)
