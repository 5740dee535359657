"""A run in two steps: a method's release, then a perturbation of it (docs/perturbation.md, "After a
generalisation").

sdcMicro's users recode the key variables until few records are unique and then perturb others (PRAM
on a categorical variable, noise on an income). Here a run's ``then`` names the second step: a method
that declares it perturbs values record for record (``Algorithm.perturbs``). It receives the first
step's release as a table — the released columns with the input's roles, a column whose released
values are no longer all numbers taken as categories — and may perturb only columns the first step
left as they were: perturbing a generalised or suppressed value would publish a value no step chose.
The privacy models judge the final release (``execute``), and the manifest and report name both steps.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..data.forms import TABLE
from ..data.table import Kind, Schema, Table
from ..model.release import GENERALISED_TABLE, PERTURBED_TABLE, Release

FOLLOWED = (GENERALISED_TABLE, PERTURBED_TABLE)  # releases of records, column for column, a perturbation may follow


def second_step(registry, first, call):
    """The second step's method and its parameters, or BadInput: it must declare that it perturbs
    values record for record, and the first must work on tables."""
    then = registry.algorithm(call.name)
    if not then.perturbs:
        able = [c.name for c in registry.classes("algorithm") if getattr(c, "perturbs", False)]
        raise BadInput(
            f"method {then.name!r} cannot run after another: a second step perturbs the first's release "
            f"record for record ({', '.join(able) or 'no installed method does'})"
        )
    if TABLE not in tuple(first.accepts):
        raise BadInput(
            f"method {then.name!r} perturbs a table's records, and {first.name!r} does not release a table's records"
        )
    return then, then.params(call.params)


def released_table(data: Table, release: Release) -> Table:
    """The first step's release as a table: its columns with the input's roles and hierarchies; a
    numeric column whose released values are not all numbers (intervals, ``*``) is categorical."""
    if release.kind not in FOLLOWED or release.parts or release.sets is not None:
        raise BadInput(f"a perturbation follows a release of records column for column; this one is a {release.kind}")
    frame = release.frame.reset_index(drop=True)
    columns = []
    for name in frame.columns:
        if name not in data.schema.names:
            raise BadInput(f"the first step released a column {name!r} the input does not have: nothing to perturb")
        column = data.schema[name]
        if column.kind is Kind.NUMERIC and not pd.api.types.is_numeric_dtype(frame[name].dtype):
            column = dataclasses.replace(column, kind=Kind.CATEGORICAL)
        columns.append(column)
    return Table(frame, Schema(tuple(columns)), data.source, data.sha256)


def changed_columns(data: Table, release: Release, columns) -> list[str]:
    """Which of ``columns`` the release holds with other values than the input's (generalised or
    suppressed): numbers compared as numbers, anything else as text."""
    if len(release.frame) != data.n_rows:
        return list(columns)
    changed = []
    for name in columns:
        before = data.frame[name].reset_index(drop=True)
        after = release.frame[name].reset_index(drop=True)
        numbers = [
            pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype) for s in (before, after)
        ]
        if all(numbers):
            same = np.array_equal(
                before.to_numpy(dtype=float, na_value=np.nan),
                after.to_numpy(dtype=float, na_value=np.nan),
                equal_nan=True,
            )
        else:
            present = before.notna()
            same = not before.isna().ne(after.isna()).any() and before[present].astype(str).equals(
                after[present].astype(str)
            )
        if not same:
            changed.append(name)
    return changed


def perturb_after(data: Table, first: Release, then, params, model, ctx, first_name: str) -> Release:
    """``first`` (the first step's release of ``data``) perturbed by ``then``: the first release with
    the perturbed values, the perturbation's declaration, both steps' details and notes. Groups the
    first step formed stay only when no quasi-identifier was perturbed."""
    table = released_table(data, first)
    second = then.run(table, model, params, ctx)
    perturbed = list(second.perturbation.columns) if second.perturbation is not None else []
    touched = changed_columns(data, first, perturbed)
    if touched:
        raise BadInput(
            f"{then.name} would perturb {', '.join(repr(c) for c in touched)}, which {first_name} generalised or "
            f"suppressed: after a generalisation, perturb columns it left as they were "
            f"({then.name}:columns=A;B names them)"
        )
    regrouped = bool(set(perturbed) & set(first.quasi_identifiers))
    return dataclasses.replace(
        first,
        frame=second.frame,
        details={**first.details, **second.details},
        notes=(*first.notes, *second.notes),
        perturbation=second.perturbation,
        groups=None if regrouped else first.groups,
        group_values=None if regrouped else first.group_values,
        solution_space=None,  # another node of the first step's search would not be perturbed
    )
