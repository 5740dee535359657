"""Rendering a release report (:class:`veil.engine.report.Document`) as self-contained HTML and as
a PDF, with the same charts: vector drawings (:mod:`veil.engine.report_charts`), inline SVG in the
HTML and paths and text in the PDF, which :mod:`veil.engine.pdf` writes directly (so no plotting
library, no new dependency and no Qt)."""

from __future__ import annotations

import functools
import html
import textwrap
from importlib import resources
from string import Template

from . import pdf as pdfdoc
from . import report_charts

STATUS_COLOURS = {
    "holds": ("#2e7d4f", "#eaf6ee"),
    "fails": ("#b3261e", "#fdecea"),
    "changed": ("#b3261e", "#fdecea"),
    "none": ("#8a6d00", "#fff7da"),
}


def chart(doc, name: str) -> report_charts.Drawing:
    """The chart ``name`` of the document, drawn once (the HTML and the PDF show the same drawing)."""
    drawn = doc.meta.setdefault("drawings", {})
    if name not in drawn:
        drawn[name] = report_charts.drawing(name, doc.charts[name])
    return drawn[name]


# -- HTML --------------------------------------------------------------------------------------------
def render_html(doc) -> str:
    template = Template((resources.files("veil.resources") / "report_template.html").read_text(encoding="utf-8"))
    v = doc.verdict
    verdict = (
        f'<section class="verdict {v.status}" id="verdict" data-status="{v.status}">'
        f'<p class="headline">{_e(v.headline)}</p>' + "".join(f"<p>{_e(line)}</p>" for line in v.lines) + "</section>"
    )
    body = "\n".join(_html_section(doc, s) for s in doc.sections)
    return template.substitute(
        title=_e(doc.title),
        subtitle=_e(doc.subtitle),
        verdict=verdict,
        body=body,
        file=_e(doc.meta.get("file", "")),
        veil_version=_e(doc.meta.get("veil_version", "")),
        binding=_e(doc.meta.get("binding", "")),
    )


def _html_section(doc, section) -> str:
    parts = [f"<section><h2>{_e(section.heading)}</h2>"]
    for b in section.blocks:
        if b.kind == "p":
            parts.append(f"<p>{_e(b.content)}</p>")
        elif b.kind == "facts":
            rows = "".join(f"<tr><th scope=\"row\">{_e(k)}</th><td>{_cell(v)}</td></tr>" for k, v in b.content)
            parts.append(f'<table class="facts">{rows}</table>')
        elif b.kind == "table":
            head = "".join(
                f'<th scope="col"{"" if i == 0 else " class=num"}>{_e(h)}</th>' for i, h in enumerate(b.header or [])
            )
            rows = "".join(
                "<tr>"
                + "".join(
                    f"<td>{_cell(c)}</td>" if i == 0 else f'<td class="num">{_cell(c)}</td>' for i, c in enumerate(r)
                )
                + "</tr>"
                for r in b.content
            )
            parts.append(f'<table class="numbers"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>')
        elif b.kind == "list":
            parts.append("<ul>" + "".join(f"<li>{_e(i)}</li>" for i in b.content) + "</ul>")
        elif b.kind == "code":
            parts.append(
                '<div class="hashes">'
                + "".join(
                    f'<div><span class="label">{_e(label)}</span> <code>{_e(name)}</code>'
                    f'<span class="hash" data-key="sha256.{_e(label)}">{_e(digest)}</span></div>'
                    for label, name, digest in b.content
                )
                + "</div>"
            )
        elif b.kind == "chart":
            parts.append(
                f"<figure>{report_charts.svg(chart(doc, b.content), b.caption)}"
                f"<figcaption>{_e(b.caption)}</figcaption></figure>"
            )
    parts.append("</section>")
    return "\n".join(parts)


def _cell(c) -> str:
    if hasattr(c, "key"):  # a Num: keep the exact value beside its text
        value = "" if c.value is None else repr(c.value)
        return f'<span data-key="{_e(c.key)}" data-value="{_e(value)}">{_e(c.text)}</span>'
    return _e(c)


def _e(text) -> str:
    return html.escape(str(text), quote=True)


# -- PDF ---------------------------------------------------------------------------------------------
PAGE_W, PAGE_H = 8.27, 11.69  # A4, inches
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 0.75, 0.75, 0.85
TEXT_W = PAGE_W - 2 * MARGIN_X
BODY = 9.5


