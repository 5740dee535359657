"""Compare Veil's aggregation functions (docs/reference.md#microaggregation) with ARX's
microaggregation, run live on ARX's own adult data.

ARX is not part of Veil: it is built from its source outside the repository, and a small Java
runner (also outside) runs ARX's TestMicroaggregation adult case — every attribute but age a
quasi-identifier under ARX's hierarchies, age aggregated inside each equivalence class by one of
ARX's ``MicroAggregationFunction`` s, 5-anonymity, suppression limit 100 %, ARX's loss with the rank
aggregate — and writes ARX's transformation and every output record (docs/reference.md gives the
commands). Veil then releases the same transformation (``global-recoding`` with ``levels=`` ARX's
levels) with age aggregated inside its groups by the function of the same name — the run's
``aggregates`` (``veil run --aggregate age=FUNCTION``), exactly as a user asks for it — and checks
that it suppresses the same records, forms the same groups and writes the same age. Usage:

    .venv/bin/python scripts/compare_arx_microaggregation.py --arx PATH_TO_BUILT_ARX --runner PATH_TO_RUNNER_CLASSES

For each function and each of ARX's types for age (integer, decimal) it prints the records
compared and how many agree: numbers within 1e-9 (ARX's integer type rounds half up, so Veil's
value is rounded the same way before comparing), intervals and sets as the values they hold.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry

FUNCTIONS = ("mean", "geometric-mean", "median", "mode", "interval", "set")
TYPES = ("integer", "decimal")


def run_arx(arx: Path, runner: Path, function: str, kind: str, out: Path) -> tuple[dict, pd.DataFrame]:
    classpath = f"{runner}:build:{(arx / 'classpath.txt').read_text().strip()}"
    subprocess.run(["java", "-cp", classpath, "Runner", "micro", function, kind, str(out)], cwd=arx, check=True)
    first = out.read_text().splitlines()[0]
    levels = dict(item.split("=") for item in first.removeprefix("# levels ").split(","))
    return {c: int(v) for c, v in levels.items()}, pd.read_csv(out, sep="\t", skiprows=1, dtype=str)


def veil_release(table: Table, levels: dict, function: str, registry) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Veil's global recoding at ARX's levels with age aggregated inside its groups (the run's
    ``aggregates``): each record's released age, whether it was suppressed, and its group."""
    text = ";".join(f"{c}:{v}" for c, v in levels.items())
    call = PluginCall("global-recoding", {"levels": text, "suppression": 1.0})
    spec = RunSpec(call, models=[PluginCall.parse("k-anonymity:k=5")], metrics=(), aggregates={"age": function})
    frame = execute(registry, table, spec).release.frame
    suppressed = np.all([frame[c].astype(str).to_numpy() == "*" for c in levels], axis=0)
    groups = pd.factorize(frame[list(levels)].astype(str).agg("\x1f".join, axis=1))[0]
    return frame["age"].to_numpy(), suppressed, np.where(suppressed, -1, groups)


def round_half_up(x: float) -> float:
    return math.floor(x + 0.5)


def members(text: str) -> tuple[str, ...]:
    """An interval's ends or a set's members, as ARX and Veil write them (a single value alone)."""
    text = text.strip()
    if text[:1] in "[{":
        return tuple(v.strip() for v in text[1:-1].split(","))
    return (text,)


def agree(function: str, kind: str, arx_value: str, veil_value) -> bool:
    if function in ("interval", "set"):
        ours, theirs = members(str(veil_value)), members(arx_value)
        if function == "interval" and len(ours) == 1:
            ours = ours * 2  # Veil writes a one-value interval as the value
        return sorted(map(float, ours)) == sorted(map(float, theirs))
    value = float(veil_value)
    if kind == "integer":
        value = round_half_up(value)
    return abs(value - float(arx_value)) <= 1e-9


