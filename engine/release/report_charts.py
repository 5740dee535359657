"""The release report's two charts as vector drawings: bars, lines and text laid out here, with the
PDF's own font metrics (DejaVu Sans), and written as SVG into ``report.html`` and as paths and text
into ``report.pdf`` (:mod:`veil.engine.report_render`). No plotting library is imported: a chart is
a few dozen shapes, and drawing them costs far less than starting one.

Coordinates are points, x to the right and y down from the drawing's top left corner; a text's y is
the middle of its letters (its capitals' half height above the baseline)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from . import pdf as pdfdoc
from .assessment import GROUP_SIZE_BINS, utility_rows

BEFORE, AFTER, THRESHOLD = "#9aa5b1", "#1f6f8b", "#b3261e"
INK = AXIS = "#1d2630"  # text and axes: the report's ink
MIDDLE = 0.3645  # half DejaVu Sans's capital height (0.729 em): from a text's middle to its baseline
TICK, PAD = 3.5, 3.5  # tick length and the gap between a tick and its label
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"


@dataclass
class Drawing:
    """Shapes in drawing order: ``("rect", x, y, w, h, fill)``, ``("line", x1, y1, x2, y2, colour,
    width, dashed)`` and ``("text", x, y, s, size, colour, anchor, weight, rotated)``."""

    width: float
    height: float
    items: list = field(default_factory=list)

    def rect(self, x, y, w, h, fill) -> None:
        if w > 0 and h > 0:
            self.items.append(("rect", x, y, w, h, fill))

    def line(self, x1, y1, x2, y2, colour=AXIS, width=0.8, dashed=False) -> None:
        self.items.append(("line", x1, y1, x2, y2, colour, width, dashed))

    def text(self, x, y, s, size, colour=INK, anchor="start", weight="normal", rotated=False) -> None:
        """``s`` with the middle of its letters at ``y``; ``anchor`` start, middle or end at ``x``;
        ``rotated``: reading upwards, its middle at ``(x, y)``."""
        self.items.append(("text", x, y, str(s), size, colour, anchor, weight, rotated))

    def texts(self) -> list[str]:
        """Every text drawn, in order (what a reader can read off the chart)."""
        return [item[3] for item in self.items if item[0] == "text"]


def text_width(s: str, size: float, weight: str = "normal") -> float:
    return pdfdoc.font("sans", weight).width(str(s), size)


# -- axes ----------------------------------------------------------------------------------------
class _Axes:
    """A plotting box (left, top, right, bottom) with data limits; ``ylim`` as matplotlib's (its first
    value at the bottom, so (2.6, -0.8) puts the first row at the top)."""

    def __init__(self, d: Drawing, box, xlim, ylim):
        self.d, (self.left, self.top, self.right, self.bottom) = d, box
        self.xlim, self.ylim = xlim, ylim

    def x(self, v: float) -> float:
        lo, hi = self.xlim
        return self.left + (v - lo) / (hi - lo) * (self.right - self.left)

    def y(self, v: float) -> float:
        lo, hi = self.ylim
        return self.bottom - (v - lo) / (hi - lo) * (self.bottom - self.top)

    def bar_h(self, centre: float, thickness: float, value: float, colour) -> None:
        """A horizontal bar from 0 to ``value`` around row position ``centre``."""
        y0, y1 = sorted((self.y(centre - thickness / 2), self.y(centre + thickness / 2)))
        self.d.rect(self.x(0), y0, self.x(value) - self.x(0), y1 - y0, colour)

    def bar_v(self, centre: float, thickness: float, value: float, colour) -> None:
        x0, x1 = self.x(centre - thickness / 2), self.x(centre + thickness / 2)
        self.d.rect(x0, self.y(value), x1 - x0, self.y(0) - self.y(value), colour)

    def frame(self) -> None:
        """The left and bottom spines (top and right are not drawn)."""
        self.d.line(self.left, self.top, self.left, self.bottom)
        self.d.line(self.left, self.bottom, self.right, self.bottom)

    def xticks(self, positions, labels, size=10) -> float:
        """Ticks and their labels under the box; returns the y below the labels."""
        for v, label in zip(positions, labels):
            x = self.x(v)
            self.d.line(x, self.bottom, x, self.bottom + TICK)
            self.d.text(x, self.bottom + TICK + PAD + size / 2, label, size, anchor="middle")
        return self.bottom + TICK + PAD + size * 1.2

    def yticks(self, positions, labels, size=10) -> float:
        """Ticks and their labels left of the box; returns the x left of the widest label."""
        for v, label in zip(positions, labels):
            y = self.y(v)
            self.d.line(self.left - TICK, y, self.left, y)
            self.d.text(self.left - TICK - PAD, y, label, size, anchor="end")
        return self.left - TICK - PAD - max((text_width(s, size) for s in labels), default=0.0)

    def xlabel(self, s: str, below: float, size=10) -> None:
        self.d.text((self.left + self.right) / 2, below + 2 + size / 2, s, size, anchor="middle")

    def ylabel(self, s: str, left_of: float, size=10) -> None:
        self.d.text(left_of - 4 - size / 2, (self.top + self.bottom) / 2, s, size, anchor="middle", rotated=True)


def nice_ticks(lo: float, hi: float, most: int = 7) -> list[float]:
    """Round tick values in [lo, hi]: a step of 1, 2, 2.5 or 5 times a power of ten, at most ``most``."""
    span = hi - lo
    if span <= 0:
        return [lo]
    power = 10 ** math.floor(math.log10(span / most))
    step = next(m * power for m in (1, 2, 2.5, 5, 10, 20) if span / (m * power) <= most - 1)
    first = math.ceil(lo / step - 1e-9)
    return [round(i * step, 12) for i in range(first, int(math.floor(hi / step + 1e-9)) + 1)]


def tick_labels(ticks: list[float]) -> list[str]:
    """The ticks with as many decimals as their step needs (all alike: 0.0, 0.2, …, 1.0)."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > 1e-9 * max(1.0, step):
        decimals += 1
    return [f"{t:.{decimals}f}" for t in ticks]


