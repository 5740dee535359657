"""A survey with a few blank cells in its numeric quasi-identifiers, in the desktop as a new user
meets it: the blanks are kept, the numbers stay numbers, a column set to a kind its values cannot
take is refused with its reason, and global recoding and local suppression under l-diversity release
and export it, no group diverse through a placeholder, its integers written without decimals."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
from PySide6.QtWidgets import QMessageBox

from veil.engine import Kind, Role


def _survey(tmp_path):
    rng = np.random.default_rng(3)
    n = 200
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.integers(10, 40, n).astype(float) * 1000,
            "region": rng.choice(["n", "s", "e", "w"], n),
            "dx": rng.choice(["flu", "hiv", "cold", "asthma"], n),
        }
    )
    for column in ("age", "income", "dx"):
        frame.loc[rng.random(n) < 0.03, column] = np.nan  # about 3 % blank cells
    frame.loc[0, "age"] = np.nan
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _button(box: QMessageBox, text: str):
    return next(b for b in box.buttons() if b.text().startswith(text))


def test_a_survey_with_blank_numbers_is_anonymised_and_exported_as_numbers(window, qtbot, tmp_path):
    path, frame = _survey(tmp_path)
    dialog = window.actions.ask_import(path)
    with qtbot.waitSignal(window.controller.data_loaded, timeout=20_000):
        dialog.accept()
    assert window.missing_box.isVisible() and "'age'" in window.missing_box.text()
    _button(window.missing_box, "Leave").click()  # keep the blanks
    dataset = window.controller.dataset
    assert dataset.table.schema["age"].kind is Kind.NUMERIC and dataset.table.schema["income"].kind is Kind.NUMERIC

    # a kind the values cannot take: the reason under the columns, the kind unchanged
    model, view = window.dataset_panel.columns_model, window.dataset_panel
    row = dataset.table.columns.index("region")
    assert not model.setData(model.index(row, model.KIND), "numeric")
    assert "'region' cannot be numeric" in view.column_problem.text()
    assert dataset.table.schema["region"].kind is not Kind.NUMERIC

    dataset.set_roles(["age", "income", "region"], Role.QUASI_IDENTIFIER)
    dataset.set_roles(["dx"], Role.SENSITIVE)
    window.config_panel.choose(
        "k-anonymity",
        ["global-recoding", "local-suppression"],
        values={"k": 3},
        also={"l-diversity": {"l": 2, "variant": "distinct"}},
    )
    with qtbot.waitSignal(window.controller.batch_finished, timeout=120_000):
        window.controller.run()
        if window.sensitive_box is not None and window.sensitive_box.isVisible():
            window.sensitive_release_button.click()  # agree to release the sensitive column
    entries = window.controller.runs.entries
    assert len(entries) == 2 and all(e.failure is None and e.outcome.holds for e in entries), [
        e.failure for e in entries
    ]
    for entry in entries:
        release = entry.outcome.result.release
        assert release.blanks == "any-value"
        assert "missing" not in set(release.frame["dx"].dropna())  # a blank is never a sensitive value
        assert release.frame["dx"].isna().sum() == frame["dx"].isna().sum()

    suppression = next(e for e in entries if e.planned.spec.method.name == "local-suppression")
    export = window.actions.export_release(suppression.id)
    export.folder.setText(str(tmp_path / "release"))
    export.report.setChecked(False)
    with qtbot.waitSignal(window.controller.exported, timeout=120_000) as blocker:
        export.accept()
    assert blocker.args[0].verified
    window.actions.message_box.close()
    with open(tmp_path / "release" / "release.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for column in ("age", "income"):  # numbers, blanks blank, integers without decimals
        cells = [r[column] for r in rows]
        assert "" in cells and all(v == "" or v.isdigit() for v in cells), column
