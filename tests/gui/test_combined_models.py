"""Several privacy models in the configuration panel: every run must satisfy all of them."""

from __future__ import annotations


def test_a_second_model_is_added_and_every_run_carries_both(demo_window, qtbot):
    panel, c = demo_window.config_panel, demo_window.controller
    assert not panel.also_checks["k-anonymity"].isVisible() or panel.model_combo.currentData() != "k-anonymity"
    panel.choose("k-anonymity", ["greedy-hamdist"], values={"k": 3}, metrics=["sfc"], also={"k-ac": {"k": 4}})
    assert panel.also_forms["k-ac"].isVisibleTo(panel) and not panel.also_checks["k-anonymity"].isVisibleTo(panel)
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [[(m.name, m.params.get("k")) for m in p.spec.models] for p in planned] == [[("k-anonymity", 3), ("k-ac", 4)]]
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    entry = c.runs.entries[-1]
    assert demo_window.runs_panel.results_model.rowCount() >= 1
    assert entry.outcome.result is not None, entry.outcome
    assert [v.model for v in entry.outcome.result.verdicts] == ["k-anonymity", "k-ac"]
    panel.choose("k-anonymity", ["greedy-hamdist"], metrics=["sfc"], also={})
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [len(p.spec.models) for p in planned] == [1]
