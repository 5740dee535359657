"""A differentially private release of a table by SafePub's construction (docs/anonymisation.md#dp-table,
docs/reference.md#dp-table-safepub): each record sampled with probability β, every quasi-identifier
generalised to a level fixed in advance (data-independent), and every class smaller than k suppressed,
with (k, β) computed from (ε, δ) (Bild, Kuhn and Prasser, PoPETs 2018, on Li, Qardaji and Su 2012).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.engine import TABLE, Algorithm, BadInput, HierarchyUse, ReportFact, Role, grouping_columns, hookimpl, param

from ._lattice import attributes, classes_at, written_classes
from ._recoding import parse_levels, release
from ._safepub import DEGREES, level_of, parameters

PAPER = "safepub"


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


class DPTable(Algorithm):
    name = "dp-table"
    title = "Differentially private table (SafePub)"
    paper = PAPER
    description = (
        "Releases the table with an (ε, δ)-differential-privacy guarantee: each record is sampled with "
        "probability β, every quasi-identifier generalised to a level fixed in advance, and every class "
        "smaller than k suppressed, with k and β computed from ε and δ."
    )
    accepts = (TABLE,)
    needs_model = False
    randomised = True
    releases_sensitive = True
    Params = DPTableParams
    uses_hierarchies = HierarchyUse.ALL

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
        try:
            chosen = parameters(float(params.epsilon), float(params.delta))
        except ValueError as e:
            raise BadInput(f"dp-table: {e}") from None
        ctx.progress(0.0, chosen.sentence())
        n = data.n_rows
        draws = np.empty(n)
        for i in range(n):  # the run's noise source: the operating system's in a release, seeded in a study
            if i % 8192 == 0:
                ctx.check()
            draws[i] = ctx.noise.uniform()
        sample = data.take(np.flatnonzero(draws < chosen.beta))
        if sample.n_rows == 0:
            raise BadInput(f"dp-table: no record was sampled ({chosen.sentence()}); the table is too small")
        ctx.progress(0.3, "dp-table: generalising the sample")
        attrs = attributes(sample, qis, ctx.check)
        given = parse_levels(params.levels, qis) or {}
        levels = []
        for a in attrs:
            level = given.get(a.name, level_of(params.degree, a.height))
            if level > a.height:
                raise BadInput(f"levels: level {level} of {a.name!r} is above its hierarchy's height {a.height}")
            levels.append(level)
        table, record_class = classes_at(attrs, tuple(levels), None, 1)
        fail = table.size < chosen.k
        written = written_classes(table, fail, [a.star[l] for a, l in zip(attrs, levels)])
        suppressed = int(table.size[fail].sum())
        dp = {
            "epsilon": float(params.epsilon),
            "delta": float(params.delta),
            "k": int(chosen.k),
            "beta": float(chosen.beta),
            "mode": "data-independent",
            "degree": params.degree,
            "levels": {a.name: int(l) for a, l in zip(attrs, levels)},
            "records": int(n),
            "sampled": int(sample.n_rows),
            "suppressed": suppressed,
            "randomness": ctx.noise.describe(),
        }
        details = {
            "dp": dp,
            "epsilon_spent": float(params.epsilon),
            "noise_source": ctx.noise.describe(),
            "assumptions": [
                f"({params.epsilon:g}, {params.delta:g})-differential privacy holds for the mechanism (sampling, "
                "generalisation fixed in advance, suppression of classes smaller than k), as SafePub proves; "
                "the verdict is a property of the mechanism, not of the file"
            ],
        }
        out = release(sample, attrs, levels, None, table, record_class, written, suppressed, details)
        ctx.progress(1.0)
        return out


@hookimpl
def veil_register_algorithms():
    return [DPTable]
