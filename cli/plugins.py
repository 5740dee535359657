"""``veil plugins``: list the installed plugins, their parameters and the plugins that failed to load."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from .common import EXIT_OK, Stop

NAME = "plugins"
HELP = "list the installed plugins"


def add_arguments(pl: argparse.ArgumentParser) -> None:
    pl.add_argument("--json", action="store_true", help="machine-readable output")


@dataclass(frozen=True)
class Options:
    """The flags of ``veil plugins``."""

    json: bool


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.base.papers import cite

    infos = registry.all()
    if options.json:
        entries = [
            {
                **i.cls.describe(),
                "citation": cite(i.cls.paper, full=True) or None,
                "source": i.source,
                "version": i.version,
            }
            for i in infos
        ]
        failures = [{"source": f.source, "error": f.error} for f in registry.failures]
        print(json.dumps({"plugins": entries, "failed": failures}, indent=2, default=str))
        return EXIT_OK
    width = max((len(i.cls.name) for i in infos), default=10)
    for info in infos:
        cls = info.cls
        paper = f"  [{cite(cls.paper)}]" if cls.paper else ""
        print(f"{cls.kind:<14} {cls.name:<{width}}  {cls.title}{paper}")
        for spec in cls.param_specs():
            bounds = spec.describe_bounds()
            print(
                f"{'':<14} {'':<{width}}    {spec.name} = {spec.default!r}"
                + (f"  ({bounds})" if bounds else "")
                + (f"  {spec.help}" if spec.help else "")
            )
    for f in registry.failures:
        print(f"FAILED         {f.source}: {f.error}")
    return EXIT_OK
