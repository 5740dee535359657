"""Global recoding on Spark against the in-memory path: a table larger than the in-memory path can hold.

Generates a synthetic table (nine columns: five quasi-identifiers, a sensitive disease, three others)
as Parquet parts of two million records each, a chunk at a time (never whole in memory), then runs
``veil run --method global-recoding:executor=spark`` (k-anonymity k = 5, 4 % suppression) on
``local[2]`` with the Spark driver's heap at 3 GB, and the in-memory path (the same command without
``executor=spark``) on single files of growing size under a 4 GB address-space cap (``RLIMIT_AS``),
until it is refused or fails. Peak memory is sampled from /proc every 0.2 s: this process (the
Python driver), the JVM (Spark's driver and executors in local mode) and Spark's Python workers.

Run ``nice -n 10 python benchmarks/bench_spark_tables.py RECORDS [IN_MEMORY_SIZES...]``, e.g.
``40000000 5000000 10000000 20000000`` (RECORDS 0: the in-memory sizes only; SIZES ``none``: Spark only); it writes
under ``$TMPDIR`` and deletes what it wrote.
Needs pyspark (``pip install -e .[spark]``) and Java 17.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from _bench import machine, markdown_table

MASTER = "local[2]"
PART = 2_000_000
CAP = 4 << 30
QUASI = "age,sex,zip,education,marital"
RUN = ["--quasi", QUASI, "--sensitive", "disease", "--model", "k-anonymity:k=5", "--release-sensitive", "disease"]
EDUCATION = [
    "Preschool",
    "1st-4th",
    "5th-6th",
    "7th-8th",
    "9th",
    "10th",
    "11th",
    "12th",
    "HS-grad",
    "Some-college",
    "Assoc-voc",
    "Assoc-acdm",
    "Bachelors",
    "Masters",
    "Prof-school",
    "Doctorate",
]
MARITAL = [
    "Never-married",
    "Married-civ-spouse",
    "Divorced",
    "Separated",
    "Widowed",
    "Married-spouse-absent",
    "Married-AF-spouse",
]
DISEASE = ["flu", "cold", "asthma", "diabetes", "hiv", "cancer", "gastritis", "bronchitis", "angina", "migraine"]


def chunk(rng, n: int):
    """``n`` synthetic records as an Arrow table (a skewed zip code, correlated education and age)."""
    import pyarrow as pa

    age = rng.integers(17, 91, n)
    education = np.minimum(np.maximum(rng.normal(9 + (age > 25) * 2, 2.5, n).round().astype(int), 0), 15)
    return pa.table(
        {
            "age": age,
            "sex": rng.choice(["Female", "Male"], n),
            "zip": 10000 + np.minimum(rng.zipf(1.3, n), 400) * 7,
            "education": np.asarray(EDUCATION, dtype=object)[education],
            "marital": rng.choice(MARITAL, n, p=[0.33, 0.46, 0.14, 0.03, 0.03, 0.008, 0.002]),
            "disease": rng.choice(DISEASE, n),
            "hours": rng.integers(1, 100, n),
            "income": rng.integers(0, 200, n) * 500,
            "visits": rng.poisson(3, n),
        }
    )


def generate(folder: Path, records: int, seed: int = 0) -> None:
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, records, PART)):
        pq.write_table(chunk(rng, min(PART, records - start)), folder / f"part-{i:05d}.parquet")


def one_file(folder: Path, records: int, target: Path) -> None:
    """The first ``records`` of the parts as one Parquet file, a part at a time."""
    import pyarrow.parquet as pq

    writer, left = None, records
    for part in sorted(folder.glob("*.parquet")):
        table = pq.read_table(part)
        table = table.slice(0, min(left, table.num_rows))
        writer = writer or pq.ParquetWriter(target, table.schema)
        writer.write_table(table)
        left -= table.num_rows
        if not left:
            break
    writer.close()


# -- memory sampling ----------------------------------------------------------------------------------
def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Peaks(threading.Thread):
    """Peak RSS of this process, of the JVM and (summed) of Spark's Python workers, sampled."""

    def __init__(self):
        super().__init__(daemon=True)
        self.driver = self.jvm = self.workers = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(0.2):
            tree, stack, jvm, workers = _children(), [os.getpid()], 0, 0
            while stack:
                for child in tree.get(stack.pop(), []):
                    stack.append(child)
                    cmd = _cmd(child)
                    if "java" in cmd.split(" ")[0]:
                        jvm += _rss(child)
                    elif "pyspark" in cmd or "python" in cmd.split(" ")[0]:
                        workers += _rss(child)
            self.driver = max(self.driver, _rss(os.getpid()))
            self.jvm, self.workers = max(self.jvm, jvm), max(self.workers, workers)


