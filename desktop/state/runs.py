"""The runs panel's state: the queue of runs and the results of the finished ones, as a tidy
table for the charts.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from veil.engine import outcome_rows, results_table

from .config import PlannedRun
from .events import Event
from .tasks import Failure, RunOutcome

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"


@dataclass
class RunEntry:
    """One run in the queue, from queued to done, failed or cancelled."""

    id: int
    planned: PlannedRun
    status: str = QUEUED
    fraction: float = 0.0
    message: str = ""
    started: float | None = None
    ended: float | None = None
    failure: Failure | None = None
    outcome: RunOutcome | None = None

    @property
    def label(self) -> str:
        return self.planned.label

    @property
    def finished(self) -> bool:
        return self.status in (DONE, FAILED, CANCELLED)

    def elapsed(self, now: float | None = None) -> float | None:
        if self.started is None:
            return None
        return (self.ended if self.ended is not None else (now or time.monotonic())) - self.started

    def status_text(self) -> str:
        if self.status == RUNNING:
            return self.message or "running"
        if self.status == FAILED:
            return f"failed: {self.failure.message if self.failure else ''}"
        if self.status == DONE and self.outcome is not None and self.outcome.holds is False:
            return "done: the release fails its privacy model"
        return self.status


class RunsState:
    """The queue of runs and the results of the finished ones, as a tidy table for the charts.

    ``changed`` is emitted with an entry (its status changed) or None (entries added or removed);
    ``results_changed`` when a run's results arrived or were cleared. Progress is not announced:
    views poll it while runs are active.
    """

    def __init__(self):
        self.entries: list[RunEntry] = []
        self._records: dict[int, dict] = {}  # run id -> one row of the results table
        self._next = 1
        self.changed = Event()
        self.results_changed = Event()

    def add(self, planned: Iterable[PlannedRun]) -> list[RunEntry]:
        new = []
        for p in planned:
            new.append(RunEntry(self._next, p))
            self._next += 1
        self.entries += new
        self.changed.emit(None)
        return new

    def entry(self, run_id: int) -> RunEntry | None:
        return next((e for e in self.entries if e.id == run_id), None)

    @property
    def active(self) -> list[RunEntry]:
        return [e for e in self.entries if not e.finished]

    def start(self, entry: RunEntry) -> None:
        entry.status, entry.started = RUNNING, time.monotonic()
        self.changed.emit(entry)

    def progress(self, entry: RunEntry, fraction: float, message: str) -> None:
        """Record progress quietly: views show it on their own clock (see RunsModel.tick), so a
        run reporting 20 times a second does not cost 20 repaints a second."""
        entry.fraction, entry.message = fraction, message

    def finish(self, entry: RunEntry, outcome: RunOutcome) -> None:
        entry.status, entry.outcome, entry.fraction, entry.ended = DONE, outcome, 1.0, time.monotonic()
        self._records[entry.id] = _record(entry, outcome)
        self.changed.emit(entry)
        self.results_changed.emit()

    def fail(self, entry: RunEntry, failure: Failure) -> None:
        entry.status, entry.failure, entry.ended = FAILED, failure, time.monotonic()
        self.changed.emit(entry)

    def cancel(self, entry: RunEntry) -> None:
        entry.status, entry.ended = CANCELLED, time.monotonic()
        if entry.started is None:
            entry.started = entry.ended
        self.changed.emit(entry)

    def adopt(self, run_id: int, planned: PlannedRun, outcome: RunOutcome) -> RunEntry:
        """Bring back a finished run kept with a project (its release, solution space and export as
        they were), under its own number; the saved results row stays as it was saved."""
        entry = RunEntry(run_id, planned, DONE, 1.0, outcome=outcome)
        entry.started = entry.ended = time.monotonic()
        entry.ended += outcome.seconds if math.isfinite(outcome.seconds) else 0.0
        self.entries = sorted([e for e in self.entries if e.id != run_id] + [entry], key=lambda e: e.id)
        if run_id not in self._records:
            self._records[run_id] = _record(entry, outcome)
            self._records = dict(sorted(self._records.items()))
        self._next = max(self._next, run_id + 1)
        self.changed.emit(None)
        self.results_changed.emit()
        return entry

    def kept(self) -> dict[int, tuple[PlannedRun, RunOutcome]]:
        """The finished runs whose release can be kept with a project, by run number."""
        return {e.id: (e.planned, e.outcome) for e in self.exportable() if e.id in self._records}

    def reset(self) -> None:
        """Forget every run and result (other data was opened: they were runs on the data before).
        The runs of the new data are numbered from 1 again (a project's restore takes its own numbers)."""
        self.entries = []
        self._next = 1
        self._records.clear()
        self.changed.emit(None)
        self.results_changed.emit()

    def clear_finished(self) -> None:
        self.entries = [e for e in self.entries if not e.finished]
        self.changed.emit(None)

    def clear_results(self) -> None:
        self._records.clear()
        self.results_changed.emit()

    def restore_records(self, records: Mapping[int, dict]) -> None:
        """Bring back results that were cleared (undo), in run order."""
        self._records = dict(sorted({**self._records, **records}.items()))
        self.results_changed.emit()

    def remove_records(self, records: Iterable[int]) -> None:
        for run_id in list(records):
            self._records.pop(run_id, None)
        self.results_changed.emit()

    # -- results --------------------------------------------------------------------------------
    def results(self) -> pd.DataFrame:
        """The tidy result table (one row per run and metric), built by the engine's planner exactly
        as ``veil study`` builds it (:func:`~veil.engine.results_table`), over every batch so far."""
        records = list(self._records.values())
        rows = [row for r in records for row in r["rows"]]
        swept = list(dict.fromkeys(k for r in records for k in r["setting"]))
        return results_table(rows, swept)

    def sweep_keys(self) -> list[str]:
        """The swept parameters, then every other parameter whose value differs between runs: runs
        that differ in any of them are never taken as repeats of one another."""
        return list(self.results().attrs["sweep"])

    def metric_names(self) -> list[str]:
        return list(dict.fromkeys(row["metric"] for r in self._records.values() for row in r["rows"]))

    def table(self) -> tuple[list[str], list[list]]:
        """One row per finished run: run, method, swept values, seed, verdict, metrics, seconds. A
        metric no run could compute (it does not apply to any of their releases) has no column."""
        frame = self.results()
        keys = list(frame.attrs["sweep"])
        computed = set(frame.loc[frame["value"].notna(), "metric"]) if len(frame) else set()
        metrics = [m for m in self.metric_names() if m in computed]
        header = ["run", "method", "model", *keys, "seed", "verdict", *metrics, "seconds"]
        by_run = {run: part for run, part in frame.groupby("run", sort=False)}
        rows = []
        for r in self._records.values():
            part = by_run.get(r["run"])
            first = part.iloc[0] if part is not None else None
            values = dict(zip(part["metric"], part["value"])) if part is not None else {}
            rows.append(
                [
                    r["run"],
                    r["method"],
                    r["model"] or "none",
                    *[first[k] if first is not None else r["setting"].get(k) for k in keys],
                    r["seed"],
                    r["verdict"],
                    *[values.get(m) for m in metrics],
                    r["seconds"],
                ]
            )
        return header, rows

    def record(self, run_id: int) -> dict | None:
        return self._records.get(run_id)

    def exportable(self) -> list[RunEntry]:
        """Finished runs whose release can be written (it holds, or it makes no privacy claim)."""
        return [e for e in self.entries if e.outcome is not None and e.outcome.result is not None]

    def records(self) -> list[dict]:
        """The tidy results as JSON-ready rows (NaN becomes null) with each run's verdict, for a
        project file."""
        rows = []
        for row in self.results().to_dict("records"):
            row = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            rows.append({**row, "verdict": self._records[row["run"]]["verdict"]})
        return rows

    def restore(self, rows: Iterable[Mapping]) -> None:
        """Take back the results saved in a project (their releases are not kept: re-run to export)."""
        self._records.clear()
        fixed = {
            "run",
            "label",
            "method",
            "model",
            "repeat",
            "seed",
            "settings",
            "holds",
            "metric",
            "value",
            "seconds",
            "error",
            "verdict",
        }
        for row in rows:
            run_id = int(row["run"])
            setting = {k: v for k, v in row.items() if k not in fixed}
            rec = self._records.setdefault(
                run_id,
                {
                    "run": run_id,
                    "method": _steps(row),
                    "model": row.get("model"),
                    "setting": setting,
                    "seed": row.get("seed", 0),
                    "seconds": _nan(row.get("seconds")),
                    "verdict": row.get("verdict") or _verdict_text(row.get("holds"), row.get("error") or ""),
                    "rows": [],
                },
            )
            rec["rows"].append(
                {
                    "run": run_id,
                    "label": row.get("method"),
                    "method": row.get("method"),
                    "model": row.get("model"),
                    **setting,
                    "repeat": row.get("repeat", 0),
                    "seed": row.get("seed", 0),
                    "settings": row.get("settings"),
                    "holds": row.get("holds"),
                    "metric": row["metric"],
                    "value": _nan(row.get("value")),
                    "seconds": _nan(row.get("seconds")),
                    "error": row.get("error") or "",
                }
            )
        self._next = max([self._next, *[k + 1 for k in self._records]])
        self.results_changed.emit()


def _steps(row: Mapping) -> str | None:
    """A kept result's method, and its second step when its settings have one."""
    try:
        then = (json.loads(row.get("settings") or "{}").get("then") or {}).get("name")
    except (TypeError, ValueError, AttributeError):
        then = None
    return f"{row.get('method')} then {then}" if then else row.get("method")


def _nan(value) -> float:
    return float("nan") if value is None else float(value)


def _verdict_text(holds, message: str) -> str:
    if holds is None:
        return "no privacy claim"
    return ("holds: " if holds else "fails: ") + message.removeprefix("holds: ").removeprefix("fails: ")


def _record(entry: RunEntry, outcome: RunOutcome) -> dict:
    """A finished run as the results keep it: the engine's rows of it (:func:`~veil.engine.outcome_rows`)
    and what the run table shows beside them."""
    spec, planned = entry.planned.spec, entry.planned
    message = outcome.verdict if outcome.holds is not None else ""
    return {
        "run": entry.id,
        "method": spec.method.name + (f" then {spec.then.name}" if spec.then is not None else ""),
        "model": spec.models_text,
        "setting": dict(planned.setting),
        "seed": spec.seed,
        "seconds": outcome.seconds,
        "verdict": _verdict_text(outcome.holds, message),
        "rows": outcome_rows(entry.id, spec, outcome, dict(planned.setting), planned.repeat, planned.data),
    }
