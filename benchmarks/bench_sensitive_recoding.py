"""Global recoding under privacy models that read the sensitive column, with a suppression limit, on
ARX's adult (30,162 rows, ARX's hierarchies): the tasks of ARX's optimum tests, in process, CPU seconds.

Each task marks ``occupation`` sensitive and the other eight columns quasi-identifiers (the first
task all nine), runs ``execute`` (hierarchies, the search, the release and its privacy check) and
prints its CPU seconds (``time.process_time``, the least of ``--repeats`` runs: the machine may be
shared), the transformations checked and the optimum found. Run::

    .venv/bin/python benchmarks/bench_sensitive_recoding.py [--repeats N] [--profile TASK]
    .venv/bin/python benchmarks/bench_sensitive_recoding.py --repeats 5 --arx "java -cp CLASSPATH Runner"

``--profile TASK`` (a task's number, from 1) prints cProfile's twenty-five costliest functions of that
task's whole run instead. ``--arx COMMAND`` also runs every task through ARX in the same run: COMMAND
(split as a shell would) is a Java runner outside this repository (docs/benchmarks.md says how it was
built) called as ``COMMAND DATA.csv REPEATS TASK…``, a task written ``MODELS|SUPPRESSION|METRIC|SENSITIVE``
(models joined by ``+``, ``-`` for no sensitive column), which prints one JSON object a line: ``cpu``
(the least process CPU seconds of ARX's ``anonymize()`` over the repetitions, in one warm JVM),
``levels``, ``suppressed`` and ARX's ``value``. The table then shows both tools' CPU seconds, optima and
values side by side (for ``loss`` beside ARX's value Veil's ``arx-loss`` at its optimum, ARX's Loss as
ARX aggregates it), and whether the optima agree. The dataset is read from ``../shared/datasets`` and
never copied.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shlex
import subprocess
import time

from _bench import dataset, machine, markdown_table
from bench_global_recoding import adult_arx
from veil.engine import PluginCall, Role, RunSpec, execute, make_registry

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=int, metavar="TASK", help="cProfile one task's whole run (from 1)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each task; the least CPU time counts")
    parser.add_argument("--arx", metavar="COMMAND", help="the ARX runner's command, to run the same tasks beside")
    args = parser.parse_args()
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
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {machine()['cpu']}", flush=True)
    arx = run_arx(args.arx, max(args.repeats, 1)) if args.arx else None
    if arx is not None:
        print(f"load average after ARX {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    rows = []
    for number, task in enumerate(TASKS, 1):
        models, suppression, metric, _ = task
        runs = [run(task) for _ in range(max(args.repeats, 1))]
        cpu, result = min(runs, key=lambda r: r[0])
        gen = result.release.details["generalisation"]
        row = [
            number,
            " + ".join(models),
            f"{suppression:.0%}",
            metric,
            f"{cpu:.2f}",
            f"{gen.get('searched_nodes', 0):,}",
            levels_text(gen["levels"]),
            f"{gen['suppressed_records']:,}",
            f"{gen['loss']:.6g}",
        ]
        if arx is not None:
            theirs = arx[number - 1]
            same = theirs["levels"] is not None and {c: int(v) for c, v in gen["levels"].items()} == theirs["levels"]
            also = gen.get("also", {}).get("arx-loss")
            row[4:4] = [f"{theirs['cpu']:.2f}"]
            row += [
                f"{float(theirs['value']):.6g}" + (f" (Veil's arx-loss {also:.6g})" if also is not None else ""),
                f"{theirs['suppressed']:,}",
                "yes" if same else f"no: ARX {levels_text(theirs['levels'] or {})}",
            ]
        rows.append(row)
        print(rows[-1], flush=True)
    head = ["task", "models", "suppression", "metric", "whole run CPU s", "checked", "optimum", "suppressed", "value"]
    if arx is not None:
        head = [*head[:4], "ARX CPU s", "Veil CPU s", *head[5:], "ARX's value", "ARX suppressed", "same optimum"]
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(markdown_table(head, rows))


if __name__ == "__main__":
    main()
