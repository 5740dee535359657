"""A quasi-identifier aggregated inside the groups of any grouping method (RunSpec.aggregates): the
written release against a brute-force aggregation by hand over groups recomputed from the file,
the release verifying, refusals in one line, and the round trip through a project file."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from veil.cli.program import main as cli_main
from veil.engine import (
    AGGREGATES,
    BadInput,
    DataSource,
    Hierarchy,
    PluginCall,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
)
from veil.engine.release.export import export_release
from veil.engine.release.manifest import ExportOptions
from veil.engine.release.verify import verify_manifest
from veil.engine.run.project import Project
from veil.engine.run.runs import unused_hierarchies
from veil.engine.run.study import Study, settings_of

REGISTRY = make_registry()
K5 = PluginCall.parse("k-anonymity:k=4")


def _table(seed: int, n: int = 48, blanks: bool = False) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "height": rng.integers(150, 200, n).astype(float),
            "zip": rng.choice(["1101", "1102", "1201", "1202"], n),
            "sex": rng.choice(["f", "m"], n),
            "job": rng.choice(["nurse", "clerk", "cook"], n),
            "pay": rng.normal(40, 8, n).round(1),
        }
    )
    if blanks:
        frame.loc[rng.choice(n, 4, replace=False), "age"] = np.nan
    roles = {c: Role.QUASI_IDENTIFIER for c in ("age", "height", "zip", "sex", "job")} | {"pay": Role.INSENSITIVE}
    return Table.from_frame(frame, roles=roles)


def _written(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(float(value))


def _by_hand(values: list, how: str):
    """One group's aggregate from the published definitions (ARX's functions), of its known values."""
    known = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    if not known:
        return None
    if how == "mean":
        return sum(known) / len(known)
    if how == "geometric-mean":
        return math.exp(sum(math.log(v) for v in known) / len(known))
    if how == "median":
        return statistics.median(known)
    if how == "mode":
        counts = Counter(known)
        return min(v for v, c in counts.items() if c == max(counts.values()))
    if how == "interval":
        low, high = min(known), max(known)
        return _written(low) if low == high else f"[{_written(low)}, {_written(high)}]"
    return "{" + ", ".join(_written(v) for v in sorted(set(known))) + "}"


def _check_against_hand(original, written, column: str, how: str, own_value: bool, others=("zip", "sex", "job")):
    """``column`` in the written release against its aggregate by hand inside the groups recomputed
    from the file: the records alike on ``others`` (the quasi-identifiers the method grouped on)."""
    others = list(others)
    keys = written[others].astype(str).agg("|".join, axis=1)
    suppressed = (written[others].astype(str) == "*").all(axis=1)
    checked = 0
    for key in keys[~suppressed].unique():
        rows = np.flatnonzero((keys == key).to_numpy())
        expected = _by_hand(original[column].iloc[rows].tolist(), how)
        for i in rows:
            got = written[column].iloc[i]
            if pd.isna(original[column].iloc[i]) and not own_value:
                assert pd.isna(got) or got == "", (key, i, got)  # a blank matching any value stays blank
            elif how in ("interval", "set"):
                assert str(got) == expected, (key, got, expected)
            else:
                assert float(got) == pytest.approx(float(expected), rel=1e-9), (key, got, expected)
            checked += 1
    assert (written.loc[suppressed, column].astype(str) == "*").all()
    assert checked + int(suppressed.sum()) == len(written)


@pytest.mark.parametrize("pair", [AGGREGATES[0:2], AGGREGATES[2:4], AGGREGATES[4:6]])
@pytest.mark.parametrize("method", ["global-recoding", "mondrian", "local-recoding"])
def test_aggregate_agrees_with_hand_and_verifies(tmp_path, method, pair):
    table = _table(len(pair[0]) + len(method))
    aggregates = dict(zip(("age", "height"), pair))
    # global recoding at its finest node suppresses about half the records (their aggregates are *)
    params = {"levels": "zip:0;sex:0;job:0", "suppression": 1.0} if method == "global-recoding" else {}
    result = execute(REGISTRY, table, RunSpec(PluginCall(method, params), K5, metrics=(), aggregates=aggregates))
    if method == "global-recoding":
        assert (result.release.frame["age"].astype(str) == "*").sum() > 10
    out = tmp_path / "out"
    export_release(REGISTRY, result, out, ExportOptions(shuffle=False), report=None)
    written = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"age", "height"} <= set(manifest["roles"]["quasi_identifiers"])
    assert [(e["column"], e["function"]) for e in manifest["details"]["aggregated"]] == list(aggregates.items())
    for column, how in aggregates.items():
        _check_against_hand(table.frame, written, column, how, own_value=False)
    checked = verify_manifest(REGISTRY, out / "manifest.json")
    assert checked.holds, checked.message


@pytest.mark.parametrize("rule", ["any-value", "own-value"])
def test_blanks_follow_the_runs_rule(rule):
    table = _table(7, blanks=True)
    spec = RunSpec(PluginCall("mondrian", {"blanks": rule}), K5, metrics=(), aggregates={"age": "mean"})
    result = execute(REGISTRY, table, spec)
    written = result.release.frame.astype(object).where(result.release.frame.notna(), np.nan)
    others = ("height", "zip", "sex", "job")
    _check_against_hand(table.frame, written, "age", "mean", own_value=rule == "own-value", others=others)


def test_numbers_stay_numbers_with_their_loss():
    table = _table(3)
    result = execute(REGISTRY, table, RunSpec(PluginCall("mondrian", {}), K5, metrics=(), aggregates={"age": "median"}))
    assert pd.api.types.is_float_dtype(result.release.frame["age"])
    x = table.frame["age"].to_numpy()
    y = result.release.frame["age"].to_numpy()
    said = result.release.details["aggregated"][0]
    assert said["sse_sst"] == pytest.approx(((x - y) ** 2).sum() / ((x - x.mean()) ** 2).sum())
    assert said["il1s_loss"] == pytest.approx(np.abs(x - y).mean() / (math.sqrt(2) * x.std(ddof=1)))


@pytest.mark.parametrize(
    ("method", "aggregates", "words"),
    [
        ("local-suppression", {"age": "mean"}, "releases no groups to aggregate a column in"),
        ("mondrian", {"pay": "mean"}, "only a quasi-identifier is aggregated"),
        ("mondrian", {"zip": "mean"}, "is not numeric; use mode, interval or set"),
        ("mondrian", {"nope": "mode"}, "the table has no such column"),
        ("mondrian", dict.fromkeys(("age", "height", "zip", "sex", "job"), "mode"), "leave at least one"),
        ("mondrian", {"age": "average"}, "an aggregate is one of"),
    ],
)
def test_refusals(method, aggregates, words):
    with pytest.raises(BadInput) as caught:
        execute(REGISTRY, _table(1), RunSpec(PluginCall(method, {}), K5, metrics=(), aggregates=aggregates))
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_cli_refuses_in_one_line(tmp_path, capsys):
    _table(2).frame.to_csv(tmp_path / "t.csv", index=False)
    code = cli_main(
        ["run", "--data", str(tmp_path / "t.csv"), "--quasi", "age,zip", "--method", "local-suppression"]
        + ["--model", "k-anonymity:k=3", "--aggregate", "age=mean", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "releases no groups" in err
    assert not (tmp_path / "out").exists()


def test_project_round_trip_and_run(tmp_path):
    table = _table(5)
    table.frame.to_csv(tmp_path / "t.csv", index=False)
    spec = RunSpec(PluginCall("mondrian", {}), K5, aggregates={"age": "geometric-mean", "job": "set"})
    assert RunSpec.from_dict(json.loads(json.dumps(spec.to_dict()))).aggregates == spec.aggregates
    path = tmp_path / "p.veil.json"
    source = DataSource.from_dict({"path": str(tmp_path / "t.csv")}, tmp_path)
    Project(source, schema=table.schema, runs=(spec,)).save(path)
    assert Project.load(path).runs[0].aggregates == {"age": "geometric-mean", "job": "set"}
    assert cli_main(["run", str(path), "--no-report", "--out", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [(e["column"], e["function"]) for e in manifest["details"]["aggregated"]] == [
        ("age", "geometric-mean"),
        ("job", "set"),
    ]
    assert verify_manifest(REGISTRY, tmp_path / "out" / "manifest.json").holds


def test_a_hierarchy_of_an_aggregated_column_is_said_unused():
    table = _table(4)
    table = table.with_hierarchy(
        "job", Hierarchy.from_levels({"nurse": ["care", "*"], "clerk": ["office", "*"], "cook": ["care", "*"]})
    )
    notes = unused_hierarchies(REGISTRY, table, PluginCall("mondrian"), (K5,), {"job": "mode"})
    assert notes == (
        "the hierarchy given for 'job' is not used: the column is aggregated inside the groups, not generalised",
    )
    assert unused_hierarchies(REGISTRY, table, PluginCall("mondrian"), (K5,)) == ()


def test_a_study_entry_carries_it_and_refuses_a_method_without_groups():
    study = Study.from_dict(
        {
            "model": "k-anonymity:k=4",
            "methods": [{"name": "mondrian", "aggregate": {"age": "median"}}, "mondrian"],
        }
    )
    runs = study.runs(REGISTRY)
    assert [r.aggregates for r in runs] == [{"age": "median"}, {}]
    assert settings_of(runs[0]) != settings_of(runs[1])  # never averaged as repeats of each other
    refused = Study.from_dict(
        {"model": "k-anonymity:k=4", "methods": [{"name": "local-suppression", "aggregate": {"age": "mean"}}]}
    )
    with pytest.raises(BadInput, match="releases no groups to aggregate"):
        refused.plan(REGISTRY)
