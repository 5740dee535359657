"""SPSS, Stata, SAS and R files through a whole release: a file written by the format's own library
(pyreadstat, pyreadr) with values, value labels, variable labels and user-missing codes is read,
anonymised and written back in the same format; the written file, read by that library, holds the
release's values, the labels of the values released and no label of a value removed or generalised
away (an identifier's label set, rare villages' names)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from veil.engine.release.report import _labelled_names

pyreadstat = pytest.importorskip(
    "pyreadstat", reason="the statistics-file readers are an extra: pip install veil[statfiles]"
)
pyreadr = pytest.importorskip("pyreadr", reason="the statistics-file readers are an extra: pip install veil[statfiles]")

N = 60
REGIONS = {1: "North", 2: "South", 3: "East", 4: "West", 5: "Atlantis"}  # no record lives in Atlantis
SEXES = {1: "Male", 2: "Female"}
DIAGNOSES = {10: "Flu", 20: "Asthma", 30: "Diabetes"}
SMOKER = {1: "yes", 2: "no", -9: "refused"}  # -9 is declared missing
VARIABLE_LABELS = {
    "pid": "Patient",
    "village": "Home village",
    "sex": "Sex of respondent",
    "region": "Region of residence",
    "age": "Age at interview, years",
    "smoker": "Smokes",
    "diag": "Main diagnosis",
}


def villages() -> dict[int, str]:
    return {100 + i: f"Village{i:02d}x" for i in range(30)}  # two records each: generalised away at k=5


def people() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    smoker = rng.choice([1.0, 2.0], N)
    smoker[[3, 17, 40]] = -9.0
    return pd.DataFrame(
        {
            "pid": np.arange(1, N + 1, dtype=float),
            "village": np.repeat(list(villages()), 2).astype(float),
            "sex": rng.choice([1.0, 2.0], N),
            "region": rng.choice([1.0, 2.0, 3.0, 4.0], N),
            "age": rng.integers(20, 80, N).astype(float),
            "smoker": smoker,
            "diag": rng.choice([10.0, 20.0, 30.0], N),
        }
    )


def value_labels() -> dict:
    return {
        "pid": {float(i): f"Surname{i:03d}, patient" for i in range(1, N + 1)},
        "village": {float(k): v for k, v in villages().items()},
        "sex": SEXES,
        "region": REGIONS,
        "smoker": SMOKER,
        "diag": DIAGNOSES,
    }


def write_input(path, fmt: str) -> None:
    df = people()
    if fmt in ("sav", "zsav"):
        pyreadstat.write_sav(
            df,
            str(path),
            column_labels=VARIABLE_LABELS,
            variable_value_labels=value_labels(),
            missing_ranges={"smoker": [-9]},
            compress=fmt == "zsav",
        )
    elif fmt == "dta":
        labels = {c: {int(k): v for k, v in m.items()} for c, m in value_labels().items()}
        stata = df.astype({"smoker": object})
        stata.loc[stata["smoker"] == -9.0, "smoker"] = "a"  # Stata's extended missing .a
        labels["smoker"] = {1: "yes", 2: "no"}
        pyreadstat.write_dta(
            stata,
            str(path),
            column_labels=VARIABLE_LABELS,
            variable_value_labels=labels,
            missing_user_values={"smoker": ["a"]},
        )
    elif fmt == "rds":
        frame = df.copy()
        for c, labels in value_labels().items():
            codes = [k for k in labels if not (c == "smoker" and k == -9)]
            cells = frame[c].map(lambda v, codes=codes, labels=labels: labels[v] if v in codes else None)
            frame[c] = pd.Categorical(cells, categories=[labels[k] for k in codes])  # R's NA for a refusal
        pyreadr.write_rds(str(path), frame)
    else:
        raise AssertionError(fmt)


def read_written(path, fmt: str) -> tuple[pd.DataFrame, dict, dict, dict]:
    """The written file as its own library reads it: cells decoded by the file's own labels."""
    if fmt == "rds":
        frame = pyreadr.read_r(str(path))[None]
        labels = {
            c: {i + 1: t for i, t in enumerate(frame[c].cat.categories)}
            for c in frame.columns
            if isinstance(frame[c].dtype, pd.CategoricalDtype)
        }
        return frame.astype({c: object for c in labels}), labels, {}, {}
    reader = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
    raw, meta = reader(str(path), user_missing=True)
    decoded = raw.copy()
    for c, labels in meta.variable_value_labels.items():
        decoded[c] = raw[c].map(lambda v, labels=labels: labels.get(v, v))
    variable = {c: v for c, v in meta.column_names_to_labels.items() if v}
    return decoded, meta.variable_value_labels, variable, meta.missing_ranges


