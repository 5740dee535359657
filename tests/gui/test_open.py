"""Opening data: the import dialog's preview and options, drag-and-drop, recent files, loading on
the worker thread with progress, and errors that leave the app as it was."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from veil.desktop.state import tasks
from veil.desktop.dialogs import ImportDialog, file_filter
from veil.engine import BinaryMatrix, Table


@pytest.fixture
def semicolon_csv(tmp_path):
    path = tmp_path / "ward.csv"
    lines = ["name;age;town"] + [f"Zoë {i};{20 + i % 50};Köln" for i in range(300)]
    path.write_bytes("\n".join(lines).encode("cp1252"))
    return path


def test_the_import_dialog_previews_with_the_chosen_options(registry, qtbot, semicolon_csv):
    dialog = ImportDialog(registry, semicolon_csv)
    qtbot.addWidget(dialog)
    model = dialog.preview_model
    assert model.columnCount() == 3 and model.headerData(0, Qt.Horizontal) == "name"  # all detected
    assert model.data(model.index(0, 2)) == "Köln"  # cp1252 detected
    assert model.rowCount() == 200  # a preview, not the file
    dialog.delimiter.setCurrentIndex(dialog.delimiter.findData(","))
    assert model.columnCount() == 1
    dialog.delimiter.setCurrentIndex(dialog.delimiter.findData(";"))
    dialog.header.setCurrentIndex(dialog.header.findData(False))
    assert model.headerData(0, Qt.Horizontal) == "col1" and model.data(model.index(0, 0)) == "name"
    dialog.encoding.setCurrentText("utf-8")
    assert dialog.problem.isVisibleTo(dialog) and "not valid utf-8" in dialog.problem.text()
    assert model.rowCount() == 0
    dialog.encoding.setCurrentText("cp1252")
    assert not dialog.problem.isVisibleTo(dialog)
    options = dialog.options()
    assert (options.delimiter, options.encoding, options.header) == (";", "cp1252", False)


def test_a_binary_format_is_read_whole(registry, qtbot, tmp_path, demo_table):
    path = tmp_path / "demo.parquet"
    demo_table.frame.head(20).to_parquet(path)
    dialog = ImportDialog(registry, path)
    qtbot.addWidget(dialog)
    assert "read whole" in dialog.preview_note.text() and not dialog.delimiter.isEnabled()


def test_the_open_dialog_offers_every_importer(registry):
    text = file_filter(registry)
    for cls in registry.classes("importer"):
        assert cls.title in text and all(f"*{e}" in text for e in cls.extensions)


def test_accepting_the_dialog_loads_on_the_worker_and_remembers_the_file(window, qtbot, semicolon_csv, monkeypatch):
    threads = []
    real = tasks.table_stats
    monkeypatch.setattr(tasks, "table_stats", lambda *a: threads.append(threading.get_ident()) or real(*a))
    dialog = window.actions.ask_import(semicolon_csv)
    dialog.header.setCurrentIndex(dialog.header.findData(True))
    progress = []
    window.controller.load_progress.connect(lambda f, m: progress.append(m))
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        dialog.accept()
    table = window.controller.dataset.table
    assert table.n_rows == 300 and table.columns == ["name", "age", "town"]
    assert threads and threads[0] != threading.get_ident()  # the GUI thread did not compute
    assert any(m.startswith("reading") for m in progress)
    assert table.schema["name"].role.value == "identifier"  # suggested from the column name
    recent = window.settings.recent()
    assert recent[0]["path"] == str(semicolon_csv.resolve()) and recent[0]["options"]["header"] is True
    assert window.windowTitle() == "ward.csv — Veil"
    assert "300 rows" in window.data_label.text()


def test_a_recent_file_reopens_with_its_options(window, qtbot, semicolon_csv):
    window.settings.add_recent(semicolon_csv, "data", tasks.ImportOptions(delimiter=";", header=False))
    entry = window.settings.recent()[0]
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        window.actions.open_recent(entry)
    assert window.controller.dataset.table.columns == ["col1", "col2", "col3"]
    window.actions._fill_recent()
    assert [a.text() for a in window.actions.recent_menu.actions()][0] == "ward.csv"


def test_dropping_a_file_opens_the_import_dialog(window, qtbot, semicolon_csv):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(semicolon_csv))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    window.dropEvent(event)
    dialog = window.actions.dialog
    assert isinstance(dialog, ImportDialog) and dialog.isVisible() and dialog.path == semicolon_csv
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        dialog.accept()
    assert window.controller.dataset.table.n_rows == 300


def test_a_bad_file_shows_an_error_and_keeps_the_data(demo_window, qtbot, tmp_path):
    bad = tmp_path / "ragged.csv"
    bad.write_text("a,b\n1,2\n3\n", encoding="utf-8")
    with qtbot.waitSignal(demo_window.controller.error, timeout=10_000) as blocker:
        demo_window.controller.open_path(bad)
    assert "line 3" in blocker.args[1]
    qtbot.waitUntil(lambda: demo_window.last_error is not None and demo_window.last_error.isVisible())
    assert demo_window.controller.dataset.table.n_rows == 5000
    assert demo_window.dataset_panel.table_model.rowCount() == 5000


def test_transaction_data_opens_as_items(window, qtbot, tmp_path):
    path = tmp_path / "baskets.spmf"
    path.write_text("1 2 3\n2 3\n1\n", encoding="utf-8")
    with qtbot.waitSignal(window.controller.data_loaded, timeout=10_000):
        window.controller.open_path(path)
    data = window.controller.dataset.data
    assert isinstance(data, BinaryMatrix) and not isinstance(data, Table)
    view_model = window.dataset_panel.view.model()
    assert view_model.rowCount() == 3 and view_model.data(view_model.index(1, 0)) == "2, 3"
    assert not window.dataset_panel.tabs.isTabEnabled(0)
    offered = set(window.config_panel.rows)
    assert offered and all(
        {"binary", "transactions", "sets"} & set(window.registry.get("algorithm", n).accepts) for n in offered
    )
