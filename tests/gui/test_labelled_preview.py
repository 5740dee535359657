"""The import dialog previews a labelled statistics file (its value labels shown as the cells) and an
SQLite database's table or query, reading only their first records."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from veil.desktop.dialogs import ImportDialog

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "statfiles"


def cells(model) -> list[list[str]]:
    return [[model.data(model.index(i, j)) for j in range(model.columnCount())] for i in range(model.rowCount())]


def test_a_labelled_file_is_previewed_with_its_labels(registry, qtbot):
    pytest.importorskip("pyreadstat", reason="the statistics-file readers are an extra: pip install veil[statfiles]")
    for name in ("survey.sav", "survey.dta"):
        dialog = ImportDialog(registry, FIXTURES / name)
        qtbot.addWidget(dialog)
        assert not dialog.problem.isVisibleTo(dialog), dialog.problem.text()
        model = dialog.preview_model
        assert [model.headerData(j, Qt.Horizontal) for j in range(4)] == ["age", "sex", "town", "weight"]
        assert [row[1] for row in cells(model)] == ["Male", "Female", "Female", "Male", "Female"]


def test_a_database_is_previewed_by_table_or_query(registry, qtbot, tmp_path):
    db = tmp_path / "clinic.sqlite"
    conn = sqlite3.connect(db)
    pd.DataFrame({"age": range(500), "ward": ["A", "B"] * 250}).to_sql("stays", conn, index=False)
    conn.execute("CREATE TABLE staff (name TEXT)")
    conn.commit()
    conn.close()
    dialog = ImportDialog(registry, db)
    qtbot.addWidget(dialog)
    assert "name one with --table" in dialog.problem.text() or "holds 2 tables" in dialog.problem.text()
    dialog.sheet.setText("stays")
    dialog.refresh()
    assert not dialog.problem.isVisibleTo(dialog), dialog.problem.text()
    assert dialog.preview_model.rowCount() == 200  # the first records only
    dialog.sheet.setText("")
    dialog.query.setText("SELECT ward, COUNT(*) AS n FROM stays GROUP BY ward")
    dialog.refresh()
    assert cells(dialog.preview_model) == [["A", "250"], ["B", "250"]]
    dialog.query.setText("DELETE FROM stays")
    dialog.refresh()
    assert "may only read" in dialog.problem.text()
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM stays").fetchone() == (500,)
