"""Generalisation hierarchies: trees that coarsen one column's values, level by level.

A :class:`Hierarchy` is the tree of docs/reference.md#anonymising-tables (Mondrian, utility loss) and
docs/reference.md#set-valued-data (relational PatternKa). Level 0 holds the leaves, the column's values; each
higher level groups the nodes below it; the top level, ``height``, holds the single root (usually ``*``). It is
stored the way ARX stores it: one row per leaf, giving the leaf and its ancestors from level 1 up to the root.

A node is a :class:`Node` ``(level, label)``: the same label may appear on two levels (ARX files
often repeat a value one level up), never twice on one level with different parents.

Labels are strings. Looking a value up is exact for strings; a number matches the leaf whose label
reads as the same number, so an integer column finds the leaves ``"39"`` of an ARX file, and
``39.0`` finds ``"39"`` too.

Generated numeric hierarchies (:meth:`Hierarchy.intervals`, :meth:`Hierarchy.quantile_intervals`)
label an interval ``"20-24"`` when the column holds integers (ARX's style: both ends included) and
``"[20.0, 25.0)"`` when it holds floats (the lower end included, the upper end excluded; the last
quantile interval is closed, ``"[a, b]"``).
"""

from __future__ import annotations

import csv
import io
import os
import warnings
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..base.io import open_regular
from .missing import holds_integers

ROOT = "*"
_FORMAT = "veil.hierarchy"
_VERSION = 1
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?inf")


class Node(NamedTuple):
    """A node of a hierarchy: its level (0 for a leaf) and its label."""

    level: int
    label: str


