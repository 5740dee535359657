"""PatternKa at k = 100 on the Netflix-shaped synthetic records at growing sizes (issue 11's scale goal).

Each size runs in its own child process (so its peak memory is its own): ``power_law_sets(n)``
(n records over 4,500 items, seed 0, mean 56 items a record; n = 410,000 is the Netflix shape), grouped by
``patternka_groups`` with the defaults (C search when pyfim is installed, cache of 32 patterns).
Prints seconds, groups, minings, GCP and peak resident memory per size, and the growth of time
from one size to the next (the ratio the scale goal depends on).

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_patternka_scale.py [N …]`` (default 10000 20000 40000).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, markdown_table  # noqa: E402

pytestmark = pytest.mark.benchmark


def one(n: int, k: int) -> dict:
    from veil.engine import power_law_sets
    from veil.plugins.patternka import information_loss, patternka_groups

    sets = power_law_sets(n)
    start = time.perf_counter()
    g = patternka_groups(sets, k)
    seconds = time.perf_counter() - start
    return {"n": n, "seconds": seconds, "groups": g.n_groups, "minings": g.minings,
            "gcp": information_loss(sets, g.groups, g.centres), "items_held": int(sets.nnz),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(sizes=(10_000, 20_000, 40_000), k: int = 100):
    rows, last = [], None
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(n), str(k)], capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-2000:])
            break
        r = json.loads(out.stdout.strip().splitlines()[-1])
        growth = "" if last is None else f"{r['seconds'] / last['seconds']:.1f}× for {n / last['n']:.1f}× records"
        rows.append([f"{n:,}", f"{r['items_held']:,}", f"{r['seconds']:.1f}", r["groups"], r["minings"],
                     f"{r['gcp']:.3f}", f"{r['peak_mib']:.0f}", growth])
        last = r
        print(rows[-1], flush=True)
    print(machine())
    print(markdown_table(["records", "items held", "seconds", "groups", "minings", "GCP", "peak MiB", "time growth"],
                         rows))


def test_patternka_scale():
    main((5_000, 10_000))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        main(tuple(int(a) for a in sys.argv[1:]) or (10_000, 20_000, 40_000))
