"""Paper 001 on UCI Adult (45,222 records): the k = 5000 point of Figure 2(a) and the l/t/δ checks
of a Mondrian release of Adult, through the study recipe's data source."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.engine import PluginCall, RunSpec, Study, execute

RECIPE = Path(__file__).resolve().parents[2] / "resources" / "studies" / "paper001_k.json"


@pytest.fixture(scope="module")
def adult(datasets_dir):
    from veil.engine import make_registry

    registry = make_registry()
    return registry, Study.load(RECIPE).data.load(registry)


@pytest.mark.dataset
def test_adult_as_the_paper_reads_it(adult):
    _, table = adult
    assert table.n_rows == 45_222  # adult.data + adult.test without rows holding a missing value
    q = table.frame["occupation"].value_counts(normalize=True)
    assert q["Craft-repair"] == pytest.approx(0.1331, abs=5e-5)  # Q as printed in §5.1
    assert q["Armed-Forces"] == pytest.approx(0.0003, abs=5e-5)


@pytest.mark.dataset
def test_k_5000_lands_near_the_papers_point(adult):
    registry, table = adult
    # the paper cuts age at its median: the ARX age hierarchy the recipe attaches stays unused (numbers=median)
    method = PluginCall("mondrian", {"numbers": "median"})
    result = execute(
        registry, table, RunSpec(method, PluginCall("k-anonymity", {"k": 5000}), metrics=("ploss", "uloss"))
    )
    # paper: Ploss 0.086, Uloss 0.0288; ours 0.070, 0.0317 (docs/anonymisation.md explains the gap)
    assert result.metrics["ploss"] == pytest.approx(0.086, abs=0.02)
    assert result.metrics["uloss"] == pytest.approx(0.0288, abs=0.005)
    assert result.metrics["uloss"] < 0.04  # every anonymised point of Figure 2 lies below 0.04
