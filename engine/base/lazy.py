"""Public names that load on first use (PEP 562), so ``veil --help`` imports only what it needs.

Each layer of the engine states its public names once, module by module, in its ``__init__``;
:func:`lazy_exports` turns that table into the package's ``__all__``, ``__getattr__`` and
``__dir__``. ``veil.engine`` itself is built from its layers' ``__all__``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(
    package: str, table: Mapping[str, Sequence[str]]
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``table`` maps a module of ``package`` to its public names; ``"alias=name"`` publishes
    ``name`` under another name. Returns ``(__all__, __getattr__, __dir__)`` for the package."""
    where: dict[str, tuple[str, str]] = {}
    for module, names in table.items():
        for entry in names:
            public, _, attr = entry.partition("=")
            if public in where:
                raise ValueError(f"{package}: {public!r} is published twice")
            where[public] = (module, attr or public)
    public_names = sorted(where)

    def __getattr__(name: str):
        try:
            module, attr = where[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        loaded = importlib.import_module(f"{package}.{module}")
        # importing a module makes it an attribute of its package, which would hide a public name
        # spelled like the module (``suda``, the function of ``model/suda.py``) from this function
        home = sys.modules[package].__dict__
        for public, (where_module, where_attr) in where.items():
            if where_module == module and public in table:
                home[public] = getattr(loaded, where_attr)
        return getattr(loaded, attr)

    def __dir__() -> list[str]:
        return list(public_names)

    return public_names, __getattr__, __dir__
