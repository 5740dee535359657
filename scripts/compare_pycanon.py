"""Compare Veil's privacy models with pycanon's on small random tables (docs/models.md#agreement-with-pycanon).

pycanon is not a dependency of Veil: install it beside, e.g. ``pip install --target DIR pycanon`` and
``PYTHONPATH=DIR .venv/bin/python scripts/compare_pycanon.py [--tables 300] [--seed 0]``. Prints, per
model, on how many tables the dataset's value agrees (to 1e-6), and the first few that differ.
Each table has 10-60 records, two quasi-identifiers, a categorical sensitive column of 2-5 values
and a numeric one of 2-8 values.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from veil.engine import make_registry, view_of_frame

QIS = ["q1", "q2"]


def veil_value(registry, model: str, params: dict, frame: pd.DataFrame, sensitive: str) -> float:
    plugin = registry.privacy_model(model)
    return plugin.check_groups(view_of_frame(frame, QIS, sensitive), plugin.params(params)).worst


def main() -> None:
    from pycanon import anonymity as pc

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    registry = make_registry()
    rng = np.random.default_rng(args.seed)
    tally: dict[str, list] = {}
    for _ in range(args.tables):
        n = int(rng.integers(10, 60))
        frame = pd.DataFrame(
            {
                "q1": rng.integers(0, 3, n),
                "q2": rng.integers(0, 2, n),
                "s": rng.choice(list("abcde")[: int(rng.integers(2, 6))], n),
                "x": rng.integers(0, int(rng.integers(2, 9)), n),
            }
        )
        pairs = {
            "delta-disclosure (two-sided, the default)": (
                veil_value(registry, "delta-disclosure", {}, frame, "s"),
                pc.delta_disclosure(frame, QIS, ["s"]),
            ),
            "t-closeness, EMD on a category (the default)": (
                veil_value(registry, "t-closeness", {}, frame, "s"),
                pc.t_closeness(frame, QIS, ["s"]),
            ),
            "t-closeness, EMD on a number (the default)": (
                veil_value(registry, "t-closeness", {}, frame, "x"),
                pc.t_closeness(frame, QIS, ["x"]),
            ),
            "l-diversity, distinct": (
                veil_value(registry, "l-diversity", {"variant": "distinct"}, frame, "s"),
                pc.l_diversity(frame, QIS, ["s"]),
            ),
            "l-diversity, entropy, truncated as pycanon reports it": (
                math.floor(veil_value(registry, "l-diversity", {"variant": "entropy"}, frame, "s") + 1e-9),
                pc.entropy_l_diversity(frame, QIS, ["s"]),
            ),
        }
        for name, (ours, theirs) in pairs.items():
            same = abs(float(ours) - float(theirs)) < 1e-6
            entry = tally.setdefault(name, [0, 0, []])
            entry[0] += same
            entry[1] += 1
            if not same and len(entry[2]) < 3:
                entry[2].append((float(ours), float(theirs)))
    for name, (same, total, examples) in tally.items():
        shown = "; ".join(f"Veil {a:.6g}, pycanon {b:.6g}" for a, b in examples)
        print(f"{name}: {same} of {total} agree" + (f" (e.g. {shown})" if examples else ""))


if __name__ == "__main__":
    main()
