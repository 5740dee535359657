"""The chart panel's state: which chart plugin draws the results, with its parameters."""

from __future__ import annotations

from collections.abc import Mapping

from veil.engine import PluginCall

from .events import Event


class ChartState:
    """Which chart plugin draws the results, with its parameters (kept per chart)."""

    def __init__(self, name: str | None = None):
        self.name = name
        self.values: dict[str, dict] = {}
        self.changed = Event()

    def set(self, name: str, values: Mapping | None = None) -> None:
        self.name = name
        if values is not None:
            self.values[name] = dict(values)
        self.changed.emit()

    def call(self) -> PluginCall:
        return PluginCall(self.name, dict(self.values.get(self.name, {})))
