"""Transaction files (SPMF / FIMI): one record per line, its items separated by spaces or commas.

The parser works on the raw bytes with whole-array NumPy operations: no Python loop runs per
line or per item. Integer items (the usual case) are read in blocks of lines of about 256 KiB, so
the temporaries of each block stay in cache; what is kept between blocks is a few bytes per item.
Measurements are in ``docs/benchmarks.md``.

Rules (those of the FIMI repository and of SPMF, Fournier-Viger et al. 2016):

* one transaction per line; an item repeated within a line counts once;
* items are separated by whitespace (space or any ASCII control character), or by a one-character
  separator (``,`` is detected when the file contains one) with whitespace around items ignored
  and empty fields skipped;
* lines starting with ``#``, ``%`` or ``@`` are comments or SPMF metadata and are skipped;
* a blank line is an empty transaction, except a blank last line (the text after the final line
  break), which is absent;
* when every item is a run of ASCII digits (at most 18), items are integers: features are sorted
  numerically and named by ``str(int(item))``, so ``007`` and ``7`` are one item. Otherwise every
  item is a string and features are sorted by their UTF-8 bytes, which is code-point order.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from .binary import BASKETS, BinaryMatrix, Feature
from ..base.errors import BadInput
from ..base.io import check_readable

_NL = ord("\n")
_SPACE = ord(" ")  # space and every ASCII control character separate items
_COMMENT_MARKS = np.frombuffer(b"#%@", dtype=np.uint8)
_MAX_DIGITS = 18  # 10**18 - 1 still fits an int64
_BOM = b"\xef\xbb\xbf"
CHUNK_BYTES = 1 << 18  # a block's dozen temporaries (a few bytes per input byte) fit in L2


def read_transactions(path: str | os.PathLike, sep: str | None = None) -> BinaryMatrix:
    """Read a transaction file (SPMF / FIMI layout) into a :class:`BinaryMatrix`.

    See :func:`parse_transactions` for the format; ``meta["source"]`` records the path.
    """
    p = check_readable(path)
    matrix = parse_transactions(p.read_bytes(), sep)
    matrix.meta["source"] = str(p)
    return matrix


def parse_transactions(data: bytes, sep: str | None = None) -> BinaryMatrix:
    """Parse the bytes of a transaction file into a :class:`BinaryMatrix` (rows = transactions).

    Parameters
    ----------
    data : bytes
        The file's content, UTF-8 or ASCII (a UTF-8 byte-order mark is skipped).
    sep : str, optional
        Item separator: one character. ``" "`` means any run of whitespace. When omitted, ``","``
        if the file holds a comma outside comment lines, else whitespace.

    Returns
    -------
    BinaryMatrix
        One feature per distinct item (rule ``"item"``, value the ``int`` or ``str`` item);
        ``meta["sep"]`` is the separator used.

    Raises
    ------
    BadInput
        Empty or binary file, no transactions, no items, text that is not UTF-8, a bad ``sep``.

    Examples
    --------
    >>> m = parse_transactions(b"3 1 2\\n2 10\\n")
    >>> m.feature_names, m.transactions()
    (['1', '2', '3', '10'], [[0, 1, 2], [1, 3]])
    """
    import scipy.sparse as sp

    buf = _text_bytes(data)
    breaks = np.flatnonzero(buf == _NL)
    buf, breaks = _without_comment_lines(buf, breaks)
    buf, breaks = _with_final_line_break(buf, breaks)
    if not len(breaks):
        raise BadInput("the file holds no transactions, only comments or blank space")
    sep_byte = _separator(buf, sep)
    parsed = _integer_items(buf, breaks, sep_byte)
    if parsed is None:
        parsed = _string_items(buf, breaks, sep_byte)
    items_per_line, codes, features = parsed
    if not len(codes):
        raise BadInput("the file holds no items: every transaction is empty")
    shape = (len(breaks), len(features))
    # the items in file order are the CSR layout; scipy's transpose to CSC is one counting sort
    indptr = np.concatenate(([0], np.cumsum(items_per_line)))
    csc = sp.csr_matrix((np.ones(len(codes), dtype=bool), codes, indptr), shape=shape).tocsc()
    del indptr, codes
    csc.sum_duplicates()  # an item repeated in a line counts once; rows stay ascending per column
    return BinaryMatrix(
        csc.indptr,
        csc.indices,
        shape[0],
        features,
        meta={"sep": " " if sep_byte is None else chr(sep_byte), BASKETS: True},
    )


# -- text and lines -------------------------------------------------------------------------------
def _text_bytes(data) -> np.ndarray:
    if isinstance(data, str):
        data = data.encode("utf-8")
    raw = memoryview(data).cast("B")
    if raw[:3] == _BOM:
        raw = raw[3:]
    if not len(raw):
        raise BadInput("the file is empty")
    buf = np.frombuffer(raw, dtype=np.uint8)
    if not buf.all():
        raise BadInput("the file is not text (it contains NUL bytes); transaction files must be UTF-8 or ASCII")
    return buf


def _without_comment_lines(buf: np.ndarray, breaks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop every line (with its line break) whose first byte is ``#``, ``%`` or ``@``."""
    line_starts = np.concatenate(([0], breaks + 1))
    line_starts = line_starts[line_starts < len(buf)]
    is_comment = np.isin(buf[line_starts], _COMMENT_MARKS)
    if not is_comment.any():
        return buf, breaks
    line_ends = np.append(line_starts[1:], len(buf))  # one past each line's break
    inside = np.zeros(len(buf) + 1, dtype=np.int8)
    inside[line_starts[is_comment]] = 1
    inside[line_ends[is_comment]] -= 1
    buf = buf[np.cumsum(inside[:-1], dtype=np.int8) == 0]
    return buf, np.flatnonzero(buf == _NL)


