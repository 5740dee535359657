"""Global recoding under privacy models that read the sensitive column, with a suppression limit, on
ARX's adult (30,162 rows, ARX's hierarchies): the tasks of ARX's optimum tests, in process, CPU seconds.

Each task marks ``occupation`` sensitive and the other eight columns quasi-identifiers (the first
task all nine), runs ``execute`` (hierarchies, the search, the release and its privacy check) and
prints its CPU seconds (``time.process_time``, the least of ``--repeats`` runs: the machine may be
shared), in brackets those of the search alone (``Search.run``), the transformations checked and the
optimum found. It does so on both of Veil's paths, each in a process of its own: ``numpy`` (what a
``veil run`` takes: loading numba would cost more than it saves) and, when numba is installed,
``compiled`` (the kernels loaded first, as the desktop's worker loads them while its user is choosing
a run); both must find the same optima. Run::

    .venv/bin/python benchmarks/bench_sensitive_recoding.py [--repeats N] [--rounds R] [--profile TASK]
    .venv/bin/python benchmarks/bench_sensitive_recoding.py --repeats 5 --rounds 3 --arx "java -cp CLASSPATH Runner"

``--profile TASK`` (a task's number, from 1) prints cProfile's twenty-five costliest functions of that
task's whole run instead. ``--arx COMMAND`` also runs every task through ARX in the same run: COMMAND
(split as a shell would) is a Java runner outside this repository (docs/benchmarks.md says how it was
built) called as ``COMMAND DATA.csv REPEATS TASK…``, a task written ``MODELS|SUPPRESSION|METRIC|SENSITIVE``
(models joined by ``+``, ``-`` for no sensitive column), which prints one JSON object a line: ``cpu``
(the least process CPU seconds of ARX's ``anonymize()`` over the repetitions, in one warm JVM),
``first_cpu`` (that of the warm-up run before them, which compiles ARX's code: shown in brackets),
``levels``, ``suppressed`` and ARX's ``value``. ``--rounds R`` runs ARX and Veil's paths in turn R
times, so that a busy spell of a shared machine falls on every tool alike; each figure is the least
over every round. The table then shows both tools' CPU seconds, optima and
values side by side (for ``loss`` beside ARX's value Veil's ``arx-loss`` at its optimum, ARX's Loss as
ARX aggregates it), and whether the optima agree. The dataset is read from ``../shared/datasets`` and
never copied.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import shlex
import subprocess
import sys
import time

from _bench import dataset, machine, markdown_table
from bench_global_recoding import adult_arx
from veil.engine import PluginCall, Role, RunSpec, execute, make_registry, warm_kernels
from veil.plugins.anonymisation import _lattice

REGISTRY = make_registry()
SENSITIVE = "occupation"

# (models, suppression, metric, whether occupation is sensitive)
TASKS = [
    (["k-anonymity:k=5"], 0.04, "loss", False),
    (["k-anonymity:k=5", "t-closeness:t=0.2"], 0.04, "loss", True),
    (["l-diversity:variant=recursive,c=4,l=5"], 0.05, "entropy", True),
    (["k-anonymity:k=5", "l-diversity:variant=entropy,l=3"], 0.04, "loss", True),
    (["k-anonymity:k=5", "beta-likeness:beta=1"], 0.04, "loss", True),
    (["k-anonymity:k=5", "delta-disclosure:delta=1.5"], 0.04, "loss", True),
]


def table_for(sensitive: bool):
    table = adult_arx()
    if table is None:
        return None
    return table.with_roles({SENSITIVE: Role.SENSITIVE}) if sensitive else table


def spec_for(models, suppression: float, metric: str) -> RunSpec:
    return RunSpec(
        PluginCall("global-recoding", {"suppression": suppression, "metric": metric}),
        [PluginCall.parse(m) for m in models],
    )


def run(task):
    models, suppression, metric, sensitive = task
    table = table_for(sensitive)
    spec = spec_for(models, suppression, metric)
    cpu = time.process_time()
    result = execute(REGISTRY, table, spec)
    return time.process_time() - cpu, result


class SearchClock:
    """The CPU seconds spent in the lattice search itself (``Search.run``), beside the whole run's: what
    ARX's ``anonymize()`` does, without the release and its privacy check."""

    def __init__(self):
        self.seconds = 0.0
        original = _lattice.Search.run

        def timed(search):
            started = time.process_time()
            try:
                return original(search)
            finally:
                self.seconds += time.process_time() - started

        _lattice.Search.run = timed


def veil_tasks(path: str, repeats: int) -> None:
    """Every task ``repeats`` times in this process on one path (``compiled``: the kernels loaded first,
    as the desktop's worker loads them; ``numpy``: as a ``veil run`` without them); a JSON line each."""
    if path == "compiled" and not warm_kernels():
        raise SystemExit("numba is not installed: there is no compiled path to measure")
    clock = SearchClock()
    for task in TASKS:
        runs = []
        for _ in range(repeats):
            clock.seconds = 0.0
            cpu, result = run(task)
            runs.append((cpu, clock.seconds, result))
        cpu, search, result = min(runs, key=lambda r: r[0])
        gen = result.release.details["generalisation"]
        line = {
            "cpu": cpu,
            "search": min(r[1] for r in runs),
            "checked": gen.get("searched_nodes", 0),
            "levels": {c: int(v) for c, v in gen["levels"].items()},
            "suppressed": gen["suppressed_records"],
            "value": gen["loss"],
            "arx_loss": gen.get("also", {}).get("arx-loss"),
        }
        print(json.dumps(line), flush=True)


