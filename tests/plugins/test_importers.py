"""The built-in importers: round trips, detection, refusals, and the real benchmark files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.engine import BadInput, BinaryMatrix, ImportOptions, Kind, Role, Table, make_registry, read_data, sha256_file


@pytest.fixture(scope="module")
def registry():
    return make_registry()


@pytest.fixture(scope="module")
def datasets_dir() -> Path:
    found = Path(__file__).resolve().parents[3] / "shared" / "datasets"
    if not found.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"benchmark datasets missing at {found} (required in CI)")
        pytest.skip(f"benchmark datasets not found at {found}")
    return found


def read(registry, path, **options):
    return read_data(registry, path, ImportOptions(**options))


def importer(registry, name):
    return registry.create("importer", name)


PEOPLE = pd.DataFrame(
    {
        "age": [34, 51, 27, 62, 45],
        "sex": ["female", "male", "male", "female", "male"],
        "weight": [61.5, 80.25, np.nan, 70.0, 93.125],
        "city": ["Zürich", "Köln", "Paris", "Málaga", "Paris"],
    }
)


# -- delimited text -----------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16"])
@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_csv_round_trip_detects_encoding_delimiter_and_header(registry, tmp_path, encoding, delimiter):
    path = tmp_path / "people.csv"
    PEOPLE.to_csv(path, sep=delimiter, index=False, encoding=encoding)
    table = read(registry, path)
    assert isinstance(table, Table)
    pd.testing.assert_frame_equal(table.frame, PEOPLE)


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "utf-16"])
def test_csv_with_explicit_encoding_and_delimiter(registry, tmp_path, encoding):
    path = tmp_path / "people.tsv"
    PEOPLE.to_csv(path, sep="\t", index=False, encoding=encoding)
    table = read(registry, path, encoding=encoding, delimiter="\\t")
    pd.testing.assert_frame_equal(table.frame, PEOPLE)


def test_whitespace_separated_text(registry, tmp_path):
    path = tmp_path / "grid.txt"
    path.write_text("  1.5   2  x\n3.25 4    y\n\n5 6 z \n")
    table = read(registry, path)
    assert table.columns == ["col1", "col2", "col3"]
    assert table.frame["col1"].tolist() == [1.5, 3.25, 5.0]
    assert table.frame["col2"].dtype == np.int64
    assert table.frame["col3"].tolist() == ["x", "y", "z"]


def test_headerless_uci_style_file_with_spaces_after_commas(registry, tmp_path):
    path = tmp_path / "adult.data"
    path.write_text("39, State-gov, 77516, <=50K\n50, ?, 83311, >50K\n38, Private, 215646, <=50K\n\n")
    table = read(registry, path)
    assert table.columns == ["col1", "col2", "col3", "col4"]
    assert table.frame["col2"].tolist()[0::2] == ["State-gov", "Private"]
    assert table.frame["col2"].isna().tolist() == [False, True, False]
    assert table.frame["col1"].tolist() == [39, 50, 38]
    assert table.schema["col1"].kind is Kind.NUMERIC and table.schema["col2"].kind is Kind.CATEGORICAL


def test_headerless_names_option(registry, tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("1,2.5,a\n2,3.5,b\n")
    table = read(registry, path, names=("id", "score", "grade"))
    assert table.columns == ["id", "score", "grade"]
    assert table.frame["score"].tolist() == [2.5, 3.5]


@pytest.mark.parametrize(
    "text, header",
    [
        ("sex;age\nmale;30\nfemale;41\n", True),  # text over a numeric column
        ("sex,race\nmale,white\nfemale,black\nmale,black\n", True),  # all text, names never recur
        ("male,white\nfemale,white\nmale,black\n", False),  # all text, 'white' recurs
        ("1,2\n3,4\n", False),  # numbers first
        ("a,b\n1,x\n2,y\n", True),
    ],
)
def test_header_detection(registry, tmp_path, text, header):
    path = tmp_path / "t.csv"
    path.write_text(text)
    table = read(registry, path)
    n_lines = text.count("\n")
    assert table.n_rows == n_lines - header
    assert (table.columns[0] == "col1") is (not header)


def test_explicit_header_option_overrides_detection(registry, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("sex,race\nmale,white\nfemale,black\n")
    plain = read(registry, path, header=False)
    assert plain.columns == ["col1", "col2"] and plain.frame["col1"].tolist() == ["sex", "male", "female"]
    renamed = read(registry, path, header=True, names=("s", "r"))
    assert renamed.columns == ["s", "r"] and renamed.n_rows == 2


def test_missing_values_codes_quotes_and_trailing_delimiters(registry, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('zip,name,score,\n02139,"Smith, J",?,\n10001,"say ""hi""",,\n94103, ? ,7,\n')
    table = read(registry, path)
    assert table.columns == ["zip", "name", "score"]
    assert table.frame["zip"].tolist() == ["02139", "10001", "94103"]  # a number would drop the zero
    assert table.frame["name"].tolist()[:2] == ["Smith, J", 'say "hi"']
    assert table.frame["name"].isna().tolist() == [False, False, True]
    assert table.frame["score"].isna().tolist() == [True, True, False]