def render_pdf(doc, path, check=None) -> None:
    """A4 pages: the verdict box, then each section as text, tables and the charts, with page numbers.

    ``check`` (e.g. a Context's) is called before each section, to stop a cancelled export."""
    check = check or (lambda: None)
    metadata = {"Title": f"{doc.title} — {doc.meta.get('file', '')}", "Creator": "Veil"}
    if doc.meta.get("binding"):
        metadata["Keywords"] = doc.meta["binding"]  # ties the PDF to its manifest (veil verify reads it)
    writer = _PdfWriter(footer=f"{doc.title} — {doc.meta.get('file', '')}")
    writer.text(doc.title, size=20, weight="bold", gap=0.05)
    writer.paragraph(doc.subtitle, size=9, color="#5b6672")
    writer.verdict(doc.verdict)
    for section in doc.sections:
        check()
        short = any(b.kind == "code" for b in section.blocks)  # the fingerprints stay on one page
        writer.heading(section.heading, keep=2.4 if short else 0.9)
        for b in section.blocks:
            getattr(writer, f"block_{b.kind}")(b, doc)
    writer.finish()
    with open(path, "wb") as f:
        f.write(writer.pdf.to_bytes(metadata))


class _PdfWriter:
    """Flows text, tables and images down A4 pages (y in inches from the top of the page)."""

    def __init__(self, footer: str):
        self.pdf = pdfdoc.Document(PAGE_W * 72, PAGE_H * 72)
        self.footer, self.page, self.open = footer, 0, False
        self.new_page()

    # -- pages
    def new_page(self):
        if self.open:
            self._close_page()
        self.page += 1
        self.pdf.new_page()
        self.open = True
        self.y = MARGIN_TOP

    def _close_page(self):
        self._put(MARGIN_X, PAGE_H - MARGIN_BOTTOM / 2, self.footer, size=7.5, color="#5b6672")
        self._put(
            PAGE_W - MARGIN_X, PAGE_H - MARGIN_BOTTOM / 2, f"page {self.page}", size=7.5, color="#5b6672", ha="right"
        )

    def finish(self):
        self._close_page()
        self.open = False

    def ensure(self, height: float):
        if self.y + height > PAGE_H - MARGIN_BOTTOM:
            self.new_page()

    def _put(self, x, y, s, size=BODY, ha="left", weight="normal", color=None, style="normal", family="sans"):
        self.pdf.text(x * 72, y * 72, str(s), size, family=family, weight=weight, style=style, colour=color, align=ha)

    def _rule(self, y, height_pt, colour, x=MARGIN_X, width=TEXT_W):
        self.pdf.rect(x * 72, y * 72, width * 72, height_pt, colour)

    # -- text
    @staticmethod
    def line_height(size):
        return size * 1.4 / 72

    @staticmethod
    def wrap(text, width_in, size, mono=False, weight="normal"):
        """Greedy word wrap by the rendered width of the words (DejaVu Sans metrics)."""
        limit = width_in * 72
        space = _text_width(" ", size, weight, mono)
        lines, line, used = [], [], 0.0
        for word in str(text).split():
            w = _text_width(word, size, weight, mono)
            if line and used + space + w > limit:
                lines.append(" ".join(line))
                line, used = [], 0.0
            if w > limit:  # a hash or a path longer than the line: cut it by characters
                chunk = max(1, int(len(word) * limit / w))
                pieces = textwrap.wrap(word, chunk, break_long_words=True)
                lines += pieces[:-1]
                word, w = pieces[-1], _text_width(pieces[-1], size, weight, mono)
            used += (space if line else 0.0) + w
            line.append(word)
        if line:
            lines.append(" ".join(line))
        return lines or [""]

    def text(self, s, size=BODY, gap=0.0, x=MARGIN_X, **kw):
        self.ensure(self.line_height(size))
        self._put(x, self.y, s, size=size, **kw)
        self.y += self.line_height(size) + gap

    def paragraph(self, s, size=BODY, width=TEXT_W, x=MARGIN_X, gap=0.08, **kw):
        for line in self.wrap(s, width, size):
            self.text(line, size=size, x=x, **kw)
        self.y += gap

    def heading(self, s, keep=0.9):
        self.ensure(keep)  # keep a heading with the start of its section
        self.y += 0.12
        self._rule(self.y, 0.6, "#d8dee4")
        self.y += 0.1
        self.text(s, size=13, weight="bold", gap=0.06)

    def verdict(self, v):
        fg, bg = STATUS_COLOURS.get(v.status, STATUS_COLOURS["none"])
        head = self.wrap(v.headline, TEXT_W - 0.5, 12.5, weight="bold")
        lines = [w for line in v.lines for w in self.wrap(line, TEXT_W - 0.5, BODY)]
        height = len(head) * self.line_height(12.5) + len(lines) * self.line_height(BODY) + 0.35
        self.y += 0.15
        self.ensure(height)
        top = self.y
        self._rule(top, height * 72, bg)
        self._rule(top, height * 72, fg, width=0.09)
        self.y = top + 0.16
        for line in head:
            self.text(line, size=12.5, weight="bold", color=fg, x=MARGIN_X + 0.3)
        self.y += 0.04
        for line in lines:
            self.text(line, x=MARGIN_X + 0.3)
        self.y = top + height + 0.1

    # -- blocks
    def block_p(self, b, doc):
        self.paragraph(b.content)

    def block_list(self, b, doc):
        for item in b.content:
            lines = self.wrap(item, TEXT_W - 0.25, BODY)
            self.ensure(self.line_height(BODY) * min(len(lines), 3))
            self._put(MARGIN_X + 0.05, self.y, "•")
            for line in lines:
                self.text(line, x=MARGIN_X + 0.25)
            self.y += 0.04
        self.y += 0.06

    def block_facts(self, b, doc):
        self._rows([[k, _text(v)] for k, v in b.content], [1.9, TEXT_W - 1.9], header=None, label_col=True)

    def block_table(self, b, doc):
        n = len(b.header or b.content[0])
        first = min(3.0, TEXT_W * 0.45)
        widths = [first] + [(TEXT_W - first) / (n - 1)] * (n - 1) if n > 1 else [TEXT_W]
        self._rows([[_text(c) for c in r] for r in b.content], widths, header=b.header)

    def _rows(self, rows, widths, header=None, label_col=False):
        size = 9
        if header:
            self._row([str(h) for h in header], widths, size, weight="bold", color="#5b6672", numeric=True)
        for r in rows:
            self._row(r, widths, size, numeric=not label_col, label_col=label_col)
        self.y += 0.1

    def _row(self, cells, widths, size, numeric=False, label_col=False, **kw):
        bold = [kw.get("weight") == "bold" or (label_col and i == 0) for i in range(len(cells))]
        wrapped = [
            self.wrap(c, w - 0.12, size, weight="bold" if b else "normal") for c, w, b in zip(cells, widths, bold)
        ]
        height = max(len(w) for w in wrapped) * self.line_height(size) + 0.08
        self.ensure(height)
        x = MARGIN_X
        for i, (lines, w) in enumerate(zip(wrapped, widths)):
            right = numeric and i > 0
            style = dict(kw)
            if label_col and i == 0:
                style.update(weight="bold", color="#5b6672")
            for j, line in enumerate(lines):
                self._put(
                    x + w - 0.06 if right else x,
                    self.y + 0.04 + j * self.line_height(size),
                    line,
                    size=size,
                    ha="right" if right else "left",
                    **style,
                )
            x += w
        self.y += height
        self._rule(self.y, 0.4, "#d8dee4")

    def block_code(self, b, doc):
        for label, name, digest in b.content:
            self.ensure(3 * self.line_height(9))
            self.text(f"{label}: {name}", size=9, weight="bold")
            self.text(digest, size=8, family="mono", gap=0.06)
        self.y += 0.05

    def block_chart(self, b, doc):
        drawn = chart(doc, b.content)
        scale = TEXT_W * 72 / drawn.width
        height = drawn.height * scale / 72
        caption = self.wrap(b.caption, TEXT_W, 8.5)
        self.ensure(height + len(caption) * self.line_height(8.5) + 0.1)
        report_charts.to_pdf(drawn, self.pdf, MARGIN_X * 72, self.y * 72, scale)
        self.y += height + 0.06
        for line in caption:
            self.text(line, size=8.5, color="#5b6672", style="italic")
        self.y += 0.1


@functools.lru_cache(maxsize=20000)
def _text_width(text: str, size: float, weight: str = "normal", mono: bool = False) -> float:
    """Width in points of ``text`` as the PDF draws it (the font's advance widths)."""
    return pdfdoc.font("mono" if mono else "sans", weight).width(text, size)


def _text(c) -> str:
    return c.text if hasattr(c, "text") else str(c)
