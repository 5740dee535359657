"""A minimal observer for the panels' Qt-free state objects."""

from __future__ import annotations

from collections.abc import Callable


class Event:
    """Callbacks connected here run, in order, each time the state changes."""

    def __init__(self):
        self._callbacks: list[Callable] = []

    def connect(self, callback: Callable) -> None:
        self._callbacks.append(callback)

    def emit(self, *args) -> None:
        for callback in list(self._callbacks):
            callback(*args)
