"""The recoding core of global recoding (:mod:`.global_recoding`), shared with its Spark path
(:mod:`veil.plugins._spark.tables`): search the lattice of level combinations (or take the levels
the user chose), settle which classes are suppressed (:func:`recode`), and write the release at the
chosen levels (:func:`release`). docs/reference.md and docs/anonymisation.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    GENERALISED_TABLE,
    OWN_VALUE,
    SUPPRESSED,
    BadInput,
    Release,
    Role,
    format_value,
    params_to_dict,
)

from ._lattice import (
    WEIGHTED,
    Judge,
    Memo,
    Objective,
    Search,
    bottom,
    check_size,
    classes_at,
    lattice_size,
    solution_space,
    written_classes,
)
from . import _heuristic as heuristic
from ._population import LatticeCounts
from ._sensitive import reads_sensitive


LOSS_KEY = "loss"  # the chosen metric's value in details["generalisation"] (docs/reference.md)


@dataclass(frozen=True)
class Recoding:
    """The transformation chosen and its class table: each row's class, the classes written ``*``."""

    levels: tuple
    table: object  # the class table at ``levels`` (_lattice.Classes)
    record_class: np.ndarray  # each row's class
    written: np.ndarray  # mask of the classes written * in every quasi-identifier
    suppressed: int
    details: dict
    space: object = None  # the SolutionSpace the search walked (None when the levels were chosen)
    attrs: tuple = ()  # the attributes ``levels`` count in: within their limits (see limited)


def recode(
    attrs,
    model,
    params,
    records,
    n: int,
    chosen: dict | None,
    ctx,
    weights: np.ndarray | None = None,
    population=None,
    survey: np.ndarray | None = None,
    blanks: str = OWN_VALUE,
    memo: Memo | None = None,
) -> Recoding:
    """Search the lattice (or take the ``chosen`` levels) and settle which classes are suppressed.

    The rows are records, or with ``weights`` the rows of a class table each standing for that many
    records (the Spark path: :mod:`veil.plugins._spark.tables`); ``records`` is the rows' sensitive view (codes,
    Q, values), or one per sensitive column (each judged on its own), and ``n`` the number of
    records; ``population``: the population δ-presence and k-map count in; ``survey``: each row's
    survey weight, which the models reading weights judge classes by; ``blanks``: what a blank
    quasi-identifier means (docs/reference.md#blanks), which matters only where a column has one;
    ``memo``: what earlier searches of the same records under the same model at another factor of
    ARX's loss learnt (:class:`._lattice.Memo`), read and filled by the optimal search.
    Both paths share every step from here on."""
    attrs = limited(attrs, params)
    limit = math.floor(params.suppression * n + 1e-9)
    matching = blanks == ANY_VALUE and any(a.has_blank for a in attrs)
    judge = Judge(
        model,
        limit,
        records,
        LatticeCounts(population, attrs) if population is not None else None,
        survey=survey,
        blank_attrs=attrs if matching else None,
    )
    survey = judge.survey  # None when no model reads them
    sens = judge.codes if reads_sensitive(model) else None
    n_values = judge.n_codes if sens is not None else 1
    weighed = parse_weights(params.weights, [a.name for a in attrs], params.metric)  # the attributes'
    objective = Objective(params.metric, attrs, n, params.monotonic, weighed, params.gs_factor)
    if params.metric in ("loss", "arx-loss"):  # ARX's loss beside Veil's, and Veil's beside ARX's
        objective.companion = Objective(
            "arx-loss" if params.metric == "loss" else "loss", attrs, n, weights=weighed, gs_factor=params.gs_factor
        )
    if chosen is not None:
        levels = _levels_of(chosen, attrs)
        searched = 1
    else:
        method = _search_method(params, attrs)
        if method == "optimal":
            check_size(attrs)  # before the records are grouped
            if memo is not None:  # every setting but the factor of ARX's loss
                memo.bind((n, limit, params.metric, params.weights, params.monotonic, _windows(attrs), blanks))
            search = Search(
                attrs, bottom(attrs, sens, n_values, weights, survey), judge, objective, ctx.child(0.0, 0.9), memo
            )
            best, proven = search.run(), True
        else:
            base = bottom(attrs, sens, n_values, weights, survey)
            best, search, proven = heuristic.run(method, attrs, base, judge, objective, ctx.child(0.0, 0.9), params)
        if best is None:
            within = "" if proven else f" among the {len(search.known):,} transformations the {method} search checked"
            raise BadInput(
                f"no transformation satisfies {_models_text(model)} with at most {limit:,} suppressed "
                f"records ({params.suppression:.4g} of {n:,}){within}: allow more suppression, relax the "
                f"model{'' if proven else ', give the search a larger budget'} or give coarser hierarchies"
            )
        levels, searched = best.levels, len(search.known)
    ctx.progress(0.9, "global recoding: writing the release")
    table, record_class = classes_at(attrs, levels, sens, n_values, weights, survey)
    stars = [a.star[l] for a, l in zip(attrs, levels)]
    fail, fail_condition = judge.failing(table, stars)
    if fail is None:  # too many records in groups failing a condition of the models': they fail the models
        fail = fail_condition
    written = written_classes(table, fail, stars)
    suppressed = int(table.size[fail].sum())
    if suppressed > limit:
        raise BadInput(
            f"the transformation {_levels_text(attrs, levels)} does not satisfy {_models_text(model)}: "
            f"{suppressed:,} records are in groups that fail it, more than the {limit:,} that may be "
            f"suppressed"
        )
    if fail.any() and not judge.group_passes(table, written):
        raise BadInput(
            f"the transformation {_levels_text(attrs, levels)} does not satisfy {_models_text(model)}: "
            f"its {int(table.size[written].sum()):,} records written * in every quasi-identifier, one "
            f"group in the file, fail it"
        )
    bound = float(objective.bounds(np.asarray([levels], dtype=np.int64))[0])
    value = objective.value(table, written, bound)
    metric = (
        params.metric if params.metric != "discernibility" or params.monotonic else "discernibility:monotonic=false"
    )
    absolute = tuple(a.offset + int(l) for a, l in zip(attrs, levels))  # the hierarchies' own levels
    space = None
    if chosen is not None:
        pass
    elif method == "optimal":
        space = solution_space(search, metric, absolute, limit)
    else:
        space = heuristic.heuristic_space(search, metric, absolute, limit)
    also = {}
    if objective.companion is not None:
        other = objective.companion
        also[other.metric] = float(other.value(table, written, float(other.bounds(np.asarray([levels]))[0])))
    details = {
        "generalisation": {
            "levels": {a.name: int(l) for a, l in zip(attrs, absolute)},
            "metric": metric,
            LOSS_KEY: float(value),
            **({"also": also} if also else {}),
            **({"weights": dict(zip([a.name for a in attrs], weighed.tolist()))} if weighed is not None else {}),
            **({"level_limits": {a.name: [a.offset, a.offset + a.height] for a in attrs}} if _windowed(attrs) else {}),
            "suppressed_records": suppressed,
            "searched_nodes": int(searched),
            "lattice_nodes": int(lattice_size(attrs)),
        }
    }
    if chosen is None:
        details["generalisation"].update(_search_facts(params, method, proven))
    return Recoding(tuple(levels), table, record_class, written, suppressed, details, space, tuple(attrs))


