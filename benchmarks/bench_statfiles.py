"""Reading a labelled SPSS (.sav) and Stata (.dta) file of 1,000,000 records against reading the same
table as CSV, in one run: wall time (median of three reads from the page cache) and the peak memory
Python's allocator traces while reading (docs/benchmarks.md, "Reading SPSS and Stata files").

    .venv/bin/python benchmarks/bench_statfiles.py [ROWS]

The table: an id, age (18–90), sex (1/2 labelled Male/Female), region (1–12 labelled), income (a
float), smoker (1/2 labelled, -9 declared missing in 5% of the records), diagnosis (20 labelled codes).
The CSV holds the labels as text (what the labelled file reads as) and blanks for the missing codes.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat

from veil.engine import make_registry, read_data


def table(n: int) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(0)
    smoker = rng.choice([1.0, 2.0], n)
    smoker[rng.random(n) < 0.05] = -9.0
    frame = pd.DataFrame(
        {
            "id": np.arange(n, dtype=float),
            "age": rng.integers(18, 91, n).astype(float),
            "sex": rng.choice([1.0, 2.0], n),
            "region": rng.integers(1, 13, n).astype(float),
            "income": np.round(rng.gamma(2.0, 15_000.0, n), 2),
            "smoker": smoker,
            "diag": rng.integers(1, 21, n).astype(float),
        }
    )
    labels = {
        "sex": {1: "Male", 2: "Female"},
        "region": {k: f"Region {k}" for k in range(1, 13)},
        "smoker": {1: "yes", 2: "no", -9: "refused"},
        "diag": {k: f"Diagnosis {k:02d}" for k in range(1, 21)},
    }
    return frame, labels


def as_csv(frame: pd.DataFrame, labels: dict) -> pd.DataFrame:
    out = frame.copy()
    out["smoker"] = out["smoker"].where(out["smoker"] != -9.0)
    for c, m in labels.items():
        out[c] = out[c].map(m)
    return out.astype({"id": np.int64, "age": np.int64})


def measure(registry, path: Path) -> tuple[float, float, tuple]:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        data = read_data(registry, path)
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    read_data(registry, path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak / 2**20, data.frame.shape


def main(n: int) -> None:
    registry = make_registry()
    frame, labels = table(n)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pyreadstat.write_sav(frame, str(tmp / "t.sav"), variable_value_labels=labels, missing_ranges={"smoker": [-9]})
        dta_labels = {c: {k: v for k, v in m.items() if k != -9} for c, m in labels.items()}
        stata = frame.astype({"smoker": object})
        stata.loc[frame["smoker"] == -9.0, "smoker"] = "a"
        pyreadstat.write_dta(
            stata, str(tmp / "t.dta"), variable_value_labels=dta_labels, missing_user_values={"smoker": ["a"]}
        )
        as_csv(frame, labels).to_csv(tmp / "t.csv", index=False)
        rows = []
        for name in ("t.csv", "t.sav", "t.dta"):
            seconds, peak, shape = measure(registry, tmp / name)
            rows.append((name, (tmp / name).stat().st_size / 2**20, seconds, peak, shape))
    base = rows[0][2]
    print(f"{n:,} rows, pyreadstat {pyreadstat.__version__}, pandas {pd.__version__}")
    print("| file | MiB | median s | time ÷ CSV | peak traced MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, size, seconds, peak, shape in rows:
        print(f"| {name[2:]} | {size:.1f} | {seconds:.2f} | {seconds / base:.2f}× | {peak:.0f} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
