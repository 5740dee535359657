"""A small run's start-up, as CPU seconds of whole processes measured alternately in one run.

``veil run`` of global recoding on adult_arx's first 1,000 records (sex, age and race quasi-identifying,
ARX's hierarchies, k = 5, no report) as a fresh process, against ``python -c pass`` (Python's own
start), ``python -c "import pandas"`` (the table library alone) and, with ``--against REV`` (default
``main``), the same command run by that revision's code: ``git archive REV`` unpacked into a temporary
folder that is put first on ``PYTHONPATH`` (the installed entry points are this checkout's). Each
candidate runs once to write its bytecode cache, then the candidates take turns ``--repeats`` times,
so a burst of load from other jobs hits them alike. CPU seconds (user + system, all threads) are far
steadier than wall seconds on a shared machine. Also lists which of the heavy libraries each run
loaded.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--against REV] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import checkout, dataset, markdown_table  # noqa: E402

pytestmark = pytest.mark.benchmark

QUASI = ("sex", "age", "race")
HEAVY = ("pandas", "pyarrow", "scipy", "sklearn", "matplotlib", "numba")
# Python's bytecode cache on, as an installed Veil has it
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}


def small_file(folder: Path, rows: int = 1_000) -> Path:
    lines = (dataset("adult_arx") / "adult.csv").read_text().splitlines(keepends=True)
    path = folder / "adult_1000.csv"
    path.write_text("".join(lines[: rows + 1]))
    return path


def run_code(data: Path, out: Path) -> str:
    """The command as a process runs it (``program=True``), then the heavy libraries it loaded."""
    hierarchies = dataset("adult_arx")
    argv = ["run", "--data", str(data), "--quasi", ",".join(QUASI)]
    for c in QUASI:
        argv += ["--hierarchy", f"{c}={hierarchies / f'adult_hierarchy_{c}.csv'}"]
    argv += ["--model", "k-anonymity:k=5", "--method", "global-recoding", "--no-report", "--out", str(out)]
    return (
        "import sys\nfrom veil.cli.program import main\n"
        f"code = main({argv!r}, program=True)\n"
        f"print(code, ','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )


def measure(candidates: dict[str, tuple[list[str], dict]], repeats: int) -> tuple[dict, dict]:
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    loaded = {}
    for name, (argv, env) in candidates.items():  # bytecode written, output checked
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{name} failed: {done.stderr.strip().splitlines()[-1:]}")
        loaded[name] = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    for _ in range(repeats):
        for name, (argv, env) in candidates.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(argv, env=env, capture_output=True, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            samples[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return samples, loaded


def start_up(against: str | None = "main", repeats: int = 9) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = small_file(tmp)
        python = [sys.executable]
        candidates = {
            "python -c pass": ([*python, "-c", "pass"], ENV),
            "python -c 'import pandas'": ([*python, "-c", "import pandas"], ENV),
            "veil run, this checkout": ([*python, "-c", run_code(data, tmp / "now")], ENV),
        }
        if against:
            old = checkout(against, tmp / "against")
            candidates[f"veil run, {against}"] = (
                [*python, "-c", run_code(data, tmp / "then")],
                {**ENV, "PYTHONPATH": str(old)},
            )
        samples, loaded = measure(candidates, repeats)
    start = statistics.median(samples["python -c pass"])
    rows = []
    for name, s in samples.items():
        median = statistics.median(s)
        libraries = loaded[name].partition(" ")[2] if name.startswith("veil") else ""
        rows.append([name, f"{min(s):.2f}", f"{median:.2f}", f"{median - start:.2f}", libraries or "—"])
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{repeats} turns, load average at the end {load}:\n\n" + markdown_table(
        ["process", "min CPU s", "median CPU s", "beyond Python's start", "heavy libraries loaded"], rows
    )


def test_small_run_start_up():
    if dataset("adult_arx") is None:
        pytest.skip("adult_arx is not in ../shared/datasets")
    print("\n" + start_up(against=None, repeats=5))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main", help="a revision to compare with ('' for none)")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print(start_up(args.against or None, args.repeats))
