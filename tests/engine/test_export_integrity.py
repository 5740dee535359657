"""Export integrity, a killed export included: no header can run as a
formula, a cancelled or failed export leaves the folder as it was, an interrupted commit is named
by ``veil verify`` as an incomplete export (not as tampering) and undone by the next export, and
SIGINT/SIGTERM during ``veil run`` leave no staging folder behind."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import export_plugins
from veil.engine import (
    BadInput,
    CancelToken,
    Context,
    ExportOptions,
    PluginCall,
    ReportOptions,
    RunSpec,
    Table,
    execute,
    export_release,
    make_registry,
    read_manifest,
    verify_manifest,
    write_release,
)
from veil.engine.release import staging
from veil.engine.base.errors import Cancelled
from veil.engine.release.report import regenerate_report

HERE = Path(__file__).resolve().parent
REGISTRY = make_registry(modules=[export_plugins])
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")
HOSTILE = ['=HYPERLINK("http://example.com","x")', "@cmd", "-2+3", "+a", "\tTAB", "\rCR", "'=quoted", "=1+1=a"]
FORMATS = {"csv": "csv", "tsv": "tsv", "xlsx": "xlsx", "parquet": "parquet", "spmf": "txt"}
REPORT = ReportOptions(utility=False, pdf=False)  # no classifier, no PDF: three files, quickly
FULL_REPORT = ReportOptions(utility=False)


def snapshot(folder: Path) -> dict:
    """Every entry of ``folder`` (hidden ones too) with its bytes; None when it does not exist."""
    if not folder.exists():
        return None
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else "dir") for p in sorted(folder.rglob("*"))
    }


def small_result(seed: int = 0, n: int = 24):
    frame = pd.DataFrame(
        {"age": [20 + 10 * (i % 3) for i in range(n)], "sex": ["F", "M"] * (n // 2), "y": [i % 2 for i in range(n)]}
    )
    table = Table.from_frame(frame, roles={"age": "quasi-identifier", "sex": "quasi-identifier", "y": "target"})
    return execute(REGISTRY, table, RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2}), seed))


# -- 1. header cells are escaped like data cells ------------------------------------------------------
def hostile_result(names: list[str]):
    n = 12
    frame = pd.DataFrame(
        {name: (["=cmd", "@x"] * n)[:n] if i % 2 else [i % 3 for i in range(n)] for i, name in enumerate(names)}
    )
    frame["ok"] = [0, 1] * (n // 2)
    table = Table.from_frame(frame, roles={names[0]: "quasi-identifier", names[1]: "quasi-identifier", "ok": "target"})
    return execute(REGISTRY, table, RunSpec(PluginCall("all-features"), PluginCall("k-anonymity", {"k": 2}), 1))


def raw_cells(path: Path, fmt: str) -> list:
    """Every cell of the file as a spreadsheet reads it, header row included."""
    if fmt in ("csv", "tsv"):
        with open(path, newline="", encoding="utf-8") as f:
            return [c for row in csv.reader(f, delimiter="," if fmt == "csv" else "\t") for c in row]
    from openpyxl import load_workbook

    sheet = load_workbook(path).active
    cells = [c for row in sheet.iter_rows() for c in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"], "a cell is a formula"
    return [c.value for c in cells]


@pytest.mark.parametrize("fmt", FORMATS)
def test_hostile_header_names_cannot_run_and_verify_finds_the_quasi_identifiers(tmp_path, fmt):
    cannot = {"spmf": "\t\r", "xlsx": "\r"}.get(fmt, "")  # control characters these formats cannot hold in a name
    names = [n for n in HOSTILE if not any(ch in n for ch in cannot)]
    result = hostile_result(names)
    out = tmp_path / fmt
    manifest = write_release(REGISTRY, result, out, ExportOptions(fmt))
    path = out / f"release.{FORMATS[fmt]}"
    back = REGISTRY.exporter(fmt).read_back(path)
    assert list(back.columns) == list(result.release.frame.columns)  # the names come back exact
    if fmt in ("csv", "tsv", "xlsx"):
        cells = raw_cells(path, fmt)
        assert set(names) <= {c[1:] for c in cells if isinstance(c, str) and c.startswith("'")}
        bad = [c for c in cells if isinstance(c, str) and c.startswith(DANGEROUS)]
        assert not bad, bad
        assert manifest["output"]["written_columns"] == {n: "'" + n for n in names}
    else:
        assert manifest["output"]["written_columns"] == {}
    check = verify_manifest(REGISTRY, out)
    assert check.holds, check.message
    assert read_manifest(out)["roles"]["quasi_identifiers"] == names[:2]


def test_binarised_hostile_names_are_escaped_too(tmp_path):
    """A categorical column named like a formula becomes features such as ``=HYPERLINK(…)=a``."""
    name = '=HYPERLINK("http://example.com","x")'
    frame = pd.DataFrame({name: ["a", "b", "a", "b"] * 3, "y": [0, 1] * 6})
    table = Table.from_frame(frame, roles={"y": "target"})
    result = execute(REGISTRY, table, RunSpec(PluginCall("all-features"), seed=2))
    assert any(c.startswith("=") for c in result.release.frame.columns)
    write_release(REGISTRY, result, tmp_path, ExportOptions("xlsx"))
    cells = raw_cells(tmp_path / "release.xlsx", "xlsx")
    assert not [c for c in cells if isinstance(c, str) and c.startswith(DANGEROUS)]


@pytest.mark.parametrize("fmt, name", [("spmf", "a\nb"), ("spmf", "\tTAB"), ("xlsx", "\rCR")])
def test_a_name_the_format_cannot_hold_is_refused_and_nothing_written(tmp_path, fmt, name):
    result = hostile_result([name, "c"])
    with pytest.raises(BadInput, match="column name"):
        write_release(REGISTRY, result, tmp_path / "out", ExportOptions(fmt))
    assert not (tmp_path / "out").exists()


# -- 2. a cancelled export writes nothing ----------------------------------------------------------------
class CountingToken(CancelToken):
    """Reports "cancelled" from the ``at``-th time it is asked on (every Context.check asks once)."""

    def __init__(self, at: float):
        super().__init__()
        self.at, self.asked = at, 0

    @property
    def cancelled(self) -> bool:
        self.asked += 1
        return self.asked >= self.at


def test_a_cancel_at_any_step_of_an_export_leaves_the_folder_as_it_was(tmp_path):
    out = tmp_path / "out"
    export_release(REGISTRY, small_result(0), out, report=REPORT)  # an earlier export, to be kept intact
    earlier = snapshot(out)
    counting = CountingToken(float("inf"))
    export_release(REGISTRY, small_result(1), tmp_path / "count", report=REPORT, ctx=Context(1, token=counting))
    steps = counting.asked
    assert steps >= 15, "the export checks for a cancel at every step"  # release, risk, report, commit
    for at in range(1, steps + 1):
        with pytest.raises(Cancelled):
            export_release(REGISTRY, small_result(1), out, report=REPORT, ctx=Context(1, token=CountingToken(at)))
        assert snapshot(out) == earlier, f"cancelled at check {at} of {steps}"
        fresh = tmp_path / f"fresh-{at}"
        with pytest.raises(Cancelled):
            write_release(REGISTRY, small_result(1), fresh, ctx=Context(1, token=CountingToken(min(at, 8))))
        assert not fresh.exists()
    assert verify_manifest(REGISTRY, out).holds


def test_a_cancel_that_comes_while_the_files_move_into_place_is_too_late_to_undo_them(tmp_path, monkeypatch):
    """The desktop's export task: once the files are in place the export is done, and is reported
    done (verified), not "cancelled" beside a folder that holds it."""
    from veil.desktop.state import tasks

    token = CancelToken()
    real = staging._replace

    def replace(src, dst):
        token.cancel()  # the user clicks Cancel just as the commit starts
        real(src, dst)

    monkeypatch.setattr(staging, "_replace", replace)
    done = tasks.export(REGISTRY, small_result(), tmp_path, ExportOptions(), Context(0, token=token), report=False)
    assert token.cancelled and done.committed and done.verified, done.verification
    assert verify_manifest(REGISTRY, tmp_path).holds


# -- 3. an interrupted commit ---------------------------------------------------------------------------
def _fail_at(monkeypatch, i: int, exc: BaseException):
    calls = []
    real = staging._replace

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == i:
            raise exc
        real(src, dst)

    monkeypatch.setattr(staging, "_replace", replace)
    return calls


@pytest.fixture
def earlier_export(tmp_path):
    out = tmp_path / "out"
    export_release(REGISTRY, small_result(0), out, report=REPORT)
    return out, snapshot(out)


@pytest.mark.parametrize("i", [1, 2, 3])  # release.csv, report.html, manifest.json
def test_a_failing_rename_rolls_the_folder_back(earlier_export, monkeypatch, i):
    out, earlier = earlier_export
    _fail_at(monkeypatch, i, OSError(28, "No space left on device"))
    with pytest.raises(OSError, match="No space"):
        export_release(REGISTRY, small_result(1), out, report=REPORT)
    assert snapshot(out) == earlier  # byte for byte, and no staging folder
    assert verify_manifest(REGISTRY, out).holds


class Killed(BaseException):
    """Stands for SIGKILL at a rename: nothing after it runs, and the kernel drops the lock."""


def _simulate_kill(monkeypatch, i: int):
    _fail_at(monkeypatch, i, Killed())
    monkeypatch.setattr(staging.Staging, "_rollback", lambda self, journal: None)
    monkeypatch.setattr(staging.Staging, "discard", lambda self: self._release())


@pytest.mark.parametrize("i", [1, 2, 3])
def test_a_kill_at_each_rename_is_named_an_incomplete_export_and_the_next_export_restores(
    earlier_export, monkeypatch, i
):
    out, earlier = earlier_export
    _simulate_kill(monkeypatch, i)
    with pytest.raises(Killed):
        export_release(REGISTRY, small_result(1), out, report=REPORT)
    monkeypatch.undo()
    check = verify_manifest(REGISTRY, out)
    left = [p.name for p in out.iterdir() if p.name.startswith(staging.PREFIX)]
    assert len(left) == 1
    if i == 1:  # killed before any file moved: the earlier export is whole, the leftover is named
        assert check.holds and left[0] in check.message and "killed export" in check.message
    else:
        assert not check.holds
        assert check.message.startswith("incomplete export:"), check.message
        assert {
            2: "release.csv belongs to the interrupted export, manifest.json and report.html to an earlier one",
            3: "release.csv and report.html belong to the interrupted export, manifest.json to an earlier one",
        }[i] in check.message
        assert "changed after export" not in check.message
    assert staging.remove_stale(out) == [out / left[0]]
    assert snapshot(out) == earlier  # the earlier export, whole again
    assert verify_manifest(REGISTRY, out).holds


def test_the_next_export_cleans_up_a_killed_one_before_writing(earlier_export, monkeypatch):
    out, _ = earlier_export
    _simulate_kill(monkeypatch, 3)
    with pytest.raises(Killed):
        export_release(REGISTRY, small_result(1), out, report=REPORT)
    monkeypatch.undo()
    done = export_release(REGISTRY, small_result(2), out, report=REPORT)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "release.csv", "report.html"]
    assert verify_manifest(REGISTRY, out).holds and done.manifest["seed"] == 2


def test_a_live_export_is_left_alone(tmp_path):
    with staging.Staging(tmp_path) as live:
        live.file("release.csv").write_text("x\n")
        assert staging.remove_stale(tmp_path) == []
        assert [item.live for item in staging.leftovers(tmp_path)] == [True]
    assert list(tmp_path.iterdir()) == []


def test_older_veils_part_files_are_named_and_removed(earlier_export):
    out, earlier = earlier_export
    part = out / ".release.csv.k2j3h4.part"
    part.write_text("age,sex\n")
    check = verify_manifest(REGISTRY, out)
    assert check.holds and part.name in check.message
    assert staging.remove_stale(out) == [part] and snapshot(out) == earlier


# -- the members of an export belong together -------------------------------------------------------------
def test_every_member_is_listed_and_a_report_of_another_export_is_named_not_blamed(tmp_path):
    from veil.engine.release.manifest import manifest_digest, read_binding

    out, other = tmp_path / "out", tmp_path / "other"
    export_release(REGISTRY, small_result(0), out, report=FULL_REPORT)
    m = read_manifest(out)
    assert set(m["export"]["files"]) == {"release.csv", "report.html", "report.pdf"}
    for name in ("report.html", "report.pdf"):
        assert read_binding(out / name)["manifest-sha256"] == manifest_digest(m)
    assert verify_manifest(REGISTRY, out).holds
    time.sleep(1.1)  # export times are recorded to the second
    export_release(REGISTRY, small_result(1), other, report=ReportOptions(utility=False, html=False))
    (out / "report.pdf").write_bytes((other / "report.pdf").read_bytes())
    check = verify_manifest(REGISTRY, out)
    assert not check.holds and check.message == "incomplete export: report.pdf belongs to a later export"


def test_a_report_of_an_earlier_export_is_named_as_such(earlier_export, tmp_path):
    out, earlier = earlier_export
    old_html = earlier["report.html"]
    time.sleep(1.1)  # the export times are recorded to the second
    write_release(REGISTRY, small_result(1), out)  # no report: the earlier report goes with its export
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "release.csv"]
    assert verify_manifest(REGISTRY, out).holds
    (out / "report.html").write_bytes(old_html)
    check = verify_manifest(REGISTRY, out)
    assert not check.holds and check.message == "incomplete export: report.html belongs to an earlier export"


def test_a_changed_report_or_release_is_a_change_and_a_regenerated_report_is_fine(earlier_export):
    out, earlier = earlier_export
    html = out / "report.html"
    html.write_text(html.read_text(encoding="utf-8").replace("Release report", "Edited report"), encoding="utf-8")
    check = verify_manifest(REGISTRY, out)
    assert not check.holds and check.message.startswith("report.html was changed after export")
    regenerate_report(REGISTRY, out, utility=False)
    assert verify_manifest(REGISTRY, out).holds
    (out / "release.csv").write_bytes(earlier["release.csv"] + b"20,F,1\r\n")
    check = verify_manifest(REGISTRY, out)
    assert not check.holds and check.message.startswith("release.csv was changed after export")
    (out / "report.html").unlink()
    assert "incomplete export: report.html is missing" in verify_manifest(REGISTRY, out).message


# -- SIGINT and SIGTERM during `veil run` ------------------------------------------------------------------
CHILD = """
import sys
sys.path.insert(0, {here!r})
import export_plugins
from veil.cli import program as cli
from veil.engine import make_registry
cli.make_registry = lambda plugins=(): make_registry(modules=[export_plugins])
sys.exit(cli.main(["run", "--data", {data!r}, "--method", "all-features", "--metrics", "sfc", "--format", "slow-csv",
                   "--no-report", "--out", {out!r}]))
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_veil_run_cleans_up_at_once(tmp_path, signum):
    out = tmp_path / "out"
    out.mkdir()
    (out / "release.csv").write_bytes(b"an earlier release\n")
    earlier = snapshot(out)
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": [i % 7 for i in range(500)], "b": [i % 2 for i in range(500)]}).to_csv(data, index=False)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(here=str(HERE), out=str(out), data=str(data))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "VEIL_TEST_SLOW_PAUSE": "0.3"},
    )  # 10 chunks: 3 s of writing
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            staged = list(out.glob(".veil-staging-*/new/release.csv"))
            if staged and staged[0].exists() and staged[0].stat().st_size > 0:
                break
            assert child.poll() is None, child.communicate()
            time.sleep(0.02)
        else:
            pytest.fail("the export never started writing")
        os.kill(child.pid, signum)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 128 + signum, err
    assert err.decode().strip().splitlines() == [
        "veil: terminated" if signum == signal.SIGTERM else "veil: interrupted"
    ]
    assert snapshot(out) == earlier  # no staging folder, no part file, the earlier file untouched


def test_only_files_that_are_provably_the_earlier_exports_are_removed(tmp_path):
    """A user's own report.html, or a file a (hostile) earlier manifest lists with another hash, stays."""
    import json

    (tmp_path / "report.html").write_text("<p>my own notes</p>", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("keep me", encoding="utf-8")
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "output": {"path": "notes.txt", "sha256": "0" * 64},
                "privacy_model": {},
                "roles": {},
                "export": {"files": {"notes.txt": "0" * 64}},
            }
        ),
        encoding="utf-8",
    )
    write_release(REGISTRY, small_result(), tmp_path)
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == "<p>my own notes</p>"
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "keep me"
    check = verify_manifest(REGISTRY, tmp_path)  # the stray report is named, not trusted
    assert not check.holds and check.message == "incomplete export: report.html belongs to an earlier export"
