"""The import dialog names the columns of a headerless file (typed, from a UCI
.names file or a one-line header file), skips leading rows, and every option it shows reaches the
data source (and so the recent files and the project)."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from veil.desktop.dialogs import ImportDialog
from veil.engine import DataSource, ImportOptions, read_column_names

NAMES = """| A UCI description: comments start with a bar.
|  age : not an attribute, a comment
>50K, <=50K.

age: continuous.
sex: Female, Male.
hours-per-week: continuous.
"""


@pytest.fixture
def uci_test(tmp_path):
    """Like UCI's adult.test: a banner line, then headerless rows whose last field is the class."""
    rows = [
        f"{20 + i % 40}, {'Male' if i % 3 else 'Female'}, {30 + i % 20}, {'>50K.' if i % 4 else '<=50K.'}"
        for i in range(60)
    ]
    path = tmp_path / "people.test"
    path.write_text("|1x3 Cross validator\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "people.names").write_text(NAMES, encoding="utf-8")
    (tmp_path / "header.txt").write_text("age,sex,hours,income\n", encoding="utf-8")
    return path


def test_names_from_a_uci_names_file_or_a_header_line(uci_test):
    assert read_column_names(uci_test.with_suffix(".names")) == ("age", "sex", "hours-per-week", "class")
    assert read_column_names(uci_test.parent / "header.txt") == ("age", "sex", "hours", "income")


def test_skip_rows_and_names_from_a_file_in_the_dialog(registry, qtbot, uci_test):
    dialog = ImportDialog(registry, uci_test)
    qtbot.addWidget(dialog)
    assert dialog.problem.isVisibleTo(dialog)  # the banner line makes the file unreadable as it is
    dialog.skip_rows.setValue(1)
    assert not dialog.problem.isVisibleTo(dialog), dialog.problem.text()
    model = dialog.preview_model
    assert model.columnCount() == 4 and model.headerData(0, Qt.Horizontal) == "col1"
    dialog.use_names_file(uci_test.with_suffix(".names"))
    assert dialog.names.text() == "age, sex, hours-per-week, class"
    assert [model.headerData(j, Qt.Horizontal) for j in range(4)] == ["age", "sex", "hours-per-week", "class"]
    assert model.rowCount() == 60
    dialog.use_names_file(uci_test.parent / "header.txt")
    assert model.headerData(3, Qt.Horizontal) == "income"
    options = dialog.options()
    assert options.skip_rows == 1 and options.names == ("age", "sex", "hours", "income")


def test_typed_names_that_do_not_fit_say_so(registry, qtbot, uci_test):
    dialog = ImportDialog(registry, uci_test)
    qtbot.addWidget(dialog)
    dialog.skip_rows.setValue(1)
    dialog.names.setText("a, b")
    dialog.names.editingFinished.emit()
    assert dialog.problem.isVisibleTo(dialog) and "2 column names" in dialog.problem.text()


def test_every_dialog_option_reaches_the_data_source(window, qtbot, uci_test):
    dialog = window.actions.ask_import(uci_test)
    dialog.skip_rows.setValue(1)
    dialog.use_names_file(uci_test.with_suffix(".names"))
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        dialog.accept()
    table = window.controller.dataset.table
    assert table.n_rows == 60 and table.columns == ["age", "sex", "hours-per-week", "class"]
    source = window.controller.dataset.source
    assert source.skip_rows == 1 and source.names == ("age", "sex", "hours-per-week", "class")
    assert window.settings.recent()[0]["options"]["skip_rows"] == 1


def test_the_excel_sheet_is_kept_through_to_the_data_source(window, qtbot, tmp_path):
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as book:
        pd.DataFrame({"x": [1, 2]}).to_excel(book, sheet_name="first", index=False)
        pd.DataFrame({"age": [30, 40, 50], "town": ["A", "B", "C"]}).to_excel(book, sheet_name="ward", index=False)
    dialog = window.actions.ask_import(path)
    dialog.sheet.setText("ward")
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        dialog.accept()
    assert window.controller.dataset.table.columns == ["age", "town"]
    assert window.controller.dataset.source.sheet == "ward"
    assert window.settings.recent()[0]["options"]["sheet"] == "ward"
    again = DataSource.from_dict(window.controller.dataset.source.to_dict())
    assert again.options() == ImportOptions(sheet="ward")


def test_records_with_a_missing_value_can_be_dropped_on_opening(window, qtbot, tmp_path):
    """UCI's Adult marks missing values with "?": Mondrian cannot group them, so the dialog offers to
    drop those records (as the papers do), and the choice reaches the data source and the recent files."""
    path = tmp_path / "people.csv"
    path.write_text("age,work,class\n30,Private,yes\n41,?,no\n52,State-gov,no\n,Private,yes\n", encoding="utf-8")
    dialog = window.actions.ask_import(path)
    assert dialog.missing.currentData() is None  # never dropped unasked
    dialog.missing.setCurrentIndex(dialog.missing.findData("drop"))
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        dialog.accept()
    table = window.controller.dataset.table
    assert table.n_rows == 2 and list(table.frame["age"]) == [30, 52]
    assert window.controller.dataset.source.drop_missing
    assert window.settings.recent()[0]["options"]["drop_missing"] is True
    assert DataSource.from_dict(window.controller.dataset.source.to_dict()).options().drop_missing
    assert not hasattr(window, "missing_box")  # chosen already: not asked again


def test_a_uci_names_file_beside_the_data_names_its_columns(registry, qtbot, tmp_path):
    """adult.data beside adult.names: the dialog takes the names from it (and says so) when they fit."""
    rows = [f"{20 + i}, {'Male' if i % 2 else 'Female'}, {30 + i}, {'>50K' if i % 3 else '<=50K'}" for i in range(30)]
    data = tmp_path / "people.data"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "people.names").write_text(NAMES, encoding="utf-8")
    dialog = ImportDialog(registry, data)
    qtbot.addWidget(dialog)
    assert dialog.options().names == ("age", "sex", "hours-per-week", "class")
    assert dialog.names_source.isVisibleTo(dialog) and "people.names" in dialog.names_source.text()
    assert dialog.preview_model.headerData(3, Qt.Horizontal) == "class"
    # names that do not fit (five for four columns) are not taken
    (tmp_path / "people.names").write_text(NAMES + "town: a, b.\n", encoding="utf-8")
    other = ImportDialog(registry, data)
    qtbot.addWidget(other)
    assert other.options().names is None and not other.names_source.isVisibleTo(other)
