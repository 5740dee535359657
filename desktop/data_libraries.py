"""The data libraries the desktop loads once its window is on screen: a Qt-free module of its own,
so the launcher (which imports the window's module when the desktop opens) and the window's start
(:mod:`.app`) import nothing of each other."""

from __future__ import annotations


def import_data_libraries() -> None:
    """The data libraries the window's panels need. The desktop imports them after its window is on
    screen (``app.Starter``), on a thread; PySide6's ``__feature__`` import hook reads the source of
    every module imported after Qt, which makes them dearer there (docs/benchmarks.md (l))."""
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    import scipy.sparse  # noqa: F401
