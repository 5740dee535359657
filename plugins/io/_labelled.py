"""What the statistics packages' files carry besides their cells: value labels, variable labels and
user-defined missing codes, as read (into ``Table.meta``) and as written back (docs/formats.md,
"Labelled files").

A column's entry in ``meta["labels"]`` (:data:`veil.engine.FILE_LABELS`) is a dict:

``label``
    the variable label ("Age at interview, years"), or None;
``values``
    code → value label, every label the file declares for the column, missing codes' too;
``coded``
    True when the cells were replaced by their labels on reading (every present value has one):
    the user sees, groups and generalises the labels, and the export writes the codes back;
``missing``
    the user-defined missing codes: SPSS ranges ``[lo, hi]`` or Stata/SAS letters (``"a"``);
    cells holding one are read as missing (never a value a group or a sensitive value counts).

Writing keeps only labels of values the release holds: a released original value gets its code and
label, a generalised value (an interval, a hierarchy's parent, ``*``) a new code labelled with its
text. No label of a value removed or generalised away is written, so no identifier travels in a
label set.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def user_missing_mask(s: pd.Series, missing: list) -> np.ndarray:
    """Which cells hold one of the column's user-defined missing codes."""
    mask = np.zeros(len(s), dtype=bool)
    for m in missing:
        if isinstance(m, (list, tuple)):
            lo, hi = m
            if isinstance(lo, str) or not pd.api.types.is_numeric_dtype(s):
                mask |= (s == lo).to_numpy(dtype=bool, na_value=False)
            else:
                mask |= ((s >= lo) & (s <= hi)).to_numpy(dtype=bool, na_value=False)
        else:
            mask |= (s.astype(object) == m).to_numpy(dtype=bool, na_value=False)
    return mask


