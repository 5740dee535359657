"""Parameter declarations: one dataclass per plugin drives validation, CLI flags, GUI forms and
project files.

Example
-------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Params:
...     k: int = param(5, minimum=1, help="smallest group size")
...     mode: str = param("skip", choices=("skip", "stop"), help="what to do on a violation")
>>> parse_params(Params, {"k": "8"})
Params(k=8, mode='skip')
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from ..base.errors import BadInput


# what a value of each type is, in the words of a message (not Python's type names)
_KINDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}


def param(
    default,
    *,
    help: str = "",
    minimum=None,
    maximum=None,
    exclusive_minimum: bool = False,
    choices: tuple | None = None,
    label: str | None = None,
    sweepable: bool = True,
):
    """Declare one parameter of a plugin's ``Params`` dataclass."""
    meta = {
        "help": help,
        "minimum": minimum,
        "maximum": maximum,
        "exclusive_minimum": exclusive_minimum,
        "choices": tuple(choices) if choices else None,
        "label": label,
        "sweepable": sweepable,
    }
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"veil": meta})
    return dataclasses.field(default=default, metadata={"veil": meta})


@dataclass(frozen=True)
class ParamSpec:
    """What one parameter accepts, read from its declaration."""

    name: str
    type: type
    default: object
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple | None = None
    label: str | None = None
    optional: bool = False
    sweepable: bool = True

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ")

    def describe_bounds(self) -> str:
        parts = []
        if self.choices:
            parts.append("one of " + ", ".join(map(str, self.choices)))
        if self.minimum is not None:
            parts.append(f"{'>' if self.exclusive_minimum else '≥'} {self.minimum}")
        if self.maximum is not None:
            parts.append(f"≤ {self.maximum}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "type": self.type.__name__,
            "default": self.default,
            "help": self.help,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "exclusive_minimum": self.exclusive_minimum,
            "choices": list(self.choices) if self.choices else None,
            "optional": self.optional,
        }

    def convert(self, value, owner: str = ""):
        """Convert ``value`` (possibly a string from a command line) and check its bounds."""
        where = f"{owner}: " if owner else ""
        if value is None:
            if self.optional:
                return None
            raise BadInput(f"{where}parameter {self.name!r} needs a value")
        try:
            v = _coerce(self.type, value)
        except (TypeError, ValueError):
            kind = _KINDS.get(self.type, self.type.__name__)
            raise BadInput(f"{where}parameter {self.name!r} must be {kind}, got {value!r}") from None
        if self.type is float and not math.isfinite(v):
            bounds = self.describe_range()
            raise BadInput(
                f"{where}parameter {self.name!r} must be a finite number{f' ({bounds})' if bounds else ''}, "
                f"got {value!r}"
            )
        if self.choices and v not in self.choices:
            raise BadInput(
                f"{where}parameter {self.name!r} must be one of {', '.join(map(str, self.choices))}, got {v!r}"
            )
        too_low = self.minimum is not None and ((v <= self.minimum) if self.exclusive_minimum else (v < self.minimum))
        if too_low or (self.maximum is not None and v > self.maximum):
            raise BadInput(f"{where}parameter {self.name!r} must be {self.describe_range()}, got {v}")
        return v

    def describe_range(self) -> str:
        """The bounds as a phrase: "≥ 1", "≤ 20", "≥ 0.001 and ≤ 1000", "> 0 and ≤ 0.5"."""
        low = None if self.minimum is None else f"{'>' if self.exclusive_minimum else '≥'} {self.minimum}"
        high = None if self.maximum is None else f"≤ {self.maximum}"
        return " and ".join(b for b in (low, high) if b)


def _coerce(tp: type, value):
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
            return False
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValueError(value)
    if tp is int:
        if isinstance(value, bool):
            raise TypeError(value)
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(value)
            return int(value)
        return int(str(value).strip())
    if tp is float:
        if isinstance(value, bool):
            raise TypeError(value)
        return float(value)
    if tp is str:
        return str(value)
    raise TypeError(tp)


def param_specs(params_cls) -> list[ParamSpec]:
    """The declared parameters of a ``Params`` dataclass, in declaration order."""
    if params_cls is None:
        return []
    hints = typing.get_type_hints(params_cls)
    specs = []
    for f in dataclasses.fields(params_cls):
        meta = f.metadata.get("veil", {})
        tp, optional = _unwrap(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        specs.append(ParamSpec(f.name, tp, default, optional=optional, **meta))
    return specs


def _unwrap(tp):
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0], True
    return tp, False


def parse_params(params_cls, values: Mapping | None = None, owner: str = ""):
    """Build a validated ``Params`` instance from a mapping of names to values (or strings).

    Unknown names and out-of-bounds values raise :class:`BadInput` naming the parameter.
    """
    values = dict(values or {})
    specs = {s.name: s for s in param_specs(params_cls)}
    unknown = set(values) - set(specs)
    if unknown:
        name = sorted(unknown)[0]
        known = ", ".join(specs) or "none"
        where = f"{owner} " if owner else ""
        raise BadInput(f"{where}has no parameter {name!r} (parameters: {known})")
    kwargs = {name: spec.convert(values.get(name, spec.default), owner) for name, spec in specs.items()}
    if params_cls is None:
        return None
    return params_cls(**kwargs)


def params_to_dict(params) -> dict:
    """Plain JSON-ready mapping of a ``Params`` instance."""
    return {} if params is None else dataclasses.asdict(params)


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``NAME[:key=value,...]`` (the CLI's way of naming a plugin with parameters)."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise BadInput(f"expected NAME[:key=value,...], got {text!r}")
    values: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, val = part.partition("=")
        if not eq or not key.strip():
            raise BadInput(f"expected key=value in {text!r}, got {part!r}")
        if key.strip() in values:  # "k-anonymity:k=50,k=2" must not quietly run k = 2
            raise BadInput(f"the parameter {key.strip()!r} is given twice in {text!r}; give it once")
        values[key.strip()] = val.strip()
    return name, values
