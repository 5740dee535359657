"""parse_transactions / read_transactions against a plain line-by-line Python parser."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.engine import BadInput, BinaryMatrix, parse_transactions, read_transactions
from veil.engine.data import transactions

DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"
BLANK = "".join(map(chr, range(1, 33)))  # space and the ASCII control characters
INTEGER = re.compile(r"[0-9]{1,18}")


# -- the oracle -------------------------------------------------------------------------------------
def reference(data: bytes, sep: str | None = None):
    """(rows as sets of items, sorted distinct items), or None where the parser must refuse."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data or b"\x00" in data:
        return None
    lines = data.split(b"\n")
    if not lines[-1].strip(BLANK.encode()):  # the text after the final line break
        lines.pop()
    lines = [line for line in lines if not line.startswith((b"#", b"%", b"@"))]
    if not lines:
        return None
    try:
        text = [line.decode("utf-8") for line in lines]
    except UnicodeDecodeError:
        return None
    if sep is None:
        sep = "," if any("," in line for line in text) else " "
    if sep == " ":
        rows = [[t for t in re.split(f"[{re.escape(BLANK)}]+", line) if t] for line in text]
    else:
        rows = [[t.strip(BLANK) for t in line.split(sep) if t.strip(BLANK)] for line in text]
    tokens = [t for row in rows for t in row]
    if not tokens:
        return None
    if all(INTEGER.fullmatch(t) for t in tokens):
        rows = [{int(t) for t in row} for row in rows]
        return rows, sorted(set().union(*rows))
    rows = [set(row) for row in rows]
    return rows, sorted(set().union(*rows), key=lambda t: t.encode("utf-8"))


def assert_matches(matrix: BinaryMatrix, expected) -> None:
    rows, items = expected
    assert matrix.shape == (len(rows), len(items))
    assert [f.value for f in matrix.features] == items
    assert matrix.feature_names == [str(v) for v in items]
    assert all(f.rule == "item" for f in matrix.features)
    code = {item: j for j, item in enumerate(items)}
    assert matrix.transactions() == [sorted(code[t] for t in row) for row in rows]
    for j in range(matrix.n_features):  # CSC invariant: rows ascending and distinct per column
        assert np.all(np.diff(matrix.column_rows(j)) > 0)


def check(data: bytes, sep: str | None = None) -> BinaryMatrix | None:
    expected = reference(data, sep)
    if expected is None:
        with pytest.raises(BadInput):
            parse_transactions(data, sep)
        return None
    matrix = parse_transactions(data, sep)
    assert_matches(matrix, expected)
    return matrix


# -- random files -----------------------------------------------------------------------------------
integer_items = st.lists(st.integers(0, 60), max_size=8)
word_items = st.lists(st.sampled_from(["a", "b", "ab", "B", "é", "10", "2", "x-y", "中"]), max_size=6)


@st.composite
def transaction_files(draw, items=integer_items):
    rows = draw(st.lists(items, min_size=1, max_size=30))
    sep = draw(st.sampled_from([" ", ",", ", ", "\t", " , "]))
    lines = []
    for row in rows:
        line = sep.join(map(str, row)) + draw(st.sampled_from(["", " ", "  ", "\t", "\r"]))
        lines.append(line)
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["# comment, with a comma", "%", "@ITEM=1=x y", "@CONVERTED"])))
    end = draw(st.sampled_from(["", "\n", "\n\n", "\n  "]))
    return ("\n".join(lines) + end).encode("utf-8")


@pytest.fixture(params=[transactions.CHUNK_BYTES, 1, 16], ids=["default-blocks", "line-blocks", "16-byte-blocks"])
def block_bytes(request, monkeypatch):
    """Small blocks send short test files through the block-by-block integer path too."""
    monkeypatch.setattr(transactions, "CHUNK_BYTES", request.param)
    return request.param


# block_bytes only patches a constant, so sharing it across generated inputs is intended
SHARED_FIXTURE = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=200, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(data=transaction_files())
def test_integer_files_match_the_reference(data, block_bytes):
    check(data)


@settings(max_examples=200, deadline=None)
@given(transaction_files(word_items))
def test_string_files_match_the_reference(data):
    check(data)


