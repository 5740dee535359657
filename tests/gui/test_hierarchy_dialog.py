"""The hierarchy builder: a tree of the hierarchy and a live preview of the groups it makes."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox


def test_building_a_hierarchy_previews_its_groups_and_attaches_it(demo_window, qtbot):
    panel, dataset = demo_window.dataset_panel, demo_window.controller.dataset
    panel.edit_hierarchy("age")
    dialog = panel.hierarchy_dialog
    n = int(dataset.table.frame["age"].notna().sum())
    assert dialog.kind.currentData() == "intervals" and dialog.tree.model().rowCount() == 1
    dialog.width.setValue(20)
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
