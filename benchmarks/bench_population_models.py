"""The population models under global recoding and Mondrian: adult_arx (30,162 records) as the
population, a seeded 10 % sample of it as the data, its nine attributes as quasi-identifiers with
ARX's hierarchies. k-map counted in the population beside k-map estimated from the sampling fraction
and k-anonymity (the same search without a population), and δ-presence; each the whole ``execute``
(the search, the release, its check against the population).

Run with ``python benchmarks/bench_population_models.py`` (prints a markdown table). Medians of
interleaved repetitions (``_bench.median_times``), so the ratios hold on a shared machine. The
dataset is read from ``../shared/datasets`` and never copied.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from _bench import machine, markdown_table, median_times
from bench_global_recoding import adult_arx
from veil.engine import PluginCall, Population, RunSpec, execute, make_registry

REGISTRY = make_registry()
CASES = {  # label: (method, model, with the population)
    "global recoding, k-anonymity k = 5": ("global-recoding:suppression=0.04", "k-anonymity:k=5", False),
    "global recoding, k-map k = 50, π = 0.1": (
        "global-recoding:suppression=0.04",
        "k-map:k=50,sample_fraction=0.1",
        False,
    ),
    "global recoding, k-map k = 50, population": ("global-recoding:suppression=0.04", "k-map:k=50", True),
    "global recoding, δ-presence [0.05, 0.2], population": (
        "global-recoding:suppression=0.04",
        "delta-presence:dmin=0.05,dmax=0.2",
        True,
    ),
    "Mondrian, k-anonymity k = 5": ("mondrian", "k-anonymity:k=5", False),
    "Mondrian, k-map k = 50, population": ("mondrian", "k-map:k=50", True),
}


def tables():
    population = adult_arx()
    if population is None:
        return None
    rows = np.sort(np.random.default_rng(0).choice(population.n_rows, population.n_rows // 10, replace=False))
    sample = population.take(rows)
    return sample, sample.with_population(Population(population.frame))


def measure(repeats: int = 3):
    found = tables()
    if found is None:
        return None
    alone, with_population = found
    results = {}

    def run(label):
        method, model, counted = CASES[label]
        spec = RunSpec(PluginCall.parse(method), PluginCall.parse(model))
        results[label] = execute(REGISTRY, with_population if counted else alone, spec)

    times = median_times({label: (lambda label=label: run(label)) for label in CASES}, repeats)
    base = times["global recoding, k-anonymity k = 5"]
    rows = []
    for label, seconds in times.items():
        result = results[label]
        gen = result.release.details.get("generalisation") or {}
        levels = ";".join(f"{c}:{v}" for c, v in (gen.get("levels") or {}).items()) or "—"
        rows.append(
            [
                label,
                f"{seconds:.2f}",
                f"{seconds / base:.1f}",
                levels,
                f"{int(result.release.details.get('groups', 0)):,}",
                result.verdict.message,
            ]
        )
    return rows


HEAD = ["3,016 of adult_arx's 30,162 records", "whole run s", "× k-anonymity's", "levels", "groups", "verdict"]


@pytest.mark.benchmark
def test_population_models(capsys):
    rows = measure()
    if rows is None:
        pytest.skip("adult_arx not found under ../shared/datasets")
    with capsys.disabled():
        print("\n" + markdown_table(HEAD, rows))


if __name__ == "__main__":
    print(machine(), file=sys.stderr)
    found = measure()
    print(markdown_table(HEAD, found) if found else "adult_arx not found under ../shared/datasets")