def value_label(value) -> str:
    """The label a value takes as a leaf: strings as they are, integral numbers without a
    decimal point (``39.0`` → ``"39"``), other floats by their shortest exact repr."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return str(int(f)) if f.is_integer() else repr(f)
    if isinstance(value, np.datetime64):  # as the pandas Timestamp of the same instant reads (an xlsx date cell)
        return str(pd.Timestamp(value))
    return str(value)


def _number(label: str):
    """The number a label reads as (int or float), or None."""
    if _INT.fullmatch(label):
        return int(label)
    if _FLOAT.fullmatch(label):
        return float(label)
    return None


# A cell a spreadsheet would run as a formula starts with one of these; Veil writes it after a ``'``
# (and a cell starting with ``'`` gets one more), as its exports do (docs/security.md).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def _escape_formula(cell: str) -> str:
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell


def _unescape_formula(cell: str) -> str:
    return cell[1:] if len(cell) > 1 and cell[0] == "'" and cell[1:].startswith(_FORMULA_STARTS) else cell


class Hierarchy:
    """An immutable generalisation hierarchy over the values of one column.

    Parameters
    ----------
    rows : sequence of sequences
        One row per leaf: the leaf, then its ancestors from level 1 up to the root. Every row has
        the same length; non-string entries are turned into labels with :func:`value_label`.
    name : str, optional
        The column the hierarchy belongs to, named in error messages.
    where : sequence of str, optional
        How to name each row in error messages (``"line 12"``); ``"row i"`` by default.

    Raises
    ------
    BadInput
        Rows of different lengths, an empty label, a leaf listed twice, a node with two parents,
        or more than one root.

    Examples
    --------
    >>> h = Hierarchy([["Male", "*"], ["Female", "*"]], name="sex")
    >>> h.generalise("Male", 1)
    '*'
    """

    __slots__ = (
        "_name",
        "_rows",
        "_codes",
        "_nodes",
        "_index",
        "_parent",
        "_sizes",
        "_labels",
        "_by_label",
        "_by_number",
        "_order",
        "_hash",
    )

    def __init__(self, rows: Iterable[Sequence], *, name: str | None = None, where: Sequence[str] | None = None):
        rows = tuple(tuple(value_label(v) for v in r) for r in rows)
        where = list(where) if where is not None else [f"row {i + 1}" for i in range(len(rows))]
        _check_rows(rows, where)
        self._name = name
        self._rows = rows
        self._hash = None
        columns = list(zip(*rows))
        self._codes, self._nodes, self._index, self._labels = [], [], [], []
        for labels in columns:
            codes, uniques = pd.factorize(np.array(labels, dtype=object), sort=False)
            self._codes.append(_readonly(codes.astype(np.intp)))
            self._nodes.append(tuple(uniques))
            self._index.append({lab: i for i, lab in enumerate(uniques)})
            self._labels.append(_readonly(np.array(labels, dtype=object)))
        self._parent = []
        for lo, hi in zip(self._codes[:-1], self._codes[1:]):
            parent = np.empty(int(lo.max()) + 1, dtype=np.intp)
            parent[lo] = hi
            self._parent.append(_readonly(parent))
        self._sizes = [_readonly(np.bincount(c)) for c in self._codes]
        self._by_label = self._index[0]
        self._by_number = _numeric_index(self._nodes[0])
        # DFS order: sort by the ancestors' first appearance from the top down, then by leaf.
        keys = [np.arange(len(rows))] + self._codes[1:]
        self._order = _readonly(np.lexsort(keys))

    # ----------------------------------------------------------------------------- constructors
    @classmethod
    def from_arx_csv(
        cls, path_or_text: str | os.PathLike, delimiter: str = ";", *, name: str | None = None
    ) -> Hierarchy:
        """Read ARX's hierarchy format: no header, one row per leaf, leaf first, root last.

        ``path_or_text`` is a path (a :class:`~pathlib.Path`, or a string without line breaks)
        or the text itself (a string with a line break). Blank lines are ignored; fields may be
        quoted with ``"``. Errors name the file and line.
        """
        text, source = _read_text(path_or_text, delimiter)
        rows, where, cells = [], [], 0
        reader = csv.reader(io.StringIO(text), delimiter=delimiter, quotechar='"', strict=True)
        try:
            for row in reader:
                if row and any(field.strip() for field in row):
                    rows.append([_unescape_formula(field) for field in row])
                    where.append(f"{source}line {reader.line_num}")
                    cells += len(row)
                    if len(row) > MAX_LEVELS + 1 or cells > MAX_CELLS:
                        raise BadInput(_too_large(source, len(rows), len(row), cells))
        except csv.Error as exc:
            raise BadInput(f"{source}line {reader.line_num}: {exc}") from None
        if not rows:
            raise BadInput(f"{source.rstrip(', ') or 'the text'} holds no hierarchy rows")
        if all(len(row) == 1 for row in rows):  # one column: another separator, not one level and no root
            other = next((sep for sep in (",", "\t", "|") if sep != delimiter and sep in rows[0][0]), None)
            if other is not None:
                shown = "a tab" if other == "\t" else repr(other)
                raise BadInput(
                    f"{source}each row is one column: a hierarchy file separates its levels with {delimiter!r} "
                    f"(ARX's format), and this one seems to use {shown}; save it with {delimiter!r} between the levels"
                )
        return cls(rows, name=name, where=where)

    @classmethod
    def from_levels(cls, mapping: Mapping, *, name: str | None = None) -> Hierarchy:
        """Build from ``{leaf: [level-1 ancestor, ..., root]}``.

        >>> Hierarchy.from_levels({"a": ["x", "*"], "b": ["x", "*"], "c": ["y", "*"]}).lca(["a", "b"])
        Node(level=1, label='x')
        """
        rows = [[leaf, *ancestors] for leaf, ancestors in mapping.items()]
        where = [f"leaf {value_label(leaf)!r}" for leaf in mapping]
        return cls(rows, name=name, where=where)

    @classmethod
    def masking(cls, values: Iterable, *, mask: str = "*", name: str | None = None) -> Hierarchy:
        """Codes generalised by masking from the right, one character a level (ARX's redaction):
        ``HD4 → HD* → H** → *``. Codes of different lengths are right-padded with ``mask`` first,
        so every level masks the same positions.

        >>> Hierarchy.masking(["HD4", "HD7", "HX1"]).nodes(1)
        (Node(level=1, label='HD*'), Node(level=1, label='HX*'))
        """
        leaves = [value_label(v) for v in _distinct(values)]
        if not leaves:
            raise BadInput("no values to build a masking hierarchy from")
        width = max(len(v) for v in leaves)
        _check_size(len(leaves), width, "masking")
        rows = []
        for leaf in leaves:
            padded = leaf.ljust(width, mask)
            levels = [padded[: width - i] + mask * i for i in range(1, width)]
            rows.append([leaf, *levels, mask])
        return cls(rows, name=name)

    @classmethod
    def dates(cls, values: Iterable, *, name: str | None = None) -> Hierarchy:
        """Dates generalised day → month → year → ``*`` (labels ``2024-03-17 → 2024-03 → 2024``).

        >>> Hierarchy.dates(["2024-03-17", "2024-03-02", "2023-12-31"]).generalise("2024-03-17", 1)
        '2024-03'
        """
        leaves = _distinct(values)
        try:
            with warnings.catch_warnings():  # pandas' guess at a format warns, naming its own source file
                warnings.simplefilter("ignore")
                days = pd.to_datetime(pd.Series([value_label(v) for v in leaves]), errors="raise")
        except (ValueError, TypeError, OverflowError) as exc:
            raise BadInput(f"not a date: {exc}") from None
        rows = [[value_label(leaf), d.strftime("%Y-%m"), d.strftime("%Y"), ROOT] for leaf, d in zip(leaves, days)]
        return cls(rows, name=name)

    @classmethod
    def grouping(
        cls, values: Iterable, groups: Mapping[str, Iterable], *, other: str | None = None, name: str | None = None
    ) -> Hierarchy:
        """Chosen categorical values grouped under names (``{"Europe": ["FR", "DE"], …}``), the groups
        under ``*``; a value in no group stays alone under its own label, or goes to ``other``.

        >>> Hierarchy.grouping(["FR", "DE", "JP"], {"Europe": ["FR", "DE"]}).generalise("FR", 1)
        'Europe'
        """
        group_of = {}
        for group, members in groups.items():
            for m in members:
                label = value_label(m)
                if label in group_of:
                    raise BadInput(f"value {label!r} is in two groups: {group_of[label]!r} and {group!r}")
                group_of[label] = str(group)
        rows = []
        for leaf in (value_label(v) for v in _distinct(values)):
            rows.append([leaf, group_of.get(leaf, other if other is not None else leaf), ROOT])
        unknown = sorted(set(group_of) - {r[0] for r in rows})
        if unknown:
            raise BadInput(f"value {unknown[0]!r} of a group does not occur in the column")
        return cls(rows, name=name)

    @classmethod
    def flat(cls, values: Iterable, *, root: str = ROOT, name: str | None = None) -> Hierarchy:
        """Every distinct value (missing values ignored) directly under ``root``; for a column whose
        every value is missing, ``root`` alone (nothing to generalise: a blank matches any value)."""
        leaves = _distinct(values)
        return cls([[leaf, root] for leaf in leaves] or [[root]], name=name)

    @classmethod
    def intervals(
        cls,
        values: Iterable | range,
        *,
        width=None,
        widths: Sequence | None = None,
        fanout: int = 2,
        start=None,
        bottom=None,
        top=None,
        name: str | None = None,
    ) -> Hierarchy:
        """Interval hierarchy over numbers, like ARX's interval builder.

        Parameters
        ----------
        values : iterable of numbers or range
            The leaves: the distinct values observed (missing values ignored), or every integer
            of a ``range``.
        width : number, optional
            Width of the level-1 intervals. Each higher level merges ``fanout`` neighbours (widths
            ``width * fanout**(l - 1)``) while that still leaves more than one interval, stopping
            after the first level wider than the values' range; the root ``*`` sits above.
        widths : sequence of numbers, optional
            Instead of ``width``: the width of every level, each a multiple of the one before.
        fanout : int
            Children per interval when ``width`` is given (default 2).
        start : number, optional
            Where the intervals are anchored (default ``bottom``, else 0): level l's intervals are
            ``[start + k·w_l, start + (k+1)·w_l)`` for every integer k, so all levels nest, and
            with the default they fall on round numbers like ARX's age hierarchy.
        bottom, top : number, optional
            Bottom and top coding: every value below ``bottom`` is one node ``"<bottom"`` and every
            value at or above ``top`` one node ``">=top"``, on every level up to the root; the
            intervals between are cut at ``bottom`` and ``top`` (``"85-89"`` becomes ``"85-86"``
            under ``top=87``).

        Labels are ``"20-24"`` (both ends included) for integer columns with integer widths, start
        and codings, and ``"[20.0, 25.0)"`` otherwise. Edges are computed in decimal, so with a width
        of 0.1 the value 0.3 falls in ``[0.3, 0.4)``.

        >>> Hierarchy.intervals(range(1, 100), widths=[5, 10, 20]).generalise(39, 1)
        '35-39'
        >>> Hierarchy.intervals(range(0, 100), width=10, bottom=20, top=80).generalise(91, 2)
        '>=80'
        """
        leaves, integer = _numeric_leaves(values)
        level_widths = _check_widths(width, widths, fanout)
        low_edge = None if bottom is None else _decimal(bottom)
        high_edge = None if top is None else _decimal(top)
        if low_edge is not None and high_edge is not None and not low_edge < high_edge:
            raise BadInput(f"bottom coding ({bottom}) must lie below top coding ({top})")
        w0 = level_widths[0]
        anchor = _decimal(start) if start is not None else low_edge if low_edge is not None else Decimal(0)
        codings = [x for x in (low_edge, high_edge) if x is not None]
        integer = integer and all(x == x.to_integral_value() for x in [anchor, *level_widths, *codings])
        exact = [_decimal(v) for v in leaves]
        below = np.array([low_edge is not None and x < low_edge for x in exact], dtype=bool)
        above = np.array([high_edge is not None and x >= high_edge for x in exact], dtype=bool)
        middle = ~(below | above)
        far = max(abs(exact[0] - anchor), abs(exact[-1] - anchor)) / w0 if exact else Decimal(0)
        if far >= 2**62:  # level-1 interval numbers past 64 bits: no hierarchy Veil could use
            raise BadInput(
                f"intervals: a width of {width} from {anchor} makes {far:.3g} intervals to reach the values; "
                f"choose a larger width (or a start nearer the values)"
            )
        if integer and abs(anchor) < 2**62 and w0 < 2**62:  # in 64 bits, vectorised
            first = (np.asarray(leaves, dtype=np.int64) - int(anchor)) // int(w0)
        else:
            first = np.array([_floor_div(x - anchor, w0) for x in exact], dtype=np.int64)
        if widths is None:
            inner = [x for x, m in zip(exact, middle) if m]
            level_widths = _auto_widths(w0, fanout, first[middle], inner[-1] - inner[0]) if inner else []
            if not level_widths and codings and len(leaves) > 1:
                level_widths = [w0]  # the codings still make a level below the root
        _check_size(len(leaves), len(level_widths) + 1, "intervals")
        lo_label = None if low_edge is None else f"<{_bound(low_edge, integer)}"
        hi_label = None if high_edge is None else f">={_bound(high_edge, integer)}"

        def label(b: int, w: Decimal) -> str:
            lo, hi = anchor + b * w, anchor + (b + 1) * w
            lo = lo if low_edge is None else max(lo, low_edge)
            hi = hi if high_edge is None else min(hi, high_edge)
            return _edge_label(lo, hi, integer)

        columns = []
        for w in level_widths:
            k = first // int(w / w0)
            column = np.empty(len(leaves), dtype=object)
            if middle.any():
                column[middle] = _label_bins(k[middle], lambda b, w=w: label(b, w))
            column[below], column[above] = lo_label, hi_label
            columns.append(column.tolist())
        return cls._from_columns(leaves, columns, name)

    @classmethod
    def quantile_intervals(cls, values: Iterable, bins: int, *, fanout: int = 2, name: str | None = None) -> Hierarchy:
        """Equal-frequency intervals: level 1 has at most ``bins`` intervals holding about as many
        values each (counted with repetition, so pass the whole column); each higher level merges
        ``fanout`` neighbours until one would hold every leaf; the root ``*`` sits above. Interval
        edges are observed values; labels follow :meth:`intervals`, the last interval closed.
        """
        if not isinstance(bins, (int, np.integer)) or bins < 1:
            raise BadInput(f"bins must be a positive integer, got {bins!r}")
        _check_fanout(fanout)
        observed = np.sort(_numeric_array(values))
        leaves, integer = _numeric_leaves(observed)
        ranks = np.ceil(len(observed) * np.arange(1, bins) / bins).astype(np.int64)
        cuts = np.unique(observed[ranks[ranks < len(observed)]])
        cuts = cuts[cuts > observed[0]]
        first = np.searchsorted(cuts, np.asarray(leaves), side="right")
        lows = np.concatenate([[leaves[0]], cuts])
        columns, step = [], 1
        while len(np.unique(first // step)) > 1:
            k = first // step
            columns.append(
                _label_bins(k, lambda b, s=step: _cut_label(lows, cuts, b * s, (b + 1) * s, leaves[-1], integer))
            )
            step *= fanout
        return cls._from_columns(leaves, columns, name)

    @classmethod
    def _from_columns(cls, leaves, columns, name) -> Hierarchy:
        labels = [value_label(v) for v in leaves]
        rows = [[leaf, *(col[i] for col in columns), ROOT] for i, leaf in enumerate(labels)]
        return cls(rows, name=name)

    # ----------------------------------------------------------------------------- project files
    def to_dict(self) -> dict:
        """JSON-safe form for project files."""
        return {"format": _FORMAT, "version": _VERSION, "name": self._name, "rows": [list(r) for r in self._rows]}

    @classmethod
    def from_dict(cls, data: Mapping) -> Hierarchy:
        if not isinstance(data, Mapping) or data.get("format") != _FORMAT:
            raise BadInput("not a Veil hierarchy (expected a mapping with format 'veil.hierarchy')")
        if data.get("version") != _VERSION:
            raise BadInput(f"hierarchy format version {data.get('version')!r} is not supported (expected {_VERSION})")
        rows = data.get("rows")
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise BadInput("a hierarchy's rows must be a list of lists")
        return cls(rows, name=data.get("name"))

    def to_arx_csv(self, delimiter: str = ";") -> str:
        """The hierarchy in ARX's format (one line per leaf, in the original order), every cell a
        spreadsheet would run as a formula escaped with ``'`` as Veil's exports do (read back by
        :meth:`from_arx_csv`)."""
        out = io.StringIO()
        writer = csv.writer(out, delimiter=delimiter, quotechar='"', lineterminator="\n")
        writer.writerows([_escape_formula(cell) for cell in row] for row in self._rows)
        return out.getvalue()

    def with_name(self, name: str | None) -> Hierarchy:
        return Hierarchy(self._rows, name=name)

    # ----------------------------------------------------------------------------- shape
    @property
    def name(self) -> str | None:
        return self._name

    @property
    def height(self) -> int:
        """The root's level: levels run from 0 (leaves) to ``height`` (ARX counts height + 1)."""
        return len(self._codes) - 1

    @property
    def leaves(self) -> tuple[str, ...]:
        """The domain: every leaf label, in the order the hierarchy lists them."""
        return self._nodes[0]

    @property
    def root(self) -> Node:
        return Node(self.height, self._nodes[-1][0])

    def nodes(self, level: int) -> tuple[Node, ...]:
        """The nodes of one level, in order of first appearance."""
        level = self._level(level)
        return tuple(Node(level, lab) for lab in self._nodes[level])

    def in_order(self) -> tuple[str, ...]:
        """Leaves in depth-first order: the leaves under any node form one contiguous run.

        PatternKa (docs/reference.md#set-valued-data) relabels categorical values by their position in this order.
        Children are visited in order of first appearance.
        """
        return tuple(self._nodes[0][i] for i in self._order)

    # ----------------------------------------------------------------------------- generalising
    def check_values(self, values) -> None:
        """BadInput naming a value of ``values`` that is not one of the hierarchy's leaves."""
        self._positions(pd.Series(values).dropna())

    def generalise(self, value, level: int) -> str:
        """The label of ``value``'s ancestor at ``level`` (its own label at level 0)."""
        return self._labels[self._level(level)][self._positions([value])[0]]

    def node_of(self, value, level: int) -> Node:
        level = self._level(level)
        return Node(level, self._labels[level][self._positions([value])[0]])

    def generalise_series(self, series: pd.Series, level: int) -> pd.Series:
        """Every value of ``series`` replaced by its ancestor's label at ``level`` (same index
        and name, object dtype). A value outside the hierarchy, or a missing one, is refused."""
        level = self._level(level)
        labels = self._labels[level][self._positions(series)]
        return pd.Series(labels, index=series.index, name=series.name, dtype=object)

    # ----------------------------------------------------------------------------- tree queries
    def parent(self, node: Node | str) -> Node | None:
        """The node one level up, or None for the root."""
        level, i = self._locate(node)
        if level == self.height:
            return None
        return Node(level + 1, self._nodes[level + 1][self._parent[level][i]])

    def children(self, node: Node | str) -> tuple[Node, ...]:
        """The nodes one level down, in order of first appearance (none for a leaf)."""
        level, i = self._locate(node)
        if level == 0:
            return ()
        below = np.flatnonzero(self._parent[level - 1] == i)
        return tuple(Node(level - 1, self._nodes[level - 1][j]) for j in below)

    def leaves_under(self, node: Node | str) -> tuple[str, ...]:
        """The leaves below ``node`` (itself for a leaf), in the hierarchy's order."""
        level, i = self._locate(node)
        return tuple(self._nodes[0][j] for j in np.flatnonzero(self._codes[level] == i))

    def ancestor_codes(self, level: int) -> np.ndarray:
        """For every leaf (in :attr:`leaves` order), the index in :meth:`nodes` of its ancestor at
        ``level``: all of a level's :meth:`leaves_under` at once, in one pass over the leaves."""
        return self._codes[self._level(level)]

    def leaf_count(self, node: Node | str) -> int:
        """How many leaves lie below ``node``: Mondrian's normalised range is this / |domain|."""
        level, i = self._locate(node)
        return int(self._sizes[level][i])

    def lca(self, values: Iterable) -> Node:
        """The lowest common ancestor of a non-empty set of values (a leaf for a single value)."""
        level, i = self._lca(np.unique(self._positions(values)))
        return Node(level, self._nodes[level][i])

    def ncp(self, values: Iterable) -> float:
        """Normalised certainty penalty of a set of values: leaves under their lowest common
        ancestor / |domain|, and 0 when only one distinct value occurs (docs/reference.md#set-valued-data)."""
        pos = np.unique(self._positions(values))
        if len(pos) <= 1:
            return 0.0
        level, i = self._lca(pos)
        return int(self._sizes[level][i]) / len(self._nodes[0])

    # ----------------------------------------------------------------------------- internals
    def _column(self) -> str:
        return f" of column {self._name!r}" if self._name else ""

    def _level(self, level) -> int:
        if not isinstance(level, (int, np.integer)) or isinstance(level, bool) or not 0 <= level <= self.height:
            raise BadInput(
                f"level {level!r} does not exist in the hierarchy{self._column()}; "
                f"its levels run from 0 to {self.height}"
            )
        return int(level)

    def _locate(self, node) -> tuple[int, int]:
        """(level, index) of a Node, or of a label found on exactly one level."""
        if isinstance(node, str):
            found = [level for level, index in enumerate(self._index) if node in index]
            if len(found) != 1:
                why = "is not a node" if not found else f"is a node on levels {found}; pass Node(level, label)"
                raise BadInput(f"{node!r} {why} of the hierarchy{self._column()}")
            return found[0], self._index[found[0]][node]
        level, label = node
        level = self._level(level)
        i = self._index[level].get(label)
        if i is None:
            raise BadInput(f"{label!r} is not a node at level {level} of the hierarchy{self._column()}")
        return level, i

    def _lca(self, positions: np.ndarray) -> tuple[int, int]:
        if len(positions) == 0:
            raise BadInput("the lowest common ancestor of no values is undefined")
        for level, codes in enumerate(self._codes):
            c = codes[positions]
            if (c == c[0]).all():
                return level, int(c[0])
        raise AssertionError("a validated hierarchy has one root")

    def _lookup(self, value) -> int | None:
        if isinstance(value, str):
            return self._by_label.get(value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            return self._by_label.get(value_label(value))
        i = self._by_number.get(value)
        if i == -1:
            raise BadInput(
                f"the value {value_label(value)} matches several leaves of the hierarchy{self._column()} "
                f"(written differently, like '39' and '39.0')"
            )
        return i

    def _positions(self, values) -> np.ndarray:
        """Leaf index of every value; unknown or missing values raise BadInput."""
        if not isinstance(values, (pd.Series, pd.Index, np.ndarray)):
            values = np.array(list(values), dtype=object)
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        if (codes < 0).any():
            raise BadInput(
                f"a missing value cannot be generalised by the hierarchy{self._column()}; fill or drop it first"
            )
        table = [self._lookup(u) for u in uniques]
        unknown = [value_label(u) for u, i in zip(uniques, table) if i is None]
        if unknown:
            more = f" (and {len(unknown) - 1} other values)" if len(unknown) > 1 else ""
            raise BadInput(
                f"value {unknown[0]!r}{more} is not in the hierarchy{self._column()}; "
                f"add it to the hierarchy or fix the data"
            )
        return np.asarray(table, dtype=np.intp)[codes]

    # ----------------------------------------------------------------------------- value semantics
    def __eq__(self, other) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return self._name == other._name and self._rows == other._rows

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self._name, self._rows))
        return self._hash

    def __repr__(self) -> str:
        return f"Hierarchy(name={self._name!r}, leaves={len(self._rows)}, height={self.height})"