def _windows(attrs) -> tuple:
    """Each attribute's name and window of levels."""
    return tuple((a.name, a.offset, a.height) for a in attrs)


def _search_method(params, attrs) -> str:
    """The search that runs: the one asked for, or with ``auto`` the one :func:`._heuristic.automatic`
    picks for the lattice's size."""
    if params.search != "auto":
        return params.search
    return heuristic.automatic(lattice_size(attrs))


def _search_facts(params, method: str, proven: bool) -> dict:
    """What the manifest records of the search: which ran, whether its result is proven optimal, its budget."""
    facts = {"search": method, "proven_optimal": bool(proven)}
    if method != "optimal":
        facts["budget_checks"] = int(params.budget)
        facts["budget_seconds"] = float(params.seconds)
        if method == "genetic":
            facts["generations"] = int(params.generations)
    return facts


def parse_levels(text: str, qis: list[str], what: str = "levels") -> dict[str, int] | None:
    """``age:2;sex:0`` → {"age": 2, "sex": 0}; None for an empty text (search instead). ``what``:
    the parameter's name, for the messages."""
    if not text.strip():
        return None
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, level = part.rpartition(":")
        name = name.strip()
        if not sep or not name:
            raise BadInput(
                f"{what}: write each column as COLUMN:LEVEL, separated by ';' (e.g. age:2;sex:0), got {part!r}"
            )
        if name not in qis:
            raise BadInput(
                f"{what} names {name!r}, which is not a quasi-identifier; the quasi-identifiers are {', '.join(qis)}"
            )
        try:
            out[name] = int(level.strip())
        except ValueError:
            raise BadInput(f"{what}: the level of {name!r} must be a whole number, got {level.strip()!r}") from None
        if out[name] < 0:
            raise BadInput(f"{what}: the level of {name!r} must be 0 or more, got {out[name]}")
    return out


def _levels_of(chosen: dict, attrs) -> tuple:
    """The chosen levels (the hierarchies' own) as the attributes count them (from their window's
    lowest level); BadInput for one outside the hierarchy or the limits."""
    for a in attrs:
        level = chosen.get(a.name, a.offset)
        top = a.offset + a.height
        if level > a.full_height:
            raise BadInput(
                f"levels: level {level} of {a.name!r} is above its hierarchy's height {a.full_height} (its "
                f"levels run from 0, the values themselves, to {a.full_height}, {a.labels[a.height][0]!r})"
            )
        if not a.offset <= level <= top:
            raise BadInput(f"levels: level {level} of {a.name!r} is outside its limits {a.offset}–{top}")
    return tuple(chosen.get(a.name, a.offset) - a.offset for a in attrs)


