"""Run sdcMicro's MDAV and local suppression beside Veil's on sdcMicro's own data
(docs/reference.md#microaggregation, docs/reference.md#local-suppression).

sdcMicro is installed from a checkout of its source into a library folder of its own, its Imports
from Debian's ``r-cran-*`` packages (docs/reference.md gives the commands); nothing of it is copied
here. Usage:

    .venv/bin/python scripts/compare_sdcmicro_cells.py --sdcmicro R_LIBRARY_WITH_SDCMICRO

MDAV: ``microaggregation(method = "mdav", aggr = k)`` on Tarragona's 13 columns and on testdata's
numeric columns (age, expend, income, savings) for k = 3, 5, 10; its groups (records given the same
centroid) against Veil's, group by group, and SSE/SST and IL1s of both releases (sdcMicro's IL1s is
its ``dUtility(method = "IL1s")``, a sum, divided by n·p). Local suppression: ``localSuppression``
on testdata's seven key variables for k = 2, 3, 5, without and with an importance order, and with
``combs``; the cells blanked per variable by each tool beside Veil's ``local-suppression`` on all
seven (under ``k-anonymity``) or, for ``combs``, under ``k-anonymity-subsets`` with ``combinations`` the
largest size; the smallest fk of each release on all seven keys counted with a blank matching any
value, and its smallest group on every combination of at most that many keys as Veil's model judges it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import (
    ANY_VALUE,
    GENERALISED_TABLE,
    PluginCall,
    Release,
    Role,
    RunSpec,
    Table,
    execute,
    frequencies,
    key_codes,
    bind_models,
    make_registry,
)
from veil.engine import il1s_loss
from veil.plugins.anonymisation._microaggregation import mdav, sse, sst, standardised

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "sdcmicro"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
NUMERIC = ["age", "expend", "income", "savings"]
KS = (3, 5, 10)
IMPORTANCE = [5, 4, 6, 2, 7, 1, 3]  # sdcMicro's importance of KEYS: 1 the most important, 7 blanked first
SUPPRESSION_RUNS = [(k, imp, None) for k in (2, 3, 5) for imp in (False, True)] + [
    (k, False, combs) for k in (3, 5) for combs in ("2", "3", "4", "5,3")
]

R_MDAV = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(TRUE)
data <- read.csv(args[1]); out <- args[2]; k <- as.integer(args[3])
m <- microaggregation(data, variables = colnames(data), aggr = k, method = "mdav")
write.csv(m$mx, file.path(out, "mdav.csv"), row.names = FALSE)
write.csv(data.frame(il1s = dUtility(data, m$mx, method = "IL1s")), file.path(out, "il1s.csv"), row.names = FALSE)
"""