def _legend(d: Drawing, entries, y: float = 11.0, size: float = 9) -> None:
    """Coloured swatches and their labels in one row, centred at the top."""
    swatch, gap, between = 14.0, 5.0, 20.0
    widths = [swatch + gap + text_width(label, size) for label, _ in entries]
    x = (d.width - sum(widths) - between * (len(entries) - 1)) / 2
    for (label, colour), w in zip(entries, widths):
        d.rect(x, y - 3.5, swatch, 7, colour)
        d.text(x + swatch + gap, y, label, size)
        x += w + between


# -- the two charts ------------------------------------------------------------------------------
RISK_ROWS = [("Highest risk", "max"), ("Average risk", "avg"), ("Records at risk", "at_risk")]


def draw_risk(risk: dict, width: float = 648.0, height: float = 245.0) -> Drawing:
    """Risk summary (before/after bars with the threshold) and the group-size distribution."""
    d = Drawing(width, height)
    sides = [
        (label, risk.get(key), colour)
        for label, key, colour in (("before (the input)", "before", BEFORE), ("after (the release)", "after", AFTER))
    ]
    _legend(d, [(label if side else f"{label}: not available", colour) for label, side, colour in sides])
    top, bottom = 30.0, height - 2 * (TICK + PAD) - 2 * 12 - 4
    labels = [r for r, _ in RISK_ROWS]
    left = 6 + TICK + PAD + max(text_width(s, 10) for s in labels)
    right_ticks = tick_labels(nice_ticks(0, 105))
    gutter = 34 + TICK + PAD + max(text_width(s, 10) for s in right_ticks) + 14
    plots = width - 8 - left - gutter
    split = left + plots / 2.15

    ax = _Axes(d, (left, top, split, bottom), (0, 118), (len(RISK_ROWS) - 0.4, -0.8))
    t = 100 * risk.get("threshold", 0.2)
    for i, (label, side, colour) in enumerate(sides):
        for row, (_, key) in enumerate(RISK_ROWS):
            pos = row + (i - 0.5) * 0.4
            v = (side or {}).get(key)
            ax.bar_h(pos, 0.38, 100 * (v or 0.0), colour)
            d.text(ax.x(100 * (v or 0.0)) + 3, ax.y(pos), "—" if v is None else f"{100 * v:.1f} %", 8)
    d.line(ax.x(t), top, ax.x(t), bottom, THRESHOLD, 1.0, dashed=True)
    d.text(ax.x(t) + 3, ax.y(-0.62), f"threshold {t:g} %", 8, colour=THRESHOLD)
    ax.frame()
    ax.yticks(range(len(RISK_ROWS)), labels)
    ticks = nice_ticks(0, 118)
    ax.xlabel("re-identification risk (%)", ax.xticks(ticks, tick_labels(ticks)))

    bins = [b[2] for b in GROUP_SIZE_BINS]
    ax = _Axes(d, (split + gutter, top, width - 8, bottom), (-0.7, len(bins) - 0.3), (0, 105))
    for i, (label, side, colour) in enumerate(sides):
        if side:
            for j, b in enumerate(bins):
                ax.bar_v(j + (i - 0.5) * 0.4, 0.4, 100 * side["group_sizes"].get(b, 0.0), colour)
    ax.frame()
    ax.xlabel("records sharing their values (size of the group)", ax.xticks(range(len(bins)), bins))
    ticks = nice_ticks(0, 105)
    ax.ylabel("share of records (%)", ax.yticks(ticks, tick_labels(ticks)))
    return d


