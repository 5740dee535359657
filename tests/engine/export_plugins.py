"""Test-only plugins for the export tests, registered with ``make_registry(modules=[export_plugins])``:
a slow CSV exporter (to kill an export mid-write), a lossy exporter (its file reads back different
from what it was given), a method that leaks an identifier, and a "differentially private" method
that reports a budget the way real ones do."""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd

from veil.engine import TABLE, Algorithm, Exporter, feature_subset, hookimpl


class SlowCsv(Exporter):
    """Writes CSV in chunks of 50 rows, flushed to disk, with a pause between chunks."""

    name = "slow-csv"
    title = "Slow CSV (tests)"
    extension = "csv"
    pause = float(os.environ.get("VEIL_TEST_SLOW_PAUSE", "0.05"))

    def write(self, frame, path, params):
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(",".join(map(str, frame.columns)) + "\n")
            for start in range(0, len(frame), 50):
                frame.iloc[start : start + 50].to_csv(f, header=False, index=False, lineterminator="\n")
                f.flush()
                os.fsync(f.fileno())
                time.sleep(self.pause)

    def read_back(self, path):
        return pd.read_csv(path)


class LossyCsv(Exporter):
    """Drops the first row's first quasi-identifier value on the way out: the file reads back
    different from the release, so the re-check of the written file must catch it."""

    name = "lossy-csv"
    title = "Lossy CSV (tests)"
    extension = "csv"

    def write(self, frame, path, params):
        broken = frame.copy()
        broken.iloc[0, 0] = "tampered"
        broken.to_csv(path, index=False)

    def read_back(self, path):
        return pd.read_csv(path)


class LeakIdentifier(Algorithm):
    """A buggy method whose release keeps every column, identifiers included."""

    name = "leak-identifier"
    title = "Leaks an identifier (tests)"
    accepts = (TABLE,)

    def run(self, data, model, params, ctx):
        release = feature_subset(data, [c for c in data.columns if c != data.schema.target])
        return release


class FakeDp(Algorithm):
    """Releases every feature and reports ε and assumptions as a DP method must (Release.details)."""

    name = "fake-dp"
    title = "Pretend differential privacy (tests)"
    accepts = (TABLE,)

    def run(self, data, model, params, ctx):
        cols = [c for c in data.released_columns() if c != data.schema.target]
        return feature_subset(
            data,
            cols,
            details={
                "epsilon_spent": np.float64(0.5),
                "assumptions": ("class sizes are public", "one record changes"),
                "noise": np.array([0.25, np.nan]),
                "picks": (1, 2),
                "table": pd.DataFrame({"a": [1, 2]}),
                "inf": float("inf"),
            },
        )


@hookimpl
def veil_register_exporters():
    return [SlowCsv, LossyCsv]


@hookimpl
def veil_register_algorithms():
    return [LeakIdentifier, FakeDp]
