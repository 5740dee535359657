"""The cell-level methods at scale: MDAV on 1,000,000 records of 5 numeric columns (in blocks, and
what the blocks cost against MDAV on the whole table), MDAV's losses on sdcMicro's Tarragona data
against the published ones, local suppression on Adult's 8 quasi-identifiers, and local recoding on
ARX's adult data as ARX's own test runs it.

Run with ``python benchmarks/bench_cells.py [--datasets DIR] [--records N]`` (prints markdown
tables; the dataset cases are skipped where the datasets folder is absent). With ``--against REV``
it runs only global recoding with blank ages, by ``git archive REV``'s code (put first on
``PYTHONPATH`` in a child process) and by this checkout's, taking turns ``--repeats`` times;
``--local-against REV`` does the same with local recoding. Times are wall and CPU seconds of one run
in this process (on a shared machine the CPU time is the steadier); peak memory is the process's
maximum resident set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _bench import DATASETS, checkout, machine, markdown_table
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


RULES = ("any-value", "own-value")


def blank_ages(folder: Path, share: float = 0.03, repeats: int = 1) -> list[dict]:
    """Global recoding on ARX's adult data with its hierarchies, ``share`` of the ages blanked (seed 0),
    k = 5 and 4 % suppression, under each rule on blanks: one untimed run first (it loads what both
    rules need), then the rules in turn ``repeats`` times, the median CPU seconds of each."""
    arx = folder / "adult_arx"
    frame = pd.read_csv(arx / "adult.csv", sep=";")
    frame.loc[np.random.default_rng(0).random(len(frame)) < share, "age"] = np.nan
    qis = [c for c in frame.columns if c != "salary-class"]
    table = Table.from_frame(frame, roles={q: Role.QUASI_IDENTIFIER for q in qis})
    for c in qis:
        if c != "age":
            table = table.with_hierarchy(c, Hierarchy.from_arx_csv(arx / f"adult_hierarchy_{c}.csv"))

    def run(rule: str):
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
        return time.perf_counter() - started, time.process_time() - cpu, result

    run("own-value")
    samples: dict[str, list] = {rule: [] for rule in RULES}
    for _ in range(repeats):
        for rule in RULES:
            samples[rule].append(run(rule))
    rows = []
    for rule in RULES:
        g = samples[rule][-1][2].release.details["generalisation"]
        rows.append(
            {
                "blanks": rule,
                "seconds (whole run)": round(float(np.median([s[0] for s in samples[rule]])), 2),
                "CPU seconds": round(float(np.median([s[1] for s in samples[rule]])), 2),
                "age level": g["levels"]["age"],
                "levels": ",".join(str(g["levels"][q]) for q in qis),
                "suppressed": f"{g['suppressed_records']:,}",
                "loss": round(g["loss"], 4),
                "transformations checked": f"{g['searched_nodes']:,} of {g['lattice_nodes']:,}",
            }
        )
    return rows


LOCAL_SETTINGS = "metric=arx-loss,gs_factor=0.05,adaption=0.05,passes=100,suppression=1.0"  # ARX's test's


def local_recoding(folder: Path, ks=(5, 100)) -> list[dict]:
    """Local recoding as ARX's TestAnonymizationLocalRecoding runs it (scripts/compare_arx_local_recoding.py):
    ARX's adult data, the eight attributes other than occupation quasi-identifiers under ARX's
    hierarchies, ARX's loss with g/s factor 0.05, adaption 0.05, up to 100 tries, suppression limit
    100 %, k-anonymity; each k once, the whole run through ``execute``. The release's
    quasi-identifiers as written are digested, to compare two revisions."""
    arx = folder / "adult_arx"
    data = pd.read_csv(arx / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    quasi = [c for c in data.columns if c != "occupation"]
    table = Table.from_frame(data, roles={**{c: Role.QUASI_IDENTIFIER for c in quasi}, "occupation": Role.INSENSITIVE})
    for c in quasi:
        table = table.with_hierarchy(c, Hierarchy.from_arx_csv(arx / f"adult_hierarchy_{c}.csv", name=c))
    rows = []
    for k in ks:
        started, cpu = time.perf_counter(), time.process_time()
        spec = RunSpec(PluginCall.parse(f"local-recoding:{LOCAL_SETTINGS}"), [PluginCall.parse(f"k-anonymity:k={k}")])
        release = execute(make_registry(), table, spec, Context(0)).release
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        d = release.details
        written = release.frame[quasi].astype(str)
        rows.append(
            {
                "k": k,
                "seconds (whole run)": round(seconds, 1),
                "CPU seconds": round(cpu, 1),
                "tries": len(d["passes"]),
                "published per try": " ".join(str(p["published"]) for p in d["passes"] if p["published"]),
                "left suppressed": d["suppressed_records"],
                "release sha1": hashlib.sha1(written.to_csv(index=False).encode()).hexdigest()[:12],
            }
        )
    return rows


_CHILD = (
    "import json, sys\nfrom pathlib import Path\nsys.path.insert(0, {here!r})\nimport bench_cells, veil.engine\n"
    "print(json.dumps([veil.engine.__file__, bench_cells.{call}(Path({folder!r}))]))"
)


def _turns(revision: str, call: str, folder: Path, repeats: int) -> dict[str, list]:
    """The rows of ``bench_cells.{call}(folder)`` by ``revision``'s code and by this checkout's, each in
    a fresh process, the two taking turns ``repeats`` times (a burst of load hits both alike)."""
    code = _CHILD.format(here=str(Path(__file__).resolve().parent), folder=str(folder), call=call)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory() as tmp:
        sides = {revision: {**env, "PYTHONPATH": str(checkout(revision, Path(tmp)))}, "this checkout": env}
        samples: dict[str, list] = {side: [] for side in sides}
        for _ in range(repeats):
            for side, side_env in sides.items():
                done = subprocess.run([sys.executable, "-c", code], env=side_env, capture_output=True, text=True)
                if done.returncode:
                    raise RuntimeError(f"{side}: {done.stderr.strip().splitlines()[-1:]}")
                where, rows = json.loads(done.stdout.strip().splitlines()[-1])
                assert where.startswith(tmp) == (side == revision), (side, where)  # the code each side ran
                samples[side].append(rows)
    return samples


def local_recoding_against(revision: str, folder: Path, repeats: int = 3) -> str:
    """:func:`local_recoding` by ``revision``'s code and by this checkout's, taking turns (:func:`_turns`):
    the median CPU and wall seconds of each k on each side, and their ratios; the release must be the same."""
    samples = _turns(revision, "local_recoding", folder, repeats)
    then = [{r["k"]: r for r in rows} for rows in samples[revision]]
    now = [{r["k"]: r for r in rows} for rows in samples["this checkout"]]
    out = []
    for k in now[-1]:
        mine, theirs = now[-1][k], then[-1][k]
        same = ("tries", "published per try", "left suppressed", "release sha1")
        assert all(mine[key] == theirs[key] for key in same), (k, theirs, mine)  # the identical release
        a = float(np.median([s[k]["CPU seconds"] for s in then]))
        b = float(np.median([s[k]["CPU seconds"] for s in now]))
        wa = float(np.median([s[k]["seconds (whole run)"] for s in then]))
        wb = float(np.median([s[k]["seconds (whole run)"] for s in now]))
        out.append(
            {
                "k": k,
                f"{revision} CPU s": round(a, 1),
                "now CPU s": round(b, 1),
                f"{revision} / now": round(a / b, 1),
                f"{revision} wall s": round(wa, 1),
                "now wall s": round(wb, 1),
                "tries": mine["tries"],
                "published per try": mine["published per try"],
                "left suppressed": mine["left suppressed"],
                "release sha1": mine["release sha1"],
            }
        )
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{repeats} turns, load average at the end {load}\n\n" + _table(out)


def blank_ages_against(revision: str, folder: Path, repeats: int = 3) -> str:
    """:func:`blank_ages` by ``revision``'s code and by this checkout's, taking turns (:func:`_turns`):
    the median CPU seconds of each rule on each side, and their ratios; the optimum must be the same."""
    samples = _turns(revision, "blank_ages", folder, repeats)
    then = [{r["blanks"]: r for r in rows} for rows in samples[revision]]
    now = [{r["blanks"]: r for r in rows} for rows in samples["this checkout"]]
    out = []
    for rule in RULES:
        a = float(np.median([s[rule]["CPU seconds"] for s in then]))
        b = float(np.median([s[rule]["CPU seconds"] for s in now]))
        mine, theirs = now[-1][rule], then[-1][rule]
        same = ("levels", "suppressed", "loss")
        assert all(mine[k] == theirs[k] for k in same), (rule, theirs, mine)  # the identical optimum
        out.append(
            {
                "blanks": rule,
                f"{revision} CPU s": round(a, 2),
                "now CPU s": round(b, 2),
                f"{revision} / now": round(a / b, 1),
                "age level": mine["age level"],
                "suppressed": mine["suppressed"],
                "loss": mine["loss"],
                "transformations checked": mine["transformations checked"],
            }
        )
    ratios = "; ".join(
        f"any-value / own-value: {name} {out[0][col] / out[1][col]:.1f}"
        for name, col in ((revision, f"{revision} CPU s"), ("now", "now CPU s"))
    )
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{repeats} turns, load average at the end {load}; {ratios}\n\n" + _table(out)


def _table(rows: list[dict]) -> str:
    return markdown_table(list(rows[0]), [list(r.values()) for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--block", type=int, default=5_000)
    parser.add_argument("--against", help="only global recoding with blank ages, by this revision and this checkout")
    parser.add_argument("--local-against", help="only local recoding, by this revision and this checkout")
    parser.add_argument("--repeats", type=int, default=3, help="turns of each side with --against, --local-against")
    args = parser.parse_args()
    print(machine())
    if args.local_against:
        print("\n### Local recoding on adult_arx as ARX's test runs it, then and now\n")
        print(local_recoding_against(args.local_against, args.datasets, args.repeats), flush=True)
        return
    if args.against:
        print("\n### Global recoding on adult_arx with 3 % of the ages blank, then and now\n")
        print(blank_ages_against(args.against, args.datasets, args.repeats), flush=True)
        return
    if args.datasets.is_dir():
        print("\n### MDAV on Tarragona against the published losses\n")
        print(_table(tarragona(args.datasets)), flush=True)
        print("\n### Local suppression on Adult's 8 quasi-identifiers\n")
        print(_table(local_suppression(args.datasets)), flush=True)
        print("\n### Global recoding on adult_arx with 3 % of the ages blank\n")
        print(_table(blank_ages(args.datasets)), flush=True)
        print("\n### Local recoding on adult_arx as ARX's test runs it\n")
        print(_table(local_recoding(args.datasets)), flush=True)
    print("\n### MDAV in blocks against MDAV on the whole table\n")
    print(_table(blocks_against_whole()), flush=True)
    print("\n### MDAV at scale\n")
    print(_table(mdav_at_scale(args.records, block=args.block)), flush=True)


if __name__ == "__main__":
    main()
