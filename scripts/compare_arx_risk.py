"""Compare Veil's ranking of quasi-identifier combinations (distinction and separation,
docs/reference.md#risk-on-sample-microdata) with ARX's, run live on ARX's own adult data.

ARX is not part of Veil: it is built from its source outside the repository, and a small Java
runner (also outside) calls ``data.getHandle().getRiskEstimator(null).getAttributeRisks()`` with
every attribute of ``data/adult.csv`` a quasi-identifier, as ARX's TestRiskQuasiIdentifiers does,
and writes each combination's distinction and separation in ARX's order (docs/reference.md gives
the commands). Usage:

    .venv/bin/python scripts/compare_arx_risk.py --arx PATH_TO_BUILT_ARX --runner PATH_TO_RUNNER_CLASSES

It prints the number of combinations each tool ranks, the largest absolute difference of each
measure over all of them, and whether the two orders agree: ARX's (by size, then distinction,
then separation, both ascending, then the names) applied to Veil's figures, and Veil's (the most
separating first, then the most distinct, then the fewest columns; equal figures by the columns'
positions) applied to ARX's.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

from veil.engine import rank_combinations


def run_arx(arx: Path, runner: Path, out: Path) -> pd.DataFrame:
    classpath = f"{runner}:build:{(arx / 'classpath.txt').read_text().strip()}"
    subprocess.run(["java", "-cp", classpath, "Runner", "risk", str(out)], cwd=arx, check=True)
    return pd.read_csv(out, sep="\t")


def arx_key(columns: tuple[str, ...], distinction: float, separation: float, order: list[str]):
    """ARX's comparator (RiskModelAttributes.QuasiIdentifierRisk.compareTo): size, distinction,
    separation, then the list's text, its columns in the data's order."""
    named = sorted(columns, key=order.index)
    return (len(columns), distinction, separation, "[" + ", ".join(named) + "]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arx", type=Path, required=True, help="ARX's source checkout, built (build/, classpath.txt)")
    parser.add_argument("--runner", type=Path, required=True, help="the compiled runner's class folder")
    args = parser.parse_args()
    arx, runner = args.arx.resolve(), args.runner.resolve()

    with tempfile.TemporaryDirectory() as tmp:
        theirs = run_arx(arx, runner, Path(tmp) / "risk.tsv")
    data = pd.read_csv(arx / "data" / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    quasi = list(data.columns)
    start = time.perf_counter()
    ours = rank_combinations(data, quasi)
    seconds = time.perf_counter() - start

    arx_rows = {
        tuple(sorted(r.columns.split("|"), key=quasi.index)): (r.distinction, r.separation) for r in theirs.itertuples()
    }
    veil_rows = {tuple(sorted(c.columns, key=quasi.index)): (c.distinction, c.separation) for c in ours}
    print(f"ARX's adult: {len(data):,} records, {len(quasi)} attributes, all quasi-identifiers")
    print(f"combinations: ARX {len(arx_rows)}, Veil {len(veil_rows)} (Veil in {seconds:.1f} s)")
    if set(arx_rows) != set(veil_rows):
        print(f"combinations only one tool ranks: {sorted(set(arx_rows) ^ set(veil_rows))[:5]}")
        return
    d_diff = max(abs(arx_rows[c][0] - veil_rows[c][0]) for c in arx_rows)
    s_diff = max(abs(arx_rows[c][1] - veil_rows[c][1]) for c in arx_rows)
    print(f"largest |difference|: distinction {d_diff:.3g}, separation {s_diff:.3g}")

    arx_order = [tuple(sorted(r.columns.split("|"), key=quasi.index)) for r in theirs.itertuples()]
    veil_in_arx_order = sorted(veil_rows, key=lambda c: arx_key(c, *veil_rows[c], quasi))
    print(f"ARX's order applied to Veil's figures: {'identical' if veil_in_arx_order == arx_order else 'different'}")

    def veil_key(rows):  # Veil's order, ties (equal figures) broken by the columns' positions
        return lambda c: (-rows[c][1], -rows[c][0], len(c), [quasi.index(x) for x in c])

    veil_order = sorted(veil_rows, key=veil_key(veil_rows))
    arx_in_veil_order = sorted(arx_rows, key=veil_key(arx_rows))
    print(f"Veil's order applied to ARX's figures: {'identical' if arx_in_veil_order == veil_order else 'different'}")
    if arx_in_veil_order != veil_order:
        moved = sum(a != b for a, b in zip(arx_in_veil_order, veil_order))
        print(f"  {moved} places differ")
    top = ours[0]
    print(
        f"most separating: {', '.join(top.columns)}: separation {top.separation:.6f}, distinction {top.distinction:.6f}"
    )


if __name__ == "__main__":
    main()
