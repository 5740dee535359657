"""Collect the ``bench_*.py`` files as test modules; they run only through ``make benchmark``."""

from __future__ import annotations

import pytest


def pytest_collect_file(file_path, parent):
    # a file named on the command line is collected by pytest itself, whatever its name
    if file_path.suffix == ".py" and file_path.name.startswith("bench_") and not parent.session.isinitpath(file_path):
        return pytest.Module.from_parent(parent, path=file_path)
    return None
