"""A small PDF writer for the release report: pages of text, filled rectangles, lines and PNG images.

The report's text pages were drawn through matplotlib (a Figure per page saved by PdfPages), about
a second of a ``veil run``'s report and matplotlib's import besides. This writes the same content
directly: text in the DejaVu fonts matplotlib ships (TrueType, embedded as subsets holding only the
glyphs used, with a ToUnicode map so the text can be searched and extracted), rectangles as path
fills, and PNG images embedded as they are (their compressed rows, no decoding). No dependency
beyond the standard library; the fonts are read from matplotlib's data folder without importing it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import struct
import zlib
from pathlib import Path

FONT_FILES = {
    ("sans", "normal", "normal"): "DejaVuSans.ttf",
    ("sans", "bold", "normal"): "DejaVuSans-Bold.ttf",
    ("sans", "normal", "italic"): "DejaVuSans-Oblique.ttf",
    ("sans", "bold", "italic"): "DejaVuSans-BoldOblique.ttf",
    ("mono", "normal", "normal"): "DejaVuSansMono.ttf",
    ("mono", "bold", "normal"): "DejaVuSansMono-Bold.ttf",
}


def font_folder() -> Path:
    spec = importlib.util.find_spec("matplotlib")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("matplotlib's fonts were not found (is matplotlib installed?)")
    return Path(list(spec.submodule_search_locations)[0]) / "mpl-data" / "fonts" / "ttf"


@functools.cache
def font(family: str = "sans", weight: str = "normal", style: str = "normal") -> TrueType:
    key = (
        "mono" if family == "mono" else "sans",
        "bold" if weight == "bold" else "normal",
        "italic" if style in ("italic", "oblique") else "normal",
    )
    return TrueType((font_folder() / FONT_FILES[key]).read_bytes())


class TrueType:
    """The parts of a TrueType font a PDF needs: character → glyph, advance widths, metrics, and a
    subset of the font file holding only some glyphs."""

    def __init__(self, data: bytes):
        self.data = data
        n = struct.unpack_from(">H", data, 4)[0]
        self.tables = {}
        for i in range(n):
            tag, _, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
            self.tables[tag.decode("latin-1")] = (offset, length)
        head = self._table("head")
        self.units = struct.unpack_from(">H", head, 18)[0]
        self.bbox = struct.unpack_from(">hhhh", head, 36)
        self.loca_long = struct.unpack_from(">h", head, 50)[0] == 1
        self.n_glyphs = struct.unpack_from(">H", self._table("maxp"), 4)[0]
        hhea = self._table("hhea")
        self.ascent, self.descent = struct.unpack_from(">hh", hhea, 4)
        n_metrics = struct.unpack_from(">H", hhea, 34)[0]
        hmtx = self._table("hmtx")
        advances = list(struct.unpack_from(f">{2 * n_metrics}H", hmtx, 0)[0::2])
        self.advances = advances + [advances[-1]] * (self.n_glyphs - n_metrics)
        self.cmap = self._read_cmap()
        name = self._postscript_name() or "DejaVuSans"
        self.name = "".join(c for c in name if c.isalnum() or c == "-")
        post = self.tables.get("post")
        self.italic_angle = struct.unpack_from(">i", self.data, post[0] + 4)[0] / 65536 if post else 0.0

    def _table(self, tag: str) -> bytes:
        offset, length = self.tables[tag]
        return self.data[offset : offset + length]

    def _read_cmap(self) -> dict[int, int]:
        cmap = self._table("cmap")
        n = struct.unpack_from(">H", cmap, 2)[0]
        subtables = {}
        for i in range(n):
            platform, encoding, offset = struct.unpack_from(">HHI", cmap, 4 + 8 * i)
            subtables[(platform, encoding)] = offset
        for key in ((3, 10), (0, 4), (3, 1), (0, 3)):
            if key in subtables:
                fmt = struct.unpack_from(">H", cmap, subtables[key])[0]
                if fmt == 12:
                    return self._cmap12(cmap, subtables[key])
                if fmt == 4:
                    return self._cmap4(cmap, subtables[key])
        return {}

    @staticmethod
    def _cmap4(cmap: bytes, at: int) -> dict[int, int]:
        segs = struct.unpack_from(">H", cmap, at + 6)[0] // 2
        ends = struct.unpack_from(f">{segs}H", cmap, at + 14)
        starts = struct.unpack_from(f">{segs}H", cmap, at + 16 + 2 * segs)
        deltas = struct.unpack_from(f">{segs}h", cmap, at + 16 + 4 * segs)
        range_at = at + 16 + 6 * segs
        ranges = struct.unpack_from(f">{segs}H", cmap, range_at)
        out = {}
        for i in range(segs):
            for code in range(starts[i], ends[i] + 1):
                if code == 0xFFFF:
                    continue
                if ranges[i] == 0:
                    glyph = (code + deltas[i]) & 0xFFFF
                else:
                    where = range_at + 2 * i + ranges[i] + 2 * (code - starts[i])
                    glyph = struct.unpack_from(">H", cmap, where)[0]
                    glyph = (glyph + deltas[i]) & 0xFFFF if glyph else 0
                if glyph:
                    out[code] = glyph
        return out

    @staticmethod
    def _cmap12(cmap: bytes, at: int) -> dict[int, int]:
        n = struct.unpack_from(">I", cmap, at + 12)[0]
        out = {}
        for i in range(n):
            start, end, glyph = struct.unpack_from(">III", cmap, at + 16 + 12 * i)
            for code in range(start, end + 1):
                out[code] = glyph + code - start
        return out

    def _postscript_name(self) -> str | None:
        if "name" not in self.tables:
            return None
        name = self._table("name")
        count, strings = struct.unpack_from(">HH", name, 2)
        for i in range(count):
            platform, encoding, _, name_id, length, offset = struct.unpack_from(">HHHHHH", name, 6 + 12 * i)
            if name_id == 6:
                raw = name[strings + offset : strings + offset + length]
                return raw.decode("utf-16-be" if platform in (0, 3) else "latin-1", "replace")
        return None

    def glyphs(self, text: str) -> list[int]:
        return [self.cmap.get(ord(ch), 0) for ch in text]

    def width(self, text: str, size: float) -> float:
        """Width in points of ``text`` at ``size`` points (advance widths, no kerning)."""
        adv = self.advances
        return sum(adv[g] for g in self.glyphs(text)) * size / self.units

    def _glyph(self, loca: list[int], glyf: bytes, gid: int) -> bytes:
        return glyf[loca[gid] : loca[gid + 1]]

    def subset(self, used: set[int]) -> bytes:
        """The font file with every glyph outside ``used`` (and the components its composite glyphs
        draw) emptied; glyph ids are unchanged, so text written with the full font's ids shows."""
        glyf = self._table("glyf")
        loca_raw = self._table("loca")
        count = self.n_glyphs + 1
        loca = (
            list(struct.unpack_from(f">{count}I", loca_raw))
            if self.loca_long
            else [2 * v for v in struct.unpack_from(f">{count}H", loca_raw)]
        )
        keep, todo = set(), [0, *used]
        while todo:
            gid = todo.pop()
            if gid in keep or not 0 <= gid < self.n_glyphs:
                continue
            keep.add(gid)
            g = self._glyph(loca, glyf, gid)
            if len(g) >= 10 and struct.unpack_from(">h", g, 0)[0] < 0:  # composite: add its components
                at, more = 10, True
                while more and at + 4 <= len(g):
                    flags, component = struct.unpack_from(">HH", g, at)
                    todo.append(component)
                    at += 4 + (4 if flags & 1 else 2)
                    at += 2 if flags & 8 else 4 if flags & 0x40 else 8 if flags & 0x80 else 0
                    more = bool(flags & 0x20)
        parts, offsets, at = [], [], 0
        for gid in range(self.n_glyphs):
            offsets.append(at)
            if gid in keep:
                g = self._glyph(loca, glyf, gid)
                g += b"\0" * (-len(g) % 4)
                parts.append(g)
                at += len(g)
        offsets.append(at)
        head = bytearray(self._table("head"))
        head[8:12] = b"\0\0\0\0"  # checkSumAdjustment, set below
        head[50:52] = struct.pack(">h", 1)  # long loca offsets
        tables = {
            tag: self._table(tag) for tag in ("cvt ", "fpgm", "hhea", "hmtx", "maxp", "prep") if tag in self.tables
        }
        tables |= {"glyf": b"".join(parts), "loca": struct.pack(f">{len(offsets)}I", *offsets), "head": bytes(head)}
        out = _sfnt(tables)
        adjustment = (0xB1B0AFBA - _checksum(out)) & 0xFFFFFFFF
        at = out.index(b"head") + 8  # the head table's offset in the directory
        head_offset = struct.unpack_from(">I", out, at)[0]
        return out[: head_offset + 8] + struct.pack(">I", adjustment) + out[head_offset + 12 :]


