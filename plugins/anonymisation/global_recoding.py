"""Global recoding with suppression: full-domain generalisation, the anonymisation ARX runs
(docs/anonymisation.md#global-recoding, docs/reference.md#global-recoding).

Every quasi-identifier is generalised to one level of its hierarchy for all records; the records of
classes that still fail the privacy model(s) are suppressed (every quasi-identifier written ``*``,
the record kept) when they are at most ``suppression`` of the records, and a transformation that
needs more is no solution. The method searches the lattice of level combinations for the solution
of least ``metric`` (Incognito, LeFevre et al. 2005; Flash, Kohlmayer et al. 2012; OLA, El Emam et
al. 2009: see ``_lattice``), or applies the one transformation ``levels`` names.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (
    GENERALISED_TABLE,
    SUPPRESSED,
    TABLE,
    Algorithm,
    BadInput,
    HierarchyUse,
    Judgement,
    Release,
    ReportFact,
    Role,
    ScaleOut,
    format_value,
    grouping_columns,
    hookimpl,
    param,
    params_to_dict,
    register_executor,
)

from ._lattice import (
    METRICS,
    Judge,
    Objective,
    Search,
    attributes,
    bottom,
    check_size,
    classes_at,
    lattice_size,
    solution_space,
    written_classes,
)
from ._population import LatticeCounts
from .mondrian import _reads_sensitive, _sensitive_view

PAPER = "flash"  # with Incognito (LeFevre et al. 2005) and OLA (El Emam et al. 2009): docs/reference.md


LOSS_KEY = "loss"  # the chosen metric's value in details["generalisation"] (docs/reference.md)


@dataclass(frozen=True)
class GlobalRecodingParams:
    suppression: float = param(
        0.0,
        minimum=0,
        maximum=1,
        help="largest share of the records that may be suppressed (every quasi-identifier "
        "written *), e.g. 0.04 for 4 %; ARX's suppression limit",
    )
    metric: str = param(
        "loss",
        choices=METRICS,
        help="the information loss the search minimises: loss (Iyengar), entropy (non-uniform "
        "entropy), discernibility, average-class-size (ARX's AECS), precision (Sweeney), height",
    )
    monotonic: bool = param(
        True,
        help="for discernibility: true counts the suppressed records as one group (DM*, "
        "Σ|E|²), false charges each of them n (Bayardo and Agrawal's DM)",
    )
    levels: str = param(
        "",
        sweepable=False,
        help="apply this one transformation instead of searching: COLUMN:LEVEL;… e.g. age:2;sex:0 "
        "(columns not named stay at level 0)",
    )
    executor: str = param(
        "local",
        choices=("local", "spark"),
        sweepable=False,
        help="where the run goes: local (this process, the table loaded in memory) or spark (Apache "
        "Spark reads the file or folder of parts, counts the classes, and writes the release "
        "in parts; for tables larger than memory; needs veil[spark] and Java 17)",
    )
    spark_master: str = param(
        "local[*]",
        sweepable=False,
        help="the Spark master URL when the executor is spark: local[*] (this machine's cores), "
        "local[N], spark://host:7077 …",
    )
    part_format: str = param(
        "csv",
        choices=("csv", "parquet"),
        sweepable=False,
        help="the format of the release's parts when the executor is spark",
    )


class GlobalRecoding(Algorithm):
    name = "global-recoding"
    title = "Global recoding with suppression (ARX)"
    paper = PAPER
    description = (
        "Generalises every quasi-identifier to one level of its hierarchy for all records, suppresses the "
        "records of groups that still fail the privacy model (within the suppression limit), and finds "
        "the levels that lose the least information."
    )
    accepts = (TABLE,)
    needs_model = True
    satisfies = (Judgement.GROUPS,)  # every transformation is judged by the model's own check_groups
    releases_sensitive = True
    Params = GlobalRecodingParams
    uses_hierarchies = HierarchyUse.ALL  # numbers too, where a hierarchy is attached
    scale_out = ScaleOut("spark", reads_files=True)

    @classmethod
    def report_facts(cls, details: dict, rows: int | None) -> list[ReportFact]:
        """The levels, the suppressed records, the information loss and the search, as the run's
        ``details["generalisation"]`` records them."""
        gen = details.get("generalisation")
        if not isinstance(gen, dict):
            return []
        facts = []
        levels = gen.get("levels")
        if isinstance(levels, dict) and levels:
            facts.append(
                ReportFact(
                    "Generalisation levels",
                    ", ".join(f"{c} {lv}" for c, lv in levels.items())
                    + " (every record at the same level of its column's hierarchy; 0 keeps the values)",
                )
            )
        suppressed = gen.get("suppressed_records")
        if isinstance(suppressed, int):
            share = f" ({_percent(suppressed / rows)})" if isinstance(rows, int) and rows else ""
            of = f" of {rows:,}" if isinstance(rows, int) else ""
            facts.append(
                ReportFact(
                    "Suppressed records",
                    f"{suppressed:,}{of}{share}: every quasi-identifier written *, the records kept",
                    "generalisation.suppressed_records",
                    suppressed,
                )
            )
        value = gen.get(LOSS_KEY)
        if isinstance(value, (int, float)):
            text = f"{value:.4g} ({gen.get('metric') or 'metric not recorded'}; lower keeps more)"
            facts.append(ReportFact("Information loss", text, f"generalisation.{LOSS_KEY}", value))
        searched, size = gen.get("searched_nodes"), gen.get("lattice_nodes")
        if isinstance(searched, int) and isinstance(size, int):
            facts.append(ReportFact("Transformations checked", f"{searched:,} of the {size:,} level combinations"))
        return facts

    def run_parts(self, source, model, params, ctx, scratch):
        """On Spark: read ``source``'s files there, search on their class table, write the release in parts."""
        if not model.judges_groups:
            raise BadInput(f"global recoding needs a privacy model that judges groups of records, not {model.name}")
        from ._spark_tables import recode_on_spark

        return recode_on_spark(source, model, params, ctx, scratch)

    def run(self, data, model, params, ctx):
        if not model.judges_groups:
            raise BadInput(f"global recoding needs a privacy model that judges groups of records, not {model.name}")
        marked = list(data.schema.by_role(Role.SENSITIVE))
        qis = [c for c in grouping_columns(data) if c not in marked]
        sensitive = marked[0] if marked else None
        if not qis:
            raise BadInput(
                "global recoding needs quasi-identifiers: mark the columns that identify people as quasi-identifiers"
            )
        n = data.n_rows
        if n == 0:
            raise BadInput("the table has no records to anonymise")
        chosen = parse_levels(params.levels, qis)
        searched = None
        if params.executor == "spark":  # the class table counted and searched on Spark, the release made here
            from ._spark_tables import recode_table_on_spark

            searched = recode_table_on_spark(data, qis, marked, model, params, ctx.child(0.0, 0.9))
            chosen = dict(searched.details["generalisation"]["levels"])
        ctx.progress(0.0 if searched is None else 0.9, "global recoding: reading the hierarchies")
        attrs = attributes(data, qis, ctx.check)
        # every sensitive column is judged on its own: a class passes only when it passes on each
        records = [_sensitive_view(data, c) for c in marked] if marked else [_sensitive_view(data, None)]
        population = getattr(data, "population", None)
        if population is not None:
            population.check_covers(data, qis)
        done = recode(attrs, model, params, records, n, chosen, ctx, population=population)
        if searched is not None:
            mine, theirs = done.details["generalisation"], searched.details["generalisation"]
            if (mine["suppressed_records"], mine[LOSS_KEY]) != (theirs["suppressed_records"], theirs[LOSS_KEY]):
                raise RuntimeError("the records and Spark's class table disagree")  # pragma: no cover - a defect
            done = dataclasses.replace(
                done, details={**searched.details, "executor": "spark", "spark_master": params.spark_master}
            )
        out = release(
            data,
            attrs,
            done.levels,
            sensitive,
            done.table,
            done.record_class,
            done.written,
            done.suppressed,
            done.details,
        )
        return out if done.space is None else dataclasses.replace(out, solution_space=done.space)


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


