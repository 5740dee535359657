"""Roles drive every method: which columns marked sensitive reach a release, said before and after.

A column marked sensitive may reach a release directly (a table method releasing it as a column) or
as binary features binarised from it (a feature-selection method choosing them). Neither may happen
without the user seeing it: :func:`exposed_sensitive` says before the run which sensitive columns
the method *could* release, :func:`released_sensitive` after it which ones it did; the manifest and
the report list them.
"""

from __future__ import annotations

from ..data.forms import BINARY, TABLE, form_of
from ..data.table import Role


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


def may_release_sensitive(table, algorithm, *, on_features: bool, recipe=None) -> list[str]:
    """Before any data is converted (the desktop's configuration panel): the sensitive columns a run
    could release — on binary features every sensitive column the recipe binarises (a recipe's
    ``*`` takes them all; without a recipe, every one), on a table every one unless the method
    withholds them."""
    sensitive = _sensitive(table)
    if not sensitive or (not on_features and algorithm.withholds_sensitive):
        return []
    if on_features and recipe is not None:
        binarised = {s.column for s in recipe.steps}
        if "*" not in binarised:
            return [c for c in sensitive if c in binarised]
    return list(sensitive)


def protected_sensitive(table, algorithm, model) -> list[str]:
    """The sensitive columns a method releases by design as the attributes its privacy model judges:
    a method that ``releases_sensitive`` (Mondrian, Anatomy, global recoding) under a model that
    ``needs_sensitive`` (l-diversity, t-closeness, δ-disclosure) protects every column marked
    sensitive, since the model judges each one and a release failing any is never written."""
    if model is None or not algorithm.releases_sensitive or not model.needs_sensitive:
        return []
    return list(_sensitive(table))


def unacknowledged_sensitive(table, columns, algorithm, model, acknowledged=()) -> list[str]:
    """Of the sensitive ``columns`` a run releases (or may), those the user must acknowledge
    before a release is made: all but the ones in ``acknowledged`` and the one a privacy model
    protects (:func:`protected_sensitive`)."""
    allowed = set(acknowledged) | set(protected_sensitive(table, algorithm, model))
    return [c for c in columns if c not in allowed]


def check_acknowledged(table, acknowledged) -> None:
    """Refuse an acknowledgement naming a column that is not marked sensitive (a typo would
    otherwise pass unnoticed)."""
    from ..base.errors import BadInput

    sensitive = _sensitive(table)
    for column in acknowledged:
        if column not in sensitive:
            marked = (
                f"the columns marked sensitive are {', '.join(sensitive)}"
                if sensitive
                else "no column is marked sensitive"
            )
            raise BadInput(f"cannot acknowledge releasing {column!r}: it is not a column marked sensitive ({marked})")


def refusal(columns, method: str, *, before: bool, by_chance: bool = False) -> str:
    """The one-line reason a run releasing unacknowledged sensitive ``columns`` is refused (``by_chance``:
    before a randomised method's run, whose choice of features may or may not include them)."""
    s = "s" if len(columns) > 1 else ""
    names = ", ".join(columns)
    what = (
        f"method {method!r} may release the column{s} marked sensitive {names}: it picks features made from "
        f"{'them' if s else 'it'} at random, so this is asked before the run, not after; nothing was run"
        if by_chance
        else f"method {method!r} releases the column{s} marked sensitive {names} as {'they are' if s else 'it is'}"
        if before
        else f"the release of {method!r} contains the column{s} marked sensitive {names} "
        f"(as features or values); nothing was released"
    )
    return (
        f"{what}: acknowledge it to release it anyway (--release-sensitive {','.join(columns)}, or "
        f"\"release_sensitive\" in the project file), or change the column's role or leave it out of the "
        f"features"
    )


def released_sensitive(original, prepared, release) -> list[str]:
    """The sensitive columns that reached ``release``, as a column or through its features."""
    sensitive = _sensitive(original)
    if not sensitive:
        return []
    columns = set(release.frame.columns) | set(
        release.parts.get("sensitive", {}).columns if "sensitive" in release.parts else ()
    )
    sources = _sources(prepared)
    reached = {sources.get(c, c) for c in columns}
    return [c for c in sensitive if c in reached]
