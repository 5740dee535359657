"""What the panels' states make together: a project file's content, and the sensitive columns a
planned run may release that the user has not agreed to yet.
"""

from __future__ import annotations

import dataclasses

from veil.engine import (
    BadInput,
    Project,
    Role,
    bind_models,
    may_release_sensitive,
    prepare,
    unacknowledged_sensitive,
)

from .config import ConfigState
from .dataset import DatasetState
from .runs import RunsState


def project_of(registry, dataset: DatasetState, config: ConfigState, runs: RunsState, chosen=()) -> Project:
    """A project file's content: the data's source and schema, the recipe, the planned runs, the
    runs ``chosen`` one by one (a transformation released from a solution space) and the results so
    far. A configuration that cannot run yet is saved without runs."""
    if dataset.data is None or dataset.source is None:
        raise BadInput("there is no data to save a project of")
    table = dataset.table if dataset.table is not None else dataset.origin  # item sets keep their table's schema
    try:
        planned = config.plan(registry, dataset.data, dataset.recipe())
    except BadInput:
        planned = []
    sha = table.sha256 if table is not None else dataset.data.meta.get("sha256")
    source = dataclasses.replace(dataset.source, roles={}, kinds={})
    item_sets = dataset.data.meta.get("item_column") if dataset.origin is not None else None
    return Project(
        source,
        table.schema if table is not None else None,
        dataset.recipe(),
        tuple(p.spec for p in planned),
        None if source.demo else sha,
        runs.records(),
        tuple(sorted(dataset.release_sensitive)),
        item_sets,
        tuple(chosen),
        release_household=dataset.release_household,
    )


def input_key(dataset: DatasetState) -> str | None:
    """What a kept result was made from: the SHA-256 of the data, and of the population when one is
    open (k-map and δ-presence judge against it). None when the data has no hash to compare."""
    table = dataset.table if dataset.table is not None else dataset.origin
    sha = table.sha256 if table is not None else (dataset.data.meta.get("sha256") if dataset.data else None)
    if not sha:
        return None
    population = dataset.population
    return sha if population is None else f"{sha}+population:{population.sha256}"


def kept_form(outcome):
    """A finished run's outcome as a project keeps it: without the form its method ran on when that
    was made from the input (a table's binary features), which reopening makes again (:func:`restored_form`);
    the input itself is left out by the engine (:func:`~veil.engine.input_parts`)."""
    result = outcome.result
    if result is None or result.data is result.original or result.original is None:
        return outcome
    return dataclasses.replace(outcome, result=dataclasses.replace(result, data=None))


def restored_form(registry, outcome):
    """A kept outcome with the form its method ran on made again from its input, as the run made it."""
    result = outcome.result
    if result is None or result.data is not None or result.original is None:
        return outcome
    algorithm = registry.get("algorithm", result.spec.method.name)
    return dataclasses.replace(
        outcome, result=dataclasses.replace(result, data=prepare(result.original, algorithm, result.spec.recipe))
    )


def sensitive_to_confirm(registry, dataset: DatasetState, config: ConfigState) -> list[str]:
    """The columns marked sensitive the planned runs may release, which no chosen privacy model
    protects and the user has not agreed to release yet (asked once, remembered in the project)."""
    table = dataset.table
    if table is None or not table.schema.by_role(Role.SENSITIVE):
        return []
    try:
        planned = config.plan(registry, table, dataset.recipe())
    except BadInput:
        return []  # the run itself explains what to fix
    columns: list[str] = []
    for p in planned:
        cls = registry.get("algorithm", p.spec.method.name)
        may = may_release_sensitive(table, cls, on_features=p.spec.recipe is not None, recipe=p.spec.recipe)
        model = bind_models(registry, p.spec.models)
        columns += [
            c for c in unacknowledged_sensitive(table, may, cls, model, dataset.release_sensitive) if c not in columns
        ]
    return columns
