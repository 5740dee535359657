"""Export preselects the run clicked in the results table (a click on any cell),
also after more results arrive, and its progress says what it is doing."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_export_preselects_the_clicked_run_and_reports_its_steps(demo_window, qtbot, tmp_path):
    window = demo_window
    window.config_panel.choose("k-anonymity", ["greedy-hamdist"], sweep={"k": "3, 5, 8"}, metrics=["sfc"])
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()
    view, results = window.runs_panel.results_view, window.runs_panel.results_model
    assert results.rowCount() == 3
    cell = results.index(1, 2)
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=view.visualRect(cell).center())
    dialog = window.actions.export_release(None)  # Release ▸ Export, Ctrl+E
    assert dialog.run_id() == results.run_id(1)
    dialog.close()

    window.config_panel.choose("k-anonymity", ["greedy-hamdist"], sweep={"k": "10"}, metrics=["sfc"])
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()
    assert window.runs_panel.selected_run() == results.run_id(1)  # new results do not move the choice

    steps = []
    window.controller.export_progress.connect(lambda f, m: steps.append(m))
    dialog = window.actions.export_release(None)
    dialog.folder.setText(str(tmp_path / "release"))
    with qtbot.waitSignal(window.controller.exported, timeout=120_000) as blocker:
        dialog.accept()
    assert blocker.args[0].manifest["privacy_model"]["params"] == {"k": 5}
    assert any("report" in m for m in steps) and any("verifying" in m for m in steps)
    window.actions.message_box.close()


def test_export_writes_a_table_into_a_database_and_replaces_one_only_when_asked(demo_window, qtbot, tmp_path):
    import sqlite3

    window = demo_window
    window.config_panel.choose("k-anonymity", ["greedy-hamdist"], sweep={"k": "5"}, metrics=["sfc"])
    with qtbot.waitSignal(window.controller.batch_finished, timeout=60_000):
        window.controller.run()
    db = tmp_path / "warehouse.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE cohort (x INTEGER)")
        conn.execute("INSERT INTO cohort VALUES (1)")

    def dialog_into(replace: bool):
        dialog = window.actions.export_release(None)
        dialog.report.setChecked(False)
        assert not dialog.into.isEnabled()  # CSV writes no table
        dialog.fmt.setCurrentIndex(dialog.fmt.findData("sqlite"))
        assert dialog.into.isEnabled() and not dialog.database.isEnabled()
        dialog.into.setChecked(True)
        assert dialog.database.isEnabled() and not dialog.replace_table.isChecked()
        dialog.folder.setText(str(tmp_path / "release"))
        dialog.database.setText(str(db))
        dialog.table_name.setText("cohort")
        dialog.replace_table.setChecked(replace)
        return dialog

    with qtbot.waitSignal(window.controller.error, timeout=120_000) as refused:
        dialog_into(False).accept()
    assert "already holds a table 'cohort'" in refused.args[1]
    assert sqlite3.connect(db).execute("SELECT * FROM cohort").fetchall() == [(1,)]
    with qtbot.waitSignal(window.controller.exported, timeout=120_000) as blocker:
        dialog_into(True).accept()
    output = blocker.args[0].manifest["output"]
    assert output["table"] == "cohort" and blocker.args[0].verification.startswith("holds")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM cohort").fetchone()[0] == output["rows"] > 1
    window.actions.message_box.close()
