"""One planner: the desktop's configuration and the ``veil study`` file describing the
same study plan the same runs with the same settings and give the same result rows, a run whose
release fails its model included. Qt-free: the desktop's states against the engine's study."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.desktop.state import tasks
from veil.desktop.state import ConfigState, RunsState
from veil.engine import Context, Recipe, Study, load_demo, run_study


@pytest.fixture(scope="module")
def demo():
    return load_demo().take(np.arange(300))  # small: sixteen runs on each side


def small_recipe(table) -> Recipe:
    whole = Recipe.default_for(table)
    return Recipe(whole.steps[:5], whole.target)


def desktop_config() -> ConfigState:
    config = ConfigState()
    config.set_model("k-anonymity")
    config.set_params("privacy-model", "k-anonymity", {"k": 3}, {"k": [3, 40]})
    for name in ("greedy-hamdist", "all-features", "mondrian"):
        config.select(name)
    config.set_params("algorithm", "greedy-hamdist", {"on_violation": "skip"}, {"on_violation": ["skip", "stop"]})
    config.set_binary("all-features", True)  # takes the table too: asked to take the features
    config.set_metrics(["min-group-size"])
    config.set_seed(5, 2)
    return config


def study_file(tmp_path, recipe: Recipe) -> Study:
    """The same study as a command-line user writes it."""
    path = tmp_path / "study.json"
    path.write_text(
        json.dumps(
            {
                "data": {"demo": True},
                "model": "k-anonymity",
                "sweep": {"k": [3, 40]},
                "methods": [
                    {"name": "greedy-hamdist", "sweep": {"on_violation": ["skip", "stop"]}},
                    "all-features",
                    "mondrian",
                ],
                "recipe": recipe.to_dict(),
                "repeats": 2,
                "seed": 5,
                "metrics": ["min-group-size"],
            }
        )
    )
    return Study.load(path)


def test_the_desktop_and_the_command_line_plan_and_tabulate_a_study_alike(registry, demo, tmp_path):
    recipe = small_recipe(demo)
    planned = desktop_config().plan(registry, demo, recipe)
    study = study_file(tmp_path, recipe)
    cli = study.plan(registry, demo)
    assert len(planned) == len(cli) == 2 * 2 * 2 + 2 * 2 + 2 * 2
    assert [p.spec.to_dict() for p in planned] == [r.spec.to_dict() for r in cli]  # same runs, same settings
    assert [(p.setting, p.repeat) for p in planned] == [(r.setting, r.repeat) for r in cli]

    runs = RunsState()
    for entry in runs.add(planned):  # as the worker runs them: through the engine's run_planned
        runs.start(entry)
        runs.finish(entry, tasks.run(registry, demo, entry.planned.spec, Context(entry.planned.spec.seed)))
    desktop = runs.results()
    command_line = run_study(registry, study, data=demo)

    failed = command_line[(command_line["holds"] == False) & (command_line["method"] == "all-features")]  # noqa: E712
    assert len(failed), "a run failing its model is part of the comparison"
    assert failed[failed["metric"] == "min-group-size"]["value"].notna().all()  # the baseline keeps its utility
    assert desktop.attrs["sweep"] == command_line.attrs["sweep"] == ["k", "on_violation"]
    desktop = desktop.assign(run=desktop["run"] - 1)  # the desktop numbers its runs from 1
    pd.testing.assert_frame_equal(desktop.drop(columns="seconds"), command_line.drop(columns="seconds"))


def test_a_key_swept_by_the_model_and_a_method_alike_is_refused_in_both(registry, demo, tmp_path):
    from veil.engine import BadInput

    config = desktop_config()
    config.set_params("algorithm", "greedy-hamdist", {}, {"k": [2, 4]})  # greedy-hamdist has no k: refused
    with pytest.raises(BadInput, match="k"):
        config.plan(registry, demo, small_recipe(demo))


def test_the_plan_refuses_a_model_the_data_cannot_meet_naming_why(registry):
    """The desktop's plan refuses, before any run, l above what a sensitive column can give, with the
    same one line as ``veil run`` (the column and the reason), on every column marked sensitive."""
    from veil.engine import BadInput, Role, Table

    frame = pd.DataFrame({"age": [30, 31, 32, 33, 34, 35], "dx": ["flu", "cold", "hiv"] * 2, "pay": [1, 1, 1, 1, 2, 2]})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE, "pay": Role.SENSITIVE})
    config = ConfigState()
    config.set_model("l-diversity")
    config.set_params("privacy-model", "l-diversity", {"l": 2, "variant": "distinct"}, {})
    config.select("mondrian")
    assert len(config.plan(registry, table)) == 1  # two values in each column: l = 2 can hold
    config.set_params("privacy-model", "l-diversity", {"l": 3, "variant": "distinct"}, {})
    with pytest.raises(
        BadInput,
        match="on the sensitive column 'pay': l = 3 is above the number of distinct "
        r"sensitive values \(2\)",
    ):
        config.plan(registry, table)
