"""Reading user-written JSON (studies, projects, manifests) with clear messages on wrong types."""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping
from pathlib import Path

from .errors import BadInput
from .io import missing_reason, open_regular

_NAMES = {
    dict: "an object",
    list: "a list",
    str: "text",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}


def get(d: Mapping, key: str, types: type | tuple, default=None, *, where: str = "", required: bool = False):
    """``d[key]`` checked against ``types`` (bool is not accepted as a number); BadInput names the field."""
    if not isinstance(d, Mapping):
        raise BadInput(f"{where or 'the file'} must be a JSON object")
    if key not in d or d[key] is None:
        if required:
            raise BadInput(f"{_at(where)}{key!r} is missing")
        return default
    value = d[key]
    types = types if isinstance(types, tuple) else (types,)
    wrong_bool = isinstance(value, bool) and bool not in types
    if wrong_bool or not isinstance(value, types):
        if float in types and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        wanted = " or ".join(_NAMES.get(t, t.__name__) for t in types)
        raise BadInput(f"{_at(where)}{key!r} must be {wanted}, got {value!r}")
    return value


def get_seed(d: Mapping, key: str = "seed", default: int = 0, *, where: str = "") -> int:
    seed = get(d, key, int, default, where=where)
    return check_seed(seed)


MAX_SEED = 2**32 - 1  # what every random generator Veil feeds (NumPy's legacy one, scikit-learn) accepts


def check_seed(seed: int) -> int:
    if not 0 <= seed <= MAX_SEED:
        raise BadInput(f"the seed must be a whole number from 0 to {MAX_SEED}, got {seed}")
    return seed


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def read_json_object(path: Path, what: str) -> dict:
    """A JSON object read from ``path``; BadInput saying which ``what`` (e.g. "study file") is
    missing, unreadable or not an object."""
    if Path(path).is_dir():
        raise BadInput(f"{path} is a folder, not a {what}")
    try:
        with open_regular(path) as f:  # never a FIFO or a device
            text = f.read().decode("utf-8")
        data = json.loads(text, object_pairs_hook=_refuse_repeated_keys)
    except FileNotFoundError:
        raise BadInput(missing_reason(path, what)) from None
    except IsADirectoryError:
        raise BadInput(f"{path} is a folder, not a {what}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadInput(missing_reason(path, what)) from None
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path} is not a valid {what}: {exc}") from None
    except RecursionError:  # json nests by recursion: 100,000 brackets would exhaust the stack
        raise BadInput(f"{path} is not a valid {what}: it is nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise BadInput(f"{path} is not a valid {what}: {exc}") from None
    except _RepeatedKey as exc:
        raise BadInput(
            f"{path} is not a valid {what}: the key {exc.args[0]!r} is given twice in one object, and "
            f"only one can count"
        ) from None
    if not isinstance(data, dict):
        raise BadInput(f"{path} is not a valid {what}: it must hold a JSON object")
    return data


class _RepeatedKey(Exception):
    pass


def _refuse_repeated_keys(pairs: list) -> dict:
    """A JSON object's pairs as a dict; a key given twice (``{"k": 50, "k": 2}``, which ``json`` would
    silently read as k = 2) raises."""
    d = {}
    for key, value in pairs:
        if key in d:
            raise _RepeatedKey(key)
        d[key] = value
    return d


# -- shapes of whole documents ---------------------------------------------------------------------------
# A shape is a type, an object {field: shape} (fields optional unless listed in REQUIRED), a list
# [item shape], or a tuple of alternatives; NULL allows null.
NULL = type(None)
NUMBER = (int, float)


def check_shape(value, shape, where: str) -> None:
    """Raise BadInput naming ``where`` (a file and field path) when ``value`` does not fit ``shape``."""
    alternatives = shape if isinstance(shape, tuple) else (shape,)
    for alt in alternatives:
        if _fits_outline(value, alt):
            if isinstance(alt, dict):
                for key, sub in alt.items():
                    if key in value:
                        check_shape(value[key], sub, f"{where}.{key}")
            elif isinstance(alt, list):
                for i, item in enumerate(value):
                    check_shape(item, alt[0], f"{where}[{i}]")
            return
    wanted = " or ".join(_describe(a) for a in alternatives)
    raise BadInput(f"{where} must be {wanted}, got {_short(value)}")


def _fits_outline(value, shape) -> bool:
    if isinstance(shape, dict):
        return isinstance(value, Mapping)
    if isinstance(shape, list):
        return isinstance(value, list)
    if isinstance(value, bool) and shape is not bool:
        return False
    if shape is float:
        return isinstance(value, (int, float))
    return isinstance(value, shape)


def _describe(shape) -> str:
    if isinstance(shape, dict):
        return "an object"
    if isinstance(shape, list):
        return "a list"
    return _NAMES.get(shape, shape.__name__)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def in_file(path: Path, parse, *args):
    """``parse(*args)``, with any BadInput it raises prefixed by the file's name (unless it names it)."""
    try:
        return parse(*args)
    except BadInput as exc:
        text = str(exc)
        if Path(path).name in text:
            raise
        raise BadInput(f"{Path(path).name}: {text}") from None
