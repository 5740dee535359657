"""Global recoding under privacy models that read the sensitive column, with a suppression limit, on
ARX's adult (30,162 rows, ARX's hierarchies): the tasks of ARX's optimum tests, in process, CPU seconds.

Each task marks ``occupation`` sensitive and the other eight columns quasi-identifiers (the first
task all nine), runs ``execute`` (hierarchies, the search, the release and its privacy check) and
the lattice search alone, and prints the CPU seconds of each (``time.process_time``: the machine
may be shared), the transformations checked and the optimum found. Run::

    .venv/bin/python benchmarks/bench_sensitive_recoding.py [--profile TASK]

``--profile TASK`` (a task's number, from 1) prints cProfile's twenty costliest functions of that
task's whole run instead. The dataset is read from ``../shared/datasets`` and never copied.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

from _bench import markdown_table
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


def main() -> None:
    if "--profile" in sys.argv:
        task = TASKS[int(sys.argv[sys.argv.index("--profile") + 1]) - 1]
        profile = cProfile.Profile()
        profile.enable()
        run(task)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    if table_for(False) is None:
        print("adult_arx not found under ../shared/datasets")
        return
    rows = []
    for number, task in enumerate(TASKS, 1):
        models, suppression, metric, _ = task
        cpu, result = run(task)
        gen = result.release.details["generalisation"]
        rows.append(
            [
                number,
                " + ".join(models),
                f"{suppression:.0%}",
                metric,
                f"{cpu:.2f}",
                f"{gen.get('searched_nodes', 0):,}",
                ";".join(f"{c}:{v}" for c, v in gen["levels"].items()),
                f"{gen['suppressed_records']:,}",
                f"{gen['loss']:.6g}",
            ]
        )
        print(rows[-1], flush=True)
    head = ["task", "models", "suppression", "metric", "whole run CPU s", "checked", "optimum", "suppressed", "value"]
    print(markdown_table(head, rows))


if __name__ == "__main__":
    main()
