"""``veil study``: run a study file's grid of runs and write results.csv and its charts."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from veil.engine import __version__
from veil.engine.base.constants import DEFAULT_MAX_RUNS

from .arguments import models, positive_int
from .common import EXIT_OK, Progress, Stop, folder_notes, hierarchy_notes

NAME = "study"
HELP = "run a study file and write results.csv and its charts"


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("study", help="the study file (.json)")
    s.add_argument("--out", required=True, help="output folder")
    s.add_argument(
        "--max-runs",
        dest="max_runs",
        type=positive_int,
        help=f"refuse a study of more runs than this (default: the study's \"max_runs\", else {DEFAULT_MAX_RUNS:,})",
    )
    s.add_argument(
        "--executor",
        default="in-process",
        help="where a method's parallel work runs (default in-process; others come with plugins)",
    )
    s.add_argument(
        "--model",
        action="append",
        help="privacy model for every run, replacing the study's (NAME[:key=value,...]; repeat it to combine models)",
    )


@dataclass(frozen=True)
class Options:
    """The flags of ``veil study``."""

    study: str
    out: str
    max_runs: int | None
    executor: str
    model: list[str] | None


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.base.io import write_atomic
    from veil.engine.release.charts import save_chart
    from veil.engine.run.executors import make_executor
    from veil.engine.run.jobs import Context
    from veil.engine.run.study import Study, run_study

    study = Study.load(options.study)
    if options.max_runs is not None:
        study = dataclasses.replace(study, max_runs=options.max_runs)
    study.check_size(registry)  # before the data is read: a grid too large is refused at once
    if options.model:
        study = study.with_models(models(options.model))
    out = Path(options.out)
    _refuse_overwriting_study(study, Path(options.study), out)  # before anything runs
    data = study.data.load(registry)
    folder_notes(study.data, data)
    hierarchy_notes(registry, data, list(study.iter_runs(registry)))
    progress = Progress(study.name)
    try:
        results = run_study(
            registry,
            study,
            Context(study.seed, progress, executor=make_executor(options.executor, registry)),
            data=data,
            version=__version__,
        )
    finally:
        progress.close()
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "results.csv", lambda p: results.to_csv(p, index=False))
    for n, call in enumerate(study.charts, start=1):
        save_chart(registry, call, results, out, stem=_chart_stem(n, call))
    print(out)
    return EXIT_OK


def _chart_stem(n: int, call) -> str:
    return f"chart-{n}-{call.name}"


def _refuse_overwriting_study(study, path: Path, out: Path) -> None:
    """BadInput when a file ``veil study`` writes (results.csv, each chart's .png, .svg and .csv) is
    one the study reads: the study file, its data, a hierarchy."""
    from veil.engine.release.staging import refuse_overwriting

    written = [
        out / "results.csv",
        *(
            out / f"{_chart_stem(n, call)}.{ext}"
            for n, call in enumerate(study.charts, 1)
            for ext in ("png", "svg", "csv")
        ),
    ]
    hierarchies = set(study.data.hierarchies.values())
    refuse_overwriting(
        written,
        [
            (path, "study file"),
            *((f, "hierarchy file" if f in hierarchies else "input file") for f in study.data.files()),
        ],
    )
