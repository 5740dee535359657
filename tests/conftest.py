"""Shared fixtures: a fresh plugin registry per test, the benchmark datasets, and a network guard."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs one worker per core: a worker's BLAS and OpenMP threads (and those of the processes
    # it starts) would only contend with the other workers, and OpenBLAS's threads waiting on a busy core
    # make a small least-squares fit take seconds. Set before numpy is first imported, below.
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_variable] = "1"

from veil.engine import make_registry  # noqa: E402

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


# -- the order `make test` hands out the files in ---------------------------------------------------
# pytest-xdist gives each worker whole files (--dist loadfile) in collection order (--no-loadscope-reorder):
# the dearest files go first, so that none of them is still running alone when the other worker has
# finished. Each figure is the CPU seconds a file took on one worker of a 2-core machine (the worker's and
# those of the processes it waited for; the two Spark files' are estimated from their wall time, their JVM's
# CPU being counted nowhere); files not listed follow, those with more tests first. A stale figure only
# costs time, never a result: measure again with `--durations=0` and sum by file when the order drifts.
FILE_COSTS = {
    "plugins/test_global_recoding.py": 130,
    "cli/test_audit_corpus.py": 55,
    "test_memory_harness.py": 50,
    "plugins/test_cancel_checks.py": 45,
    "test_plugin_guide.py": 36,
    "plugins/test_global_recoding_heuristic.py": 36,
    "engine/test_longest.py": 35,
    "plugins/test_population_models.py": 33,
    "plugins/test_global_recoding_spark.py": 30,
    "plugins/test_patternka_spark.py": 30,
    "plugins/test_anonymisation_metrics.py": 28,
    "plugins/test_patternka.py": 26,
    "gui/test_cluster.py": 25,
    "plugins/test_presence_risk_models.py": 21,
    "cli/test_process.py": 20,
    "plugins/test_global_recoding_weights.py": 17,
    "engine/test_release_exports.py": 14,
    "plugins/test_privacy_aware.py": 12,
    "plugins/test_conformance.py": 11,
    "engine/test_transactions.py": 11,
}


def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).parent
    first, count = {}, {}
    for i, item in enumerate(items):
        path = Path(item.path)
        name = path.relative_to(tests).as_posix() if tests in path.parents else path.as_posix()
        first.setdefault(name, i)
        count[name] = count.get(name, 0) + 1
        item.stash[_FILE] = name
    items.sort(key=lambda it: (-FILE_COSTS.get(it.stash[_FILE], 0.0), -count[it.stash[_FILE]], first[it.stash[_FILE]]))


_FILE = pytest.StashKey[str]()
