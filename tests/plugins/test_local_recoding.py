"""Local recoding: global recoding again on the records it suppressed. The first pass is global
recoding's own release, later passes publish suppressed records at their own levels, the release
holds its model from the file, and it suppresses no more records than global recoding."""

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BadInput,
    Context,
    Hierarchy,
    PluginCall,
    RunSpec,
    Table,
    bind_models,
    execute,
    make_registry,
)

from test_global_recoding import _tree  # the same random hierarchies


def _table(n=1200, seed=4) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "zip": rng.choice([f"z{i:02d}" for i in range(25)], n),
            "sex": rng.choice(["f", "m"], n),
            "dx": rng.choice(["flu", "hiv", "cold"], n),
        }
    )
    return Table.from_frame(
        frame,
        roles={"age": "quasi-identifier", "zip": "quasi-identifier", "sex": "quasi-identifier", "dx": "sensitive"},
    )


@pytest.fixture(scope="module")
def runs():
    registry, table = make_registry(), _table()
    k5 = PluginCall("k-anonymity", {"k": 5})
    local = execute(
        registry, table, RunSpec(PluginCall("local-recoding", {"suppression": 0.05}), k5), release_sensitive=("dx",)
    )
    whole = execute(
        registry, table, RunSpec(PluginCall("global-recoding", {"suppression": 0.05}), k5), release_sensitive=("dx",)
    )
    return table, local.release, whole.release


def test_the_first_pass_is_global_recodings_release(runs):
    table, local, whole = runs
    suppressed = (whole.frame[["age", "zip", "sex"]].astype(str) == "*").all(axis=1).to_numpy()
    kept = ~suppressed
    for c in ("age", "zip", "sex"):
        assert (local.frame[c].astype(str).to_numpy()[kept] == whole.frame[c].astype(str).to_numpy()[kept]).all()
    assert local.details["passes"][0]["published"] == int(kept.sum())


def test_later_passes_publish_suppressed_records_at_their_own_levels(runs):
    table, local, whole = runs
    passes = local.details["passes"]
    assert local.details["suppressed_records"] <= whole.details["generalisation"]["suppressed_records"]
    if len(passes) > 1 and passes[1]["published"]:
        assert local.details["mixed_levels"] == (passes[1]["levels"] != passes[0]["levels"])
    assert local.class_sizes().min() >= 5


def test_the_release_holds_from_its_written_values(runs):
    table, local, whole = runs
    registry = make_registry()
    k5 = registry.privacy_model("k-anonymity")
    from veil.engine.release.assessment import release_as_written

    written = release_as_written(local.frame.astype(str).replace("nan", np.nan), local.roles())
    assert k5.check(written, k5.params({"k": 5})).holds


@pytest.mark.parametrize("factor", [0.0, 1.0])
def test_each_pass_weighs_generalisation_against_suppression_by_the_gs_factor(factor):
    registry, table = make_registry(), _table(n=300)
    k5 = PluginCall("k-anonymity", {"k": 5})
    weighed = {"suppression": 0.1, "metric": "arx-loss", "gs_factor": factor}
    local = execute(registry, table, RunSpec(PluginCall("local-recoding", weighed), k5), release_sensitive=("dx",))
    whole = execute(registry, table, RunSpec(PluginCall("global-recoding", weighed), k5), release_sensitive=("dx",))
    first, gen = local.release.details["passes"][0], whole.release.details["generalisation"]
    assert first["gs_factor"] == factor and first["levels"] == gen["levels"]
    assert first["published"] == table.n_rows - gen["suppressed_records"]
    # at 1 a suppressed record costs the most and a generalised one nothing: the fewest suppressed of
    # any solution; at 0 suppressing costs nothing more than keeping: the lowest levels within the limit
    assert gen["suppressed_records"] == (0 if factor == 1.0 else 5)


def test_a_pass_publishing_nothing_weighs_generalisation_more_by_the_adaption():
    registry = make_registry()
    frame = pd.DataFrame({"age": np.arange(20, 40), "sex": ["f", "m"] * 10})  # every record unique
    table = Table.from_frame(frame, roles={"age": "quasi-identifier", "sex": "quasi-identifier"})
    k2 = PluginCall("k-anonymity", {"k": 2})
    params = {"suppression": 1.0, "metric": "arx-loss", "gs_factor": 0.0}
    # at gs_factor 0 suppressing every record costs no more than keeping it at the lowest level
    stopped = execute(registry, table, RunSpec(PluginCall("local-recoding", params), k2)).release
    assert [p["published"] for p in stopped.details["passes"]] == [0]
    assert stopped.details["suppressed_records"] == 20
    adapted = execute(registry, table, RunSpec(PluginCall("local-recoding", {**params, "adaption": 0.5}), k2)).release
    assert [(p["published"], p["gs_factor"]) for p in adapted.details["passes"]] == [(0, 0.0), (20, 0.5)]
    assert adapted.details["suppressed_records"] == 0 and adapted.class_sizes().min() >= 2


