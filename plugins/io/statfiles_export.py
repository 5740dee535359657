"""The SPSS, Stata, SAS and R file exporters (docs/formats.md); the writers live in :mod:`._statfiles`, shared with the
importers of :mod:`.statfiles`."""

from __future__ import annotations

from veil.engine import hookimpl

from ._statfiles import SpssExporter, StataExporter, XportExporter, RdsExporter


@hookimpl
def veil_register_exporters():
    return [SpssExporter, StataExporter, XportExporter, RdsExporter]
