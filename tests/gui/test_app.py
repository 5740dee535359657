"""The desktop opens on the demo data; its table model is lazy and correct; bad files get a dialog."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from veil.desktop.app import MainWindow  # noqa: E402
from veil.desktop.launcher import wants_desktop  # noqa: E402
from veil.desktop.models import TableModel  # noqa: E402
from veil.engine import load_demo  # noqa: E402


@pytest.fixture
def window(qtbot, registry):
    w = MainWindow(registry)
    qtbot.addWidget(w)
    w.open_demo()
    return w


def test_opens_on_demo_data(window):
    table = load_demo()
    assert window.model.rowCount() == table.n_rows == 5000
    assert window.model.columnCount() == len(table.columns)
    assert "demo_hospital.csv" in window.windowTitle()
    assert "5,000 rows" in window.status.text()


def test_table_model_reads_cells_and_roles(qtmodeltester):
    table = load_demo()
    model = TableModel(table)
    qtmodeltester.check(model)
    idx = model.index(3, table.columns.index("age"))
    assert model.data(idx) == str(table.frame["age"].iloc[3])
    assert model.headerData(0, Qt.Horizontal) == table.columns[0]
    assert model.data(model.index(0, 0), Qt.BackgroundRole) is not None  # the identifier column is coloured


def test_bad_file_shows_a_dialog_and_keeps_the_data(window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("veil.desktop.app.QMessageBox.warning", lambda *a: shown.append(a[2]))
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    window.open_path(str(empty))
    assert shown and "empty" in shown[0]
    assert window.model.rowCount() == 5000


def test_plugins_tab_lists_plugins(window):
    assert "all-features" in window.plugins_text.toPlainText()


@pytest.mark.parametrize("argv, gui", [([], True), (["--demo"], True), (["data.csv"], True), (["run"], False),
                                       (["plugins", "--json"], False), (["--help"], False)])
def test_launcher_routes(argv, gui):
    assert wants_desktop(argv) is gui
