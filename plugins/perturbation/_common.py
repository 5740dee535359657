"""What the perturbation methods share: which columns a run perturbs, where its random numbers come
from, and the release it makes (docs/perturbation.md).

A perturbed release keeps every record and every released column; the columns a run perturbs hold
values drawn at random, the rest are the input's. It claims no privacy model by itself: a model named
for the run judges the values as published, and a release that fails it is refused like any other.
"""

from __future__ import annotations

import numpy as np

from veil.engine import PERTURBED_TABLE, BadInput, Kind, Perturbation, Release, Role

PROVIDES = "perturbed-values"  # what a perturbed release carries: the metrics of this area require it
PERTURBED_NUMBERS = "perturbed-numbers"  # … with numeric columns perturbed (noise, rank swapping)
PERTURBED_CATEGORIES = "perturbed-categories"  # … with categorical columns perturbed (PRAM)
SEEDED, ENTROPY = "seeded", "entropy"
CHUNK = 1 << 16  # records between two progress reports of a vectorised pass

# the column kinds each method perturbs when the run names no columns
NUMERIC_KINDS = (Kind.NUMERIC,)
CATEGORICAL_KINDS = (Kind.CATEGORICAL, Kind.BINARY)


def split_names(text: str) -> list[str]:
    """Column names separated by semicolons (commas separate a plugin's parameters on the command
    line)."""
    return [t.strip() for t in str(text or "").split(";") if t.strip()]


def chosen_columns(table, text: str, kinds, method: str, what: str) -> list[str]:
    """The columns a run perturbs: those named in ``text`` (semicolon-separated), else the
    quasi-identifiers of one of ``kinds``. BadInput names an unknown column, an identifier (never
    released), a column of the wrong kind, or an empty choice."""
    schema = table.schema
    named = split_names(text)
    if named:
        for name in named:
            if name not in schema.names:
                raise BadInput(f"{method}: no column named {name!r} (columns: {', '.join(schema.names)})")
            if schema[name].role is Role.IDENTIFIER:
                raise BadInput(f"{method}: {name!r} is an identifier, which is never released, so not perturbed")
            if kinds is NUMERIC_KINDS and schema[name].kind not in kinds:
                raise BadInput(
                    f"{method}: {name!r} is {schema[name].kind.value}, not numeric; {method} perturbs numbers"
                )
        return list(dict.fromkeys(named))
    found = [c.name for c in schema.columns if c.role is Role.QUASI_IDENTIFIER and c.kind in kinds]
    if not found:
        raise BadInput(
            f"{method} perturbs {what}: mark {what} quasi-identifiers, or name the columns ({method}:columns=A;B)"
        )
    return found


def generator(ctx) -> tuple[np.random.Generator, str]:
    """Where a run's random numbers come from: the run's seed in a study or test (the same seed makes
    the same release), the operating system's entropy in a release (``ctx.mode == "release"``), since
    a seed written in the manifest would let anyone draw the same noise again and take it off."""
    if getattr(ctx, "mode", "study") == "release":
        return np.random.default_rng(np.random.SeedSequence()), ENTROPY
    return ctx.rng, SEEDED


def random_source_words(source: str, ctx) -> str:
    if source == ENTROPY:
        return "the operating system's entropy (not reproducible; the run's seed was not used)"
    return (
        f"seeded: NumPy's PCG64 generator from the run's seed {ctx.seed} (reproducible; for studies, not for release)"
    )


def perturbed_release(
    table, frame, columns: list[str], method: str, details: dict, source: str, ctx, transitions=()
) -> Release:
    """The release of ``frame`` (every released column of ``table``, ``columns`` perturbed), declaring
    the columns and the ``transitions`` (:class:`~veil.engine.Transition`) it used."""
    schema = table.schema
    details = {
        "perturbation": {
            "method": method,
            "columns": list(columns),
            "random_source": source,
            "random_source_words": random_source_words(source, ctx),
        },
        **details,
    }
    notes = (
        f"{method}: {len(columns)} column{'s' if len(columns) != 1 else ''} perturbed ({', '.join(columns)}); "
        f"random numbers from {random_source_words(source, ctx)}",
        "perturbation makes no group of records alike: a privacy model named for the run judges the values "
        "as published, and the linkage risk measures how often a record's own perturbed record is its nearest",
    )
    sensitive = tuple(c for c in schema.by_role(Role.SENSITIVE) if c in frame.columns)
    return Release(
        PERTURBED_TABLE,
        frame,
        tuple(c for c in schema.by_role(Role.QUASI_IDENTIFIER) if c in frame.columns),
        target=schema.target,
        sensitive=sensitive,
        details=details,
        notes=notes,
        perturbation=Perturbation(tuple(columns), tuple(transitions)),
    )


def released_frame(table):
    """A copy of the table's released columns (every column but identifiers), rows renumbered."""
    return table.frame[table.released_columns()].reset_index(drop=True).copy()


def strata_ids(table, text: str, method: str) -> tuple[np.ndarray, list[str]]:
    """Every record's stratum (0 … S−1, by first appearance) from the columns named in ``text``, and
    the column names; one stratum when none is named. Missing values form their own stratum."""
    names = split_names(text)
    for name in names:
        if name not in table.schema.names:
            raise BadInput(f"{method}: no stratum column named {name!r}")
    n = table.n_rows
    if not names:
        return np.zeros(n, dtype=np.int64), []
    frame = table.frame[names].reset_index(drop=True)
    ids = frame.groupby(names, dropna=False, sort=False).ngroup().to_numpy().astype(np.int64)
    return ids, names
