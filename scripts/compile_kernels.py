"""Compile Veil's numba kernels at set-up, so that no user's first run waits for the compiler.

The longest-pattern search of PatternKa and Maximal (``veil.engine.kernels.longest_dfs``, in parts), global
recoding's roll-up of classes (``veil.engine.kernels.grouping``) and δ-disclosure's judgement of groups
(``veil.plugins.anonymisation.sensitive_models``), Mondrian's rounds under k-anonymity
(``veil.plugins.anonymisation._median_cuts``) and rank swapping's pairing of ranks
(``veil.plugins.perturbation.rank_swap``) are compiled by numba on first use
and kept in numba's cache beside their modules. ``make run`` and ``make test`` run
this script once after installing (the environment's stamp): a PatternKa and a Maximal run on
generated baskets, the roll-up, then the search's other paths on small inputs (maximal and all patterns, one
thread and several, wide records, within a time limit), saying what it compiles; a later run loads
the compiled code from the cache (``benchmarks/bench_first_run.py`` checks that a first run after
it compiles nothing).

Run by hand: ``.venv/bin/python scripts/compile_kernels.py`` (``--check`` compiles nothing and exits 1
when a kernel would still have to be compiled). ``--stamp FILE`` touches FILE once every kernel is
compiled (``make test`` waits for that; ``make run`` does not). ``--background`` returns at once and
compiles in a process of its own, at a lower priority, writing what it says to FILE.log beside the
stamp; a second one started while the first runs leaves at once (a lock beside the stamp). Until the
kernels are in the cache, a run that needs one compiles it itself on first use.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def kernels():
    """The numba dispatchers of the search and of global recoding's roll-up (empty without numba)."""
    from veil.engine.kernels import grouping, longest_dfs

    if not longest_dfs.have_numba():
        return []
    from veil.plugins.anonymisation import _median_cuts, _microaggregation, _suppression, sensitive_models
    from veil.plugins.perturbation import rank_swap

    cells = [_microaggregation._kernel(name) for name in ("steps", "moves")] + [_suppression.gains_kernel()]
    cuts = [_median_cuts.kernels()[name] for name in ("_start", "_round", "_groups")]
    rollup = [grouping.compiled(), grouping.compiled_units()]
    rollup += [sensitive_models._kernel(name) for name in ("_log_ratios", "_held_mass")]
    return [*longest_dfs.compiled_kernels(), *rollup, rank_swap._swap_kernel(), *cells, *cuts]


def paths():
    """(what, call) for each path a run takes through the search."""
    from veil.engine.kernels.longest_dfs import longest_by_dfs
    from veil.engine.kernels.options import SearchOptions

    rng = np.random.default_rng(0)
    m = sp.csr_matrix(rng.random((400, 30)) < 0.3)
    m.sort_indices()
    wide = sp.csr_matrix(rng.random((400, 150)) < 0.08)  # more candidates than one mask word
    wide.sort_indices()
    return [
        ("PatternKa and Maximal on 12,000 generated baskets", lambda: first_runs(0)),
        ("global recoding's roll-up of classes", roll_up),
        ("δ-disclosure's judgement of groups", delta_disclosure),
        ("rank swapping's pairing of ranks", swap_ranks),
        ("microaggregation's groups and local suppression's blanks", cell_methods),
        ("Mondrian's rounds under k-anonymity", mondrian_rounds),
        ("maximal itemsets, one thread", lambda: longest_by_dfs(m, 5, 20, True, options=SearchOptions(threads=1))),
        (
            "all frequent itemsets, one thread",
            lambda: longest_by_dfs(m, 5, 20, False, options=SearchOptions(threads=1)),
        ),
        ("maximal itemsets, two threads", lambda: longest_by_dfs(m, 5, 20, True, options=SearchOptions(threads=2))),
        ("wide records", lambda: longest_by_dfs(wide, 4, 20, True, options=SearchOptions(threads=1))),
        (
            "within a time limit",
            lambda: longest_by_dfs(
                m, 5, 20, True, max_seconds=600.0, check=lambda: None, options=SearchOptions(threads=1)
            ),
        ),
    ]


def baskets(seed: int, n: int = 12_000, items: int = 60):
    """Generated baskets with a power-law item popularity, enough records for the compiled search."""
    from veil.engine import BinaryMatrix

    rng = np.random.default_rng(seed)
    p = 0.6 / np.arange(1, items + 1) ** 0.7
    return BinaryMatrix.from_dense((rng.random((n, items)) < p).astype(np.uint8), labels=rng.choice([1, -1], n))


def first_runs(seed: int) -> None:
    """A PatternKa run and a Maximal run, as a user's first runs would make them."""
    from veil.engine import Context, PluginCall, RunSpec, execute, make_registry

    registry, data = make_registry(), baskets(seed)
    for method, model in (("patternka", "set-k-anonymity:k=5"), ("maximal", "k-ac:k=30")):
        execute(registry, data, RunSpec(PluginCall.parse(method), PluginCall.parse(model), seed, ()), Context(seed))


