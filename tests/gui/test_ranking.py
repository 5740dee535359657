"""Privacy-aware candidate subsets in the desktop (paper 004): the sensitive attribute and the class
come from the column roles, the E(S) weights are linked sliders, moving them re-ranks and redraws
without any classifier, and the export writes the top of the ranking the sliders show."""

from __future__ import annotations

import itertools
import json
import random

import pandas as pd
import pytest
from PySide6.QtCore import Qt

import veil.plugins.feature_selection._cv as privacy_aware_cv
from veil.desktop.state.ranking import rebalance
from veil.desktop.ranking_panel import show_cell
from veil.engine import BadInput, DataSource, verify_manifest

METHOD = "privacy-aware-candidates"  # tests may name plugins; the desktop may not
WEIGHTS = ("w1", "w2", "w3")

SMALL = [
    "age",
    "sex",
    "smoker",
    "diabetes",
    "hypertension",
    "copd",
    "statin",
    "length_of_stay",
    "diagnosis_group",
    "readmitted_30d",
]
ROLES = {"diagnosis_group": "sensitive", "readmitted_30d": "target"}
METRICS = ["sfc", "pbi", "cv-accuracy"]


# -- the linked weights, without Qt -------------------------------------------------------------


def test_moving_one_weight_rescales_the_other_two_in_proportion():
    assert rebalance((0.333, 0.333, 0.333), 0, 0.5) == (0.5, 0.25, 0.25)
    assert rebalance((0.5, 0.25, 0.25), 1, 0.7) == (0.2, 0.7, 0.1)
    assert rebalance((1.0, 0.0, 0.0), 0, 0.4) == (0.4, 0.3, 0.3)  # both others at 0: they share equally
    assert rebalance((0.2, 0.3, 0.5), 2, 1.0) == (0.0, 0.0, 1.0)


def test_the_weights_always_sum_to_one_in_thousandths():
    rng = random.Random(4)
    weights = (0.333, 0.333, 0.333)
    for _ in range(500):
        index, value = rng.randrange(3), rng.random() * 1.2 - 0.1  # out of range values are clamped
        moved = rebalance(weights, index, value)
        assert round(sum(moved) * 1000) == 1000 and all(0 <= w <= 1 for w in moved)
        assert moved[index] == min(max(round(value * 1000), 0), 1000) / 1000
        a, b = (i for i in range(3) if i != index)
        if weights[a] + weights[b] > 0:  # the other two keep their ratio, to the nearest thousandth
            share = (1 - moved[index]) * weights[a] / (weights[a] + weights[b])
            assert abs(moved[a] - share) <= 0.0005 + 1e-9
        weights = moved


# -- the configuration panel ------------------------------------------------------------------------


def test_the_weights_are_three_linked_sliders_bound_to_w1_w2_w3(demo_window):
    panel, config = demo_window.config_panel, demo_window.controller.config
    panel.choose(None, [METHOD])
    row = panel.rows[METHOD]
    assert row.sliders is not None and row.sliders.isVisible()
    assert not any(row.form.field(w).editor.isVisible() for w in WEIGHTS)  # the plain fields give way
    assert [lab.text() for lab in row.sliders.labels] == ["0.333", "0.333", "0.333"]
    row.sliders.sliders[0].setValue(500)
    assert [lab.text() for lab in row.sliders.labels] == ["0.500", "0.250", "0.250"]
    assert [s.value() for s in row.sliders.sliders] == [500, 250, 250]
    row.sliders.sliders[2].setValue(600)
    assert [lab.text() for lab in row.sliders.labels] == ["0.267", "0.133", "0.600"]
    values = config.choice("algorithm", METHOD).values
    assert (values["w1"], values["w2"], values["w3"]) == (0.267, 0.133, 0.6)
    assert row.form.errors() == {}
    planned = config.plan(demo_window.registry, demo_window.controller.dataset.data)
    assert {k: planned[0].spec.method.params[k] for k in WEIGHTS} == {"w1": 0.267, "w2": 0.133, "w3": 0.6}

    spec = planned[0].spec  # a project's (or a re-run's) weights come back onto the sliders
    params = {**spec.method.params, "w1": 0.2, "w2": 0.6, "w3": 0.2}
    config.load_runs([type(spec)(type(spec.method)(METHOD, params))])
    assert [lab.text() for lab in row.sliders.labels] == ["0.200", "0.600", "0.200"]
    assert [s.value() for s in row.sliders.sliders] == [200, 600, 200]


