"""A differentially private release of a table by SafePub's construction (docs/anonymisation.md#dp-table,
docs/reference.md#dp-table-safepub): each record sampled with probability β, every quasi-identifier
generalised to a level fixed in advance (data-independent) or chosen by the exponential mechanism
over the lattice (data-dependent), and every class smaller than k suppressed, with (k, β) computed
from (ε, δ) (Bild, Kuhn and Prasser, PoPETs 2018, on Li, Qardaji and Su 2012).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import (
    TABLE,
    Algorithm,
    BadInput,
    HierarchyUse,
    ReportFact,
    Role,
    grouping_columns,
    hookimpl,
    missing_message,
    param,
)

from ._lattice import Kept, attributes, bottom, classes_at, rollup, written_classes
from ._recoding import parse_levels, release
from ._safepub import DEGREES, SCORES, level_of, parameters, score_of, search, sensitivity

# SafePub's guarantee is worked out for classes of equal values, where a blank cannot match any value
DP_BLANKS = (
    "choose a method that keeps blank quasi-identifiers (global recoding, Mondrian, local suppression, "
    "local recoding or microaggregation): dp-table's guarantee counts records in classes of equal values"
)

PAPER = "safepub"
INDEPENDENT, DEPENDENT = "data-independent", "data-dependent"


@dataclass(frozen=True)
class DPTableParams:
    epsilon: float = param(
        2.0, minimum=0, exclusive_minimum=True, label="ε", help="the privacy budget ε (ARX's default 2)"
    )
    delta: float = param(
        1e-5,
        minimum=0,
        maximum=0.01,
        exclusive_minimum=True,
        label="δ",
        help="the probability δ that the ε guarantee fails; below 1/n (ARX's default 10⁻⁵)",
    )
    degree: str = param(
        "medium",
        choices=tuple(DEGREES),
        help="how far every quasi-identifier is generalised, fixed before the data is seen: the share "
        "of its hierarchy's height (low 0.2, low-medium 0.4, medium 0.5, medium-high 0.6, high 0.8), rounded",
    )
    levels: str = param(
        "",
        sweepable=False,
        help="the level of some columns instead of the degree's: COLUMN:LEVEL;… e.g. age:2;sex:0",
    )
    mode: str = param(
        INDEPENDENT,
        choices=(INDEPENDENT, DEPENDENT),
        help="data-independent: the levels fixed by degree or levels; data-dependent: chosen by the "
        "exponential mechanism over the lattice, spending a share of ε",
    )
    score: str = param(
        "loss",
        choices=SCORES,
        help="data-dependent: the score the search prefers (SafePub's granularity, intensity, "
        "discernibility, non-uniform entropy, group size)",
    )
    search_share: float = param(
        0.1,
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
        label="search share of ε",
        help="data-dependent: the share of ε the search spends (ARX's default 0.1); the rest gives k and β",
    )
    steps: int = param(
        100,
        minimum=1,
        help="data-dependent: the search's steps (ARX's expansions), each spending ε × share / steps",
    )

    def __post_init__(self):
        if self.mode == DEPENDENT and self.search_share >= 1:
            raise BadInput("search_share must be below 1: the rest of ε is what sampling and suppression spend")
        if self.mode == DEPENDENT and self.levels.strip():
            raise BadInput("levels= fixes the generalisation in advance: give it with mode=data-independent")

    @property
    def epsilon_search(self) -> float:
        return float(self.epsilon) * float(self.search_share) if self.mode == DEPENDENT else 0.0

    @property
    def epsilon_anonymisation(self) -> float:
        return float(self.epsilon) - self.epsilon_search


class DPTable(Algorithm):
    name = "dp-table"
    title = "Differentially private table (SafePub)"
    paper = PAPER
    description = (
        "Releases the table with an (ε, δ)-differential-privacy guarantee: each record is sampled with "
        "probability β, every quasi-identifier generalised to a level fixed in advance or chosen on the "
        "sample by the exponential mechanism, and every class smaller than k suppressed, with k and β "
        "computed from ε and δ."
    )
    accepts = (TABLE,)
    needs_model = False
    randomised = True
    releases_sensitive = True
    Params = DPTableParams
    uses_hierarchies = HierarchyUse.ALL

    @classmethod
    def hint(cls, params: DPTableParams) -> str:
        """What ε and δ imply, shown by the parameter form as they change (docs/anonymisation.md#dp-table)."""
        try:
            chosen = parameters(params.epsilon_anonymisation, float(params.delta))
        except ValueError as e:
            return str(e)
        if params.mode != DEPENDENT:
            return chosen.sentence()
        return chosen.sentence(
            f"{params.epsilon:g} ({params.epsilon_anonymisation:g} for sampling and suppression, "
            f"{params.epsilon_search:g} for the search: {params.steps} steps of "
            f"{params.epsilon_search / params.steps:.3g})"
        )

    @classmethod
    def report_facts(cls, details: dict, rows: int | None) -> list[ReportFact]:
        dp = details.get("dp")
        if not isinstance(dp, dict):
            return []
        facts = [
            ReportFact(
                "Guarantee",
                f"({dp.get('epsilon'):g}, {dp.get('delta'):g})-differential privacy of the mechanism "
                f"(SafePub, {dp.get('mode')}): a property of how the file was made, not of the file; "
                f"no check of the file can confirm or refute it",
            ),
            ReportFact(
                "Privacy budget",
                f"ε = {dp.get('epsilon'):g}: {dp.get('epsilon_anonymisation', dp.get('epsilon')):g} for sampling "
                "and suppression"
                + (
                    f", {dp.get('epsilon_search'):g} for the search ({dp.get('steps_taken')} of "
                    f"{dp.get('steps')} steps of {dp.get('epsilon_per_step'):.3g}, the exponential mechanism "
                    f"scoring {dp.get('score')})"
                    if dp.get("mode") == DEPENDENT
                    else ", nothing for choosing the generalisation (fixed in advance)"
                ),
            ),
            ReportFact(
                "Sampling and suppression",
                f"each record kept with probability β = {dp.get('beta'):.4f}; classes smaller than k = "
                f"{dp.get('k')} suppressed",
            ),
        ]
        sampled, suppressed = dp.get("sampled"), dp.get("suppressed")
        if isinstance(sampled, int) and isinstance(suppressed, int):
            facts.append(
                ReportFact(
                    "Records",
                    f"{sampled:,} of {dp.get('records', 0):,} sampled; {suppressed:,} of them suppressed "
                    f"(every quasi-identifier written *)",
                    "dp.suppressed",
                    suppressed,
                )
            )
        facts.append(ReportFact("Randomness", str(dp.get("randomness", ""))))
        return facts

    def run(self, data, model, params, ctx):
        marked = list(data.schema.by_role(Role.SENSITIVE))
        qis = [c for c in grouping_columns(data) if c not in marked]
        if not qis:
            raise BadInput(
                "dp-table needs quasi-identifiers: mark the columns that identify people as quasi-identifiers"
            )
        refused = missing_message(data.frame, qis, "a differentially private release", DP_BLANKS)
        if refused:  # before a record is sampled
            raise BadInput(refused)
        try:
            chosen = parameters(params.epsilon_anonymisation, float(params.delta))
        except ValueError as e:
            raise BadInput(f"dp-table: {e}") from None
        ctx.progress(0.0, self.hint(params))
        n = data.n_rows
        draws = np.empty(n)
        for i in range(n):  # the run's noise source: the operating system's in a release, seeded in a study
            if i % 8192 == 0:
                ctx.check()
            draws[i] = ctx.noise.uniform()
        sample = data.take(np.flatnonzero(draws < chosen.beta))
        if sample.n_rows == 0:
            raise BadInput(f"dp-table: no record was sampled ({chosen.sentence()}); the table is too small")
        ctx.progress(0.1, "dp-table: generalising the sample")
        attrs = attributes(sample, qis, ctx.check)
        dp = {
            "epsilon": float(params.epsilon),
            "delta": float(params.delta),
            "k": int(chosen.k),
            "beta": float(chosen.beta),
            "mode": params.mode,
            "epsilon_anonymisation": params.epsilon_anonymisation,
            "epsilon_search": params.epsilon_search,
        }
        if params.mode == DEPENDENT:
            levels = self._search(attrs, chosen.k, n, params, ctx.child(0.1, 0.9), dp)
        else:
            levels = self._fixed(attrs, qis, params)
            dp["degree"] = params.degree
        table, record_class = classes_at(attrs, tuple(levels), None, 1)
        fail = table.size < chosen.k
        written = written_classes(table, fail, [a.star[l] for a, l in zip(attrs, levels)])
        suppressed = int(table.size[fail].sum())
        dp.update(
            {
                "levels": {a.name: int(l) for a, l in zip(attrs, levels)},
                "records": int(n),
                "sampled": int(sample.n_rows),
                "suppressed": suppressed,
                "randomness": ctx.noise.describe(),
            }
        )
        how = (
            "generalisation chosen by the exponential mechanism on the sample"
            if params.mode == DEPENDENT
            else "generalisation fixed in advance"
        )
        details = {
            "dp": dp,
            "epsilon_spent": float(params.epsilon),
            "noise_source": ctx.noise.describe(),
            "assumptions": [
                f"({params.epsilon:g}, {params.delta:g})-differential privacy holds for the mechanism (sampling, "
                f"{how}, suppression of classes smaller than k), as SafePub proves; "
                "the verdict is a property of the mechanism, not of the file"
            ],
        }
        out = release(sample, attrs, levels, None, table, record_class, written, suppressed, details)
        ctx.progress(1.0)
        return out

    @staticmethod
    def _fixed(attrs, qis, params) -> list[int]:
        """The data-independent levels: the degree's share of each height, or the levels given."""
        given = parse_levels(params.levels, qis) or {}
        levels = []
        for a in attrs:
            level = given.get(a.name, level_of(params.degree, a.height))
            if level > a.height:
                raise BadInput(f"levels: level {level} of {a.name!r} is above its hierarchy's height {a.height}")
            levels.append(level)
        return levels

    @staticmethod
    def _search(attrs, k: int, n: int, params, ctx, dp: dict) -> tuple:
        """The data-dependent levels: SafePub's search over the sample's lattice (``_safepub.search``),
        each node's class table rolled up from the smallest kept specialisation."""
        kept = Kept(bottom(attrs, None, 1))
        delta_score = sensitivity(params.score, k, len(attrs))
        epsilon_step = params.epsilon_search / params.steps

        def score(levels: tuple) -> float:
            below = np.flatnonzero((kept.levels[: kept.count] <= np.asarray(levels, dtype=np.int16)[None, :]).all(1))
            table = rollup(kept.tables[below[np.argmin(kept.sizes[below])]], levels, attrs)
            kept.add(table)
            return score_of(params.score, table, attrs, k, n)

        steps = [0]

        def check() -> None:
            ctx.progress(steps[0] / params.steps, f"dp-table: search step {steps[0]:,} of {params.steps:,}")
            steps[0] += 1

        walk = search(
            tuple(a.height for a in attrs), score, params.steps, epsilon_step, delta_score, ctx.noise.uniform, check
        )
        names = [a.name for a in attrs]
        dp.update(
            {
                "score": params.score,
                "sensitivity": delta_score,
                "steps": int(params.steps),
                "steps_taken": len(walk.pivots) - 1,
                "epsilon_per_step": epsilon_step,
                "chosen_score": walk.scores[walk.best],
                "pivots": [dict(zip(names, map(int, p))) for p in walk.pivots],
            }
        )
        return walk.best


@hookimpl
def veil_register_algorithms():
    return [DPTable]
