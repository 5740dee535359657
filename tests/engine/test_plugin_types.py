"""The six plugin interfaces are typed, and every registered plugin conforms to them: each base
class's methods carry full annotations, each hook returns classes of its kind, the run's context is
what the RunContext protocol says, every plugin's declarations have the types its base class
declares, and every method a plugin overrides takes the base class's parameters."""

from __future__ import annotations

import enum
import inspect
import types
import typing

import numpy as np
import pytest

import veil.engine as engine
from veil.engine import Algorithm, Chart, Context, Exporter, Importer, Metric, Plugin, PrivacyModel, RunContext
from veil.engine.model import hookspecs

BASES = {
    "algorithm": Algorithm,
    "privacy-model": PrivacyModel,
    "metric": Metric,
    "chart": Chart,
    "importer": Importer,
    "exporter": Exporter,
}
HOOKS = {
    "algorithm": "veil_register_algorithms",
    "privacy-model": "veil_register_privacy_models",
    "metric": "veil_register_metrics",
    "chart": "veil_register_charts",
    "importer": "veil_register_importers",
    "exporter": "veil_register_exporters",
}


def _names() -> dict:
    """What the annotations name, resolved (they are strings: ``from __future__ import annotations``)."""
    from matplotlib.figure import Figure

    from veil.engine.model import plugin

    names = {n: getattr(engine, n) for n in engine.__all__}
    names.update(vars(plugin))
    names.update(np=np, pd=__import__("pandas"), Figure=Figure, Path=__import__("pathlib").Path)
    names.update(
        Data=engine.Table | engine.BinaryMatrix | engine.SetValued, Model=engine.BoundModel | engine.CombinedModel
    )
    return names


def _interface_methods(base: type) -> dict[str, object]:
    """The public methods a base class declares itself (plain, class or static)."""
    return {
        name: member
        for name, member in vars(base).items()
        if not name.startswith("_") and isinstance(member, (types.FunctionType, classmethod, staticmethod))
    }


def _function(member):
    return member.__func__ if isinstance(member, (classmethod, staticmethod)) else member


@pytest.mark.parametrize("base", [Plugin, *BASES.values()], ids=lambda b: b.__name__)
def test_every_method_of_a_base_class_is_fully_annotated(base):
    names = _names()
    for name, member in _interface_methods(base).items():
        function = _function(member)
        signature = inspect.signature(function)
        unannotated = [p for p in list(signature.parameters)[1 if not isinstance(member, staticmethod) else 0 :]]
        unannotated = [p for p in unannotated if signature.parameters[p].annotation is inspect.Parameter.empty]
        assert unannotated == [], f"{base.__name__}.{name}: {unannotated} not annotated"
        assert signature.return_annotation is not inspect.Signature.empty, f"{base.__name__}.{name} returns ?"
        typing.get_type_hints(function, globalns=names)  # every name an annotation uses exists


def test_each_hook_returns_classes_of_its_kind():
    names = _names()
    for kind, hook in HOOKS.items():
        returned = typing.get_type_hints(getattr(hookspecs, hook), globalns=names)["return"]
        assert returned == list[type[BASES[kind]]], hook


def test_the_run_context_is_what_the_protocol_says():
    ctx = Context(3)
    assert isinstance(ctx, RunContext)
    assert isinstance(ctx.child(0.0, 0.5), RunContext)
    for name, member in vars(RunContext).items():
        if isinstance(member, types.FunctionType) and not name.startswith("_"):
            assert list(inspect.signature(getattr(Context, name)).parameters) == list(
                inspect.signature(member).parameters
            ), name


class _NotAnInt(Metric):
    name = "not-an-int"
    cost = "cheap"
    accepts = "table"  # a string where a tuple of forms is declared