# --------------------------------------------------------------------------------- validation
def _check_rows(rows: tuple[tuple[str, ...], ...], where: list[str]) -> None:
    if not rows:
        raise BadInput("a hierarchy needs at least one value")
    width = len(rows[0])
    seen: dict[str, int] = {}
    parents: list[dict[str, tuple[str, int]]] = [{} for _ in range(width - 1)]
    for i, row in enumerate(rows):
        if len(row) != width:
            raise BadInput(
                f"{where[i]}: {len(row)} levels, but {where[0]} has {width}; "
                f"every value needs the same number of levels"
            )
        if "" in row:
            raise BadInput(f"{where[i]}: level {row.index('')} is empty")
        if row[0] in seen:
            raise BadInput(f"{where[i]}: the value {row[0]!r} is already listed on {where[seen[row[0]]]}")
        seen[row[0]] = i
        if row[-1] != rows[0][-1]:
            raise BadInput(
                f"{where[i]}: the top level holds {row[-1]!r}, but {where[0]} has {rows[0][-1]!r}; "
                f"a hierarchy needs a single root (add a column '*')"
            )
        for level, (label, up) in enumerate(zip(row[:-1], row[1:])):
            known, j = parents[level].setdefault(label, (up, i))
            if known != up:
                raise BadInput(
                    f"{where[i]}: {label!r} at level {level} has parent {up!r}, "
                    f"but {where[j]} gives it parent {known!r}"
                )


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _numeric_index(labels: Sequence[str]) -> dict:
    """Number → leaf index for leaves that read as numbers; -1 where two leaves read the same."""
    index: dict = {}
    for i, label in enumerate(labels):
        number = _number(label)
        if number is not None:
            index[number] = -1 if number in index else i
    return index