def test_the_roles_name_the_sensitive_attribute_and_the_class(demo_window):
    window = demo_window
    panel, dataset = window.config_panel, window.controller.dataset
    panel.choose(None, [METHOD])
    row = panel.rows[METHOD]
    assert row.roles.isVisible() and "diagnosis_group" in row.roles.text() and "readmitted_30d" in row.roles.text()
    assert not row.roles_problem.isVisible() and panel.run_button.isEnabled()

    dataset.set_roles(["diagnosis_group"], "insensitive")
    assert row.roles_problem.isVisible() and row.roles_problem.text().startswith(
        "Needs the sensitive attribute: mark one"
    )
    assert not panel.run_button.isEnabled() and "sensitive attribute" in panel.plan_error.text()

    dataset.set_roles(["diagnosis_group", "sex"], "sensitive")
    assert "Needs exactly one sensitive attribute" in row.roles_problem.text() and "sex" in row.roles_problem.text()

    dataset.set_roles(["sex"], "quasi-identifier")
    row.form.field("sensitive_is_class").set(True)
    assert "also marked sensitive" in row.roles_problem.text()
    dataset.set_roles(["diagnosis_group"], "insensitive")
    assert not row.roles_problem.isVisible() and "C = SA" in row.roles.text() and panel.run_button.isEnabled()

    dataset.set_roles(["readmitted_30d"], "insensitive")
    assert row.roles_problem.text().startswith("Needs the class") and not panel.run_button.isEnabled()


# -- a finished run --------------------------------------------------------------------------------


@pytest.fixture
def ranked(window, qtbot, tmp_path, demo_table):
    """A privacy-aware run on a small table (400 records, 8 attributes): well under a second."""
    path = tmp_path / "small.csv"
    demo_table.frame[SMALL].head(400).to_csv(path, index=False)
    c = window.controller
    with qtbot.waitSignal(c.data_loaded, timeout=20_000):
        c.open_source(DataSource(path=str(path), roles=ROLES))
    assert window.tabs.isTabVisible(window.tabs.indexOf(window.ranking_panel)) is False  # nothing to rank yet
    window.config_panel.choose(None, [METHOD], values={"folds": 5}, metrics=METRICS)
    with qtbot.waitSignal(c.batch_finished, timeout=30_000):
        c.run()
    return window


def shown(panel) -> list[str]:
    return [panel.model.row(i).label for i in range(panel.model.rowCount())]


def expected(window, weights) -> list[str]:
    cls = window.registry.get("algorithm", METHOD)
    return [r.label for r in cls.ranker.rerank(window.controller.ranking.run_ranking(), weights).order]


def forbid_classifiers(monkeypatch) -> None:
    def boom(*_a, **_k):
        raise AssertionError("a classifier ran while the weights moved")

    monkeypatch.setattr(privacy_aware_cv.CrossValidation, "__init__", boom)
    monkeypatch.setattr(privacy_aware_cv.CrossValidation, "accuracy", boom)
    monkeypatch.setattr(privacy_aware_cv, "make_classifier", boom)


def slider_moves():
    """Every slider through its range, in steps of 0.05."""
    return itertools.product(range(3), range(0, 1001, 50))