def _wrong_types(cls: type, base: type, names: dict) -> list[str]:
    """The class attributes of ``cls`` whose values do not have the types ``base`` (and the classes
    above it) declare for them."""
    wrong = []
    for owner in reversed(base.__mro__):
        hints = typing.get_type_hints(owner, globalns=names) if owner is not object else {}
        for attribute, hint in hints.items():
            if typing.get_origin(hint) is not typing.ClassVar or not hasattr(cls, attribute):
                continue
            (declared,) = typing.get_args(hint)
            if not _has_type(getattr(cls, attribute), declared):
                wrong.append(f"{cls.__name__}.{attribute} = {getattr(cls, attribute)!r} is not {declared}")
    return wrong


def _has_type(value, declared) -> bool:
    origin, args = typing.get_origin(declared), typing.get_args(declared)
    if declared is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_has_type(value, a) for a in args)
    if declared is type(None):
        return value is None
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_has_type(v, args[0]) for v in value)
        return len(value) == len(args) and all(_has_type(v, a) for v, a in zip(value, args))
    if origin is dict:
        if not isinstance(value, dict):
            return False
        return not args or all(_has_type(k, args[0]) and _has_type(v, args[1]) for k, v in value.items())
    if origin is type:
        return isinstance(value, type)
    if declared is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(declared, type) and issubclass(declared, enum.Enum):
        try:
            declared(value)
        except ValueError:
            return False
        return True
    return isinstance(value, declared)


def test_a_declaration_of_the_wrong_type_is_found():
    assert _wrong_types(_NotAnInt, Metric, _names()) == ["_NotAnInt.accepts = 'table' is not tuple[str, ...]"]


def test_every_registered_plugin_declares_what_its_base_class_types(registry):
    names = _names()
    wrong = [
        w for kind, base in BASES.items() for cls in registry.classes(kind) for w in _wrong_types(cls, base, names)
    ]
    assert wrong == []


def _accepts_the_base_parameters(override, declared) -> str:
    """ "" when ``override`` can be called as ``declared`` is (the same parameters in the same order,
    any more with defaults), else why not."""
    mine, theirs = inspect.signature(override).parameters, inspect.signature(declared).parameters
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in mine.values()):
        return ""
    positional = [p.name for p in mine.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    wanted = [p.name for p in theirs.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if positional[: len(wanted)] != wanted:
        return f"takes {positional}, the interface {wanted}"
    extra = [p for p in list(mine.values())[len(wanted) :] if p.default is inspect.Parameter.empty]
    extra = [p for p in extra if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if extra:
        return f"needs {[p.name for p in extra]} beyond the interface's parameters"
    keywords = [p.name for p in theirs.values() if p.kind is p.KEYWORD_ONLY]
    if any(k not in mine for k in keywords) and not any(p.kind is p.VAR_KEYWORD for p in mine.values()):
        return f"lacks the keywords {keywords}"
    return ""


def test_every_method_a_registered_plugin_overrides_takes_the_interfaces_parameters(registry):
    problems = []
    for kind, base in BASES.items():
        interface = {**_interface_methods(Plugin), **_interface_methods(base)}
        if base is not PrivacyModel and issubclass(base, PrivacyModel):  # pragma: no cover - no such kind
            interface.update(_interface_methods(PrivacyModel))
        for cls in registry.classes(kind):
            for name, declared in interface.items():
                member = inspect.getattr_static(cls, name)
                if _function(member) is _function(declared):
                    continue
                if type(member) is not type(declared):
                    problems.append(f"{cls.__name__}.{name} is a {type(member).__name__}, the interface's not")
                    continue
                why = _accepts_the_base_parameters(_function(member), _function(declared))
                if why:
                    problems.append(f"{cls.__name__}.{name} {why}")
    assert problems == []


def test_an_override_with_other_parameters_is_found():
    def run(self, table, model, params, ctx):
        return None

    def compute(self, original, release, params, ctx, extra):
        return 0.0

    assert "takes" in _accepts_the_base_parameters(run, Algorithm.run)
    assert "needs ['extra']" in _accepts_the_base_parameters(compute, Metric.compute)
