"""The population's part of a run's memory (δ-presence, k-map): estimated before the run, bounding
what matching the population really takes, and named when it is what the machine lacks."""

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BadInput,
    Context,
    PluginCall,
    Population,
    Role,
    RunSpec,
    Table,
    check_memory,
    estimate_method,
    execute,
    make_registry,
)

REGISTRY = make_registry()
METHOD = PluginCall.parse("global-recoding:suppression=0.05")


def _drawn(population_rows: int, seed: int = 0) -> Table:
    """A tenth of a generated population of five quasi-identifiers, with that population attached."""
    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {
            "age": rng.integers(18, 90, population_rows),
            "zip": rng.choice([f"Z{i:03d}" for i in range(60)], population_rows),
            "sex": rng.choice(["f", "m"], population_rows),
            "job": rng.choice([f"job{i}" for i in range(25)], population_rows),
            "hours": rng.integers(10, 60, population_rows),
        }
    )
    sample = people.sample(frac=0.1, random_state=seed).reset_index(drop=True)
    table = Table.from_frame(sample, roles={c: Role.QUASI_IDENTIFIER for c in people.columns})
    return table.with_population(Population(people))


def _estimate(table):
    algorithm = REGISTRY.algorithm(METHOD.name)
    return estimate_method(algorithm, algorithm.params(METHOD.params), table)


def test_the_estimate_counts_the_population_and_bounds_what_matching_it_takes():
    table = _drawn(200_000)
    with_population = _estimate(table)
    without = _estimate(table.with_population(None))
    parts = dict(with_population.parts)
    assert parts["matching the population"] == 80 * 200_000 * 5
    assert parts["the population"] == int(table.population.frame.memory_usage(deep=False).sum())
    tracemalloc.start()
    try:
        execute(REGISTRY, table, RunSpec(METHOD, PluginCall.parse("k-map:k=2"), 0, ()), Context(0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    held = table.population.frame.memory_usage(deep=False).sum()
    assert peak + held <= with_population.total
    assert peak > without.total  # without the population's part the estimate would not have bounded it


def test_a_population_too_large_for_the_memory_left_is_refused_naming_it():
    table = _drawn(100_000)
    estimate = _estimate(table)
    with pytest.raises(BadInput, match="largest part: matching the population"):
        check_memory(estimate, (estimate.total - 1, "available on this machine"))
    check_memory(_estimate(table.with_population(None)), (estimate.total - 1, "available on this machine"))