def recode(
    attrs, model, params, records, n: int, chosen: dict | None, ctx, weights: np.ndarray | None = None, population=None
) -> Recoding:
    """Search the lattice (or take the ``chosen`` levels) and settle which classes are suppressed.

    The rows are records, or with ``weights`` the rows of a class table each standing for that many
    records (the Spark path: :mod:`._spark_tables`); ``records`` is the rows' sensitive view (codes,
    Q, values), or one per sensitive column (each judged on its own), and ``n`` the number of
    records; ``population``: the population δ-presence and k-map count in. Both paths share every
    step from here on."""
    limit = math.floor(params.suppression * n + 1e-9)
    judge = Judge(model, limit, records, LatticeCounts(population, attrs) if population is not None else None)
    sens = judge.codes if _reads_sensitive(model) else None
    n_values = judge.n_codes if sens is not None else 1
    objective = Objective(params.metric, attrs, n, params.monotonic)
    if chosen is not None:
        levels = _levels_of(chosen, attrs)
        searched = 1
    else:
        check_size(attrs)  # before the records are grouped
        search = Search(attrs, bottom(attrs, sens, n_values, weights), judge, objective, ctx.child(0.0, 0.9))
        best = search.run()
        if best is None:
            raise BadInput(
                f"no transformation satisfies {_models_text(model)} with at most {limit:,} suppressed "
                f"records ({params.suppression:.4g} of {n:,}): allow more suppression, relax the "
                f"model or give coarser hierarchies"
            )
        levels, searched = best.levels, len(search.known)
    ctx.progress(0.9, "global recoding: writing the release")
    table, record_class = classes_at(attrs, levels, sens, n_values, weights)
    fail = judge.failing(table)[0]
    written = written_classes(table, fail, [a.star[l] for a, l in zip(attrs, levels)])
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
    space = solution_space(search, metric, levels, limit) if chosen is None else None
    details = {
        "generalisation": {
            "levels": {a.name: int(l) for a, l in zip(attrs, levels)},
            "metric": metric,
            LOSS_KEY: float(value),
            "suppressed_records": suppressed,
            "searched_nodes": int(searched),
            "lattice_nodes": int(lattice_size(attrs)),
        }
    }
    return Recoding(tuple(levels), table, record_class, written, suppressed, details, space)


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %" if share >= 0.001 or share == 0 else f"{100 * share:.3f} %"


