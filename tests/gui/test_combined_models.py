"""Several privacy models in the configuration panel: every run must satisfy all of them."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_a_second_model_is_added_and_every_run_carries_both(demo_window, qtbot):
    panel, c = demo_window.config_panel, demo_window.controller
    assert not panel.also_checks["k-anonymity"].isVisible() or panel.model_combo.currentData() != "k-anonymity"
    panel.choose("k-anonymity", ["greedy-hamdist"], values={"k": 3}, metrics=["sfc"], also={"k-ac": {"k": 4}})
    assert panel.also_forms["k-ac"].isVisibleTo(panel) and not panel.also_checks["k-anonymity"].isVisibleTo(panel)
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [[(m.name, m.params.get("k")) for m in p.spec.models] for p in planned] == [
        [("k-anonymity", 3), ("k-ac", 4)]
    ]
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    entry = c.runs.entries[-1]
    assert demo_window.runs_panel.results_model.rowCount() >= 1
    assert entry.outcome.result is not None, entry.outcome
    assert [v.model for v in entry.outcome.result.verdicts] == ["k-anonymity", "k-ac"]
    dialog = demo_window.actions.export_release(entry.id)  # it states every model's verdict, not k's alone
    assert dialog.run.currentText().endswith("k-anonymity holds, k-ac holds"), dialog.run.currentText()
    text = dialog.run.currentText()  # shown whole in its tooltip
    assert dialog.run.itemData(dialog.run.currentIndex(), Qt.ToolTipRole) == text
    dialog.reject()
    panel.choose("k-anonymity", ["greedy-hamdist"], metrics=["sfc"], also={})
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [len(p.spec.models) for p in planned] == [1]


def test_a_method_says_which_models_it_works_under_by_what_they_judge(demo_window):
    """The note under a method comes from the kinds of judgement it and the models declare: under a
    model judging the sensitive values of each group, a method that only makes groups of k says which
    models it works under; a method that steers by no model says nothing."""
    from veil.engine import Judgement

    panel, registry = demo_window.config_panel, demo_window.registry
    groups_only = next(
        n for n in registry.names("privacy-model") if set(registry.get("privacy-model", n).judges) == {Judgement.GROUPS}
    )
    makes_groups = next(
        c for c in registry.classes("algorithm") if set(c.satisfies) == {Judgement.GROUP_SIZE} and c.name in panel.rows
    )
    steers_by_none = next(c for c in registry.classes("algorithm") if not c.satisfies and c.name in panel.rows)
    panel.choose(groups_only, [makes_groups.name, steers_by_none.name])
    note = panel.rows[makes_groups.name].note
    assert note.isVisibleTo(panel)
    assert f"works under {' or '.join(registry.models_for(makes_groups))} only" in note.text()
    assert groups_only not in note.text()
    assert "works under" not in panel.rows[steers_by_none.name].note.text()
    panel.choose(registry.models_for(makes_groups)[0], [makes_groups.name])
    assert "works under" not in panel.rows[makes_groups.name].note.text()


def test_k_anonymity_on_combinations_runs_under_the_method_that_meets_it(demo_window, qtbot):
    """The model judging combinations of the quasi-identifiers is offered like any other; a method
    judging them all together says it cannot meet it, local suppression runs under it, and the run's
    verdict is the model's, with fewer cells blanked than k-anonymity on all of them asks."""
    panel, c, registry = demo_window.config_panel, demo_window.controller, demo_window.registry
    name = "k-anonymity-subsets"
    assert panel.model_combo.findData(name) >= 0
    together = next(
        n
        for n in panel.rows
        if registry.get("algorithm", n).works_under(registry.get("privacy-model", "k-anonymity"))
        and not registry.get("algorithm", n).works_under(registry.get("privacy-model", name))
    )
    meets = [n for n in panel.rows if registry.get("algorithm", n).works_under(registry.get("privacy-model", name))]
    assert "local-suppression" in meets
    panel.choose(name, ["local-suppression", together], values={"k": 5, "combinations": 2})
    assert "works under" in panel.rows[together].note.text()
    assert "works under" not in panel.rows["local-suppression"].note.text()
    panel.choose(name, ["local-suppression"], values={"k": 5, "combinations": 2})
    c.acknowledge_sensitive(c.sensitive_to_confirm())
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    entry = c.runs.entries[-1]
    assert entry.outcome is not None and entry.outcome.result is not None, entry.failure
    (verdict,) = entry.outcome.result.verdicts
    assert verdict.model == name and verdict.holds and verdict.value >= 5
    assert verdict.params == {"k": 5, "combinations": 2}
    blanked = entry.outcome.result.release.details["blanked_total"]
    panel.choose("k-anonymity", ["local-suppression"], values={"k": 5})
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    assert blanked < c.runs.entries[-1].outcome.result.release.details["blanked_total"]


def test_a_value_a_form_refuses_is_never_run_as_the_default(demo_window):
    """A value out of range in an added model's form or a method's form (shown in red under its field)
    keeps the runs from being queued, by the Run button or Ctrl+R: they never go ahead on the
    parameter's default instead of what the user typed."""
    panel, c = demo_window.config_panel, demo_window.controller
    refused = []
    c.error.connect(lambda title, text, detail: refused.append(text))
    for also, wrong in (
        ({"delta-disclosure": {"delta": -1}}, "δ-disclosure"),
        ({"t-closeness": {"t": "a"}}, "t-closeness"),
    ):
        panel.choose("k-anonymity", ["mondrian"], values={"k": 3}, metrics=[], also=also)
        name = next(iter(also))
        assert panel.also_forms[name].errors(), "the form shows the value in red"
        assert not panel.run_button.isEnabled()
        assert "fix the parameters of" in panel.plan_error.text().lower()
        assert c.run() == [] and refused and wrong.lower() in refused[-1].lower()
    panel.choose("k-anonymity", ["mondrian"], values={"k": 3}, metrics=[], also={"delta-disclosure": {"delta": 2.5}})
    assert panel.run_button.isEnabled()
    planned = c.config.plan(c.registry, c.dataset.data, c.dataset.recipe())
    assert [[(m.name, m.params.get("k", m.params.get("delta"))) for m in p.spec.models] for p in planned] == [
        [("k-anonymity", 3), ("delta-disclosure", 2.5)]
    ]


def test_a_method_value_the_form_refuses_stops_the_run(demo_window):
    """The same for a method's own parameter typed out of range."""
    panel, c = demo_window.config_panel, demo_window.controller
    method = next(n for n in ("global-recoding", "mondrian") if n in panel.rows)
    panel.choose("k-anonymity", [method], values={"k": 3, "suppression": 4}, metrics=[])
    assert panel.rows[method].form.errors()
    assert not panel.run_button.isEnabled()
    assert c.run() == []


def test_the_export_dialog_fits_the_screen_whatever_a_runs_label(demo_window, qtbot, monkeypatch):
    """A run's label names every model and value; the export dialog elides it in its box (whole in the
    tooltip) rather than grow wider than the screen, its buttons out of reach."""
    from veil.desktop import dialogs

    panel, c = demo_window.config_panel, demo_window.controller
    panel.choose("k-anonymity", ["greedy-hamdist"], values={"k": 3}, metrics=["sfc"])
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    long = "k-anonymity holds, " * 40
    monkeypatch.setattr(dialogs, "short_verdict", lambda outcome: long)
    dialog = demo_window.actions.export_release(c.runs.entries[-1].id)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.run.currentText().endswith(long) and dialog.sizeHint().width() < 1200, dialog.sizeHint()
    dialog.reject()
