"""Global recoding's heuristic searches on a synthetic table of 20 quasi-identifiers with real-looking
hierarchies (ages, postcodes masked a digit at a time, dates of birth by month, quarter and half,
places by region, jobs by sector, …): a lattice far beyond what the optimal search holds, anonymised
within a budget of checked transformations; and on its first columns, where the optimum can still be
computed, the heuristics' loss against the optimum's at the same budgets.

Run with ``python benchmarks/bench_heuristic_search.py [ROWS]`` (prints markdown tables; default 20,000
records). The table is generated from a fixed seed and never written anywhere. With ``crossover``
(``python benchmarks/bench_heuristic_search.py crossover [ROWS]``) it compares the best-first and the
genetic search at one budget on the first 10, 12, …, 20 columns instead (``crossover ROWS BUDGET
WIDTHS``, e.g. ``crossover 20000 30000 10``: another budget, on the first 10 columns only): which of
the two ``search=auto`` takes beyond the optimal search's lattices (docs/benchmarks.md).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from _bench import machine, markdown_table
from veil.engine import Hierarchy, PluginCall, Role, RunSpec, Table, execute, make_registry

REGISTRY = make_registry()
MODEL = "k-anonymity:k=5"
SUPPRESSION = 0.05


def _grouped(leaves, *levels) -> Hierarchy:
    """A hierarchy whose level i maps each leaf through ``levels[i]`` (a function of the leaf), then ``*``."""
    return Hierarchy.from_levels({leaf: [f(leaf) for f in levels] + ["*"] for leaf in leaves})


def _masked(codes) -> Hierarchy:
    """Postcode-like codes with their last digits masked one at a time."""
    width = len(codes[0])
    return Hierarchy.from_levels({c: [c[: width - i] + "*" * i for i in range(1, width)] + ["*"] for c in codes})


def synthetic(rows: int = 20_000, seed: int = 0) -> Table:
    """20 quasi-identifiers, each drawn from a skewed distribution, with its hierarchy."""
    rng = np.random.default_rng(seed)

    def pick(values, concentration=1.0):
        return rng.choice(values, rows, p=rng.dirichlet(np.ones(len(values)) * concentration))

    zips = [f"{z:05d}" for z in rng.choice(100_000, 300, replace=False)]
    towns = [f"town{i:02d}" for i in range(40)]
    jobs = [f"job{i:02d}" for i in range(24)]
    langs = ["en", "fr", "de", "es", "it", "pt", "nl", "pl", "ar", "zh", "hi", "tr"]
    cols, hier = {}, {}
    cols["age"] = np.clip(rng.normal(42, 16, rows).round(), 17, 95).astype(int)
    hier["age"] = Hierarchy.intervals(cols["age"], widths=[5, 10, 20, 40, 80])
    cols["zip"] = pick(zips, 0.5)
    hier["zip"] = _masked(zips)
    cols["sex"] = pick(["F", "M"], 20)
    hier["sex"] = _grouped(["F", "M"])
    months = [f"{y}-{m:02d}" for y in range(1950, 1956) for m in range(1, 13)]
    cols["birth"] = pick(months, 3)
    hier["birth"] = _grouped(
        months,
        lambda x: f"{x[:4]}-Q{(int(x[5:]) - 1) // 3 + 1}",
        lambda x: f"{x[:4]}-H{(int(x[5:]) - 1) // 6 + 1}",
        lambda x: x[:4],
        lambda x: "1950-52" if int(x[:4]) < 1953 else "1953-55",
    )
    cols["town"] = pick(towns, 0.7)
    hier["town"] = _grouped(towns, lambda x: f"county{int(x[4:]) // 5}", lambda x: f"region{int(x[4:]) // 20}")
    cols["job"] = pick(jobs, 0.8)
    hier["job"] = _grouped(jobs, lambda x: f"sector{int(x[3:]) // 6}", lambda x: f"class{int(x[3:]) // 12}")
    cols["language"] = pick(langs, 0.4)
    hier["language"] = _grouped(langs, lambda x: "european" if x in langs[:8] else "other")
    for name, values, top in (
        ("income", (rng.lognormal(10.3, 0.6, rows) // 1000).astype(int), [5, 10, 20, 40, 80]),
        ("hours", np.clip(rng.normal(38, 10, rows).round(), 0, 99).astype(int), [5, 10, 20, 40]),
        ("children", rng.poisson(1.3, rows), [2, 4]),
        ("household", 1 + rng.poisson(1.6, rows), [2, 4, 8]),
        ("tenure", rng.integers(0, 45, rows), [5, 10, 20]),
        ("commute", np.clip(rng.gamma(2, 12, rows).round(), 0, 180).astype(int), [10, 30, 60, 180]),
    ):
        cols[name] = values
        hier[name] = Hierarchy.intervals(values, widths=top)
    small = {
        "marital": ["single", "married", "divorced", "widowed", "separated"],
        "education": ["none", "primary", "secondary", "vocational", "bachelor", "master", "doctorate"],
        "religion": ["none", "christian", "muslim", "jewish", "hindu", "buddhist", "other"],
        "blood": ["O+", "O-", "A+", "A-", "B+", "B-", "AB+", "AB-"],
        "housing": ["owner", "mortgage", "rent", "social", "family"],
        "vehicle": ["none", "car", "van", "motorbike", "bicycle"],
        "health": ["excellent", "good", "fair", "poor"],
    }
    for name, values in small.items():
        cols[name] = pick(values, 0.8)
        hier[name] = _grouped(values, lambda x, v=values: f"{name[:3]}{v.index(x) * 2 // len(v)}")
    frame = pd.DataFrame(cols)
    table = Table.from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in frame.columns})
    for c, h in hier.items():
        table = table.with_hierarchy(c, h)
    return table


def subset(table: Table, columns: list[str]) -> Table:
    out = Table.from_frame(table.frame[columns], roles={c: Role.QUASI_IDENTIFIER for c in columns})
    for c in columns:
        out = out.with_hierarchy(c, table.hierarchy(c))
    return out


def anonymise(table: Table, **search) -> tuple[dict, float, float]:
    params = {"suppression": SUPPRESSION, "metric": "loss", **search}
    spec = RunSpec(PluginCall("global-recoding", params), models=[PluginCall.parse(MODEL)], seed=1, metrics=())
    wall, cpu = time.perf_counter(), time.process_time()
    gen = execute(REGISTRY, table, spec).release.details["generalisation"]
    return gen, time.perf_counter() - wall, time.process_time() - cpu


def main(rows: int) -> None:
    print(machine())
    table = synthetic(rows)
    columns = list(table.frame.columns)
    heights = [table.hierarchy(c).height + 1 for c in columns]
    print(f"\n{rows:,} records, {len(columns)} quasi-identifiers, lattice of {math.prod(heights):,} transformations")
    budgets = (1_000, 10_000)
    out = []
    for d in (6, 8):
        part = subset(table, columns[:d])
        best, wall, cpu = anonymise(part, search="optimal")
        out.append(
            [
                d,
                f"{best['lattice_nodes']:,}",
                "optimal",
                "—",
                f"{best['searched_nodes']:,}",
                f"{best['loss']:.6f}",
                "1",
                f"{cpu:.1f}",
            ]
        )
        for method in ("heuristic", "genetic"):
            for budget in budgets:
                gen, wall, cpu = anonymise(part, search=method, budget=budget)
                out.append(
                    [
                        d,
                        f"{gen['lattice_nodes']:,}",
                        method,
                        f"{budget:,}",
                        f"{gen['searched_nodes']:,}",
                        f"{gen['loss']:.6f}" + (" (proven)" if gen["proven_optimal"] else ""),
                        f"{gen['loss'] / best['loss']:.4f}",
                        f"{cpu:.1f}",
                    ]
                )
    print()
    print(
        markdown_table(
            ["quasi-identifiers", "lattice", "search", "budget", "checked", "loss", "loss / optimum", "CPU s"], out
        )
    )
    out = []
    for method in ("heuristic", "genetic"):
        for budget in (3_000, 10_000):  # a first greedy climb of 20 columns checks up to Σ h_j × 20 transformations
            gen, wall, cpu = anonymise(table, search=method, budget=budget)
            out.append(
                [
                    method,
                    f"{budget:,}",
                    f"{gen['searched_nodes']:,}",
                    f"{gen['loss']:.6f}",
                    f"{gen['suppressed_records']:,}",
                    f"{wall:.1f}",
                    f"{cpu:.1f}",
                ]
            )
    print()
    print(
        markdown_table(
            ["20 quasi-identifiers: search", "budget", "checked", "loss", "suppressed", "wall s", "CPU s"], out
        )
    )


def crossover(rows: int, budget: int = 3_000, widths: tuple = (10, 12, 14, 16, 18, 20)) -> None:
    """The best-first and the genetic search at one budget on ever more columns, beyond the optimal
    search's lattices: their loss, and the lattice's size."""
    print(machine())
    table = synthetic(rows)
    columns = list(table.frame.columns)
    out = []
    for d in widths:
        part = subset(table, columns[:d])
        found = {}
        for method in ("heuristic", "genetic"):
            found[method] = anonymise(part, search=method, budget=budget)
        (h, _, h_cpu), (g, _, g_cpu) = found["heuristic"], found["genetic"]
        out.append(
            [
                d,
                f"{h['lattice_nodes']:.2e}",
                f"{h['loss']:.6f}",
                f"{g['loss']:.6f}",
                f"{g['loss'] / h['loss']:.4f}",
                f"{h_cpu:.1f}",
                f"{g_cpu:.1f}",
            ]
        )
        print(out[-1], flush=True)
    print()
    print(
        markdown_table(
            [
                "quasi-identifiers",
                "lattice",
                f"best-first loss ({budget:,})",
                f"genetic loss ({budget:,})",
                "genetic / best-first",
                "best-first CPU s",
                "genetic CPU s",
            ],
            out,
        )
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "crossover":
        args = sys.argv[2:]
        crossover(
            int(args[0]) if args else 20_000,
            int(args[1]) if len(args) > 1 else 3_000,
            tuple(int(w) for w in args[2].split(",")) if len(args) > 2 else (10, 12, 14, 16, 18, 20),
        )
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