def test_quoted_line_break_keeps_line_numbers_right(registry, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('note,n\n"two\nlines",1\nplain,2\nshort\n')
    with pytest.raises(BadInput, match=r"t\.csv line 5 has 1 fields"):
        importer(registry, "csv").read(path, ImportOptions())
    path.write_text('note,n\n"two\nlines",1\nplain,2\n')
    assert importer(registry, "csv").read(path, ImportOptions()).frame["note"].tolist() == ["two\nlines", "plain"]


TEXT = st.text(alphabet="abcdefXYZ éüßä,;|\"", min_size=1, max_size=8).filter(
    lambda s: s == s.strip() and s.lower() not in ("nan", "inf", "infinity")
)


@st.composite
def small_frames(draw):
    n = draw(st.integers(1, 6))
    columns = {}
    for j in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["int", "float", "text"]))
        if kind == "int":
            columns[f"c{j}"] = draw(st.lists(st.integers(-(10**12), 10**12), min_size=n, max_size=n))
        elif kind == "float":
            values = st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64), st.just(np.nan))
            columns[f"c{j}"] = pd.Series(draw(st.lists(values, min_size=n, max_size=n)), dtype=float)
        else:
            columns[f"c{j}"] = pd.Series(draw(st.lists(TEXT, min_size=n, max_size=n)), dtype="str")
    return pd.DataFrame(columns)


@settings(max_examples=60, deadline=None)
@given(
    frame=small_frames(),
    delimiter=st.sampled_from([",", ";", "\t", "|"]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "utf-16"]),
)
def test_random_frames_round_trip_through_csv(registry, frame, delimiter, encoding):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "random.csv"
        frame.to_csv(path, sep=delimiter, index=False, encoding=encoding)
        table = read(registry, path)
    if frame.columns.size == 1 and frame.iloc[:, 0].isna().any():
        return  # in a one-column file an empty value is a blank line, and blank lines are skipped
    pd.testing.assert_frame_equal(table.frame, frame)


# -- bad input ------------------------------------------------------------------------------------

