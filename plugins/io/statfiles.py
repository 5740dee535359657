"""The SPSS, Stata, SAS and R file importers (the formats, their labels and missing codes: docs/formats.md); the
readers themselves live in :mod:`._statfiles`, shared with the exporters of :mod:`.statfiles_export`."""

from __future__ import annotations

from veil.engine import hookimpl

from ._statfiles import SpssImporter, SpssPortableImporter, StataImporter, SasImporter, XportImporter, RImporter


@hookimpl
def veil_register_importers():
    return [SpssImporter, SpssPortableImporter, StataImporter, SasImporter, XportImporter, RImporter]