def draw_utility(util: dict, width: float = 648.0, height: float = 158.0) -> Drawing:
    """The classifier's figures trained on the original and on the release, side by side."""
    d = Drawing(width, height)
    rows = utility_rows(util)
    sides = (
        ("trained on the original", util.get("before"), BEFORE),
        ("trained on the release", util.get("after"), AFTER),
    )
    _legend(d, [(label if side else f"{label}: not available", colour) for label, side, colour in sides])
    top, bottom = 28.0, height - (TICK + PAD) - 2 * 12 - 4
    left = 6 + TICK + PAD + max((text_width(r, 10) for r, _ in rows), default=0.0)
    ax = _Axes(d, (left, top, width - 8, bottom), (0, 1.1), (len(rows) - 0.4, -0.6))
    for i, (label, side, colour) in enumerate(sides):
        for row, (_, key) in enumerate(rows):
            pos = row + (i - 0.5) * 0.4
            v = (side or {}).get(key)
            ax.bar_h(pos, 0.38, v or 0.0, colour)
            d.text(ax.x(v or 0.0) + 3, ax.y(pos), "—" if v is None else f"{v:.3f}", 8)
    ax.frame()
    ax.yticks(range(len(rows)), [r for r, _ in rows])
    ticks = nice_ticks(0, 1.1)
    ax.xlabel("score (1.0 is perfect; an AUC of 0.5 is guessing)", ax.xticks(ticks, tick_labels(ticks)))
    return d


CHARTS = {"risk": draw_risk, "utility": draw_utility}


def drawing(name: str, data: dict) -> Drawing:
    return CHARTS[name](data)


# -- output --------------------------------------------------------------------------------------
def _n(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def svg(d: Drawing, title: str = "") -> str:
    """The drawing as an inline SVG element (scales to its container's width)."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(d.width)} {_n(d.height)}" role="img" '
        f'font-family="{FONT}">'
    ]
    if title:
        out.append(f"<title>{escape(title)}</title>")
    out.append(f'<rect width="{_n(d.width)}" height="{_n(d.height)}" fill="#ffffff"/>')
    for item in d.items:
        kind = item[0]
        if kind == "rect":
            _, x, y, w, h, fill = item
            out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="{fill}"/>')
        elif kind == "line":
            _, x1, y1, x2, y2, colour, width, dashed = item
            dash = f' stroke-dasharray="{_n(3.7 * width)} {_n(1.6 * width)}"' if dashed else ""
            out.append(
                f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{colour}" '
                f'stroke-width="{_n(width)}"{dash}/>'
            )
        else:
            _, x, y, s, size, colour, anchor, weight, rotated = item
            turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotated else ""
            bold = ' font-weight="bold"' if weight == "bold" else ""
            out.append(
                f'<text x="{_n(x)}" y="{_n(y + MIDDLE * size)}" font-size="{_n(size)}" fill="{colour}" '
                f'text-anchor="{anchor}"{bold}{turn}>{escape(s)}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def to_pdf(d: Drawing, doc: pdfdoc.Document, x0: float, y0: float, scale: float) -> None:
    """Draw ``d`` on ``doc``'s current page with its top left corner at (x0, y0) points, scaled."""
    for item in d.items:
        kind = item[0]
        if kind == "rect":
            _, x, y, w, h, fill = item
            doc.rect(x0 + x * scale, y0 + y * scale, w * scale, h * scale, fill)
        elif kind == "line":
            _, x1, y1, x2, y2, colour, width, dashed = item
            doc.line(
                x0 + x1 * scale,
                y0 + y1 * scale,
                x0 + x2 * scale,
                y0 + y2 * scale,
                colour,
                width * scale,
                dash=(3.7 * width * scale, 1.6 * width * scale) if dashed else None,
            )
        else:
            _, x, y, s, size, colour, anchor, weight, rotated = item
            size *= scale
            f = pdfdoc.font("sans", weight)
            below_top = size * f.ascent / f.units - MIDDLE * size  # from the line's top to the letters' middle
            align = {"start": "left", "middle": "center", "end": "right"}[anchor]
            if rotated:
                doc.text(
                    x0 + x * scale - below_top,
                    y0 + y * scale,
                    s,
                    size,
                    weight=weight,
                    colour=colour,
                    align=align,
                    angle=90,
                )
            else:
                doc.text(x0 + x * scale, y0 + y * scale - below_top, s, size, weight=weight, colour=colour, align=align)