def roll_up() -> None:
    """Classes merged both ways global recoding merges them (a small key space counted densely, a
    large one hashed), and their sensitive values counted."""
    from veil.engine import count_units, merge_classes, warm_kernels

    warm_kernels()  # both kernels loaded (compiled when missing): the calls below take the compiled path
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 50, (3, 2_000)).astype(np.int32)
    size = np.ones(2_000, dtype=np.int64)
    inverse, first, _, _ = merge_classes(codes, [None, np.arange(50) // 10, None], [50, 5, 50], size)  # dense keys
    merge_classes(codes, [None, None, None], [50, 50, 50], size)  # 125,000 keys: hashed
    sensitive = rng.integers(-1, 5, 2_000)
    count_units(len(first), np.arange(2_000), sensitive, size, 5, inverse)  # the classes' sensitive counts


def delta_disclosure() -> None:
    """δ-disclosure's compiled judgement of groups, on counts laid out both ways a search holds them."""
    from veil.engine import GroupView, warm_kernels
    from veil.plugins.anonymisation.sensitive_models import group_log_ratios, held_mass

    warm_kernels()  # numba loaded: the judgement below takes the compiled path
    counts = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]])
    for layout in (counts, np.asfortranarray(counts)):
        view = GroupView.from_codes(
            np.array([0, 0, 0, 1, 1, 1, 1]),
            np.array([0, 0, 1, 1, 1, 1, 2]),
            np.array([2, 4, 1]) / 7,
            ("a", "b", "c"),
            counts=layout,
        )
        group_log_ratios(view, 2)
        held_mass(view)


def swap_ranks() -> None:
    """A column rank-swapped within a window, the pairing loop compiled."""
    from veil.plugins.perturbation.rank_swap import swap_column

    swap_column(np.random.default_rng(0).random(1_000), 5.0, np.random.default_rng(1))


def cell_methods() -> None:
    """Microaggregation (MDAV and its improvement) and local suppression on a small table, their
    kernels compiled."""
    import pandas as pd

    from veil.engine import PluginCall, RunSpec, Table, execute, make_registry

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"age": rng.integers(18, 90, 300), "zip": rng.choice(list("abcdefgh"), 300), "sex": rng.choice(list("fm"), 300)}
    )
    table = Table.from_frame(frame, roles=dict.fromkeys(frame.columns, "quasi-identifier"))
    registry, k3 = make_registry(), PluginCall("k-anonymity", {"k": 3})
    for method, params in (
        ("microaggregation", {}),
        ("microaggregation", {"variant": "variable", "categorical": "strata"}),
        ("local-suppression", {}),
    ):
        execute(registry, table, RunSpec(PluginCall(method, params), k3))


def mondrian_rounds() -> None:
    """Mondrian under k-anonymity on a small table (numbers, a set-valued and a hierarchy-cut category),
    its compiled rounds taken (numba is loaded here)."""
    import pandas as pd

    from veil.engine import PluginCall, RunSpec, Table, execute, make_registry

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"age": rng.integers(18, 90, 300), "zip": rng.choice(list("abcdefgh"), 300), "sex": rng.choice(list("fm"), 300)}
    )
    table = Table.from_frame(frame, roles=dict.fromkeys(frame.columns, "quasi-identifier"))
    registry, k3 = make_registry(), PluginCall("k-anonymity", {"k": 3})
    for categories in ("set", "hierarchy"):
        execute(registry, table, RunSpec(PluginCall("mondrian", {"categories": categories}), k3))


def compiled_now(found) -> int:
    """How many specialisations the dispatchers compiled in this process (cache misses)."""
    return sum(sum(d.stats.cache_misses.values()) for d in found)


def option(argv: list[str], name: str) -> str | None:
    """The value after ``name`` in ``argv`` (None when absent)."""
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def in_background(stamp: Path) -> int:
    """Start the compilation in a process of its own, at a lower priority, its words in ``stamp``.log;
    return at once."""
    log = stamp.with_name(stamp.name + ".log")
    with open(log, "a") as out:
        subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--stamp", str(stamp), "--locked"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives `make run`'s shell and the window's Ctrl+C
            preexec_fn=lambda: os.nice(10),
        )
    print(
        f"compiling Veil's kernels in the background ({log}); until they are ready, a run that needs one "
        f"compiles it itself",
        flush=True,
    )
    return 0


def main(argv: list[str]) -> int:
    stamp = option(argv, "--stamp")
    if "--background" in argv:
        return in_background(Path(stamp or ".kernels"))
    if "--locked" in argv:  # one compilation at a time: a second leaves while the first holds the lock
        import fcntl

        lock = open(Path(stamp).with_name(Path(stamp).name + ".lock"), "w")  # noqa: SIM115 (held to the end)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print("another process is compiling Veil's kernels", flush=True)
            return 0
    found = kernels()
    if not found:
        print("numba is not installed: the search runs as plain Python, nothing to compile")
        if stamp:
            Path(stamp).touch()
        return 0
    check = "--check" in argv
    steps = paths()
    started = time.perf_counter()
    for i, (what, call) in enumerate(steps, start=1):
        if not check:
            print(f"compiling Veil's kernels ({i} of {len(steps)}: {what})…", flush=True)
        call()
    misses = compiled_now(found)
    if check:
        print(f"{misses} kernel specialisation{'s' if misses != 1 else ''} compiled (0: all from the cache)")
        return 1 if misses else 0
    print(
        f"compiled in {time.perf_counter() - started:.0f} s ({misses} specialisations); later runs load them "
        f"from numba's cache",
        flush=True,
    )
    if stamp:
        Path(stamp).touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
