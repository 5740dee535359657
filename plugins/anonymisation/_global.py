"""Global recoding's run on a loaded table (:class:`GlobalRecodingParams`, :func:`run_global`), the
one core both :mod:`.global_recoding` and :mod:`.local_recoding` (a pass of it per round) call: no
plugin module knows another. docs/anonymisation.md#global-recoding, docs/reference.md#global-recoding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from veil.engine import ANY_VALUE, BLANK_RULES, BadInput, Release, Role, grouping_columns, missing_message, param

from ._heuristic import SEARCHES
from ._lattice import METRICS, attributes
from ._recoding import LOSS_KEY, SPARK_BLANKS, parse_levels, recode, release
from ._sensitive import sensitive_view, survey_of


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
        help="the information loss the search minimises: loss (Iyengar, the arithmetic mean over "
        "attributes), arx-loss (ARX's loss: its geometric aggregate over attributes and its "
        "generalisation/suppression factor), entropy (non-uniform entropy), discernibility, "
        "average-class-size (ARX's AECS), precision (Sweeney), height",
    )
    weights: str = param(
        "",
        sweepable=False,
        help="each quasi-identifier's weight in the loss, COLUMN:WEIGHT;… e.g. age:2;sex:0.5 (columns "
        "not named weigh 1), as ARX weighs attributes; for loss, arx-loss, entropy, precision, height",
    )
    gs_factor: float = param(
        0.5,
        minimum=0,
        maximum=1,
        help="for arx-loss: ARX's factor between generalisation and suppression (0.5 counts both "
        "alike; towards 0 suppression costs less, towards 1 generalisation does)",
    )
    min_levels: str = param(
        "",
        sweepable=False,
        help="the lowest level the search may use per column, COLUMN:LEVEL;… e.g. age:1 (default 0)",
    )
    max_levels: str = param(
        "",
        sweepable=False,
        help="the highest level the search may use per column, COLUMN:LEVEL;… e.g. zip:2 (default the "
        "hierarchy's height)",
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
    search: str = param(
        "auto",
        choices=SEARCHES,
        sweepable=False,
        help="how the lattice of transformations is searched: optimal (the whole lattice, with "
        "pruning; refused above 1,000,000 transformations), heuristic (best-first, ARX's Lightning, "
        "within the budget), genetic (a genetic algorithm within the budget), auto (optimal while the "
        "lattice fits, else genetic)",
    )
    budget: int = param(
        100_000,
        minimum=0,
        sweepable=False,
        help="for the heuristic and genetic searches: the most transformations checked (0: no limit); "
        "the best solution found within it is released",
    )
    seconds: float = param(
        0.0,
        minimum=0,
        sweepable=False,
        help="for the heuristic and genetic searches: the most seconds searched (0: no limit); a time "
        "budget makes the result depend on the machine's speed, a budget of checks does not",
    )
    generations: int = param(
        50,
        minimum=1,
        sweepable=False,
        help="for the genetic search: the number of generations (ARX's default 50)",
    )
    blanks: str = param(
        ANY_VALUE,
        choices=BLANK_RULES,
        help="what a blank quasi-identifier means when groups are counted: any-value (it matches any "
        "value, sdcMicro's rule: a record counts in every group it could join) or own-value (a value of "
        "its own); a blank stays blank at every level (local executor only)",
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


def run_global(data, model, params: GlobalRecodingParams, ctx, memo=None) -> Release:
    """Global recoding of ``data`` under ``model``: the search (or the chosen ``levels``), the
    suppression, and the release at the levels found. ``memo``: a :class:`._lattice.Memo` that
    searches of the same records under the same model share (see :func:`._recoding.recode`)."""
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
    if params.executor == "spark" and survey_of(data, model) is not None:
        raise BadInput(
            f"{model.name} judges groups by their survey weights, which the spark executor does not count; "
            "run it with executor=local"
        )
    refused = params.executor == "spark" and missing_message(data.frame, qis, "anonymising on Spark", SPARK_BLANKS)
    if refused:  # before Spark starts
        raise BadInput(refused)
    if params.executor == "spark":  # the class table counted and searched on Spark, the release made here
        from .._spark.tables import recode_table_on_spark

        searched = recode_table_on_spark(data, qis, marked, model, params, ctx.child(0.0, 0.9))
        chosen = dict(searched.details["generalisation"]["levels"])
    ctx.progress(0.0 if searched is None else 0.9, "global recoding: reading the hierarchies")
    attrs = attributes(data, qis, ctx.check, blanks=params.executor == "local")
    # every sensitive column is judged on its own: a class passes only when it passes on each
    records = [sensitive_view(data, c) for c in marked] if marked else [sensitive_view(data, None)]
    population = getattr(data, "population", None)
    if population is not None:
        population.check_covers(data, qis)
    done = recode(
        attrs,
        model,
        params,
        records,
        n,
        chosen,
        ctx,
        population=population,
        survey=survey_of(data, model),
        blanks=params.blanks,
        memo=memo,
    )
    if searched is not None:
        mine, theirs = done.details["generalisation"], searched.details["generalisation"]
        if (mine["suppressed_records"], mine[LOSS_KEY]) != (theirs["suppressed_records"], theirs[LOSS_KEY]):
            raise RuntimeError("the records and Spark's class table disagree")  # pragma: no cover - a defect
        done = dataclasses.replace(
            done, details={**searched.details, "executor": "spark", "spark_master": params.spark_master}
        )
    out = release(
        data,
        done.attrs,
        done.levels,
        sensitive,
        done.table,
        done.record_class,
        done.written,
        done.suppressed,
        done.details,
        blanks=params.blanks,
    )
    return out if done.space is None else dataclasses.replace(out, solution_space=done.space)