def explain(function: str, kind: str, age: np.ndarray, groups: np.ndarray, differing, theirs) -> None:
    """Why the records differ, checked record by record: the geometric mean ARX computes (of x + 1,
    minus 1), or ARX's choice among a group's most frequent values."""
    if function == "geometric-mean":
        shifted = {g: math.exp(np.log(age[groups == g] + 1.0).mean()) - 1.0 for g in np.unique(groups[differing])}
        ok = sum(agree("mean", kind, theirs[i], shifted[groups[i]]) for i in differing)
        print(f"{'':>16}as ARX computes it (the geometric mean of age + 1, minus 1): {ok:,} of these agree")
    if function == "mode":
        ok = 0
        for i in differing:
            values, counts = np.unique(age[groups == groups[i]], return_counts=True)
            ok += float(theirs[i]) in set(values[counts == counts.max()].astype(float))
        print(f"{'':>16}ARX's value is one of the group's most frequent (a tie Veil breaks by the smallest): {ok:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arx", type=Path, required=True, help="ARX's source checkout, built (build/, classpath.txt)")
    parser.add_argument("--runner", type=Path, required=True, help="the compiled runner's class folder")
    parser.add_argument("--functions", default=",".join(FUNCTIONS), help="comma-separated, of " + ", ".join(FUNCTIONS))
    args = parser.parse_args()
    arx, runner = args.arx.resolve(), args.runner.resolve()
    registry = make_registry()

    data = pd.read_csv(arx / "data" / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    data["age"] = data["age"].astype(int)
    quasi = [c for c in data.columns if c != "age"]
    table = Table.from_frame(data, roles={c: Role.QUASI_IDENTIFIER for c in data.columns})
    for c in quasi:
        table = table.with_hierarchy(c, Hierarchy.from_arx_csv(arx / "data" / f"adult_hierarchy_{c}.csv", name=c))
    print(f"ARX's adult: {len(data):,} records; age aggregated inside the classes of {', '.join(quasi)}")
    for function in args.functions.split(","):
        for kind in TYPES:
            with tempfile.TemporaryDirectory() as tmp:
                levels, out = run_arx(arx, runner, function, kind, Path(tmp) / "out.tsv")
            key = ",".join(f"{c}={v}" for c, v in levels.items())
            ours, suppressed, groups = veil_release(table, {c: levels[c] for c in quasi}, function, registry)
            arx_suppressed = out["suppressed"].to_numpy() == "1"
            same_suppressed = bool(np.array_equal(arx_suppressed, suppressed))
            kept = ~arx_suppressed
            arx_keys = pd.factorize(out.loc[kept, quasi].agg("\x1f".join, axis=1))[0]
            same_groups = bool(np.array_equal(arx_keys, pd.factorize(groups[kept])[0]))
            theirs = out["age"].to_numpy()
            starred = bool((ours[suppressed].astype(str) == "*").all())
            ok = np.array([agree(function, kind, theirs[i], ours[i]) for i in np.flatnonzero(kept)])
            differing = np.flatnonzero(kept)[~ok]
            print(
                f"{function:>14} {kind:<7} levels {key}: suppressed alike {same_suppressed} "
                f"({int(arx_suppressed.sum()):,}, Veil's age * on each: {starred}), groups alike {same_groups}; "
                f"{int(ok.sum()):,} of {len(ok):,} records agree"
            )
            if len(differing):
                g = groups[differing]
                print(
                    f"{'':>16}{len(differing):,} differ in {len(np.unique(g)):,} groups, e.g. record {differing[0]}: "
                    f"ARX {theirs[differing[0]]}, Veil {ours[differing[0]]}"
                )
                explain(function, kind, data["age"].to_numpy(), groups, differing, theirs)
            if function == "set":
                same_text = sum(str(ours[i]) == theirs[i] for i in np.flatnonzero(kept))
                print(f"{'':>16}written identically (members in the same order): {same_text:,}")
            if arx_suppressed.any():
                print(f"{'':>16}ARX writes the suppressed records' age as {sorted(set(theirs[arx_suppressed]))}")


if __name__ == "__main__":
    main()
