"""Where PatternKa's compiled search spends its time, by function, with ``perf``.

numba's machine code carries no symbols ``perf`` can read. This script runs PatternKa's first
``MININGS`` minings on ``N`` Netflix-shaped records (``power_law_sets(N)``, k = 100, ``--threads``
threads, two by default), prints each mining's seconds, and at the end writes ``/tmp/perf-PID.map``, the map ``perf
report``
reads for code made at run time: each compiled function of the search (``compiled_kernels()``) at its address,
sized up to the next one (functions LLVM inlined count with their caller).

Code numba loads from its cache has no functions to list, so the search is compiled afresh into a
cache of this run's own (about a minute, before the minings) unless ``NUMBA_CACHE_DIR`` is set. Run
(``perf`` installed)::

    perf record -F 499 -o /tmp/perf.data .venv/bin/python benchmarks/profile_search.py 160000 3 [--threads 2] [--debug]
    perf report -i /tmp/perf.data --no-children --sort symbol

``--debug`` writes the searches' debug counts (Veil's loggers at DEBUG level) on stderr.

docs/setvalued.md ("Earlier generator") says what it showed on the records of the earlier generator.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import add_search_flags, search_options  # noqa: E402


def write_perf_map() -> int:
    """``/tmp/perf-PID.map`` for every compiled function of the search; returns how many."""
    import veil.engine.kernels.longest_dfs as search

    found = set()
    for dispatcher in search.compiled_kernels():
        for result in getattr(dispatcher, "overloads", {}).values():
            library = result.library
            for function in library._final_module.functions:
                if function.is_declaration:
                    continue
                address = library.get_pointer_to_function(function.name)
                if address:
                    found.add((address, function.name))
    entries = sorted(found)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for i, (address, symbol) in enumerate(entries):
            size = min(entries[i + 1][0] - address if i + 1 < len(entries) else 4096, 1 << 20)
            out.write(f"{address:x} {size:x} {symbol[:120]}\n")
    return len(entries)


class _Enough(Exception):
    pass


def main(n: int, minings: int, options) -> None:
    import veil.plugins.setvalued._patternka as patternka
    from synthetic import power_law_sets
    from veil.engine.kernels.longest_dfs import _warm

    _warm()
    sets = power_law_sets(n)
    mine, spent = patternka._mine, []

    def timed(*args, **kwargs):
        started = time.perf_counter()
        answer = mine(*args, **kwargs)
        spent.append(time.perf_counter() - started)
        if len(spent) >= minings:
            raise _Enough
        return answer

    patternka._mine = timed
    try:
        patternka.patternka_groups(sets, 100, options=options)
    except _Enough:
        pass
    finally:
        patternka._mine = mine
    print("minings' seconds", [round(s, 2) for s in spent], "total", round(sum(spent), 2))
    print("perf map:", write_perf_map(), "functions")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description="PatternKa's first minings, with a perf map of the compiled search")
    p.add_argument("n", type=int, help="Netflix-shaped records")
    p.add_argument("minings", type=int, help="minings to run")
    add_search_flags(p, threads=2)
    args = p.parse_args()
    import shutil
    import tempfile

    own = None
    if "NUMBA_CACHE_DIR" not in os.environ:  # (read when numba is first imported, in main)
        own = os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="veil-profile-")
    try:
        main(args.n, args.minings, search_options(args.threads, args.debug))
    finally:
        if own:
            shutil.rmtree(own, ignore_errors=True)