BAD_TEXT = [
    ("empty.csv", b"", {}, "empty.csv is empty"),
    ("blank.csv", b"\n  \n\n", {}, "blank.csv holds no data"),
    ("bytes.csv", b"a,b\n1,\x81\x8d\n", {}, "byte 0x81 at offset 6 .*choose the file's encoding"),
    ("latin.csv", b"a,b\n1,\xe9\n", {"encoding": "utf-8"}, "latin.csv is not valid utf-8.*offset 6"),
    ("latin2.csv", b"a,b\n1,2\n", {"encoding": "no-such-codec"}, "unknown encoding 'no-such-codec'"),
    ("short.csv", b"a,b,c\n1,2,3\n4,5\n6,7,8\n", {}, "short.csv line 3 has 2 fields, but the other lines have 3"),
    ("long.csv", b"a,b\n1,2\n3,4,5\n6,7\n", {}, "long.csv line 3 has 3 fields"),
    ("quoted.csv", b'a,b\n"x,y",2\n3\n"z",4\n', {}, "quoted.csv line 3 has 1 fields"),
    ("dup.csv", b"name,age,name\nx,1,y\n", {}, "dup.csv: column name 'name' appears more than once"),
    ("noname.csv", b"id,,score\nx,1,2\n", {}, "noname.csv: column 2 has an empty name"),
    ("names.csv", b"1,2,3\n4,5,6\n", {"names": ("a", "b")}, "names.csv has 3 columns, but 2 column names"),
    ("names2.csv", b"1,2\n3,4\n", {"names": ("a", "a")}, "column name 'a' appears more than once"),
    ("header.csv", b"name,city\n", {}, "header.csv has a header row but no data rows"),
    ("nul.csv", b"a,b\n1,\x002\n", {}, "nul.csv contains NUL characters"),
    ("delim.csv", b"a,b\n1,2\n", {"delimiter": "::"}, "cannot split delim.csv on '::'"),
]


def _assert_refused(registry, path, options, message, *, through="read_data"):
    before = sha256_file(path)
    with pytest.raises(BadInput, match=message) as caught:
        if through == "read_data":
            read_data(registry, path, ImportOptions(**options))
        else:
            importer(registry, through).read(path, ImportOptions(**options))
    assert "\n" not in str(caught.value) and "Traceback" not in str(caught.value)
    assert sha256_file(path) == before
    return caught.value


@pytest.mark.parametrize("name, content, options, message", BAD_TEXT, ids=[b[0] for b in BAD_TEXT])
def test_bad_text_is_refused_and_left_untouched(registry, tmp_path, name, content, options, message):
    path = tmp_path / name
    path.write_bytes(content)
    if content:
        _assert_refused(registry, path, options, message, through="csv")
    else:
        _assert_refused(registry, path, options, message)


