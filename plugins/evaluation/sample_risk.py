"""Risk as statisticians measure it on sample microdata, as metrics of any release (and of the data
before a method): individual risk (Benedetti and Franconi 1998) with survey weights, global risk,
expected re-identifications, household risk (Franconi and Polettini 2004), sample uniques, and SUDA's
DIS score (Elliot, Manning and Ford 2002). Definitions: docs/reference.md, "Risk on sample microdata".

The keys are the release's values on the quasi-identifiers the user marked; the weights are the
column marked ``weight`` (in the release, or the input's when the release keeps the input's records in
order). The households are the household ids the release itself holds (``Release.household``: only
when the user agreed to release them), so the figure is what ``veil risk`` finds on the written
release; a release without them has no household risk (NaN): no record of it can be joined to
its household. A blank — missing, or a value a method suppressed — matches any value unless
``blanks=value``.
"""

from __future__ import annotations

from dataclasses import dataclass


from veil.engine import (
    CHEAP,
    EXPENSIVE,
    TABLE,
    MemoryCost,
    Metric,
    Role,
    hookimpl,
    is_suppressed,
    param,
    sample_risk,
    suda,
)


@dataclass(frozen=True)
class RiskParams:
    method: str = param(
        "approx",
        choices=("approx", "exact"),
        help="individual risk for keys seen 3 or more times: sdcMicro's approximation or the exact series",
    )
    blanks: str = param(
        "any",
        choices=("any", "value"),
        help="a blank (missing or suppressed) matches any value ('any', as sdcMicro counts) or is a value of its own",
    )


def _column(original, release, role: Role):
    """The values of the column ``original`` marks with ``role``, aligned with the release's records
    (None where no column has the role, or the release's records are not the input's in order)."""
    schema = getattr(original, "schema", None)
    column = next(iter(schema.by_role(role)), None) if schema is not None else None
    if column is None:
        return None, None
    if column in release.frame.columns:
        return column, release.frame
    if release.n_rows == original.n_rows:
        return column, original.frame
    return None, None


def _quasi(original, release) -> list[str]:
    schema = getattr(original, "schema", None)
    declared = schema.by_role(Role.QUASI_IDENTIFIER) if schema is not None else []
    qis = [c for c in declared if c in release.frame.columns]
    return qis or [c for c in release.quasi_identifiers if c in release.frame.columns]


def record_risks(original, release, params):
    """The release's :class:`~veil.engine.SampleRisk` (None for a release without records or keys)."""
    quasi = _quasi(original, release)
    if release.n_rows == 0 or not quasi:
        return None
    weight, weights_frame = _column(original, release, Role.WEIGHT)
    household = release.household if release.household in release.frame.columns else None
    # a cell written * (suppressed) is a blank, as the report and `veil risk` read the written file
    frame = release.frame[quasi].apply(lambda s: s.mask(is_suppressed(s)))
    if weight is not None:
        frame["__weight__"] = weights_frame[weight].to_numpy()
    if household is not None:
        frame["__household__"] = release.frame[household].to_numpy()
    return sample_risk(
        frame,
        quasi,
        weight="__weight__" if weight is not None else None,
        household="__household__" if household is not None else None,
        blanks_match_any=params.blanks == "any",
        method=params.method,
    )


class _SampleRisk(Metric):
    cost = CHEAP
    category = "privacy"
    higher_is_better = False
    accepts = (TABLE,)
    Params = RiskParams
    paper = "benedetti-franconi-1998"
    # the keys' codes, fk, Fk, the risks and, with blanks, one join per pair of blank patterns
    memory_cost = MemoryCost(per_record=96.0, per_cell=16.0)

    def protocol(self, params) -> str:
        return f"individual risk ({params.method}); " + (
            "a blank matches any value" if params.blanks == "any" else "a blank is a value of its own"
        )

    def compute(self, original, release, params, ctx):
        risk = record_risks(original, release, params)
        return float("nan") if risk is None else float(self.pick(risk))


class HighestIndividualRisk(_SampleRisk):
    name = "individual-risk-max"
    title = "Highest individual risk"
    description = (
        "The highest probability that a record is correctly re-identified, from its key's sample frequency "
        "and its weighted population estimate (Benedetti and Franconi; sdcMicro's indivRisk)."
    )

    def pick(self, risk):
        return risk.risk.max()


class GlobalRisk(_SampleRisk):
    name = "global-risk"
    title = "Global risk"
    description = "The mean individual risk over the records (sdcMicro's global risk)."

    def pick(self, risk):
        return risk.global_risk


class ExpectedReidentifications(_SampleRisk):
    name = "expected-reidentifications"
    title = "Expected re-identifications"
    description = "The sum of the records' individual risks: how many records an intruder is expected to re-identify."

    def pick(self, risk):
        return risk.expected_reidentifications


class HouseholdRisk(_SampleRisk):
    name = "household-risk"
    title = "Household risk"
    description = (
        "The mean over records of the chance that someone of the record's household is re-identified, "
        "1 − Π (1 − r) over its members (Franconi and Polettini); needs a column marked household, "
        "released with the user's agreement (a release without household ids has none)."
    )
    paper = "franconi-polettini-2004"
    needs_roles = (Role.HOUSEHOLD,)

    def pick(self, risk):
        return float("nan") if risk.household is None else risk.household_global


class SampleUniques(_SampleRisk):
    name = "sample-uniques"
    title = "Sample uniques"
    description = "The share of records whose key no other record shares (fk = 1)."

    def pick(self, risk):
        return risk.sample_uniques / len(risk.fk)


@dataclass(frozen=True)
class SudaParams:
    max_size: int = param(0, minimum=0, maximum=32, help="largest minimal sample unique searched (0: all columns)")
    dis_fraction: float = param(
        0.01, minimum=0.0001, maximum=1.0, help="the sampling fraction the DIS score assumes (sdcMicro's 0.01)"
    )


class HighestDisScore(Metric):
    name = "suda-dis-max"
    title = "Highest DIS-SUDA score"
    description = (
        "The highest DIS-SUDA score: a record's chance of being a population unique, from its minimal "
        "sample uniques (Elliot, Manning and Ford; sdcMicro's suda2)."
    )
    paper = "elliot-manning-ford-2002"
    cost = EXPENSIVE  # one grouping per combination of quasi-identifiers
    seconds_per_cell = 2e-6
    category = "privacy"
    higher_is_better = False
    accepts = (TABLE,)
    Params = SudaParams
    memory_cost = MemoryCost(per_record=512.0, per_cell=64.0)  # one boolean per record and combination in hand

    def compute(self, original, release, params, ctx):
        quasi = _quasi(original, release)
        if release.n_rows == 0 or not quasi:
            return float("nan")
        frame = release.frame[quasi].apply(lambda s: s.mask(is_suppressed(s)))  # * is a blank, as `veil risk` reads it
        result = suda(
            frame,
            quasi,
            max_size=params.max_size or None,
            dis_fraction=params.dis_fraction,
            check=ctx.check,
            progress=ctx.progress,
        )
        return float(result.dis.max())


@hookimpl
def veil_register_metrics():
    return [
        HighestIndividualRisk,
        GlobalRisk,
        ExpectedReidentifications,
        HouseholdRisk,
        SampleUniques,
        HighestDisScore,
    ]
