"""Compare Veil's local recoding (docs/reference.md#local-recoding) with ARX's, run live on ARX's own
adult data.

ARX is not part of Veil: it is built from its source outside the repository, and a small Java
runner (also outside) runs the k-anonymity cases of ARX's TestAnonymizationLocalRecoding on
``data/adult.csv`` — the eight attributes other than occupation quasi-identifiers under ARX's
hierarchies, suppression limit 100 %, ARX's loss with g/s factor 0.05, then
``result.optimizeIterative(output, 0.05, 100, 0.05)`` — and writes every output record
(docs/reference.md gives the commands). Veil runs ``local-recoding`` with the same settings
(``metric=arx-loss,gs_factor=0.05,adaption=0.05,passes=100,suppression=1.0``) and the two outputs
are compared record by record on the quasi-identifiers. Usage:

    .venv/bin/python scripts/compare_arx_local_recoding.py --arx ARX_CHECKOUT --runner RUNNER_CLASSES [--k 5]

It prints each tool's first pass and the records left suppressed, Veil's passes, and how many
records agree in every quasi-identifier.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry

SETTINGS = "metric=arx-loss,gs_factor=0.05,adaption=0.05,passes=100,suppression=1.0"


def run_arx(arx: Path, runner: Path, k: int, out: Path) -> tuple[str, pd.DataFrame]:
    classpath = f"{runner}:build:{(arx / 'classpath.txt').read_text().strip()}"
    done = subprocess.run(
        ["java", "-cp", classpath, "Runner", "local", str(k), str(out)], cwd=arx, check=True, capture_output=True
    )
    first = out.read_text().splitlines()[0].removeprefix("# ")
    return first + "; " + done.stderr.decode().strip(), pd.read_csv(out, sep="\t", skiprows=1, dtype=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arx", type=Path, required=True, help="ARX's source checkout, built (build/, classpath.txt)")
    parser.add_argument("--runner", type=Path, required=True, help="the compiled runner's class folder")
    parser.add_argument("--k", type=int, default=5, help="k of k-anonymity (ARX's cases: 5 and 100)")
    args = parser.parse_args()
    arx, runner = args.arx.resolve(), args.runner.resolve()

    with tempfile.TemporaryDirectory() as tmp:
        said, theirs = run_arx(arx, runner, args.k, Path(tmp) / "out.tsv")
    print(f"ARX: {said}")
    data = pd.read_csv(arx / "data" / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    quasi = [c for c in data.columns if c != "occupation"]
    table = Table.from_frame(data, roles={**{c: Role.QUASI_IDENTIFIER for c in quasi}, "occupation": Role.INSENSITIVE})
    for c in quasi:
        table = table.with_hierarchy(c, Hierarchy.from_arx_csv(arx / "data" / f"adult_hierarchy_{c}.csv", name=c))
    spec = RunSpec(PluginCall.parse(f"local-recoding:{SETTINGS}"), [PluginCall.parse(f"k-anonymity:k={args.k}")])
    start = time.perf_counter()
    release = execute(make_registry(), table, spec).release
    seconds = time.perf_counter() - start
    passes = release.details["passes"]
    print(f"Veil: {len(passes)} passes (tries) in {seconds:.0f} s")
    for p in passes:
        if p["published"]:
            levels = ",".join(f"{c}={v}" for c, v in p["levels"].items())
            print(f"  factor {p['gs_factor']:.2f}: {p['published']:,} of {p['records']:,} published at {levels}")
    ours = release.frame[quasi].astype(str).to_numpy()
    same = ours == theirs[quasi].to_numpy()
    left_arx = int((theirs["suppressed"] == "1").sum())
    left_veil = int((ours == "*").all(axis=1).sum())
    print(f"records left suppressed: ARX {left_arx}, Veil {left_veil}")
    print(f"records equal in every quasi-identifier: {int(same.all(axis=1).sum()):,} of {len(ours):,}")
    for c, n in zip(quasi, same.sum(axis=0)):
        if n < len(ours):
            print(f"  {c}: {int(n):,} equal")
    differing = np.flatnonzero(~same.all(axis=1))
    if len(differing):
        i = differing[0]
        print(f"  e.g. record {i}: ARX {list(theirs[quasi].iloc[i])}, Veil {list(ours[i])}")


if __name__ == "__main__":
    main()
