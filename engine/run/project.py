"""Project files: the dataset (path and SHA-256), its schema, the recipe and the runs, as JSON.

Schema version 1::

    {"veil_project": 1,
     "data": {"path": "admissions.csv", "sha256": "…", "demo": false, "names": null},
     "schema": [{"name": "age", "kind": "numeric", "role": "quasi-identifier"}, …],
     "recipe": {"target": "readmitted_30d", "steps": […]} | null,
     "runs": [{"method": {"name": …, "params": {…}}, "model": {…} | null, "seed": 0, "metrics": […]}],
     "chosen": [{"method": …, …}],
     "release_sensitive": ["diagnosis"],
     "release_household": false,
     "item_sets": "diagnoses" | null}

``chosen`` are runs the user picked one by one rather than configured: a transformation chosen in a
run's solution space ("Release this transformation": the method's parameters fixed to that node).
``veil run`` runs them after ``runs``, so the project repeats the release the user chose.

``release_sensitive`` lists the columns marked sensitive the user agreed to release (asked once by
the desktop; ``veil run --release-sensitive`` adds to it); a run releasing any other is refused.
``release_household`` says the user agreed to release the column marked household (``veil run
--release-household``); without it no release holds the household id.

The data section may name the population the data was drawn from, ``"population": {"path":
"people.csv", "subset_column": null}`` (δ-presence, k-map judge against it), as a study's does.

``item_sets`` names the table's column of kind "item set" whose sets are the data the runs work on
(the desktop's "Anonymise these item sets"; absent or null: the table itself).

Paths are stored relative to the project file when they lie beside or below it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..data.forms import column_sets
from ..data.datasource import DataSource
from ..base.errors import BadInput
from ..base.io import sha256_file, write_text_atomic
from ..data.recipe import Recipe
from .runs import RunSpec
from ..data.table import Role, Schema, Table
from ..base.validate import get, in_file, read_json_object

PROJECT_VERSION = 1


@dataclass(frozen=True)
class Project:
    data: DataSource
    schema: Schema | None = None
    recipe: Recipe | None = None
    runs: tuple[RunSpec, ...] = ()
    sha256: str | None = None
    results: list = field(default_factory=list)
    release_sensitive: tuple[str, ...] = ()
    item_sets: str | None = None
    chosen: tuple[RunSpec, ...] = ()
    release_household: bool = False

    @property
    def all_runs(self) -> tuple[RunSpec, ...]:
        """What ``veil run`` repeats: the configured runs, then the chosen ones."""
        return (*self.runs, *self.chosen)

    def to_dict(self, base: Path | None = None) -> dict:
        data = self.data.to_dict()
        if data.get("path") and base is not None:
            data["path"] = _relative(data["path"], base)
        if data.get("population") and base is not None:  # resolved against the project's folder, as the data's
            data["population"] = {**data["population"], "path": _relative(data["population"]["path"], base)}
        data["sha256"] = self.sha256
        return {
            "veil_project": PROJECT_VERSION,
            "data": data,
            "schema": self.schema.to_dict() if self.schema else None,
            "recipe": self.recipe.to_dict() if self.recipe else None,
            "runs": [r.to_dict() for r in self.runs],
            "chosen": [r.to_dict() for r in self.chosen],
            "results": self.results,
            "release_sensitive": list(self.release_sensitive),
            "release_household": self.release_household,
            "item_sets": self.item_sets,
        }

    def save(self, path: str | os.PathLike) -> Path:
        p = Path(path)
        text = json.dumps(self.to_dict(p.parent.resolve()), indent=2, default=str) + "\n"
        return write_text_atomic(p, text)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Project:
        p = Path(path)
        return in_file(p, cls._from_dict, read_json_object(p, "project file"), p)

    @classmethod
    def _from_dict(cls, d: dict, p: Path) -> Project:
        if "veil_project" not in d:
            raise BadInput(f"{p} is not a Veil project file")
        version = get(d, "veil_project", int, where=p.name, required=True)
        runs_list = get(d, "runs", list, [], where=p.name)
        chosen_list = get(d, "chosen", list, [], where=p.name)
        sha256 = get(get(d, "data", dict, {}, where=p.name), "sha256", str, where="data")
        get(d, "schema", list, None, where=p.name)
        get(d, "recipe", dict, None, where=p.name)
        results = get(d, "results", list, [], where=p.name)
        agreed = get(d, "release_sensitive", list, [], where=p.name)
        item_sets = get(d, "item_sets", str, None, where=p.name)
        household = get(d, "release_household", bool, False, where=p.name)
        if not all(isinstance(c, str) for c in agreed):
            raise BadInput(f"{p.name}: release_sensitive must list column names")
        if version > PROJECT_VERSION:
            raise BadInput(f"{p} was written by a newer Veil (project version {d['veil_project']}); update Veil")
        data = DataSource.from_dict(d.get("data") or {}, p.parent.resolve())
        schema = Schema.from_dict(d["schema"]) if d.get("schema") else None
        recipe = Recipe.from_dict(d["recipe"]) if d.get("recipe") else None
        runs = tuple(RunSpec.from_dict(r) for r in runs_list)
        chosen = tuple(RunSpec.from_dict(r) for r in chosen_list)
        return cls(data, schema, recipe, runs, sha256, list(results), tuple(agreed), item_sets, chosen, household)

    def load_data(self, registry, *, as_sets: bool = True):
        """Read the dataset, check it is the one the project was made with, apply the schema; with
        ``item_sets`` (and ``as_sets``) the runs' data: that column's item sets."""
        data = self.data.load(registry)
        if self.sha256 and self.data.path and not self.data.demo:
            actual = sha256_file(self.data.path)
            if actual != self.sha256:
                raise BadInput(f"{self.data.path} has changed since the project was saved (SHA-256 differs)")
        if self.schema is not None and isinstance(data, Table):
            if self.schema.names != data.schema.names:
                raise BadInput("the project's schema does not match the data's columns")
            population = data.population
            data = Table(data.frame, self.schema, data.source, data.sha256)
            if population is not None:  # judged against the project's quasi-identifiers
                data = data.with_population(population)
                data.population.check_covers(data, data.schema.by_role(Role.QUASI_IDENTIFIER))
        if self.item_sets is not None and as_sets:
            if not isinstance(data, Table):
                raise BadInput(
                    f"the project takes item sets from column {self.item_sets!r}, but its data has no columns"
                )
            data = column_sets(data, self.item_sets)
        return data


def _relative(path: str, base: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(base))
    except ValueError:
        return str(Path(path).resolve())


def project_for(table_or_matrix, source: DataSource, runs=(), recipe=None) -> Project:
    schema = table_or_matrix.schema if isinstance(table_or_matrix, Table) else None
    sha = table_or_matrix.sha256 if isinstance(table_or_matrix, Table) else table_or_matrix.meta.get("sha256")
    return Project(source, schema, recipe, tuple(runs), sha)
