"""How useful a release still is, column by column: ARX's utility perspective (docs/reference.md,
"Utility of a release").

For every released column: the input's distribution and the release's (at the released
generalisation, suppressed records counted apart), summary statistics of both, and the loss of the
column; and for any two columns, their contingency table before and after. The desktop's Utility tab
and ``veil utility`` show exactly these figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..data.generalised import SUPPRESSED, Interval, NodeValue, format_value, parse_value
from ..data.table import Kind

SUPPRESSED_TEXT = "*"


@dataclass(frozen=True)
class ColumnUtility:
    """One released column: ``before`` and ``after`` map each value (as text, in order) to its
    number of records; ``suppressed`` records are counted apart (written ``*`` or not released at
    all); ``summary_before`` / ``summary_after`` are the statistics named in docs/reference.md;
    ``loss`` is the column's share of the `loss` metric (0 exact, 1 suppressed)."""

    name: str
    numeric: bool
    generalised: bool
    before: pd.Series
    after: pd.Series
    suppressed: int
    summary_before: dict
    summary_after: dict
    loss: float


@dataclass(frozen=True)
class Utility:
    """The released columns' utility, in the release's column order."""

    rows_before: int
    rows_after: int
    columns: dict[str, ColumnUtility] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "rows_before": self.rows_before,
            "rows_after": self.rows_after,
            "columns": {
                name: {
                    "numeric": c.numeric,
                    "generalised": c.generalised,
                    "suppressed_records": c.suppressed,
                    "attribute_loss": c.loss,
                    "summary_before": c.summary_before,
                    "summary_after": c.summary_after,
                    "before": {str(k): int(v) for k, v in c.before.items()},
                    "after": {str(k): int(v) for k, v in c.after.items()},
                }
                for name, c in self.columns.items()
            },
        }

    def summary_table(self) -> pd.DataFrame:
        """One row per column, statistic and side (``before``/``after``): the numbers to export as CSV."""
        rows = []
        for name, c in self.columns.items():
            rows.append({"column": name, "statistic": "attribute loss", "before": 0.0, "after": c.loss})
            rows.append({"column": name, "statistic": "suppressed records", "before": 0, "after": c.suppressed})
            for key in dict.fromkeys([*c.summary_before, *c.summary_after]):
                rows.append(
                    {
                        "column": name,
                        "statistic": key,
                        "before": c.summary_before.get(key),
                        "after": c.summary_after.get(key),
                    }
                )
        return pd.DataFrame(rows, columns=["column", "statistic", "before", "after"])

    def write_csv(self, folder, pair: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> list:
        """Write ``summary.csv``, ``distributions.csv`` and, given a pair's tables (:func:`contingency`),
        ``contingency-before.csv`` and ``contingency-after.csv`` into ``folder`` (each file atomically)."""
        from pathlib import Path

        from ..base.io import write_text_atomic

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written = [
            write_text_atomic(folder / "summary.csv", self.summary_table().to_csv(index=False)),
            write_text_atomic(folder / "distributions.csv", self.distribution_table().to_csv(index=False)),
        ]
        for side, table in zip(("before", "after"), pair or ()):
            written.append(write_text_atomic(folder / f"contingency-{side}.csv", table.to_csv()))
        return written

    def distribution_table(self) -> pd.DataFrame:
        """One row per column, side and value with its records (suppressed ones as value ``*``)."""
        rows = []
        for name, c in self.columns.items():
            rows += [
                {"column": name, "side": "before", "value": str(k), "records": int(v)} for k, v in c.before.items()
            ]
            rows += [{"column": name, "side": "after", "value": str(k), "records": int(v)} for k, v in c.after.items()]
            if c.suppressed:
                rows.append({"column": name, "side": "after", "value": SUPPRESSED_TEXT, "records": c.suppressed})
        return pd.DataFrame(rows, columns=["column", "side", "value", "records"])


def released_value(value, numeric: bool):
    """A released cell as a typed value: an Interval, SUPPRESSED, a number (numeric columns) or text."""
    if value is SUPPRESSED or isinstance(value, (Interval, NodeValue)):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return SUPPRESSED
    if isinstance(value, str):
        value = parse_value(value)
        if numeric and isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return value
            return int(number) if number.is_integer() else number
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    return value


def _order_key(value):
    """The order of released values: by lower bound, then upper (an exact number x is [x, x]); text
    after numbers, alphabetically; suppressed last."""
    if value is SUPPRESSED:
        return (2, 0.0, 0.0, "")
    if isinstance(value, Interval):
        return (0, float(value.lo), float(value.hi), "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), float(value), "")
    return (1, 0.0, 0.0, str(value))


def _numbers_summary(values: np.ndarray, counts: np.ndarray, continuous: bool = False) -> dict:
    """The statistics of exact numbers (ARX's ratio scale), from each distinct value's records:
    count, distinct, mode, median (the mean of the two middle values when the count is even), min,
    max, mean, sample standard deviation, range. ``continuous`` (a perturbed column of numbers, whose
    values hardly repeat): no mode, and the quartiles ``q1`` and ``q3`` beside the median."""
    values, counts = np.asarray(values, dtype=float), np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return {"count": 0, "distinct": 0}
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    ends = np.cumsum(counts)  # the records up to and including each value

    def quantile(q: float) -> float:
        """R's and numpy's default quantile (type 7): between the order statistics around (n − 1)·q."""
        h = (n - 1) * q
        low = int(math.floor(h))
        a = values[np.searchsorted(ends, low, side="right")]
        b = values[np.searchsorted(ends, min(low + 1, n - 1), side="right")]
        return a + (h - low) * (b - a)

    middle = (
        values[np.searchsorted(ends, (n - 1) // 2, side="right")] + values[np.searchsorted(ends, n // 2, side="right")]
    ) / 2
    mean = float((values * counts).sum() / n)
    out = {"count": n, "distinct": len(values)}
    if continuous:
        out |= {"min": _plain(values[0]), "q1": _plain(quantile(0.25)), "median": _plain(middle)}
        out |= {"q3": _plain(quantile(0.75)), "max": _plain(values[-1])}
    else:
        out |= {"mode": _plain(values[int(np.argmax(counts))]), "median": _plain(middle)}
        out |= {"min": _plain(values[0]), "max": _plain(values[-1])}
    return {
        **out,
        "mean": mean,
        "std": float(math.sqrt((counts * (values - mean) ** 2).sum() / (n - 1))) if n > 1 else float("nan"),
        "range": _plain(values[-1] - values[0]),
    }


def _ordinal_summary(counts: Mapping) -> dict:
    """ARX's statistics of a generalised number (an ordinal scale: its values ordered, never
    averaged), from each released value's records: count, distinct, mode, median (the middle value;
    with an even count the two middle values if they are the same, else none), min, max."""
    n = sum(counts.values())
    if n == 0:
        return {"count": 0, "distinct": 0}
    ordered = sorted(counts, key=_order_key)
    mode = max(ordered, key=lambda v: counts[v])  # the first of the most frequent, in order
    ends = np.cumsum([counts[v] for v in ordered])

    def at(i: int):
        return ordered[int(np.searchsorted(ends, i, side="right"))]

    if n % 2:
        median = at(n // 2)
    else:
        a, b = at(n // 2 - 1), at(n // 2)
        median = a if a == b else None
    return {
        "count": n,
        "distinct": len(ordered),
        "mode": format_value(mode),
        "median": None if median is None else format_value(median),
        "min": format_value(ordered[0]),
        "max": format_value(ordered[-1]),
    }


def _nominal_summary(counts: Mapping) -> dict:
    """Statistics of categories from each one's records: count, distinct, mode (the first of the
    most frequent, in order)."""
    n = sum(counts.values())
    if not n:
        return {"count": 0, "distinct": 0}
    ordered = sorted(counts)
    return {"count": int(n), "distinct": len(ordered), "mode": str(max(ordered, key=lambda v: counts[v]))}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _plain(x):
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def _region_size(value, uniques: np.ndarray, numeric: bool, hierarchy) -> int:
    """How many of the column's input values (or hierarchy leaves) a released value covers (a number
    released in a column of numbers is one value, on the ratio scale, whether the input holds it or not)."""
    if numeric and _is_number(value):
        return 1
    if isinstance(value, Interval):
        if not numeric:
            return 1
        inside = (uniques >= value.lo) & ((uniques <= value.hi) if value.closed else (uniques < value.hi))
        return max(int(inside.sum()), 1)
    if isinstance(value, NodeValue) and value.leaves:
        return len(value.leaves)
    if isinstance(value, str) and len(value) > 1 and value[0] == "{" and value[-1] == "}":
        return len({m.strip() for m in value[1:-1].split(",") if m.strip()})  # a set of categories
    label = value.label if isinstance(value, NodeValue) else value
    if hierarchy is not None and str(label) not in set(map(str, uniques)):
        try:
            return int(hierarchy.leaf_count(str(label)))
        except Exception:  # a label the hierarchy does not hold: taken as exact
            return 1
    return 1


def cell_counts(series: pd.Series, into: dict | None = None) -> dict:
    """Each distinct cell of ``series`` (blanks included) → its records, added to ``into``: what a
    column's released figures are computed from, one file or part at a time."""
    counts = series.value_counts(dropna=False, sort=False)
    pairs = zip(counts.index.tolist(), counts.to_numpy().tolist())
    if into is None:
        return dict(pairs)
    if not into:  # the first part: every value is new
        into.update(pairs)
        return into
    for value, n in pairs:
        into[value] = into.get(value, 0) + int(n)
    return into


def column_utility(
    name: str,
    before: pd.Series,
    after: pd.Series,
    rows_before: int,
    hierarchy=None,
    numeric: bool | None = None,
    perturbed: bool = False,
) -> ColumnUtility:
    """The utility of one column: ``before`` its input values, ``after`` its released cells (records
    the release left out count as suppressed: ``rows_before`` is the input's record count)."""
    return counted_column_utility(name, before, cell_counts(after), rows_before, hierarchy, numeric, perturbed)


def _numbers_of(cells: Mapping) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The released cells of a column of numbers as arrays, when every cell is a number of one type
    or a blank: (values, their records, the blank records); None otherwise (text, intervals, nodes)."""
    types = set(map(type, cells))
    blanks = types & {type(None)}
    types -= blanks
    if len(types) != 1 or not types <= {float, int, np.float64, np.int64}:
        return None
    keys = [k for k in cells if k is not None] if blanks else list(cells)
    values = np.asarray(keys, dtype=float if types <= {float, np.float64} else np.int64)
    counts = np.fromiter(cells.values() if not blanks else (cells[k] for k in keys), dtype=np.int64, count=len(keys))
    missing = sum(cells[k] for k in cells if k is None) if blanks else 0
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        if nan.any():
            missing += int(counts[nan].sum())
            values, counts = values[~nan], counts[~nan]
    order = np.argsort(values, kind="stable")
    return values[order], counts[order], int(missing)


def counted_column_utility(
    name: str,
    before: pd.Series,
    cells: Mapping,
    rows_before: int,
    hierarchy=None,
    numeric: bool | None = None,
    perturbed: bool = False,
) -> ColumnUtility:
    """:func:`column_utility` from the released cells' counts (:func:`cell_counts`): every figure
    depends on how many records hold each released value, never on their order, so a release in
    parts is counted a part at a time. ``numeric``: whether the column holds numbers (its kind in the
    input's schema; None: read from ``before``'s type) — a perturbed number stays a number.
    ``perturbed``: the release declares the column perturbed (``Release.perturbation``): a number's
    values then hardly repeat, and its figures are the quartiles rather than a mode."""
    if numeric is None:
        numeric = pd.api.types.is_numeric_dtype(before.dtype) and not pd.api.types.is_bool_dtype(before.dtype)
    present = before.dropna()
    if numeric and not pd.api.types.is_numeric_dtype(present.dtype):  # numbers held as text
        present = pd.to_numeric(present, errors="coerce").dropna()
    uniques = np.unique(present.to_numpy()) if numeric else np.unique(present.astype(str).to_numpy())
    numbers = _numbers_of(cells) if numeric else None
    if numbers is not None:  # a column of numbers, counted without a Python object per value
        values, counts, blank = numbers
        kept = None
        suppressed = blank + max(rows_before - int(counts.sum()) - blank, 0)
        generalised = False
        after_counts = pd.Series(counts, index=[str(v) for v in values.tolist()], dtype=np.int64)
    else:
        typed: dict = {}
        for raw, n in cells.items():
            value = released_value(raw, numeric)
            typed[value] = typed.get(value, 0) + n
        released = sum(typed.values())
        suppressed = typed.pop(SUPPRESSED, 0) + max(rows_before - released, 0)
        kept = typed
        inputs = set(uniques.tolist()) if numeric else set(map(str, uniques))
        # a number the input does not hold (a perturbed or averaged value) is still a number, on the
        # ratio scale: only an interval, a hierarchy's label or other text generalises a numeric column
        generalised = any(
            isinstance(v, (Interval, NodeValue)) or (not _is_number(v) if numeric else str(v) not in inputs)
            for v in kept
        )
        after_counts = {}
        for v in sorted(kept, key=_order_key):
            text = format_value(v)
            after_counts[text] = after_counts.get(text, 0) + kept[v]
        if numeric and not generalised:
            values = np.asarray(list(kept), dtype=float)
            counts = np.asarray(list(kept.values()), dtype=np.int64)
    before_counts = present.value_counts(sort=False)
    before_counts = before_counts.sort_index() if numeric else before_counts.sort_index(key=lambda s: s.astype(str))
    before_numbers = before_counts.index.to_numpy()
    before_counts.index = [format_value(_plain(v)) if numeric else str(v) for v in before_counts.index]
    if numeric:
        # a perturbed number's values hardly repeat: its quartiles, not a mode, on both sides
        summary_before = _numbers_summary(before_numbers, before_counts.to_numpy(), continuous=perturbed)
        if generalised:
            summary_after = _ordinal_summary(kept)
        else:
            summary_after = _numbers_summary(values, counts, continuous=perturbed)
    else:
        texts: dict = {}
        for text, n in zip(before_counts.index, before_counts.to_numpy().tolist()):
            texts[text] = texts.get(text, 0) + n
        summary_before = _nominal_summary(texts)
        summary_after = _nominal_summary(after_counts)
    leaves = len(uniques) if hierarchy is None or numeric else max(len(uniques), _leaves(hierarchy))
    if leaves <= 1:
        loss = float(suppressed) / rows_before if rows_before else 0.0
    else:  # a released number covers one value (the fast path's numbers add nothing)
        total = (
            0.0
            if kept is None
            else sum(kept[v] * (_region_size(v, uniques, numeric, hierarchy) - 1) / (leaves - 1) for v in kept)
        )
        loss = (total + suppressed) / rows_before if rows_before else 0.0
    return ColumnUtility(
        name,
        numeric,
        generalised,
        pd.Series(before_counts, dtype=np.int64),
        pd.Series(after_counts, dtype=np.int64),
        int(suppressed),
        summary_before,
        summary_after,
        float(loss),
    )


def _leaves(hierarchy) -> int:
    try:
        return len(hierarchy.leaves)
    except Exception:
        return 0


def utility(
    before: pd.DataFrame,
    after: pd.DataFrame,
    hierarchies: Mapping | None = None,
    columns=None,
    numeric: Iterable[str] | None = None,
    progress: Callable[[float, str], None] | None = None,
    perturbed: Iterable[str] = (),
) -> Utility:
    """The utility of every released column present in the input (``columns``: these only).
    ``numeric``: the columns whose kind is numeric in the input's schema, numbers whatever their
    cells' type (every other column as its type says); ``progress(fraction, message)`` is told
    after each column (it may raise to cancel); ``perturbed``: the columns the release declares
    perturbed."""
    return parts_utility(before, [after], hierarchies, columns, numeric, progress, perturbed)


def parts_utility(
    before: pd.DataFrame,
    parts: Iterable[pd.DataFrame],
    hierarchies: Mapping | None = None,
    columns=None,
    numeric: Iterable[str] | None = None,
    progress: Callable[[float, str], None] | None = None,
    perturbed: Iterable[str] = (),
) -> Utility:
    """:func:`utility` of a release given as ``parts`` (its records a file at a time, read as they
    are asked for): each part's cells are counted and let go, so memory grows with one part and the
    distinct released values, and the figures are those of the same records in one file."""
    hierarchies = dict(hierarchies or {})
    kinds = None if numeric is None else set(numeric)
    perturbed = set(perturbed)
    tell = progress or (lambda fraction, message: None)
    names: list[str] | None = None
    cells: dict[str, dict] = {}
    rows_after = 0
    for part in parts:
        if names is None:
            names = [c for c in (columns or part.columns) if c in before.columns and c in part.columns]
            cells = {c: {} for c in names}
        missing = [c for c in names if c not in part.columns]
        if missing:
            raise BadInput(f"a part of the release lacks the column {missing[0]!r}")
        rows_after += len(part)
        for c in names:
            cell_counts(part[c], cells[c])
        tell(0.0, f"counted {rows_after:,} released records")
    out = {}
    for i, c in enumerate(names or []):
        tell(i / len(names), f"column {c}")
        is_number = True if kinds is not None and c in kinds else None  # else as its type says (0/1 flags: numbers)
        out[c] = counted_column_utility(
            c, before[c], cells.pop(c), len(before), hierarchies.get(c), is_number, c in perturbed
        )
    tell(1.0, "every column compared")
    return Utility(len(before), rows_after, out)


def contingency(before: pd.DataFrame, after: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The contingency tables of columns ``a`` and ``b`` before and after (records by value pair;
    a suppressed cell is ``*``; rows and columns in the values' order)."""
    return parts_contingency(before, [after], a, b)


def parts_contingency(
    before: pd.DataFrame, parts: Iterable[pd.DataFrame], a: str, b: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`contingency` of a release given as ``parts``, each counted by value pair and let go."""
    for column in (a, b):
        if column not in before.columns:
            raise BadInput(f"the input has no column {column!r}")
    pairs: dict = {}
    for part in parts:
        for column in (a, b):
            if column not in part.columns:
                raise BadInput(f"the release has no column {column!r}")
        counts = part.groupby([a, b], dropna=False, sort=False).size() if a != b else part[a].value_counts(dropna=False)
        for key, n in zip(counts.index.tolist(), counts.to_numpy().tolist()):
            key = key if a != b else (key, key)
            pairs[key] = pairs.get(key, 0) + int(n)
    return _crosstab(before, a, b, exact=True), _counted_crosstab(pairs, a, b)


def _counted_crosstab(pairs: Mapping, a: str, b: str) -> pd.DataFrame:
    """The contingency table of released cells from each pair's records (a blank is suppressed)."""

    def typed(v):
        return SUPPRESSED if v is None or (isinstance(v, float) and math.isnan(v)) else released_value(v, False)

    left, right, cells = set(), set(), {}
    for (x, y), n in pairs.items():
        tx, ty = typed(x), typed(y)
        left.add(tx)
        right.add(ty)
        key = (format_value(tx), format_value(ty))
        cells[key] = cells.get(key, 0) + n
    rows = list(dict.fromkeys(format_value(v) for v in sorted(left, key=_order_key)))
    cols = list(dict.fromkeys(format_value(v) for v in sorted(right, key=_order_key)))
    table = pd.DataFrame(0, index=pd.Index(rows, name=a), columns=pd.Index(cols, name=b), dtype=np.int64)
    for (x, y), n in cells.items():
        table.at[x, y] += n
    return table


def _crosstab(frame: pd.DataFrame, a: str, b: str, *, exact: bool) -> pd.DataFrame:
    def texts(column: str) -> tuple[list[str], list[str]]:
        series = frame[column]
        numeric = exact and pd.api.types.is_numeric_dtype(series.dtype)
        values = [
            SUPPRESSED if (v is None or (isinstance(v, float) and math.isnan(v))) else released_value(v, numeric)
            for v in series.tolist()
        ]
        if exact:
            values = [_plain(v) if not isinstance(v, str) else v for v in values]
        order = [format_value(v) for v in sorted(set(values), key=_order_key)]
        return [format_value(v) for v in values], order

    left, rows = texts(a)
    right, cols = texts(b)
    table = pd.crosstab(pd.Series(left, name=a), pd.Series(right, name=b))
    return table.reindex(index=rows, columns=cols, fill_value=0)


@dataclass(frozen=True)
class FolderUtility:
    """An export folder read for its utility: the input, the released file (or the release's part
    files) with the reader that reads one back, and the hierarchies of the input's columns. The
    released records are read when the figures are asked for, a file at a time."""

    before: pd.DataFrame
    files: tuple
    read: Callable[[Path], pd.DataFrame]
    hierarchies: dict
    perturbation: object | None = None  # the release's Perturbation, when it declares one
    shuffle_seed: int | None = None  # the export's shuffle (engine/release/export.py), when it shuffled
    numeric: tuple[str, ...] | None = None  # the input's columns of numeric kind (None: as their types say)

    def _parts(self) -> Iterator[pd.DataFrame]:
        return (self.read(path) for path in self.files)

    def utility(self) -> Utility:
        perturbed = self.perturbation.columns if self.perturbation is not None else ()
        return parts_utility(self.before, self._parts(), self.hierarchies, numeric=self.numeric, perturbed=perturbed)

    def perturbation_figures(self):
        """The perturbed columns' figures (:func:`~veil.engine.release.perturbed.perturbation_figures`),
        the released records put back in the input's order by undoing the recorded shuffle; None for a
        release that declares no perturbation."""
        from .perturbed import perturbation_figures

        from .export import shuffle_order

        if self.perturbation is None:
            return None
        after = pd.concat(list(self._parts()), ignore_index=True)
        if self.shuffle_seed is not None:  # file row i is release row order[i]
            order = shuffle_order(self.shuffle_seed, len(after))
            after = after.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
        return perturbation_figures(self.before, after, self.perturbation)

    def contingency(self, a: str, b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        return parts_contingency(self.before, self._parts(), a, b)


def read_folder_utility(registry, folder) -> FolderUtility:
    """An export folder's released file, or each part of a release in parts, and its input (as the
    manifest recorded them, every file checked against its SHA-256) for :func:`utility`. BadInput
    when any is missing or changed: the figures would describe other data."""
    from ..base.io import sha256_file
    from ..data.datasource import DataSource
    from ..data.table import Schema, Table
    from ..model.perturbation import Perturbation
    from .manifest import read_manifest
    from .verify import read_released, table_problem

    manifest = read_manifest(folder)
    out = Path(manifest.pop("_dir"))
    output = manifest.get("output") or {}
    parts = output.get("parts_of")
    table = output.get("table")  # a release written as a table of a database
    if table is not None:
        problem = table_problem(registry, output)
        if problem:
            raise BadInput(problem)
        entries = []
    elif parts:
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            raise BadInput("the manifest's output.parts_of must list the release's parts")
        entries = [(p.get("path"), p.get("sha256")) for p in parts]
    elif output.get("path"):
        entries = [(output["path"], output.get("sha256"))]
    else:
        raise BadInput("the manifest names no released file")
    files = [Path(output["path"])] if table is not None else []
    for name, digest in entries:
        if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
            raise BadInput("the manifest names a released file that is not a plain file name")
        path = out / name
        if not path.is_file():
            raise BadInput(f"the released file {name} is missing from {out}")
        if sha256_file(path) != digest:
            raise BadInput(f"the released file {name} has changed since it was exported")
        files.append(path)
    fmt = output.get("format") or registry.preferred("exporter")
    inp = manifest.get("input") or {}
    read = dict(inp.get("read") or {})
    where, digest = inp.get("path"), inp.get("sha256")
    if not read.get("demo"):
        if not where or not Path(where).is_file():
            raise BadInput(
                f"the input {where or '(not recorded)'} is missing: the utility compares the release with it"
            )
        if digest and sha256_file(where) != digest:
            raise BadInput(f"the input {where} has changed since the export: its figures would describe other data")
    data = DataSource.from_dict({**read, "path": None if read.get("demo") else where}).load(registry)
    if not isinstance(data, Table):
        raise BadInput("the utility perspective compares tables: this release's input is not a table")
    if inp.get("schema"):
        schema = Schema.from_dict(inp["schema"])
        if schema.names == data.schema.names:
            data = Table(data.frame, schema, data.source, data.sha256)
    hierarchies = {c.name: c.hierarchy for c in data.schema.columns if getattr(c, "hierarchy", None) is not None}
    perturbation = Perturbation.from_dict(manifest.get("perturbation"))
    seed = manifest.get("shuffle_seed") if manifest.get("shuffled") else None
    return FolderUtility(
        data.frame,
        tuple(files),
        lambda path: read_released(registry, fmt, path, table),
        hierarchies,
        perturbation,
        seed,
        numeric_columns(data.schema),
    )


def numeric_columns(schema) -> tuple[str, ...]:
    """The columns a schema calls numeric: their figures are a number's, perturbed or not."""
    return tuple(c.name for c in schema.columns if c.kind is Kind.NUMERIC)
