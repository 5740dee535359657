"""PatternKa (docs/reference.md#set-valued-data, paper 002 Algorithm 1): the algorithm plugin. Its
grouping is :mod:`._patternka` (the search and its speed-ups), its Spark mining
:mod:`veil.plugins._spark.patterns`; its privacy model, metric and exporter are
:mod:`.set_k_anonymity`, :mod:`.metrics` and :mod:`veil.plugins.io.itemsets`.
"""

from __future__ import annotations

from dataclasses import dataclass

from veil.engine import SETS, Algorithm, MemoryCost, ScaleOut, SearchOptions, hookimpl, param

from ._grouping import PAPER, grouped_sets_release, information_loss
from ._patternka import SELECTIONS, patternka_groups


EXECUTORS = ("local", "spark")


@dataclass(frozen=True)
class PatternKaParams:
    pattern_selection: str = param(
        "lexicographic",
        choices=SELECTIONS,
        help="which of several longest patterns makes the next group: the smallest "
        "item list (reproducible) or one drawn with the run's seed (the paper)",
    )
    cache_size: int = param(
        32,
        minimum=1,
        help="longest closed patterns kept and revalidated between minings (and every one as long as the last of them)",
    )
    max_seconds: float = param(
        3600.0, minimum=1.0, help="stop a pattern search that runs longer than this, with a message"
    )
    executor: str = param(
        "local",
        choices=EXECUTORS,
        sweepable=False,
        help="where the longest patterns are mined: this process (the default, and the faster "
        "wherever the data fits) or Apache Spark (Algorithm 5, for data one machine cannot "
        "hold; needs veil[spark] and Java 17). The grouping is the same.",
    )
    spark_master: str = param(
        "local[*]",
        sweepable=False,
        help="the Spark master URL when the executor is spark: local[*] (this machine's "
        "cores), local[N], spark://host:7077, yarn …",
    )


class PatternKa(Algorithm):
    name = "patternka"
    memory_cost = MemoryCost(fixed=256 * 2**20, per_cell=96)  # the compiled search, its caches of patterns' records
    title = "PatternKa"
    paper = PAPER
    description = (
        "k-anonymity for sparse set-valued data (paper 002, Algorithm 1): groups records by their "
        "longest frequent pattern and publishes each group's centre (the items all members hold)."
    )
    accepts = (SETS,)
    needs_model = True
    satisfies = ("group-size",)  # Judgement.GROUP_SIZE: groups of at least k records
    provides = ("set-groups",)
    Params = PatternKaParams
    scale_out = ScaleOut("spark")  # the mining goes to Spark; the grouping stays here

    def run(self, data, model, params, ctx):
        k = model.params.k
        if params.executor == "spark":  # pyspark is imported only here, when the user picks Spark
            from .._spark.patterns import spark_patternka_groups

            grouping = spark_patternka_groups(
                data,
                k,
                master=params.spark_master,
                pattern_selection=params.pattern_selection,
                seed=ctx.seed or 0,
                cache_size=params.cache_size,
                max_seconds=params.max_seconds,
                ctx=ctx,
            )
        else:
            grouping = patternka_groups(
                data,
                k,
                pattern_selection=params.pattern_selection,
                seed=ctx.seed or 0,
                cache_size=params.cache_size,
                max_seconds=params.max_seconds,
                check=ctx.check,
                progress=ctx.progress,
                options=SearchOptions(threads=ctx.threads),
            )
        loss = information_loss(data, grouping.groups, grouping.centres)
        names = data.item_names
        details = {
            "groups": grouping.n_groups,
            "gcp": loss,
            "minings": grouping.minings,
            "executor": params.executor,
            "largest_patterns": [[names[j] for j in p] for p in grouping.patterns[:10]],
        }
        notes = ["every item is a quasi-identifier; each record is published as its group's centre"]
        if data.labels is not None:
            notes.append("the target of set-valued records is not released")
        return grouped_sets_release(data, grouping, details=details, notes=notes)


@hookimpl
def veil_register_algorithms():
    return [PatternKa]