def _plain_code(v):
    """A code as the file gave it, ints for integral floats (1.0 → 1), so labels key alike."""
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        return int(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def labelled_frame(raw: pd.DataFrame, value_labels: dict, variable_labels: dict, missing: dict):
    """The frame a user works on and the labels entry of each column (see the module's doc).

    ``raw`` holds the cells as the file stores them (user-missing codes included); ``missing``
    maps a column to its missing codes (ranges or letters). Returns ``(frame, labels, cells)``,
    ``cells`` each column's user-missing cells with their own codes, as
    :data:`veil.engine.CELL_CODES` holds them (column → (rows, codes))."""
    out, labels, cells = {}, {}, {}
    for c in raw.columns:
        s = raw[c]
        codes_missing = list(missing.get(c) or [])
        if codes_missing:
            mask = user_missing_mask(s, codes_missing)
            if mask.any():
                cells[str(c)] = (np.flatnonzero(mask), [_plain_code(v) for v in s[mask]])
            s = s.mask(mask)
            if s.dtype == object:  # Stata's letters removed: the column is numbers again
                rest = s.dropna()
                if len(rest) == 0 or all(isinstance(v, (int, float, np.number)) for v in rest):
                    s = pd.to_numeric(s)
        values = {_plain_code(k): str(v) for k, v in (value_labels.get(c) or {}).items()}
        coded = False
        if values:
            present = [_plain_code(v) for v in pd.unique(s.dropna())]
            keep = {k: v for k, v in values.items() if not _is_missing_code(k, codes_missing)}
            texts = list(keep.values())
            if present and all(v in keep for v in present) and len(set(texts)) == len(texts):
                order = sorted(keep, key=_sort_key)
                codes = pd.Index(order).get_indexer(s.to_numpy())  # each cell's code's place; missing: -1
                cat = pd.Categorical.from_codes(codes, categories=[keep[k] for k in order])
                s, coded = pd.Series(cat, index=s.index), True
        if not coded and pd.api.types.is_float_dtype(s) and s.notna().all() and len(s):
            x = s.to_numpy()
            if np.all(np.isfinite(x)) and np.all(np.mod(x, 1) == 0) and np.abs(x).max() < 2**53:
                s = s.astype(np.int64)
        out[c] = s
        label = variable_labels.get(c)
        if label or values or codes_missing:
            labels[str(c)] = {
                "label": label or None,
                "values": values,
                "coded": coded,
                "missing": [list(m) if isinstance(m, (list, tuple)) else m for m in codes_missing],
            }
    return pd.DataFrame(out, index=raw.index), labels, cells


def _is_missing_code(code, missing: list) -> bool:
    for m in missing:
        if isinstance(m, (list, tuple)):
            lo, hi = m
            if isinstance(code, str) or isinstance(lo, str):
                if code == lo:
                    return True
            elif lo <= code <= hi:
                return True
        elif code == m:
            return True
    return False


def _text(v):
    return None if v is None else str(v)


def _sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def written_frame(frame: pd.DataFrame, labels: dict, *, integer_codes: bool = False, cells: dict | None = None):
    """The release as a labelled file stores it: ``(frame, value_labels, variable_labels, missing)``.

    ``cells`` (column → (rows, codes), :data:`veil.engine.CELL_CODES`) are blank cells of the release
    that held a user-missing code in the input: each gets its own code back where the column's
    declaration is written again — SPSS's numeric codes (``missing`` here) and Stata's letters
    (``missing`` then maps the column to the letters it uses, and the cells hold them as text).

    A coded column's cells become codes again: a released label its original code, any other
    value (a generalised one, ``*``) a new code past the largest used, labelled with its text. An
    uncoded numeric column keeps the labels of the values it still holds. Labels of user-missing
    codes are kept beside their declaration (``missing``). ``integer_codes``: Stata's value labels
    label whole numbers only, so a coded column's new codes are whole numbers there too (they are
    everywhere)."""
    out, value_labels, variable_labels, missing = {}, {}, {}, {}
    for c in frame.columns:
        s = frame[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.cat.remove_unused_categories()  # a category no record holds is no label either
        entry = labels.get(str(c)) or {}
        values = entry.get("values") or {}
        declared = list(entry.get("missing") or [])
        if entry.get("label"):
            variable_labels[c] = entry["label"]
        kept = {}
        if entry.get("coded") and not pd.api.types.is_numeric_dtype(s):
            by_text = {}
            for code, text in values.items():
                if not _is_missing_code(code, declared):
                    by_text.setdefault(text, code)
            used = [k for k in values if isinstance(k, (int, float))]
            nxt = int(max((abs(k) for k in used), default=0)) + 1
            texts = sorted({str(v) for v in pd.unique(s.dropna())}, key=lambda t: (t not in by_text, t))
            for text in texts:
                code = by_text.get(text)
                if code is None or isinstance(code, str):
                    code, nxt = nxt, nxt + 1
                kept[code] = text
            texts_kept = list(kept.values())
            place = pd.Index(texts_kept).get_indexer(s.astype(object).where(s.notna(), None).map(_text))
            codes = np.array([float(k) for k in kept] + [np.nan])
            s = pd.Series(codes[place], index=s.index)  # place -1 (missing) picks the NaN
        elif pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and values:
            present = {_plain_code(v) for v in pd.unique(s.dropna())}
            kept = {k: v for k, v in values.items() if k in present}
        elif isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype(object).where(s.notna(), None)
        restore = (cells or {}).get(str(c))
        if pd.api.types.is_numeric_dtype(s) and declared and not isinstance(declared[0], str):
            missing[c] = [{"lo": lo, "hi": hi} for lo, hi in declared]
            kept.update({k: v for k, v in values.items() if _is_missing_code(k, declared)})
            if restore is not None and all(isinstance(k, (int, float)) for k in restore[1]):
                s = s.astype(float)
                s.iloc[np.asarray(restore[0])] = np.asarray(restore[1], dtype=float)
        elif declared and all(isinstance(m, str) for m in declared) and pd.api.types.is_numeric_dtype(s):
            if restore is not None and integer_codes:  # Stata's .a–.z: the letters the cells use, declared
                s = s.astype(object)
                s.iloc[np.asarray(restore[0])] = np.asarray(restore[1], dtype=object)
                missing[c] = sorted({str(v) for v in restore[1]})
        if kept and integer_codes and not all(isinstance(k, int) for k in kept):
            kept = {}  # Stata labels whole numbers only: a fractional value keeps no label
        if kept:
            value_labels[c] = {float(k) if not integer_codes else int(k): v for k, v in sorted(kept.items())}
        out[c] = s
    return pd.DataFrame(out), value_labels, variable_labels, missing
