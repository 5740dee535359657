"""Metrics declare their cost, with no default: runs compute the cheap ones that fit by default; an
expensive metric of a large input runs on a stated, seeded sample; a metric that declares no cost is
refused at registration with a message naming it."""

from __future__ import annotations

import hashlib

import pytest

from veil.engine import (
    CHEAP,
    EXPENSIVE,
    Context,
    ExportOptions,
    Metric,
    PluginCall,
    PluginError,
    RunSpec,
    default_metrics,
    execute,
    export_release,
    hookimpl,
    load_demo,
    make_registry,
    read_manifest,
)


class RowsSeen(Metric):
    """Expensive by declaration (its name says nothing): the records it was given, and which."""

    name = "rows-seen-test"
    title = "Rows seen (test)"
    cost = EXPENSIVE
    seconds_per_cell = 1e-3

    def compute(self, original, release, params, ctx):
        ids = release.frame.index.size
        digest = hashlib.sha256(original.frame.to_csv().encode()).hexdigest()
        RowsSeen.last_digest = digest
        return float(ids)


class BinaryOnly(Metric):
    name = "binary-only-test"
    title = "Binary only (test)"
    cost = CHEAP
    fits_forms = ("binary",)

    def compute(self, original, release, params, ctx):
        return 0.0


class _Plugins:
    @staticmethod
    @hookimpl
    def veil_register_metrics():
        return [RowsSeen, BinaryOnly]


@pytest.fixture(scope="module")
def registry():
    return make_registry(modules=[_Plugins])


def test_defaults_are_the_cheap_metrics_that_fit(registry):
    for method in registry.names("algorithm"):
        algorithm = registry.get("algorithm", method)
        chosen = default_metrics(registry, method, "k-anonymity")
        assert chosen, method
        for name in chosen:
            cls = registry.get("metric", name)
            assert cls.cost == CHEAP and cls.fits(algorithm, registry.get("privacy-model", "k-anonymity"))
        assert "rows-seen-test" not in chosen
        assert ("binary-only-test" in chosen) == ("binary" in algorithm.accepts)
    assert "all-features" in registry.names("algorithm") and "sfc" in default_metrics(registry, "all-features")


def test_every_metric_declares_a_known_cost_and_expensive_ones_an_estimate(registry):
    for cls in registry.classes("metric"):
        assert cls.cost in (CHEAP, EXPENSIVE), cls.name
        if cls.cost == EXPENSIVE:
            assert cls.estimate_seconds(10_000, 12) > 0, cls.name
        else:
            assert cls.estimate_seconds(10_000, 12) == 0, cls.name
    assert any(cls.cost == EXPENSIVE for cls in registry.classes("metric") if cls.name != "rows-seen-test")


def test_an_expensive_metric_of_a_large_input_runs_on_a_seeded_sample(registry, monkeypatch, tmp_path):
    import veil.engine.run.runs as runs

    monkeypatch.setattr(runs, "METRIC_SAMPLE_ROWS", 300)
    table = load_demo()
    spec = RunSpec(PluginCall("all-features"), None, 7, ("rows-seen-test", "sfc"))
    result = execute(registry, table, spec, Context(7))
    assert result.metrics["rows-seen-test"] == 300
    assert result.samples == {"rows-seen-test": {"rows": 300, "of": table.n_rows, "seed": 7}}
    first = RowsSeen.last_digest
    execute(registry, table, spec, Context(7))
    assert RowsSeen.last_digest == first  # the same seed draws the same sample
    execute(registry, table, RunSpec(PluginCall("all-features"), None, 8, ("rows-seen-test",)), Context(8))
    assert RowsSeen.last_digest != first
    export_release(registry, result, tmp_path / "out", ExportOptions("csv"), report=None, ctx=Context(7))
    manifest = read_manifest(tmp_path / "out" / "manifest.json")
    assert manifest["metric_samples"] == {"rows-seen-test": {"rows": 300, "of": table.n_rows, "seed": 7}}
    assert manifest["metrics"]["sfc"] > 0


def test_a_cheap_metric_sees_every_record(registry, monkeypatch):
    import veil.engine.run.runs as runs

    monkeypatch.setattr(runs, "METRIC_SAMPLE_ROWS", 300)
    result = execute(registry, load_demo(), RunSpec(PluginCall("all-features"), None, 0, ("min-group-size",)))
    assert result.samples == {}


class Undeclared(Metric):
    """Declares no cost: it must not silently join every run's default metrics."""

    name = "undeclared-cost-test"
    title = "Undeclared cost (test)"

    def compute(self, original, release, params, ctx):
        return 0.0


class Misspelt(Undeclared):
    name = "misspelt-cost-test"
    cost = "cheapish"


class _Undeclared:
    @staticmethod
    @hookimpl
    def veil_register_metrics():
        return [Undeclared, Misspelt, RowsSeen]


def test_a_metric_without_a_declared_cost_is_refused_by_name():
    registry = make_registry(modules=[_Undeclared])
    assert "undeclared-cost-test" not in registry.names("metric")
    assert "misspelt-cost-test" not in registry.names("metric")
    assert "rows-seen-test" in registry.names("metric")  # the same module's declared metric still loads
    errors = [f.error for f in registry.failures]
    assert any("Undeclared ('undeclared-cost-test') declares no cost" in e for e in errors), errors
    assert any("Misspelt ('misspelt-cost-test') declares no cost" in e and "'cheapish'" in e for e in errors), errors
    for method in registry.names("algorithm"):
        assert "undeclared-cost-test" not in default_metrics(registry, method)


def test_the_base_metric_has_no_cost_to_inherit():
    assert "cost" not in vars(Metric) and not hasattr(Metric, "cost")
    assert Metric.__annotations__["cost"]  # declared as an interface, not given


def test_a_built_in_metric_without_a_cost_stops_the_registry(monkeypatch):
    import veil.plugins.evaluation.metrics as built_in

    monkeypatch.delattr(built_in.FeatureCount, "cost")
    with pytest.raises(PluginError, match=r"FeatureCount \('sfc'\) declares no cost"):
        make_registry()
