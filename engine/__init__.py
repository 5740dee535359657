"""Veil's engine: the Qt-free core, in layers that import only the ones below them.

=========  ===========================================================================
base       errors, validation, atomic files, the user's cache, citations
data       tables, binary matrices, set-valued records, recipes, hierarchies, readers
kernels    bit sets, containment, itemset mining, the longest-pattern search
model      releases and verdicts, groups, roles, risk, plugin classes, registry, parameters
run        jobs, runs, studies, projects, executors, the worker process, noise
release    export transaction, manifest, verification, assessment, report
=========  ===========================================================================

Plugins and the desktop use only the names exported here: the union of the layers' ``__all__``
(docs/design.md). Names load on first use (PEP 562), so ``veil --help`` imports only what it needs.
"""

from importlib.metadata import PackageNotFoundError, version
from types import ModuleType

from . import base, data, kernels, model, release, run

LAYERS = (base, data, kernels, model, run, release)

_HOME = {name: layer for layer in LAYERS for name in layer.__all__}
__all__ = sorted(_HOME) + ["__version__"]


def __getattr__(name: str):
    try:
        layer = _HOME[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(layer, name)
    if isinstance(value, ModuleType):  # a module imported by its path hides the name spelled like it
        value = layer.__getattr__(name)
    globals()[name] = value  # the next access is a plain lookup
    return value


def __dir__():
    return __all__


try:
    __version__ = version("veil")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"
