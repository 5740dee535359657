"""What ``veil inspect`` prints, from tables and binary matrices built in memory (no plugins)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.engine import BinaryMatrix, Role, Table
from veil.engine.data.inspect import inspect_report, suggested_roles


def _rows(report: str) -> dict[str, list[str]]:
    """The per-column lines of a table report, keyed by column name."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["column", "kind"])
    return {line.split()[0]: line.split() for line in lines[start + 1 :] if not line.startswith("…")}


def _facts(report: str) -> dict[str, str]:
    facts = {}
    for line in report.splitlines():
        if not line.strip():
            break
        key, value = line.split(None, 1)
        facts[key] = value
    return facts


@pytest.fixture
def patients() -> Table:
    frame = pd.DataFrame(
        {
            "name": ["Ann", "Bob", "Cy", "Di", "Ed"],
            "age": [34, 51, np.nan, 62, 45],
            "zip": ["02139", "02139", "10001", None, "10001"],
            "smoker": [1, 0, 0, 1, 0],
            "income": [">50K", "<=50K", "<=50K", ">50K", None],
        }
    )
    return Table.from_frame(frame)


def test_table_report_counts_rows_columns_distinct_and_missing(patients):
    report = inspect_report(patients)
    assert _facts(report) == {"rows": "5", "columns": "5"}
    rows = _rows(report)
    assert list(rows) == ["name", "age", "zip", "smoker", "income"]
    assert rows["age"][-2:] == ["4", "1"]
    assert rows["zip"][-2:] == ["2", "1"]
    assert rows["income"][-2:] == ["2", "1"]
    assert rows["smoker"][-2:] == ["2", "0"]


def test_table_report_shows_kinds_and_suggested_roles(patients):
    rows = _rows(inspect_report(patients))
    assert rows["name"][1:3] == ["categorical", "identifier"]  # every value distinct
    assert rows["age"][1:3] == ["numeric", "quasi-identifier"]
    assert rows["zip"][1:3] == ["categorical", "quasi-identifier"]
    assert rows["smoker"][1:3] == ["binary", "insensitive"]
    assert rows["income"][1:3] == ["categorical", "target"]


def test_a_role_already_set_wins_and_only_one_target_is_suggested():
    frame = pd.DataFrame({"class": [0, 1, 0, 1], "label": [1, 1, 0, 0], "y": [3, 4, 3, 4]})
    table = Table.from_frame(frame, roles={"label": Role.TARGET})
    roles = suggested_roles(table)
    assert roles == {"class": Role.INSENSITIVE, "label": Role.TARGET, "y": Role.INSENSITIVE}
    unset = suggested_roles(Table.from_frame(frame))
    assert [n for n, r in unset.items() if r is Role.TARGET] == ["y"]  # the last one


def test_table_report_is_aligned():
    frame = pd.DataFrame({"a": [1, 2], "a_much_longer_name": ["x", "y"]})
    lines = inspect_report(Table.from_frame(frame)).splitlines()
    grid = lines[lines.index("") + 1 :]
    kind_at = grid[0].index("kind")
    assert all(line[kind_at - 2 : kind_at] == "  " and line[kind_at] != " " for line in grid)
    missing_end = len(grid[0])
    assert all(len(line) == missing_end for line in grid)  # numbers right-aligned under "missing"


def test_max_columns_counts_the_rest():
    frame = pd.DataFrame(np.zeros((3, 6)), columns=[f"f{j}" for j in range(6)])
    report = inspect_report(Table.from_frame(frame), max_columns=2)
    assert list(_rows(report)) == ["f0", "f1"]
    assert report.splitlines()[-1] == "… 4 more columns"


def test_source_and_digest_are_shown_when_known(patients):
    import dataclasses

    table = dataclasses.replace(patients, source="/data/patients.csv", sha256="ab" * 32)
    facts = _facts(inspect_report(table))
    assert facts["source"] == "/data/patients.csv" and facts["sha256"] == "ab" * 32


def test_binary_matrix_report():
    dense = np.array([[1, 0, 1, 0], [0, 0, 1, 0], [1, 1, 1, 0]])
    matrix = BinaryMatrix.from_dense(dense, ["a", "b", "c", "d"])
    facts = _facts(inspect_report(matrix))
    assert facts == {"rows": "3", "features": "4", "ones": "6", "density": "0.500000", "labels": "none"}
    labelled = _facts(inspect_report(matrix.with_labels(np.array(["x", "y", "x"]))))
    assert labelled["labels"] == "present (2 classes)"


def test_binary_matrix_report_from_transactions_shows_the_source():
    matrix = BinaryMatrix.from_transactions([[1, 2], [2, 3], [3]], meta={"source": "items.dat"})
    facts = _facts(inspect_report(matrix))
    assert facts["source"] == "items.dat" and facts["features"] == "3" and facts["ones"] == "5"


def test_other_objects_are_a_programming_error():
    with pytest.raises(TypeError, match="cannot inspect a DataFrame"):
        inspect_report(pd.DataFrame({"a": [1]}))
