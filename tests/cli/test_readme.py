"""Every `veil …` command in the README's code blocks runs as shown (exit 0), in
a folder holding UCI's adult.data and adult.names (from ../shared/datasets) and the repository's
resources/ folder, in the order the README lists them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from veil.cli import main

ROOT = Path(__file__).resolve().parents[2]


def readme_commands(text: str) -> list[str]:
    """The `veil …` lines of the README's bash blocks, continuation lines joined, comments dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line == "veil" or line.startswith("veil "):
                commands.append(" ".join(line.split()))
    return commands


def test_the_readme_shows_the_commands_this_test_runs():
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "veil" in commands  # the desktop: opened by the GUI tests, not here
    assert sum(c.startswith("veil run ") for c in commands) >= 3
    assert {c.split()[1] for c in commands if c != "veil"} >= {"inspect", "plugins", "run", "study", "verify", "report"}


@pytest.mark.dataset
def test_every_readme_command_runs_as_shown(datasets_dir, tmp_path, monkeypatch, capsys):
    for name in ("adult.data", "adult.names"):
        (tmp_path / name).symlink_to(datasets_dir / "adult" / name)
    (tmp_path / "bms1.txt").symlink_to(datasets_dir / "bms_webview_1" / "BMS1_itemset_mining.space-separated.txt")
    (tmp_path / "resources").symlink_to(ROOT / "resources", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    commands = [c for c in readme_commands((ROOT / "README.md").read_text(encoding="utf-8")) if c != "veil"]
    for command in commands:
        code = main(shlex.split(command)[1:])
        err = capsys.readouterr().err
        assert code == 0, f"{command!r} exited {code}: {err}"
    assert (tmp_path / "out" / "report.html").is_file() and (tmp_path / "adult" / "release.parquet").is_file()
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["run-1", "run-2"]
