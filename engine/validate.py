"""Reading user-written JSON (studies, projects, manifests) with clear messages on wrong types."""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping
from pathlib import Path

from .errors import BadInput
from .io import missing_reason

_NAMES = {dict: "an object", list: "a list", str: "text", int: "a whole number", float: "a number",
          bool: "true or false", type(None): "null"}


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


def check_seed(seed: int) -> int:
    if seed < 0:
        raise BadInput(f"the seed must be a whole number ≥ 0, got {seed}")
    return seed


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def read_json_object(path: Path, what: str) -> dict:
    """A JSON object read from ``path``; BadInput saying which ``what`` (e.g. "study file") is
    missing, unreadable or not an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(missing_reason(path, what)) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadInput(missing_reason(path, what)) from None
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path} is not a valid {what}: {exc}") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path} is not a valid {what}: it must hold a JSON object")
    return data
