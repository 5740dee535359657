"""A hierarchy the user attached is never ignored silently: the plan names each one a chosen method
will not generalise along, before Run."""

from __future__ import annotations

from veil.engine import Hierarchy


def test_the_plan_names_a_hierarchy_a_method_will_not_use(demo_window, qtbot):
    panel = demo_window.config_panel
    dataset = demo_window.controller.dataset
    ages = dataset.data.frame["age"]
    dataset.set_hierarchy("age", Hierarchy.intervals(ages, width=10, fanout=2))  # synchronous: no worker involved
    panel.choose("k-anonymity", ["mondrian"])
    assert "not used" not in panel.plan_label.text()  # Mondrian cuts age along its hierarchy
    panel.choose("k-anonymity", ["mondrian"], values={"numbers": "median"})
    assert (
        "Note: Method 'mondrian' with these parameters generalises numbers to ranges of their values: the "
        "hierarchy given for the numeric column 'age' is not used."
    ) in panel.plan_label.text()
    assert panel.run_button.isEnabled()  # told, not refused
    panel.choose(None, ["all-features"])
    assert "Note: Method 'all-features' does not generalise along hierarchies" in panel.plan_label.text()
