"""An export computes each costly figure once.

The speed itself is measured in benchmarks/bench_scale.py and bench_everyday.py; here only what
cannot fail by load: how many times the work is done, and that the shared results are right.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    Context,
    ExportOptions,
    PluginCall,
    Release,
    RunSpec,
    Table,
    execute,
    export_release,
    make_registry,
)
from veil.engine.release.assessment import ReportOptions

REGISTRY = make_registry()

rng = np.random.default_rng(3)
N = 300
PEOPLE = pd.DataFrame(
    {
        "id": np.arange(N),
        "age": rng.choice(["20-39", "40-59", "60+"], N),
        "sex": rng.choice(["F", "M"], N),
        "zip": rng.choice(["1000", "2000"], N),
        "smoker": rng.integers(0, 2, N),
        "outcome": rng.integers(0, 2, N),
    }
)


def table() -> Table:
    return Table.from_frame(
        PEOPLE,
        roles={
            "id": "identifier",
            "age": "quasi-identifier",
            "sex": "quasi-identifier",
            "zip": "quasi-identifier",
            "outcome": "target",
        },
    )


@pytest.fixture
def grouping_calls(monkeypatch):
    """Every grouping of a frame by its columns (pandas' groupby, the way every grouping of records
    by their values is made), as the tuple of columns grouped by."""
    calls = []
    real = pd.DataFrame.groupby

    def counted(self, by=None, *args, **kwargs):
        if isinstance(by, list):
            calls.append(tuple(by))
        return real(self, by, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "groupby", counted)
    return calls


def test_an_export_groups_each_release_once(tmp_path, grouping_calls):
    """The file read back, the input ("before") and the report's "after" (the file read back under
    the manifest's roles) are grouped by their quasi-identifiers once each, however many figures
    (model check, risk, class sizes) use them; the release in memory keeps the grouping its run's
    model check made."""
    result = execute(
        REGISTRY,
        table(),
        RunSpec(PluginCall.parse("all-features"), PluginCall.parse("k-anonymity:k=2"), 0, ("min-group-size",)),
        Context(0),
    )
    grouping_calls.clear()
    export_release(REGISTRY, result, tmp_path / "out", ExportOptions("csv"), report=ReportOptions(utility=False))
    assert len(grouping_calls) == 3, grouping_calls
    assert all(set(c) == {"age", "sex", "zip"} for c in grouping_calls)


def test_group_ids_are_computed_once_per_release_and_not_carried_to_a_changed_one(grouping_calls):
    release = Release("generalised-table", PEOPLE[["age", "sex", "smoker"]].copy(), ("age", "sex"))
    first = release.group_ids()
    assert release.group_ids() is first and len(grouping_calls) == 1
    assert not first.flags.writeable  # shared, so nobody may change it
    sizes = release.class_sizes()
    assert len(grouping_calls) == 1
    # brute force: each record's class is the records equal to it on both quasi-identifiers
    key = list(zip(PEOPLE["age"], PEOPLE["sex"]))
    assert sizes.tolist() == [key.count(k) for k in key]
    other = dataclasses.replace(release, frame=PEOPLE[["age", "sex", "smoker"]].iloc[::-1].reset_index(drop=True))
    assert other.class_sizes().tolist() == sizes[::-1].tolist()
    assert len(grouping_calls) == 2  # a new release computes its own
    assert release == dataclasses.replace(release)  # the cache is no field: equality ignores it


def test_a_release_with_its_own_groups_is_never_regrouped(grouping_calls):
    own = np.repeat(np.arange(N // 5) * 2, 5)  # groups of five, ids not dense
    release = Release("generalised-table", PEOPLE[["age", "sex"]], ("age", "sex"), groups=own)
    assert release.class_sizes().tolist() == [5] * N
    assert grouping_calls == []


@pytest.mark.parametrize("seed", range(5))
def test_the_shuffle_takes_rows_exactly_as_iloc(seed):
    """The export's shuffle (Arrow text taken through its dictionary) gives the frame iloc gives:
    values, missing cells, dtypes, column names (repeated ones too) and attrs."""
    from veil.engine.release.export import take_rows

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    words = ["a", "b,c", "", "é", "=1"]
    frame = pd.DataFrame(
        {
            "text": pd.Series(np.where(rng.random(n) < 0.2, None, rng.choice(words, n)), dtype="str"),
            "objects": pd.Series(list(rng.choice(words, n)), dtype=object),
            "ints": rng.integers(0, 9, n),
            "nullable": pd.array(np.where(rng.random(n) < 0.3, None, rng.integers(0, 9, n)).tolist(), dtype="Int64"),
            "floats": rng.normal(size=n),
            "category": pd.Categorical(rng.choice(["x", "y"], n)),
            "when": pd.to_datetime(rng.integers(0, 10**9, n), unit="s"),
        }
    )
    frame.insert(2, "text", frame["text"].iloc[::-1].to_numpy(), allow_duplicates=True)
    frame.attrs["note"] = "kept"
    order = rng.permutation(n)
    pd.testing.assert_frame_equal(take_rows(frame, order), frame.iloc[order].reset_index(drop=True))
    assert take_rows(frame, order).attrs == {"note": "kept"}


def test_an_exports_utility_figures_digest_each_release_once(tmp_path, monkeypatch):
    """The report's classifier figures (several metrics, before and after) key their memo by the
    release's content: each release's rows are hashed once, not once per metric."""
    from veil.engine.release import assessment

    hashed = []
    real = assessment.content_digest
    monkeypatch.setattr(assessment, "content_digest", lambda frame: hashed.append(len(frame)) or real(frame))
    result = execute(
        REGISTRY,
        table(),
        RunSpec(PluginCall.parse("all-features"), PluginCall.parse("k-anonymity:k=2"), 0, ("min-group-size",)),
        Context(0),
    )
    export_release(REGISTRY, result, tmp_path / "out", ExportOptions("csv"), report=ReportOptions(utility=True))
    in_report = len(assessment.utility_metrics(REGISTRY))
    assert in_report >= 2 and len(hashed) == 2, hashed  # the input and the release: one digest each
