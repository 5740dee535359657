"""Roles drive every method: which columns marked sensitive reach a release, said before and after.

A column marked sensitive may reach a release directly (a table method releasing it as a column) or
as binary features binarised from it (a feature-selection method choosing them). Neither may happen
without the user seeing it: :func:`exposed_sensitive` says before the run which sensitive columns
the method *could* release, :func:`released_sensitive` after it which ones it did; the manifest and
the report list them.
"""

from __future__ import annotations

from .data import BINARY, TABLE, form_of
from .table import Role


def _sensitive(original) -> list[str]:
    if original is None or form_of(original) != TABLE:
        return []
    return original.schema.by_role(Role.SENSITIVE)


def _sources(prepared) -> dict[str, str | None]:
    """Feature name → the column it was binarised from."""
    return {f.name: f.source for f in prepared.features} if form_of(prepared) == BINARY else {}


def exposed_sensitive(original, prepared, algorithm) -> list[str]:
    """The sensitive columns a run of ``algorithm`` on ``prepared`` could release: those binarised
    into features it may select, or, on a table, every one unless the method declares it withholds
    them (``withholds_sensitive``)."""
    sensitive = _sensitive(original)
    if not sensitive:
        return []
    if form_of(prepared) == BINARY:
        sources = set(_sources(prepared).values())
        return [c for c in sensitive if c in sources]
    if form_of(prepared) == TABLE and not algorithm.withholds_sensitive:
        return list(sensitive)
    return []


def may_release_sensitive(table, algorithm, *, on_features: bool) -> list[str]:
    """Before any data is converted (the desktop's configuration panel): the sensitive columns a run
    could release — on binary features every sensitive column the recipe binarises (a recipe's
    ``*`` takes them all), on a table every one unless the method withholds them."""
    sensitive = _sensitive(table)
    if not sensitive or (not on_features and algorithm.withholds_sensitive):
        return []
    return list(sensitive)


def released_sensitive(original, prepared, release) -> list[str]:
    """The sensitive columns that reached ``release``, as a column or through its features."""
    sensitive = _sensitive(original)
    if not sensitive:
        return []
    columns = set(release.frame.columns) | set(release.parts.get("sensitive", {}).columns
                                                if "sensitive" in release.parts else ())
    sources = _sources(prepared)
    reached = {sources.get(c, c) for c in columns}
    return [c for c in sensitive if c in reached]
