"""The plugin registry: a pluggy manager built by a factory (never a module-level global).

Built-in plugins come through the ``veil`` entry-point group exactly like third-party ones. A
built-in that fails to load fails loudly; a third-party plugin that fails is recorded in
:attr:`Registry.failures` and shown to the user, and Veil carries on without it. A plugin being
tried out without installing it (``veil --plugin MODULE``, or a list in the environment: :func:`plugins_to_try`)
is loaded by name or from a ``.py`` file's path, and one that fails stops with one line saying why.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import os
import re
import sys
import traceback
import types
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pluggy

from . import hookspecs
from ..base.errors import BadInput, PluginError
from .fits import Conversion, Fit, conversions, method_fit, metric_fit, model_fit
from .plugin import CHEAP, EXPENSIVE, KINDS, Judgement, Plugin, judgement_words, judgements

BUILTIN_DIST = "veil"
IN_PROCESS = "in-process"  # the engine's own executor service (veil.engine.run.executors.InProcessExecutor)
_HOOK_OF_KIND = {
    "algorithm": "veil_register_algorithms",
    "privacy-model": "veil_register_privacy_models",
    "metric": "veil_register_metrics",
    "chart": "veil_register_charts",
    "importer": "veil_register_importers",
    "exporter": "veil_register_exporters",
}
_WORD_OF_KIND = {
    "algorithm": "method",
    "privacy-model": "privacy model",
    "metric": "metric",
    "chart": "chart",
    "importer": "importer",
    "exporter": "export format",
}


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be loaded: where it came from and why."""

    source: str
    error: str
    details: str = ""


@dataclass(frozen=True)
class PluginInfo:
    cls: type
    source: str  # distribution name ("veil" for built-ins) or module name
    version: str

    @property
    def builtin(self) -> bool:
        return self.source == BUILTIN_DIST


