"""Issue 39 item 3: every method, with its default metrics, on the bundled demo and on generated data
of growing size, each run the real ``veil run`` in its own process under a 4 GB address-space limit
(``RLIMIT_AS``): a clean success, a clean refusal ("not enough memory", or another one-line reason),
never a kill by the operating system and never an internal error.

Run: ``nice .venv/bin/python benchmarks/bench_memory_matrix.py [ROWS ...] [--timeout S]`` (default
sizes: the demo, 100,000 and 1,000,000 records). Prints the table docs/benchmarks.md shows; exits 1
when a run was killed or failed internally.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.benchmark

LIMIT = 4 * 2**30
MODELS = ("k-anonymity:k=5", "set-k-anonymity:k=5", "k-ac:k=5")


def table(path: Path, rows: int, seed: int = 0) -> list[str]:
    """An Adult-shaped table (three quasi-identifiers, a sensitive column, a class); its roles as flags."""
    rng = np.random.default_rng(seed)
    pd.DataFrame({"age": rng.integers(17, 91, rows), "sex": rng.choice(["F", "M"], rows),
                  "zip": rng.choice([f"z{i:03d}" for i in range(300)], rows),
                  "education": rng.choice([f"e{i}" for i in range(16)], rows),
                  "hours": rng.integers(1, 100, rows), "disease": rng.choice(list("abcdef"), rows),
                  "income": rng.choice(["<=50K", ">50K"], rows, p=[0.76, 0.24])}).to_csv(path, index=False)
    return ["--data", str(path), "--quasi", "age,sex,zip", "--sensitive", "disease", "--target", "income",
            "--release-sensitive", "disease"]


def baskets(path: Path, rows: int, items: int = 2_000, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for _ in range(rows):
            f.write(" ".join(map(str, sorted(set((rng.zipf(1.5, rng.integers(1, 10)) % items).tolist())))) + "\n")
    return ["--data", str(path)]


def model_for(registry, method: str, set_valued: bool) -> list[str]:
    cls = registry.get("algorithm", method)
    fitting = registry.models_for(cls) if cls.satisfies else None
    if not cls.needs_model and fitting is None:
        return []
    for text in MODELS:
        name = text.split(":")[0]
        if (fitting is None or name in fitting) and (name == "set-k-anonymity") == set_valued:
            return ["--model", text]
    return ["--model", next(t for t in MODELS if fitting is None or t.split(":")[0] in fitting)] if fitting else []


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def one(argv: list[str], out: Path, timeout: float) -> tuple[str, float]:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "veil.cli", "run", *argv, "--no-report", "--out", str(out)],
                              capture_output=True, text=True, preexec_fn=limited, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"still running after {timeout:g} s (stopped by the harness)", time.perf_counter() - started
    seconds = time.perf_counter() - started
    err = done.stderr.strip().splitlines()
    last = err[-1] if err else ""
    if done.returncode < 0:
        return f"KILLED by signal {-done.returncode}", seconds
    if done.returncode == 0:
        return "ran", seconds
    if done.returncode == 2 and "not enough memory" in last:
        return "refused: not enough memory", seconds
    if done.returncode == 3:
        return f"INTERNAL ERROR: {last[:120]}", seconds
    return f"exit {done.returncode}: {last.removeprefix('veil: ')[:110]}", seconds


def matrix(sizes: list[int], timeout: float) -> list[list[str]]:
    from veil.engine import make_registry

    registry = make_registry()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = [("demo (5,000 records)", ["--demo", "--release-sensitive", "diagnosis_group"], False)]
        for n in sizes:
            inputs.append((f"table of {n:,} records", table(tmp / f"t{n}.csv", n), False))
            inputs.append((f"{n:,} baskets", baskets(tmp / f"b{n}.dat", n), True))
        for label, argv, set_valued in inputs:
            for method in registry.names("algorithm"):
                run_argv = [*argv, "--method", method, *model_for(registry, method, set_valued)]
                outcome, seconds = one(run_argv, tmp / "out" / f"{method}-{len(rows)}", timeout)
                rows.append([label, method, outcome, f"{seconds:.1f}"])
                print(" | ".join(rows[-1]), flush=True)
    return rows


def markdown(rows) -> str:
    return "\n".join(["| data | method (default metrics) | outcome under 4 GB | s |", "|---|---|---|---:|",
                      *(f"| {' | '.join(r)} |" for r in rows)])


def bad(rows) -> list:
    return [r for r in rows if r[2].startswith(("KILLED", "INTERNAL"))]


def test_memory_matrix():
    rows = matrix([100_000], 300)
    print(markdown(rows))
    assert not bad(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    found = matrix(args.sizes, args.timeout)
    print(markdown(found))
    sys.exit(1 if bad(found) else 0)
