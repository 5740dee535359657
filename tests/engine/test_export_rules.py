"""The rules of a safe export (docs/release.md): identifiers never reach any output, a killed export
leaves the target untouched, the input is never the output (by any path), a failing release lists
its failing records and writes nothing, the shuffle seed is recorded, and verification shares no
code with the method."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import export_plugins
from veil.engine import (
    BadInput,
    CancelToken,
    Context,
    ExportOptions,
    ImportOptions,
    PluginCall,
    PrivacyCheckFailed,
    Role,
    RunSpec,
    Table,
    execute,
    make_registry,
    read_data,
    verify_manifest,
    write_release,
)
from veil.engine.base.errors import Cancelled

HERE = Path(__file__).resolve().parent
FORMATS = {"csv": "csv", "tsv": "tsv", "xlsx": "xlsx", "parquet": "parquet", "spmf": "txt"}
REGISTRY = make_registry(modules=[export_plugins])


def files_below(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*") if p.is_file()) if Path(folder).exists() else []


# -- identifiers never reach any output ------------------------------------------------------------
ROLES = st.sampled_from([Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.INSENSITIVE, Role.TARGET])


@st.composite
def tables_with_identifiers(draw):
    """A small table of binary and categorical columns with random roles and 1–2 identifier
    columns whose values are unmistakable tokens (``IDxxxxxx``)."""
    n = draw(st.integers(2, 12))
    n_other = draw(st.integers(1, 4))
    n_ids = draw(st.integers(1, 2))
    frame, roles = {}, {}
    token = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=6, max_size=6)
    for i in range(n_ids):
        values = draw(st.lists(token, min_size=n, max_size=n, unique=True))
        frame[f"ident{i}"] = [f"ID{v}" for v in values]
        roles[f"ident{i}"] = Role.IDENTIFIER
    for j in range(n_other):
        binary = draw(st.booleans())
        frame[f"c{j}"] = draw(
            st.lists(st.integers(0, 1) if binary else st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)
        )
        roles[f"c{j}"] = draw(ROLES)
    targets = [c for c, r in roles.items() if r is Role.TARGET]
    for extra in targets[1:]:
        roles[extra] = Role.INSENSITIVE
    ids = {v for c, r in roles.items() if r is Role.IDENTIFIER for v in frame[c]}
    return Table.from_frame(pd.DataFrame(frame), roles=roles), ids


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=tables_with_identifiers(), with_model=st.booleans())
def test_identifiers_never_appear_in_any_export_format(tmp_path_factory, case, with_model):
    table, id_values = case
    model = PluginCall("k-anonymity", {"k": 1}) if with_model else None
    result = execute(REGISTRY, table, RunSpec(PluginCall("all-features"), model, seed=3))
    id_columns = table.schema.by_role(Role.IDENTIFIER)
    for fmt, ext in FORMATS.items():
        out = tmp_path_factory.mktemp(fmt)
        write_release(REGISTRY, result, out, ExportOptions(fmt))
        back = REGISTRY.exporter(fmt).read_back(out / f"release.{ext}")
        assert not set(id_columns) & set(map(str, back.columns))
        cells = {str(v) for v in back.to_numpy().ravel()} | set(map(str, back.columns))
        assert not any(v in cell for v in id_values for cell in cells), fmt
        for path in files_below(out):  # text formats and the manifest, byte for byte
            raw = path.read_bytes()
            assert not any(v.encode() in raw for v in id_values), path.name


def test_a_method_that_releases_an_identifier_is_refused(tmp_path):
    frame = pd.DataFrame({"pid": ["P1", "P2", "P3", "P4"], "sex": ["F", "F", "M", "M"]})
    table = Table.from_frame(frame, roles={"pid": "identifier", "sex": "quasi-identifier"})
    result = execute(REGISTRY, table, RunSpec(PluginCall("leak-identifier")))
    assert "pid" in result.release.frame.columns  # the bug the export must catch
    with pytest.raises(BadInput, match="identifier column 'pid'"):
        write_release(REGISTRY, result, tmp_path / "out", ExportOptions("csv"))
    assert files_below(tmp_path / "out") == []


def test_the_manifest_names_the_removed_identifiers(tmp_path):
    frame = pd.DataFrame({"pid": ["P1", "P2"], "sex": ["F", "M"]})
    table = Table.from_frame(frame, roles={"pid": "identifier"})
    m = write_release(REGISTRY, execute(REGISTRY, table, RunSpec(PluginCall("all-features"))), tmp_path)
    assert m["removed_identifiers"] == ["pid"] and "pid" not in m["output"]["columns"]


# -- a killed export leaves the target path untouched ----------------------------------------------
CHILD = """
import sys
sys.path.insert(0, {here!r})
import export_plugins
from veil.engine import ExportOptions, PluginCall, RunSpec, execute, load_demo, make_registry, write_release
registry = make_registry(modules=[export_plugins])
result = execute(registry, load_demo(), RunSpec(PluginCall("all-features"), seed=1))
write_release(registry, result, {out!r}, ExportOptions("slow-csv"))
print("finished", flush=True)
"""


def _staged(out: Path) -> list[Path]:
    return list(out.glob(".veil-staging-*/new/release.csv")) if out.exists() else []


def _kill_mid_write(out: Path) -> list[Path]:
    """Start an export of the demo (5,000 rows, 100 chunks of 50 ms) and SIGKILL it once part of
    the release is on disk in its private staging folder; return the staged files left behind."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(here=str(HERE), out=str(out))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "VEIL_TEST_SLOW_PAUSE": "0.05"},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            parts = [p for p in _staged(out) if p.stat().st_size > 2000]
            if parts:
                break
            assert child.poll() is None, child.communicate()
            time.sleep(0.02)
        else:
            pytest.fail("the export never started writing")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, "the export finished before it could be killed"
    return _staged(out)


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_killing_an_export_mid_write_leaves_no_file_at_the_target(tmp_path):
    out = tmp_path / "out"
    parts = _kill_mid_write(out)
    assert not (out / "release.csv").exists()
    assert not (out / "manifest.json").exists()
    assert parts, "the kill came while the temporary file was being written"
    staging = parts[0].parent.parent
    assert staging.stat().st_mode & 0o777 == 0o700  # private: nobody else can read the unfinished file
    assert [p.name for p in out.iterdir()] == [staging.name]  # nothing but the private folder
    # the next export into the folder removes what the killed one left
    table = Table.from_frame(pd.DataFrame({"v": range(4)}))
    write_release(REGISTRY, execute(REGISTRY, table, RunSpec(PluginCall("all-features"))), out)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "release.csv"]


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_killing_an_export_keeps_the_previous_release_intact(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "release.csv").write_bytes(b"previous release\n")
    (out / "manifest.json").write_bytes(b"{}\n")
    _kill_mid_write(out)
    assert (out / "release.csv").read_bytes() == b"previous release\n"
    assert (out / "manifest.json").read_bytes() == b"{}\n"


