"""The report's method line lists the parameters that apply to the run: not a cluster's parameters
for a run made here, nor a parameter left empty."""

from __future__ import annotations

from veil.engine import make_registry
from veil.engine.release.report import _parameters, _released

REGISTRY = make_registry()


def test_a_run_made_here_does_not_list_the_cluster_s_parameters():
    params = {
        "metric": "loss",
        "suppression": 0.05,
        "levels": "",
        "executor": "local",
        "spark_master": "local[*]",
        "part_format": "csv",
    }
    cls = REGISTRY.get("algorithm", "global-recoding")
    assert cls.applicable_params(params) == {"metric": "loss", "suppression": 0.05}
    manifest = {
        "method": {"name": "global-recoding", "params": params},
        "privacy_model": {},
        "output": {"path": "r.csv"},
    }
    for section in (_parameters(REGISTRY, manifest), _released(REGISTRY, manifest)):
        text = " ".join(str(b.content) for b in section.blocks)
        assert "suppression = 0.05" in text
        assert not any(word in text for word in ("executor", "spark_master", "part_format", "levels ="))


def test_a_cluster_s_run_lists_them():
    params = {"levels": "age:1", "executor": "spark", "spark_master": "spark://h:7077", "part_format": "parquet"}
    assert REGISTRY.get("algorithm", "global-recoding").applicable_params(params) == params
