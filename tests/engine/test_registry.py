"""The registry: built-ins through entry points, third-party failures recorded, never a global."""

from __future__ import annotations

import types

import pytest

from veil.engine import Algorithm, BadInput, Metric, PluginError, hookimpl, make_registry
from veil.engine.model.registry import BUILTIN_DIST

BUILTINS = {
    "algorithm": {"all-features"},
    "privacy-model": {"k-anonymity"},
    "exporter": {"csv", "tsv", "xlsx", "parquet", "spmf"},
    "metric": {"auc", "sfc", "min-group-size"},
    "chart": {"metric-bars", "metric-lines", "privacy-utility"},
}


def _module(name, **hooks):
    mod = types.ModuleType(name)
    for hook, fn in hooks.items():
        setattr(mod, hook, hookimpl(fn))
    return mod


class Echo(Algorithm):
    name = "echo"
    title = "Echo"


def test_builtins_come_through_entry_points(registry):
    for kind, names in BUILTINS.items():
        assert names <= set(registry.names(kind)), kind
        for n in names:
            assert registry.info(kind, n).source == BUILTIN_DIST
    assert registry.failures == []


def test_each_registry_is_fresh():
    a = make_registry(modules=[_module("extra", veil_register_algorithms=lambda: [Echo])])
    b = make_registry()
    assert "echo" in a.names("algorithm") and "echo" not in b.names("algorithm")
    assert a.manager is not b.manager


def test_unknown_name_lists_what_exists(registry):
    with pytest.raises(BadInput, match="unknown method 'nope'; available: .*all-features"):
        registry.get("algorithm", "nope")


def _raises():
    raise RuntimeError("boom")


class NotAPlugin:
    name = "x"


class BadName(Algorithm):
    name = "Bad_Name"


class WrongKind(Metric):
    name = "wrong-kind"


class Clash(Algorithm):
    name = "all-features"


@pytest.mark.parametrize(
    "hook, classes, words",
    [
        ("veil_register_algorithms", _raises, "raised RuntimeError"),
        ("veil_register_algorithms", lambda: [NotAPlugin], "not a Veil plugin"),
        ("veil_register_algorithms", lambda: [BadName], "invalid name"),
        ("veil_register_algorithms", lambda: [WrongKind], "registered as algorithm"),
        ("veil_register_algorithms", lambda: [Clash], "already taken"),
    ],
)
def test_failing_third_party_plugin_is_recorded_not_fatal(hook, classes, words):
    reg = make_registry(modules=[_module("thirdparty", **{hook: classes})])
    assert len(reg.failures) == 1
    assert words in reg.failures[0].error and reg.failures[0].source == "thirdparty"
    assert "all-features" in reg.names("algorithm")
    assert reg.get("algorithm", "all-features") is not Clash


def test_misspelt_hook_is_caught_by_check_pending():
    mod = types.ModuleType("typo")
    mod.veil_register_algoritms = hookimpl(lambda: [Echo])
    reg = make_registry(modules=[mod])
    assert reg.failures and "failed to register" in reg.failures[0].error
    assert "echo" not in reg.names("algorithm")


def test_failing_builtin_fails_loudly(registry):
    with pytest.raises(PluginError, match="built-in plugin failed"):
        registry._add("algorithm", BadName, BUILTIN_DIST, "0")


# One module per registered kind: a module that registers a method and its metrics (say) is two
# plugins in one file. Shared code lives in an underscored helper module beside them.
def test_each_builtin_plugin_module_registers_one_kind():
    import importlib.metadata as md

    several = {}
    for ep in md.entry_points(group="veil"):
        if ep.dist is None or ep.dist.name != BUILTIN_DIST:
            continue
        module = ep.load()
        hooks = sorted(n for n in dir(module) if n.startswith("veil_register_"))
        assert hooks, f"entry point {ep.name!r} ({ep.value}) registers nothing"
        if len(hooks) > 1:
            several[ep.name] = hooks
    assert several == {}