def _with_final_line_break(buf: np.ndarray, breaks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """End the buffer with a line break, dropping a blank last line (the text after the final break)."""
    tail_start = int(breaks[-1]) + 1 if len(breaks) else 0
    if (buf[tail_start:] <= _SPACE).all():
        return buf[:tail_start], breaks
    return np.append(buf, np.uint8(_NL)), np.append(breaks, len(buf))


def _separator(buf: np.ndarray, sep: str | None) -> int | None:
    """The separator byte, or None for "any whitespace"."""
    if sep is None:
        return ord(",") if (buf == ord(",")).any() else None
    if not isinstance(sep, str) or len(sep) != 1 or not sep.isascii() or sep in "\n#%@":
        raise BadInput(f"the item separator must be one ASCII character such as ',' or ' ', not {sep!r}")
    return None if sep == " " else ord(sep)


def _blocks(buf: np.ndarray, breaks: np.ndarray) -> Iterator[tuple[int, int, int, int]]:
    """(first byte, end byte, first line, end line) of consecutive blocks of whole lines."""
    ends = np.searchsorted(breaks, np.arange(CHUNK_BYTES, len(buf), CHUNK_BYTES))
    ends = np.unique(np.append(ends[ends < len(breaks)], len(breaks) - 1))  # last line of each block
    first_byte = first_line = 0
    for last in ends.tolist():
        end_byte = int(breaks[last]) + 1
        yield first_byte, end_byte, first_line, last + 1
        first_byte, first_line = end_byte, last + 1


# -- items --------------------------------------------------------------------------------------------
def _item_spans(buf: np.ndarray, sep_byte: int | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Start and end (exclusive) offsets of every item of a buffer that ends with a line break,
    and whether any item holds inner whitespace."""
    word = buf > _SPACE
    if sep_byte is not None:
        word &= buf != sep_byte
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1
    if word[0]:
        edges = np.concatenate(([0], edges))
    starts, ends = edges[0::2], edges[1::2]
    if sep_byte is None or len(starts) < 2:
        return starts, ends, False
    return _join_words(buf, starts, ends, sep_byte)


def _join_words(buf, starts, ends, sep_byte) -> tuple[np.ndarray, np.ndarray, bool]:
    """With a separator, words split only by whitespace are one item (``New York``)."""
    delimiters = np.flatnonzero((buf == _NL) | (buf == sep_byte))
    before = np.searchsorted(delimiters, starts)
    joined = before[1:] == before[:-1]  # no separator or line break between word i-1 and word i
    if not joined.any():
        return starts, ends, False
    first = np.concatenate(([True], ~joined))
    last = np.concatenate((~joined, [True]))
    return starts[first], ends[last], True


def _items_per_line(starts: np.ndarray, breaks: np.ndarray) -> np.ndarray:
    return np.diff(np.searchsorted(starts, breaks), prepend=0)


def _all_integers(buf: np.ndarray, lengths: np.ndarray, sep_byte: int | None, inner_space: bool) -> bool:
    """Whether every item is a run of at most 18 ASCII digits."""
    if inner_space or lengths.max() > _MAX_DIGITS:
        return False
    if sep_byte is None or sep_byte < ord("0"):  # then only items can hold bytes from '0' up
        if buf.max() > ord("9"):
            return False
        digits = np.count_nonzero(buf >= ord("0"))
    else:
        digits = np.count_nonzero((buf >= ord("0")) & (buf <= ord("9")))
    return int(digits) == int(lengths.sum())


def _integer_values(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Decimal value of every item, one vectorised pass per digit position (right to left)."""
    lengths = ends - starts
    longest = int(lengths.max())
    kind = np.int32 if longest <= 9 else np.int64
    position = ends - 1
    values = np.subtract(np.take(buf, position), ord("0"), dtype=kind)
    for k in range(1, longest):
        position -= 1  # may point before a short item (even below 0): its digit is masked out
        digit = np.subtract(np.take(buf, position), ord("0"), dtype=kind)
        digit *= lengths > k
        digit *= kind(10**k)
        values += digit
    return values


def _integer_items(buf: np.ndarray, breaks: np.ndarray, sep_byte: int | None):
    """(items per line, codes, features) when every item is an integer, else None; block by block."""
    values, counts = [], []
    for first_byte, end_byte, first_line, end_line in _blocks(buf, breaks):
        block = buf[first_byte:end_byte]
        starts, ends, inner_space = _item_spans(block, sep_byte)
        if len(starts):
            if not _all_integers(block, ends - starts, sep_byte, inner_space):
                return None
            values.append(_integer_values(block, starts, ends))  # int32 unless an id has 10+ digits
        counts.append(_items_per_line(starts, breaks[first_line:end_line] - first_byte))
    items_per_line = np.concatenate(counts)
    if not values:
        return items_per_line, np.zeros(0, dtype=np.int32), []
    codes, distinct = _codes(np.concatenate(values))
    return items_per_line, codes, [Feature(str(v), None, v, "item") for v in distinct.tolist()]


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each value among the sorted distinct values, and those values."""
    top = int(values.max())
    if top < max(4 * len(values), 1 << 20):  # a lookup table no bigger than the items themselves
        present = np.zeros(top + 1, dtype=bool)
        step = max(1 << 16, top + 1)  # in slices, as bincount copies them to intp and counts to top
        for start in range(0, len(values), step):
            present |= np.bincount(values[start : start + step], minlength=top + 1) > 0
        code_of = np.cumsum(present, dtype=np.int32) - 1
        return code_of[values], np.flatnonzero(present)
    distinct, codes = np.unique(values, return_inverse=True)
    return codes, distinct


def _string_items(buf: np.ndarray, breaks: np.ndarray, sep_byte: int | None):
    """(items per line, codes, features) with every item a string, sorted by its UTF-8 bytes."""
    starts, ends, _ = _item_spans(buf, sep_byte)
    items_per_line = _items_per_line(starts, breaks)
    if not len(starts):
        return items_per_line, np.zeros(0, dtype=np.int32), []
    lengths = ends - starts
    width = int(lengths.max())
    if len(starts) * width <= 4 * len(buf) + (1 << 24):
        table = np.zeros((len(starts), width), dtype=np.uint8)
        for k in range(width):
            longer = np.flatnonzero(lengths > k)
            table[longer, k] = buf[starts[longer] + k]
        distinct, codes = np.unique(table.view(f"S{width}").ravel(), return_inverse=True)
        distinct = distinct.tolist()
    else:  # a few very long items: fixed-width rows would waste memory
        raw = buf.tobytes()
        items = [raw[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
        distinct = sorted(set(items))
        code_of = {item: i for i, item in enumerate(distinct)}
        codes = np.fromiter((code_of[item] for item in items), dtype=np.int64, count=len(items))
    return items_per_line, codes, [Feature(name, None, name, "item") for name in _decode(distinct)]


def _decode(items: list[bytes]) -> list[str]:
    try:
        return [item.decode("utf-8") for item in items]
    except UnicodeDecodeError:
        raise BadInput("the file is not UTF-8 text; save it as UTF-8 and read it again") from None
