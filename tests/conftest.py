"""Shared fixtures: a fresh plugin registry per test, and the benchmark datasets."""

from __future__ import annotations

import os
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