def test_empty_file_through_the_importer_itself(registry, tmp_path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    _assert_refused(registry, path, {}, "empty.csv holds no data", through="csv")


# -- Excel, Parquet, ARFF ---------------------------------------------------------------------------


def test_excel_round_trip_with_typed_cells(registry, tmp_path):
    admitted = pd.to_datetime(["2020-01-02", "2021-03-04", "2019-12-31", "2022-07-08", "2020-05-06"])
    frame = PEOPLE.assign(smoker=[True, False, False, True, False], admitted=admitted)
    path = tmp_path / "people.xlsx"
    frame.to_excel(path, index=False)
    table = read(registry, path)
    pd.testing.assert_frame_equal(table.frame, frame, check_dtype=False)
    assert table.frame["smoker"].dtype == bool and table.schema["smoker"].kind is Kind.BINARY
    assert table.schema["admitted"].kind is Kind.DATE
    assert table.frame["age"].dtype == np.int64


def test_excel_sheet_option(registry, tmp_path):
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        PEOPLE.to_excel(writer, sheet_name="first", index=False)
        PEOPLE.head(2).to_excel(writer, sheet_name="second", index=False)
    assert read(registry, path).n_rows == 5
    assert read(registry, path, sheet="second").n_rows == 2
    assert read(registry, path, sheet="2").n_rows == 2
    _assert_refused(registry, path, {"sheet": "third"}, "book.xlsx has no sheet 'third'; its sheets are first, second")


def test_parquet_round_trip_keeps_categories_and_named_index(registry, tmp_path):
    frame = PEOPLE.assign(sex=PEOPLE["sex"].astype("category"))
    path = tmp_path / "people.parquet"
    frame.set_index(pd.Index([10, 11, 12, 13, 14], name="record")).to_parquet(path)
    table = read(registry, path)
    assert table.columns[0] == "record" and table.frame["record"].tolist() == [10, 11, 12, 13, 14]
    pd.testing.assert_frame_equal(table.frame.drop(columns="record"), frame)


ARFF = """% a comment
@RELATION people
@ATTRIBUTE age INTEGER
@ATTRIBUTE 'home city' {Zürich,Köln,Paris}
@ATTRIBUTE weight REAL
@ATTRIBUTE class {yes,no}
@DATA
34,Zürich,61.5,yes
51,Köln,?,no
27,?,80.25,no
"""


def test_arff_round_trip_with_nominal_and_missing_values(registry, tmp_path):
    path = tmp_path / "people.arff"
    path.write_text(ARFF, encoding="utf-8")
    table = read(registry, path)
    expected = pd.DataFrame(
        {
            "age": np.array([34, 51, 27], dtype=np.int64),
            "home city": pd.Categorical(["Zürich", "Köln", None], categories=["Zürich", "Köln", "Paris"]),
            "weight": [61.5, np.nan, 80.25],
            "class": pd.Categorical(["yes", "no", "no"], categories=["yes", "no"]),
        }
    )
    pd.testing.assert_frame_equal(table.frame, expected)
    assert table.schema["home city"].kind is Kind.CATEGORICAL


@pytest.mark.parametrize(
    "name, content, through, message",
    [
        ("broken.xlsx", b"PK\x03\x04 not really a workbook", "excel", "broken.xlsx is not a readable Excel"),
        ("broken.parquet", b"PAR1 garbage", "parquet", "broken.parquet is not a readable Parquet"),
        ("broken.arff", b"@relation x\n@attribute a {p,q}\n@data\nr\n", "arff", "broken.arff is not a readable ARFF"),
        ("broken.svm", b"1 1:0.5 3:2\nnot libsvm at all\n", "libsvm", "broken.svm line 2 is not 'label index:value"),
        ("broken.mat", b"MATLAB 5.0 MAT-file, but nothing else", "mat", "broken.mat is not a readable MATLAB"),
        ("items.dat", b"1 2 3\n", "transactions", "separated by spaces or commas, not ';'"),
    ],
)
def test_broken_files_are_refused_and_left_untouched(registry, tmp_path, name, content, through, message):
    path = tmp_path / name
    path.write_bytes(content)
    options = {"delimiter": ";"} if through == "transactions" else {}
    _assert_refused(registry, path, options, message, through=through)


# -- LIBSVM, MATLAB -----------------------------------------------------------------------------


def test_libsvm_round_trip_gives_dense_features_and_target_label(registry, tmp_path):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(30, 6)).astype(float) * (rng.random((30, 6)) < 0.5)
    x[0, 0] = x[0, -1] = 1.0  # the first and last features appear, so their indices are known
    y = rng.integers(0, 3, size=30)
    path = tmp_path / "data.svm"
    dump_svmlight_file(x, y, str(path), zero_based=False)
    table = read(registry, path)
    assert table.columns == [f"f{j}" for j in range(1, 7)] + ["label"]
    np.testing.assert_array_equal(table.frame.iloc[:, :6].to_numpy(), x)
    np.testing.assert_array_equal(table.labels(), y)
    assert table.frame["label"].dtype == np.int64
    assert table.schema.target == "label" and table.schema["label"].role is Role.TARGET


@pytest.mark.parametrize("sparse", [False, True])
def test_mat_round_trip_gives_features_and_target_y(registry, tmp_path, sparse):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=(12, 5)).astype(np.uint8)
    y = rng.integers(1, 3, size=(12, 1)).astype(float)
    path = tmp_path / "small.mat"
    scipy.io.savemat(path, {"X": sp.csc_matrix(x.astype(float)) if sparse else x, "Y": y})
    table = read(registry, path)
    assert table.columns == ["f1", "f2", "f3", "f4", "f5", "Y"]
    np.testing.assert_array_equal(table.frame.iloc[:, :5].to_numpy(), x)
    np.testing.assert_array_equal(table.labels(), y.ravel().astype(int))
    assert table.schema["Y"].role is Role.TARGET
    assert all(table.schema[f"f{j}"].role is Role.INSENSITIVE for j in range(1, 6))


