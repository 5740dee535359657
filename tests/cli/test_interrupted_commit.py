"""A signal that reaches ``veil run`` while its export's files are being moved into
place. Either the commit finishes and the run says so with exit 0 ("finished before the interrupt
took effect"), or the folder is left as it was with exit 130 and "interrupted"; never both, never a
staging folder left behind.

Each case sends a real SIGINT (or SIGTERM) to the process from inside it, at one chosen point of the
export (a hook wraps one step of :mod:`veil.engine.release.staging`), so the point is exact and the
test needs no timing; a last case sends it from outside at spread-out moments, repeatedly."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from veil.cli import main
from veil.engine import make_registry, verify_manifest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

FINISHED = {
    signal.SIGINT: "veil: finished before the interrupt took effect",
    signal.SIGTERM: "veil: finished before the termination took effect",
}
STOPPED = {signal.SIGINT: "veil: interrupted", signal.SIGTERM: "veil: terminated"}

# The child: `veil run` with one step of the export wrapped so that it signals its own process once,
# at the n-th call of that step (before or after the step itself).
CHILD = """
import os, signal, sys
from veil.cli import program as cli, run as cli_run
from veil.engine.release import staging

POINT, NTH, SIGNUM = {point!r}, {nth!r}, {signum!r}
calls = []

def signalling(fn, when="before", only=lambda *a, **k: True):
    def wrapped(*args, **kwargs):
        hit = only(*args, **kwargs)
        if hit:
            calls.append(1)
        fire = hit and len(calls) == NTH + 1
        if fire and when == "before":
            os.kill(os.getpid(), SIGNUM)
        out = fn(*args, **kwargs)
        if fire and when == "after":
            os.kill(os.getpid(), SIGNUM)
        return out
    return wrapped

if POINT == "making the staging folder":
    staging._lock = signalling(staging._lock)
elif POINT == "before the commit":
    staging.Staging.commit = signalling(staging.Staging.commit)
elif POINT == "backing up the earlier files":
    staging._backup = signalling(staging._backup)
elif POINT == "renaming":
    staging._replace = signalling(staging._replace)
elif POINT == "after the last rename":
    staging._replace = signalling(staging._replace, "after")
elif POINT == "marking the journal committed":
    staging._write_journal = signalling(staging._write_journal, only=lambda path, j: j["state"] == "committed")
elif POINT == "removing the staging folder":
    staging.Staging.discard = signalling(staging.Staging.discard, only=lambda self: self.committed)
elif POINT == "reporting the finished run":
    cli_run._summary = signalling(cli_run._summary)
elif POINT == "outside":  # the parent sends the signal; each rename takes a little while
    import time
    staging._replace = (lambda replace: lambda *a: (time.sleep(0.15), replace(*a)))(staging._replace)
sys.exit(cli.main(program=True, argv=["run", "--data", {data!r}, "--method", "all-features", "--metrics", "sfc",
                   "--no-report", "--seed", "2", "--out", {out!r}]))
"""

# point -> (how many calls of the step come before the signalled one, what the run must end with)
POINTS = {
    "making the staging folder": (0, "stopped"),
    "before the commit": (0, "stopped"),
    "backing up the earlier files": (0, "finished"),
    "renaming": (0, "finished"),  # the release's rename; the manifest is renamed last
    "after the last rename": (1, "finished"),
    "marking the journal committed": (0, "finished"),
    "removing the staging folder": (0, "finished"),
    "reporting the finished run": (0, "finished"),
}


def snapshot(folder: Path) -> dict:
    """Every entry of ``folder`` (hidden ones too) with its bytes."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else "dir") for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def earlier(tmp_path, capsys):
    """A data file, and an output folder holding an earlier export of it (seed 1): what an interrupted
    export must leave as it was, and a finished one must replace."""
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": [i % 7 for i in range(300)], "b": [i % 2 for i in range(300)]}).to_csv(data, index=False)
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                "--data",
                str(data),
                "--method",
                "all-features",
                "--metrics",
                "sfc",
                "--no-report",
                "--seed",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    return data, out, snapshot(out)


def run_child(data: Path, out: Path, point: str, nth: int, signum: int, send_after: float | None = None):
    code = CHILD.format(point=point, nth=nth, signum=int(signum), data=str(data), out=str(out))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if send_after is not None:  # once the export has begun, a little later: spreads the moment it lands
            while child.poll() is None and not list(out.glob(".veil-staging-*")):
                time.sleep(0.01)
            time.sleep(send_after)  # nothing is asserted on time
            if child.poll() is None:
                os.kill(child.pid, signum)
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, err.decode().strip().splitlines()


def outcome(out: Path, before: dict, code: int, err: list[str], signum: int) -> str:
    """ "finished" or "stopped" (or "ran" when the signal came after the command had ended), after
    checking that the folder agrees with what the run said."""
    assert not list(out.glob(".veil-staging-*")), (code, err)  # never a staging folder left
    if code == 128 + signum:
        assert err == [STOPPED[signum]], err
        assert snapshot(out) == before  # rolled back: the earlier export exactly as it was
        return "stopped"
    assert code == 0, (code, err)
    assert snapshot(out) != before
    assert verify_manifest(make_registry(), out).holds  # the new export, whole
    assert STOPPED[signum] not in err
    return "finished" if err[-1] == FINISHED[signum] else "ran"


@pytest.mark.parametrize("point", POINTS)
def test_a_sigint_at_each_point_of_the_commit(earlier, point):
    data, out, before = earlier
    nth, expected = POINTS[point]
    code, err = run_child(data, out, point, nth, signal.SIGINT)
    assert outcome(out, before, code, err, signal.SIGINT) == expected


@pytest.mark.parametrize("point", ["renaming", "making the staging folder"])
def test_a_sigterm_in_the_commit_says_termination(earlier, point):
    data, out, before = earlier
    nth, expected = POINTS[point]
    code, err = run_child(data, out, point, nth, signal.SIGTERM)
    assert outcome(out, before, code, err, signal.SIGTERM) == expected


def test_sigint_from_outside_at_spread_out_moments(earlier):
    """Repeated trials with the signal sent by another process while the export is under way: each
    ends one of the two consistent ways."""
    data, out, before = earlier
    rng = random.Random(39)

    for _ in range(3):
        for leftover in out.iterdir():  # back to the earlier export after a finished trial
            leftover.unlink()
        for name, content in before.items():
            (out / name).write_bytes(content)
        code, err = run_child(data, out, "outside", 0, signal.SIGINT, send_after=rng.uniform(0.0, 0.6))
        outcome(out, before, code, err, signal.SIGINT)
    # each trial ended consistently (outcome asserts it); which ways it ended depends on the machine