def test_a_cancelled_export_writes_nothing(tmp_path):
    table = Table.from_frame(pd.DataFrame({"a": [1, 1, 2, 2], "y": [0, 1, 0, 1]}), roles={"y": "target"})
    result = execute(REGISTRY, table, RunSpec(PluginCall("all-features")))
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        write_release(REGISTRY, result, tmp_path / "out", ctx=Context(0, token=token))
    assert files_below(tmp_path / "out") == []


# -- the input is never the output, by any path -----------------------------------------------------
def _result_from_file(path: Path):
    table = read_data(REGISTRY, path)
    return execute(REGISTRY, table, RunSpec(PluginCall("all-features")))


@pytest.fixture
def input_csv(tmp_path) -> Path:
    p = tmp_path / "data" / "input.csv"
    p.parent.mkdir()
    p.write_text("a,b\n0,1\n1,0\n0,1\n1,0\n", encoding="utf-8")
    return p


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("how", ["symlink", "hardlink", "folder-symlink"])
def test_an_output_that_is_the_input_is_refused(tmp_path, input_csv, fmt, how):
    result = _result_from_file(input_csv)
    before = input_csv.read_bytes()
    name = f"release.{FORMATS[fmt]}"
    out = tmp_path / "out"
    if how == "folder-symlink":  # the output folder is the input's folder, reached through a link
        renamed = input_csv.with_name(name)
        input_csv.rename(renamed)
        input_csv = renamed
        out.symlink_to(input_csv.parent, target_is_directory=True)
    else:
        out.mkdir()
        (os.symlink if how == "symlink" else os.link)(input_csv, out / name)
    with pytest.raises(BadInput, match="overwrite the input"):
        write_release(REGISTRY, result, out, ExportOptions(fmt), input_path=str(input_csv))
    assert input_csv.read_bytes() == before
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("name", ["manifest.json", "report.html", "report.pdf"])
def test_no_file_of_the_export_may_be_the_input(tmp_path, name):
    from veil.engine.release.export import export_release

    data = tmp_path / name
    data.write_text("a,b\n0,1\n1,0\n0,1\n1,0\n", encoding="utf-8")
    result = execute(REGISTRY, read_data(REGISTRY, data, ImportOptions(fmt="csv")), RunSpec(PluginCall("all-features")))
    before = data.read_bytes()
    with pytest.raises(BadInput, match="overwrite the input"):
        export_release(REGISTRY, result, tmp_path)
    assert data.read_bytes() == before and not (tmp_path / "release.csv").exists()


# -- a failing release says which records fail and why ----------------------------------------------
def _failing_result():
    """12 records; on (age, sex) the groups have sizes 1, 1, 2, 3, 5: k = 3 fails for 4 records."""
    ages = [30, 40, 50, 50, 60, 60, 60, 70, 70, 70, 70, 70]
    sexes = ["F", "M", "F", "F", "M", "M", "M", "F", "F", "F", "F", "F"]
    table = Table.from_frame(
        pd.DataFrame({"age": ages, "sex": sexes, "x": range(12)}),
        roles={"age": "quasi-identifier", "sex": "quasi-identifier"},
    )
    ran = execute(REGISTRY, table, RunSpec(PluginCall("all-features"), seed=5))
    import dataclasses

    return dataclasses.replace(ran, spec=RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 3}), 5))


