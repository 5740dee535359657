"""Every hook a Veil plugin can implement (pluggy project name ``veil``).

Each hook returns a list of plugin classes and does no work. A plugin module registers itself
through the ``veil`` entry-point group in its ``pyproject.toml``::

    [project.entry-points.veil]
    my-method = "my_package.my_method"

and implements one or more hooks::

    from veil.engine import Algorithm, hookimpl

    class MyMethod(Algorithm):
        name = "my-method"
        ...

    @hookimpl
    def veil_register_algorithms():
        return [MyMethod]

To try a module without installing it: ``veil --plugin my_method.py …`` (``make_registry(extra=…)``).
docs/examples/ holds one example of each kind (docs/design.md's plugin guide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .plugin import Algorithm, Chart, Exporter, Importer, Metric, PrivacyModel

PROJECT = "veil"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def veil_register_algorithms() -> list[type[Algorithm]]:
    """Return :class:`~veil.engine.plugin.Algorithm` subclasses.

    >>> @hookimpl
    ... def veil_register_algorithms():
    ...     return [GreedyHamDist]
    """


@hookspec
def veil_register_privacy_models() -> list[type[PrivacyModel]]:
    """Return :class:`~veil.engine.plugin.PrivacyModel` subclasses.

    >>> @hookimpl
    ... def veil_register_privacy_models():
    ...     return [KAnonymity]
    """


@hookspec
def veil_register_metrics() -> list[type[Metric]]:
    """Return :class:`~veil.engine.plugin.Metric` subclasses.

    >>> @hookimpl
    ... def veil_register_metrics():
    ...     return [FeatureCount]
    """


@hookspec
def veil_register_charts() -> list[type[Chart]]:
    """Return :class:`~veil.engine.plugin.Chart` subclasses.

    >>> @hookimpl
    ... def veil_register_charts():
    ...     return [MetricBars]
    """


@hookspec
def veil_register_importers() -> list[type[Importer]]:
    """Return :class:`~veil.engine.plugin.Importer` subclasses.

    >>> @hookimpl
    ... def veil_register_importers():
    ...     return [CsvImporter]
    """


@hookspec
def veil_register_exporters() -> list[type[Exporter]]:
    """Return :class:`~veil.engine.plugin.Exporter` subclasses.

    >>> @hookimpl
    ... def veil_register_exporters():
    ...     return [CsvExporter]
    """


@hookspec
def veil_register_executors() -> list[type]:
    """Return executor service classes (:class:`~veil.engine.Executor`): each has a ``name`` (what
    ``--executor NAME`` chooses; ``in-process`` is the engine's own) and is made with the user's
    keyword options (such as a cluster's ``master``). Registering one imports no backend: a class
    imports its library (pyspark, …) when it is made or used.

    >>> @hookimpl
    ... def veil_register_executors():
    ...     return [SparkExecutor]
    """
