"""Where PatternKa's compiled search spends its time, by function, with ``perf``.

numba's machine code carries no symbols ``perf`` can read. This script runs PatternKa's first
``MININGS`` minings on ``N`` Netflix-shaped records (``power_law_sets(N)``, k = 100, two threads),
prints each mining's seconds, and at the end writes ``/tmp/perf-PID.map``, the map ``perf report``
reads for code made at run time: each compiled function of ``engine/longest_dfs.py`` at its address,
sized up to the next one (functions LLVM inlined count with their caller).

Code numba loads from its cache has no functions to list, so the search is compiled afresh into a
cache of this run's own (about a minute, before the minings) unless ``NUMBA_CACHE_DIR`` is set. Run
(``perf`` installed)::

    perf record -F 499 -o /tmp/perf.data .venv/bin/python benchmarks/profile_search.py 160000 3
    perf report -i /tmp/perf.data --no-children --sort symbol

docs/setvalued.md ("Where a search's time goes") has what it showed.
"""

from __future__ import annotations

import os
import sys
import time


def write_perf_map() -> int:
    """``/tmp/perf-PID.map`` for every compiled function of the search; returns how many."""
    import veil.engine.kernels.longest_dfs as search

    found = set()
    for name in dir(search):
        dispatcher = getattr(search, name)
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


def main(n: int, minings: int) -> None:
    import veil.plugins.setvalued.patternka as patternka
    from synthetic import power_law_sets
    from veil.engine.kernels.longest_dfs import _warm

    os.environ.setdefault("VEIL_MINING_THREADS", "2")
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
        patternka.patternka_groups(sets, 100)
    except _Enough:
        pass
    finally:
        patternka._mine = mine
    print("minings' seconds", [round(s, 2) for s in spent], "total", round(sum(spent), 2))
    print("perf map:", write_perf_map(), "functions")


if __name__ == "__main__":
    if len(sys.argv) != 3 or not all(a.isdigit() for a in sys.argv[1:]):
        print("usage: profile_search.py N MININGS", file=sys.stderr)
        sys.exit(2)
    import shutil
    import tempfile

    own = None
    if "NUMBA_CACHE_DIR" not in os.environ:  # (read when numba is first imported, in main)
        own = os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="veil-profile-")
    try:
        main(int(sys.argv[1]), int(sys.argv[2]))
    finally:
        if own:
            shutil.rmtree(own, ignore_errors=True)
