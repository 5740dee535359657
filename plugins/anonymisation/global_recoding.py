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


from veil.engine import (
    TABLE,
    Algorithm,
    BadInput,
    HierarchyUse,
    Judgement,
    ReportFact,
    Role,
    TradeOff,
    ScaleOut,
    hookimpl,
)

from ._global import GlobalRecodingParams, run_global
from ._recoding import LOSS_KEY

PAPER = "flash"  # with Incognito (LeFevre et al. 2005) and OLA (El Emam et al. 2009): docs/reference.md


class GlobalRecoding(Algorithm):
    name = "global-recoding"
    keeps_record_order = True  # every record, in the input's order
    aggregates_in_groups = True  # each record in one group: a column can be aggregated inside them
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
        if getattr(model, "reads_weights", False) and Role.WEIGHT in set((source.roles or {}).values()):
            raise BadInput(
                f"{model.name} judges groups by their survey weights, which the spark executor does not count; "
                "run it with executor=local"
            )
        from .._spark.tables import recode_on_spark

        return recode_on_spark(source, model, params, ctx, scratch)

    @classmethod
    def blank_rule(cls, params) -> str:
        return params.blanks

    def run(self, data, model, params, ctx):
        return run_global(data, model, params, ctx)


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