def test_a_failing_release_lists_its_failing_records_and_writes_nothing(tmp_path):
    with pytest.raises(PrivacyCheckFailed) as failed:
        write_release(REGISTRY, _failing_result(), tmp_path / "out")
    message = str(failed.value)
    assert "4 of 12 records" in message
    assert "row 1 (age=30, sex=F: a group of 1)" in message
    assert "row 2 (age=40, sex=M: a group of 1)" in message
    assert "row 3 (age=50, sex=F: a group of 2)" in message
    assert "and 1 more" in message and "row 4" not in message  # at most three are listed
    assert "\n" not in message
    assert files_below(tmp_path / "out") == []


def test_a_file_that_reads_back_wrong_is_refused_with_release_row_numbers(tmp_path):
    """The lossy exporter changes the first *written* row; after the shuffle that is some other
    release row, and the message must name that one."""
    table = Table.from_frame(
        pd.DataFrame({"q": ["a", "a", "b", "b", "c", "c"], "v": range(6)}), roles={"q": "quasi-identifier"}
    )
    result = execute(REGISTRY, table, RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2}), 11))
    order = np.random.default_rng(11).permutation(6)
    with pytest.raises(PrivacyCheckFailed, match="written release") as failed:
        write_release(REGISTRY, result, tmp_path / "out", ExportOptions("lossy-csv"))
    assert f"row {order[0] + 1} (q=tampered: a group of 1)" in str(failed.value)
    assert files_below(tmp_path / "out") == []


# -- shuffling: seeded and recorded --------------------------------------------------------------------
def test_the_shuffle_seed_is_recorded_and_reproduces(tmp_path):
    table = Table.from_frame(pd.DataFrame({"v": range(50)}))
    result = execute(REGISTRY, table, RunSpec(PluginCall("all-features"), seed=4))
    first = write_release(REGISTRY, result, tmp_path / "a")
    assert first["shuffled"] is True and first["shuffle_seed"] == 4
    chosen = write_release(REGISTRY, result, tmp_path / "b", ExportOptions(shuffle_seed=99))
    assert chosen["shuffle_seed"] == 99
    again = write_release(REGISTRY, result, tmp_path / "c", ExportOptions(shuffle_seed=99))
    assert (tmp_path / "b" / "release.csv").read_bytes() == (tmp_path / "c" / "release.csv").read_bytes()
    rows = pd.read_csv(tmp_path / "b" / "release.csv")["v"].tolist()
    assert rows == np.random.default_rng(99).permutation(50).tolist()
    assert again["output"]["sha256"] != first["output"]["sha256"]
    kept = write_release(REGISTRY, result, tmp_path / "d", ExportOptions(shuffle=False))
    assert kept["shuffled"] is False and kept["shuffle_seed"] is None


# -- the manifest: DP budget, details, project ---------------------------------------------------------
def test_a_dp_release_records_its_budget_and_json_safe_details(tmp_path):
    table = Table.from_frame(pd.DataFrame({"a": [0, 1] * 5, "y": [0, 1] * 5}), roles={"y": "target"})
    m = write_release(REGISTRY, execute(REGISTRY, table, RunSpec(PluginCall("fake-dp"))), tmp_path)
    assert m["privacy_budget"] == {
        "epsilon_spent": 0.5,
        "assumptions": ["class sizes are public", "one record changes"],
    }
    assert m["details"]["noise"] == [0.25, None] and m["details"]["picks"] == [1, 2]
    assert m["details"]["table"] == [{"a": 1}, {"a": 2}] and m["details"]["inf"] is None
    json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))  # strict JSON: no NaN


def test_a_release_without_a_budget_says_so(tmp_path):
    table = Table.from_frame(pd.DataFrame({"a": [0, 1]}))
    m = write_release(REGISTRY, execute(REGISTRY, table, RunSpec(PluginCall("all-features"))), tmp_path)
    assert m["privacy_budget"] is None and m["project"] is None and m["details"] == {}
    assert {"system", "python", "machine"} <= set(m["platform"]) and m["created"]


# -- verification shares no code path with the method --------------------------------------------------
def test_verification_never_calls_a_method(tmp_path, monkeypatch):
    table = Table.from_frame(pd.DataFrame({"q": ["a", "a", "b", "b"]}), roles={"q": "quasi-identifier"})
    result = execute(REGISTRY, table, RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2})))
    write_release(REGISTRY, result, tmp_path)

    def forbidden(*args, **kwargs):
        raise AssertionError("verification ran a method")

    import veil.engine.run.runs as runs
    from veil.engine.model.registry import Registry

    monkeypatch.setattr(Registry, "algorithm", forbidden)
    monkeypatch.setattr(runs, "execute", forbidden)
    monkeypatch.setattr(runs, "prepare", forbidden)
    assert verify_manifest(REGISTRY, tmp_path).holds
    (tmp_path / "release.csv").write_text("q\na\nb\n", encoding="utf-8")
    assert not verify_manifest(REGISTRY, tmp_path).holds