MAX_LEVELS = 100  # above the leaves; real hierarchies have a handful (ZIP codes: 6)
MAX_CELLS = 1_000_000  # leaves × levels: ICD-10 (some 70,000 codes, 5 levels) and ZIP codes fit


def _check_size(leaves: int, levels: int, kind: str) -> None:
    """Before a generated hierarchy is built: BadInput when it would pass the limits a hierarchy file
    has (:data:`MAX_LEVELS` levels, :data:`MAX_CELLS` cells), saying why."""
    if levels > MAX_LEVELS or leaves * (levels + 1) > MAX_CELLS:
        raise BadInput(
            f"{kind}: the hierarchy would have {leaves:,} values and {levels:,} levels above them "
            f"({leaves * (levels + 1):,} cells), more than the {MAX_LEVELS} levels and {MAX_CELLS:,} cells Veil "
            f"works with; choose a larger width, or generalise fewer distinct values"
        )


def _too_large(source: str, rows: int, width: int, cells: int) -> str:
    where = f"{source}line {rows}" if source else f"row {rows}"
    if width > MAX_LEVELS + 1:
        return (
            f"{where}: the hierarchy has {width - 1:,} levels above the value, more than the {MAX_LEVELS} Veil "
            f"works with; merge levels"
        )
    return (
        f"{where}: the hierarchy passes {MAX_CELLS:,} cells (values × levels), more than Veil builds for one "
        f"column; keep only the values the data holds, or use fewer levels"
    )


