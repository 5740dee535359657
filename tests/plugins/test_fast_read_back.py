"""The CSV/TSV read-back (what the export verifies the written file by) reads a file exactly as the
careful, column-by-column nullable reading does: same columns, types, values and missing cells,
on random frames holding the awkward cases (formula escapes, gaps in whole numbers, true/false,
quotes, separators and line breaks in text, mixed columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.plugins.io.exporters import CsvExporter, TsvExporter, read_delimited_back, read_delimited_back_nullable

TEXT = [
    "plain",
    "=SUM(A1)",
    "+1",
    "-x",
    "@home",
    "'quoted",
    "''twice",
    "a,b",
    'say "hi"',
    "two\nlines",
    "tab\there",
    "",
    " space",
    "ünïcode",
    "NA",
    "null",
    "007",
    "1e5",
    "True",
]


def random_frame(rng, n: int) -> pd.DataFrame:
    def gaps(values, p=0.2):
        values = pd.Series(values, dtype=object)
        values[rng.random(n) < p] = None
        return values

    columns = {
        "ints": rng.integers(-5, 5, n),
        "ints with gaps": gaps(rng.integers(0, 9, n).tolist()),
        "floats": rng.normal(size=n).round(3),
        "floats with gaps": gaps(rng.normal(size=n).round(2).tolist()),
        "text": rng.choice(TEXT, n),
        "text with gaps": gaps(rng.choice(TEXT, n).tolist()),
        "flags": rng.random(n) < 0.5,
        "flags with gaps": gaps((rng.random(n) < 0.5).tolist()),
        "mixed": gaps([["7", "x", "3.5"][i] for i in rng.integers(0, 3, n)], 0.1),
        "=name": rng.choice(["a", "b"], n),
    }
    order = rng.permutation(len(columns))
    names = list(columns)
    return pd.DataFrame({names[i]: columns[names[i]] for i in order})


@pytest.mark.parametrize("exporter", [CsvExporter(), TsvExporter()], ids=["csv", "tsv"])
@pytest.mark.parametrize("seed", range(6))
def test_the_fast_read_back_reads_exactly_as_the_careful_one(tmp_path, exporter, seed):
    rng = np.random.default_rng(seed)
    frame = random_frame(rng, int(rng.integers(1, 60)))
    path = tmp_path / f"release.{exporter.extension}"
    exporter.write(frame, path, None)
    fast, careful = read_delimited_back(path, exporter.sep), read_delimited_back_nullable(path, exporter.sep)
    pd.testing.assert_frame_equal(fast, careful)
    assert list(fast.columns) == [str(c) for c in frame.columns]  # the escaped header name comes back
    # every formula escape undone, nothing else touched (an empty cell is a missing value in CSV)
    assert fast["text"].tolist() == [v or None for v in frame["text"]]


def test_a_file_with_no_text_column_and_one_with_no_rows(tmp_path):
    for frame in (pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]}), pd.DataFrame({"a": [], "b": []})):
        path = tmp_path / "r.csv"
        CsvExporter().write(frame, path, None)
        pd.testing.assert_frame_equal(read_delimited_back(path, ","), read_delimited_back_nullable(path, ","))


@pytest.mark.parametrize("seed", range(4))
def test_escaping_while_formatting_writes_what_escaping_first_writes(seed):
    """The CSV writer escapes each distinct value as it formats it; the bytes are those of escaping
    the whole frame first and letting pandas write it."""
    from veil.plugins.io.exporters import csv_bytes, escape_formulas

    rng = np.random.default_rng(seed)
    frame = random_frame(rng, int(rng.integers(0, 50)))
    frame = frame[[c for c in frame.columns if "gaps" not in c or c == "text with gaps"]]  # types csv_bytes formats
    frame["text with gaps"] = frame["text with gaps"].astype("str")
    for sep in (",", "\t"):
        expected = escape_formulas(frame).to_csv(index=False, sep=sep, lineterminator="\r\n").encode()
        assert csv_bytes(frame, sep, escape=True) == expected
        assert b"'=SUM" in expected or "=SUM(A1)" not in set(frame["text"])
