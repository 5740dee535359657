"""The Risk tab shows the engine's risk figures for the input and the selected run's release side by
side, and they are those `veil risk` prints for the same file and for the exported release; SUDA runs
in the background and can be cancelled; a bad weight column is said, not raised."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from veil.cli import main as cli_main
from veil.desktop import risk_panel as panel_module
from veil.desktop.models import FRACTION
from veil.desktop.state.risk import (
    COLUMNS,
    DISTINCTION,
    FK,
    INPUT,
    RANKED,
    RECORD,
    RELEASE,
    RISK,
    SEPARATION,
    UNIQUES,
)
from veil.engine import ExportOptions, Role

QUASI = ["region", "sex", "age"]


def survey_csv(tmp_path, seed: int, n: int, blanks: bool):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east"], n),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.choice([20, 30, 40, 50, 60], n),
            "w": rng.integers(1, 40, n),
            "hh": rng.integers(0, n // 4, n),
            "income": rng.integers(100, 900, n),
        }
    )
    if blanks:
        frame.loc[rng.random(n) < 0.1, "sex"] = None
    path = tmp_path / f"survey{seed}.csv"
    frame.to_csv(path, index=False)
    return path


def open_survey(window, qtbot, path):
    c = window.controller
    with qtbot.waitSignal(c.data_loaded, timeout=20_000):
        c.open_path(path)
    d = c.dataset
    d.set_roles([col.name for col in d.table.schema.columns], Role.INSENSITIVE)
    d.set_roles(QUASI, Role.QUASI_IDENTIFIER)
    d.set_roles(["w"], Role.WEIGHT)
    d.set_roles(["hh"], Role.HOUSEHOLD)


def show_tab(window, qtbot):
    panel = window.risk_panel
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        window.tabs.setCurrentWidget(panel)
    return panel


def suda_of(panel, qtbot):
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        assert panel.compute_suda()


def cli_risk(capsys, path) -> dict:
    capsys.readouterr()
    assert (
        cli_main(["risk", str(path), "--quasi", ",".join(QUASI), "--weight", "w", "--household", "hh", "--json"]) == 0
    )
    return json.loads(capsys.readouterr().out)


def agrees(measured, printed: dict) -> None:
    """Every figure of one side of the tab is the one `veil risk --json` printed."""
    risk, summary = measured.risk, printed["summary"]
    records = printed["records"]
    assert risk.fk.tolist() == records["fk"] and risk.Fk.tolist() == pytest.approx(records["Fk"])
    assert risk.risk.tolist() == pytest.approx(records["risk"], rel=1e-12)
    if risk.household is None:
        assert "household_risk" not in records
    else:
        assert risk.household.tolist() == pytest.approx(records["household_risk"], rel=1e-12)
    figures = measured.figures(0.15)
    assert figures["sample uniques (fk = 1)"] == summary["sample_uniques"]
    assert figures["records whose key is seen twice"] == summary["keys_seen_twice"]
    assert figures["global risk"] == pytest.approx(summary["global_risk"], rel=1e-12)
    assert figures["expected re-identifications"] == pytest.approx(summary["expected_reidentifications"], rel=1e-12)
    if risk.household is None:
        assert figures["household global risk"] is None and summary["household_global_risk"] is None
    else:
        assert figures["household global risk"] == pytest.approx(summary["household_global_risk"], rel=1e-12)
    assert measured.histogram() == summary["risk_histogram"]
    assert measured.suda.score.tolist() == pytest.approx(records["suda_score"])
    assert measured.suda.dis.tolist() == pytest.approx(records["dis_score"])
    assert measured.contributions() == pytest.approx(printed["suda"]["attribute_contributions"])


def test_the_input_s_figures_are_veil_risk_s_with_weights_blanks_and_households(window, qtbot, tmp_path, capsys):
    path = survey_csv(tmp_path, seed=4, n=90, blanks=True)
    open_survey(window, qtbot, path)
    panel = show_tab(window, qtbot)
    suda_of(panel, qtbot)
    measured = panel.state.measured[INPUT]
    agrees(measured, cli_risk(capsys, path))
    assert measured.risk.household is not None and measured.risk.weighted

    # the threshold picks the records whose risk exceeds it, listed riskiest first, at once
    threshold = float(np.quantile(measured.risk.risk, 0.7))
    panel.threshold.setValue(threshold)
    model = panel.models[INPUT]
    expected = int((measured.risk.risk > panel.threshold.value()).sum())
    assert 0 < expected < len(measured.risk.risk) and model.rowCount() == expected
    shown = model.rows()
    assert shown[RISK].is_monotonic_decreasing
    assert shown[RISK].tolist() == measured.risk.risk[shown[RECORD] - 1].tolist()
    assert f"above {panel.threshold.value():g}" in panel.riskiest.tabText(0)
    # a click on a header sorts the records by that column
    panel.views[INPUT].sortByColumn(list(shown.columns).index(FK), Qt.AscendingOrder)
    assert model.rows()[FK].is_monotonic_increasing
    assert model.data(model.index(0, 0)) == f"{int(model.rows()[RECORD].iloc[0]):,}"

    # a blank as a value of its own counts fewer matches: the figures are computed again
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        panel.blanks.setCurrentIndex(1)
    again = panel.state.measured[INPUT]
    assert not again.side.frame["sex"].notna().all() and (again.risk.fk <= measured.risk.fk).all()
    assert (again.risk.fk < measured.risk.fk).any() and again.suda is measured.suda


def test_a_release_s_figures_are_veil_risk_s_on_its_export(window, qtbot, tmp_path, capsys):
    open_survey(window, qtbot, survey_csv(tmp_path, seed=3, n=80, blanks=False))
    c = window.controller
    window.config_panel.choose("k-anonymity", ["local-suppression"], values={"k": 2})
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    window.runs_panel.select_run(entry.id)
    panel = show_tab(window, qtbot)
    suda_of(panel, qtbot)
    before, after = panel.state.measured[INPUT], panel.state.measured[RELEASE]
    assert after.side.frame[QUASI].isna().any().any()  # suppressed cells are blanks
    assert after.risk.household is None and "household id was not released" in panel.summary.text()
    assert after.risk.sample_uniques < before.risk.sample_uniques
    rows = {panel.figures.item(r, 0).text(): r for r in range(panel.figures.rowCount())}
    assert panel.figures.item(rows["household global risk"], 2).text() == "—"

    out = tmp_path / "release"
    with qtbot.waitSignal(c.exported, timeout=120_000):
        c.export(entry.id, out, ExportOptions(fmt="csv", shuffle=False), report=False)
    agrees(after, cli_risk(capsys, out))


def test_suda_can_be_cancelled_and_a_bad_weight_is_said(window, qtbot, tmp_path, monkeypatch):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"region": list("aabbc"), "sex": list("FMFMF"), "age": [1, 2, 1, 2, 1], "w": [3, 0, 2, 5, 1]}).to_csv(
        path, index=False
    )
    c = window.controller
    with qtbot.waitSignal(c.data_loaded, timeout=20_000):
        c.open_path(path)
    c.dataset.set_roles(QUASI, Role.QUASI_IDENTIFIER)
    c.dataset.set_roles(["w"], Role.WEIGHT)
    panel = show_tab(window, qtbot)
    assert INPUT not in panel.state.measured
    assert "record 2 has 0" in panel.summary.text() and "at least 1" in panel.summary.text()

    # SUDA needs no weights: it starts, reports progress, and stops when cancelled
    started = threading.Event()

    def endless(side, max_size, ctx):
        started.set()
        while True:
            ctx.progress(0.5, "searching")  # raises Cancelled once the user cancels
            time.sleep(0.01)

    monkeypatch.setattr("veil.desktop.risk_panel.measure_suda", endless)
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        assert panel.compute_suda()
        assert not panel.cancel.isHidden() and not panel.suda_button.isEnabled()
        qtbot.waitUntil(started.is_set, timeout=20_000)
        panel.cancel.click()
    assert "cancelled" in panel.suda_cost.text() and panel.cancel.isHidden()
    assert panel.state.to_suda() == [INPUT] and panel.suda_button.isEnabled()

    # figures still being computed (the exact risk of a large table) stop too, until the tab is shown again
    started.clear()
    original = panel_module.measure
    monkeypatch.setattr("veil.desktop.risk_panel.measure", lambda side, blanks, method, ctx: endless(side, 0, ctx))
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        panel.method.setCurrentText("exact")
        qtbot.waitUntil(started.is_set, timeout=20_000)
        panel.cancel.click()
    assert "was stopped" in panel.summary.text() and panel.state.to_measure() == []
    monkeypatch.setattr("veil.desktop.risk_panel.measure", original)
    window.tabs.setCurrentWidget(window.dataset_panel)
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        window.tabs.setCurrentWidget(panel)
    assert "record 2 has 0" in panel.summary.text()


def test_the_ranking_of_quasi_identifiers_is_veil_risk_s_sorts_and_marks_the_roles(
    window, qtbot, tmp_path, capsys, monkeypatch
):
    path = survey_csv(tmp_path, seed=5, n=70, blanks=True)
    open_survey(window, qtbot, path)
    panel = show_tab(window, qtbot)
    # how many combinations it computes is said before it starts
    assert "computes 7 combinations" in panel.rank_cost.text() and panel.ranking_model.rowCount() == 0

    # it runs in the background, reports progress, and stops when cancelled
    started = threading.Event()

    def endless(side, max_size, ctx):
        started.set()
        while True:
            ctx.progress(0.5, "ranking")  # raises Cancelled once the user cancels
            time.sleep(0.01)

    original = panel_module.measure_ranking
    monkeypatch.setattr("veil.desktop.risk_panel.measure_ranking", endless)
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        assert panel.compute_ranking() is not None
        assert not panel.cancel.isHidden() and not panel.rank_button.isEnabled()
        qtbot.waitUntil(started.is_set, timeout=20_000)
        panel.cancel.click()
    assert "cancelled" in panel.rank_cost.text() and panel.rank_button.isEnabled()
    assert panel.state.ranking is None and panel.state.to_rank()
    monkeypatch.setattr("veil.desktop.risk_panel.measure_ranking", original)

    with qtbot.waitSignal(panel.idle, timeout=60_000):
        assert panel.compute_ranking() is not None
    capsys.readouterr()
    assert cli_main(["risk", str(path), "--quasi", ",".join(QUASI), "--no-suda", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["ranking"]
    model = panel.ranking_model
    shown = model.rows()
    assert len(printed) == model.rowCount() == 7
    assert shown[COLUMNS].tolist() == [", ".join(c["columns"]) for c in printed]
    assert shown[SEPARATION].tolist() == pytest.approx([c["separation"] for c in printed], rel=1e-12)
    assert shown[DISTINCTION].tolist() == pytest.approx([c["distinction"] for c in printed], rel=1e-12)
    assert shown[UNIQUES].tolist() == [c["uniques"] for c in printed]
    assert model.data(model.index(0, RANKED.index(SEPARATION)), FRACTION) == pytest.approx(printed[0]["separation"])
    assert not panel.rank_button.isEnabled()  # ranked already

    # a click on a header sorts the combinations by that column, either way
    view = panel.ranking_view
    view.sortByColumn(RANKED.index(DISTINCTION), Qt.AscendingOrder)
    assert model.rows()[DISTINCTION].is_monotonic_increasing
    view.sortByColumn(RANKED.index(UNIQUES), Qt.DescendingOrder)
    assert model.rows()[UNIQUES].is_monotonic_decreasing
    view.sortByColumn(RANKED.index(COLUMNS), Qt.AscendingOrder)
    assert model.rows()[COLUMNS].tolist() == sorted(c[COLUMNS] for _, c in shown.iterrows())

    # marking a combination makes exactly its columns the quasi-identifiers, after saying which stop being
    assert not panel.mark_button.isEnabled()
    view.selectRow(model.rows()[COLUMNS].tolist().index("region, sex, age"))
    assert panel.ask_mark() is None and "marked so already" in panel.mark_said.text()
    view.clearSelection()
    assert not panel.mark_button.isEnabled()
    row = model.rows()[COLUMNS].tolist().index("region, age")
    view.selectRow(row)
    assert panel.mark_button.isEnabled()
    box = panel.ask_mark()
    assert "region and age" in box.text() and "sex, marked quasi-identifier now, becomes insensitive" in (
        box.informativeText()
    )
    with qtbot.waitSignal(panel.idle, timeout=60_000):
        box.button(QMessageBox.Yes).click()
    schema = window.controller.dataset.table.schema
    assert schema.by_role(Role.QUASI_IDENTIFIER) == ["region", "age"]
    assert schema["sex"].role is Role.INSENSITIVE and (schema.weight, schema.household) == ("w", "hh")
    assert panel.state.measured[INPUT].side.quasi == ("region", "age")
    # the ranking stands (its figures are the file's) and can be made again on the new quasi-identifiers
    assert model.rowCount() == 7 and panel.rank_button.isEnabled()
    assert "computes 3 combinations" in panel.rank_cost.text()
    window.controller.history.undo()  # one step takes the marking back
    assert window.controller.dataset.table.schema.by_role(Role.QUASI_IDENTIFIER) == QUASI


def test_agreeing_to_release_the_household_id_gives_the_release_its_household_risk(window, qtbot, tmp_path):
    """The Columns tab offers to release the household id once a column is marked household; agreed,
    the run's release holds it, and the Risk tab's household risk of the release is the run's
    household-risk metric, both computed from the released ids. The answer is kept in the project."""
    open_survey(window, qtbot, survey_csv(tmp_path, seed=5, n=60, blanks=False))
    c, box = window.controller, window.dataset_panel.release_household_box
    assert box.isVisibleTo(window.dataset_panel) and not box.isChecked()
    box.click()  # as the user ticks it
    assert box.isChecked() and c.dataset.releases_household and c.history.dirty
    window.config_panel.choose("k-anonymity", ["global-recoding"], values={"k": 2}, metrics=["household-risk"])
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    release = entry.outcome.result.release
    assert release.household == "hh" and "hh" in release.frame.columns
    window.runs_panel.select_run(entry.id)
    panel = show_tab(window, qtbot)
    after = panel.state.measured[RELEASE]
    assert after.risk.household is not None
    assert after.risk.household_global == pytest.approx(entry.outcome.metrics["household-risk"])
    path = tmp_path / "p.veil.json"
    assert c.save_project(path)
    assert json.loads(path.read_text(encoding="utf-8"))["release_household"] is True
    d = c.dataset
    d.set_roles(["hh"], Role.INSENSITIVE)
    assert not box.isVisibleTo(window.dataset_panel) and not d.releases_household