def parse_levels(text: str, qis: list[str]) -> dict[str, int] | None:
    """``age:2;sex:0`` → {"age": 2, "sex": 0}; None for an empty text (search instead)."""
    if not text.strip():
        return None
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, level = part.rpartition(":")
        name = name.strip()
        if not sep or not name:
            raise BadInput(
                f"levels: write each column as COLUMN:LEVEL, separated by ';' (e.g. age:2;sex:0), got {part!r}"
            )
        if name not in qis:
            raise BadInput(
                f"levels names {name!r}, which is not a quasi-identifier; the quasi-identifiers are {', '.join(qis)}"
            )
        try:
            out[name] = int(level.strip())
        except ValueError:
            raise BadInput(f"levels: the level of {name!r} must be a whole number, got {level.strip()!r}") from None
        if out[name] < 0:
            raise BadInput(f"levels: the level of {name!r} must be 0 or more, got {out[name]}")
    return out


def _levels_of(chosen: dict, attrs) -> tuple:
    for a in attrs:
        level = chosen.get(a.name, 0)
        if level > a.height:
            raise BadInput(
                f"levels: level {level} of {a.name!r} is above its hierarchy's height {a.height} (its "
                f"levels run from 0, the values themselves, to {a.height}, {a.labels[a.height][0]!r})"
            )
    return tuple(chosen.get(a.name, 0) for a in attrs)


def _levels_text(attrs, levels) -> str:
    return ";".join(f"{a.name}:{l}" for a, l in zip(attrs, levels))


def _models_text(model) -> str:
    parts = []
    for m in getattr(model, "models", (model,)):
        args = ", ".join(f"{k}={v}" for k, v in params_to_dict(m.params).items())
        parts.append(f"{m.name} ({args})" if args else m.name)
    return " and ".join(parts)


def release(data, attrs, levels, sensitive, table, record_class, written, suppressed, details) -> Release:
    """The records with each quasi-identifier at its level, the written classes as ``*``; the groups are
    the classes kept and, as one more group, the records written ``*``."""
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
        text = np.array([format_value(v) for v in per_group], dtype=object)[distinct]
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
    )


def spark_executor(**options):
    """The ``spark`` executor service (``veil verify --executor spark``): pyspark is imported when used."""
    from ._spark_tables import SparkExecutor

    return SparkExecutor(**options)


register_executor("spark", spark_executor)


@hookimpl
def veil_register_algorithms():
    return [GlobalRecoding]