class Registry:
    """What plugins are available, by kind and name."""

    def __init__(self, manager: pluggy.PluginManager):
        self.manager = manager
        self.failures: list[PluginFailure] = []
        # how to build the same registry elsewhere (the worker process): make_registry's arguments
        self.recipe: dict = {"entry_points": True, "modules": (), "extra": ()}
        self._by_kind: dict[str, dict[str, PluginInfo]] = {k: {} for k in KINDS}
        self._executors: dict[str, PluginInfo] = {}  # executor services, by name (veil_register_executors)

    def _collect(self, sources: dict[str, tuple[str, str]]) -> None:
        for kind, hook_name in _HOOK_OF_KIND.items():
            hook = getattr(self.manager.hook, hook_name)
            for impl in hook.get_hookimpls():
                src, version = sources.get(impl.plugin_name, (impl.plugin_name, ""))
                try:
                    classes = impl.function()
                except Exception as exc:  # a third-party hook that raises
                    self._fail(src, f"{hook_name} raised {exc!r}", traceback.format_exc())
                    continue
                for cls in classes or []:
                    self._add(kind, cls, src, version)
        for impl in self.manager.hook.veil_register_executors.get_hookimpls():
            src, version = sources.get(impl.plugin_name, (impl.plugin_name, ""))
            try:
                classes = impl.function()
            except Exception as exc:  # a third-party hook that raises
                self._fail(src, f"veil_register_executors raised {exc!r}", traceback.format_exc())
                continue
            for cls in classes or []:
                self._add_executor(cls, src, version)

    def _add_executor(self, cls, source: str, version: str) -> None:
        name = getattr(cls, "name", None)
        if not isinstance(cls, type) or not isinstance(name, str) or not name or name != name.strip():
            problem = f"{cls!r} is not an executor service class with a plain name"
        elif name == IN_PROCESS or name in self._executors:
            other = BUILTIN_DIST if name == IN_PROCESS else self._executors[name].source
            problem = f"executor name {name!r} is already taken by {other}"
        else:
            self._executors[name] = PluginInfo(cls, source, version)
            return
        self._fail(source, problem)

    def _add(self, kind: str, cls, source: str, version: str) -> None:
        problem = _problem(kind, cls)
        if problem is None and cls.name in self._by_kind[kind]:
            other = self._by_kind[kind][cls.name].source
            problem = f"{_WORD_OF_KIND[kind]} name {cls.name!r} is already taken by {other}"
        if problem:
            self._fail(source, problem)
            return
        self._by_kind[kind][cls.name] = PluginInfo(cls, source, version)

    def _fail(self, source: str, error: str, details: str = "") -> None:
        if source == BUILTIN_DIST:
            raise PluginError(f"built-in plugin failed: {error}\n{details}")
        self.failures.append(PluginFailure(source, error, details))

    # -- lookup ---------------------------------------------------------------------------------
    def names(self, kind: str) -> list[str]:
        return sorted(self._by_kind[kind])

    def preferred(self, kind: str) -> str:
        """The plugin of ``kind`` chosen by default: the first declaring ``preferred``, else the first by name."""
        names = self.names(kind)
        if not names:
            raise BadInput(f"no {_WORD_OF_KIND[kind]} is installed")
        return next((n for n in names if self._by_kind[kind][n].cls.preferred), names[0])

    def classes(self, kind: str) -> list[type]:
        return [self._by_kind[kind][n].cls for n in self.names(kind)]

    def info(self, kind: str, name: str) -> PluginInfo:
        try:
            return self._by_kind[kind][name]
        except KeyError:
            known = ", ".join(self.names(kind)) or "none"
            raise BadInput(f"unknown {_WORD_OF_KIND[kind]} {name!r}; available: {known}") from None

    def get(self, kind: str, name: str) -> type:
        return self.info(kind, name).cls

    def create(self, kind: str, name: str) -> Plugin:
        return self.get(kind, name)()

    def all(self) -> list[PluginInfo]:
        return [self._by_kind[k][n] for k in KINDS for n in self.names(k)]

    def algorithm(self, name: str):
        return self.create("algorithm", name)

    def executor_names(self) -> list[str]:
        """The executor services a run may choose: the engine's ``in-process`` and the plugins'."""
        return sorted([IN_PROCESS, *self._executors])

    def executor_class(self, name: str) -> type | None:
        """The class of the executor service a plugin registered under ``name`` (None for another name)."""
        info = self._executors.get(name)
        return None if info is None else info.cls

    # -- what fits what: by what plugins declare, never by name (see fits.py) ----------------------
    def _cls(self, kind: str, plugin) -> type:
        return self.get(kind, plugin) if isinstance(plugin, str) else plugin

    def conversions(self, data) -> tuple[Conversion, ...]:
        """The forms ``data`` is handed to a method in (:func:`~veil.engine.model.fits.conversions`)."""
        return conversions(data)

    def method_fit(self, algorithm, data) -> Fit:
        """Whether method ``algorithm`` (a class or a name) takes ``data``, and if not, why."""
        return method_fit(self._cls("algorithm", algorithm), data)

    def methods_for(self, data) -> list[type]:
        """The installed methods that take ``data`` (none before there is data), by name."""
        return [cls for cls in self.classes("algorithm") if method_fit(cls, data)]

    def model_fit(self, model, data=None, algorithm=None) -> Fit:
        """Whether privacy model ``model`` (a class or a name) can judge a release of ``data`` and,
        given ``algorithm``, the method works under it (see :class:`~veil.engine.Judgement`)."""
        model = self._cls("privacy-model", model)
        algorithm = None if algorithm is None else self._cls("algorithm", algorithm)
        mismatch = self.model_mismatch(algorithm, model) if algorithm is not None else ""
        return model_fit(model, data, algorithm, mismatch=mismatch)

    def models_for(self, algorithm=None, data=None) -> list[str]:
        """The installed privacy models ``algorithm`` works under that can judge ``data`` (either
        may be None: no condition)."""
        algorithm = None if algorithm is None else self._cls("algorithm", algorithm)
        return [n for n in self.names("privacy-model") if model_fit(self.get("privacy-model", n), data, algorithm)]

    def model_mismatch(self, algorithm: type, model) -> str:
        """Why ``algorithm`` cannot run under privacy model ``model`` (a class or an instance), as the
        end of a sentence about the method ("works under k-ac (a model judging …), not
        k-anonymity"); "" when it can."""
        if algorithm.works_under(model):
            return ""
        fitting = self.models_for(algorithm)
        kinds = judgement_words(algorithm.satisfies)
        if not fitting:
            return f"needs {kinds}, which {model.name} is not, and no installed privacy model is"
        judged = judgements(getattr(model, "judges", ()))
        able = [n for n in self.names("algorithm") if judgements(self.get("algorithm", n).satisfies) & judged]
        methods = f"; {model.name} is met by {' or '.join(able)}" if able else ""
        return f"works under {' or '.join(fitting)} ({kinds}), not {model.name}{methods}"

    def metric_fit(self, metric, algorithm, model=None) -> Fit:
        """Whether ``metric`` (a class or a name) says something of a run of ``algorithm`` under
        ``model`` (classes or names; ``model`` may be None), and if not, why."""
        model = None if model is None else self._cls("privacy-model", model)
        return metric_fit(self._cls("metric", metric), self._cls("algorithm", algorithm), model)

    def metrics_for(self, algorithm, model=None) -> list[type]:
        """The installed metrics that say something of a run of ``algorithm`` under ``model``."""
        return [cls for cls in self.classes("metric") if self.metric_fit(cls, algorithm, model)]

    def privacy_model(self, name: str):
        return self.create("privacy-model", name)

    def metric(self, name: str):
        return self.create("metric", name)

    def chart(self, name: str):
        return self.create("chart", name)

    def exporter(self, name: str):
        return self.create("exporter", name)


