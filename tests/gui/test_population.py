"""A population opened beside the data in the desktop: read like the data on the worker, shown with
its size, held with the data so δ-presence and k-map runs judge against it and the manifest records
it; a population that cannot hold the data is refused in a dialog, and a quasi-identifier marked
after it was opened is checked again by the plan."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from veil.engine import BadInput, ExportOptions, Role, demo_path, verify_manifest


@pytest.fixture
def population_csv(tmp_path):
    """The demo's records three times over: every group of the data is a third of its population."""
    demo = pd.read_csv(demo_path())
    path = tmp_path / "population.csv"
    pd.concat([demo, demo, demo], ignore_index=True).to_csv(path, index=False)
    return path


def open_population(window, qtbot, path):
    c = window.controller
    with qtbot.waitSignal(c.population_opened, timeout=60_000):
        assert c.open_population(path) is not None


@pytest.mark.parametrize("model, values", [("delta-presence", {"dmax": 0.4}), ("k-map", {"k": 6})])
def test_a_run_judges_against_the_population_opened_beside_the_data(
    demo_window, qtbot, registry, population_csv, tmp_path, model, values
):
    window, c = demo_window, demo_window.controller
    panel = window.dataset_panel
    assert not panel.close_population_button.isVisibleTo(panel) and "none" in panel.population_label.text()
    open_population(window, qtbot, population_csv)
    assert c.dataset.population.n_rows == 15_000
    assert panel.population_label.text() == "population.csv, 15,000 records"
    assert panel.close_population_button.isVisibleTo(panel)
    window.config_panel.choose(model, ["global-recoding"], values=values, metrics=["loss"])
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [[m.name for m in p.spec.models] for p in planned] == [[model]]
    assert window.config_panel.run_button.isEnabled(), window.config_panel.plan_error.text()
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.failure is None, entry.failure
    result = entry.outcome.result
    assert result.verdict.holds and result.verdict.model == model
    assert result.release.population is not None and result.release.population.n_rows == 15_000
    out = tmp_path / "out"
    with qtbot.waitSignal(c.exported, timeout=60_000):
        c.export(entry.id, out, ExportOptions(), report=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["population"]["path"] == str(population_csv.resolve())
    assert manifest["population"]["rows"] == 15_000
    assert manifest["verdict"]["holds"]
    assert verify_manifest(registry, out / "manifest.json").holds  # read again from the manifest's population


def test_the_population_tightens_what_holds(demo_window, qtbot, population_csv):
    """k-map with k = 6 against a population of three copies needs groups of two in the data; the
    data as its own population (k-anonymity's reading) would need six."""
    window, c = demo_window, demo_window.controller
    open_population(window, qtbot, population_csv)
    window.config_panel.choose("k-map", ["global-recoding"], values={"k": 6}, metrics=["loss"])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    release = c.runs.entries[-1].outcome.result.release
    sizes = pd.Series(release.groups).value_counts()
    assert sizes.min() >= 2
    assert c.dataset.population.matches(release.frame[list(release.quasi_identifiers)]).min() >= 6


def test_a_population_lacking_a_quasi_identifier_is_refused_in_a_dialog(demo_window, qtbot, tmp_path):
    window, c = demo_window, demo_window.controller
    demo = pd.read_csv(demo_path())
    path = tmp_path / "no_sex.csv"
    pd.concat([demo, demo], ignore_index=True).drop(columns="sex").to_csv(path, index=False)
    with qtbot.waitSignal(c.error, timeout=60_000) as blocker:
        c.open_population(path)
    title, message, _ = blocker.args
    assert title == "Cannot use the population"
    assert message == "the population has no column 'sex', a quasi-identifier of the data"
    assert c.dataset.population is None and "none" in window.dataset_panel.population_label.text()


def test_a_population_smaller_than_the_data_is_refused(demo_window, qtbot, tmp_path):
    c = demo_window.controller
    path = tmp_path / "few.csv"
    pd.read_csv(demo_path()).head(100).to_csv(path, index=False)
    with qtbot.waitSignal(c.error, timeout=60_000) as blocker:
        c.open_population(path)
    assert "is smaller than the data" in blocker.args[1]
    assert c.dataset.population is None


def test_a_quasi_identifier_marked_later_is_checked_by_the_plan(demo_window, qtbot, tmp_path):
    """The population holds the quasi-identifiers when opened; a column marked quasi-identifying
    afterwards that it lacks stops δ-presence in the plan, in one sentence."""
    window, c = demo_window, demo_window.controller
    demo = pd.read_csv(demo_path())
    spare = next(
        col
        for col in c.dataset.table.columns
        if c.dataset.column(col).role.value == "insensitive" and col in demo.columns
    )
    path = tmp_path / "pop.csv"
    pd.concat([demo, demo], ignore_index=True).drop(columns=spare).to_csv(path, index=False)
    open_population(window, qtbot, path)
    window.config_panel.choose("delta-presence", ["global-recoding"])
    c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    c.dataset.set_roles([spare], "quasi-identifier")
    with pytest.raises(BadInput, match=f"the population has no column '{spare}'"):
        c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert not window.config_panel.run_button.isEnabled()
    # closing it brings back the plain refusal: δ-presence needs a population
    qtbot.mouseClick(window.dataset_panel.close_population_button, Qt.LeftButton)
    assert c.dataset.population is None
    with pytest.raises(BadInput, match="needs the population the data was drawn from"):
        c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())


