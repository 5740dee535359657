"""Undo and redo for everything a user changes: roles, kinds, feature rules, the configuration and
the results list. Qt-free, over the panels' state objects.

Each user change becomes a step that knows how to take itself back. Dataset and configuration steps
keep the state before and after (the states are small: a table's schema shares its frame, rules and
choices are a few dicts). Results steps keep the records that were removed, so undoing "Clear
results" brings them back beside any result that arrived since. Opening other data starts over.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from .events import Event
from .config import ConfigState
from .dataset import DatasetState
from .runs import RunsState

CONFIG_FIELDS = ("model", "models", "methods", "selected", "metrics", "metric_params", "seed", "repeats", "binary")
LIMIT = 500


@dataclass
class Step:
    part: str  # "dataset", "config" or "results"
    before: object
    after: object
    text: str


class History:
    def __init__(self, dataset: DatasetState, config: ConfigState, runs: RunsState):
        self.dataset, self.config, self.runs = dataset, config, runs
        self.undo_steps: list[Step] = []
        self.redo_steps: list[Step] = []
        self.changed = Event()
        self._restoring = False
        self._version = self._clean = 0  # changes made, and how many there were at the last save
        self._last = {"dataset": self._dataset_state(), "config": self._config_state()}
        self._records = dict(runs._records)
        dataset.changed.connect(self._on_dataset)
        config.changed.connect(lambda *_: self._record("config", self._config_state(), "configuration"))
        runs.results_changed.connect(self._on_results)

    # -- what the menu shows --------------------------------------------------------------------
    def can_undo(self) -> bool:
        return bool(self.undo_steps)

    def can_redo(self) -> bool:
        return bool(self.redo_steps)

    def undo_text(self) -> str:
        return self.undo_steps[-1].text if self.undo_steps else ""

    def redo_text(self) -> str:
        return self.redo_steps[-1].text if self.redo_steps else ""

    @property
    def dirty(self) -> bool:
        """Whether something changed since the data was opened or the project saved."""
        return self._version != self._clean

    def mark_clean(self) -> None:
        self._clean = self._version
        self.changed.emit()

    def mark_dirty(self) -> None:
        self._version += 1
        self.changed.emit()

    def reset(self) -> None:
        """Start over (other data was opened): nothing to undo."""
        self._clean = self._version
        self.undo_steps.clear()
        self.redo_steps.clear()
        self._last = {"dataset": self._dataset_state(), "config": self._config_state()}
        self._records = dict(self.runs._records)
        self.changed.emit()

    # -- undo and redo --------------------------------------------------------------------------
    def undo(self) -> None:
        if self.undo_steps:
            step = self.undo_steps.pop()
            self._apply(step, step.before, undoing=True)
            self.redo_steps.append(step)
            self._version += 1
            self.changed.emit()

    def redo(self) -> None:
        if self.redo_steps:
            step = self.redo_steps.pop()
            self._apply(step, step.after, undoing=False)
            self.undo_steps.append(step)
            self._version += 1
            self.changed.emit()

    def _apply(self, step: Step, state, undoing: bool) -> None:
        self._restoring = True
        try:
            if step.part == "dataset":
                self._set_dataset(state)
            elif step.part == "config":
                self._set_config(state)
            else:
                self._set_results(step.before, back=undoing)
        finally:
            self._restoring = False
        if step.part != "results":
            self._last[step.part] = state
        self._records = dict(self.runs._records)

    # -- recording ------------------------------------------------------------------------------
    def _on_dataset(self, what: str) -> None:
        if what == "data":
            self.reset()
        else:
            self._record("dataset", self._dataset_state(), "feature rule" if what == "recipe" else "roles and kinds")

    def _record(self, part: str, now, text: str) -> None:
        if self._restoring or now == self._last[part]:
            return
        self._push(Step(part, self._last[part], now, text))
        self._last[part] = now

    def _on_results(self) -> None:
        now = dict(self.runs._records)
        removed = {k: v for k, v in self._records.items() if k not in now}
        if now.keys() != self._records.keys() and not self._restoring:
            self._version += 1  # new results are worth saving too
        self._records = now
        if removed and not self._restoring:  # a run finishing is not the user's change; clearing is
            self._push(Step("results", removed, None, "clear results"))

    def _push(self, step: Step) -> None:
        self._version += 1
        self.undo_steps.append(step)
        del self.undo_steps[:-LIMIT]
        self.redo_steps.clear()
        self.changed.emit()

    # -- the states -----------------------------------------------------------------------------
    def _dataset_state(self):
        d = self.dataset
        schema = d.table.schema if d.table is not None else None
        return (schema, dict(d.rules))

    def _set_dataset(self, state) -> None:
        schema, rules = state
        table = self.dataset.table
        if table is None or schema is None:
            return
        self.dataset.restore(schema, rules)

    def _config_state(self) -> dict:
        return copy.deepcopy({f: getattr(self.config, f) for f in CONFIG_FIELDS})

    def _set_config(self, state: dict) -> None:
        for f, value in copy.deepcopy(state).items():
            setattr(self.config, f, value)
        self.config.changed.emit()

    def _set_results(self, removed: dict, back: bool) -> None:
        if back:
            self.runs.restore_records(removed)
        else:
            self.runs.remove_records(removed)
