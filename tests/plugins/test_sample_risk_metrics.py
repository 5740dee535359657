"""The sample-risk metrics of a release: the figures of the release's own keys, with its survey weights
and the household ids it holds (only when the user agreed to release them), NaN where a figure has
nothing to stand on."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veil.engine import BadInput, PluginCall, Role, RunSpec, Table, execute, make_registry, sample_risk, suda

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
    spec = RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 3}), metrics=METRICS)
    result = execute(REGISTRY, table, spec, release_household=True)
    release = result.release
    assert release.household == "hh" and release.roles()["household"] == "hh"
    expected = sample_risk(release.frame, ["age", "sex"], weight="w", household="hh")
    got = result.metrics
    assert got["individual-risk-max"] == pytest.approx(expected.risk.max())
    assert got["global-risk"] == pytest.approx(expected.risk.mean())
    assert got["expected-reidentifications"] == pytest.approx(expected.risk.sum())
    assert got["household-risk"] == pytest.approx(expected.household.mean())
    assert got["sample-uniques"] == 0.0  # 3-anonymity holds: no key is unique


def test_a_release_without_the_household_id_has_no_household_risk():
    """The household id withheld (the default): no record of the release can be joined to its
    household, so the metric has no figure, whatever the input's households."""
    result = execute(
        REGISTRY, survey(3), RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 3}), metrics=METRICS)
    )
    assert "hh" not in result.release.frame.columns and result.release.household is None
    assert math.isnan(result.metrics["household-risk"])
    assert not math.isnan(result.metrics["global-risk"])


def test_suppressed_cells_match_any_value():
    """A cell global recoding suppressed (written *) is a blank to the metrics, as the report and
    `veil risk` read the written file: a suppressed record matches every record."""
    table = survey(4, n=30)
    spec = RunSpec(
        PluginCall.parse("global-recoding:suppression=0.5"), PluginCall("k-anonymity", {"k": 4}), metrics=METRICS
    )
    result = execute(REGISTRY, table, spec)
    keys = result.release.frame[["age", "sex"]]
    assert (keys.astype(str) == "*").all(axis=1).any()
    blanked = keys.mask(keys.astype(str) == "*").assign(w=result.release.frame["w"])
    expected = sample_risk(blanked, ["age", "sex"], weight="w")
    assert result.metrics["global-risk"] == pytest.approx(expected.global_risk)
    assert result.metrics["individual-risk-max"] == pytest.approx(expected.risk.max())


def test_a_single_suppressed_record_is_no_sample_unique_to_suda():
    """Four records (30, F), four (40, M) and one (70, F) under 4-anonymity: global recoding
    suppresses the last, written * in both columns. As a blank it matches every record, so no record
    has a minimal sample unique and the highest DIS score is 0; read as a value of its own, * would
    make it unique (DIS 1: one unique and no key seen twice)."""
    frame = pd.DataFrame({"age": [30] * 4 + [40] * 4 + [70], "sex": ["F"] * 4 + ["M"] * 4 + ["F"]})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    spec = RunSpec(
        PluginCall.parse("global-recoding:suppression=0.2"),
        PluginCall("k-anonymity", {"k": 4}),
        metrics=("suda-dis-max",),
    )
    result = execute(REGISTRY, table, spec)
    written = result.release.frame[["age", "sex"]].astype(str)
    assert (written.iloc[-1] == "*").all() and (written.iloc[:-1] != "*").all().all()
    assert suda(written, ["age", "sex"]).dis.max() == pytest.approx(1.0)  # * as a value
    assert result.metrics["suda-dis-max"] == 0.0


def test_asking_to_release_a_household_needs_one():
    table = survey(5).with_roles({"hh": Role.INSENSITIVE})
    with pytest.raises(BadInput, match="no column is marked household"):
        execute(
            REGISTRY,
            table,
            RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 3})),
            release_household=True,
        )


def test_without_a_household_there_is_no_household_risk():
    table = survey(2).with_roles({"hh": Role.INSENSITIVE, "w": Role.INSENSITIVE})
    result = execute(
        REGISTRY, table, RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 2}), metrics=METRICS)
    )
    assert math.isnan(result.metrics["household-risk"])
    # without weights each record's risk is 1 / fk
    fk = result.release.frame.groupby(["age", "sex"], dropna=False)["age"].transform("size").to_numpy()
    assert result.metrics["global-risk"] == pytest.approx(np.mean(1 / fk))
