"""k-map with a population open: the sampling fraction it no longer uses is greyed out in the
configuration panel, and the report's caveat says the people were counted, not estimated."""

from __future__ import annotations

import pandas as pd

from veil.engine import demo_path


def test_the_fraction_is_greyed_out_while_a_population_is_open(demo_window, qtbot, tmp_path):
    window, c = demo_window, demo_window.controller
    path = tmp_path / "population.csv"
    demo = pd.read_csv(demo_path())
    pd.concat([demo, demo], ignore_index=True).to_csv(path, index=False)
    window.config_panel.choose("k-map", ["global-recoding"], values={"k": 4})
    fraction = window.config_panel.model_form.field("sample_fraction")
    assert fraction.editor.isEnabled()
    with qtbot.waitSignal(c.population_opened, timeout=60_000):
        c.open_population(path)
    assert not fraction.editor.isEnabled() and "population" in fraction.editor.toolTip()
    c.close_population()
    assert fraction.editor.isEnabled()


def test_the_k_map_caveat_follows_where_the_people_came_from(registry):
    from veil.engine.release.report import _caveats

    def caveats(manifest):
        section = _caveats(registry, manifest)
        return " ".join(str(block.content) for block in section.blocks)

    counted = caveats({"privacy_model": {"name": "k-map"}, "population": {"path": "people.csv", "rows": 10}})
    estimated = caveats({"privacy_model": {"name": "k-map"}, "population": None})
    assert "counted each group's matching people in the population table" in counted
    assert "sampling fraction" not in counted
    assert "estimates each group's population count from the sampling fraction" in estimated
