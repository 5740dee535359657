"""Reading the statistics packages' files: committed fixtures read the same as their CSV
counterpart, and a broken file gets one sentence.

The fixtures in tests/data/statfiles were made once with pyreadstat 1.3.8 and pyreadr 0.5.8 from one
table of five people (age, sex coded 1 = Male / 2 = Female with value labels, town, weight; the
variable label "Age, years" on age): survey.sav (``write_sav``), survey.por (``write_por``: no value
labels or variable labels, names upper-cased as SPSS portable files store them), survey.dta (``write_dta`` version 14,
format 118), survey.xpt (``write_xport``), survey.rds and survey.RData (object ``survey``; sex a
factor). survey.csv holds the same table with sex as its labels.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("pyreadstat", reason="the statistics-file readers are an extra: pip install veil[statfiles]")
pytest.importorskip("pyreadr", reason="the statistics-file readers are an extra: pip install veil[statfiles]")

from veil.engine import FILE_LABELS, BadInput, ImportOptions, make_registry, read_data  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "statfiles"
REGISTRY = make_registry()


def as_text(frame: pd.DataFrame) -> list[list[str]]:
    return [[str(v) for v in row] for row in frame.astype(object).itertuples(index=False)]


@pytest.mark.parametrize("name", ["survey.sav", "survey.dta", "survey.xpt", "survey.rds", "survey.RData", "survey.por"])
def test_a_fixture_reads_as_its_csv_counterpart(name):
    csv = read_data(REGISTRY, FIXTURES / "survey.csv").frame
    table = read_data(REGISTRY, FIXTURES / name)
    frame = table.frame
    if name.endswith((".por", ".xpt")):  # no value labels in these files (and .por's names upper-cased)
        frame = frame.rename(columns=str.lower)
        frame["sex"] = frame["sex"].map({1: "Male", 2: "Female"})
    assert list(frame.columns) == list(csv.columns)
    assert as_text(frame) == as_text(csv)
    assert str(frame["age"].dtype) == str(csv["age"].dtype) == "int64"
    if not name.endswith((".rds", ".RData", ".por")):  # R keeps none; ReadStat writes none in .por
        assert table.meta[FILE_LABELS]["age"]["label"] == "Age, years"
    if not name.endswith((".xpt", ".por")):
        assert list(frame["sex"].cat.categories) == ["Male", "Female"]


def test_the_file_s_own_metadata_is_kept():
    sav = read_data(REGISTRY, FIXTURES / "survey.sav").meta["file"]
    assert sav["program"] and "ReadStat" in sav["program"] and sav["encoding"] == "UTF-8"
    assert read_data(REGISTRY, FIXTURES / "survey.dta").meta["file"]["format"] == "Stata .dta format 118"
    rdata = read_data(REGISTRY, FIXTURES / "survey.RData", ImportOptions(sheet="survey")).meta["file"]
    assert rdata["object"] == "survey"


def _one_line(path, options=None) -> str:
    with pytest.raises(BadInput) as caught:
        read_data(REGISTRY, path, options)
    text = str(caught.value)
    assert "\n" not in text and Path(path).name in text
    return text


def test_bad_files_get_one_line(tmp_path):
    truncated = tmp_path / "cut.sav"
    truncated.write_bytes((FIXTURES / "survey.sav").read_bytes()[:300])
    assert "is not a readable SPSS file" in _one_line(truncated)

    newer = tmp_path / "newer.dta"
    newer.write_bytes((FIXTURES / "survey.dta").read_bytes().replace(b"<release>118<", b"<release>121<", 1))
    assert "format 121" in _one_line(newer) and "reads formats 104 to 119" in _one_line(newer)

    not_r = tmp_path / "text.rds"
    not_r.write_text("name,age\nAnn,3\n")
    assert "is not a readable R data file" in _one_line(not_r)

    assert "holds no data frame 'other'" in _one_line(FIXTURES / "survey.RData", ImportOptions(sheet="other"))


def test_inspect_shows_labels_missing_codes_and_the_file_s_metadata(tmp_path):
    from veil.engine.data.inspect import inspect_report

    pyreadstat = pytest.importorskip("pyreadstat")
    frame = pd.DataFrame({"smoker": [1.0, 2.0, -9.0, 1.0], "age": [30.0, 41.0, 99.0, 52.0]})
    path = tmp_path / "smoking.sav"
    pyreadstat.write_sav(
        frame,
        str(path),
        column_labels={"smoker": "Smokes"},
        variable_value_labels={"smoker": {1: "yes", 2: "no", -9: "refused"}, "age": {99: "not asked"}},
        missing_ranges={"smoker": [-9], "age": [{"lo": 98, "hi": 99}]},
    )
    text = inspect_report(read_data(REGISTRY, path))
    assert "program   SPSS DATA FILE - https://github.com/WizardMac/ReadStat" in text
    assert "encoding  UTF-8" in text
    assert "smoker: Smokes\n  values (the cells show the labels): 1 = yes; 2 = no; -9 = refused\n" in text
    assert "  missing codes (read as missing): -9\n" in text
    assert "age: (no variable label)\n  values: 99 = not asked\n  missing codes (read as missing): 98 to 99" in text