def file_bytes(path, fmt: str) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def released(veil, data, out, fmt, *extra):
    return veil(
        "run",
        "--data",
        data,
        "--identifier",
        "pid",
        "--quasi",
        "village,sex,region,age",
        "--hierarchy",
        "age=intervals:width=20",
        "--sensitive",
        "diag",
        "--release-sensitive",
        "diag",
        "--model",
        "k-anonymity:k=5",
        "--method",
        "global-recoding:suppression=0",
        "--format",
        fmt,
        "--no-shuffle",
        "--no-report",
        "--out",
        out,
        *extra,
    )


@pytest.mark.parametrize("fmt, exporter", [("sav", "spss"), ("zsav", "spss"), ("dta", "stata"), ("rds", "r")])
def test_a_labelled_file_round_trips_through_a_release(veil, tmp_path, fmt, exporter):
    data = tmp_path / f"people.{fmt}"
    write_input(data, fmt)
    done = released(veil, data, tmp_path / "out", exporter)
    assert done.code == 0, done.err
    ext = "sav" if fmt == "zsav" else fmt
    written = tmp_path / "out" / f"release.{ext}"
    csv = released(veil, data, tmp_path / "csv", "csv")  # the same release, as text
    assert csv.code == 0, csv.err
    expected = pd.read_csv(tmp_path / "csv" / "release.csv", keep_default_na=False, na_values=[""], dtype=str)

    got, labels, variable, missing = read_written(written, "dta" if fmt == "dta" else ext)
    assert list(got.columns) == list(expected.columns) == ["village", "sex", "region", "age", "smoker", "diag"]
    for c in ("village", "sex", "region", "diag"):  # the release's values, by the file's own labels
        assert [str(v) for v in got[c]] == list(expected[c]), c
    assert set(got["village"]) == {"*"}  # every village was generalised away ...
    assert labels["village"] in ({1: "*"}, {1.0: "*"}, {130: "*"}, {130.0: "*"})  # ... and so were their names
    assert set(labels["region"].values()) == set(expected["region"]) <= {"North", "South", "East", "West"}
    assert set(labels["diag"].values()) == {"Flu", "Asthma", "Diabetes"}
    raw = file_bytes(written, ext)
    assert b"Surname" not in raw and b"Village" not in raw and b"Atlantis" not in raw
    if fmt != "rds":  # R data frames carry no variable labels
        assert variable == {c: VARIABLE_LABELS[c] for c in expected.columns}
        manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["output"]["variable_labels"] == variable  # what the report shows beside the names
        assert "age (Age at interview, years)" in _labelled_names(manifest["output"])
    smoking = got["smoker"]
    if fmt == "rds":
        assert int(pd.isna(smoking).sum()) == 3  # R has NA only: the three refusals are missing
    else:  # each refusal written back as its own code, declared missing again
        assert list(smoking[[3, 17, 40]]) == (["a"] * 3 if fmt == "dta" else ["refused"] * 3)
    if ext == "sav":
        assert missing["smoker"] == [{"lo": -9.0, "hi": -9.0}]  # the declaration is restored
        assert labels["smoker"][-9.0] == "refused"


def test_user_missing_codes_read_as_missing_and_labels_as_categories(veil, tmp_path):
    data = tmp_path / "people.sav"
    write_input(data, "sav")
    from veil.engine import FILE_LABELS, make_registry, read_data

    table = read_data(make_registry(), data)
    frame = table.frame
    assert frame["smoker"].isna().sum() == 3 and set(frame["smoker"].dropna()) == {"yes", "no"}
    assert list(frame["region"].cat.categories) == ["North", "South", "East", "West", "Atlantis"]
    assert list(table.hierarchy("sex").leaves) == ["Male", "Female"] or set(table.hierarchy("sex").leaves) == {
        "Male",
        "Female",
    }
    entry = table.meta[FILE_LABELS]["smoker"]
    assert entry["missing"] == [[-9.0, -9.0]] and entry["values"][-9] == "refused" and entry["coded"]
    assert table.meta[FILE_LABELS]["age"] == {
        "label": "Age at interview, years",
        "values": {},
        "coded": False,
        "missing": [],
    }
    assert frame["age"].dtype == np.int64


