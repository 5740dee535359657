"""Hierarchies in bulk: a folder's ARX files (``*_hierarchy_<column>.csv``) and plain ``<column>.csv``
matched to the columns by name, shown before they are attached; the hierarchy dialog resizable with
its whole tree readable; a category's default kind a grouping, a code's masking."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox

from veil.engine import Hierarchy, match_hierarchy_files
from veil.desktop.hierarchy_dialog import looks_like_codes


def _write(hierarchy: Hierarchy, path) -> None:
    path.write_text(hierarchy.to_arx_csv(), encoding="utf-8")


def test_a_folder_of_hierarchies_is_matched_shown_and_attached(demo_window, qtbot, tmp_path):
    panel, dataset = demo_window.dataset_panel, demo_window.controller.dataset
    frame = dataset.table.frame
    first, second = "sex", "marital_status"
    _write(Hierarchy.flat(frame[first].dropna()), tmp_path / f"demo_hierarchy_{first}.csv")  # ARX's name
    _write(Hierarchy.flat(frame[second].dropna()), tmp_path / f"{second.upper()}.csv")  # plain, other case
    _write(Hierarchy.flat(["x", "y"]), tmp_path / "age.csv")  # names a column, but its values are not leaves
    (tmp_path / "notes.csv").write_text("a;*\n")  # names no column
    dialog = panel.load_hierarchy_folder(str(tmp_path))
    rows = {r.column: r for r in dialog.rows}
    assert set(rows) == {first, second, "age"}
    assert rows[first].hierarchy is not None and rows[second].hierarchy is not None
    assert rows["age"].hierarchy is None and rows["age"].problem  # said why, and not ticked
    ticked = {
        dialog.table.item(i, 0).text()
        for i in range(dialog.table.rowCount())
        if dialog.table.item(i, 0).checkState() == Qt.Checked
    }
    assert ticked == {first, second}
    assert "notes.csv" in dialog.others.text()
    with qtbot.waitSignal(dialog.accepted):
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.Ok).click()
    assert dataset.column(first).hierarchy is not None and dataset.column(second).hierarchy is not None
    assert dataset.column("age").hierarchy is None


def test_arx_files_match_adult_columns_by_name(datasets_dir):
    folder = datasets_dir / "adult_arx"
    columns = list(pd.read_csv(folder / "adult.csv", sep=";", nrows=1).columns)
    match = match_hierarchy_files(folder, columns, skip=[folder / "adult.csv"])
    assert set(match.matched) == set(columns)  # ARX ships one hierarchy per column
    assert all(path.name == f"adult_hierarchy_{c}.csv" for c, path in match.matched.items())
    assert match.unmatched == () and match.passed_over == {}


def test_an_arx_name_wins_over_a_plain_one_and_names_compare_loosely(tmp_path):
    for name in ("marital_status.csv", "adult_hierarchy_Marital-Status.csv", "sex.txt", "readme.md"):
        (tmp_path / name).write_text("a;*\n")
    match = match_hierarchy_files(tmp_path, ["marital-status", "sex", "age"])
    assert match.matched["marital-status"].name == "adult_hierarchy_Marital-Status.csv"
    assert [p.name for p in match.passed_over["marital-status"]] == ["marital_status.csv"]
    assert match.matched["sex"].name == "sex.txt" and "age" not in match.matched


def test_the_dialog_is_resizable_and_shows_the_whole_tree(demo_window, qtbot):
    panel, frame = demo_window.dataset_panel, demo_window.controller.dataset.table.frame
    assert not looks_like_codes(frame["marital_status"])
    panel.edit_hierarchy("marital_status")
    dialog = panel.hierarchy_dialog
    assert dialog.kind.currentData() == "grouping"  # a category is grouped, not masked
    assert dialog.isSizeGripEnabled() and dialog.size().width() >= 900 and dialog.size().height() >= 680
    dialog.show()
    tree = dialog.tree
    root = tree.model().index(0, 0)
    assert tree.isExpanded(root)
    leaves = [tree.model().index(i, 0, root) for i in range(tree.model().rowCount(root))]
    assert leaves and all(tree.visualRect(i).isValid() for i in leaves)  # expanded: every value shown
    assert tree.columnWidth(0) >= tree.sizeHintForColumn(0)  # no label cut ("Asian-…")
    dialog.reject()


def test_codes_are_masked_and_words_grouped():
    assert looks_like_codes(pd.Series(["HD4", "HD7", "AB1"]))
    assert not looks_like_codes(pd.Series(["Male", "Female"]))
    assert not looks_like_codes(pd.Series(["HD4", "HD47"]))


def test_opening_a_file_with_the_same_columns_offers_to_keep_their_setup(demo_window, qtbot, tmp_path):
    from veil.engine import Role

    c = demo_window.controller
    frame = c.dataset.table.frame
    sample = tmp_path / "sample.csv"
    frame.sample(400, random_state=1).to_csv(sample, index=False)
    c.dataset.set_roles(["smoker"], Role.QUASI_IDENTIFIER)
    c.dataset.set_hierarchy("sex", Hierarchy.flat(frame["sex"]))
    before = c.dataset.table.schema
    with qtbot.waitSignal(c.schema_offered) as offered:
        c.open_path(sample)
    assert offered.args[0]  # names the data open before
    box = demo_window.keep_schema_box
    assert "Keep their roles, kinds and hierarchies" in box.text()
    assert c.dataset.column("smoker").role is not Role.QUASI_IDENTIFIER  # nothing kept until the user says so
    box.button(QMessageBox.Yes).click()
    schema = c.dataset.table.schema
    assert schema["smoker"].role is Role.QUASI_IDENTIFIER
    assert schema["sex"].hierarchy == before["sex"].hierarchy
    assert {col.name: col.role for col in schema.columns} == {col.name: col.role for col in before.columns}


def test_a_file_with_other_columns_is_not_offered_the_setup(demo_window, qtbot, tmp_path):
    c = demo_window.controller
    other = tmp_path / "other.csv"
    c.dataset.table.frame[["age", "sex"]].to_csv(other, index=False)
    offers = []
    c.schema_offered.connect(offers.append)
    with qtbot.waitSignal(c.data_loaded):
        c.open_path(other)
    assert offers == [] and c.offered is None


def test_the_folder_chooser_starts_where_the_hierarchies_lie_and_the_population_is_no_hierarchy(
    qtbot, registry, tmp_path
):
    from veil.engine import ImportOptions

    from .helpers import open_window

    frame = pd.DataFrame({"sex": ["F", "M"] * 20, "town": list("abcd") * 10})
    data, elsewhere = tmp_path / "sample", tmp_path / "arx"
    data.mkdir()
    elsewhere.mkdir()
    frame.iloc[:10].to_csv(data / "sample.csv", index=False)
    frame.to_csv(elsewhere / "population.csv", index=False)  # beside the hierarchies, as ARX's data/ keeps them
    _write(Hierarchy.flat(frame["sex"]), elsewhere / "demo_hierarchy_sex.csv")
    window = open_window(qtbot, registry)
    c = window.controller
    with qtbot.waitSignal(c.data_loaded, timeout=20_000):
        c.open_path(data / "sample.csv", ImportOptions())
    assert window.dataset_panel._hierarchy_folder() == str(data)  # no population yet: beside the data
    with qtbot.waitSignal(c.population_opened, timeout=20_000):
        c.open_population(elsewhere / "population.csv")
    assert window.dataset_panel._hierarchy_folder() == str(elsewhere)
    dialog = window.dataset_panel.load_hierarchy_folder(str(elsewhere))
    assert [r.column for r in dialog.rows] == ["sex"] and "population.csv" not in dialog.others.text()
    dialog.reject()
    window.close()
