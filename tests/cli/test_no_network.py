"""No network, proven: every command runs to completion with socket creation blocked."""

from __future__ import annotations

import json
import socket

import pytest

from veil.cli import main


def test_the_guard_catches_a_socket(no_network):  # the guard the next test relies on can fail
    with pytest.raises(AssertionError, match="network"):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with pytest.raises(AssertionError, match="network"):
        socket.create_connection(("example.org", 80))
    assert len(no_network) == 2


def test_every_command_runs_with_the_network_blocked(tmp_path, no_network, capsys):
    study = {
        "data": {"demo": True},
        "model": "k-anonymity",
        "methods": ["all-features"],
        "sweep": {"k": [1]},
        "metrics": ["sfc"],
        "charts": [{"name": "metric-bars", "params": {"metric": "sfc", "x": "k"}}],
    }
    (tmp_path / "study.json").write_text(json.dumps(study), encoding="utf-8")
    out, dp = tmp_path / "out", tmp_path / "dp"
    commands = [
        ["plugins"],
        ["plugins", "--json"],
        [
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "all-features",
            "--model",
            "k-anonymity:k=1",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            str(out),
        ],
        [
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "laplace-dp-fs:m=3",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            str(dp),
        ],
        ["verify", str(out)],
        ["report", str(out), "--no-utility"],
        ["inspect", str(out / "release.csv")],
        ["study", str(tmp_path / "study.json"), "--out", str(tmp_path / "study")],
    ]
    for argv in commands:
        code = main(argv)
        assert code == 0, (argv, capsys.readouterr().err)
    assert no_network == []
    assert (out / "report.html").exists() and (tmp_path / "study" / "results.csv").exists()