def _checksum(data: bytes) -> int:
    data += b"\0" * (-len(data) % 4)
    return sum(struct.unpack(f">{len(data) // 4}I", data)) & 0xFFFFFFFF


def _sfnt(tables: dict[str, bytes]) -> bytes:
    tags = sorted(tables)
    n = len(tags)
    power = 1 << (n.bit_length() - 1)
    header = struct.pack(">IHHHH", 0x00010000, n, power * 16, power.bit_length() - 1, n * 16 - power * 16)
    directory, body, at = [], [], 12 + 16 * n
    for tag in tags:
        data = tables[tag]
        directory.append(struct.pack(">4sIII", tag.encode("latin-1"), _checksum(data), at, len(data)))
        padded = data + b"\0" * (-len(data) % 4)
        body.append(padded)
        at += len(padded)
    return header + b"".join(directory) + b"".join(body)


def png_image(png: bytes) -> dict:
    """Width, height, colours and the compressed rows of an 8-bit, non-interlaced RGB or grey PNG
    (what a PDF image with the PNG predictor reads as is); ValueError for another kind."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG image")
    at, idat, header, ended = 8, [], None, False
    while at + 12 <= len(png) and not ended:
        length, kind = struct.unpack_from(">I4s", png, at)
        body = png[at + 8 : at + 8 + length]
        crc = png[at + 8 + length : at + 12 + length]
        if len(body) != length or len(crc) != 4 or zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            raise ValueError("a damaged PNG image")
        if kind == b"IHDR" and length == 13:
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        ended = kind == b"IEND"
        at += 12 + length
    if header is None or not idat or not ended:
        raise ValueError("an incomplete PNG image")
    width, height, depth, colour, _, _, interlace = header
    colours = {0: 1, 2: 3}.get(colour)
    if depth != 8 or colours is None or interlace:
        raise ValueError("only 8-bit, non-interlaced RGB or grey PNG images are embedded")
    return {"pixels_wide": width, "pixels_high": height, "colours": colours, "data": b"".join(idat)}


def _colour(c) -> tuple[float, float, float]:
    if isinstance(c, str) and c.startswith("#") and len(c) == 7:
        return tuple(int(c[i : i + 2], 16) / 255 for i in (1, 3, 5))
    if c is None or c == "black":
        return (0.0, 0.0, 0.0)
    raise ValueError(f"unknown colour {c!r}")


def _num(x: float) -> str:
    s = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def _text_string(s: str) -> bytes:
    """A PDF text string (document information): a literal string when it is printable ASCII (so
    the bytes of the file hold it as it reads, as ``veil verify`` looks for the binding), otherwise
    UTF-16BE with its byte-order mark, in hex."""
    if s.isascii() and s.isprintable():
        return b"(" + s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("ascii") + b")"
    return b"<FEFF" + s.encode("utf-16-be").hex().upper().encode() + b">"


class Document:
    """Pages of ``width`` × ``height`` points; y is measured from the top of the page, in points."""

    def __init__(self, width: float, height: float):
        self.width, self.height = width, height
        self.pages: list[list[bytes]] = []
        self.fonts: dict[TrueType, tuple[str, set]] = {}
        self.images: list[dict] = []

    def new_page(self) -> None:
        self.pages.append([])

    def _ops(self) -> list[bytes]:
        return self.pages[-1]

    def text(
        self,
        x: float,
        y_top: float,
        s: str,
        size: float,
        *,
        family="sans",
        weight="normal",
        style="normal",
        colour=None,
        align="left",
        angle: float = 0.0,
    ) -> float:
        """Draw ``s`` with the top of its line at ``y_top`` (as matplotlib's ``va="top"``); return its width.

        ``angle`` (degrees, anticlockwise) turns the text about (x, y_top): ``align`` then runs along
        the turned line, and the line's top is the side its letters point to (left, at 90)."""
        f = font(family, weight, style)
        if f not in self.fonts:
            self.fonts[f] = (f"F{len(self.fonts) + 1}", set())
        name, used = self.fonts[f]
        glyphs = f.glyphs(s)
        used.update(glyphs)
        width = sum(f.advances[g] for g in glyphs) * size / f.units
        along = {"right": width, "center": width / 2}.get(align, 0.0)
        down = size * f.ascent / f.units  # from the line's top to its baseline
        cos, sin = (1.0, 0.0) if not angle else (math.cos(math.radians(angle)), math.sin(math.radians(angle)))
        # the start of the baseline: (-along, -down) from the anchor in the text's own frame, turned
        x_start = x - along * cos + down * sin
        y_start = self.height - y_top - along * sin - down * cos
        r, g, b = _colour(colour)
        hexed = "".join(f"{gid:04X}" for gid in glyphs)
        self._ops().append(
            f"BT {_num(r)} {_num(g)} {_num(b)} rg /{name} {_num(size)} Tf "
            f"{_num(cos)} {_num(sin)} {_num(-sin)} {_num(cos)} {_num(x_start)} {_num(y_start)} Tm "
            f"<{hexed}> Tj ET".encode()
        )
        return width

    def line(
        self,
        x1: float,
        y1_top: float,
        x2: float,
        y2_top: float,
        colour,
        width: float = 1.0,
        dash: tuple[float, float] | None = None,
    ) -> None:
        """A straight line (y from the top of the page), ``dash`` (on, off) lengths when dashed."""
        r, g, b = _colour(colour)
        pattern = f"[{_num(dash[0])} {_num(dash[1])}] 0 d " if dash else ""
        self._ops().append(
            f"q {_num(r)} {_num(g)} {_num(b)} RG {_num(width)} w {pattern}"
            f"{_num(x1)} {_num(self.height - y1_top)} m {_num(x2)} {_num(self.height - y2_top)} l S Q".encode()
        )

    def rect(self, x: float, y_top: float, w: float, h: float, colour) -> None:
        r, g, b = _colour(colour)
        self._ops().append(
            f"{_num(r)} {_num(g)} {_num(b)} rg {_num(x)} {_num(self.height - y_top - h)} "
            f"{_num(w)} {_num(h)} re f".encode()
        )

    def image(self, png: bytes, x: float, y_top: float, w: float, h: float) -> None:
        img = png_image(png)
        name = f"Im{len(self.images) + 1}"
        self.images.append({**img, "name": name, "page": len(self.pages) - 1})
        self._ops().append(
            f"q {_num(w)} 0 0 {_num(h)} {_num(x)} {_num(self.height - y_top - h)} cm /{name} Do Q".encode()
        )

    # -- writing
    def to_bytes(self, info: dict[str, str]) -> bytes:
        objects: list[bytes | None] = [None, None]  # 1: catalog, 2: pages

        def add(body: bytes) -> int:
            objects.append(body)
            return len(objects)

        def stream(data: bytes, extra: str = "", compress: bool = True) -> int:
            if compress:
                data = zlib.compress(data, 6)
                extra += " /Filter /FlateDecode"
            return add(f"<< /Length {len(data)}{extra} >>\nstream\n".encode() + data + b"\nendstream")

        font_refs = {}
        for f, (name, used) in self.fonts.items():
            font_refs[name] = self._font_objects(f, used, add, stream)
        image_refs = {}
        for img in self.images:
            image_refs[img["name"]] = stream(
                img["data"],
                f" /Type /XObject /Subtype /Image /Width {img['pixels_wide']} /Height {img['pixels_high']} "
                f"/ColorSpace /{'DeviceRGB' if img['colours'] == 3 else 'DeviceGray'} /BitsPerComponent 8 "
                f"/Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors {img['colours']} /BitsPerComponent 8 "
                f"/Columns {img['pixels_wide']} >>",
                compress=False,
            )
        fonts = " ".join(f"/{n} {ref} 0 R" for n, ref in font_refs.items())
        kids = []
        for i, ops in enumerate(self.pages):
            content = stream(b"\n".join(ops))
            xobjects = " ".join(
                f"/{img['name']} {image_refs[img['name']]} 0 R" for img in self.images if img["page"] == i
            )
            resources = f"/Font << {fonts} >>" + (f" /XObject << {xobjects} >>" if xobjects else "")
            kids.append(
                add(f"<< /Type /Page /Parent 2 0 R /Resources << {resources} >> /Contents {content} 0 R >>".encode())
            )
        objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
        objects[1] = (
            f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} "
            f"/MediaBox [0 0 {_num(self.width)} {_num(self.height)}] >>"
        ).encode()
        info_ref = add(
            b"<< "
            + b" ".join(b"/" + k.encode("ascii") + b" " + _text_string(v) for k, v in info.items() if v is not None)
            + b" >>"
        )
        out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for i, body in enumerate(objects, start=1):
            offsets.append(len(out))
            out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
        xref = len(out)
        out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
        out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
        out += (
            f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {info_ref} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
        ).encode()
        return bytes(out)

    @staticmethod
    def _font_objects(f: TrueType, used: set, add, stream) -> int:
        glyphs = sorted(used | {0})
        tag = "".join(chr(65 + b % 26) for b in hashlib.sha256(repr(glyphs).encode() + f.name.encode()).digest()[:6])
        base = f"{tag}+{f.name}"
        program = f.subset(set(glyphs))
        file_ref = stream(program, f" /Length1 {len(program)}")
        scale = 1000 / f.units
        bbox = " ".join(_num(v * scale) for v in f.bbox)
        flags = 32 | (64 if f.italic_angle else 0)
        descriptor = add(
            f"<< /Type /FontDescriptor /FontName /{base} /Flags {flags} /FontBBox [{bbox}] "
            f"/ItalicAngle {_num(f.italic_angle)} /Ascent {_num(f.ascent * scale)} "
            f"/Descent {_num(f.descent * scale)} /CapHeight {_num(f.ascent * scale)} /StemV 80 "
            f"/FontFile2 {file_ref} 0 R >>".encode()
        )
        widths = " ".join(f"{g} [{_num(f.advances[g] * scale)}]" for g in glyphs)
        cid = add(
            f"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{base} /CIDSystemInfo << /Registry (Adobe) "
            f"/Ordering (Identity) /Supplement 0 >> /FontDescriptor {descriptor} 0 R /W [{widths}] "
            f"/CIDToGIDMap /Identity >>".encode()
        )
        to_unicode = stream(_to_unicode(f, glyphs))
        return add(
            f"<< /Type /Font /Subtype /Type0 /BaseFont /{base} /Encoding /Identity-H "
            f"/DescendantFonts [{cid} 0 R] /ToUnicode {to_unicode} 0 R >>".encode()
        )


def _to_unicode(f: TrueType, glyphs: list[int]) -> bytes:
    """A CMap from each used glyph back to its character, for searching and copying the text."""
    back = {}
    for code, gid in f.cmap.items():
        if gid in back and back[gid] <= code:
            continue
        back[gid] = code
    pairs = [(g, back[g]) for g in glyphs if g in back]
    lines = [
        "/CIDInit /ProcSet findresource begin",
        "12 dict begin",
        "begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def",
        "/CMapType 2 def",
        "1 begincodespacerange",
        "<0000> <FFFF>",
        "endcodespacerange",
    ]
    for i in range(0, len(pairs), 100):
        chunk = pairs[i : i + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        lines += [f"<{g:04X}> <{chr(c).encode('utf-16-be').hex().upper()}>" for g, c in chunk]
        lines.append("endbfchar")
    lines += ["endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end"]
    return "\n".join(lines).encode()