@pytest.mark.parametrize(
    "variables, message",
    [
        ({"X": np.eye(3)}, r"small\.mat has no variable Y \(the class vector\); it holds X"),
        ({"Y": np.ones((3, 1))}, r"small\.mat has no variable X"),
        ({"X": np.eye(3), "Y": np.ones((4, 1))}, r"Y has 4 labels for the 3 rows of X"),
    ],
)
def test_mat_without_x_or_y_is_refused(registry, tmp_path, variables, message):
    path = tmp_path / "small.mat"
    scipy.io.savemat(path, variables)
    _assert_refused(registry, path, {}, message)


# -- transactions and sniffing --------------------------------------------------------------------

TRANSACTIONS = [[1, 2, 5], [2, 4], [1, 2, 3, 4, 5], [3]]


@pytest.mark.parametrize(
    "name, layout",
    [
        ("fimi.dat", "{} \n"),  # FIMI: space-separated, trailing space
        ("spmf.txt", "{}\n"),
        ("bms.txt", "{}\n"),  # comma-separated (BMS-WebView in SPMF)
        ("comments.spmf", "{}\n"),
    ],
)
def test_transactions_round_trip(registry, tmp_path, name, layout):
    sep = "," if name == "bms.txt" else " "
    lines = [layout.format(sep.join(map(str, t))) for t in TRANSACTIONS]
    if name == "comments.spmf":
        lines = ["# a comment\n", "@CONVERTED_FROM_TEXT\n", "% another\n"] + lines
    path = tmp_path / name
    path.write_text("".join(lines))
    matrix = read(registry, path)
    assert isinstance(matrix, BinaryMatrix)
    assert matrix.feature_names == ["1", "2", "3", "4", "5"]
    assert [[int(matrix.feature_names[j]) for j in row] for row in matrix.transactions()] == TRANSACTIONS
    assert matrix.meta["sha256"] == sha256_file(path)


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("items.dat", "3 7 9\n1 2\n4 5 6\n", BinaryMatrix),  # lengths vary
        ("items.txt", "1 2 3\n2 3 4\n1 3 4\n", BinaryMatrix),  # equal lengths, items increasing
        ("table.dat", "3 1 2\n2 2 4\n1 3 4\n", Table),  # repeated item in a row: a table
        ("table.txt", "3 1 2\n2 3 1\n1 3 4\n", Table),  # equal lengths, not increasing
        ("decimals.dat", "1.5 2\n3.5 4\n", Table),
        ("numbers.csv", "1,2,3\n4\n", None),  # .csv is never transactions
        ("sonar.all-data", "0.1,0.2,R\n0.3,0.4,M\n", Table),  # unknown extension, delimited text
    ],
)
def test_sniffing_tells_transactions_from_tables(registry, tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content)
    if expected is None:
        _assert_refused(registry, path, {}, "numbers.csv line 2 has 1 fields")
    else:
        assert isinstance(read(registry, path), expected)


def test_unknown_binary_file_is_refused(registry, tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 4)
    _assert_refused(registry, path, {}, "cannot tell the format of blob.bin")


def test_every_importer_is_registered_with_a_kebab_name(registry):
    names = registry.names("importer")
    assert names == [
        "arff",
        "csv",
        "excel",
        "libsvm",
        "mat",
        "parquet",
        "r",
        "sas",
        "sas-xport",
        "spss",
        "spss-portable",
        "sqlite",
        "stata",
        "transactions",
    ]
    priorities = {n: getattr(registry.get("importer", n), "priority", 0) for n in names}
    assert priorities["csv"] == min(priorities.values()) < max(priorities.values())


# -- the real benchmark files -----------------------------------------------------------------------


@pytest.mark.dataset
def test_adult_data_is_headerless_with_15_columns(registry, datasets_dir):
    path = datasets_dir / "adult" / "adult.data"
    before = sha256_file(path)
    table = read(registry, path)
    assert table.n_rows == 32561 and table.columns == [f"col{j}" for j in range(1, 16)]
    assert set(table.frame["col15"]) == {"<=50K", ">50K"}
    assert table.frame["col2"].isna().sum() == 1836  # workclass "?"
    assert table.schema["col1"].kind is Kind.NUMERIC
    assert table.sha256 == before == sha256_file(path)