# -- the runs -----------------------------------------------------------------------------------------
def run_spark(folder: Path, out: Path, records: int) -> dict:
    from pyspark.sql import SparkSession

    from veil.cli import main

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's workers: this Python, with Veil's packages
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    peaks = Peaks()
    peaks.start()
    started = time.perf_counter()
    session = (
        SparkSession.builder.master(MASTER)
        .appName("veil")
        .config("spark.driver.memory", "3g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    start_seconds = time.perf_counter() - started
    started = time.perf_counter()
    code = main(
        [
            "run",
            "--data",
            str(folder),
            *RUN,
            "--method",
            f"global-recoding:suppression=0.04,executor=spark,spark_master={MASTER},part_format=parquet",
            "--out",
            str(out),
        ]
    )
    seconds = time.perf_counter() - started
    peaks.done.set()
    peaks.join()
    session.stop()
    assert code == 0
    import json

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["output"]["rows"] == records
    gen = manifest["details"]["generalisation"]
    return {
        "records": records,
        "seconds": seconds,
        "start": start_seconds,
        "driver": peaks.driver,
        "jvm": peaks.jvm,
        "workers": peaks.workers,
        "parts": len(manifest["output"]["parts_of"]),
        "levels": gen["levels"],
        "suppressed": gen["suppressed_records"],
        "classes": manifest["details"]["classes_read"],
    }


def _capped(cap: int):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        os.nice(10)

    return limit


def run_in_memory(data: Path, out: Path, records: int) -> dict:
    command = [
        sys.executable,
        "-m",
        "veil.cli",
        "run",
        "--data",
        str(data),
        *RUN,
        "--method",
        "global-recoding:suppression=0.04",
        "--no-report",
        "--metrics",
        "",
        "--out",
        str(out),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=_capped(CAP))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    said = (done.stderr.strip().splitlines() or [""])[-1]
    return {
        "records": records,
        "seconds": seconds,
        "code": done.returncode,
        "peak": peak if peak > before * 1024 else None,
        "said": said[:160],
    }


def main(argv: list[str]) -> None:
    records = int(argv[0]) if argv else 40_000_000
    sizes = [] if argv[1:] == ["none"] else [int(x) for x in argv[1:]] or [5_000_000, 10_000_000, 20_000_000]
    root = Path(tempfile.mkdtemp(prefix="veil-bench-spark-"))
    try:
        started = time.perf_counter()
        generate(root / "table", max([records, *sizes]))
        print(
            f"generated {max([records, *sizes]):,} records in {time.perf_counter() - started:.0f} s "
            f"({sum(f.stat().st_size for f in (root / 'table').glob('*')) / 2**20:.0f} MiB of Parquet)",
            flush=True,
        )
        memory = []
        for size in sizes:
            one_file(root / "table", size, root / f"one-{size}.parquet")
            memory.append(run_in_memory(root / f"one-{size}.parquet", root / f"memory-{size}", size))
            (root / f"one-{size}.parquet").unlink()
            shutil.rmtree(root / f"memory-{size}", ignore_errors=True)
            print(memory[-1], flush=True)
        spark = run_spark(root / "table", root / "spark", records) if records else None
        print(spark, flush=True)
        print(machine())
        gb = lambda b: f"{b / 2**30:.2f} GB" if b else "–"
        rows = [
            [
                "in memory, 4 GB cap",
                f"{m['records']:,}",
                f"{m['seconds']:.0f}",
                f"{m['records'] / m['seconds']:,.0f}" if m["code"] == 0 else "–",
                gb(m["peak"]),
                "released" if m["code"] == 0 else m["said"],
            ]
            for m in memory
        ]
        if spark is not None:
            rows.append(
                [
                    f"Spark {MASTER}",
                    f"{spark['records']:,}",
                    f"{spark['seconds']:.0f}",
                    f"{spark['records'] / spark['seconds']:,.0f}",
                    f"Python driver {gb(spark['driver'])}, JVM {gb(spark['jvm'])}, workers {gb(spark['workers'])}",
                    f"released in {spark['parts']} parts; {spark['classes']:,} classes; levels "
                    f"{spark['levels']}; {spark['suppressed']:,} suppressed",
                ]
            )
        print(markdown_table(["path", "records", "s", "records/s", "peak memory", "outcome"], rows))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
