"""The release preview tints the cells a method changed one by one (local suppression's blanks,
microaggregation's aggregates) and says what each tint means; a group's cell is tinted exactly where
some record of the group had that cell changed, worked out here from the data and the release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from veil.desktop.release_panel import CHANGED, ReleasePanel
from veil.desktop.state.release_preview import MATCHED
from veil.engine import CELL_AGGREGATED, CELL_BLANKED, PluginCall, RunSpec, Table, execute, make_registry


def _table(n: int = 80) -> Table:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": (rng.integers(10, 60, n) * 1000).astype(float),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    frame.loc[[3, n // 2], "age"] = np.nan  # blanks in the input are not the method's
    return Table.from_frame(frame, roles={c: "quasi-identifier" for c in frame.columns})


@pytest.mark.parametrize(
    "method, params, code, n",  # local suppression on a table small enough for its exact search
    [
        ("local-suppression", {}, CELL_BLANKED, 5),
        ("microaggregation", {"categorical": "strata"}, CELL_AGGREGATED, 80),
    ],
)
def test_changed_cells_are_tinted_with_a_legend(qtbot, method, params, code, n):
    table = _table(n)
    if method == "local-suppression":
        table = Table.from_frame(
            table.frame[["age", "sex"]], roles={"age": "quasi-identifier", "sex": "quasi-identifier"}
        )
    release = execute(
        make_registry(), table, RunSpec(PluginCall(method, params), PluginCall("k-anonymity", {"k": 3}))
    ).release
    panel = ReleasePanel()
    qtbot.addWidget(panel)
    panel.show_release("run 1", release)
    model, rows = panel.model, panel.model.preview.rows
    before, after = table.frame, release.frame
    # the groups as the preview orders them: its rows are the release's groups, smallest first, or
    # where a blank matches any value, the fewest records a member matches first
    sizes = np.bincount(release.groups)
    order = np.argsort(sizes, kind="stable")
    if MATCHED in rows.columns:
        qis = after[list(release.quasi_identifiers)].astype(object).where(after.notna(), None).values.tolist()
        match = [sum(all(x is None or y is None or x == y for x, y in zip(a, b)) for b in qis) for a in qis]
        fewest = np.array([min(m for m, g in zip(match, release.groups) if g == group) for group in range(len(sizes))])
        order = np.lexsort((sizes, fewest))
        assert rows[MATCHED].tolist() == fewest[order].tolist() and min(match) >= 3
        assert "matches at least" in panel.summary.text()
    tinted = 0
    for j, column in enumerate(rows.columns):
        if column not in before.columns:
            continue
        if code == CELL_BLANKED:
            changed = (before[column].notna() & after[column].isna()).to_numpy()
        else:
            changed = (before[column].astype(object) != after[column].astype(object)).to_numpy()
            changed = changed & before[column].notna().to_numpy()
        for row, group in enumerate(order):
            expected = bool(changed[release.groups == group].any())
            shade = model.data(model.index(row, j), Qt.BackgroundRole)
            assert (shade == CHANGED[code][0]) == expected, (column, row)
            assert (model.data(model.index(row, j), Qt.ToolTipRole) is not None) == expected
            tinted += expected
    assert tinted > 0
    assert MATCHED in rows.columns  # both releases hold blanks, which match any value
    assert not panel.legend.isHidden()
    assert CHANGED[code][1].split(" (")[0] in panel.legend.text() and f"{tinted:,} group cell" in panel.legend.text()
    other = CELL_AGGREGATED if code == CELL_BLANKED else CELL_BLANKED
    assert CHANGED[other][1].split(" (")[0] not in panel.legend.text()


def test_a_release_changing_no_single_cell_shows_no_legend(qtbot):
    table = _table()
    frame = table.frame.dropna()
    table = Table.from_frame(frame.reset_index(drop=True), roles={c: "quasi-identifier" for c in frame.columns})
    release = execute(
        make_registry(), table, RunSpec(PluginCall("mondrian", {}), PluginCall("k-anonymity", {"k": 3}))
    ).release
    panel = ReleasePanel()
    qtbot.addWidget(panel)
    panel.show_release("run 1", release)
    assert panel.legend.isHidden()
    assert panel.model.data(panel.model.index(0, 1), Qt.BackgroundRole) is None
