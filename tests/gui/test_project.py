"""Project files: what a session saves comes back in a fresh window, and the CLI runs it."""

from __future__ import annotations

import json

from veil.engine import Project, load_demo
from veil.cli import main as cli_main

from .helpers import load_demo_into, open_window


def test_a_saved_project_reopens_as_it_was(qtbot, registry, tmp_path):
    first = open_window(qtbot, registry)
    load_demo_into(first, qtbot)
    c = first.controller
    c.dataset.set_roles(["age", "postcode_district", "admission_month"], "insensitive")
    c.dataset.set_rule("length_of_stay", "equal-width", bins=3)
    first.config_panel.choose("k-anonymity", ["all-features"], sweep={"k": "2, 3"}, metrics=["sfc"])
    with qtbot.waitSignal(c.batch_finished, timeout=20_000):
        first.confirm_sensitive(c.run)  # as Run does: asked about the column marked sensitive, agreed
        first.sensitive_release_button.click()
    path = tmp_path / "ward.veil.json"
    with qtbot.waitSignal(c.project_saved):
        assert c.save_project(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["data"]["demo"] is True
    assert {e["name"]: e["role"] for e in saved["schema"]}["age"] == "insensitive"
    assert [r["model"]["params"]["k"] for r in saved["runs"]] == [2, 3]
    assert saved["release_sensitive"] == ["diagnosis_group"]  # so the headless run below is not refused
    assert {r["metric"] for r in saved["results"]} == {"sfc", "privacy-value"}
    assert first.settings.recent()[0]["kind"] == "project"
    first.close()

    second = open_window(qtbot, registry)
    with qtbot.waitSignal(second.controller.data_loaded, timeout=10_000):
        second.actions.open_any(path)
    c2 = second.controller
    assert c2.dataset.column("age").role.value == "insensitive"
    assert c2.dataset.step("length_of_stay").rule == "equal-width" and c2.dataset.step("length_of_stay").bins == 3
    panel = second.config_panel
    assert panel.model_combo.currentData() == "k-anonymity"
    assert [n for n, r in panel.rows.items() if r.check.isChecked()] == ["all-features"]
    assert panel.model_form.field("k").sweep.text() == "2, 3"
    assert panel.plan_label.text().startswith("2 runs")
    assert second.runs_panel.results_model.rowCount() == 2
    assert second.windowTitle() == "ward.veil.json — Veil"
    second.close()

    assert cli_main(["run", str(path), "--no-report", "--out", str(tmp_path / "cli")]) == 0  # the same file, headless
    assert (tmp_path / "cli" / "run-2" / "manifest.json").exists()


def test_a_project_whose_data_changed_is_refused(qtbot, registry, tmp_path, window):
    data = tmp_path / "small.csv"
    load_demo().frame.head(50).to_csv(data, index=False)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        window.controller.open_path(data)
    path = tmp_path / "small.veil.json"
    assert window.controller.save_project(path)
    assert Project.load(path).sha256
    data.write_text(
        data.read_text(encoding="utf-8") + data.read_text(encoding="utf-8").splitlines()[1] + "\n", encoding="utf-8"
    )
    with qtbot.waitSignal(window.controller.error, timeout=10_000) as blocker:
        window.controller.open_project(path)
    assert "has changed since the project was saved" in blocker.args[1]