def _read_text(path_or_text, delimiter: str) -> tuple[str, str]:
    """(text, prefix for messages) from a path or from the text itself."""
    if isinstance(path_or_text, str) and (
        "\n" in path_or_text or (delimiter in path_or_text and not os.path.isfile(path_or_text))
    ):
        return path_or_text, ""
    path = Path(path_or_text)
    try:
        with open_regular(path) as f:  # never a FIFO or a device
            raw = f.read()
    except BadInput as exc:
        raise BadInput(f"cannot read the hierarchy file: {exc}") from None
    except OSError as exc:
        raise BadInput(f"cannot read hierarchy file {path}: {exc.strerror or exc}") from None
    kind = _binary_kind(raw[:4096])
    if kind:
        raise BadInput(
            f"the hierarchy file {path.name} is {kind}, not text; a hierarchy is a text file (CSV) with one "
            f"row per value, the value first and the most general level last"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n"), f"{path.name}, "  # any line ending


_MAGIC = (
    (b"PK\x03\x04", "a zip archive (an Excel workbook?)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel or Office file"),
    (b"%PDF", "a PDF document"),
    (b"PAR1", "a Parquet file"),
    (b"\x89PNG", "a PNG image"),
    (b"\x1f\x8b", "a gzip archive"),
)


def _binary_kind(head: bytes) -> str | None:
    """What a file's first bytes say it is when that is not text: a known format, or binary data."""
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 13))
    if b"\x00" in head or (head and controls / len(head) > 0.05):
        return "binary data"
    return None


