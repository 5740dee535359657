"""The sample-risk metrics of a release: the figures of the release's own keys, with the input's survey
weights and households, NaN where a figure has nothing to stand on."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veil.engine import PluginCall, Role, RunSpec, Table, execute, make_registry, sample_risk

REGISTRY = make_registry()
METRICS = ("individual-risk-max", "global-risk", "expected-reidentifications", "household-risk", "sample-uniques")


def survey(seed: int, n: int = 60) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "sex": rng.choice(["F", "M"], n),
            "w": rng.integers(1, 30, n).astype(float),
            "hh": rng.integers(0, 20, n),
        }
    )
    return Table.from_frame(
        frame,
        roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER, "w": Role.WEIGHT, "hh": Role.HOUSEHOLD},
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_metrics_of_a_release_are_its_keys_figures(seed):
    table = survey(seed)
    result = execute(
        REGISTRY, table, RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 3}), metrics=METRICS)
    )
    release = result.release
    assert "hh" not in release.frame.columns
    frame = release.frame[["age", "sex", "w"]].assign(hh=table.frame["hh"].to_numpy())
    expected = sample_risk(frame, ["age", "sex"], weight="w", household="hh")
    got = result.metrics
    assert got["individual-risk-max"] == pytest.approx(expected.risk.max())
    assert got["global-risk"] == pytest.approx(expected.risk.mean())
    assert got["expected-reidentifications"] == pytest.approx(expected.risk.sum())
    assert got["household-risk"] == pytest.approx(expected.household.mean())
    assert got["sample-uniques"] == 0.0  # 3-anonymity holds: no key is unique


def test_without_a_household_there_is_no_household_risk():
    table = survey(2).with_roles({"hh": Role.INSENSITIVE, "w": Role.INSENSITIVE})
    result = execute(
        REGISTRY, table, RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 2}), metrics=METRICS)
    )
    assert math.isnan(result.metrics["household-risk"])
    # without weights each record's risk is 1 / fk
    fk = result.release.frame.groupby(["age", "sex"], dropna=False)["age"].transform("size").to_numpy()
    assert result.metrics["global-risk"] == pytest.approx(np.mean(1 / fk))
