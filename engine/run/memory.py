"""Memory known before it is spent: every run estimates what it needs and refuses with a reason
rather than being killed by the operating system (docs/design.md, "Memory").

Each plugin declares what it costs beyond its input as a :class:`MemoryCost` of the data's
:class:`DataShape` (a plugin whose cost depends on its parameters overrides ``Plugin.memory``).
:func:`estimate_memory` adds up the input, the method and every metric of a run (metrics run one
after another, so the largest counts, not their sum); :func:`check_memory` compares the total with
what this process may still allocate (:func:`available_memory`: the machine's available memory and
the process's address-space limit, whichever is smaller) and raises :class:`BadInput` with one line
saying what it would need, what there is and what to change.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

from ..base.errors import BadInput
from ..data.forms import TABLE, describe_form, form_of
from ..data.table import Role
from ..model.plugin import CHEAP, METRIC_SAMPLE_ROWS, DataShape

HEADROOM = 1.25  # what a run needs is its estimate with a quarter more, for the interpreter and libraries
# matching released groups in a population (δ-presence, k-map, journalist risk): per population record
# and quasi-identifier: its value's code, its node at every level, keys while counted (measured on
# generated and on Adult-shaped populations: 22–62 bytes)
POPULATION_CELL = 80.0
# a table becoming a binary matrix or item sets: bytes per table cell at the conversion's peak (its
# sparse blocks, their join and the class labels as Python objects; measured about 21)
CONVERT_PER_CELL = 32
# an export writing the release and reading the file back to check it: bytes per released cell (items
# held, for item sets) and per byte of the frame (text cells cost more; measured about 34 a cell on a
# 0/1 release, 64 on Mondrian's intervals, whose frame is 6.3 bytes a cell)
EXPORT_PER_CELL = 32
EXPORT_PER_FRAME_BYTE = 8


@dataclass(frozen=True)
class MemoryEstimate:
    """What a run (or a stage of one) needs: ``parts`` as (what, bytes), ``total`` its peak."""

    parts: tuple[tuple[str, int], ...]
    total: int

    def largest(self) -> tuple[str, int]:
        return max(self.parts, key=lambda part: part[1])

    def text(self) -> str:
        what, size = self.largest()
        return f"about {format_bytes(self.total)} (the largest part: {what}, {format_bytes(size)})"


def shape_of(data, check=None) -> DataShape:
    """The shape a plugin's memory cost is a function of (a Table, BinaryMatrix or SetValued);
    ``check`` (cancellation) is called per column counted."""
    if form_of(data) == TABLE:
        frame = data.frame

        def distinct() -> int:  # counted only where a plugin's memory grows with it (DataShape)
            most = 0
            for column in frame.columns:
                if check is not None:
                    check()
                most = max(most, int(frame[column].nunique(dropna=False)))
            return most

        return DataShape(
            rows=data.n_rows,
            columns=len(frame.columns),
            cells=data.n_rows * len(frame.columns),
            max_distinct=distinct,
            nbytes=int(frame.memory_usage(deep=False).sum()),
        )
    columns = getattr(data, "n_features", None) or getattr(data, "n_items", 0)
    return DataShape(
        rows=data.n_rows, columns=int(columns), cells=int(data.nnz), max_distinct=2, nbytes=int(data.nbytes)
    )


def release_shape(release, data_shape: DataShape) -> DataShape:
    """The shape metrics of ``release`` work on: its records and cells (a set-valued release's items
    held, not records × items) and the groups it publishes, with the input's most distinct values
    (regions span them)."""
    frame = release.frame
    cells = release.n_rows * len(frame.columns)
    if release.sets is not None:
        cells += int(release.sets.nnz)
    published = release.group_values is not None and release.groups is not None
    return DataShape(
        rows=release.n_rows,
        columns=len(frame.columns),
        cells=cells,
        max_distinct=lambda: data_shape.max_distinct,  # counted when read (DataShape)
        nbytes=int(frame.memory_usage(deep=False).sum()),
        groups=len(release.group_values) if published else 0,
    )


def estimate_method(algorithm, params, data, shape: DataShape | None = None) -> MemoryEstimate:
    """What a run of ``algorithm`` (with ``params``) on ``data`` (in the form it accepts) needs;
    ``shape``: the data's, when known. With the population the data was drawn from, also the
    population held and the counting of its records in the released groups."""
    shape = shape or shape_of(data)
    method = int(algorithm.memory(shape, params))
    parts = (("the data", shape.nbytes), (f"method {algorithm.name}", method)) + population_parts(data)
    return MemoryEstimate(parts, int(HEADROOM * sum(size for _, size in parts)))


def population_parts(data) -> tuple[tuple[str, int], ...]:
    """The population's part of a run's memory: the population held, and matching its records
    (:data:`POPULATION_CELL` a record and quasi-identifier); nothing without a population."""
    population = getattr(data, "population", None)
    if population is None:
        return ()
    frame = population.frame
    quasi = set(data.schema.by_role(Role.QUASI_IDENTIFIER)) if hasattr(data, "schema") else set(frame.columns)
    columns = max(1, sum(1 for c in frame.columns if c in quasi))
    return (
        ("the population", int(frame.memory_usage(deep=False).sum())),
        ("matching the population", int(POPULATION_CELL * population.n_rows * columns)),
    )


def estimate_runs(registry, data, specs) -> MemoryEstimate:
    """Before anything runs (the desktop's plan): the largest need of the methods of ``specs`` on
    ``data`` as it is (before conversion to the form a method takes)."""
    shape = shape_of(data)
    estimates = []
    for spec in specs:
        algorithm = registry.algorithm(spec.method.name)
        estimates.append(estimate_method(algorithm, algorithm.params(spec.method.params), data, shape))
    return max(estimates, key=lambda e: e.total, default=MemoryEstimate((), 0))


def estimate_metrics(metrics, data, release, shape: DataShape | None = None) -> MemoryEstimate:
    """What computing ``metrics`` ((metric, params) pairs, one after another) on ``release`` of
    ``data`` needs at its peak: the data and release held, and the largest metric; ``shape``: the
    data's, when known."""
    shape = shape or shape_of(data)
    after = release_shape(release, shape)
    held = [("the data", shape.nbytes), ("the release", after.nbytes), *population_parts(data)]
    parts = list(held)
    for metric, metric_params in metrics:
        metric_shape = after if metric.cost == CHEAP else after.sampled(METRIC_SAMPLE_ROWS)
        parts.append((f"metric {metric.name}", int(metric.memory(metric_shape, metric_params))))
    largest = max((size for what, size in parts[len(held) :]), default=0)
    return MemoryEstimate(tuple(parts), int(HEADROOM * (sum(size for _, size in held) + largest)))


def estimate_conversion(data, form: str) -> MemoryEstimate:
    """What turning the table ``data`` into ``form`` needs at its peak (see CONVERT_PER_CELL): checked
    before the conversion, whose libraries may end the process rather than raise when memory runs out."""
    need = int(CONVERT_PER_CELL * data.n_rows * len(data.frame.columns))
    return MemoryEstimate(((f"turning the table into {describe_form(form)}", need),), need)


def estimate_export(release) -> MemoryEstimate:
    """What writing ``release`` and reading the written file back needs at its peak (see EXPORT_PER_CELL;
    the report's figures are not counted)."""
    frame = release.frame
    cells = release.n_rows * len(frame.columns) + (int(release.sets.nnz) if release.sets is not None else 0)
    need = int(EXPORT_PER_CELL * cells + EXPORT_PER_FRAME_BYTE * frame.memory_usage(deep=False).sum())
    return MemoryEstimate((("writing the release and reading it back", need),), need)


def available_memory() -> tuple[int, str]:
    """(bytes this process may still allocate, where the bound comes from)."""
    bounds = []
    free = _meminfo("MemAvailable")
    if free is not None:
        bounds.append((free, "available on this machine"))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1):
        used = _status("VmSize") or 0
        bounds.append((max(0, soft - used), f"left under this process's limit of {format_bytes(soft)}"))
    if not bounds:
        return (1 << 62), "no limit known"
    return min(bounds)


def check_memory(estimate: MemoryEstimate, available: tuple[int, str] | None = None) -> None:
    """BadInput, one line, when the run would need more memory than this process may allocate."""
    free, where = available or available_memory()
    if estimate.total <= free:
        return
    what, _ = estimate.largest()
    advice = (
        "leave out that metric or run it on a sample"
        if what.startswith("metric")
        else "use fewer records or columns, or a method that needs less"
    )
    raise BadInput(
        f"not enough memory: this run needs {estimate.text()}, and {format_bytes(free)} is {where}; {advice}"
    )


def format_bytes(size: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if abs(size) < 1000 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"  # pragma: no cover


def _meminfo(key: str) -> int | None:
    return _proc_field("/proc/meminfo", key)


def _status(key: str) -> int | None:
    return _proc_field(f"/proc/{os.getpid()}/status", key)


def _proc_field(path: str, key: str) -> int | None:
    """A ``key: N kB`` line of a /proc file, in bytes (None where there is no /proc)."""
    try:
        with open(path, encoding="ascii") as lines:
            for line in lines:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
