"""The perturbation methods on 1,000,000 records (docs/benchmarks.md, "Perturbation").

For each method: the method alone in this process (seconds, and the peak it allocates beyond its input
by tracemalloc against its declared memory cost), its default perturbation measures alone (the
linkage risk on its default sample of 5,000 records), and the whole command `veil run … --no-report` in a child process
(wall seconds and peak resident memory by /usr/bin/time), which also reads the CSV, judges, computes
the same measures and exports. Run: `.venv/bin/python -m pytest -q -s benchmarks/bench_perturbation.py`
(`PERTURB_ROWS` sets another size).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _bench import machine, markdown_table

from veil.engine import Context, DataShape, PluginCall, Role, RunSpec, Table, default_metrics, make_registry, measure

pytestmark = pytest.mark.benchmark
ROWS = int(os.environ.get("PERTURB_ROWS", "1000000"))
QUASI = "region,sex,age,income,hours"
CASES = [
    ("pram", "pram:retention=0.8"),
    ("pram", "pram:retention=0.8,strata=sex"),
    ("noise-addition", "noise-addition:method=additive"),
    ("noise-addition", "noise-addition:method=correlated"),
    ("noise-addition", "noise-addition:method=correlated-exact"),
    ("rank-swap", "rank-swap:p=5"),
]


def people(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    age = rng.integers(18, 90, n)
    return pd.DataFrame(
        {
            "region": rng.choice([f"r{i:02d}" for i in range(40)], n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(list("abcdefgh"), n),
            "age": age,
            "income": np.round(20_000 + 600 * age + rng.normal(0, 9_000, n), 2),
            "hours": np.round(rng.normal(38, 6, n), 1),
        }
    )


def split(call: str) -> tuple[str, dict]:
    name, _, rest = call.partition(":")
    return name, dict(p.split("=", 1) for p in rest.split(",") if p)


def test_perturbation_on_a_million_records(tmp_path):
    registry = make_registry()
    frame = people(ROWS)
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in QUASI.split(",")})
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    shape = DataShape(rows=ROWS, columns=frame.shape[1], cells=frame.size)
    rows = []
    for name, call in CASES:
        method_name, values = split(call)
        algorithm = registry.algorithm(method_name)
        params = algorithm.params(values)
        tracemalloc.start()
        start = time.perf_counter()
        release = algorithm.run(table, None, params, Context(0))
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        declared = algorithm.memory(shape, params)
        ours = tuple(
            m
            for m in default_metrics(registry, method_name)
            if registry.get("metric", m).requires in algorithm.provides
        )
        spec = RunSpec(PluginCall(method_name, values), seed=0, metrics=ours)
        start = time.perf_counter()
        measure(registry, spec, table, release, Context(0))
        measures = time.perf_counter() - start
        out = tmp_path / f"out-{len(rows)}"
        command = [sys.executable, "-m", "veil.cli", "run", "--data", str(path), "--quasi", QUASI]
        command += ["--method", call, "--metrics", ",".join(ours), "--no-report", "--out", str(out)]
        timed = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], capture_output=True, text=True)
        assert timed.returncode == 0, timed.stderr[-2000:]
        wall, rss_kb = timed.stderr.strip().splitlines()[-1].split()
        rows.append(
            [
                call,
                f"{seconds:.2f}",
                f"{peak / 2**20:.0f}",
                f"{declared / 2**20:.0f}",
                f"{measures:.2f}",
                f"{float(wall):.1f}",
                f"{int(rss_kb) / 2**10:.0f}",
            ]
        )
        assert peak <= declared, f"{call}: allocated {peak / 2**20:.0f} MB, declared {declared / 2**20:.0f} MB"
    print(machine())
    print(
        f"{ROWS:,} records; `veil run --data people.csv --quasi {QUASI} --method METHOD "
        "--metrics MEASURES --no-report --out DIR`"
    )
    print(
        markdown_table(
            [
                "method",
                "method s",
                "method peak MB",
                "declared MB",
                "measures s",
                "veil run s",
                "veil run peak RSS MB",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    sys.exit(pytest.main(["-q", "-s", str(Path(__file__))]))
