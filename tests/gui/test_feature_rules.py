"""Changing a feature rule keeps the table where it was (scroll position,
selection, the open editor), and default cut points on a whole-number column are whole numbers."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel

from veil.desktop.models import StepsModel


def test_a_rule_change_keeps_scroll_position_and_selection(demo_window, qtbot):
    panel = demo_window.dataset_panel
    panel.tabs.setCurrentIndex(1)
    view, model = panel.steps_view, panel.steps_model
    view.resize(400, 120)  # fewer rows than the recipe has: the table scrolls
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0)
    last = model.rowCount() - 1
    view.scrollToBottom()
    view.selectionModel().setCurrentIndex(model.index(last, StepsModel.RULE), QItemSelectionModel.ClearAndSelect)
    scrolled = view.verticalScrollBar().value()
    assert scrolled > 0
    name = model.data(model.index(last, 0))
    rule = "one-hot" if model.data(model.index(last, StepsModel.RULE)) != "one-hot" else "leave out"
    with qtbot.assertNotEmitted(model.modelReset):
        assert model.setData(model.index(last, StepsModel.RULE), rule)
    assert model.data(model.index(last, 0)) == name
    assert view.verticalScrollBar().value() == scrolled
    assert view.currentIndex().row() == last


def test_default_cut_points_of_a_whole_number_column_are_whole(demo_window):
    dataset = demo_window.controller.dataset
    model = demo_window.dataset_panel.steps_model
    for column in ("age", "length_of_stay"):
        row = dataset.binarisable().index(column)
        dataset.set_rule(column, "leave out")
        assert model.setData(model.index(row, StepsModel.RULE), "cuts")
        cuts = dataset.step(column).cuts
        assert cuts and all(c == int(c) for c in cuts), (column, cuts)
        assert "." not in model.data(model.index(row, StepsModel.CUTS))


def test_the_columns_table_is_readable_at_the_default_size(demo_window, qtbot):
    """Item 4: no clipped role ("quasi-ident…") or count ("5,00") in the Columns table."""
    view = demo_window.dataset_panel.columns_view
    model = view.model()
    qtbot.waitUntil(lambda: view.viewport().width() > 0)
    header, fm = view.horizontalHeader(), view.fontMetrics()
    assert sum(header.sectionSize(c) for c in range(model.columnCount())) <= view.viewport().width()
    for c in range(1, model.columnCount()):  # every column but the names, which may elide
        for r in range(model.rowCount()):
            text = str(model.index(r, c).data() or "")
            assert fm.horizontalAdvance(text) <= header.sectionSize(c), (model.headerData(c, 1), text)
