"""Risk on sample microdata at scale: fk/Fk and individual risk on 1,000,000 weighted records (with and
without blanks), SUDA on adult_arx's 8 quasi-identifiers (every MSU size), the ranking of all 255
combinations of them; each with its peak memory (tracemalloc) beside the metric's declared cost.

Run with ``python benchmarks/bench_sample_risk.py`` (prints a markdown table). The dataset is read
from ``../shared/datasets`` and never copied.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import rank_combinations, sample_risk, suda, suda_memory

ADULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult_arx" / "adult.csv"
QUASI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def weighted(n: int, blanks: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "region": rng.integers(0, 50, n),
            "age": rng.integers(0, 90, n),
            "sex": rng.integers(0, 2, n),
            "household_size": rng.integers(1, 9, n),
            "w": rng.uniform(1, 200, n).round(2),
        }
    )
    if blanks:
        frame["age"] = frame["age"].astype(float).mask(rng.random(n) < blanks)
        frame["region"] = frame["region"].astype(float).mask(rng.random(n) < blanks)
    return frame


def measured(fn):
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, seconds, peak


class Rows(list):
    """The table's rows, each printed as it is measured (a long run shows what it has)."""

    def append(self, row) -> None:
        super().append(row)
        label, s, peak, note = row
        print(f"| {label} | {s:.2f} | {peak / 2**20:.0f} | {note} |", flush=True)


def main() -> None:
    print("| case | seconds | peak MiB | result |")
    print("|---|---:|---:|---|", flush=True)
    rows = Rows()
    frames = {blanks: weighted(1_000_000, blanks) for blanks in (0.0, 0.05)}
    for method in ("approx", "exact"):
        for blanks, frame in frames.items():
            quasi = ["region", "age", "sex", "household_size"]
            out, s, peak = measured(lambda: sample_risk(frame, quasi, weight="w", method=method))
            rows.append(
                (
                    f"fk/Fk + individual risk ({method}), 1,000,000 weighted records, {blanks:.0%} blanks",
                    s,
                    peak,
                    f"{out.sample_uniques:,} sample uniques",
                )
            )
    adult = pd.read_csv(ADULT, sep=";")
    found, s, peak = measured(lambda: suda(adult, QUASI))
    rows.append(
        (
            f"SUDA, adult_arx {len(adult):,} records, 8 quasi-identifiers, MSUs up to size {found.max_size}",
            s,
            peak,
            f"{found.records_with_msu:,} records with an MSU; declared {suda_memory(len(adult), 8) / 2**20:.0f} MiB",
        )
    )
    ranking, s, peak = measured(lambda: rank_combinations(adult, QUASI))
    rows.append(
        (
            f"distinction and separation, all {len(ranking)} combinations of the 8",
            s,
            peak,
            f"most separating: {', '.join(ranking[0].columns)}",
        )
    )


if __name__ == "__main__":
    main()