def test_a_saved_project_opens_with_its_population(demo_window, qtbot, population_csv, tmp_path):
    window, c = demo_window, demo_window.controller
    open_population(window, qtbot, population_csv)
    project = tmp_path / "p.veil.json"
    assert c.save_project(project)
    assert json.loads(project.read_text())["data"]["population"]["path"] == "population.csv"
    with qtbot.waitSignal(c.data_loaded, timeout=60_000):
        c.open_project(project)
    assert c.dataset.population is not None and c.dataset.population.n_rows == 15_000
    assert window.dataset_panel.population_label.text() == "population.csv, 15,000 records"


def test_a_subset_column_of_the_open_file_marks_the_data(window, qtbot, registry, tmp_path):
    """The file opened is the population; its 1/0 column marks the data's records: the data becomes
    the marked records (the column dropped, the roles kept) and runs judge against the whole file."""
    c = window.controller
    demo = pd.read_csv(demo_path()).head(1000)
    whole = pd.concat([demo, demo], ignore_index=True)
    whole["in_study"] = [1] * len(demo) + [0] * len(demo)
    path = tmp_path / "everyone.csv"
    whole.to_csv(path, index=False)
    with qtbot.waitSignal(c.data_loaded, timeout=60_000):
        c.open_path(path)
    assert c.dataset.table.n_rows == 2 * len(demo)
    qis = ["age", "sex", "postcode_district", "marital_status", "admission_month"]
    c.dataset.set_roles(qis, "quasi-identifier")
    with qtbot.waitSignal(c.data_loaded, timeout=60_000):
        window.dataset_panel.subset_marked.emit("in_study")
    table = c.dataset.table
    assert table.n_rows == len(demo) and "in_study" not in table.columns
    assert table.schema.by_role(Role.QUASI_IDENTIFIER) == qis  # the roles the user gave are kept
    assert c.dataset.population.n_rows == 2 * len(demo) and c.dataset.population.subset_column == "in_study"
    assert window.dataset_panel.population_label.text() == "everyone.csv, 2,000 records, the data marked by in_study"
    assert not window.dataset_panel.close_population_button.isVisibleTo(window.dataset_panel)
    assert c.dataset.name == "everyone.csv where in_study = 1"
    window.config_panel.choose("delta-presence", ["global-recoding"], values={"dmax": 0.5}, metrics=["loss"])
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    result = c.runs.entries[-1].outcome.result
    assert result.verdict.holds and result.verdict.value == pytest.approx(0.5)
    out = tmp_path / "out"
    with qtbot.waitSignal(c.exported, timeout=60_000):
        c.export(c.runs.entries[-1].id, out, ExportOptions(), report=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["population"]["subset_column"] == "in_study" and manifest["population"]["rows"] == 2_000
    assert verify_manifest(registry, out / "manifest.json").holds


def test_a_subset_column_that_is_not_one_or_zero_is_refused_in_a_dialog(demo_window, qtbot, tmp_path):
    c = demo_window.controller
    path = tmp_path / "demo.csv"
    pd.read_csv(demo_path()).to_csv(path, index=False)
    with qtbot.waitSignal(c.data_loaded, timeout=60_000):
        c.open_path(path)
    with qtbot.waitSignal(c.error, timeout=60_000) as blocker:
        c.mark_subset("sex")
    assert blocker.args[0] == "Cannot open the data"
    assert blocker.args[1].startswith("the subset column 'sex' must hold 1/0")
