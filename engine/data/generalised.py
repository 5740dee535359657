"""Generalised values that stay typed until an exporter writes them.

A generalising method (Mondrian, PatternKa's relational form) replaces a quasi-identifier's value
by something coarser: a numeric :class:`Interval`, a hierarchy :class:`NodeValue` (with the leaves
below it) or :data:`SUPPRESSED`. The release keeps these objects per group
(:attr:`veil.engine.Release.group_values`); exporters write them in ARX's notation through
:func:`format_value`, and ``veil verify`` reads them back from the file alone with
:func:`parse_value`.

ARX's notation: a closed interval ``[20, 29]`` (ARX writes the half-open ``[20, 30[`` for its
generated intervals; both read back), a hierarchy node by its label, ``*`` for a suppressed value.
A one-value interval is written as the value itself.

>>> format_value(Interval(20, 29))
'[20, 29]'
>>> parse_value('[20, 30[')
Interval(lo=20, hi=30, closed=False)
>>> parse_value('*') is SUPPRESSED
True
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np


class _Suppressed:
    """The suppressed value ``*``: nothing of the original value is released."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "SUPPRESSED"

    def __str__(self) -> str:
        return "*"

    def __reduce__(self):
        return (_Suppressed, ())


SUPPRESSED = _Suppressed()


@dataclass(frozen=True)
class Interval:
    """The numeric range ``[lo, hi]`` (``[lo, hi[`` when ``closed`` is False).

    Comparisons and :meth:`width` work on the bounds as numbers; integers stay integers in text.
    """

    lo: float
    hi: float
    closed: bool = True

    def __post_init__(self):
        if not (self.lo <= self.hi):
            raise ValueError(f"an interval needs lo <= hi, got [{self.lo}, {self.hi}]")

    @property
    def width(self) -> float:
        return float(self.hi) - float(self.lo)

    def contains(self, x) -> bool:
        return self.lo <= x <= self.hi if self.closed else self.lo <= x < self.hi

    def __str__(self) -> str:
        return format_value(self)


@dataclass(frozen=True)
class NodeValue:
    """A hierarchy node: its label and the leaves below it (a leaf is its own only leaf)."""

    label: str
    leaves: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.label


_INTERVAL = re.compile(
    r"^\s*\[\s*(?P<lo>[-+]?[^,\[\]]+?)\s*(?:,|\s-\s|(?<=\d)-)\s*(?P<hi>[-+]?[^,\[\]]+?)\s*(?P<end>[\]\[])\s*$"
)


def _number_text(x) -> str:
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def format_value(value) -> str:
    """The text an exporter writes for a (possibly generalised) value."""
    if value is SUPPRESSED:
        return "*"
    if isinstance(value, Interval):
        if value.lo == value.hi and value.closed:
            return _number_text(value.lo)
        end = "]" if value.closed else "["
        return f"[{_number_text(value.lo)}, {_number_text(value.hi)}{end}"
    if isinstance(value, NodeValue):
        return value.label
    return str(value)


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_value(text):
    """What :func:`format_value` wrote: an Interval, SUPPRESSED, or the text itself (a node or a
    plain value; which node it names is known only with the column's hierarchy)."""
    if not isinstance(text, str):
        return text
    if text.strip() == "*":
        return SUPPRESSED
    m = _INTERVAL.match(text)
    if m:
        try:
            lo, hi = _number(m["lo"]), _number(m["hi"])
        except ValueError:
            return text
        if lo <= hi:
            return Interval(lo, hi, closed=m["end"] == "]")
    return text
