"""Every exporter round-trips (write, read back, equal), formula cells are escaped in the file and
restored on reading, and what a format cannot hold is refused or normalised as documented."""

from __future__ import annotations

import csv
import io

import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.engine import BadInput, make_registry

REGISTRY = make_registry()
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")
TEXT_FORMATS = ["csv", "tsv", "xlsx", "parquet"]

# Text cells: a first character that is dangerous, an apostrophe, or a letter (so no cell looks
# like a number or a boolean to a reader that infers types), then anything printable, with line
# breaks, tabs and quotes.
first = st.sampled_from([*DANGEROUS, "'", "x", "Ü", "q"])
rest = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_categories=("Cs",))
    | st.sampled_from(["\n", "\r", "\t", '"', ",", "'"]),
    max_size=8,
)
cells = st.builds(lambda a, b: a + b, first, rest)


@st.composite
def frames(draw):
    n = draw(st.integers(1, 8))
    return pd.DataFrame(
        {
            "text": draw(st.lists(cells, min_size=n, max_size=n)),
            "maybe": draw(st.lists(st.none() | cells, min_size=n, max_size=n)),
            "count": draw(st.lists(st.integers(-(10**6), 10**6), min_size=n, max_size=n)),
            "ratio": draw(
                st.lists(st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)), min_size=n, max_size=n)
            ),
        }
    )


def expected_in(fmt: str, frame: pd.DataFrame) -> pd.DataFrame:
    """What a format is documented to give back: Excel turns CR and CRLF into LF."""
    if fmt != "xlsx":
        return frame
    text = lambda v: v.replace("\r\n", "\n").replace("\r", "\n") if isinstance(v, str) else v  # noqa: E731
    return frame.apply(lambda col: col.map(text) if pd.api.types.is_string_dtype(col) or col.dtype == object else col)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=frames())
@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_text_formats_round_trip(tmp_path, fmt, frame):
    exporter = REGISTRY.exporter(fmt)
    path = tmp_path / f"r.{exporter.extension}"
    exporter.write(frame, path, exporter.params())
    back = exporter.read_back(path)
    want = expected_in(fmt, frame)
    assert list(back.columns) == list(want.columns)
    for c in ("text", "maybe"):
        assert [None if pd.isna(v) else v for v in back[c]] == [None if pd.isna(v) else v for v in want[c]], c
    assert back["count"].tolist() == want["count"].tolist()
    assert back["ratio"].tolist() == pytest.approx(want["ratio"].tolist())
    assert_no_live_formula(fmt, path, text_columns=(0, 1))


def assert_no_live_formula(fmt: str, path, text_columns) -> None:
    """No text cell of the file, as a spreadsheet reads it, starts with a formula character (numbers
    such as -5 are numbers, not formulas)."""
    if fmt in ("csv", "tsv"):
        text = path.read_bytes().decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="," if fmt == "csv" else "\t"))
        cells = [row[j] for row in rows[1:] for j in text_columns]
    elif fmt == "xlsx":
        sheet = openpyxl.load_workbook(path).active
        cells = [c.value for row in sheet.iter_rows(min_row=2) for c in row if isinstance(c.value, str)]
        assert all(c.data_type != "f" for row in sheet.iter_rows() for c in row)
    else:
        return  # Parquet is no spreadsheet format: values are stored as they are
    assert not [c for c in cells if c and c.startswith(DANGEROUS)]


def test_formula_cells_are_escaped_with_an_apostrophe(tmp_path):
    frame = pd.DataFrame(
        {"note": ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "'=already", "plain"]}
    )
    for fmt in ("csv", "xlsx"):
        exporter = REGISTRY.exporter(fmt)
        path = tmp_path / f"f.{exporter.extension}"
        exporter.write(frame, path, exporter.params())
        if fmt == "csv":
            written = [r[0] for r in csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline=""))][1:]
        else:
            written = [c.value for (c,) in openpyxl.load_workbook(path).active.iter_rows(min_row=2)]
        assert written[:4] == ["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)"]
        assert written[6] == "''=already" and written[7] == "plain"  # an apostrophe of the data is kept apart
        assert exporter.read_back(path)["note"].tolist() == expected_in(fmt, frame)["note"].tolist()


def test_numbers_are_not_escaped(tmp_path):
    frame = pd.DataFrame({"delta": [-5, 3], "ratio": [-0.5, 1.5]})
    exporter = REGISTRY.exporter("csv")
    exporter.write(frame, tmp_path / "n.csv", exporter.params())
    assert (tmp_path / "n.csv").read_bytes() == b"delta,ratio\r\n-5,-0.5\r\n3,1.5\r\n"


def test_excel_refuses_a_control_character_it_cannot_store(tmp_path):
    exporter = REGISTRY.exporter("xlsx")
    with pytest.raises(BadInput, match=r"row 2, column 'note'.*control character"):
        exporter.write(pd.DataFrame({"note": ["fine", "bell\x07"]}), tmp_path / "c.xlsx", exporter.params())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_spmf_round_trips_binary_features_and_a_class(tmp_path, data):
    n = data.draw(st.integers(1, 10))
    m = data.draw(st.integers(1, 5))
    frame = pd.DataFrame({f"f{j}": data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)) for j in range(m)})
    frame["class"] = data.draw(st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=n, max_size=n))
    exporter = REGISTRY.exporter("spmf")
    exporter.write(frame, tmp_path / "t.txt", exporter.params())
    back = exporter.read_back(tmp_path / "t.txt")
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)


def test_fast_csv_writer_matches_pandas_byte_for_byte():
    """The Arrow-built CSV (plugins/io/exporters.csv_bytes) against pandas' to_csv on random frames:
    text needing quotes, floats pandas writes its own way (1.0, -0.0, 2.5e-07, inf), missing cells."""
    import numpy as np
    import pandas as pd

    from veil.plugins.io.exporters import csv_bytes

    rng = np.random.default_rng(0)
    words = np.array(["a", "b,c", 'q"z', "x\r\ny", "", "  sp", "é", "=1", "1.0", "x\ty"], dtype=object)
    for _ in range(60):
        n = int(rng.integers(0, 30))
        floats = rng.choice([1.0, -0.0, 0.1, 1e20, 1e16, 123456789.0, 2.5e-7, np.inf, 3.0], n)
        frame = pd.DataFrame(
            {
                "i": rng.integers(-(10**6), 10**6, n),
                "f": np.where(rng.random(n) < 0.2, np.nan, floats * rng.choice([1, 1e-3, 1e5, -1], n)),
                "b": rng.random(n) < 0.5,
                "s": pd.Series(np.where(rng.random(n) < 0.2, None, rng.choice(words, n)), dtype="str"),
                "o": pd.Series(list(np.where(rng.random(n) < 0.2, None, rng.choice(words, n))), dtype=object),
                "I": pd.array(np.where(rng.random(n) < 0.3, None, rng.integers(0, 9, n)).tolist(), dtype="Int64"),
            }
        )
        for sep in (",", "\t"):
            assert csv_bytes(frame, sep) == frame.to_csv(index=False, sep=sep, lineterminator="\r\n").encode()
    dates = pd.DataFrame({"d": pd.to_datetime(["2020-01-01"])})
    assert csv_bytes(dates, ",") is None  # a type it does not format: pandas writes it