def run_veil(path: str, repeats: int) -> list[dict]:
    """:func:`veil_tasks` in a fresh process (the two paths cannot share one: numba stays loaded)."""
    argv = [sys.executable, __file__, "--path", path, "--repeats", str(repeats)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"Veil's {path} run failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def arx_task(task) -> str:
    """A task as the ARX runner reads it: MODELS|SUPPRESSION|METRIC|SENSITIVE."""
    models, suppression, metric, sensitive = task
    return f"{'+'.join(models)}|{suppression}|{metric}|{SENSITIVE if sensitive else '-'}"


def run_arx(command: str, repeats: int) -> list[dict]:
    """Every task through the ARX runner, one JVM; its JSON line for each, in task order."""
    csv = dataset("adult_arx") / "adult.csv"
    argv = [*shlex.split(command), str(csv), str(repeats), *(arx_task(t) for t in TASKS)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the ARX runner failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(lines) != len(TASKS):
        raise SystemExit(f"the ARX runner printed {len(lines)} results for {len(TASKS)} tasks")
    return lines


def levels_text(levels: dict) -> str:
    return ";".join(f"{c}:{v}" for c, v in levels.items())


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def least(rounds: list[list[dict]], key: str = "cpu") -> list[dict]:
    """Task by task, the line of the round with the least ``key``."""
    return [min(lines, key=lambda line: line[key]) for lines in zip(*rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=int, metavar="TASK", help="cProfile one task's whole run (from 1)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each task; the least CPU time counts")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every tool and path in turn")
    parser.add_argument("--arx", metavar="COMMAND", help="the ARX runner's command, to run the same tasks beside")
    parser.add_argument("--path", choices=("numpy", "compiled"), help=argparse.SUPPRESS)  # a round's own process
    args = parser.parse_args()
    repeats = max(args.repeats, 1)
    if args.path:
        veil_tasks(args.path, repeats)
        return
    if args.profile:
        task = TASKS[args.profile - 1]
        profile = cProfile.Profile()
        profile.enable()
        run(task)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    if table_for(False) is None:
        print("adult_arx not found under ../shared/datasets")
        return
    paths = ["numpy", "compiled"] if warm_kernels_available() else ["numpy"]
    print(f"load average {load()}, {machine()['cpu']}", flush=True)
    arx, veil = [], {p: [] for p in paths}
    for number in range(1, max(args.rounds, 1) + 1):
        if args.arx:
            arx.append(run_arx(args.arx, repeats))
            print(f"round {number}: ARX done, load average {load()}", flush=True)
        for path in paths:
            veil[path].append(run_veil(path, repeats))
            print(f"round {number}: Veil's {path} path done, load average {load()}", flush=True)
    mine = {p: least(veil[p]) for p in paths}
    searched = {p: least(veil[p], "search") for p in paths}
    theirs = least(arx) if arx else None
    rows = []
    for number, task in enumerate(TASKS, 1):
        models, suppression, metric, _ = task
        ours = mine["numpy"][number - 1]
        for p in paths[1:]:
            other = mine[p][number - 1]
            if (other["levels"], other["checked"]) != (ours["levels"], ours["checked"]):
                raise SystemExit(f"task {number}: the {p} path found {other['levels']}, numpy {ours['levels']}")
        row = [number, " + ".join(models), f"{suppression:.0%}", metric]
        if theirs is not None:
            first = min(r[number - 1].get("first_cpu", math.nan) for r in arx)
            row.append(f"{theirs[number - 1]['cpu']:.2f} ({first:.2f})")
        for p in paths:
            row.append(f"{mine[p][number - 1]['cpu']:.2f} ({searched[p][number - 1]['search']:.2f})")
        row += [
            f"{ours['checked']:,}",
            levels_text(ours["levels"]),
            f"{ours['suppressed']:,}",
            f"{ours['value']:.6g}",
        ]
        if theirs is not None:
            other = theirs[number - 1]
            also = ours["arx_loss"]
            row += [
                f"{float(other['value']):.6g}" + (f" (Veil's arx-loss {also:.6g})" if also is not None else ""),
                f"{other['suppressed']:,}",
                "yes" if other["levels"] == ours["levels"] else f"no: ARX {levels_text(other['levels'] or {})}",
            ]
        rows.append(row)
    head = ["task", "models", "suppression", "metric"]
    if theirs is not None:
        head.append("ARX CPU s (first run)")
    head += [f"Veil CPU s, {p} path (search)" for p in paths]
    head += ["checked", "optimum", "suppressed", "value"]
    if theirs is not None:
        head += ["ARX's value", "ARX suppressed", "same optimum"]
    print(f"load average {load()}")
    print(markdown_table(head, rows))


def warm_kernels_available() -> bool:
    """Whether numba is installed (without loading it here: the rounds load it in their own processes)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


if __name__ == "__main__":
    main()