def test_the_ranking_shows_when_the_run_finishes(ranked, qtbot):
    window, panel = ranked, ranked.ranking_panel
    assert window.tabs.currentWidget() is panel and window.tabs.isTabVisible(window.tabs.indexOf(panel))
    ranker = window.registry.get("algorithm", METHOD).ranker
    assert window.tabs.tabText(window.tabs.indexOf(panel)) == ranker.title == "E(S) ranking"  # the plugin's
    run = window.controller.ranking.run_ranking()
    details = window.controller.runs.entries[-1].outcome.result.release.details
    assert shown(panel) == [r.label for r in run.order] == [r["label"] for r in details["ranking"]]
    assert [panel.model.headerData(i, Qt.Horizontal) for i in range(panel.model.columnCount())] == [
        "Place",
        "Subset",
        "Attributes",
        "Perf %",
        "PBI %",
        "E(S)",
        "Attributes kept",
    ]
    first = panel.model.row(0)
    assert first.label == run.chosen.label == details["chosen"] and first.place == 1
    assert panel.run.currentData() == window.controller.runs.entries[-1].id
    assert panel.summary.text().startswith(f"Released at these weights: <b>{run.chosen.label}</b>")
    assert "Sensitive attribute diagnosis_group, class readmitted_30d" in panel.summary.text()
    assert panel.help.text().startswith(ranker.help)
    qtbot.waitUntil(lambda: not panel._scheduled)
    assert len(panel.figures) == 2 and all(f.axes for f in panel.figures)
    assert window.runs_panel.results_model.value(0, "pbi") == pytest.approx(first.value("pbi"))


def test_sliders_rerank_and_redraw_live_without_a_classifier(ranked, qtbot, monkeypatch):
    window, panel = ranked, ranked.ranking_panel
    forbid_classifiers(monkeypatch)
    busy = []
    window.controller.runner.job_started.connect(busy.append)
    tops = set()
    for sliders in (window.config_panel.rows[METHOD].sliders, panel.sliders):  # the two sets stay in step
        for index, value in slider_moves():
            sliders.sliders[index].setValue(value)
            weights = window.controller.ranking.weights()
            assert weights == sliders.weights()
            assert shown(panel) == expected(window, weights)
            tops.add(shown(panel)[0])
    assert len(tops) >= 2, "the weights never changed which subset ranks first"
    assert panel.sliders.weights() == window.config_panel.rows[METHOD].sliders.weights()
    assert busy == [] and window.controller.runner.is_idle()  # no job: everything ran on the GUI thread
    qtbot.waitUntil(lambda: not panel._scheduled)
    w = window.controller.ranking.weights()
    legend = [t.get_text() for t in panel.figures[0].axes[0].get_legend().get_texts()]
    assert legend == [f"w = ({w[0]:g}, {w[1]:g}, {w[2]:g})"]


def test_the_export_writes_the_top_of_the_current_ranking(ranked, qtbot, registry, tmp_path):
    window, ranking = ranked, ranked.controller.ranking
    run = ranking.run_ranking()
    sliders = window.config_panel.rows[METHOD].sliders
    for index, value in slider_moves():
        sliders.sliders[index].setValue(value)
        if expected(window, ranking.weights())[0] != run.chosen.label:
            break
    weights = ranking.weights()
    top = expected(window, weights)[0]
    assert top != run.chosen.label, "no slider setting ranks another subset first"
    candidate = next(c for c in run.candidates if c.label == top)

    run_id = window.runs_panel.selected_run()
    dialog = window.actions.export_release(run_id)
    assert dialog.note.isVisible() and f"Releases subset {top}" in dialog.note.text()
    assert f"the run itself chose {run.chosen.label}" in dialog.note.text()
    out = tmp_path / "release"
    dialog.folder.setText(str(out))
    dialog.report.setChecked(False)
    with qtbot.waitSignal(window.controller.exported, timeout=60_000) as blocker:
        dialog.accept()
    assert blocker.args[0].verified
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["details"]["chosen"] == top
    assert manifest["selected_features"] == list(candidate.subset)
    assert manifest["output"]["columns"] == [*candidate.subset, "readmitted_30d"]  # SA withheld
    assert [manifest["method"]["params"][w] for w in WEIGHTS] == list(weights)
    assert manifest["metrics"]["pbi"] == pytest.approx(candidate.values["pbi"])  # measured on what was released
    assert manifest["metrics"]["sfc"] == len(candidate.subset)
    assert manifest["input"]["read"]["path"] == str((tmp_path / "small.csv").resolve())  # veil report re-reads it
    assert verify_manifest(registry, out / "manifest.json").holds


