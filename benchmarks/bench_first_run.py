"""A user's first PatternKa or Maximal run never waits for numba's compiler.

In a fresh numba cache (``NUMBA_CACHE_DIR``), ``scripts/compile_kernels.py`` (what ``make test`` waits
for once, and ``make run`` starts in the background) is timed; then, in another process, a PatternKa
and a Maximal run on other generated baskets must compile nothing: every kernel comes from the cache
(numba's own cache-miss counts, not a time).

Run: ``.venv/bin/python benchmarks/bench_first_run.py`` (it compiles everything once: minutes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.benchmark

FIRST_RUN = f"""
import sys
sys.path.insert(0, {str(ROOT / 'scripts')!r})
from compile_kernels import compiled_now, first_runs, kernels
first_runs(7)
print(compiled_now(kernels()))
"""


def measure() -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        started = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "scripts" / "compile_kernels.py")], check=True, env=env)
        setup = time.perf_counter() - started
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", FIRST_RUN], check=True, env=env, capture_output=True, text=True)
        first = time.perf_counter() - started
    return {
        "set-up compile s": setup,
        "first run s": first,
        "kernels compiled by the first run": int(out.stdout.split()[-1]),
    }


def test_a_first_run_after_setup_compiles_nothing():
    figures = measure()
    print(figures)
    assert figures["kernels compiled by the first run"] == 0


if __name__ == "__main__":
    print(measure())
