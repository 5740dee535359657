"""Set-valued data in the desktop: the Item sets view, the methods offered for it, the release
preview of a grouped set-valued release and GCP against k on the charts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.desktop.state.release_preview import CENTRE, CENTRE_SIZE, SIZE, centre_text
from veil.engine import SETS, BinaryMatrix, Kind, SetValued

N_RECORDS, N_ITEMS = 120, 14


def random_sets(seed: int) -> list[list[int]]:
    """Power-law-ish baskets: item j held with probability falling in j, some records empty."""
    rng = np.random.default_rng(seed)
    p = 0.7 / (1 + np.arange(N_ITEMS)) ** 0.7
    return [sorted(int(j) + 1 for j in np.flatnonzero(rng.random(N_ITEMS) < p)) for _ in range(N_RECORDS)]


@pytest.fixture
def baskets(tmp_path):
    sets = random_sets(7)
    path = tmp_path / "baskets.dat"
    path.write_text("".join(" ".join(map(str, s)) + "\n" for s in sets), encoding="utf-8")
    return path, sets


def open_file(window, qtbot, path):
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        window.controller.open_path(path)


def sets_method(registry):
    """The first registered method that declares it anonymises item sets as they are (the no-privacy
    baseline takes them too)."""
    return next(c for c in registry.classes("algorithm") if SETS in c.accepts and c.needs_model)


def sets_model(window) -> str:
    """The privacy model the desktop shows for the open item sets (one a method for them works under)."""
    from veil.desktop.state import model_for

    return model_for(window.registry, window.controller.dataset.data, None)


def test_a_transaction_file_shows_its_item_sets_and_the_methods_for_them(window, qtbot, baskets, registry):
    path, sets = baskets
    open_file(window, qtbot, path)
    panel = window.dataset_panel
    assert panel.tabs.currentIndex() == 2 and panel.tabs.isTabEnabled(2) and not panel.tabs.isTabEnabled(0)
    summary = panel.summary_shown
    items = {i for s in sets for i in s}
    lengths = [len(s) for s in sets]
    assert (summary.n_records, summary.n_items, summary.n_ones) == (len(sets), len(items), sum(lengths))
    assert summary.max_items == max(lengths) and summary.mean_items == pytest.approx(np.mean(lengths))
    assert summary.empty_records == lengths.count(0)
    assert summary.density == pytest.approx(sum(lengths) / (len(sets) * len(items)))
    counts = sorted((sum(i in s for s in sets) for i in items), reverse=True)
    assert list(summary.frequencies) == counts
    assert summary.top[0][1] == counts[0]
    facts = panel.sets_facts.text()
    assert f"{len(sets):,}" in facts and f"{sum(lengths):,}" in facts
    rank_ax, length_ax = panel.sets_figure.axes  # the chart drew the counts on log axes
    assert rank_ax.get_xscale() == "log" and rank_ax.get_yscale() == "log"
    assert list(rank_ax.lines[0].get_ydata()) == [c for c in counts if c > 0]
    assert sum(p.get_height() for p in length_ax.patches) == len(sets)  # empty records at 0 included
    view = panel.view.model()
    assert view.rowCount() == len(sets)
    first = next(i for i, s in enumerate(sets) if s)
    assert view.data(view.index(first, 0)) == ", ".join(map(str, sets[first]))

    # only the methods that fit the records are offered
    data = window.controller.dataset.data
    offered = set(window.config_panel.rows)
    method = sets_method(registry)
    assert method.name in offered
    for cls in registry.classes("algorithm"):  # exactly the methods that take the records and need no labels
        fits = bool({"sets", "binary", "transactions"} & set(cls.accepts)) and not cls.needs_labels
        assert (cls.name in offered) == fits == registry.method_fit(cls, data).fits, cls.name
    # the model shown is one the set-valued method works under
    assert window.controller.config.model in registry.models_for(method)
    assert window.controller.config.model == sets_model(window)


@pytest.fixture
def k_sweep(window, qtbot, baskets, registry):
    open_file(window, qtbot, baskets[0])
    method = sets_method(registry)
    c = window.controller
    window.config_panel.choose(sets_model(window), [method.name], sweep={"k": "2, 4, 8"}, metrics=["gcp"])
    with qtbot.waitSignal(c.batch_finished, timeout=120_000):
        c.run()
    done = [e for e in c.batch if e.outcome is not None and e.outcome.result is not None]
    assert len(done) == 3, [e.status_text() for e in c.batch]
    return window, done


def test_the_preview_shows_each_group_with_its_centre(k_sweep, qtbot, baskets):
    window, done = k_sweep
    sets = baskets[1]
    entry = done[0]  # k = 2: many small groups
    window.runs_panel.select_run(entry.id)
    panel = window.release_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0)
    release = entry.outcome.result.release
    preview = panel.model.preview
    rows = preview.rows
    groups = np.asarray(release.groups)
    assert preview.sets and len(rows) == release.n_groups > 1 and rows[SIZE].sum() == len(sets)
    assert np.all(np.diff(rows[SIZE].to_numpy()) >= 0)  # smallest first
    assert rows[SIZE].min() >= 2
    # every row's centre is the intersection of its group's sets (matched by size and centre)
    expected = []
    for g in range(release.n_groups):
        members = [set(sets[i]) for i in np.flatnonzero(groups == g)]
        common = sorted(set.intersection(*members))
        expected.append((len(members), len(common), ", ".join(map(str, common))))
    shown = sorted(zip(rows[SIZE], rows[CENTRE_SIZE], rows[CENTRE]))
    assert shown == sorted(expected)
    # the table shows them as the model says, the lists name the two ends
    centre_column = list(rows.columns).index(CENTRE)
    assert panel.model.data(panel.model.index(0, centre_column)) == rows[CENTRE].iloc[0]
    assert panel.smallest.item(0).text().startswith(f"{rows[SIZE].iloc[0]} record")
    assert panel.largest.item(0).text().startswith(f"{rows[SIZE].max():,} record")
    assert panel.hierarchy_row.isHidden()  # item sets have no hierarchy: no empty, disabled chooser
    assert f"largest {rows[SIZE].max():,}" in panel.summary.text()


def test_gcp_against_k_is_drawn_and_a_release_exports_as_item_sets(k_sweep, qtbot, tmp_path, baskets):
    window, done = k_sweep
    panel = window.chart_panel
    panel.chooser.setCurrentIndex(panel.chooser.findData("metric-lines"))
    panel.form.field("metric").set("gcp")
    qtbot.waitUntil(lambda: not panel._scheduled)
    assert panel.drawn_message == ""
    ax = panel.figure.axes[0]
    gcp = {int(e.planned.setting["k"]): e.outcome.metrics["gcp"] for e in done}
    assert list(ax.lines[0].get_xdata()) == [2, 4, 8]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([gcp[2], gcp[4], gcp[8]])
    panel.chooser.setCurrentIndex(panel.chooser.findData("privacy-utility"))
    panel.form.field("privacy").set("privacy-value")
    panel.form.field("utility").set("gcp")
    qtbot.waitUntil(lambda: not panel._scheduled)
    assert panel.drawn_message == ""
    drawn = sorted(r for _, runs in panel.figure.veil_runs for r in runs)
    assert drawn == sorted(e.id for e in done)  # every run of the sweep is a point
    export_and_read_back(window, done, qtbot, tmp_path, baskets[1])


def export_and_read_back(window, done, qtbot, tmp_path, sets):
    """A set-valued release is offered the formats that write item sets, and exports as one set a line."""
    entry = done[1]
    dialog = window.actions.export_release(entry.id)
    chosen = window.registry.get("exporter", dialog.fmt.currentData())
    assert chosen.writes_sets  # the table formats cannot write item sets: they are not offered
    # the report's checkbox says what it will compute: item sets without a class train no classifier
    assert "trains a classifier" not in dialog.report.text() and "no target column" in dialog.report.text()
    assert not any(
        dialog.fmt.model().item(i).isEnabled()
        for i in range(dialog.fmt.count())
        if not window.registry.get("exporter", dialog.fmt.itemData(i)).writes_sets
    )
    dialog.folder.setText(str(tmp_path / "release"))
    dialog.shuffle.setChecked(False)
    dialog.report.setChecked(False)
    with qtbot.waitSignal(window.controller.exported, timeout=120_000) as blocker:
        dialog.accept()
    exported = blocker.args[0]
    assert exported.verified
    written = (exported.folder / exported.manifest["output"]["path"]).read_text(encoding="utf-8").splitlines()
    written = [line for line in written if not line.startswith("@")]
    assert len(written) == len(sets)
    assert all(set(line.split()) <= set(map(str, s)) for line, s in zip(written, sets))  # in order: subsets
    window.actions.message_box.close()


def test_a_column_of_item_sets_is_shown_and_can_be_anonymised(window, qtbot, tmp_path, registry):
    sets = random_sets(3)
    path = tmp_path / "visits.csv"
    pd.DataFrame({"visit": range(len(sets)), "pages": [" ".join(f"p{i}" for i in s) for s in sets]}).to_csv(
        path, index=False
    )
    open_file(window, qtbot, path)
    c, panel = window.controller, window.dataset_panel
    assert not panel.tabs.isTabEnabled(2)  # no column of item sets yet
    c.dataset.set_kind("pages", Kind.ITEMSET)
    assert panel.tabs.isTabEnabled(2) and panel.sets_column.currentText() == "pages"
    summary = panel.summary_shown
    assert (summary.n_records, summary.n_ones, summary.column) == (len(sets), sum(map(len, sets)), "pages")
    assert summary.n_items == len({i for s in sets for i in s})
    method = sets_method(registry)
    assert method.name not in window.config_panel.rows
    panel.use_sets_button.click()
    data = c.dataset.data
    assert isinstance(data, SetValued) and data.n_rows == len(sets)
    assert [sorted(data.item_names[j] for j in data.row(i)) for i in range(3)] == [
        sorted(f"p{i}" for i in s) for s in sets[:3]
    ]
    assert method.name in window.config_panel.rows
    assert panel.tabs.currentIndex() == 2
    window.config_panel.choose(sets_model(window), [method.name], values={"k": 10}, metrics=["gcp"])
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    outcome = c.batch[-1].outcome
    assert outcome is not None and outcome.holds, c.batch[-1].status_text()
    assert np.bincount(outcome.result.release.groups).min() >= 10
    # a project keeps the table's schema and that its item sets were the data: reopened, they are the
    # data again, with the method chosen ticked and ready to run, without a click
    assert c.save_project(tmp_path / "visits.veil")
    assert json.loads((tmp_path / "visits.veil").read_text())["item_sets"] == "pages"
    with qtbot.waitSignal(c.data_loaded, timeout=20_000):
        c.open_project(tmp_path / "visits.veil")
    assert isinstance(c.dataset.data, SetValued) and c.dataset.data.n_rows == len(sets)
    assert window.statusBar().currentMessage().endswith("items, the item sets of column 'pages'")
    assert c.dataset.origin.schema["pages"].kind is Kind.ITEMSET and c.config.selected == [method.name]
    assert window.config_panel.rows[method.name].check.isChecked()
    assert window.config_panel.run_button.isEnabled()
    # the command line runs the same project on the same item sets
    from veil.cli import main

    assert main(["run", str(tmp_path / "visits.veil"), "--out", str(tmp_path / "cli-out")]) == 0
    assert any((tmp_path / "cli-out").iterdir())


def test_the_views_never_make_the_records_dense(window, qtbot, baskets, monkeypatch):
    """Memory O(items held): opening, viewing and previewing never build a records × items matrix."""

    def refuse(*_, **__):
        raise AssertionError("a dense records × items matrix was built")

    for name in ("to_dense", "to_frame"):
        monkeypatch.setattr(BinaryMatrix, name, refuse)
    monkeypatch.setattr(SetValued, "to_sparse", lambda self: refuse())  # CSR is read as it is
    open_file(window, qtbot, baskets[0])
    panel = window.dataset_panel
    assert panel.summary_shown.n_records == N_RECORDS
    assert panel.view.model().data(panel.view.model().index(0, 0)) is not None


def test_a_long_centre_is_cut(registry):
    names = [f"i{j}" for j in range(500)]
    text = centre_text(names, np.arange(450))
    assert text.startswith("i0, i1") and text.endswith("… (450 items)")


def test_a_model_that_can_judge_item_sets_is_chosen(registry, demo_table):
    """Capabilities decide: models needing a sensitive column cannot judge set-valued records; the
    model shown for them is one a method taking item sets works under; a table keeps its model."""
    from veil.desktop.state import model_for

    model_fits = lambda cls, data: registry.model_fit(cls, data).fits

    matrix = BinaryMatrix.from_transactions([["a", "b"], ["b"], ["a", "c"]])
    method = sets_method(registry)
    for name in registry.names("privacy-model"):
        cls = registry.get("privacy-model", name)
        assert model_fits(cls, matrix) == (not cls.needs_sensitive)
        assert model_fits(cls, demo_table)
        chosen = model_for(registry, matrix, name)
        assert chosen in registry.models_for(method) and model_fits(registry.get("privacy-model", chosen), matrix)
        assert chosen == model_for(registry, matrix, chosen), "the model chosen for item sets is kept"
        assert model_for(registry, demo_table, name) == name
    assert model_for(registry, matrix, None) in registry.models_for(method)