def test_the_gs_factor_needs_arx_loss():
    with pytest.raises(BadInput, match="metric=arx-loss"):
        execute(
            make_registry(),
            _table(n=60),
            RunSpec(PluginCall("local-recoding", {"gs_factor": 0.2}), PluginCall("k-anonymity", {"k": 2})),
            release_sensitive=("dx",),
        )


QIS = ("town", "age", "job", "sex")


def _layered_table(seed: int) -> Table:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 140))
    towns, jobs = [f"t{i}" for i in range(int(rng.integers(5, 9)))], [f"j{i}" for i in range(int(rng.integers(3, 6)))]
    frame = pd.DataFrame(
        {
            "town": rng.choice(towns, n, p=rng.dirichlet(np.ones(len(towns)))),
            "age": rng.integers(20, 70, n),
            "job": rng.choice(jobs, n),
            "sex": rng.choice(["f", "m"], n),
            "dx": rng.choice(["flu", "hiv", "cold", "gout"], n),
        }
    )
    table = Table.from_frame(frame, roles={**{c: "quasi-identifier" for c in QIS}, "dx": "sensitive"})
    table = table.with_hierarchy("town", _tree(rng, towns, int(rng.integers(2, 4)), False))
    table = table.with_hierarchy("job", _tree(rng, jobs, 2, False))
    table = table.with_hierarchy("sex", Hierarchy.from_levels({"f": ["*"], "m": ["*"]}))
    return table.with_hierarchy("age", Hierarchy.intervals(frame["age"], widths=[5, 10, 20]))


def _pass_by_pass(registry, table, model, params) -> tuple[np.ndarray, list]:
    """The release local recoding defines, made of global recoding runs (each a search of its own):
    global recoding on the records still suppressed at the pass's factor, its published records kept
    at its levels, the factor raised by the adaption after a pass publishing none; the records left
    after the last pass ``*``. Its quasi-identifiers as written, and each pass's (records, published,
    levels, factor)."""
    method = registry.algorithm("global-recoding")
    written = table.frame[list(QIS)].astype(str).to_numpy(dtype=object)
    remaining, factor, passes = np.arange(table.n_rows), params["gs_factor"], []
    for step in range(params["passes"]):
        each = {"suppression": params["suppression"], "metric": "arx-loss", "gs_factor": factor}
        try:  # the method itself: execute would refuse a model the records are too few for before it runs
            release = method.run(table.take(remaining), model, method.params(each), Context(0))
        except BadInput:
            passes.append((len(remaining), 0, None, factor))
            break
        values = release.frame[list(QIS)].astype(str).to_numpy(dtype=object)
        out = (values == "*").all(axis=1)
        publish = ~out if step < params["passes"] - 1 else np.ones(len(out), dtype=bool)
        written[remaining[publish]] = values[publish]
        passes.append((len(remaining), int((~out).sum()), release.details["generalisation"]["levels"], factor))
        remaining = remaining[~publish]
        if not len(remaining):
            break
        if out.all():
            if factor + params["adaption"] > 1 + 1e-12:
                break
            factor = min(1.0, factor + params["adaption"])
    written[remaining] = "*"
    return written, passes


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("model", ["k-anonymity:k=3", "l-diversity:l=2"])
def test_tries_at_a_higher_factor_give_what_fresh_global_recoding_gives(seed, model):
    """A try at a higher factor on the records of a pass that published none recalls what the searches
    before it learnt of each transformation (_lattice.Memo): its release, pass by pass, is the one
    global recoding run afresh on the same records at the same factor gives."""
    registry, table = make_registry(), _layered_table(seed)
    models = [PluginCall.parse(model)]
    params = {"metric": "arx-loss", "gs_factor": 0.0, "adaption": 0.15, "passes": 12, "suppression": 1.0}
    local = execute(
        registry, table, RunSpec(PluginCall("local-recoding", params), models), release_sensitive=("dx",)
    ).release
    written, passes = _pass_by_pass(registry, table, bind_models(registry, models), params)
    tries = [(p["records"], p["published"], p.get("levels"), p["gs_factor"]) for p in local.details["passes"]]
    assert tries == passes
    assert any(published == 0 for _, published, _, _ in passes[:-1])  # some try at a higher factor was made
    assert (local.frame[list(QIS)].astype(str).to_numpy(dtype=object) == written).all()
