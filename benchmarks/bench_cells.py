"""The cell-level methods at scale: MDAV on 1,000,000 records of 5 numeric columns (in blocks, and
what the blocks cost against MDAV on the whole table), MDAV's losses on sdcMicro's Tarragona data
against the published ones, and local suppression on Adult's 8 quasi-identifiers.

Run with ``python benchmarks/bench_cells.py [--datasets DIR] [--records N]`` (prints markdown
tables; the dataset cases are skipped where the datasets folder is absent). Times are wall and CPU seconds
of one run in this process (on a shared machine the CPU time is the steadier); peak memory is the
process's maximum resident set.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _bench import DATASETS, machine, markdown_table
from veil.engine import Context, Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry
from veil.plugins.anonymisation._microaggregation import mdav, mdav_blocks, sse, sst, standardised

ADULT_QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
TARRAGONA_PUBLISHED = {3: 16.93, 5: 22.46, 10: 33.19}  # SSE/SST %, Domingo-Ferrer and Torra (2005)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def correlated(n: int, d: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 1))
    x = base + 0.5 * rng.normal(size=(n, d))
    return pd.DataFrame({f"x{j}": np.round(np.exp(x[:, j]) * 1000) for j in range(d)})


def mdav_at_scale(records: int, ks=(5,), block: int = 5_000) -> list[dict]:
    frame = correlated(records)
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in frame.columns})
    mdav(standardised(frame.head(200), list(frame.columns)), 5)  # compile outside the timing
    rows = []
    for k in ks:
        started = time.perf_counter()
        cpu = time.process_time()
        result = execute(
            make_registry(),
            table,
            RunSpec(PluginCall("microaggregation", {"block": block}), PluginCall("k-anonymity", {"k": k})),
        )
        cpu = time.process_time() - cpu
        seconds = time.perf_counter() - started
        d = result.release.details
        rows.append(
            {
                "records": f"{records:,}",
                "k": k,
                "block": f"{block:,}",
                "seconds (whole run)": round(seconds, 1),
                "CPU seconds": round(cpu, 1),
                "groups": f"{d['groups']:,}",
                "SSE/SST %": round(100 * d["sse_sst"], 3),
                "IL1s": round(d["il1s"], 4),
                "peak MB": round(_peak_mb()),
            }
        )
    return rows


def blocks_against_whole(records: int = 20_000, k: int = 5) -> list[dict]:
    frame = correlated(records, seed=1)
    x = standardised(frame, list(frame.columns))
    total = sst(x)
    rows = []
    for size in (records, 5_000, 1_000):
        started = time.process_time()
        labels = mdav_blocks(x, k, size) if size < records else mdav(x, k)
        seconds = time.process_time() - started
        rows.append(
            {
                "records": f"{records:,}",
                "block": "whole table" if size == records else f"{size:,}",
                "CPU seconds": round(seconds, 2),
                "SSE/SST %": round(100 * sse(x, labels) / total, 3),
            }
        )
    return rows


def tarragona(folder: Path) -> list[dict]:
    frame = pd.read_csv(folder / "sdcmicro/Tarragona.csv")
    x = standardised(frame, list(frame.columns))
    rows = []
    for k, published in TARRAGONA_PUBLISHED.items():
        started = time.perf_counter()
        labels = mdav(x, k)
        rows.append(
            {
                "k": k,
                "Veil SSE/SST %": round(100 * sse(x, labels) / sst(x), 2),
                "published %": published,
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
    return rows


def adult(folder: Path) -> Table:
    names = [
        "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
        "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "salary",
    ]  # fmt: skip
    frame = pd.read_csv(folder / "adult/adult.data", names=names, skipinitialspace=True, na_values="?")
    frame = frame.dropna().reset_index(drop=True)[ADULT_QIS + ["salary"]]
    return Table.from_frame(frame, roles={**{q: Role.QUASI_IDENTIFIER for q in ADULT_QIS}, "salary": Role.TARGET})


def local_suppression(folder: Path) -> list[dict]:
    table = adult(folder)
    rows = []
    for k in (5,):
        for importance in ("", "+".join(ADULT_QIS)):
            started = time.perf_counter()
            cpu = time.process_time()
            result = execute(
                make_registry(),
                table,
                RunSpec(
                    PluginCall("local-suppression", {"importance": importance}), PluginCall("k-anonymity", {"k": k})
                ),
                Context(0),
            )
            seconds = time.perf_counter() - started
            d = result.release.details
            rows.append(
                {
                    "records": f"{table.n_rows:,}",
                    "k": k,
                    "order": "by importance" if importance else "most records joined",
                    "seconds (whole run)": round(seconds, 1),
                    "CPU seconds": round(time.process_time() - cpu, 1),
                    "cells blanked": f"{d['blanked_total']:,}",
                    "share of QI cells %": round(100 * d["blanked_total"] / (table.n_rows * len(ADULT_QIS)), 2),
                    "most blanked": max(d["blanked_cells"], key=d["blanked_cells"].get),
                }
            )
    return rows


def blank_ages(folder: Path, share: float = 0.03) -> list[dict]:
    """Global recoding on ARX's adult data with its hierarchies, ``share`` of the ages blanked (seed 0),
    k = 5 and 4 % suppression, under each rule on blanks."""
    arx = folder / "adult_arx"
    frame = pd.read_csv(arx / "adult.csv", sep=";")
    frame.loc[np.random.default_rng(0).random(len(frame)) < share, "age"] = np.nan
    qis = [c for c in frame.columns if c != "salary-class"]
    table = Table.from_frame(frame, roles={q: Role.QUASI_IDENTIFIER for q in qis})
    for c in qis:
        if c != "age":
            table = table.with_hierarchy(c, Hierarchy.from_arx_csv(arx / f"adult_hierarchy_{c}.csv"))
    rows = []
    for rule in ("any-value", "own-value"):
        started, cpu = time.perf_counter(), time.process_time()
        result = execute(
            make_registry(),
            table,
            RunSpec(
                PluginCall("global-recoding", {"suppression": 0.04, "blanks": rule}),
                PluginCall("k-anonymity", {"k": 5}),
            ),
            Context(0),
        )
        g = result.release.details["generalisation"]
        rows.append(
            {
                "blanks": rule,
                "seconds (whole run)": round(time.perf_counter() - started, 1),
                "CPU seconds": round(time.process_time() - cpu, 1),
                "age level": g["levels"]["age"],
                "suppressed": f"{g['suppressed_records']:,}",
                "loss": round(g["loss"], 4),
                "transformations checked": f"{g['searched_nodes']:,} of {g['lattice_nodes']:,}",
            }
        )
    return rows


def _table(rows: list[dict]) -> str:
    return markdown_table(list(rows[0]), [list(r.values()) for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--block", type=int, default=5_000)
    args = parser.parse_args()
    print(machine())
    if args.datasets.is_dir():
        print("\n### MDAV on Tarragona against the published losses\n")
        print(_table(tarragona(args.datasets)), flush=True)
        print("\n### Local suppression on Adult's 8 quasi-identifiers\n")
        print(_table(local_suppression(args.datasets)), flush=True)
        print("\n### Global recoding on adult_arx with 3 % of the ages blank\n")
        print(_table(blank_ages(args.datasets)), flush=True)
    print("\n### MDAV in blocks against MDAV on the whole table\n")
    print(_table(blocks_against_whole()), flush=True)
    print("\n### MDAV at scale\n")
    print(_table(mdav_at_scale(args.records, block=args.block)), flush=True)


if __name__ == "__main__":
    main()
