"""The everyday path, measured as ratios in one run.

(a) ``veil --help`` against a bare ``python -c pass`` (process start-up included in both);
(b) ``veil run`` on UCI Adult (32,561 rows), Greedy-HamDist under k-anonymity k = 5, the default
    metrics, the release written with its report: each stage and the whole export against the
    method's own time, in one process and as the command itself; each twice: *cold* (an empty
    user cache: the classifier figures are cross-validated) and *warm* (the cache the cold run
    filled: the same input, seed and settings again). The command's CPU seconds are also given
    beyond start-up (``python -c "import pandas"``'s, measured in the same run);
(c) Mondrian (k = 10) on adult_arx with ARX's hierarchies and its report, cold, in one process:
    the whole from the read on against the method plus reading and writing.

Run: ``make benchmark`` or ``.venv/bin/python benchmarks/bench_everyday.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import dataset, markdown_table, median_times, timed  # noqa: E402

pytestmark = pytest.mark.benchmark


# Python's bytecode cache on, as an installed Veil has it (PYTHONDONTWRITEBYTECODE would make every
# process compile Veil's own modules again)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def startup(repeats: int = 5) -> dict[str, float]:
    def run(*argv):
        return lambda: subprocess.run([sys.executable, *argv], check=True, capture_output=True, env=ENV)

    return median_times(
        {
            "python -c pass": run("-c", "pass"),
            "veil --help": run("-m", "veil.desktop", "--help"),
            "import pandas": run("-c", "import pandas"),
        },
        repeats,
    )


def cpu_seconds(argv: list[str], repeats: int = 5) -> float:
    """Median CPU seconds (user + system) of a process: what the wall time would be on an idle
    machine, give or take the disk, and far steadier than it when other jobs share the cores."""
    import resource
    import statistics

    samples = []
    for _ in range(repeats + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, *argv], check=True, capture_output=True, env=ENV)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        samples.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(samples[1:])


def help_cpu() -> dict[str, float]:
    return {
        "python -c pass": cpu_seconds(["-c", "pass"]),
        "veil --help": cpu_seconds(["-m", "veil.desktop", "--help"]),
        "import pandas": cpu_seconds(["-c", "import pandas"]),
    }


ARX_QUASI = ("sex", "age", "race", "marital-status", "education", "native-country")


def adult_source():
    from veil.engine import DataSource, read_column_names

    folder = dataset("adult")
    return DataSource(
        path=str(folder / "adult.data"), names=read_column_names(folder / "adult.names"), roles={"class": "target"}
    )


def adult_arx_source():
    """adult_arx with ARX's hierarchies of its six quasi-identifiers, no target (as `veil run --quasi
    … --hierarchy …` reads it)."""
    from veil.engine import DataSource

    folder = dataset("adult_arx")
    return DataSource(
        path=str(folder / "adult.csv"),
        delimiter=";",
        roles={c: "quasi-identifier" for c in ARX_QUASI},
        hierarchies={c: str(folder / f"adult_hierarchy_{c}.csv") for c in ARX_QUASI},
    )


def adult_export(
    out: Path, cache: Path, source=None, method: str = "greedy-hamdist", model: str = "k-anonymity:k=5"
) -> dict[str, float]:
    """Seconds of each stage of one `veil run` with its report (memos cleared first; the user cache
    in ``cache``): Adult under Greedy-HamDist unless told otherwise."""
    os.environ["VEIL_CACHE_DIR"] = str(cache)
    from veil.engine import (
        Context,
        ExportOptions,
        PluginCall,
        ReportOptions,
        RunSpec,
        default_metrics,
        execute,
        export_release,
        make_registry,
    )
    from veil.engine.release import assessment
    from veil.engine.release import export as export_module
    from veil.plugins.evaluation import metrics as basic_metrics

    assessment._MEMO.clear()
    basic_metrics._CV_MEMO.clear()
    started = time.perf_counter()
    registry = make_registry()
    inside: dict[str, float] = {}
    undo = [
        timed(export_module, "assess", inside, "assess"),
        timed(export_module, "render_report_files", inside, "render"),
    ]
    registered = time.perf_counter()
    source = source or adult_source()
    data = source.load(registry)
    read = time.perf_counter()
    # the metrics `veil run` computes when none is named (the cheap ones that fit the method)
    spec = RunSpec(
        PluginCall.parse(method), PluginCall.parse(model), 0, default_metrics(registry, method, model.split(":")[0])
    )
    result = execute(registry, data, spec, Context(0))
    ran = time.perf_counter()
    try:
        export_release(
            registry, result, out, ExportOptions("csv"), report=ReportOptions(), source=source, ctx=Context(0)
        )
    finally:
        for u in undo:
            u()
    done = time.perf_counter()
    export = done - ran
    return {
        "registry (imports the plugins)": registered - started,
        "read": read - registered,
        "method + read + write": result.seconds
        + read
        - registered
        + export
        - inside.get("assess", 0)
        - inside.get("render", 0),
        "method": result.seconds,
        "metrics": ran - read - result.seconds,
        "export: write, read back, check": export - inside.get("assess", 0) - inside.get("render", 0),
        "export: risk and utility figures (cross-validation before and after)": inside.get("assess", 0),
        "export: report.html and report.pdf": inside.get("render", 0),
        "export + report": export,
        "whole (in one process, from the registry on)": done - started,
    }


def veil_run_command(out: Path) -> dict[str, float]:
    """Wall seconds of the command itself (a fresh process: interpreter, imports, everything): a
    first run writes Python's bytecode cache (as a first use after installing does), then *cold*
    with an empty user cache and *warm* with the cache the cold run filled."""
    import resource

    folder = dataset("adult")
    times = {}
    for attempt, cache in (("bytecode", "throwaway"), ("cold", "cache"), ("warm", "cache")):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "veil.desktop",
                "run",
                "--data",
                str(folder / "adult.data"),
                "--names-from",
                str(folder / "adult.names"),
                "--target",
                "class",
                "--method",
                "greedy-hamdist",
                "--model",
                "k-anonymity:k=5",
                "--out",
                str(out / attempt),
            ],
            check=True,
            capture_output=True,
            env={**ENV, "VEIL_CACHE_DIR": str(out / cache)},
        )
        times[attempt] = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times[f"{attempt} cpu"] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {k: v for k, v in times.items() if not k.startswith("bytecode")}


def both_exports(tmp: Path) -> dict[str, dict[str, float]]:
    return {"cold": adult_export(tmp / "cold", tmp / "cache"), "warm": adult_export(tmp / "warm", tmp / "cache")}


def mondrian_export(tmp: Path) -> dict[str, float]:
    """Mondrian (k = 10) on adult_arx with its report, cold: each stage, and the whole from reading
    on against the method plus reading and writing."""
    stages = adult_export(tmp / "mondrian", tmp / "mondrian-cache", adult_arx_source(), "mondrian", "k-anonymity:k=10")
    stages["whole from the read on"] = (
        stages["whole (in one process, from the registry on)"] - stages["registry (imports the plugins)"]
    )
    return stages


def mondrian_report(stages: dict[str, float]) -> str:
    base = stages["method + read + write"]
    return "Mondrian (k = 10) on adult_arx with its report, cold, in one process:\n\n" + markdown_table(
        ["stage", "s", "× (method + read + write)"], [[k, f"{v:.2f}", f"{v / base:.2f}"] for k, v in stages.items()]
    )


def report(help_times, stages, command=None, cpu=None) -> str:
    out = [
        markdown_table(
            ["command", "median s", "× python -c pass"],
            [[k, f"{v:.3f}", f"{v / help_times['python -c pass']:.1f}"] for k, v in help_times.items()],
        )
    ]
    if cpu:
        out.append(
            markdown_table(["command", "median CPU s (user + system)"], [[k, f"{v:.3f}"] for k, v in cpu.items()])
        )
    if stages:
        names = list(stages["cold"])
        out.append(
            markdown_table(
                ["stage", "cold s", "× the method", "warm s", "× the method"],
                [
                    [k]
                    + [
                        x
                        for run in ("cold", "warm")
                        for x in (f"{stages[run][k]:.2f}", f"{stages[run][k] / stages[run]['method']:.1f}")
                    ]
                    for k in names
                ],
            )
        )
    if command is not None:
        for run in ("cold", "warm"):
            out.append(
                f"`veil run` on Adult as a command, {run} (fresh process, report included): "
                f"{command[run]:.2f} s"
                + (f", {command[run] / stages[run]['method']:.0f}× the method's own time" if stages else "")
                + f"; CPU (user + system) {command[run + ' cpu']:.2f} s"
                + (
                    f", {command[run + ' cpu'] - cpu['import pandas']:.2f} s beyond start-up (import pandas)"
                    if cpu and "import pandas" in cpu
                    else ""
                )
            )
    out.append(f"load average at the end: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return "\n\n".join(out)


def test_everyday_path(tmp_path):
    help_times = startup()
    stages = both_exports(tmp_path) if dataset("adult") else None
    command = veil_run_command(tmp_path / "command") if dataset("adult") else None
    print("\n" + report(help_times, stages, command, help_cpu()))
    if dataset("adult_arx") is not None:
        print("\n" + mondrian_report(mondrian_export(tmp_path)))
    assert help_times["veil --help"] < help_times["import pandas"]  # the engine is not imported for --help


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        have = dataset("adult") is not None
        print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(
            report(
                startup(),
                both_exports(Path(tmp)) if have else None,
                veil_run_command(Path(tmp) / "command") if have else None,
                help_cpu(),
            )
        )
        if dataset("adult_arx") is not None:
            print("\n" + mondrian_report(mondrian_export(Path(tmp))))
