"""Fixtures of the command-line tests: call ``veil`` in-process or as a real process, and write
small data files in ``tmp_path``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from veil.engine import demo_path, make_registry
from veil.cli import main

from .helpers import SMALL_CSV, Outcome


@pytest.fixture
def veil(capsys):
    """``veil(*argv)`` runs the CLI in-process and returns its :class:`Outcome`."""

    def run(*argv) -> Outcome:
        capsys.readouterr()  # drop anything printed before
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


def _veil_script() -> Path:
    exe = Path(sys.executable)
    for name in ("veil", "veil.exe"):
        if (exe.parent / name).exists():
            return exe.parent / name
    pytest.skip(f"no veil script next to {exe}")


@pytest.fixture
def veil_process(tmp_path):
    """``veil_process(*argv, script=False)`` runs ``python -m veil.desktop`` (or the installed
    ``veil`` script) as a real process with no terminal, in ``tmp_path``."""

    def run(*argv, script: bool = False) -> Outcome:
        cmd = [str(_veil_script())] if script else [sys.executable, "-m", "veil.desktop"]
        env = {**os.environ, "PYTHONWARNINGS": "default"}  # a stray warning would add a stderr line
        done = subprocess.run(
            [*cmd, *map(str, argv)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        return Outcome(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def write_file(tmp_path):
    """``write_file(name, text_or_bytes)`` creates a file in ``tmp_path`` and returns its path."""

    def write(name: str, content: str | bytes) -> Path:
        p = tmp_path / name
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8", newline="")
        return p

    return write


@pytest.fixture(scope="session")
def importers() -> list[str]:
    """The registered importers; a test that reads a data file skips while there are none."""
    names = make_registry().names("importer")
    if not names:
        pytest.skip("plugins/io/importers.py registers no importer yet: data files cannot be read")
    return names


@pytest.fixture
def small_csv(write_file, importers) -> Path:
    """people.csv: 12 records, 2-anonymous on (age_band, sex), unique on postcode."""
    return write_file("people.csv", SMALL_CSV)


@pytest.fixture(scope="session")
def demo_schema() -> dict:
    return json.loads((demo_path().parent / "demo_hospital.json").read_text(encoding="utf-8"))
