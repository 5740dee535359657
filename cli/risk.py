"""``veil risk``: the risk picture of a table or of an export folder's release, as statisticians measure
it (docs/reference.md, "Risk on sample microdata"): each record's key frequency fk and weighted
population estimate Fk, its individual and household risk, their distribution, global risk and
expected re-identifications, the ranking of the combinations of quasi-identifiers by separation and
distinction, SUDA's scores and contributions, and the share of the population unique on the
quasi-identifiers under each estimator (Pitman, Zayatz, SNB, Dankar et al.'s rule) at the sampling
fraction given, or the one the survey weights imply. ``--json`` gives every per-record figure in the
table's row order."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from .arguments import DataOptions, data_options, positive_int, source
from .common import EXIT_OK, Progress, Stop

NAME = "risk"
HELP = (
    "the risk of a table or a release: individual, household and global risk, SUDA, the columns that single people out"
)

LARGE_RANKING = 5_000  # more combinations than this need --max-size (the count is said first)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a data file, or an export folder (its release, roles from its manifest)")
    data_options(p)
    p.add_argument(
        "--blanks",
        choices=("any", "value"),
        default="any",
        help="a blank (missing or suppressed) matches any value ('any', as sdcMicro counts) or is a value of its own",
    )
    p.add_argument(
        "--method",
        choices=("approx", "exact"),
        default="approx",
        help="individual risk of keys seen 3 or more times: sdcMicro's approximation or the exact series",
    )
    p.add_argument(
        "--max-size",
        dest="max_size",
        type=positive_int,
        help="rank the combinations of at most this many quasi-identifiers (default: all, up to "
        f"{LARGE_RANKING:,} combinations)",
    )
    p.add_argument(
        "--suda-max-size",
        dest="suda_max_size",
        type=positive_int,
        help="largest minimal sample unique SUDA searches (default: all quasi-identifiers)",
    )
    p.add_argument("--no-suda", dest="no_suda", action="store_true", help="leave SUDA out")
    p.add_argument(
        "--sample-fraction",
        dest="sample_fraction",
        type=fraction,
        help="the share of the population the data holds, for the estimates of population uniqueness "
        "(default: records / the sum of the survey weights when a weight column is marked; none without)",
    )
    p.add_argument("--json", action="store_true", help="print JSON with every record's figures, in row order")


@dataclass(frozen=True)
class Options(DataOptions):
    """The flags of ``veil risk``."""

    path: str
    blanks: str
    method: str
    max_size: int | None
    suda_max_size: int | None
    no_suda: bool
    sample_fraction: float | None
    json: bool


def _table(options: Options, registry):
    """The frame and its roles: a data file read with the flags, or an export folder's release read
    back, its roles from the manifest (its household ids only where the user agreed to release them:
    the manifest then names the column, and the household risk is computed from it, as the
    ``household-risk`` metric and the report compute it)."""
    from veil.engine import BadInput, Role, suppressed_as_blank

    path = Path(options.path)
    if not path.is_dir():
        table = source(options, options.path).load(registry)
        if not hasattr(table, "schema"):
            raise BadInput(f"{options.path} is not a table: risk is measured on records with quasi-identifiers")
        schema = table.schema
        return table.frame, schema.by_role(Role.QUASI_IDENTIFIER), schema.weight, schema.household, None
    from veil.engine.release.manifest import read_manifest
    from veil.engine.release.verify import read_output

    manifest = read_manifest(path)
    frame = read_output(registry, manifest)
    quasi = options.quasi or list(manifest["roles"].get("quasi_identifiers") or [])
    schema = {e.get("name"): e.get("role") for e in (manifest.get("input") or {}).get("schema") or []}
    weight = options.weight or next((c for c, r in schema.items() if r == Role.WEIGHT.value), None)
    household = options.household or manifest["roles"].get("household")
    household = household if household in frame.columns else None
    note = None
    if household is None and any(r == Role.HOUSEHOLD.value for r in schema.values()):
        note = (
            "the household id was not released (veil run --release-household releases it), so no record can "
            "be joined to its household: the release has no household risk"
        )
    missing = [c for c in quasi if c not in frame.columns]
    if missing:
        raise BadInput(f"the release has no column {missing[0]!r}")
    return suppressed_as_blank(frame, quasi), quasi, weight if weight in frame.columns else None, household, note


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a sampling fraction is a number above 0 and at most 1, not {text!r}"
        ) from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"a sampling fraction is a number above 0 and at most 1, not {text}")
    return value


def _uniqueness(frame, quasi, weight, given: float | None) -> dict:
    """Each estimator's share of population uniques from the classes of equal keys (a blank a value
    of its own, as ARX counts classes), at the fraction given or records / Σ weights."""
    from veil.engine import uniqueness_estimates, weights_of

    if given is not None:
        pi, source = given, "given"
    elif weight is not None:
        pi, source = min(1.0, len(frame) / float(weights_of(frame, weight).sum())), "records / the sum of the weights"
    else:
        return {"sampling_fraction": None, "source": "give --sample-fraction (no weight column)", "estimates": []}
    sizes = frame.groupby(list(quasi), dropna=False, sort=False, observed=True).size().to_numpy()
    return {
        "sampling_fraction": pi,
        "source": source,
        "estimates": [
            {"estimator": e.estimator, "share": _number(e.share), "uniques": _number(e.uniques), "used": e.used}
            for e in uniqueness_estimates(sizes, pi)
        ],
    }


def _number(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine import BadInput, combinations_count, rank_combinations, risk_histogram, sample_risk, suda

    frame, quasi, weight, household, note = _table(options, registry)
    if not quasi:
        raise BadInput(
            "risk needs quasi-identifiers: mark them with --quasi (an export folder's come from its manifest)"
        )
    risk = sample_risk(
        frame,
        quasi,
        weight=weight,
        household=household,
        blanks_match_any=options.blanks == "any",
        method=options.method,
    )
    count = combinations_count(len(quasi), options.max_size)
    if count > LARGE_RANKING and options.max_size is None:
        raise BadInput(
            f"ranking every combination of {len(quasi)} quasi-identifiers means {count:,} combinations; "
            f"give --max-size (e.g. --max-size 3: {combinations_count(len(quasi), 3):,})"
        )
    if not options.json:
        print(f"ranking {count:,} combinations of quasi-identifiers", file=sys.stderr)
    ranking = rank_combinations(frame, quasi, options.max_size)  # Ctrl+C interrupts it (cli/common.py)
    found = None
    if not options.no_suda:
        bar = Progress("SUDA")
        try:
            found = suda(frame, quasi, max_size=options.suda_max_size, progress=bar)
        finally:
            bar.close()
    summary = {
        "records": len(frame),
        "quasi_identifiers": quasi,
        "weight": weight,
        "household": household,
        "blanks": risk.blanks_words(),
        "method": options.method if weight else "1 / fk (no weights)",
        "sample_uniques": risk.sample_uniques,
        "keys_seen_twice": int((risk.fk == 2).sum()),
        "highest_risk": float(risk.risk.max()),
        "global_risk": risk.global_risk,
        "expected_reidentifications": risk.expected_reidentifications,
        "household_global_risk": risk.household_global,
        "household_expected_reidentifications": risk.household_expected,
        "risk_histogram": risk_histogram(risk.risk),
        "population_uniqueness": _uniqueness(frame, quasi, weight, options.sample_fraction),
        "note": note,
    }
    if options.json:
        records = {"fk": risk.fk.tolist(), "Fk": risk.Fk.tolist(), "risk": risk.risk.tolist()}
        if risk.household is not None:
            records["household_risk"] = risk.household.tolist()
        if found is not None:
            records["suda_score"] = found.score.tolist()
            records["dis_score"] = found.dis.tolist()
        body = {
            "summary": summary,
            "ranking": [
                {
                    "columns": list(c.columns),
                    "distinction": c.distinction,
                    "separation": c.separation,
                    "uniques": c.uniques,
                }
                for c in ranking
            ],
            "suda": None
            if found is None
            else {
                "max_size": found.max_size,
                "dis_fraction": found.dis_fraction,
                "records_with_msu": found.records_with_msu,
                "attribute_contributions": found.attribute_contribution,
                "value_contributions": {
                    c: {str(v): s for v, s in d.items()} for c, d in found.value_contribution.items()
                },
            },
            "records": records,
        }
        json.dump(body, sys.stdout, default=_number, allow_nan=False)
        print()
        return EXIT_OK
    _print_text(summary, ranking, found)
    return EXIT_OK


def _print_text(summary: dict, ranking, found) -> None:
    s = summary
    print(f"{s['records']:,} records; quasi-identifiers: {', '.join(s['quasi_identifiers'])}")
    print(f"weights: {s['weight'] or 'none (every record stands for itself)'}; {s['blanks']}")
    print(
        f"sample uniques (fk = 1): {s['sample_uniques']:,}; records whose key is seen twice: {s['keys_seen_twice']:,}"
    )
    print(
        f"individual risk ({s['method']}): highest {s['highest_risk']:.4g}, global {s['global_risk']:.4g}, "
        f"expected re-identifications {s['expected_reidentifications']:.2f}"
    )
    if s["household"]:
        print(
            f"household risk ({s['household']}): global {s['household_global_risk']:.4g}, expected "
            f"re-identifications {s['household_expected_reidentifications']:.2f}"
        )
    if s["note"]:
        print(f"note: {s['note']}")
    unique = s["population_uniqueness"]
    if unique["sampling_fraction"] is None:
        print(f"population uniques: {unique['source']}")
    else:
        print(f"population uniques (sampling fraction {unique['sampling_fraction']:.4g}, {unique['source']}):")
        for e in unique["estimates"]:
            if e["share"] is None:
                print(f"  {e['estimator']:<7} no estimate on these classes")
                continue
            chose = f" (chose {e['used']})" if e["estimator"] == "dankar" else ""
            share = f"{100 * e['share']:8.4f} % of the population"
            print(f"  {e['estimator']:<7} {share}, about {e['uniques']:,.0f} people{chose}")
    print("records by individual risk:")
    widest = max(b["records"] for b in s["risk_histogram"]) or 1
    for b in s["risk_histogram"]:
        bar = "█" * round(30 * b["records"] / widest)
        print(f"  ({b['from']:<5g}, {b['to']:<5g}] {b['records']:>8,} {bar}")
    print("combinations of quasi-identifiers, most separating first (top 10):")
    print(f"  {'separation':>10} {'distinction':>11} {'uniques':>8}  columns")
    for c in ranking[:10]:
        print(f"  {c.separation:>10.4f} {c.distinction:>11.4f} {c.uniques:>8,}  {', '.join(c.columns)}")
    if found is not None:
        print(
            f"SUDA (minimal sample uniques up to {found.max_size} columns): {found.records_with_msu:,} records "
            f"have one; highest DIS score {found.dis.max():.4g}"
        )
        print("  contribution of each quasi-identifier to the SUDA scores:")
        for column, share in sorted(found.attribute_contribution.items(), key=lambda kv: -kv[1]):
            print(f"  {share:>7.2f} %  {column}")
