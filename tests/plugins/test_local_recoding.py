"""Local recoding: global recoding again on the records it suppressed. The first pass is global
recoding's own release, later passes publish suppressed records at their own levels, the release
holds its model from the file, and it suppresses no more records than global recoding."""

import numpy as np
import pandas as pd
import pytest

from veil.engine import PluginCall, RunSpec, Table, execute, make_registry


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
