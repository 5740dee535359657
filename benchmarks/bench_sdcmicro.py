"""Veil beside R's sdcMicro, CPU seconds of both in one run: MDAV (sdcMicro's
``microaggregation(method = "mdav")``) on 5 numeric columns at the sizes sdcMicro manages and Veil's at
1,000,000; local suppression (``localSuppression``) on adult_arx's 8 quasi-identifiers; fk/Fk and
individual risk (``freqCalc`` + ``indivRisk``) on 1,000,000 weighted records (exact: 100,000); SUDA (``suda2``) on
adult_arx's 8 quasi-identifiers.

Run with ``python benchmarks/bench_sdcmicro.py --sdcmicro R_LIBRARY_WITH_SDCMICRO`` (an R library
folder holding an installed sdcMicro; docs/reference.md says how it was installed). Each case writes
its input to a temporary CSV that both tools read; sdcMicro's CPU seconds are R's ``proc.time()``
(user + system) around the call alone, Veil's ``time.process_time()`` around its call, so neither
counts reading the data or starting R. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

from _bench import DATASETS, machine, markdown_table
from bench_cells import correlated
from bench_sample_risk import weighted
from veil.engine import PluginCall, Role, RunSpec, Table, execute, make_registry, sample_risk, suda
from veil.plugins.anonymisation._microaggregation import mdav, sse, sst, standardised

QUASI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]

R_CASES = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(TRUE)
case <- args[1]; data <- read.csv(args[2], check.names = FALSE); out <- args[3]
data[] <- lapply(data, function(v) if (is.character(v)) factor(v) else v)  # sdcMicro codes factors
cpu <- function(t) { d <- proc.time() - t; d[["user.self"]] + d[["sys.self"]] }
t <- proc.time()
if (case == "mdav") {
  m <- microaggregation(data, variables = colnames(data), aggr = as.integer(args[4]), method = "mdav")
  seconds <- cpu(t)
  write.csv(m$mx, file.path(out, "result.csv"), row.names = FALSE)
} else if (case == "suppression") {
  keys <- strsplit(args[4], ",")[[1]]
  ls <- localSuppression(data, k = as.integer(args[5]), keyVars = keys)
  seconds <- cpu(t)
  write.csv(as.data.frame(ls$xAnon)[, keys], file.path(out, "result.csv"), row.names = FALSE)
} else if (case == "risk") {
  keys <- strsplit(args[4], ",")[[1]]
  f <- freqCalc(data, keyVars = keys, w = args[5])
  r <- indivRisk(f, method = args[6])
  seconds <- cpu(t)
  write.csv(data.frame(uniques = sum(f$fk == 1), er = sum(r$rk)), file.path(out, "result.csv"), row.names = FALSE)
} else if (case == "suda") {
  s <- suppressWarnings(suda2(data, variables = strsplit(args[4], ",")[[1]]))
  seconds <- cpu(t)
  write.csv(data.frame(msu = sum(s$score > 0)), file.path(out, "result.csv"), row.names = FALSE)
}
writeLines(format(seconds), file.path(out, "seconds.txt"))
"""


class SdcMicro:
    def __init__(self, library: str):
        self.env = {**os.environ, "R_LIBS": library}

    def run(self, case: str, frame: pd.DataFrame, *args) -> tuple[float, pd.DataFrame]:
        """sdcMicro's CPU seconds for ``case`` on ``frame`` and what it wrote."""
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            frame.to_csv(out / "data.csv", index=False)
            (out / "cases.R").write_text(R_CASES)
            command = ["Rscript", str(out / "cases.R"), case, str(out / "data.csv"), str(out), *map(str, args)]
            subprocess.run(command, check=True, env=self.env)
            return float((out / "seconds.txt").read_text()), pd.read_csv(out / "result.csv")


def cpu(fn):
    started = time.process_time()
    out = fn()
    return time.process_time() - started, out


def mdav_rows(r: SdcMicro, sizes: list[int], records: int, k: int = 5) -> list[dict]:
    mdav(standardised(correlated(200), [f"x{j}" for j in range(5)]), k)  # compile outside the timing
    rows = []
    for n in sizes + [records]:
        frame = correlated(n)
        columns = list(frame.columns)
        x = standardised(frame, columns)
        table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in columns})
        spec = RunSpec(PluginCall("microaggregation"), PluginCall("k-anonymity", {"k": k}))
        seconds, result = cpu(lambda: execute(make_registry(), table, spec))  # noqa: B023
        row = {
            "records": f"{n:,}",
            "Veil CPU s (method, blocks of 20,000)": round(seconds, 1),
            "Veil SSE/SST %": round(100 * result.release.details["sse_sst"], 3),
        }
        if n <= max(sizes):
            whole, labels = cpu(lambda: mdav(x, k))  # noqa: B023
            theirs, released = r.run("mdav", frame, k)
            their_labels = pd.factorize(pd.MultiIndex.from_frame(released.round(9)))[0]
            row |= {
                "Veil CPU s (whole table)": round(whole, 1),
                "whole-table SSE/SST %": round(100 * sse(x, labels) / sst(x), 3),
                "sdcMicro CPU s": round(theirs, 1),
                "sdcMicro SSE/SST %": round(100 * sse(x, their_labels) / sst(x), 3),
            }
        else:
            row |= {
                "Veil CPU s (whole table)": "—",
                "whole-table SSE/SST %": "—",
                "sdcMicro CPU s": "—",
                "sdcMicro SSE/SST %": "—",
            }
        rows.append(row)
        print(row, flush=True)
    return rows