def limited(attrs, params) -> list:
    """The attributes with only the levels ``min_levels`` … ``max_levels`` allow (ARX's minimum and
    maximum generalisation per attribute)."""
    names = [a.name for a in attrs]
    lows = parse_levels(params.min_levels, names, "min_levels") or {}
    highs = parse_levels(params.max_levels, names, "max_levels") or {}
    return [a.window(lows.get(a.name, 0), highs.get(a.name, a.full_height)) for a in attrs]


def _windowed(attrs) -> bool:
    return any((a.offset, a.height) != (0, a.full_height) for a in attrs)


def parse_weights(text: str, qis: list[str], metric: str) -> np.ndarray | None:
    """``age:2;sex:0.5`` → each quasi-identifier's weight (1 where not named); None for an empty text."""
    if not text.strip():
        return None
    if metric not in WEIGHTED:
        raise BadInput(f"weights apply to {', '.join(WEIGHTED)}, not to {metric}, which does not add up attributes")
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, value = part.rpartition(":")
        name = name.strip()
        if not sep or not name:
            raise BadInput(
                f"weights: write each column as COLUMN:WEIGHT, separated by ';' (e.g. age:2;sex:1), got {part!r}"
            )
        if name not in qis:
            raise BadInput(
                f"weights names {name!r}, which is not a quasi-identifier; the quasi-identifiers are {', '.join(qis)}"
            )
        try:
            out[name] = float(value)
        except ValueError:
            raise BadInput(f"weights: the weight of {name!r} must be a number, got {value.strip()!r}") from None
        if not math.isfinite(out[name]) or out[name] < 0:
            raise BadInput(f"weights: the weight of {name!r} must be 0 or more, got {value.strip()}")
    weights = np.array([out.get(q, 1.0) for q in qis])
    if not weights.any():
        raise BadInput("weights: at least one quasi-identifier must weigh more than 0")
    return weights


def _levels_text(attrs, levels) -> str:
    return ";".join(f"{a.name}:{a.offset + l}" for a, l in zip(attrs, levels))


def _models_text(model) -> str:
    parts = []
    for m in getattr(model, "models", (model,)):
        args = ", ".join(f"{k}={v}" for k, v in params_to_dict(m.params).items())
        parts.append(f"{m.name} ({args})" if args else m.name)
    return " and ".join(parts)


def release(
    data, attrs, levels, sensitive, table, record_class, written, suppressed, details, blanks: str | None = None
) -> Release:
    """The records with each quasi-identifier at its level, the written classes as ``*``, a blank
    blank; the groups are the classes kept and, as one more group, the records written ``*``.
    ``blanks``: what a blank means in the release (its rule), where a quasi-identifier had one."""
    kept = np.flatnonzero(~written)
    group_of = np.empty(table.n_classes, dtype=np.int64)
    group_of[kept] = np.arange(len(kept))
    group_of[written] = len(kept)
    groups = group_of[record_class]
    values = {}
    for j, (a, level) in enumerate(zip(attrs, levels)):
        column = [a.value(level, int(c)) for c in table.codes[j, kept]]
        values[a.name] = column + ([SUPPRESSED] if written.any() else [])
    group_values = pd.DataFrame(values)
    frame = data.frame[data.released_columns()].reset_index(drop=True).copy()
    for a in attrs:
        distinct, per_group = pd.factorize(group_values[a.name])  # format each distinct value once
        text = np.array([format_value(v) for v in per_group] + [None], dtype=object)[distinct]  # −1: a blank
        codes, cats = pd.factorize(pd.Series(text, dtype=object))
        frame[a.name] = pd.Categorical.from_codes(codes[groups], categories=cats)
    sizes = np.bincount(groups)
    notes = ()
    if suppressed:
        notes = (
            f"{suppressed:,} of {len(groups):,} records suppressed: every quasi-identifier written *, the records kept",
        )
    details = {
        **details,
        "groups": int(len(sizes)),
        "smallest_group": int(sizes.min()),
        "average_group_size": float(sizes.mean()),
    }
    # every sensitive column the release publishes is listed, so the check of the file judges each
    published = tuple(c for c in data.schema.by_role(Role.SENSITIVE) if c in frame.columns and c != sensitive)
    return Release(
        GENERALISED_TABLE,
        frame,
        tuple(a.name for a in attrs),
        target=data.schema.target,
        sensitive=((sensitive,) if sensitive else ()) + published,
        groups=groups,
        group_values=group_values,
        details=details,
        notes=notes,
        blanks=blanks if any(a.has_blank for a in attrs) else None,
    )


# Spark counts classes of equal values: a blank would be one more value, never one matching any value
SPARK_BLANKS = (
    "run global recoding with executor=local, which keeps blank quasi-identifiers (blanks=any-value or own-value)"
)
