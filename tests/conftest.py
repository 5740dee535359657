"""Shared fixtures: a fresh plugin registry per test, the benchmark datasets, and a network guard."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from veil.engine import make_registry

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.fixture
def registry():
    """A fresh registry: built-ins through their entry points, like third-party plugins."""
    return make_registry()


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    """../shared/datasets; skipped where absent, but a failure on CI (CI=true)."""
    if not DATASETS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the benchmark datasets are missing on CI: {DATASETS}")
        pytest.skip(f"benchmark datasets not found at {DATASETS}")
    return DATASETS


class NetworkUsed(AssertionError):
    """Veil tried to use the network."""


@pytest.fixture
def no_network(monkeypatch) -> list[str]:
    """Block creating sockets and resolving host names for the rest of the test; each attempt raises
    :class:`NetworkUsed` and is recorded in the returned list."""
    attempts: list[str] = []

    def refuse(what):
        def blocked(*args, **kwargs):
            attempts.append(f"{what}{args!r}")
            raise NetworkUsed(f"Veil tried to use the network: {what}{args!r}")

        return blocked

    class BlockedSocket(socket.socket):
        def __init__(self, *args, **kwargs):
            refuse("socket.socket")(*args, **kwargs)

    monkeypatch.setattr(socket, "socket", BlockedSocket)
    for name in ("create_connection", "socketpair", "getaddrinfo", "gethostbyname", "fromfd"):
        monkeypatch.setattr(socket, name, refuse(f"socket.{name}"))
    return attempts


@pytest.fixture(scope="session")
def spark_local():
    """One Spark session on ``local[2]`` for every Spark test of the run (a JVM takes seconds to start);
    skipped where pyspark is absent, but a failure on CI (CI=true), where `make test` installs it."""
    from veil.plugins._spark.session import pyspark_available, spark_session

    if not pyspark_available():
        if os.environ.get("CI") == "true":
            pytest.fail("pyspark is missing on CI; `make test` installs the spark extra")
        pytest.skip("pyspark is not installed (pip install veil[spark])")
    session = spark_session("local[2]")
    yield session
    session.stop()