def adult(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "adult_arx" / "adult.csv", sep=";")


def suppression_rows(r: SdcMicro, frame: pd.DataFrame, ks=(5,)) -> list[dict]:
    table = Table.from_frame(frame[QUASI], roles={q: Role.QUASI_IDENTIFIER for q in QUASI})
    rows = []
    for k in ks:
        spec = RunSpec(PluginCall("local-suppression"), PluginCall("k-anonymity", {"k": k}))
        seconds, result = cpu(lambda: execute(make_registry(), table, spec))  # noqa: B023
        print(f"Veil, k = {k}: {seconds:.1f} CPU s, {result.release.details['blanked_total']:,} cells", flush=True)
        names = {q: q.replace("-", "_") for q in QUASI}  # sdcMicro's localSuppression needs R names
        theirs, released = r.run("suppression", frame[QUASI].rename(columns=names), ",".join(names.values()), k)
        blanked = int(sum((released[names[c]].isna() & frame[c].notna()).sum() for c in QUASI))
        rows.append(
            {
                "records": f"{len(frame):,}",
                "k": k,
                "Veil CPU s": round(seconds, 1),
                "Veil cells blanked": f"{result.release.details['blanked_total']:,}",
                "sdcMicro CPU s": round(theirs, 1),
                "sdcMicro cells blanked": f"{blanked:,}",
            }
        )
        print(rows[-1], flush=True)
    return rows


def risk_rows(r: SdcMicro, records: int) -> list[dict]:
    keys = ["region", "age", "sex", "household_size"]
    rows = []
    # the exact risk takes one numerical integral per distinct (fk, Fk): a tenth of the records
    for n, blanks, method in ((records, 0.0, "approx"), (records, 0.05, "approx"), (records // 10, 0.0, "exact")):
        frame = weighted(n, blanks)
        seconds, ours = cpu(lambda: sample_risk(frame, keys, weight="w", method=method))  # noqa: B023
        theirs, result = r.run("risk", frame, ",".join(keys), "w", method)
        rows.append(
            {
                "case": f"{n:,} weighted records, {blanks:.0%} blanks, {method}",
                "Veil CPU s": round(seconds, 2),
                "sdcMicro CPU s": round(theirs, 2),
                "sample uniques (Veil / sdcMicro)": f"{ours.sample_uniques:,} / {int(result['uniques'].iloc[0]):,}",
                "expected re-identifications (Veil / sdcMicro)": (
                    f"{ours.expected_reidentifications:.2f} / {result['er'].iloc[0]:.2f}"
                ),
            }
        )
        print(rows[-1], flush=True)
    return rows


def suda_rows(r: SdcMicro, frame: pd.DataFrame) -> list[dict]:
    seconds, ours = cpu(lambda: suda(frame, QUASI))
    theirs, result = r.run("suda", frame[QUASI], ",".join(QUASI))
    row = {
        "records": f"{len(frame):,}",
        "MSU sizes searched": f"1 … {ours.max_size}",
        "Veil CPU s": round(seconds, 1),
        "sdcMicro CPU s": round(theirs, 1),
        "records with an MSU (Veil / sdcMicro)": f"{ours.records_with_msu:,} / {int(result['msu'].iloc[0]):,}",
    }
    print(row, flush=True)
    return [row]


def _table(rows: list[dict]) -> str:
    return markdown_table(list(rows[0]), [list(r.values()) for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdcmicro", required=True, help="an R library folder holding an installed sdcMicro")
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--mdav-sizes", default="10000,30000,100000", help="sizes at which both tools run MDAV")
    parser.add_argument("--only", choices=("mdav", "suppression", "risk", "suda"))
    args = parser.parse_args()
    r = SdcMicro(args.sdcmicro)
    print(machine())
    sections = {
        "mdav": (
            "MDAV, 5 numeric columns, k = 5",
            lambda: mdav_rows(r, [int(s) for s in args.mdav_sizes.split(",")], args.records),
        ),
        "suppression": (
            "Local suppression, adult_arx's 8 quasi-identifiers",
            lambda: suppression_rows(r, adult(args.datasets)),
        ),
        "risk": ("fk/Fk and individual risk", lambda: risk_rows(r, args.records)),
        "suda": ("SUDA, adult_arx's 8 quasi-identifiers", lambda: suda_rows(r, adult(args.datasets))),
    }
    for name, (title, rows) in sections.items():
        if args.only in (None, name):
            print(f"\n### {title}\n")
            print(_table(rows()), flush=True)


if __name__ == "__main__":
    main()
