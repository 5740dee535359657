"""Global recoding's heuristic searches (docs/anonymisation.md#heuristic-search): the best-first
search and the genetic search never beat the exhaustive optimum, the best-first search finds it
whenever its budget lets it finish (and then says so), a budget of checks is kept, the genetic search
is reproducible from the run's seed, ``auto`` searches whole only what fits (and genetically what
does not), and a run can be
cancelled. The optimum comes from the exhaustive oracle of test_global_recoding, which shares nothing
with the searches but the privacy models' own checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_global_recoding import METRICS, MODELS, REGISTRY, oracle, optimum, random_table

from veil.engine import BadInput, Cancelled, Context, Hierarchy, PluginCall, Role, RunSpec, Table, execute
from veil.plugins.anonymisation._heuristic import automatic
from veil.plugins.anonymisation._lattice import MAX_NODES

QIS = ("town", "age", "job")


def run(table, models, suppression, metric, seed=0, ctx=None, **search):
    name, _, args = metric.partition(":")
    params = {"suppression": suppression, "metric": name, **search}
    if args:
        params["monotonic"] = False
    spec = RunSpec(
        PluginCall("global-recoding", params), models=[PluginCall.parse(m) for m in models], seed=seed, metrics=()
    )
    return execute(REGISTRY, table, spec, ctx=ctx) if ctx is not None else execute(REGISTRY, table, spec)


def found(result):
    gen = result.release.details["generalisation"]
    return gen["loss"], tuple(gen["levels"].get(c) for c in QIS), gen


def near(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("models", MODELS[::3], ids=lambda m: "+".join(m))
@pytest.mark.parametrize("suppression", [0.0, 0.15])
def test_best_first_with_budget_enough_finds_the_optimum_and_says_so(seed, models, suppression):
    table = random_table(seed)
    results = oracle(table, models, suppression)
    for metric in METRICS:
        best = optimum(results, metric)
        if best is None:
            with pytest.raises(BadInput, match="no transformation satisfies"):
                run(table, models, suppression, metric, search="heuristic", budget=0)
            continue
        loss, levels, gen = found(run(table, models, suppression, metric, search="heuristic", budget=0))
        assert near(loss, best[0]) and levels == best[2], (metric, levels, best)
        assert gen["search"] == "heuristic" and gen["proven_optimal"] is True
        assert results[levels] is not None and near(results[levels][metric], loss)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("budget", [2, 12])
@pytest.mark.parametrize("method", ["heuristic", "genetic"])
def test_a_heuristic_is_never_better_than_the_optimum_and_keeps_its_budget(seed, budget, method):
    table = random_table(seed)
    models = ["k-anonymity:k=3"]
    results = oracle(table, models, 0.1)
    for metric in ("loss", "entropy", "discernibility"):
        best = optimum(results, metric)
        try:
            loss, levels, gen = found(run(table, models, 0.1, metric, seed=seed, search=method, budget=budget))
        except BadInput as e:  # nothing found within the budget: said so, with the budget named
            assert "larger budget" in str(e) or best is None
            continue
        assert results[levels] is not None, "the released transformation is a solution"
        assert near(results[levels][metric], loss), "its loss is the one reported"
        assert loss >= best[0] or near(loss, best[0])
        assert gen["searched_nodes"] <= budget
        if gen["proven_optimal"]:
            assert near(loss, best[0])


def test_the_genetic_search_is_reproducible_from_the_seed():
    table = random_table(3)
    runs = [run(table, ["k-anonymity:k=2"], 0.05, "loss", seed=s, search="genetic", budget=25) for s in (7, 7, 8)]
    paths = [r.release.solution_space.levels for r in runs]
    assert np.array_equal(paths[0], paths[1]) and found(runs[0])[:2] == found(runs[1])[:2]
    assert len(paths[0]) == 25
    assert not np.array_equal(paths[0], paths[2]), "another seed walks another path"


def _wide(n_qis: int, seed: int = 0) -> Table:
    """A table whose lattice is larger than the optimal search holds: 11 levels per column."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"q{i}": rng.integers(0, 256, 300) for i in range(n_qis)})
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in frame.columns})
    for c in frame.columns:
        table = table.with_hierarchy(c, Hierarchy.intervals(frame[c], widths=[2, 4, 8, 16, 32, 64, 128, 256, 512]))
    return table


def test_auto_takes_the_optimal_search_up_to_its_limit_and_the_genetic_one_beyond():
    assert automatic(1) == automatic(MAX_NODES) == "optimal"
    assert automatic(MAX_NODES + 1) == automatic(10**12) == "genetic"


def test_auto_searches_whole_what_fits_and_heuristically_what_does_not():
    small = random_table(0)
    gen = found(run(small, ["k-anonymity:k=2"], 0.0, "loss"))[2]
    assert gen["search"] == "optimal" and gen["proven_optimal"] is True
    wide = _wide(6)  # 11^6 = 1,771,561 transformations
    with pytest.raises(BadInput, match="more than the 1,000,000 global recoding searches"):
        run(wide, ["k-anonymity:k=2"], 0.0, "loss", search="optimal")
    result = run(wide, ["k-anonymity:k=2"], 0.0, "loss", budget=1000)
    gen = found(result)[2]
    assert gen["search"] == "genetic" and gen["searched_nodes"] <= 1000 and gen["lattice_nodes"] == 11**6
    assert gen["proven_optimal"] is False
    assert all(v.holds for v in result.verdicts)
    space = result.release.solution_space
    assert not space.complete and space.n_nodes == gen["searched_nodes"]
    assert tuple(space.optimum) == tuple(gen["levels"].values())


@pytest.mark.parametrize("method", ["heuristic", "genetic"])
def test_a_heuristic_search_can_be_cancelled(method):
    def progress(fraction, message):
        if "transformations checked" in message:  # the search under way
            ctx.token.cancel()

    ctx = Context(0, progress)
    with pytest.raises(Cancelled):
        run(_wide(6), ["k-anonymity:k=2"], 0.0, "loss", ctx=ctx, search=method, budget=0)
