"""PatternKa at k = 100 on the Netflix-shaped synthetic records at growing sizes, up to the
scale PatternKa is meant for.

Each size runs in its own child process (so its peak memory is its own): ``power_law_sets(n)``
(n records over 4,496 items, seed 0, shaped by paper 002's Table 6: 13.4 items a record on average,
2,060 at most; n = 410,201 is the full size; see ``benchmarks/synthetic.py``), grouped by
``patternka_groups`` with the defaults. Each line also prints the records' shape (items held, mean and
largest record, the Zipf exponent of the item counts). Two miners, in the same run:

* **new**: the defaults (``longest_itemsets(backend="auto")``: the compiled length-bounded search of
  ``engine/kernels/longest_dfs.py`` from ``DFS_ROWS`` records on, when numba is installed);
* **old**: the same with the compiled search switched off (pyfim's falling-floor search throughout), on
  the sizes given with ``--old`` only, each stopped after ``--old-timeout`` seconds; with
  ``--baseline no-bounds``, the compiled search but without the length bounds carried from one mining to
  the next (``_Tuning(carry_bounds=False)``); with ``--baseline filled-cache``, every mining
  searching on until the cache is full (``_Tuning(greedy_floor=False)``); with ``--baseline
  deep-bounds``, bounds that say each item's longest pattern (``_Tuning(deep_bounds=True)``), and
  with ``--baseline shallow-bounds``, bounds that say only what each mining needed, not two lengths
  below it (``_Tuning(deep_bounds=False)``); with ``--baseline cut-cache``, the cache holding
  the ``cache_size`` longest patterns only, not every one as long as the last of them
  (``_Tuning(all_ties=False)``); with ``--baseline narrow-masks``, the compiled search keeping
  bit masks for branches of at most 4 words of candidates (256) and item lists above
  (``SearchOptions(mask_words=4)``); with ``--baseline small-cache``, PatternKa's cache within 64 MiB
  (``patternka.CACHE_BYTES``).

``--threads N`` (default: every core) is how many threads each search may use, new and old alike;
``--debug`` writes the searches' and the cache's debug counts (Veil's loggers at DEBUG level) on stderr.

Prints seconds, groups, minings, GCP, peak resident memory (``ru_maxrss``: the records, the miner and
everything else of the child, from the method's start: drawing the records peaks higher, so the child
resets its peak once they exist, on Linux), the time growth from one size to the next, the ratio old / new, and
progress lines (groups made, records left, elapsed) every 60 s on stderr, so a long run shows how
far it got.

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_patternka_scale.py [N …] [--k 100] [--old N …]
[--old-timeout 900] [--baseline pyfim|no-bounds|filled-cache|deep-bounds|shallow-bounds|cut-cache|narrow-masks|
small-cache] [--threads N] [--debug]``
(default sizes 10000 20000 40000, old on 10000 20000);
``… bench_patternka_scale.py --one N K [--split] [--threads N] [--debug]``: one size in this process (the
full size: ``--one 410201 100``); with ``--split``, the seconds of the searches and of the parts of the run
around them (the caches, their records, the groups' removal) on stderr at the end;
with ``--top-down``, the top-down baseline (``top_down_groups``) instead of PatternKa;
``… bench_patternka_scale.py --shape [N]``: the statistics of ``power_law_sets(N)`` (default the full size)
beside Table 6's, and the Zipf exponent of BMS-WebView-2's item counts that the generator follows;
``… bench_patternka_scale.py --versus N [K …]``: PatternKa and top-down on the same N records at each K
(default 100), each in its own child process;
``… bench_patternka_scale.py --datasets [SECONDS] [--threads N] [--debug]``: BMS-WebView-2 and FIMI retail
at k = 20 and 50, new and old, each stopped after SECONDS (default 300, the reproduction's budget).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import add_search_flags, machine, markdown_table, search_options, timed  # noqa: E402

pytestmark = pytest.mark.benchmark


DATASETS = {
    "bms2": ("BMS-WebView-2", "bms_webview_2/BMS2_itemset_mining.txt"),
    "retail": ("FIMI retail", "fimi_retail/retail.dat"),
}


def load(n: int | str):
    """The Netflix-shaped records of n rows, or one of ``DATASETS`` by its key."""
    from synthetic import power_law_sets
    from veil.engine import SetValued, read_transactions

    if isinstance(n, str):
        from _bench import dataset

        return SetValued.from_binary(read_transactions(dataset(DATASETS[n][1])))
    return power_law_sets(n)


def shape(sets) -> dict:
    """The statistics Table 6 gives (records, items held, largest and mean record) and the Zipf exponent of
    the item counts."""
    from synthetic import zipf_exponent

    lengths, counts = sets.row_lengths(), sets.item_counts()
    return {
        "records": sets.n_rows,
        "items": int((counts > 0).sum()),
        "max_items": int(lengths.max()),
        "mean_items": float(lengths.mean()),
        "zipf": zipf_exponent(counts[counts > 0]),
    }


def shape_line(r: dict) -> str:
    return (
        f"{r['records']:,} records, {r['items']:,} items held, {r['mean_items']:.2f} items a record on "
        f"average, {r['max_items']:,} at most, item counts' Zipf exponent {r['zipf']:.3f}"
    )


def print_shape(n: int):
    """Table 6 beside ``power_law_sets(n)``'s statistics, and BMS-WebView-2's item counts' exponent."""
    from collections import Counter

    from _bench import dataset
    from synthetic import COUNTS_EXPONENT, EXPONENT, NETFLIX, length_law, zipf_exponent

    got = shape(load(n))
    mu, sigma = length_law(NETFLIX["mean_items"], NETFLIX["max_items"], NETFLIX["records"])
    rows = [
        ["records", f"{NETFLIX['records']:,}", f"{got['records']:,}"],
        ["items held", f"{NETFLIX['items']:,}", f"{got['items']:,}"],
        ["average record", NETFLIX["mean_items"], f"{got['mean_items']:.2f}"],
        ["largest record", f"{NETFLIX['max_items']:,}", f"{got['max_items']:,}"],
        ["item counts' Zipf exponent", f"(BMS-WebView-2: {COUNTS_EXPONENT})", f"{got['zipf']:.3f}"],
    ]
    print(markdown_table(["statistic", "paper 002, Table 6", f"power_law_sets({n})"], rows))
    print(f"record lengths: log-normal mu {mu:.4f}, sigma {sigma:.4f}; draws' Zipf exponent {EXPONENT}")
    path = dataset(DATASETS["bms2"][1])
    if path is not None:
        counts = Counter()
        for line in path.read_text().splitlines():
            counts.update(set(line.split()))
        print(
            f"BMS-WebView-2: {len(counts):,} items, "
            f"Zipf exponent of the item counts {zipf_exponent(list(counts.values()))}"
        )


