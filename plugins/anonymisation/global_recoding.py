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
from dataclasses import dataclass


from veil.engine import (
    TABLE,
    Algorithm,
    BadInput,
    HierarchyUse,
    Judgement,
    ReportFact,
    TradeOff,
    Role,
    ScaleOut,
    grouping_columns,
    hookimpl,
    param,
)

from ._heuristic import SEARCHES
from ._lattice import (
    METRICS,
    attributes,
)
from ._recoding import LOSS_KEY, parse_levels, recode, release
from ._sensitive import sensitive_view

PAPER = "flash"  # with Incognito (LeFevre et al. 2005) and OLA (El Emam et al. 2009): docs/reference.md


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
        "lattice fits, else heuristic)",
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
    scale_out = ScaleOut("spark", reads_files=True, only_there=("part_format",))
    # what a run decides: suppressing records to lose less in the others (ARX's trade-off)
    trade_off = TradeOff(("suppressed",), ("loss", "entropy", "precision", "height", "discernibility"))

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
        for name, other in (gen.get("also") or {}).items():  # ARX's loss beside Veil's, or Veil's beside ARX's
            if isinstance(other, (int, float)):
                words = (
                    "ARX's loss, its geometric aggregate" if name == "arx-loss" else "Veil's loss, the arithmetic mean"
                )
                facts.append(ReportFact(f"Also ({name})", f"{other:.4g} ({words} over the attributes)"))
        limits = gen.get("level_limits")
        if isinstance(limits, dict) and limits:
            text = ", ".join(f"{c} {lo}–{hi}" for c, (lo, hi) in limits.items())
            facts.append(ReportFact("Levels allowed", text + " (the search looked at no other)"))
        weights = gen.get("weights")
        if isinstance(weights, dict) and weights:
            facts.append(ReportFact("Attribute weights", ", ".join(f"{c} {w:g}" for c, w in weights.items())))
        method = gen.get("search")
        if isinstance(method, str):
            facts.append(ReportFact("Search", _search_text(method, gen)))
        searched, size = gen.get("searched_nodes"), gen.get("lattice_nodes")
        if isinstance(searched, int) and isinstance(size, int):
            facts.append(ReportFact("Transformations checked", f"{searched:,} of the {size:,} level combinations"))
        return facts

    def run_parts(self, source, model, params, ctx, scratch):
        """On Spark: read ``source``'s files there, search on their class table, write the release in parts."""
        if not model.judges_groups:
            raise BadInput(f"global recoding needs a privacy model that judges groups of records, not {model.name}")
        from .._spark.tables import recode_on_spark

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
            from .._spark.tables import recode_table_on_spark

            searched = recode_table_on_spark(data, qis, marked, model, params, ctx.child(0.0, 0.9))
            chosen = dict(searched.details["generalisation"]["levels"])
        ctx.progress(0.0 if searched is None else 0.9, "global recoding: reading the hierarchies")
        attrs = attributes(data, qis, ctx.check)
        # every sensitive column is judged on its own: a class passes only when it passes on each
        records = [sensitive_view(data, c) for c in marked] if marked else [sensitive_view(data, None)]
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
            done.attrs,
            done.levels,
            sensitive,
            done.table,
            done.record_class,
            done.written,
            done.suppressed,
            done.details,
        )
        return out if done.space is None else dataclasses.replace(out, solution_space=done.space)


def _search_text(method: str, gen: dict) -> str:
    if method == "optimal":
        return "optimal: the whole lattice searched, the result proven optimal"
    name = "best-first (ARX's Lightning)" if method == "heuristic" else "genetic"
    checks, seconds = gen.get("budget_checks") or 0, gen.get("budget_seconds") or 0
    budget = " and ".join([f"{checks:,} transformations"] * bool(checks) + [f"{seconds:g} seconds"] * bool(seconds))
    verdict = (
        "every transformation checked or bounded out, the result proven optimal"
        if gen.get("proven_optimal")
        else "the best solution found, not proven optimal"
    )
    return f"{name} within a budget of {budget or 'no limit'}: {verdict}"


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %" if share >= 0.001 or share == 0 else f"{100 * share:.3f} %"


@hookimpl
def veil_register_algorithms():
    return [GlobalRecoding]
