"""The release preview: a finished Mondrian run's groups, smallest first, sizes coloured."""

from __future__ import annotations

import numpy as np

from PySide6.QtCore import Qt

from veil.desktop.release_panel import SMALL
from veil.desktop.state.release_preview import SIZE
from veil.engine import format_value


def test_a_mondrian_run_is_previewed_as_its_groups(demo_window, qtbot):
    c = demo_window.controller
    demo_window.config_panel.choose("l-diversity", ["mondrian"], sweep={"l": "2, 3"}, metrics=["average-class-size"])
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()

    finished = [e for e in c.batch if e.outcome is not None and e.outcome.result is not None]
    assert len(finished) == 2, [e.status_text() for e in c.batch]
    entry = finished[-1]
    demo_window.runs_panel.select_run(entry.id)
    panel = demo_window.release_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0)
    release = entry.outcome.result.release
    rows = panel.model.preview.rows
    assert len(rows) == release.n_groups and rows[SIZE].sum() == release.n_rows
    assert np.all(np.diff(rows[SIZE].to_numpy()) >= 0)  # smallest first
    assert panel.smallest.count() == min(10, release.n_groups)
    assert panel.smallest.item(0).text().startswith(f"{rows[SIZE].iloc[0]} record")
    size_column = list(rows.columns).index(SIZE)
    index = panel.model.index(0, size_column)
    assert panel.model.data(index, Qt.BackgroundRole) == SMALL
    # the first row shows the smallest group's generalised values as an exporter writes them
    smallest = int(np.argmin(np.bincount(release.groups)))
    for j, column in enumerate(rows.columns):
        if column == SIZE:
            continue
        assert (
            panel.model.data(panel.model.index(0, j)) == format_value(release.group_values[column].iloc[smallest])
            or np.bincount(release.groups)[smallest] == rows[SIZE].iloc[1]
        )  # ties in size may swap rows


def test_each_quasi_identifiers_hierarchy_is_at_hand_in_the_preview(demo_window, qtbot):
    c = demo_window.controller
    demo_window.config_panel.choose("k-anonymity", ["mondrian"], values={"k": 5}, metrics=["average-class-size"])
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    entry = [e for e in c.batch if e.outcome is not None and e.outcome.result is not None][-1]
    demo_window.runs_panel.select_run(entry.id)
    panel = demo_window.release_panel
    qtbot.waitUntil(lambda: panel.hierarchy_column.count() > 0)
    shown = [panel.hierarchy_column.itemText(i) for i in range(panel.hierarchy_column.count())]
    assert shown == list(entry.outcome.result.release.quasi_identifiers)
    assert not panel.hierarchy_row.isHidden()
    panel.hierarchy_column.setCurrentIndex(len(shown) - 1)
    panel.hierarchy_button.click()
    dialog = demo_window.dataset_panel.hierarchy_dialog
    assert dialog.isVisible() and dialog.column == shown[-1]
    # it opens on the hierarchy the release was generalised by, whose nodes the preview shows
    assert dialog.kind.currentData() == "in-use" and dialog.hierarchy == c.dataset.table.hierarchy(shown[-1])
    dialog.reject()


def test_a_metric_no_run_could_compute_has_no_results_column(demo_window, qtbot):
    """GCP measures item-set releases: for a generalised table it does not apply, so it is not computed
    and the results table shows no column of dashes for it."""
    c = demo_window.controller
    demo_window.config_panel.choose("k-anonymity", ["mondrian"], values={"k": 5}, metrics=["average-class-size", "gcp"])
    with qtbot.waitSignal(c.batch_finished, timeout=60_000):
        c.run()
    results = demo_window.runs_panel.results_model
    assert "gcp" not in c.runs.metric_names()  # Mondrian's release is not what GCP measures: never computed
    assert "average-class-size" in results.header and "gcp" not in results.header