def fresh_peak() -> None:
    """Start the process's peak resident memory afresh (Linux: 5 written to ``/proc/self/clear_refs``, which
    resets ``ru_maxrss`` too), so that the peak reported is that of the records held and the method, not of
    drawing the records, which peaks higher than either."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def one(
    n: int | str,
    k: int,
    old: bool,
    carry_bounds: bool = True,
    greedy_floor: bool = True,
    deep_bounds: bool | int | None = None,
    all_ties: bool = True,
    options=None,
    top_down: bool = False,
) -> dict:
    import veil.engine.kernels.longest as longest
    from veil.engine import SearchOptions
    from veil.plugins.setvalued._grouping import information_loss
    from veil.plugins.setvalued._patternka import _Tuning, patternka_groups

    if old:
        longest.DFS_ROWS = 1 << 62  # never the compiled search: pyfim's path as before
    from veil.engine.kernels.longest_dfs import _warm, have_numba

    if have_numba():
        _warm()  # numba compiles once per installation (then its cache is loaded): not part of the timing
    sets = load(n)
    fresh_peak()
    start = time.perf_counter()

    state = ["no group yet"]

    def heartbeat():  # a mining can take long: say every 60 s how far the run is
        while not done.wait(60):
            print(
                f"[{n} {'old' if old else 'new'}] {time.perf_counter() - start:.0f} s: {state[0]}, "
                f"load average {os.getloadavg()}",
                file=sys.stderr,
                flush=True,
            )

    def progress(fraction, text):
        state[0] = text

    done = threading.Event()
    threading.Thread(target=heartbeat, daemon=True).start()
    deep = {} if deep_bounds is None else {"deep_bounds": deep_bounds}  # None: PatternKa's default
    tuning = _Tuning(carry_bounds=carry_bounds, greedy_floor=greedy_floor, all_ties=all_ties, **deep)
    if top_down:
        from veil.plugins.setvalued.top_down import top_down_groups

        g = top_down_groups(sets, k, progress=progress)
    else:
        g = patternka_groups(
            sets,
            k,
            progress=progress,
            tuning=tuning,
            options=options or SearchOptions(),
        )
    done.set()
    seconds = time.perf_counter() - start
    return {
        "n": n,
        "records": sets.n_rows,
        "seconds": seconds,
        "groups": g.n_groups,
        "minings": g.minings,
        "gcp": information_loss(sets, g.groups, g.centres),
        "items_held": int(sets.nnz),
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "method": "top-down" if top_down else "patternka",
        "shape": shape(sets),
    }


def split_time():
    """Time the parts of the run outside the searches (``--split``): each function below is wrapped, and
    its seconds and calls are printed on stderr when the run ends."""
    import atexit

    import veil.engine.kernels.longest_dfs as dfs
    import veil.plugins.setvalued._patternka as patternka

    spent, calls = {}, {}
    for owner, name, label in (
        (patternka, "_mine", "minings"),
        (dfs, "_search", "searches with their setup"),
        (dfs, "_run", "searches (their threads)"),
        (patternka._Cache, "__init__", "caches made"),
        (patternka._Cache, "_holders", "caches: their records found"),
        (patternka._Cache, "remove", "groups removed from caches"),
        (patternka._Cache, "members", "groups' members"),
        (patternka, "_centres", "centres"),
    ):
        timed(owner, name, spent, label, calls)

    @atexit.register
    def report():
        for label in sorted(spent, key=lambda key: -spent[key]):
            print(f"{label:30s} {spent[label]:9.1f} s {calls[label]:6d} calls", file=sys.stderr, flush=True)


BASELINE = [
    "--old-path"
]  # what "old" means: pyfim's path, or ["--no-bounds"], ["--filled-cache"], ["--deep-bounds"], …
FLAGS: list[str] = []  # --threads N and --debug, for every child


def run_child(n: int, k: int, old: bool, timeout: float | None, top_down: bool = False) -> dict | str:
    args = [sys.executable, __file__, "--one", str(n), str(k)] + (BASELINE if old else []) + FLAGS
    args += ["--top-down"] if top_down else []
    print(f"running {n} k={k} {'old' if old else 'new'}, load average {os.getloadavg()}", file=sys.stderr, flush=True)
    try:
        out = subprocess.run(args, stdout=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"not finished in {timeout:.0f} s"
    if out.returncode:
        return f"failed (exit {out.returncode})"
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(sizes=(10_000, 20_000, 40_000), k: int = 100, old_sizes=(10_000, 20_000), old_timeout: float = 900.0):
    rows, last = [], None
    for n in sizes:
        r = run_child(n, k, False, None)
        if isinstance(r, str):
            print(n, r)
            break
        growth = "" if last is None else f"{r['seconds'] / last['seconds']:.1f}× for {n / last['n']:.1f}× records"
        ratio = ""
        if n in old_sizes:
            o = run_child(n, k, True, old_timeout)
            if isinstance(o, str):
                ratio = f"old {o}"
            else:
                same = (o["groups"], round(o["gcp"], 9)) == (r["groups"], round(r["gcp"], 9))
                ratio = f"old {o['seconds']:.1f} s ({o['seconds'] / r['seconds']:.1f}×){'' if same else ' DIFFERENT'}"
        rows.append(
            [
                f"{n:,}",
                f"{r['items_held']:,}",
                f"{r['seconds']:.1f}",
                r["groups"],
                r["minings"],
                f"{r['gcp']:.3f}",
                f"{r['peak_mib']:.0f}",
                growth,
                ratio,
            ]
        )
        last = r
        print(rows[-1], "load average", os.getloadavg(), flush=True)
        print("  shape:", shape_line(r["shape"]), flush=True)
    print(machine())
    print(
        markdown_table(
            [
                "records",
                "items held",
                "seconds",
                "groups",
                "minings",
                "GCP",
                "peak MiB",
                "time growth",
                "old path (× new)",
            ],
            rows,
        )
    )


#: Paper 002, Table 7: GCP of PatternKa on the Netflix part at each k.
PAPER_GCP = {100: 0.798, 500: 0.838}


def versus(n: int, ks=(100,)):
    """PatternKa and top-down on ``power_law_sets(n)`` at each k, each in its own child process."""
    rows = []
    for k in ks:
        for top_down in (False, True):
            r = run_child(n, k, False, None, top_down)
            if isinstance(r, str):
                rows.append([k, "top-down" if top_down else "patternka", r, "", "", "", ""])
                continue
            rows.append(
                [
                    k,
                    r["method"],
                    f"{r['seconds']:.1f}",
                    r["groups"],
                    f"{r['gcp']:.3f}",
                    f"{r['peak_mib']:.0f}",
                    PAPER_GCP.get(k, "") if not top_down else "",
                ]
            )
            print(rows[-1], "load average", os.getloadavg(), flush=True)
            print("  shape:", shape_line(r["shape"]), flush=True)
    print(machine())
    print(
        markdown_table(
            ["k", "method", "seconds", "groups", "GCP", "peak MiB from the method's start", "paper's GCP (Table 7)"],
            rows,
        )
    )


def datasets(keys=("bms2", "retail"), ks=(20, 50), timeout: float = 300.0):
    """PatternKa on real set-valued data, new and old miner, each stopped after ``timeout`` seconds."""
    rows = []
    for key in keys:
        for k in ks:
            line = [DATASETS[key][0], k]
            for old in (False, True):
                r = run_child(key, k, old, timeout)
                line += (
                    [r] if isinstance(r, str) else [f"{r['seconds']:.1f} s, {r['groups']} groups, GCP {r['gcp']:.3f}"]
                )
            rows.append(line)
            print(rows[-1], "load average", os.getloadavg(), flush=True)
    print(markdown_table(["data", "k", "new", "old"], rows))


def test_patternka_scale():
    main((5_000, 10_000), old_sizes=(5_000,))


def child_flags(argv: list[str]) -> tuple[list[str], object]:
    """The arguments without ``--threads N`` and ``--debug``, and the search options they say (which
    :data:`FLAGS` then hands on to every child)."""
    p = argparse.ArgumentParser(add_help=False)
    add_search_flags(p)
    known, rest = p.parse_known_args(argv)
    FLAGS[:] = (["--threads", str(known.threads)] if known.threads else []) + (["--debug"] if known.debug else [])
    return rest, search_options(known.threads, known.debug)


if __name__ == "__main__":
    argv, options = child_flags(sys.argv[1:])
    if argv and argv[0] == "--one":
        size = argv[1]
        if "--narrow-masks" in argv:
            options = dataclasses.replace(options, mask_words=4)
        if "--small-cache" in argv:
            import veil.plugins.setvalued._patternka as patternka

            patternka.CACHE_BYTES = 64 << 20
        if "--split" in argv:
            split_time()
        print(
            json.dumps(
                one(
                    int(size) if size.isdigit() else size,
                    int(argv[2]),
                    "--old-path" in argv,
                    "--no-bounds" not in argv,
                    "--filled-cache" not in argv,
                    True if "--deep-bounds" in argv else False if "--shallow-bounds" in argv else None,
                    "--cut-cache" not in argv,
                    options,
                    "--top-down" in argv,
                )
            )
        )
    elif argv and argv[0] == "--shape":
        print_shape(int(argv[1]) if len(argv) > 1 else 410_201)
    elif argv and argv[0] == "--versus":
        versus(int(argv[1]), tuple(int(k) for k in argv[2:]) or (100,))
    elif argv and argv[0] == "--datasets":
        datasets(timeout=float(argv[1]) if len(argv) > 1 else 300.0)
    else:
        p = argparse.ArgumentParser()
        p.add_argument("sizes", nargs="*", type=int, default=[10_000, 20_000, 40_000])
        p.add_argument("--k", type=int, default=100)
        p.add_argument("--old", nargs="*", type=int, default=[10_000, 20_000])
        p.add_argument("--old-timeout", type=float, default=900.0)
        p.add_argument(
            "--baseline",
            choices=[
                "pyfim",
                "no-bounds",
                "filled-cache",
                "deep-bounds",
                "shallow-bounds",
                "cut-cache",
                "narrow-masks",
                "small-cache",
            ],
            default="pyfim",
        )
        add_search_flags(p)  # (already taken by child_flags; listed for --help)
        a = p.parse_args(sys.argv[1:])
        if a.baseline != "pyfim":
            BASELINE[:] = ["--" + a.baseline]
        main(tuple(a.sizes), a.k, tuple(a.old), a.old_timeout)