@settings(max_examples=300, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(text=st.text(alphabet="0123 ,ab#%@\n\r\t-é", max_size=60), sep=st.sampled_from([None, " ", ",", "\t"]))
def test_arbitrary_text_matches_the_reference(text, sep, block_bytes):
    check(text.encode("utf-8"), sep)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                b"1",
                b"0",
                b"9",
                b" ",
                b",",
                b"\n",
                b"\r",
                b"\x0b",
                b"\x1f",
                b"#",
                b"@",
                b"\x00",
                b"\xef\xbb\xbf",
                b"\xe9",
                b"\xc3\xa9",
                b"a",
                b";",
            ]
        ),
        max_size=40,
    ).map(b"".join),
    st.sampled_from([None, ";"]),
)
def test_arbitrary_bytes_match_the_reference(data, sep):
    check(data, sep)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 10**12), max_size=5), min_size=1, max_size=20))
def test_large_integer_ids_sort_numerically(rows):
    data = "\n".join(" ".join(map(str, r)) for r in rows).encode() + b"\n"
    matrix = check(data)
    if matrix is not None:
        values = [f.value for f in matrix.features]
        assert values == sorted(values)


# -- the format, case by case -----------------------------------------------------------------------
def test_comma_and_space_forms_give_the_same_matrix():
    spaced = parse_transactions(b"3 1 2\n2 10\n")
    commas = parse_transactions(b"3,1,2\n2,10\n")
    assert spaced.meta["sep"] == " " and commas.meta["sep"] == ","
    assert spaced.fingerprint() == commas.fingerprint()
    assert spaced.feature_names == ["1", "2", "3", "10"]  # numeric, not lexicographic
    assert spaced.transactions() == [[0, 1, 2], [1, 3]]


def test_trailing_spaces_and_crlf_are_ignored():
    m = parse_transactions(b"1 2 \r\n3  \r\n")
    assert m.transactions() == [[0, 1], [2]]


def test_duplicates_in_a_line_count_once():
    m = parse_transactions(b"5 5 7 5\n7,7\n".replace(b",", b" "))
    assert m.column_counts().tolist() == [1, 2]
    assert m.nnz == 3


def test_comment_and_metadata_lines_are_skipped():
    m = parse_transactions(b"@CONVERTED_FROM_TEXT\n@ITEM=1=apple\n# note, with comma\n1 2\n% x\n2\n")
    assert m.meta["sep"] == " "  # the comma in the comment does not choose the separator
    assert m.shape == (2, 2)


def test_blank_lines_are_empty_transactions_but_a_blank_last_line_is_absent():
    assert parse_transactions(b"1\n\n2\n").n_rows == 3
    assert parse_transactions(b"1\n2\n").n_rows == 2
    assert parse_transactions(b"1\n2").n_rows == 2
    assert parse_transactions(b"1\n2\n\n").transactions() == [[0], [1], []]
    assert parse_transactions(b"1\n2\n   ").n_rows == 2


def test_non_integer_items_fall_back_to_strings_sorted_lexicographically():
    m = parse_transactions("10 9 b\nB é a\n".encode())
    assert m.feature_names == ["10", "9", "B", "a", "b", "é"]
    assert [f.value for f in m.features][:2] == ["10", "9"]


def test_separator_keeps_inner_spaces_of_string_items():
    m = parse_transactions(b"New York, Paris\nParis ,Rome\n")
    assert m.feature_names == ["New York", "Paris", "Rome"]
    assert parse_transactions(b"1 2, 3\n").feature_names == ["1 2", "3"]


def test_explicit_separator():
    assert parse_transactions(b"a b;c\n", sep=";").feature_names == ["a b", "c"]
    assert parse_transactions(b"1,2 3\n", sep=" ").feature_names == ["1,2", "3"]
    assert parse_transactions(b"1\t2\n", sep="\t").feature_names == ["1", "2"]


def test_leading_zeros_name_the_same_integer():
    m = parse_transactions(b"007 7 010\n")
    assert m.feature_names == ["7", "10"] and m.nnz == 2


def test_ids_longer_than_18_digits_are_strings():
    m = parse_transactions(b"1234567890123456789 5\n")
    assert m.feature_names == ["1234567890123456789", "5"]


def test_very_long_items_take_the_compact_string_path():
    long_item = "x" * 20_000
    data = "\n".join([long_item + " a"] + ["a b"] * 1000).encode()
    m = check(data)
    assert m.feature_names == ["a", "b", long_item]


def test_byte_order_mark_is_skipped():
    assert parse_transactions(b"\xef\xbb\xbf1 2\n").feature_names == ["1", "2"]