def test_the_ranking_saves_its_charts_and_data(ranked, qtbot, tmp_path):
    panel = ranked.ranking_panel
    panel.sliders.sliders[1].setValue(600)
    written = panel.save_charts(tmp_path / "ranking.svg")
    assert [p.name for p in written] == ["ranking-privacy-aware-es.svg", "ranking-privacy-aware-regions.svg"]
    assert all(b"<svg" in p.read_bytes()[:400] for p in written)
    data = pd.read_csv(panel.save_data(tmp_path / "ranking.csv"))
    assert list(data.sort_values("place")["label"]) == shown(panel)
    assert {"perf", "pbi", "size", "e", "chosen"} <= set(data.columns)


# -- any method declaring a ranker: the tab reads what it declares, never its keys ------------------------


@pytest.fixture
def toy(qtbot):
    """A window whose registry also holds a method ranking by other weights, columns and headers."""
    from veil.engine import make_registry

    from .helpers import load_demo_into, open_window
    from .ranking_plugins import RankingPlugins

    window = open_window(qtbot, make_registry(modules=[RankingPlugins]))
    load_demo_into(window, qtbot)
    yield window
    window.close()


def test_a_ranking_with_other_columns_weights_and_title_is_shown_and_exported(toy, qtbot, tmp_path):
    from .ranking_plugins import NAME, toy_ranking

    window, panel, state = toy, toy.ranking_panel, toy.controller.ranking
    ranker = window.registry.get("algorithm", NAME).ranker
    window.config_panel.choose(None, [NAME], metrics=["sfc"])
    row = window.config_panel.rows[NAME]
    assert row.sliders is not None and [lab.text() for lab in row.sliders.labels] == ["0.600", "0.300", "0.100"]
    with qtbot.waitSignal(window.controller.batch_finished, timeout=30_000):
        window.controller.run()
    assert window.tabs.currentWidget() is panel
    assert window.tabs.tabText(window.tabs.indexOf(panel)) == "Toy ranking"
    assert [panel.model.headerData(i, Qt.Horizontal) for i in range(panel.model.columnCount())] == [
        "Place",
        "Option",
        "Gain",
        "Cost",
        "Score",
        "Columns kept",
    ]
    run = state.run_ranking()
    assert shown(panel) == [r.label for r in run.order]
    best = panel.model.row(0)
    assert panel.model.data(panel.model.index(0, 2)) == show_cell(best.candidate.values["gain"])
    assert panel.summary.text().startswith(f"Released at these weights: <b>{run.chosen.label}</b>, Gain ")
    assert "Cost" in panel.summary.text() and "A toy ranking for the tests." in panel.summary.text()
    assert panel.help.text().startswith(ranker.help)
    assert [s.objectName() for s in panel.sliders.sliders] == ["slider-a", "slider-b", "slider-c"]  # its own weights
    assert panel.figures == []  # it declares no chart
    with pytest.raises(BadInput, match="no charts"):
        panel.save_charts(tmp_path / "toy.png")

    panel.sliders.sliders[1].setValue(1000)  # all on thrift: the cheapest option wins
    weights = state.weights()
    assert weights == (0.0, 1.0, 0.0)
    assert window.controller.config.choice("algorithm", NAME).values["b"] == 1.0  # kept as the method's parameter
    top = toy_ranking(run.candidates, weights).chosen
    assert shown(panel)[0] == top.label != run.chosen.label
    data = pd.read_csv(panel.save_data(tmp_path / "toy.csv"))
    assert list(data.sort_values("place")["label"]) == shown(panel) and {"gain", "cost", "score"} <= set(data.columns)

    dialog = window.actions.export_release(window.runs_panel.selected_run())
    assert f"Releases subset {top.label}" in dialog.note.text() and "the top of the Toy ranking" in dialog.note.text()
    out = tmp_path / "release"
    dialog.folder.setText(str(out))
    dialog.report.setChecked(False)
    with qtbot.waitSignal(window.controller.exported, timeout=60_000) as blocker:
        dialog.accept()
    assert blocker.args[0].verified
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["selected_features"] == list(top.subset)
    assert [manifest["method"]["params"][w] for w in ("a", "b", "c")] == [0.0, 1.0, 0.0]
