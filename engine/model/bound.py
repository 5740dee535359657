"""Privacy models bound to their parameters, alone or combined.

A run may name several privacy models (``--model k-anonymity:k=5 --model t-closeness:t=0.2``): the
release must satisfy every one of them. A method receives one object either way: a
:class:`BoundModel` for one model, a :class:`CombinedModel` for several. Both answer the same
questions, so a method never counts models:

* :meth:`check_groups` — each group's verdict, the AND of every group-judging model (Mondrian's
  "may this split stand?" asked once);
* :meth:`selection_constraint` — the rule a feature-selection method grows S under (every model's
  rule at once, on one shared partition);
* :meth:`verdicts` — one :class:`~veil.engine.Verdict` per model; :meth:`check` their conjunction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.errors import BadInput
from .params import params_to_dict
from .release import Verdict


@dataclass(frozen=True)
class BoundModel:
    """A privacy model together with its validated parameters."""

    plugin: object
    params: object

    @property
    def name(self) -> str:
        return self.plugin.name

    @property
    def models(self) -> tuple[BoundModel, ...]:
        return (self,)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.plugin.name,)

    @property
    def judges_groups(self) -> bool:
        return bool(self.plugin.judges_groups)

    @property
    def needs_sensitive(self) -> bool:
        return bool(self.plugin.needs_sensitive)

    @property
    def reads_weights(self) -> bool:
        return bool(getattr(self.plugin, "reads_weights", False))

    @property
    def combined_columns(self) -> int | None:
        """m when the model judges every combination of at most m quasi-identifiers on its own."""
        return self.plugin.combined_columns(self.params)

    def param(self, name: str, default=None):
        """A parameter of the model (e.g. ``k``), or ``default`` when it declares none."""
        return getattr(self.params, name, default)

    def check(self, release) -> Verdict:
        return self.plugin.check(release, self.params)

    def verdicts(self, release) -> list[Verdict]:
        return [self.check(release)]

    def check_groups(self, view):
        return self.plugin.check_groups(view, self.params)

    def selection_constraint(self, matrix):
        return self.plugin.selection_constraint(matrix, self.params)

    def to_dict(self) -> dict:
        return {"name": self.plugin.name, "params": params_to_dict(self.params)}


@dataclass(frozen=True)
class CombinedModel:
    """Several privacy models a release must all satisfy (their conjunction).

    ``plugin`` and ``params`` are the first model's, so a method written for one model keeps working
    on its first; :meth:`param` reads a parameter from the first model declaring it.
    """

    models: tuple[BoundModel, ...]

    def __post_init__(self):
        if len(self.models) < 2:
            raise ValueError("a combined model needs at least two models")
        names = [m.name for m in self.models]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice:
            raise BadInput(f"privacy model {twice!r} is named twice; give it once with the strictest parameters")

    @property
    def name(self) -> str:
        return " + ".join(m.name for m in self.models)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models)

    @property
    def plugin(self):
        return self.models[0].plugin

    @property
    def params(self):
        return self.models[0].params

    @property
    def judges_groups(self) -> bool:
        return any(m.judges_groups for m in self.models)

    @property
    def needs_sensitive(self) -> bool:
        return any(m.needs_sensitive for m in self.models)

    @property
    def reads_weights(self) -> bool:
        return any(m.reads_weights for m in self.models)

    def param(self, name: str, default=None):
        for m in self.models:
            if hasattr(m.params, name):
                return getattr(m.params, name)
        return default

    def verdicts(self, release) -> list[Verdict]:
        return [m.check(release) for m in self.models]

    def check(self, release) -> Verdict:
        return conjunction(self.verdicts(release))

    def check_groups(self, view):
        """The AND of every group-judging model's verdict; values are the first such model's."""
        from .groups import GroupVerdict

        judged = [m.check_groups(view) for m in self.models if m.judges_groups]
        if not judged:
            raise BadInput(f"none of {', '.join(self.names)} judges groups")
        ok = np.logical_and.reduce([g.ok for g in judged])
        first = judged[0]
        return GroupVerdict(first.values, ok, first.higher_is_safer)

    def selection_constraint(self, matrix):
        from ..kernels.containment import AllOf

        return AllOf([m.selection_constraint(matrix) for m in self.models])

    def to_dict(self) -> dict:
        return {"name": self.name, "models": [m.to_dict() for m in self.models]}


def bind_models(registry, calls) -> BoundModel | CombinedModel | None:
    """The models ``calls`` name, validated: None, one :class:`BoundModel` or a :class:`CombinedModel`."""
    bound = []
    for call in calls or ():
        plugin = registry.privacy_model(call.name)
        bound.append(BoundModel(plugin, plugin.params(call.params)))
    if not bound:
        return None
    return bound[0] if len(bound) == 1 else CombinedModel(tuple(bound))


def conjunction(verdicts: list[Verdict]) -> Verdict:
    """One verdict that holds when every one holds: the failing records of any model fail it.

    Its value is the first model's (what a study plots as ``privacy-value``); its message names each
    model's verdict; ``parts`` keeps them.
    """
    if len(verdicts) == 1:
        return verdicts[0]
    failing = np.unique(np.concatenate([np.asarray(v.failing_rows, dtype=np.int64) for v in verdicts]))
    message = "; ".join(f"{v.model} {v.message}" for v in verdicts)
    first = verdicts[0]
    return Verdict(
        " + ".join(v.model for v in verdicts),
        {v.model: v.params for v in verdicts},
        all(v.holds for v in verdicts),
        first.value,
        message,
        None,
        failing,
        parts=tuple(verdicts),
    )
