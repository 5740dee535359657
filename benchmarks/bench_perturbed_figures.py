"""A perturbed release's before-and-after figures on 1,000,000 records (docs/benchmarks.md, "Perturbation"):
``perturbation_figures`` (what the Utility tab and ``veil utility`` add for perturbed columns) against
the per-column utility they already compute (``release_utility``), in one run, and the second step's
check of a chained run (``changed_columns``). Run:
`.venv/bin/python -m pytest -q -s benchmarks/bench_perturbed_figures.py` (`PERTURB_ROWS` sets another size).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from bench_perturbation import people

from _bench import machine, markdown_table

from veil.engine import Context, Role, Table, make_registry, perturbation_figures, release_utility
from veil.engine.run.chain import changed_columns

pytestmark = pytest.mark.benchmark
ROWS = int(os.environ.get("PERTURB_ROWS", "1000000"))
CASES = [("noise-addition", {"columns": "age;income;hours"}), ("pram", {"columns": "region;sex;job"})]


def test_before_and_after_figures_on_a_million_records():
    registry = make_registry()
    frame = people(ROWS)
    table = Table.from_frame(frame, roles={"region": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    rows = []
    for name, values in CASES:
        algorithm = registry.algorithm(name)
        release = algorithm.run(table, None, algorithm.params(values), Context(0))
        columns = list(release.perturbation.columns)
        start = time.process_time()
        figures = perturbation_figures(frame, release.frame, release.perturbation)
        shifts = time.process_time() - start
        start = time.process_time()
        release_utility(frame, release.frame, {}, columns)
        per_column = time.process_time() - start
        start = time.process_time()
        changed_columns(table, release, columns)
        check = time.process_time() - start
        assert list(figures.columns) == columns
        ratio = shifts / per_column
        rows.append(
            [f"{name} ({', '.join(columns)})", f"{shifts:.2f}", f"{per_column:.2f}", f"{ratio:.2f}", f"{check:.3f}"]
        )
    print(machine())
    print(f"{ROWS:,} records, CPU seconds")
    print(
        markdown_table(
            ["release", "before-and-after figures s", "per-column utility s", "ratio", "second step's check s"], rows
        )
    )


if __name__ == "__main__":
    sys.exit(pytest.main(["-q", "-s", str(Path(__file__))]))