R_SUPPRESSION = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(TRUE)
data <- read.csv(args[1]); out <- args[2]; k <- as.integer(args[3])
keys <- strsplit(args[4], ",")[[1]]
importance <- if (args[5] == "") NULL else as.integer(strsplit(args[5], ",")[[1]])
combs <- if (args[6] == "") NULL else as.integer(strsplit(args[6], ",")[[1]])
ls <- localSuppression(data, k = k, importance = importance, combs = combs, keyVars = keys)
write.csv(as.data.frame(ls$xAnon)[, keys], file.path(out, "suppressed.csv"), row.names = FALSE)
"""


def rscript(library: str, script: str, out: Path, *args: str) -> None:
    path = out / "run.R"
    path.write_text(script)
    subprocess.run(["Rscript", str(path), *args], check=True, env={**os.environ, "R_LIBS": library})


def partition(labels) -> set[frozenset[int]]:
    groups: dict = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    return {frozenset(g) for g in groups.values()}


def compare_mdav(library: str, name: str, frame: pd.DataFrame) -> None:
    columns = list(frame.columns)
    x = standardised(frame, columns)
    total = sst(x)
    print(f"\n## MDAV on {name}: {len(frame):,} records × {len(columns)} columns ({', '.join(columns)})\n")
    print(
        "| k | groups (sdcMicro / Veil) | identical groups | records in identical groups "
        "| SSE/SST % sdcMicro | SSE/SST % Veil | IL1s sdcMicro | IL1s Veil |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for k in KS:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            frame.to_csv(out / "data.csv", index=False)
            rscript(library, R_MDAV, out, str(out / "data.csv"), str(out), str(k))
            theirs = pd.read_csv(out / "mdav.csv")[columns]
            their_il1s = float(pd.read_csv(out / "il1s.csv")["il1s"].iloc[0]) / (len(frame) * len(columns))
        their_labels = pd.factorize(pd.MultiIndex.from_frame(theirs.round(9)))[0]
        ours = mdav(x, k)
        a, b = partition(their_labels), partition(ours)
        shared = a & b
        table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in columns})
        release = execute(
            make_registry(), table, RunSpec(PluginCall("microaggregation"), PluginCall("k-anonymity", {"k": k}))
        ).release
        released = release.frame
        aggregated = pd.DataFrame(x).groupby(ours).transform("mean").to_numpy()
        assert np.isclose(((x - aggregated) ** 2).sum(), sse(x, ours))
        print(
            f"| {k} | {len(a)} / {len(b)} | {len(shared)} | {sum(map(len, shared))} | "
            f"{100 * sse(x, their_labels) / total:.4f} | {100 * release.details['sse_sst']:.4f} | "
            f"{their_il1s:.6f} | {il1s_loss(frame, released, columns):.6f} |"
        )


def veil_suppression(frame: pd.DataFrame, k: int, importance: str, combs: str | None) -> pd.DataFrame:
    table = Table.from_frame(frame[KEYS], roles={c: Role.QUASI_IDENTIFIER for c in KEYS})
    model = PluginCall("k-anonymity", {"k": k}) if combs is None else subsets(k, combs)
    result = execute(
        make_registry(), table, RunSpec(PluginCall("local-suppression", {"importance": importance}), model)
    )
    return result.release.frame


def subsets(k: int, combs: str) -> PluginCall:
    return PluginCall("k-anonymity-subsets", {"k": k, "combinations": max(map(int, combs.split(",")))})


def smallest_on_combinations(released: pd.DataFrame, k: int, combs: str) -> int:
    """The release's smallest group over every combination of at most the largest of ``combs`` keys,
    as Veil's k-anonymity-subsets judges it (a blank matching any value)."""
    release = Release(GENERALISED_TABLE, released[KEYS], tuple(KEYS), blanks=ANY_VALUE)
    bound = bind_models(make_registry(), [subsets(k, combs)])
    return int(bound.check(release).value)


def compare_suppression(library: str, frame: pd.DataFrame) -> None:
    order = "+".join(KEYS[i] for i in np.argsort(IMPORTANCE))  # Veil's order: the most important first
    print(f"\n## Local suppression on testdata ({len(frame):,} records, keys {', '.join(KEYS)})\n")
    print(f"importance (sdcMicro, 1 = most important): {dict(zip(KEYS, IMPORTANCE))}; Veil: `importance={order}`\n")
    print(
        "| k | importance | combs | tool | "
        + " | ".join(KEYS)
        + " | total | smallest fk | smallest group on ≤ combs keys |"
    )
    print("|---:|---|---|---|" + "---:|" * (len(KEYS) + 3))
    for k, with_importance, combs in SUPPRESSION_RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            frame.to_csv(out / "data.csv", index=False)
            imp = ",".join(map(str, IMPORTANCE)) if with_importance else ""
            rscript(
                library, R_SUPPRESSION, out, str(out / "data.csv"), str(out), str(k), ",".join(KEYS), imp, combs or ""
            )
            theirs = pd.read_csv(out / "suppressed.csv")
        runs = [("sdcMicro", theirs), ("Veil", veil_suppression(frame, k, order if with_importance else "", combs))]
        for tool, released in runs:
            blanked = [int((released[c].isna() & frame[c].notna()).sum()) for c in KEYS]
            fk, _ = frequencies(key_codes(released, KEYS))
            on_combinations = smallest_on_combinations(released, k, combs) if combs else "—"
            print(
                f"| {k} | {'yes' if with_importance else 'no'} | {combs or '—'} | {tool} | "
                + " | ".join(map(str, blanked))
                + f" | {sum(blanked)} | {int(fk.min())} | {on_combinations} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdcmicro", required=True, help="an R library folder holding an installed sdcMicro")
    parser.add_argument("--only", choices=("mdav", "suppression"), help="run one of the two comparisons")
    args = parser.parse_args()
    testdata = pd.read_csv(DATA / "testdata.csv")
    if args.only != "suppression":
        compare_mdav(args.sdcmicro, "Tarragona", pd.read_csv(DATA / "Tarragona.csv"))
        compare_mdav(args.sdcmicro, "testdata", testdata[NUMERIC])
    if args.only != "mdav":
        compare_suppression(args.sdcmicro, testdata)


if __name__ == "__main__":
    main()