def _problem(kind: str, cls) -> str | None:
    if not isinstance(cls, type) or not issubclass(cls, Plugin):
        return f"{cls!r} is not a Veil plugin class"
    if cls.kind != kind:
        return f"{cls.__name__} is a {cls.kind or 'plugin of no kind'}, registered as {kind}"
    if not cls.valid_name():
        return f"{cls.__name__} has an invalid name {cls.name!r} (use kebab-case)"
    try:
        cls.param_specs()
    except Exception as exc:
        return f"{cls.__name__} declares its parameters wrongly: {exc}"
    if kind == "metric" and getattr(cls, "cost", None) not in (CHEAP, EXPENSIVE):
        return (
            f"metric {cls.__name__} ({cls.name!r}) declares no cost: set cost = CHEAP (computed by default for"
            f" every run it fits) or cost = EXPENSIVE (only when chosen), got {getattr(cls, 'cost', None)!r}"
        )
    declared = {"algorithm": getattr(cls, "satisfies", ()), "privacy-model": getattr(cls, "judges", ())}.get(kind, ())
    try:
        judgements(declared)
    except (TypeError, ValueError):
        known = ", ".join(j.value for j in Judgement)
        return (
            f"{cls.__name__} declares a kind of privacy judgement that does not exist in {declared!r} (known: {known})"
        )
    return None


