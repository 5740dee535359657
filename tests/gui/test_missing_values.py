"""Missing values are found when the file is opened, every column holding some is
named, the choices are offered there (drop, a value of its own, impute), and reading the file again
keeps the roles, kinds and hierarchies the user gave its columns."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from veil.engine import Hierarchy, Kind, Role


def _open_with_blanks(window, qtbot, tmp_path):
    path = tmp_path / "people.csv"
    rows = ["age,town,code,class"] + [
        f"{20 + i % 30},{'' if i % 7 == 0 else 'AB'[i % 2]},{i % 4},{'yn'[i % 2]}" for i in range(40)
    ]
    rows[5] = "?,A,1,y"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    dialog = window.actions.ask_import(path)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        dialog.accept()
    return path


def _button(box: QMessageBox, text: str):
    return next(b for b in box.buttons() if b.text().startswith(text))


def test_every_column_with_blanks_is_named_on_opening(window, qtbot, tmp_path):
    _open_with_blanks(window, qtbot, tmp_path)
    box = window.missing_box
    assert box.isVisible()
    assert "2 columns" in box.text() and "'age' (1 record) and 'town' (6 records)" in box.text()
    box.grab().save(str(tmp_path / "missing.png"))
    _button(box, "Leave").click()  # left: nothing is read again
    qtbot.waitUntil(lambda: not box.isVisible())
    assert window.controller.dataset.missing() == {"age": 1, "town": 6}


def test_imputing_keeps_the_roles_kinds_and_hierarchies(window, qtbot, tmp_path):
    _open_with_blanks(window, qtbot, tmp_path)
    dataset = window.controller.dataset
    dataset.set_roles(["code", "town"], Role.QUASI_IDENTIFIER)
    dataset.set_roles(["class"], Role.TARGET)
    dataset.set_kind("code", Kind.CATEGORICAL)
    dataset.set_hierarchy(
        "code", Hierarchy.from_levels({"0": ["low", "*"], "1": ["low", "*"], "2": ["high", "*"], "3": ["high", "*"]})
    )
    dataset.set_roles(["age"], Role.SENSITIVE)
    roles = {c.name: c.role for c in dataset.table.schema.columns}
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        _button(window.missing_box, "Impute").click()
    table = dataset.table
    assert dataset.source.fill_missing == "impute" and dataset.missing() == {}
    assert table.n_rows == 40 and set(table.frame["town"]) == {"A", "B"}
    assert table.schema["code"].kind is Kind.CATEGORICAL and table.schema["code"].hierarchy is not None
    assert {c.name: c.role for c in table.schema.columns} == roles and table.schema.target == "class"
    assert table.schema["age"].role is Role.SENSITIVE  # not the role suggested from its name
    assert "keep their kinds, roles and hierarchies" in window.statusBar().currentMessage()


def test_dropping_from_the_question_drops_the_records(window, qtbot, tmp_path):
    _open_with_blanks(window, qtbot, tmp_path)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        _button(window.missing_box, "Drop").click()
    assert window.controller.dataset.table.n_rows == 40 - 7 and window.controller.dataset.source.drop_missing
