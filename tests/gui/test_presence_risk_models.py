"""The presence, map and risk models in the desktop: offered from their declarations with their
description and a field per parameter carrying its help; δ-presence without a population open is
refused by the plan in one sentence (with one, see test_population.py); a risk model runs."""

from __future__ import annotations

import pytest

from veil.engine import BadInput

NEW = [
    "beta-likeness",
    "delta-presence",
    "k-map",
    "highest-risk",
    "average-risk",
    "individual-risk",
    "population-uniqueness",
]


@pytest.mark.parametrize("name", NEW)
def test_each_model_is_offered_with_its_help(demo_window, name):
    panel, registry = demo_window.config_panel, demo_window.registry
    cls = registry.get("privacy-model", name)
    panel.choose(name, ["global-recoding"])
    assert panel.model_combo.currentData() == name and panel.model_combo.currentText() == cls.title
    assert panel.model_about.text() == cls.description
    for spec in cls.param_specs():
        assert spec.help and spec.help in panel.model_form.field(spec.name).editor.toolTip()
    assert name in panel.also_checks  # also offered beside another model


def test_delta_presence_without_a_population_is_refused_by_the_plan(demo_window):
    panel, c = demo_window.config_panel, demo_window.controller
    panel.choose("delta-presence", ["global-recoding"])
    with pytest.raises(BadInput, match="needs the population the data was drawn from"):
        c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())


def test_a_risk_model_runs_under_global_recoding(demo_window, qtbot):
    panel, c = demo_window.config_panel, demo_window.controller
    panel.choose("highest-risk", ["global-recoding"], values={"threshold": 0.1}, metrics=["loss"])
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [[m.name for m in p.spec.models] for p in planned] == [["highest-risk"]]
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    result = c.runs.entries[-1].outcome.result
    assert result is not None and result.verdict.holds and result.verdict.model == "highest-risk"