def test_str_input_is_accepted():
    assert parse_transactions("1 2\n").feature_names == ["1", "2"]


def test_items_are_not_decoded_in_comment_lines():
    assert parse_transactions(b"# caf\xe9\n1\n").n_rows == 1


@pytest.mark.parametrize(
    ("data", "sep", "message"),
    [
        (b"", None, "empty"),
        (b"\xef\xbb\xbf", None, "empty"),
        (b"# only\n@meta\n", None, "no transactions"),
        (b"  \t ", None, "no transactions"),
        (b"   \n", None, "no items"),
        (b"\n\n \n", None, "no items"),
        (b"1 2\x00 3\n", None, "not text"),
        ("1 2\n".encode("utf-16"), None, "not text"),
        (b"caf\xe9 1\n", None, "not UTF-8"),
        (b"1 2\n", ";;", "separator"),
        (b"1 2\n", "\n", "separator"),
        (b"1 2\n", "#", "separator"),
    ],
)
def test_errors_are_one_clear_sentence(data, sep, message):
    with pytest.raises(BadInput, match=message) as info:
        parse_transactions(data, sep)
    text = str(info.value)
    assert "\n" not in text and text.count(". ") == 0


def test_read_transactions_records_the_source(tmp_path):
    path = tmp_path / "t.dat"
    path.write_bytes(b"1 2\n2 3\n")
    m = read_transactions(path)
    assert m.meta["source"] == str(path)
    assert m.transactions() == [[0, 1], [1, 2]]


def test_read_transactions_refuses_a_missing_or_empty_file(tmp_path):
    with pytest.raises(BadInput, match="not found"):
        read_transactions(tmp_path / "missing.dat")
    (tmp_path / "empty.dat").write_bytes(b"")
    with pytest.raises(BadInput, match="empty"):
        read_transactions(tmp_path / "empty.dat")


def test_agrees_with_from_transactions():
    rng = np.random.default_rng(7)
    rows = [rng.integers(0, 40, rng.integers(0, 12)).tolist() for _ in range(500)]
    data = "\n".join(" ".join(map(str, r)) for r in rows).encode() + b"\n"
    assert parse_transactions(data).fingerprint() == BinaryMatrix.from_transactions(rows).fingerprint()


# -- real files -------------------------------------------------------------------------------------
def dataset(relative: str) -> Path:
    path = DATASETS / relative
    if not path.exists():
        reason = f"dataset {relative} not found under {DATASETS}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def python_rows(path: Path, sep: str | None) -> list[list[int]]:
    with open(path, encoding="ascii") as f:
        return [[int(t) for t in line.split(sep)] for line in f if line.strip()]


@pytest.mark.dataset
def test_fimi_t10i4d100k():
    path = dataset("fimi_T10I4D100K/T10I4D100K.dat")
    m = read_transactions(path)
    assert m.shape == (100_000, 870)
    assert m.meta["sep"] == " "
    assert m.fingerprint() == BinaryMatrix.from_transactions(python_rows(path, None)).fingerprint()


@pytest.mark.dataset
def test_bms_webview_1_comma_separated():
    path = dataset("bms_webview_1/BMS1_itemset_mining.txt")
    m = read_transactions(path)
    assert m.shape == (59_602, 497)
    assert m.meta["sep"] == ","
    assert m.fingerprint() == BinaryMatrix.from_transactions(python_rows(path, ",")).fingerprint()
    spaced = read_transactions(dataset("bms_webview_1/BMS1_itemset_mining.space-separated.txt"))
    assert spaced.fingerprint() == m.fingerprint()


@pytest.mark.parametrize("seed", range(5))
def test_distinct_item_sets_match_a_brute_force_grouping(seed):
    """SetValued.distinct: records with the same items (in any order) share a group, numbered by
    first appearance, and each group's row holds exactly those items."""
    import numpy as np

    from veil.engine import SetValued

    rng = np.random.default_rng(seed)
    records = [list(rng.permutation(rng.choice(8, size=rng.integers(0, 4), replace=False))) for _ in range(200)]
    sets = SetValued.from_sets(records)
    groups, distinct = sets.distinct()
    first: dict = {}
    expected = [first.setdefault(frozenset(r), len(first)) for r in records]
    assert groups.tolist() == expected
    names = sets.item_names
    assert [frozenset(names[j] for j in distinct.row(g)) for g in range(distinct.n_rows)] == [
        frozenset(str(i) for i in key) for key in first
    ]
