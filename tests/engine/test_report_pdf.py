"""The report's PDF is written directly (engine/pdf.py), not through matplotlib.

Its text is read back through the ToUnicode maps it carries (as a viewer's search does): every
section of a report and its verdict are there, with the binding `veil verify` reads; the embedded
font subsets hold the outlines of every glyph used (checked with FreeType, through matplotlib) and
no other; objects sit where the cross-reference table says. The report's charts are drawn into the
PDF as shapes and text (tests/engine/test_report_charts.py)."""

from __future__ import annotations

import io
import re
import zlib

import numpy as np
import pandas as pd
import pytest

from veil.engine import Context, ExportOptions, PluginCall, RunSpec, Table, execute, make_registry
from veil.engine.release import pdf as pdfdoc
from veil.engine.release.assessment import ReportOptions
from veil.engine.release.export import export_release
from veil.engine.release.manifest import read_binding
from veil.engine.release.report import build_document, read_manifest

OBJECT = re.compile(rb"(\d+) 0 obj\n(.*?)\nendobj\n", re.S)


def objects(data: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in OBJECT.finditer(data)}


def stream_of(body: bytes) -> bytes:
    raw = body[body.index(b"stream\n") + 7 : body.rindex(b"\nendstream")]
    return zlib.decompress(raw) if b"/FlateDecode" in body[: body.index(b"stream\n")] else raw


def page_texts(data: bytes) -> list[str]:
    """The text of each page, decoded through the fonts' ToUnicode maps (one line per text run)."""
    objs = objects(data)
    unicode_of = {}
    for num, body in objs.items():
        m = re.search(rb"/Subtype /Type0 .*?/ToUnicode (\d+) 0 R", body)
        if m:
            cmap = stream_of(objs[int(m.group(1))]).decode()
            unicode_of[num] = {
                int(g, 16): bytes.fromhex(u).decode("utf-16-be")
                for g, u in re.findall(r"<([0-9A-F]{4})> <([0-9A-F]+)>", cmap)
            }
    pages = []
    for body in objs.values():
        if not body.startswith(b"<< /Type /Page "):
            continue
        fonts = {name.decode(): int(ref) for name, ref in re.findall(rb"/(F\d+) (\d+) 0 R", body)}
        content = stream_of(objs[int(re.search(rb"/Contents (\d+) 0 R", body).group(1))]).decode()
        lines = []
        for font, hexed in re.findall(r"/(F\d+) [\d.]+ Tf .*?<([0-9A-F]*)> Tj", content):
            table = unicode_of[fonts[font]]
            lines.append("".join(table.get(int(hexed[i : i + 4], 16), "\ufffd") for i in range(0, len(hexed), 4)))
        pages.append("\n".join(lines))
    return pages


def png_bytes(width=30, height=20, mode="RGB") -> bytes:
    from PIL import Image

    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 255, (height, width, len(mode)), dtype=np.uint8), mode)
    buf = io.BytesIO()
    img.save(buf, format="png")
    return buf.getvalue()


def test_text_rectangles_and_images_round_trip_and_the_xref_is_right():
    doc = pdfdoc.Document(595, 842)
    doc.new_page()
    doc.text(72, 72, "Highest risk — 20.0 % (age∈[48,90], café, •)", 10)
    doc.text(500, 100, "right-aligned 0.842", 9, weight="bold", align="right", colour="#5b6672")
    doc.rect(72, 120, 400, 1, "#d8dee4")
    doc.image(png_bytes(), 72, 130, 300, 200)
    doc.new_page()
    doc.text(72, 72, "0f3a" * 16, 8, family="mono")
    doc.text(72, 90, "an italic caption", 8.5, style="italic")
    data = doc.to_bytes({"Title": "Release report — x.csv", "Keywords": "veil-export-id=abc123 (a)"})
    assert data.startswith(b"%PDF-1.") and data.rstrip().endswith(b"%%EOF")
    first, second = page_texts(data)
    assert first.splitlines() == ["Highest risk — 20.0 % (age∈[48,90], café, •)", "right-aligned 0.842"]
    assert second.splitlines() == ["0f3a" * 16, "an italic caption"]
    # every object where the cross-reference table says it is
    xref = int(data[data.rindex(b"startxref") + 10 :].split()[0])
    table = data[xref:].split(b"trailer")[0].split(b"\n")[2:-1]
    for i, row in enumerate(table[1:], start=1):
        assert data[int(row[:10]) :].startswith(f"{i} 0 obj".encode())
    image = next(b for b in objects(data).values() if b"/Subtype /Image" in b)
    assert b"/Width 30 /Height 20" in image and b"/Predictor 15 /Colors 3" in image


def test_a_font_subset_holds_the_outline_of_every_glyph_used_and_no_other(tmp_path):
    from matplotlib.ft2font import FT2Font, LoadFlags

    font = pdfdoc.font("sans")
    used = set(font.glyphs("RiskÅÉ%0.5∈—"))  # Å and É are composite glyphs in DejaVu
    path = tmp_path / "subset.ttf"
    path.write_bytes(font.subset(used))
    ft = FT2Font(str(path))
    assert ft.num_glyphs == font.n_glyphs  # glyph ids unchanged
    full = FT2Font(str(pdfdoc.font_folder() / "DejaVuSans.ttf"))
    for gid in used:
        ft.load_glyph(gid, flags=LoadFlags.NO_HINTING)
        full.load_glyph(gid, flags=LoadFlags.NO_HINTING)
        vertices, codes = ft.get_path()
        assert len(vertices) > 0, gid
        assert np.array_equal(vertices, full.get_path()[0]) and np.array_equal(codes, full.get_path()[1]), gid
    for ch in "QZq":
        ft.load_glyph(font.glyphs(ch)[0], flags=LoadFlags.NO_HINTING)
        assert len(ft.get_path()[0]) == 0, ch
    assert len(path.read_bytes()) < len(font.data) / 5


REGISTRY = make_registry()


@pytest.fixture
def exported(tmp_path, monkeypatch):
    monkeypatch.setenv("VEIL_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame(
        {"age": rng.choice(["20-39", "40-59", "60+"], n), "sex": rng.choice(["F", "M"], n), "y": rng.integers(0, 2, n)}
    )
    table = Table.from_frame(frame, roles={"age": "quasi-identifier", "sex": "quasi-identifier", "y": "target"})
    result = execute(
        REGISTRY,
        table,
        RunSpec(PluginCall.parse("all-features"), PluginCall.parse("k-anonymity:k=2"), 0, ("sfc",)),
        Context(0),
    )
    out = tmp_path / "out"
    export_release(REGISTRY, result, out, ExportOptions("csv"), report=ReportOptions(utility=False))
    return out


def test_the_report_pdf_has_every_section_and_the_binding(exported):
    manifest = read_manifest(exported)
    doc = build_document(REGISTRY, manifest)
    data = (exported / "report.pdf").read_bytes()
    text = " ".join(" ".join(page_texts(data)).split())
    assert len(page_texts(data)) >= 2
    assert doc.sections and doc.verdict.headline
    for heading in [doc.title, *(s.heading for s in doc.sections)]:
        assert " ".join(heading.split()) in text, heading
    assert " ".join(doc.verdict.headline.split()[:4]) in text
    assert manifest["output"]["sha256"] in text
    assert (
        read_binding(exported / "report.pdf")["manifest-sha256"]
        == read_binding(exported / "report.html")["manifest-sha256"]
    )
