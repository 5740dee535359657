"""Local recoding: global recoding again on the records it suppressed. The first pass is global
recoding's own release, later passes publish suppressed records at their own levels, the release
holds its model from the file, and it suppresses no more records than global recoding."""

import numpy as np
import pandas as pd
import pytest

from veil.engine import BadInput, PluginCall, RunSpec, Table, execute, make_registry


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
