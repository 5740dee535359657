"""Veil's ``dp-table`` (SafePub) against ARX run live on ARX's adult, in one run
(docs/reference.md#dp-table-safepub).

ARX is not a dependency of Veil and none of it is in this repository: it is built from its source
outside, with a small Java runner beside it (docs/reference.md says how). This script runs that
runner for each of ARX's ``TestAnonymizationDifferentialPrivacy`` cases on adult, once with ARX's
fixed generator (which must give the test's recorded value) and ``--repeats`` times with its secure
one, and Veil's ``dp-table`` at the same ε, δ and degree with seeds 1 … ``--repeats``, and prints
both distributions of the test's measure in markdown tables:

* data-independent: ARX's loss (``MetricMDNMLoss``, its default factor 0.5: a kept record costs
  the share of each column's domain its value covers, a suppressed one 1; each column's sum
  normalised on the *sampled* records, the columns aggregated by the geometric mean), measured here
  from Veil's written release (:func:`arx_loss`);
* data-dependent: the released transformation's score divided by its sensitivity, which both
  report (Veil's ``chosen_score / sensitivity``).

It also applies Veil's generalisation and suppression (``global-recoding`` at the degree's levels,
k-anonymity with ARX's k, everything suppressible, ``metric=arx-loss``) to ARX's own sample, drawn
here with Java's ``Random(0xDEADBEEF)`` as ARX's fixed generator draws it, to show that once the
sample is the same the value is the same.

    .venv/bin/python scripts/compare_arx_safepub.py --arx /work/ext/arx --runner /work/ext/arx-dp/out \\
        [--repeats 10] [--part independent|dependent|all]
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import time
from pathlib import Path

import pandas as pd

from veil.engine import SUPPRESSED, Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry

REGISTRY = make_registry()
QIS = (  # ARX's order of its adult's quasi-identifiers (the order its transformations are written in)
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)
DEGREES = {
    "LOW": "low",
    "LOW_MEDIUM": "low-medium",
    "MEDIUM": "medium",
    "MEDIUM_HIGH": "medium-high",
    "HIGH": "high",
}
LN2, LN3 = math.log(2), math.log(3)
# ARX's TestAnonymizationDifferentialPrivacy on adult: (ε, δ, degree, recorded loss)
INDEPENDENT = [
    (2.0, 1e-5, "LOW_MEDIUM", 0.6820705793543056),
    (1.5, 1e-6, "HIGH", 0.8112222411559193),
    (LN2, 1e-7, "LOW_MEDIUM", 0.7437618217405468),
    (LN3, 1e-8, "MEDIUM", 0.6092780386290699),
    (2.0, 1e-5, "MEDIUM_HIGH", 0.5968589299712612),
    (1.5, 1e-6, "LOW_MEDIUM", 0.6856395441402736),
    (0.01, 1e-9, "LOW_MEDIUM", 0.9999999999999989),
]
# data-dependent: (ARX's metric, Veil's score, steps, recorded score / sensitivity); ε = 2, search budget 1, δ = 10⁻⁵
# (ARX's test has each score at 10 steps too: only loss's is run here, for the time a run takes)
DEPENDENT = [
    ("loss", "loss", 10, -387.20969001288375),
    ("loss", "loss", 100, -364.91072721704967),
    ("precision", "precision", 100, -349.6703096539162),
    ("entropy-dp", "entropy", 100, -337.4125485059108),
    ("aecs", "average-class-size", 100, 88.0),
    ("discernibility-dp", "discernibility", 100, -184.58604046896227),
]


# ------------------------------------------------------------------------------------------ ARX
def arx_lines(arx: Path, runner: Path, *args) -> list[dict]:
    """Run the Java runner (from ARX's folder, for its ./data paths) and parse its ``key=value`` lines."""
    classpath = ":".join([str(runner), str(arx / "build"), (arx / "classpath.txt").read_text().strip()])
    done = subprocess.run(
        ["java", "-cp", classpath, "Runner", *map(str, args)],
        cwd=arx,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in done.stdout.splitlines():
        if "value=" in line:
            rows.append(dict(part.split("=", 1) for part in line.split()))
    return rows


# ------------------------------------------------------------------------------------------ Veil
def adult(folder: Path) -> Table:
    """ARX's adult with its hierarchies, every attribute a quasi-identifier (as ARX's test has it)."""
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    table = Table.from_frame(frame, roles={q: Role.QUASI_IDENTIFIER for q in QIS})
    for q in QIS:
        table = table.with_hierarchy(q, Hierarchy.from_arx_csv(folder / f"adult_hierarchy_{q}.csv", name=q))
    return table


def arx_loss(frame: pd.DataFrame, levels: dict, table: Table) -> float:
    """ARX's loss (gs factor 0.5) of a written release: per column, a kept record costs the share of
    the hierarchy's leaves its value covers, a record written ``*`` throughout 1; the sum S_j over the
    n released records becomes v_j = max(0, (S_j − n/L_j) / (n − n/L_j)); Π (v_j + 1)^(1/d) − 1."""
    star = str(SUPPRESSED)
    suppressed = (frame[list(QIS)].astype(str) == star).all(axis=1)
    n, product = len(frame), 1.0
    for q in QIS:
        h = table.hierarchy(q)
        leaves = pd.Series(list(h.leaves), dtype=object)
        covered = h.generalise_series(leaves, levels[q]).value_counts()
        share = frame.loc[~suppressed, q].astype(str).map(covered.rename(str)).astype(float) / len(leaves)
        total = float(share.sum()) + float(suppressed.sum())
        least = n / len(leaves)
        v = max(0.0, (total - least) / (n - least)) if n > least else 0.0
        product *= (v + 1.0) ** (1.0 / len(QIS))
    return product - 1.0


def java_random_draws(n: int, seed: int = 0xDEADBEEF) -> list[float]:
    """``n`` draws of Java's ``new Random(seed).nextDouble()`` (the int literal sign-extended, as Java does)."""
    mask = (1 << 48) - 1
    seed = seed - (1 << 32) if seed >= 1 << 31 else seed
    state = (seed ^ 0x5DEECE66D) & mask

    def nxt(bits: int) -> int:
        nonlocal state
        state = (state * 0x5DEECE66D + 0xB) & mask
        return state >> (48 - bits)

    return [((nxt(26) << 27) + nxt(27)) * 2.0**-53 for _ in range(n)]


def veil_on_arx_sample(table: Table, beta: float, k: int, levels: dict) -> float:
    """Veil's generalisation and suppression at ``levels`` on ARX's fixed-generator sample: its arx-loss."""
    keep = [i for i, u in enumerate(java_random_draws(table.n_rows)) if u < beta]
    sample = table.take(keep)
    call = PluginCall(
        "global-recoding",
        {"levels": ";".join(f"{q}:{levels[q]}" for q in QIS), "suppression": 1.0, "metric": "arx-loss"},
    )
    spec = RunSpec(call, models=[PluginCall.parse(f"k-anonymity:k={k}")], metrics=())
    release = execute(REGISTRY, sample, spec).release
    measured = arx_loss(release.frame, levels, table)
    if abs(measured - release.details["generalisation"]["loss"]) > 1e-9:  # the file's value is the search's
        raise SystemExit(f"arx_loss {measured} differs from global recoding's {release.details['generalisation']}")
    return measured


def dp_table(table: Table, seed: int, **params) -> tuple:
    release = execute(REGISTRY, table, RunSpec(PluginCall("dp-table", params), seed=seed, metrics=())).release
    return release, release.details["dp"]


# ------------------------------------------------------------------------------------------ figures
def spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.4f} ± {sd:.4f} ({min(values):.4f} … {max(values):.4f})"


def verdict(arx: list[float], veil: list[float]) -> str:
    """Where Veil's mean lies in ARX's distribution, and the two means' difference over its standard error."""
    ma, mv = statistics.fmean(arx), statistics.fmean(veil)
    sa, sv = statistics.stdev(arx), statistics.stdev(veil)
    se = math.sqrt(sa**2 / len(arx) + sv**2 / len(veil))
    z = (mv - ma) / se if se > 0 else 0.0
    within = abs(mv - ma) <= 2 * sa if sa > 0 else mv == ma
    return f"{(mv - ma) / sa if sa else 0.0:+.2f} sd; z = {z:+.2f}; {'within' if within else 'OUTSIDE'} 2 sd"


def independent(args, table: Table) -> None:
    print("\n### Data-independent SafePub on adult: ARX's loss of the release\n")
    print(
        "| ε, δ, degree | k, β | ARX's test value | ARX fixed generator | Veil on ARX's sample | "
        "ARX, secure generator: mean ± sd (min … max) | Veil, seeds 1 … R | Veil's mean against ARX's | "
        "sampled ARX / Veil | suppressed ARX / Veil |"
    )
    print("|---|---|---:|---:|---:|---|---|---|---|---|")
    for epsilon, delta, degree, recorded in INDEPENDENT:
        fixed = arx_lines(args.arx, args.runner, "dp-independent", epsilon, delta, degree, 1, "deterministic")[0]
        live = arx_lines(args.arx, args.runner, "dp-independent", epsilon, delta, degree, args.repeats)
        levels = {q: int(x.split(":")[1]) for q, x in zip(QIS, fixed["levels"].split(","))}
        k, beta = int(fixed["k"]), float(fixed["beta"])
        on_sample = veil_on_arx_sample(table, beta, k, levels)
        veil, sampled, suppressed = [], [], []
        for seed in range(1, args.repeats + 1):
            release, dp = dp_table(table, seed, epsilon=epsilon, delta=delta, degree=DEGREES[degree])
            if dp["levels"] != levels or dp["k"] != k:
                raise SystemExit(f"Veil's levels {dp['levels']} or k {dp['k']} differ from ARX's {levels}, {k}")
            veil.append(arx_loss(release.frame, dp["levels"], table))
            sampled.append(dp["sampled"])
            suppressed.append(dp["suppressed"])
        arx = [float(r["value"]) for r in live]
        print(
            f"| {epsilon:.4g}, {delta:g}, {degree} | {k}, {beta:.4f} | {recorded:.6f} | {float(fixed['value']):.6f} | "
            f"{on_sample:.6f} | {spread(arx)} | {spread(veil)} | {verdict(arx, veil)} | "
            f"{statistics.fmean(int(r['sampled']) for r in live):,.0f} / {statistics.fmean(sampled):,.0f} | "
            f"{statistics.fmean(int(r['suppressed']) for r in live):,.0f} / {statistics.fmean(suppressed):,.0f} |",
            flush=True,
        )


def dependent(args, table: Table) -> None:
    print("\n### Data-dependent SafePub on adult (ε = 2, search budget 1, δ = 10⁻⁵): score / sensitivity\n")
    print(
        "| score, steps | ARX's test value | ARX fixed generator | ARX, secure generator: mean ± sd (min … max) | "
        "Veil, seeds 1 … R | Veil's mean against ARX's |"
    )
    print("|---|---:|---:|---|---|---|")
    for metric, score, steps, recorded in DEPENDENT:
        fixed = arx_lines(args.arx, args.runner, "dp-dependent", metric, 2, 1, 1e-5, steps, 1, "deterministic")[0]
        live = arx_lines(args.arx, args.runner, "dp-dependent", metric, 2, 1, 1e-5, steps, args.dependent_repeats)
        veil = []
        for seed in range(1, args.dependent_repeats + 1):
            _, dp = dp_table(
                table, seed, epsilon=2, delta=1e-5, mode="data-dependent", search_share=0.5, steps=steps, score=score
            )
            veil.append(dp["chosen_score"] / dp["sensitivity"])
        arx = [float(r["value"]) for r in live]
        print(
            f"| {score}, {steps} | {recorded:.4f} | {float(fixed['value']):.4f} | {spread(arx)} | {spread(veil)} | "
            f"{verdict(arx, veil)} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arx", type=Path, default=Path("/work/ext/arx"), help="ARX's built source tree")
    ap.add_argument("--runner", type=Path, default=Path("/work/ext/arx-dp/out"), help="the compiled Runner")
    ap.add_argument("--repeats", type=int, default=10, help="data-independent runs of each side")
    ap.add_argument("--dependent-repeats", type=int, default=5, help="data-dependent runs of each side")
    ap.add_argument("--part", choices=("independent", "dependent", "all"), default="all")
    args = ap.parse_args()
    table = adult(args.arx / "data")
    start = time.monotonic()
    if args.part in ("independent", "all"):
        independent(args, table)
    if args.part in ("dependent", "all"):
        dependent(args, table)
    print(f"\n({time.monotonic() - start:.0f} s)")


if __name__ == "__main__":
    main()
