"""The hierarchy builder: a tree of the hierarchy and a live preview of the groups it makes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox


def test_building_a_hierarchy_previews_its_groups_and_attaches_it(demo_window, qtbot):
    panel, dataset = demo_window.dataset_panel, demo_window.controller.dataset
    panel.edit_hierarchy("age")
    dialog = panel.hierarchy_dialog
    n = int(dataset.table.frame["age"].notna().sum())
    assert dialog.kind.currentData() == "intervals" and dialog.tree.model().rowCount() == 1
    dialog.width.setText("20")
    shown = [int(dialog.preview.item(i, 1).text()) for i in range(dialog.preview.rowCount())]
    assert sum(shown) == n and len(shown) > 1  # every record in exactly one group
    dialog.level.setValue(dialog.level.maximum())
    assert dialog.preview.rowCount() == 1 and int(dialog.preview.item(0, 1).text()) == n
    dialog.kind.setCurrentIndex(dialog.kind.findData("grouping"))
    dialog.groups.setText("no colon here")
    assert not dialog.buttons.button(QDialogButtonBox.Ok).isEnabled() and dialog.problem.text()
    dialog.kind.setCurrentIndex(dialog.kind.findData("intervals"))
    with qtbot.waitSignal(dialog.accepted):
        dialog.buttons.button(QDialogButtonBox.Ok).click()
    assert dataset.column("age").hierarchy is not None and dataset.column("age").hierarchy.height >= 2


def test_interval_builder_codes_the_ends_previews_live_and_saves_arx_format(demo_window, qtbot, tmp_path):
    from veil.engine import Hierarchy

    panel, dataset = demo_window.dataset_panel, demo_window.controller.dataset
    panel.edit_hierarchy("age")
    dialog = panel.hierarchy_dialog
    ages = dataset.table.frame["age"]
    dialog.width.setText("10")
    dialog.fanout.setValue(2)
    dialog.bottom.setText("30")
    dialog.top.setText("80")
    dialog.level.setValue(1)
    shown = {
        dialog.preview.item(i, 0).text(): int(dialog.preview.item(i, 1).text())
        for i in range(dialog.preview.rowCount())
    }
    assert shown["<30"] == int((ages < 30).sum()) and shown[">=80"] == int((ages >= 80).sum())
    assert shown["30-39"] == int(((ages >= 30) & (ages < 40)).sum()) and sum(shown.values()) == len(ages)
    dialog.top.setText("twenty")
    assert "top coding must be a number" in dialog.problem.text()
    assert not dialog.save_button.isEnabled() and not dialog.buttons.button(QDialogButtonBox.Ok).isEnabled()
    dialog.top.setText("20")
    assert "must lie below top coding" in dialog.problem.text()
    dialog.top.setText("80")
    dialog.resize(900, 700)
    dialog.grab().save(str(tmp_path / "dialog.png"))
    dialog.save_to(str(tmp_path / "age.csv"))
    saved = Hierarchy.from_arx_csv(tmp_path / "age.csv", name="age")
    assert saved == Hierarchy.intervals(ages, width=10, fanout=2, bottom=30, top=80, name="age")
    with qtbot.waitSignal(dialog.accepted):
        dialog.buttons.button(QDialogButtonBox.Ok).click()
    assert dataset.column("age").hierarchy == saved


def test_an_attached_hierarchy_is_shown_and_reopened_as_it_is(window, qtbot, tmp_path):
    """The dialog reopens on the attached ARX file's hierarchy (OK keeps it), the
    columns table says which columns have one, and the file chooser starts beside the data."""
    data = tmp_path / "data" / "towns.csv"
    data.parent.mkdir()
    data.write_text(
        "town,n\n" + "\n".join(f"{t},{i}" for i, t in enumerate(["Lyon", "Paris", "Nice"] * 5)) + "\n", encoding="utf-8"
    )
    arx = tmp_path / "town.csv"
    arx.write_text("Lyon;South-East;*\nNice;South-East;*\nParis;North;*\n", encoding="utf-8")
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        window.controller.open_path(data)
    panel, dataset = window.dataset_panel, window.controller.dataset
    panel.edit_hierarchy("town")
    dialog = panel.hierarchy_dialog
    assert dialog.folder == str(data.parent)  # the chooser starts beside the data, not in the home folder
    dialog.kind.setCurrentIndex(dialog.kind.findData("arx-file"))
    dialog.path.setText(str(arx))
    with qtbot.waitSignal(dialog.accepted):
        dialog.buttons.button(QDialogButtonBox.Ok).click()
    attached = dataset.column("town").hierarchy
    assert attached is not None and attached.height == 2
    model = panel.columns_model
    row = dataset.table.columns.index("town")
    assert model.data(model.index(row, 0), Qt.DecorationRole) is not None  # marked in the columns table
    assert "a hierarchy of 2 levels is attached" in model.data(model.index(row, 0), Qt.ToolTipRole)
    other = model.index(dataset.table.columns.index("n"), 0)
    assert model.data(other, Qt.DecorationRole) is None and "no hierarchy" in model.data(other, Qt.ToolTipRole)
    panel.columns_view.grab().save(str(tmp_path / "columns.png"))
    panel.edit_hierarchy("town")  # reopened: on the attached hierarchy, not on a generated kind
    again = panel.hierarchy_dialog
    assert again.kind.currentData() == "in-use" and again.hierarchy.to_dict() == attached.to_dict()
    with qtbot.waitSignal(again.accepted):
        again.buttons.button(QDialogButtonBox.Ok).click()
    assert dataset.column("town").hierarchy.to_dict() == attached.to_dict()
