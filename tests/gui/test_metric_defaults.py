"""The configuration ticks the cheap metrics by default; an expensive one, once chosen, shows an
estimate before the run starts, and says when a large input will be sampled."""

from __future__ import annotations

from types import SimpleNamespace

from veil.desktop.state import metric_cost_note
from veil.engine import CHEAP, EXPENSIVE


def test_only_cheap_metrics_are_ticked_by_default(demo_window, registry):
    boxes = demo_window.config_panel.metric_boxes
    assert boxes  # the registry has metrics
    for name, box in boxes.items():
        assert box.isChecked() == (registry.get("metric", name).cost == CHEAP), name
    assert any(registry.get("metric", n).cost == EXPENSIVE for n in boxes)


def test_choosing_an_expensive_metric_shows_its_estimate_in_the_plan(demo_window, registry):
    panel = demo_window.config_panel
    expensive = next(n for n in panel.metric_boxes if registry.get("metric", n).cost == EXPENSIVE)
    panel.choose(None, ["all-features"], metrics=["sfc"])
    assert panel.plan_label.text().startswith("1 run") and "Expensive metrics" not in panel.plan_label.text()
    panel.metric_boxes[expensive].setChecked(True)
    assert f"Expensive metrics ({expensive}): about" in panel.plan_label.text()
    assert "sample" not in panel.plan_label.text()  # the demo's 5,000 records are all used


def test_the_estimate_says_a_large_input_is_sampled(registry):
    expensive = [c.name for c in registry.classes("metric") if c.cost == EXPENSIVE]
    big = SimpleNamespace(n_rows=2_000_000, columns=list(range(12)))
    note = metric_cost_note(registry, expensive[:1], big, runs=3)
    assert "seeded sample of 100,000 of the 2,000,000 records" in note
    assert metric_cost_note(registry, [c.name for c in registry.classes("metric") if c.cost == CHEAP], big) == ""


def test_the_plan_says_what_the_runs_need_of_memory_and_refuses_more_than_there_is(demo_window, monkeypatch):
    """Before the run: the engine's estimate beside what the worker may allocate; when that is too
    little the plan says so in the engine's words and Run is disabled."""
    import veil.desktop.state.notes as state

    panel = demo_window.config_panel
    panel.choose("k-anonymity", ["mondrian"])
    assert "Memory: about" in panel.plan_label.text() and panel.run_button.isEnabled()
    monkeypatch.setattr(state, "available_memory", lambda: (10**6, "available on this machine"))
    panel.choose("k-anonymity", ["hilbert"])
    assert not panel.run_button.isEnabled()
    assert "Not enough memory: this run needs about" in panel.plan_error.text()


def test_a_metric_that_says_nothing_of_the_chosen_methods_is_greyed_out_and_not_computed(demo_window, registry):
    """A feature ranking's accuracy is not ticked (nor computed) for Mondrian, and
    comes back as it was chosen when a method it measures is chosen."""
    panel = demo_window.config_panel
    box = panel.metric_boxes["weights-accuracy"]
    panel.choose("k-anonymity", ["fwell"], metrics=["weights-accuracy", "min-group-size"])
    assert box.isEnabled() and box.isChecked()
    panel.choose("k-anonymity", ["mondrian"])
    assert not box.isEnabled() and not box.isChecked()
    assert "weights-accuracy" in demo_window.controller.config.metrics  # the choice is kept
    planned = demo_window.controller.config.plan(
        registry, demo_window.controller.dataset.data, demo_window.controller.dataset.recipe()
    )
    assert all("weights-accuracy" not in p.spec.metrics and "min-group-size" in p.spec.metrics for p in planned)
    panel.choose("k-anonymity", ["fwell"])
    assert box.isEnabled() and box.isChecked()


def test_every_metric_that_requires_a_release_kind_fits_only_methods_providing_it(registry):
    for metric in registry.classes("metric"):
        for method in registry.classes("algorithm"):
            if metric.requires and metric.requires not in method.provides:
                assert not metric.fits(method, None), (metric.name, method.name)


def test_a_method_that_needs_a_target_cannot_be_ticked_without_one(demo_window, registry):
    panel, dataset = demo_window.config_panel, demo_window.controller.dataset
    target = dataset.table.schema.target
    assert panel.rows["fwell"].check.isEnabled()
    dataset.set_roles([target], "insensitive")
    row = panel.rows["fwell"]
    assert not row.check.isEnabled() and "needs a target column" in row.note.text()
    assert panel.rows["mondrian"].check.isEnabled()
    dataset.set_roles([target], "target")
    assert row.check.isEnabled()
