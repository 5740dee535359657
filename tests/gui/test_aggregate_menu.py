"""A quasi-identifier's column menu: "Aggregate age in groups ▸ mean/…" sets the runs' aggregates,
which a project file keeps and reopens."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QMenu

from .helpers import load_demo_into, open_window


def _submenu_actions(panel, column: str) -> dict:
    menu = QMenu(panel)
    panel._aggregate_menu(menu, column)
    sub = menu.actions()[0].menu()
    return {a.text(): a for a in sub.actions() if a.text()}


def test_the_column_menu_aggregates_and_a_project_keeps_it(qtbot, registry, tmp_path):
    first = open_window(qtbot, registry)
    load_demo_into(first, qtbot)
    c = first.controller
    c.dataset.set_roles(["age", "sex"], "quasi-identifier")
    actions = _submenu_actions(first.dataset_panel, "sex")
    assert not actions["mean"].isEnabled() and actions["mode"].isEnabled()  # sex is no number
    _submenu_actions(first.dataset_panel, "age")["median"].trigger()
    assert c.config.aggregates == {"age": "median"}
    assert _submenu_actions(first.dataset_panel, "age")["median"].isChecked()
    first.config_panel.choose("k-anonymity", ["mondrian"])
    path = tmp_path / "agg.veil.json"
    with qtbot.waitSignal(c.project_saved):
        assert c.save_project(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [r.get("aggregate") for r in saved["runs"]] == [{"age": "median"}]
    first.close()

    second = open_window(qtbot, registry)
    with qtbot.waitSignal(second.controller.data_loaded, timeout=10_000):
        second.actions.open_any(path)
    assert second.controller.config.aggregates == {"age": "median"}
    _submenu_actions(second.dataset_panel, "age")["Do not aggregate (generalise it)"].trigger()
    assert second.controller.config.aggregates == {}
    second.close()
