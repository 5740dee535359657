"""Every method, with its default metrics, on the bundled demo and on generated data
of growing size, each run the real ``veil run`` in its own process under a 4 GB address-space limit
(``RLIMIT_AS``): a clean success, a clean refusal (the estimate's "not enough memory: this run needs
…", or another one-line reason), never a kill by the operating system, never an internal error, and
never a run the estimate let through that then ran out of memory (caught, it says "not enough memory
for this data").

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_memory_matrix.py [--tables ROWS ...] [--baskets N ...]
[--no-demo] [--methods A,B] [--timeout S]``: the demo, then for each ROWS a generated Adult-shaped table,
then for each N generated Netflix-shaped baskets (:func:`synthetic.power_law_sets`, paper 002's Table 6
at 410,201). Defaults: the sizes docs/ promises, the demo, tables of 1,000,000, 2,000,000 and
10,000,000 records and 410,201 baskets, with a timeout of 600 s a run. Each run's peak resident memory
is the child's ``ru_maxrss``. Prints one markdown table per data set; exits 1 when a run was killed,
failed internally or ran out of memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
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
CHUNK = 1_000_000
MODELS = ("k-anonymity:k=5", "set-k-anonymity:k=5", "k-ac:k=5")


def table(path: Path, rows: int, seed: int = 0) -> list[str]:
    """An Adult-shaped table (three quasi-identifiers, a sensitive column, a class); its roles as flags."""
    rng = np.random.default_rng(seed)
    for start in range(0, rows, CHUNK):  # written a million records at a time: the harness stays small
        n = min(CHUNK, rows - start)
        pd.DataFrame(
            {
                "age": rng.integers(17, 91, n),
                "sex": rng.choice(["F", "M"], n),
                "zip": rng.choice([f"z{i:03d}" for i in range(300)], n),
                "education": rng.choice([f"e{i}" for i in range(16)], n),
                "hours": rng.integers(1, 100, n),
                "disease": rng.choice(list("abcdef"), n),
                "income": rng.choice(["<=50K", ">50K"], n, p=[0.76, 0.24]),
            }
        ).to_csv(path, index=False, header=start == 0, mode="w" if start == 0 else "a")
    return [
        "--data",
        str(path),
        "--quasi",
        "age,sex,zip",
        "--sensitive",
        "disease",
        "--target",
        "income",
        "--release-sensitive",
        "disease",
    ]


def baskets(path: Path, rows: int) -> list[str]:
    """Netflix-shaped baskets (paper 002's Table 6 scaled to ``rows`` records), one item set a line."""
    sys.path.insert(0, str(Path(__file__).parent))
    from synthetic import power_law_sets

    sets = power_law_sets(rows, max_of=rows)
    names = np.asarray(sets.item_names)
    with open(path, "w") as f:
        for start, stop in zip(sets.indptr[:-1], sets.indptr[1:]):
            f.write(" ".join(names[sets.indices[start:stop]]) + "\n")
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


def one(argv: list[str], out: Path, timeout: float) -> tuple[str, float, float]:
    """How a ``veil run`` ended, its seconds and its peak resident memory in GB (``ru_maxrss``)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "veil.cli", "run", *argv, "--no-report", "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
            preexec_fn=limited,
            start_new_session=True,
        )
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout:
                os.killpg(child.pid, signal.SIGKILL)
                _, status, usage = os.wait4(child.pid, 0)
                child.returncode = 0
                return (
                    f"still running after {timeout:g} s (stopped by the harness)",
                    time.perf_counter() - started,
                    usage.ru_maxrss / 2**20,
                )
            time.sleep(0.2)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds, peak = time.perf_counter() - started, usage.ru_maxrss / 2**20
        err.seek(0)
        lines = err.read().strip().splitlines()
    last = lines[-1] if lines else ""
    if child.returncode < 0:
        return f"KILLED by signal {-child.returncode}", seconds, peak
    if child.returncode == 0:
        return "ran", seconds, peak
    if child.returncode == 2 and "not enough memory for this data" in last:  # a MemoryError, caught
        return "RAN OUT of memory (caught: the estimate let it through)", seconds, peak
    if child.returncode == 2 and "not enough memory" in last:
        return f"refused: {last.removeprefix('veil: ').removeprefix('error: ')[:160]}", seconds, peak
    if child.returncode == 3 or "Traceback" in "\n".join(lines):
        return f"INTERNAL ERROR: {last[:120]}", seconds, peak
    return f"exit {child.returncode}: {last.removeprefix('veil: ')[:110]}", seconds, peak


def inputs(tmp: Path, sizes: list[int], basket_sizes: list[int], demo: bool):
    """(label, the data's flags, set-valued?) for each data set, generated one at a time as it is reached."""
    if demo:
        yield "demo (5,000 records)", ["--demo", "--release-sensitive", "diagnosis_group"], False
    for n in sizes:
        yield f"table of {n:,} records", table(tmp / f"t{n}.csv", n), False
        (tmp / f"t{n}.csv").unlink()
    for n in basket_sizes:
        yield f"{n:,} baskets", baskets(tmp / f"b{n}.dat", n), True
        (tmp / f"b{n}.dat").unlink()


def matrix(
    sizes: list[int], timeout: float, basket_sizes: list[int] = (), demo: bool = True, methods: list[str] | None = None
) -> list[list[str]]:
    from veil.engine import make_registry

    registry = make_registry()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for label, argv, set_valued in inputs(tmp, sizes, basket_sizes, demo):
            for method in methods or registry.names("algorithm"):
                run_argv = [*argv, "--method", method, *model_for(registry, method, set_valued)]
                out = tmp / "out" / f"{method}-{len(rows)}"
                outcome, seconds, peak = one(run_argv, out, timeout)
                subprocess.run(["rm", "-rf", str(out)], check=False)
                rows.append([label, method, outcome, f"{seconds:.1f}", f"{peak:.2f}"])
                print(" | ".join(rows[-1]), flush=True)
    return rows


def markdown(rows) -> str:
    """One table per data set."""
    parts = []
    for label in dict.fromkeys(r[0] for r in rows):
        parts += [
            f"**{label}**",
            "",
            "| method (default metrics) | outcome under 4 GB | s | peak GB |",
            "|---|---|---:|---:|",
            *(f"| {' | '.join(r[1:])} |" for r in rows if r[0] == label),
            "",
        ]
    return "\n".join(parts)


def bad(rows) -> list:
    """Runs killed, failed internally or out of memory past the estimate."""
    return [r for r in rows if r[2].startswith(("KILLED", "INTERNAL", "RAN OUT"))]


def test_memory_matrix():
    rows = matrix([100_000], 300, [100_000])
    print(markdown(rows))
    assert not bad(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--tables",
        nargs="*",
        type=int,
        default=[1_000_000, 2_000_000, 10_000_000],
        help="records of each generated table (none: no tables)",
    )
    parser.add_argument(
        "--baskets",
        nargs="*",
        type=int,
        default=[410_201],
        help="records of each generated basket file (none: no baskets)",
    )
    parser.add_argument("--no-demo", dest="demo", action="store_false", help="skip the bundled demo")
    parser.add_argument("--methods", type=lambda text: text.split(","), help="only these methods (comma-separated)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before the harness stops a run")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    found = matrix(args.tables, args.timeout, args.baskets, args.demo, args.methods)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(markdown(found))
    sys.exit(1 if bad(found) else 0)