def _distinct(values: Iterable) -> list:
    s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    return list(pd.unique(s.dropna()))


# --------------------------------------------------------------------------------- intervals
def _numeric_array(values) -> np.ndarray:
    if isinstance(values, range):
        return np.arange(values.start, values.stop, values.step, dtype=np.int64)
    s = values if isinstance(values, pd.Series) else pd.Series(list(values))
    if pd.api.types.is_bool_dtype(s):
        raise BadInput("interval hierarchies need numbers, got true/false values")
    try:
        s = pd.to_numeric(s.dropna(), errors="raise")
    except (ValueError, TypeError):
        raise BadInput("interval hierarchies need numbers; the values include text") from None
    whole = pd.api.types.is_integer_dtype(s) or (
        isinstance(values, pd.Series) and pd.api.types.is_float_dtype(values) and holds_integers(values)
    )  # integers read as floats because of their blanks are labelled as integers
    a = s.to_numpy(dtype=np.int64 if whole else np.float64)
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise BadInput("interval hierarchies need finite numbers; the values include infinity")
    if len(a) == 0:
        raise BadInput("an interval hierarchy needs at least one value")
    return a


def _numeric_leaves(values) -> tuple[list, bool]:
    """Sorted distinct values as Python numbers, and whether they are integers."""
    a = values if isinstance(values, np.ndarray) else _numeric_array(values)
    integer = a.dtype.kind in "iu"
    return np.unique(a).tolist(), integer