def test_stata_extended_missing_reads_as_missing(tmp_path):
    from veil.engine import make_registry, read_data

    data = tmp_path / "people.dta"
    write_input(data, "dta")
    frame = read_data(make_registry(), data).frame
    assert frame["smoker"].isna().sum() == 3 and set(frame["smoker"].dropna()) == {"yes", "no"}


def test_an_xpt_release_keeps_values_and_variable_labels(veil, tmp_path):
    data = tmp_path / "people.sav"
    write_input(data, "sav")
    done = released(veil, data, tmp_path / "out", "sas-xport")
    assert done.code == 0, done.err
    raw, meta = pyreadstat.read_xport(str(tmp_path / "out" / "release.xpt"))
    assert meta.column_names_to_labels["region"] == "Region of residence"
    assert set(raw["village"]) == {"*"} and set(raw["region"]) <= {"North", "South", "East", "West"}
    assert b"Surname" not in (tmp_path / "out" / "release.xpt").read_bytes()


NOT_ASKED, REFUSED = 98.0, -9.0


def coded_missing(path, fmt: str) -> np.ndarray:
    """people() with smoker holding two kinds of non-answer, -9 (refused) and 98 (not asked) in SPSS,
    .a and .b in Stata; returns each row's code (NaN where smoker holds a value)."""
    df = people()
    codes = np.full(N, np.nan)
    codes[[3, 17, 40]], codes[[5, 22, 23, 51]] = REFUSED, NOT_ASKED
    df.loc[~np.isnan(codes), "smoker"] = codes[~np.isnan(codes)]
    if fmt == "sav":
        pyreadstat.write_sav(
            df,
            str(path),
            variable_value_labels={"smoker": {1: "yes", 2: "no", -9: "refused", 98: "not asked"}, "sex": SEXES},
            missing_ranges={"smoker": [-9, 98]},
        )
        return codes
    letters = np.where(codes == REFUSED, "a", np.where(codes == NOT_ASKED, "b", None))
    stata = df.astype({"smoker": object})
    stata.loc[letters != None, "smoker"] = letters[letters != None]  # noqa: E711
    pyreadstat.write_dta(
        stata,
        str(path),
        variable_value_labels={"smoker": {1: "yes", 2: "no"}, "sex": {1: "Male", 2: "Female"}},
        missing_user_values={"smoker": ["a", "b"]},
    )
    return letters


@pytest.mark.parametrize("fmt, exporter", [("sav", "spss"), ("dta", "stata")])
def test_each_missing_cell_gets_its_own_code_back(veil, tmp_path, fmt, exporter):
    data = tmp_path / f"people.{fmt}"
    codes = coded_missing(data, fmt)
    out = tmp_path / "out"
    done = veil(
        "run", "--data", data, "--identifier", "pid", "--quasi", "sex,region", "--model", "k-anonymity:k=5",
        "--method", "global-recoding", "--format", exporter, "--no-report", "--seed", "4", "--out", out,
    )  # fmt: skip
    assert done.code == 0, done.err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    order = np.random.default_rng(manifest["shuffle_seed"]).permutation(N)  # written row i is input row order[i]
    reader = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
    raw, meta = reader(str(out / f"release.{fmt}"), user_missing=True)
    written = raw["smoker"].to_numpy(dtype=object)
    expected = np.asarray(codes, dtype=object)[order]
    coded = np.array([isinstance(c, str) or (c is not None and not np.isnan(c)) for c in expected])
    assert coded.sum() == 7
    assert list(written[coded]) == list(expected[coded])  # 98 stays 98, -9 stays -9 (.b stays .b), row by row
    labels = meta.variable_value_labels["smoker"]
    assert {labels[c] for c in written[~coded]} <= {"yes", "no"}  # every other cell a value, not a code
    if fmt == "sav":
        assert meta.missing_ranges["smoker"] == [{"lo": -9.0, "hi": -9.0}, {"lo": 98.0, "hi": 98.0}]
    else:
        assert sorted(meta.missing_user_values["smoker"]) == ["a", "b"]
    assert veil("verify", out).code == 0  # read back by Veil, the codes are missing again