@pytest.mark.dataset
def test_adult_arx_csv_has_a_semicolon_header(registry, datasets_dir):
    table = read(registry, datasets_dir / "adult_arx" / "adult.csv")
    assert table.n_rows == 30162
    assert table.columns == [
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
        "salary-class",
    ]
    assert table.schema["age"].kind is Kind.NUMERIC


@pytest.mark.dataset
def test_pima_is_numeric_and_headerless(registry, datasets_dir):
    table = read(registry, datasets_dir / "pima_indians_diabetes" / "pima-indians-diabetes.data.csv")
    assert table.frame.shape == (768, 9) and table.columns[0] == "col1"
    assert table.schema["col9"].kind is Kind.BINARY
    assert all(table.schema[f"col{j}"].kind is Kind.NUMERIC for j in range(1, 9))


@pytest.mark.dataset
def test_basehock_mat(registry, datasets_dir):
    table = read(registry, datasets_dir / "scikit_feature" / "BASEHOCK.mat")
    assert table.frame.shape == (1993, 4863)
    assert table.schema.target == "Y" and len(np.unique(table.labels())) == 2
    assert table.frame["f1"].dtype == np.uint8


@pytest.mark.dataset
@pytest.mark.parametrize(
    "relative, n, m",
    [
        ("fimi_T10I4D100K/T10I4D100K.dat", 100_000, 870),
        ("bms_webview_1/BMS1_itemset_mining.txt", 59_602, 497),
    ],
)
def test_transaction_benchmarks(registry, datasets_dir, relative, n, m):
    matrix = read(registry, datasets_dir / relative)
    assert isinstance(matrix, BinaryMatrix) and matrix.shape == (n, m)


@pytest.mark.dataset
def test_bms1_comma_and_space_copies_read_alike(registry, datasets_dir):
    folder = datasets_dir / "bms_webview_1"
    commas = read(registry, folder / "BMS1_itemset_mining.txt")
    spaces = read(registry, folder / "BMS1_itemset_mining.space-separated.txt")
    assert commas.fingerprint() == spaces.fingerprint()


def test_skip_rows_reads_past_a_title_line(tmp_path, registry):
    path = tmp_path / "with_title.data"
    path.write_text("|1x3 Cross validator\n25, Private, <=50K.\n38, Self-emp, >50K.\n")
    table = read_data(registry, path, ImportOptions(skip_rows=1, names=("age", "workclass", "income")))
    assert table.n_rows == 2 and table.columns == ["age", "workclass", "income"]
    assert table.frame["age"].tolist() == [25, 38]
    with pytest.raises(BadInput, match="leaves nothing to read"):
        read_data(registry, path, ImportOptions(skip_rows=3, fmt="csv"))


def test_adult_test_with_its_title_line_skipped(datasets_dir, registry):
    table = read_data(registry, datasets_dir / "adult" / "adult.test", ImportOptions(skip_rows=1))
    assert table.n_rows == 16_281 and len(table.columns) == 15


@pytest.mark.parametrize("before", ["\n", "\n\n", "   \n"])
def test_blank_lines_before_the_first_row_read_as_without_them(tmp_path, before):
    """Blank lines above the data are skipped: the columns are counted on the first line that is not
    blank (counted on a blank one, all but one column were typed by their values, not read as text)."""
    body = "Ann,20-29,F,1\nBob,20-29,F,0\nCid,30-39,M,0\nDee,30-39,M,1\n"
    plain, padded = tmp_path / "plain.csv", tmp_path / "padded.csv"
    plain.write_text(body)
    padded.write_text(before + body)
    registry = make_registry()
    want = read_data(registry, plain, ImportOptions(fmt="csv")).frame
    got = read_data(registry, padded, ImportOptions(fmt="csv")).frame
    pd.testing.assert_frame_equal(got, want)