def _decimal(x) -> Decimal:
    if isinstance(x, (bool, np.bool_)):
        raise BadInput(f"expected a number, got {x!r}")
    try:
        return Decimal(int(x)) if isinstance(x, (int, np.integer)) else Decimal(repr(float(x)))
    except (TypeError, ValueError, InvalidOperation):
        raise BadInput(f"expected a number, got {x!r}") from None


def _check_fanout(fanout) -> None:
    if not isinstance(fanout, (int, np.integer)) or isinstance(fanout, bool) or fanout < 2:
        raise BadInput(f"fanout must be an integer of at least 2, got {fanout!r}")


def _check_widths(width, widths, fanout) -> list[Decimal]:
    if (width is None) == (widths is None):
        raise BadInput("give either width (with fanout) or widths, one per level")
    if widths is None:
        _check_fanout(fanout)
        widths = [width]
    ws = [_decimal(w) for w in widths]
    if not ws or any(not w.is_finite() or w <= 0 for w in ws):
        raise BadInput(f"interval widths must be positive numbers, got {list(widths)!r}")
    for a, b in zip(ws, ws[1:]):
        if b <= a or b % a != 0:
            raise BadInput(f"width {b} is not a larger multiple of {a}; each level's intervals must nest in the next")
    return ws


def _auto_widths(w0: Decimal, fanout: int, first: np.ndarray, span: Decimal) -> list[Decimal]:
    """w0·fanout^l while a level keeps more than one interval, up to the first wider than span
    (beyond it an anchor inside the range would leave two intervals forever)."""
    widths, step = [], 1
    while len(np.unique(first // step)) > 1:
        widths.append(w0 * step)
        if w0 * step > span:
            break
        step *= fanout
    return widths


def _floor_div(a: Decimal, b: Decimal) -> int:
    q = int(a // b)  # Decimal's // truncates towards zero
    return q - 1 if a < 0 and q * b != a else q


def _label_bins(k: np.ndarray, label_of) -> list[str]:
    uniques, inverse = np.unique(k, return_inverse=True)
    labels = np.array([label_of(int(b)) for b in uniques], dtype=object)
    return labels[inverse].tolist()


def _fmt(x) -> str:
    return repr(float(x))


def _bound(x: Decimal, integer: bool) -> str:
    return str(int(x)) if integer else _fmt(x)


def _edge_label(lo: Decimal, hi: Decimal, integer: bool) -> str:
    return f"{int(lo)}-{int(hi) - 1}" if integer else f"[{_fmt(lo)}, {_fmt(hi)})"


def _cut_label(lows, cuts, first_bin: int, end_bin: int, top, integer: bool) -> str:
    """Label of level-1 bins first_bin .. end_bin - 1 of a quantile hierarchy."""
    lo = lows[first_bin]
    if end_bin <= len(cuts):
        hi = cuts[end_bin - 1]
        return f"{int(lo)}-{int(hi) - 1}" if integer else f"[{_fmt(lo)}, {_fmt(hi)})"
    return f"{int(lo)}-{int(top)}" if integer else f"[{_fmt(lo)}, {_fmt(top)}]"


BUILDERS = ("intervals", "quantiles", "masking", "dates", "grouping", "arx-file")


def build_hierarchy(
    kind: str,
    values,
    *,
    name: str | None = None,
    width=None,
    bins: int = 4,
    groups: str = "",
    path: str | None = None,
    fanout: int = 2,
    start=None,
    bottom=None,
    top=None,
) -> Hierarchy:
    """One entry point for the desktop's hierarchy builder (ARX's wizard): ``kind`` is one of
    :data:`BUILDERS`; ``groups`` reads ``"Europe: FR, DE; Asia: JP"``; intervals take ``width``,
    ``fanout``, ``start`` and the ``bottom``/``top`` codings of :meth:`Hierarchy.intervals`.

    >>> build_hierarchy("grouping", ["FR", "DE", "JP"], groups="Europe: FR, DE").generalise("DE", 1)
    'Europe'
    """
    values = pd.Series(values).dropna()
    if kind == "intervals":
        return Hierarchy.intervals(values, width=width, fanout=fanout, start=start, bottom=bottom, top=top, name=name)
    if kind == "quantiles":
        return Hierarchy.quantile_intervals(values, int(bins), fanout=fanout, name=name)
    if kind == "masking":
        return Hierarchy.masking(values, name=name)
    if kind == "dates":
        return Hierarchy.dates(values, name=name)
    if kind == "grouping":
        return Hierarchy.grouping(values, parse_groups(groups), name=name)
    if kind == "arx-file":
        if not path:
            raise BadInput("choose the ARX hierarchy file (CSV, one row per value)")
        return Hierarchy.from_arx_csv(path, name=name)
    raise BadInput(f"unknown kind of hierarchy {kind!r}; choose one of {', '.join(BUILDERS)}")


GENERATED = ("intervals", "quantiles", "masking", "dates")  # the kinds a text spec can name
_SPEC_KEYS = {
    "intervals": ("width", "fanout", "start", "bottom", "top"),
    "quantiles": ("bins", "fanout"),
    "masking": (),
    "dates": (),
}


def is_hierarchy_spec(text: str) -> bool:
    """Whether ``text`` names a generated hierarchy (``intervals:width=10``, ``masking``) rather than a file."""
    kind, _, _ = str(text).partition(":")
    return kind.strip() in GENERATED


def hierarchy_from_spec(spec: str, values, *, name: str | None = None) -> Hierarchy:
    """A hierarchy generated over a column's ``values`` from a text spec, as the command line and study
    files write it: ``intervals:width=10,fanout=2,start=0,bottom=20,top=90``,
    ``quantiles:bins=4``, ``masking`` or ``dates``.

    >>> hierarchy_from_spec("intervals:width=10,top=80", range(0, 100)).generalise(85, 1)
    '>=80'
    """
    kind, _, rest = str(spec).partition(":")
    kind = kind.strip()
    if kind not in GENERATED:
        raise BadInput(
            f"unknown kind of hierarchy {kind!r}; generate one of {', '.join(GENERATED)}, or give an ARX hierarchy file"
        )
    given: dict = {}
    for part in (p.strip() for p in rest.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in _SPEC_KEYS[kind]:
            allowed = ", ".join(_SPEC_KEYS[kind]) or "no settings"
            raise BadInput(f"{kind}: {part!r} is not a setting (it takes {allowed}, as key=value)")
        if key in given:
            raise BadInput(f"{kind}: {key} is given twice")
        number = _number(value.strip())
        if number is None:
            raise BadInput(f"{kind}: {key} must be a number, got {value.strip()!r}")
        given[key] = number
    if kind == "intervals" and "width" not in given:
        raise BadInput("intervals: give the width of the first level's intervals, e.g. intervals:width=10")
    for key in ("fanout", "bins"):
        if key in given and not isinstance(given[key], int):
            raise BadInput(f"{kind}: {key} must be a whole number, got {given[key]!r}")
    return build_hierarchy(kind, values, name=name, **given)


def parse_groups(text: str) -> dict[str, list[str]]:
    """``"Europe: FR, DE; Asia: JP"`` → ``{"Europe": ["FR", "DE"], "Asia": ["JP"]}``."""
    groups: dict[str, list[str]] = {}
    for part in (p.strip() for p in text.replace("\n", ";").split(";")):
        if not part:
            continue
        group, sep, members = part.partition(":")
        if not sep or not group.strip():
            raise BadInput(f"write a group as NAME: value, value (got {part!r})")
        groups[group.strip()] = [m.strip() for m in members.split(",") if m.strip()]
    if not groups:
        raise BadInput("name at least one group, e.g. Europe: FR, DE")
    return groups


def preview_groups(hierarchy: Hierarchy, values, level: int) -> pd.DataFrame:
    """The groups the hierarchy makes of ``values`` at ``level``: each node's label and how many
    records it holds, largest first (the builder's live preview)."""
    series = pd.Series(values).dropna()
    labels = hierarchy.generalise_series(series, level)
    counts = labels.value_counts(sort=True)
    return pd.DataFrame({"group": counts.index.astype(str), "records": counts.to_numpy()})
