"""Global recoding's heuristic searches against ARX's run live on ARX's adult, in one run
(docs/reference.md#heuristic-search).

ARX is not a dependency of Veil and none of it is in this repository: it is built from its source
outside, with a small Java runner beside it (docs/reference.md#dp-table-safepub says how). For each
of the adult cases of ARX's ``TestAnonymizationHeuristic`` (Lightning, ``BEST_EFFORT_BOTTOM_UP``) and
``TestAnonymizationGenetic`` (``BEST_EFFORT_GENETIC``), both at ARX's budget of 1,000 checked
transformations, this runs ARX (the genetic search with its fixed generator, which gives the test's
recorded value, and ``--repeats`` times with a random one), Veil's ``search=heuristic`` and
``search=genetic`` (seeds 1 … ``--repeats``) at ``budget=1000``, and the optimal searches of both for
reference. Both count the same unit: a transformation whose classes were computed and judged (ARX's
``TransformationChecker.check``, Veil's ``Walker.node``), the bottom included.

Each side's transformation is then measured by the other's metric too: ARX's at Veil's levels (ARX
run with each column's minimum and maximum level set to them) and Veil's at ARX's (``levels=``).
ARX's loss is Veil's ``arx-loss`` (``gs_factor`` ARX's factor); ARX's non-monotonic entropy
(``createPrecomputedEntropyMetric(0.1)``: 0.1 is the share of distinct values under which ARX
precomputes it, not a factor) charges a suppressed record otherwise than Veil's ``entropy``, so
there the two searches optimise different functions and each transformation is shown under both.

    .venv/bin/python scripts/compare_arx_heuristic.py --arx /work/ext/arx --runner /work/ext/arx-dp/out [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from compare_arx_safepub import QIS, adult, arx_lines

from veil.engine import BadInput, PluginCall, RunSpec, Table, execute, make_registry

REGISTRY = make_registry()
BUDGET = 1000
# ARX's adult cases (the same six in both tests): (k, suppression limit, ARX's metric, Veil's metric and
# factor, practical monotonicity, Lightning's recorded value, the genetic search's recorded value)
CASES = [
    (5, 1.0, "loss", ("arx-loss", 0.5), False, 0.22041192847984292, 0.22041192847984292),
    (100, 0.04, "entropy", ("entropy", 0.5), False, 400196.319223464, 383803.4034066361),
    (5, 1.0, "loss0.1", ("arx-loss", 0.1), False, 0.09257312971977383, 0.09257312971977383),
    (100, 1.0, "entropy-nm", ("entropy", 0.5), False, 377248.23689620313, 359649.67365904135),
    (5, 0.04, "loss", ("arx-loss", 0.5), True, 0.26611081915757495, 0.26611081915757495),
    (100, 1.0, "entropy-nm", ("entropy", 0.5), True, 377248.23689620313, 359649.67365904135),
]


def levels_text(levels: dict) -> str:
    return ",".join(f"{q}:{levels[q]}" for q in QIS)


def short(levels_arg: str) -> str:
    """ARX's ``attr:level,…`` as the digits in ARX's column order."""
    return "" if levels_arg == "none" else "".join(x.split(":")[1] for x in levels_arg.split(","))


def veil(table: Table, k: int, suppression: float, metric: tuple, seed: int = 1, **extra) -> dict:
    name, factor = metric
    values = {"suppression": suppression, "metric": name, **extra}
    if name == "arx-loss":
        values["gs_factor"] = factor
    model = [PluginCall.parse(f"k-anonymity:k={k}")]
    spec = RunSpec(PluginCall("global-recoding", values), models=model, metrics=(), seed=seed)
    gen = execute(REGISTRY, table, spec).release.details["generalisation"]
    return {
        "levels": levels_text(gen["levels"]),
        "value": float(gen["loss"]),
        "checked": int(gen["searched_nodes"]),
        "proven": bool(gen.get("proven_optimal", True)),
    }


def veil_at(table: Table, k: int, suppression: float, metric: tuple, levels_arg: str) -> str:
    if levels_arg == "none":
        return "—"
    levels = dict(x.split(":") for x in levels_arg.split(","))
    try:
        return f"{veil(table, k, suppression, metric, levels=';'.join(f'{q}:{levels[q]}' for q in QIS))['value']:.6g}"
    except BadInput as exc:  # no solution at those levels under Veil's judgement
        return f"refused ({str(exc)[:40]})"


def fmt(x: float) -> str:
    return f"{x:.6g}"


def arx_value(text: str) -> str:
    return "none" if text == "none" else fmt(float(text))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arx", type=Path, default=Path("/work/ext/arx"), help="ARX's built source tree")
    ap.add_argument("--runner", type=Path, default=Path("/work/ext/arx-dp/out"), help="the compiled Runner")
    ap.add_argument("--repeats", type=int, default=5, help="random runs of each genetic search")
    ap.add_argument("--cases", default="0,1,2,3,4,5", help="which of ARX's adult cases, by index")
    args = ap.parse_args()
    table = adult(args.arx / "data")
    start = time.monotonic()
    print(f"\n### ARX's heuristic test cases on adult, budget {BUDGET:,} checked transformations\n")
    print(
        "| case (k, limit, metric) | search | ARX's test value | ARX now: levels, value, checked | "
        "Veil: levels, value, checked | ARX's metric at Veil's levels | Veil's metric at ARX's levels | "
        "optimum (ARX / Veil) |"
    )
    print("|---|---|---:|---|---|---:|---:|---|")
    for index in map(int, args.cases.split(",")):
        k, supp, arx_metric, metric, practical, lightning_value, genetic_value = CASES[index]
        flags = ["practical"] if practical else []
        common = (k, supp, BUDGET)
        arx_opt = arx_lines(args.arx, args.runner, "search", "optimal", arx_metric, *common, 1, *flags)[0]
        veil_opt = veil(table, k, supp, metric, search="optimal")
        optimum = (
            f"{short(arx_opt['levels'])} {arx_value(arx_opt['value'])} / "
            f"{short(veil_opt['levels'])} {fmt(veil_opt['value'])}"
        )
        lightning = arx_lines(args.arx, args.runner, "search", "lightning", arx_metric, *common, 1, *flags)[0]
        fixed = arx_lines(args.arx, args.runner, "search", "genetic", arx_metric, *common, 1, *flags)[0]
        randomised = arx_lines(
            args.arx, args.runner, "search", "genetic", arx_metric, *common, args.repeats, *flags, "random"
        )
        best_first = veil(table, k, supp, metric, search="heuristic", budget=BUDGET)
        genetic = [
            veil(table, k, supp, metric, seed=s, search="genetic", budget=BUDGET) for s in range(1, args.repeats + 1)
        ]
        asked = sorted({r["levels"] for r in [best_first, *genetic]})
        arx_at = {r["asked"]: r["value"] for r in arx_lines(args.arx, args.runner, "eval", arx_metric, k, supp, *asked)}
        label = f"{index}: k = {k}, {supp:g}, {arx_metric}{' (practical)' if practical else ''}"
        rows = [
            ("Lightning / best-first", lightning_value, [lightning], [best_first]),
            ("genetic, ARX's fixed generator / seed 1", genetic_value, [fixed], genetic[:1]),
            (f"genetic, {args.repeats} random / seeds 1 … {args.repeats}", None, randomised, genetic),
        ]
        for name, recorded, arx_runs, veil_runs in rows:
            arx_cell = "; ".join(
                f"{short(r['levels'])} {arx_value(r['value'])} ({int(r['checked']):,})" for r in arx_runs
            )
            veil_cell = "; ".join(
                f"{short(r['levels'])} {fmt(r['value'])} ({r['checked']:,}{', proven' if r['proven'] else ''})"
                for r in veil_runs
            )
            if len(veil_runs) > 1:
                arx_values = [float(r["value"]) for r in arx_runs if r["value"] != "none"]
                veil_values = [r["value"] for r in veil_runs]
                arx_cell = f"mean {statistics.fmean(arx_values):.6g}, best {min(arx_values):.6g}: " + arx_cell
                veil_cell = f"mean {statistics.fmean(veil_values):.6g}, best {min(veil_values):.6g}: " + veil_cell
            at_veil = "; ".join(arx_value(arx_at.get(r["levels"], "none")) for r in veil_runs)
            at_arx = "; ".join(veil_at(table, k, supp, metric, r["levels"]) for r in arx_runs)
            print(
                f"| {label} | {name} | {'' if recorded is None else fmt(recorded)} | {arx_cell} | {veil_cell} | "
                f"{at_veil} | {at_arx} | {optimum} |",
                flush=True,
            )
    print(f"\n({time.monotonic() - start:.0f} s)")


if __name__ == "__main__":
    main()