def make_registry(*, entry_points: bool = True, modules: Iterable[object] = (), extra: Iterable[str] = ()) -> Registry:
    """Build a fresh registry.

    Parameters
    ----------
    entry_points : bool
        Load every plugin of the ``veil`` entry-point group (built-ins included).
    modules : iterable of modules or import paths
        Extra plugin modules to register (tests use this for plugins defined on the fly).
    extra : iterable of str
        Plugins being tried out without installing them (``veil --plugin``, or listed in the environment): each a
        module's import name or a ``.py`` file's path. One that fails to import, registers nothing
        or registers a plugin the registry refuses raises :class:`PluginError` in one line.
    """
    modules = tuple(modules)
    extra = tuple(extra)
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    registry = Registry(pm)
    sources: dict[str, tuple[str, str]] = {}
    if entry_points:
        named: dict[int, tuple[str, str]] = {}  # a distribution's name and version, its metadata parsed once
        for ep in md.entry_points(group=hookspecs.PROJECT):
            if ep.dist is None:
                dist, version = ep.module, ""
            else:
                if id(ep.dist) not in named:
                    meta = ep.dist.metadata
                    named[id(ep.dist)] = (meta["Name"], meta["Version"])
                dist, version = named[id(ep.dist)]
            try:
                module = ep.load()
                _register(pm, module, ep.name)
            except Exception as exc:
                registry._fail(
                    dist, f"entry point {ep.name!r} ({ep.value}) failed to load: {exc!r}", traceback.format_exc()
                )
                continue
            sources[ep.name] = (dist, version)
    for mod in modules:
        module = importlib.import_module(mod) if isinstance(mod, str) else mod
        name = getattr(module, "__name__", repr(module))
        try:
            _register(pm, module, name)
        except Exception as exc:
            registry._fail(name, f"plugin {name} failed to register: {exc!r}", traceback.format_exc())
            continue
        sources[name] = (name, "")
    for spec in extra:
        module = _try_out(spec)
        try:
            _register(pm, module, module.__name__)
        except Exception as exc:
            raise PluginError(f"plugin {spec} cannot be registered: {_in_words(exc)}") from None
        if not any(pm.parse_hookimpl_opts(module, n) for n in dir(module)):
            raise PluginError(f"plugin {spec} registers nothing: it has no @hookimpl veil_register_… function")
        sources[module.__name__] = (spec, "")
    registry._collect(sources)
    tried = [f for f in registry.failures if f.source in extra]
    if tried:
        raise PluginError(f"plugin {tried[0].source} is refused: {tried[0].error}")
    registry.recipe = {
        "entry_points": entry_points,
        "modules": tuple(_by_reference(m) for m in modules),
        "extra": extra,
    }
    return registry


def plugins_to_try(given: Iterable[str] | None = (), listed: str = "") -> tuple[str, ...]:
    """The plugins to load without installing them: those given (``veil --plugin``), then those
    ``listed`` (separated by ``os.pathsep``; the command line and the desktop pass the variable the
    plugin guide names), each once."""
    listed = [*(given or ()), *listed.split(os.pathsep)]
    return tuple(dict.fromkeys(s.strip() for s in listed if s.strip()))


def _try_out(spec: str) -> types.ModuleType:
    """Import a plugin module given by its import name or by a ``.py`` file's path; PluginError in
    one line if it cannot be. A file is imported as ``veil_tried.<stem>`` (its own name could shadow
    a library's), the same way in the worker process, so its classes pickle by reference."""
    try:
        if not spec.endswith(".py") and "/" not in spec and os.sep not in spec:
            return importlib.import_module(spec)
        path = Path(spec).expanduser().resolve()
        if not path.is_file():
            raise PluginError(f"plugin {spec}: no such file")
        name = "veil_tried." + re.sub(r"\W", "_", path.stem)
        loaded = sys.modules.get(name)
        if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == path:
            return loaded
        sys.modules.setdefault("veil_tried", types.ModuleType("veil_tried"))
        found = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    except PluginError:
        raise
    except Exception as exc:  # an import error, a syntax error, an exception the module raises
        raise PluginError(f"plugin {spec} failed to load: {_in_words(exc)}") from None


def _in_words(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = " ".join(str(exc).split("\n")[0].split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _by_reference(mod):
    """A plugin module as the worker process can import it again: its name (a plugin object, such
    as a test's class of hooks, pickles by reference itself)."""
    return mod.__name__ if isinstance(mod, types.ModuleType) else mod


def _register(pm: pluggy.PluginManager, module, name: str) -> None:
    if pm.is_registered(module):
        return
    pm.register(module, name=name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError:
        pm.unregister(module)
        raise
