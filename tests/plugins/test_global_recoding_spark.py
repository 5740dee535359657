"""Global recoding on Spark (``executor=spark``) against the in-memory path, on small random tables in
local mode: the same levels, the same suppressed records, the same release (as a multiset of rows)
and manifest counts covering every part; ``veil verify`` on a release in parts, here and on Spark;
bad input (no Java, an unreachable master, files of different schemas) refused in one line with
nothing written. One Spark session (``local[2]``, tests/conftest.py) serves every Spark test of the run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli import main

MASTER = "local[2]"
SPARK = f"executor=spark,spark_master={MASTER}"


@pytest.fixture
def spark(spark_local):
    """The run's one Spark session (tests/conftest.py)."""
    return spark_local


def veil(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def random_table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["f", "m"], n),
            "zip": rng.choice([f"7{i:02d}" for i in range(rng.integers(3, 12))], n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer", "asthma"][: rng.integers(2, 6)], n),
            "income": rng.integers(0, 5, n) * 1000,
        }
    )


def rows(path: Path) -> list[tuple]:
    """The records of a released file (every part of a release in parts) as sorted text rows."""
    manifest = json.loads((path / "manifest.json").read_text())
    out = manifest["output"]
    names = [p["path"] for p in out["parts_of"]] if "parts_of" in out else [out["path"]]
    frames = []
    for name in names:
        if name.endswith(".parquet"):
            frames.append(pd.read_parquet(path / name).astype(str))
        else:
            frames.append(pd.read_csv(path / name, dtype=str, keep_default_na=False))
    frame = pd.concat(frames, ignore_index=True)
    return sorted(map(tuple, frame[out["columns"]].to_numpy().tolist()))


CASES = [  # (seed, records, method parameters, models, sensitive)
    (0, 1500, "suppression=0.05", ["k-anonymity:k=5"], None),
    (1, 1200, "suppression=0.02,metric=entropy", ["k-anonymity:k=3", "l-diversity:l=2"], "disease"),
    (2, 800, "suppression=0.1,metric=discernibility", ["t-closeness:t=0.4"], "disease"),
    (3, 900, "levels=age:2;zip:1", ["k-anonymity:k=2"], None),
]


def test_an_unprotected_sensitive_column_is_refused_before_spark_starts(capsys, tmp_path):
    data = _inputs(tmp_path)
    code, _, err = veil(
        capsys,
        "run",
        "--data",
        data,
        "--quasi",
        "age,sex",
        "--sensitive",
        "disease",
        "--method",
        "global-recoding:executor=spark,spark_master=spark://127.0.0.1:1",
        "--model",
        "k-anonymity:k=2",
        "--out",
        tmp_path / "out",
    )
    assert code == 2 and "releases the column marked sensitive disease" in err and "--release-sensitive" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("seed,n,method,models,sensitive", CASES)
def test_spark_equals_the_in_memory_path(spark, capsys, tmp_path, seed, n, method, models, sensitive):
    frame = random_table(seed, n)
    parquet = seed % 2 == 1  # Parquet parts and a CSV file both; the in-memory path reads the same format
    data = tmp_path / ("table.parquet" if parquet else "table.csv")
    frame.to_parquet(data, index=False) if parquet else frame.to_csv(data, index=False)
    folder = tmp_path / "parts"  # the same records as a partitioned Parquet folder, in three parts
    (folder / "year=1").mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(n), 3)):
        frame.iloc[part].to_parquet(folder / ("year=1" if i else ".") / f"part-{i}.parquet", index=False)
    roles = ["--quasi", "age,sex,zip", *(["--sensitive", sensitive] if sensitive else ["--identifier", "disease"])]
    model_args = [a for m in models for a in ("--model", m)]
    code, _, err = veil(
        capsys,
        "run",
        "--data",
        data,
        *roles,
        "--method",
        f"global-recoding:{method}",
        *model_args,
        "--out",
        tmp_path / "memory",
        "--no-report",
        "--no-shuffle",
    )
    assert code == 0, err
    source = folder if parquet else data
    fmt = "parquet" if seed == 1 else "csv"
    code, out, err = veil(
        capsys,
        "run",
        "--data",
        source,
        *roles,
        "--method",
        f"global-recoding:{method},{SPARK},part_format={fmt}",
        *model_args,
        "--out",
        tmp_path / "spark",
    )
    assert code == 0, err
    assert out.strip() == str(tmp_path / "spark")
    memory = json.loads((tmp_path / "memory" / "manifest.json").read_text())
    spread = json.loads((tmp_path / "spark" / "manifest.json").read_text())
    assert spread["details"]["generalisation"] == memory["details"]["generalisation"]
    assert rows(tmp_path / "spark") == rows(tmp_path / "memory")
    parts = spread["output"]["parts_of"]
    assert sum(p["rows"] for p in parts) == spread["output"]["rows"] == n == memory["output"]["rows"]
    assert {p["path"] for p in parts} | {"manifest.json", "report.html", "report.pdf"} == {
        f.name for f in (tmp_path / "spark").iterdir()
    }
    assert spread["verdict"]["holds"] and all(v["holds"] for v in spread["verdicts"])
    assert "disease" not in spread["output"]["columns"] or sensitive  # an identifier never reaches the release
    assert spread["removed_identifiers"] == memory["removed_identifiers"]  # and the report names it


def test_verify_rechecks_every_part_here_and_on_spark(spark, capsys, tmp_path):
    frame = random_table(7, 2000)
    folder = tmp_path / "in"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 4)):
        frame.iloc[part].to_csv(folder / f"p{i}.csv", index=False)
    code, _, err = veil(
        capsys,
        "run",
        "--data",
        folder,
        "--quasi",
        "age,sex,zip",
        "--sensitive",
        "disease",
        "--method",
        f"global-recoding:suppression=0.05,{SPARK}",
        "--model",
        "k-anonymity:k=4",
        "--release-sensitive",
        "disease",
        "--out",
        tmp_path / "out",
    )
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["output"]["parts_of"]) >= 2
    _check_report(tmp_path / "out", manifest, frame, ["age", "sex", "zip"])
    for extra in ([], ["--executor", "spark", "--master", MASTER]):
        code, out, _ = veil(capsys, "verify", tmp_path / "out", *extra)
        assert code == 0 and out.startswith("OK: ") and f"{len(frame):,} records" in out, out
    # one record of the last part given the quasi-identifiers of a record nobody shares: a group of one
    last = tmp_path / "out" / manifest["output"]["parts_of"][-1]["path"]
    lines = last.read_text().splitlines()
    head = lines[0].split(",")
    cells = lines[1].split(",")
    cells[head.index("age")], cells[head.index("zip")] = "0-1", "nowhere"
    last.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    code, out, _ = veil(capsys, "verify", tmp_path / "out")
    assert code == 1 and "changed after export" in out
    manifest["output"]["parts_of"][-1]["sha256"] = __import__("hashlib").sha256(last.read_bytes()).hexdigest()
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = veil(capsys, "verify", tmp_path / "out")  # the hash edited in: the signature no longer matches
    assert code == 1 and "changed after it was signed" in out
    from veil.engine.release.signing import sign

    sign(manifest)  # signed again with this workstation's key: the groups themselves are judged
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    for extra in ([], ["--executor", "spark", "--master", MASTER]):
        code, out, _ = veil(capsys, "verify", tmp_path / "out", *extra)
        assert code == 1 and out.startswith("FAILED: ") and "(smallest group: 1)" in out, out


def _check_report(out: Path, manifest: dict, frame: pd.DataFrame, qis: list[str]) -> None:
    """The report of a release in parts gives the figures a count by hand of its parts (after) and of
    the input (before, on the quasi-identifiers) gives, as its manifest does."""
    written = pd.concat(
        [pd.read_csv(out / p["path"], dtype=str, keep_default_na=False) for p in manifest["output"]["parts_of"]],
        ignore_index=True,
    )
    suppressed = int((written[qis] == "*").all(axis=1).sum())
    assert suppressed == manifest["details"]["generalisation"]["suppressed_records"] > 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF") and "${" not in html
    for side, table in (("after", written), ("before", frame)):
        sizes = table.groupby(qis).size()
        figures = manifest["risk"][side]
        assert (figures["groups"], figures["smallest_group"], figures["records"]) == (
            len(sizes),
            sizes.min(),
            len(frame),
        )
        assert figures["avg"] == pytest.approx(len(sizes) / len(frame))
        for key in ("groups", "smallest_group"):
            assert f'data-key="risk.{side}.{key}" data-value="{figures[key]!r}"' in html
    assert 'data-status="holds"' in html and "k-anonymity with k = 4 holds" in html
    assert f"{suppressed:,} of {len(frame):,}" in html


# -- bad input ---------------------------------------------------------------------------------------
def _inputs(tmp_path: Path) -> Path:
    data = tmp_path / "t.csv"
    random_table(3, 200).to_csv(data, index=False)
    return data


def test_without_java_a_spark_run_says_so_in_one_line(tmp_path):
    data = _inputs(tmp_path)
    env = {**os.environ, "PATH": str(Path(sys.executable).parent), "JAVA_HOME": str(tmp_path / "no-java")}
    for home in (str(tmp_path / "no-java"), None):
        if home is None:
            env.pop("JAVA_HOME")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "veil.cli",
                "run",
                "--data",
                data,
                "--quasi",
                "age,sex",
                "--method",
                f"global-recoding:{SPARK}",
                "--model",
                "k-anonymity:k=2",
                "--out",
                tmp_path / "out",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Spark needs Java 17" in done.stderr, done.stderr
        assert not (tmp_path / "out").exists()


def test_an_unreachable_master_is_named_at_once(capsys, tmp_path):
    data = _inputs(tmp_path)
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"spark://127.0.0.1:{port}"
    code, _, err = veil(
        capsys,
        "run",
        "--data",
        data,
        "--quasi",
        "age,sex",
        "--method",
        f"global-recoding:executor=spark,spark_master={url}",
        "--model",
        "k-anonymity:k=2",
        "--out",
        tmp_path / "out",
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"cannot reach the Spark master {url}" in err and "waited at most" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_folder_of_files_with_different_schemas_is_refused(spark, capsys, tmp_path, fmt):
    folder = tmp_path / "in"
    folder.mkdir()
    a = random_table(4, 50)
    b = a.rename(columns={"zip": "postcode"}) if fmt == "csv" else a.assign(age=a["age"].astype(float))
    for name, frame in (("a", a), ("b", b)):
        if fmt == "csv":
            frame.to_csv(folder / f"{name}.csv", index=False)
        else:
            frame.to_parquet(folder / f"{name}.parquet", index=False)
    code, _, err = veil(
        capsys,
        "run",
        "--data",
        folder,
        "--quasi",
        "age,sex",
        "--method",
        f"global-recoding:{SPARK}",
        "--model",
        "k-anonymity:k=2",
        "--out",
        tmp_path / "out",
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "different schemas" in err and f"a.{fmt}" in err and f"b.{fmt}" in err
    assert not (tmp_path / "out").exists()


def test_the_counts_read_here_equal_the_counts_read_on_spark(spark, tmp_path):
    from veil.engine.run.executors import read_counts
    from veil.plugins._spark.tables import SparkExecutor

    frame = random_table(5, 600)
    files = []
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
        files.append(tmp_path / f"p{i}.parquet")
        frame.iloc[part].to_parquet(files[-1], index=False)
    columns = ["age", "zip", "disease"]
    here, here_rows = read_counts(files, pd.read_parquet, columns)
    there, there_rows = SparkExecutor(MASTER).class_counts(files, "parquet", columns)
    key = lambda f: f.sort_values(columns).reset_index(drop=True)[columns + ["count"]].astype(str)
    assert here_rows == there_rows == [200, 200, 200]
    assert key(here).equals(key(there))
    assert here["count"].sum() == len(frame)


# -- a table loaded here (the desktop's runs): the class table counted on Spark ----------------------
def _loaded(seed: int, n: int):
    from veil.engine import Table

    return Table.from_frame(
        random_table(seed, n),
        roles={"age": "quasi-identifier", "sex": "quasi-identifier", "zip": "quasi-identifier", "disease": "sensitive"},
    )


def test_a_loaded_table_sent_to_spark_is_released_as_in_memory(spark, registry):
    from veil.engine import Context, PluginCall, RunSpec, execute

    data = _loaded(11, 1500)
    models = [PluginCall("k-anonymity", {"k": 4}), PluginCall("l-diversity", {"l": 2, "variant": "distinct"})]
    releases, messages = {}, []
    for executor in ("local", "spark"):
        spec = RunSpec(
            PluginCall("global-recoding", {"suppression": 0.03, "executor": executor, "spark_master": MASTER}),
            models,
            0,
            (),
        )
        ctx = Context(0, lambda fraction, message: messages.append(message))
        releases[executor] = execute(registry, data, spec, ctx).release
    local, spread = releases["local"], releases["spark"]
    assert spread.details["generalisation"] == local.details["generalisation"]
    assert spread.details["executor"] == "spark"
    assert spread.frame.astype(str).equals(local.frame.astype(str))
    assert any("on Spark: " in m and "tasks" in m for m in messages), messages  # the status tracker's tasks


def test_cancel_stops_the_class_count_on_spark(spark):
    import threading

    from veil.engine import Cancelled, Context
    from veil.plugins._spark.tables import run_job

    ctx = Context()
    started = threading.Event()
    ctx._on_progress = lambda f, msg: started.set()
    slow = spark.sparkContext.parallelize(range(2), 2)
    timer = threading.Thread(target=lambda: (started.wait(120), ctx.token.cancel()))
    timer.start()
    with pytest.raises(Cancelled):  # tasks sleeping far longer than the test: only the cancel ends them
        run_job(
            spark.sparkContext,
            lambda: slow.map(lambda x: __import__("time").sleep(300) or x).collect(),
            ctx,
            "sleeping",
        )
    timer.join()
    assert spark.sparkContext.parallelize(range(10), 2).sum() == 45  # the session still works


def test_csv_parts_escape_formulas_as_veils_csv_does(spark, capsys, tmp_path):
    frame = random_table(12, 400).assign(sex=lambda f: f["sex"].map({"f": "=1+1", "m": "@SUM(A1)"}))
    data = tmp_path / "t.csv"
    frame.to_csv(data, index=False)
    args = ["--quasi", "age,sex", "--identifier", "zip,disease", "--model", "k-anonymity:k=2"]
    assert (
        veil(
            capsys,
            "run",
            "--data",
            data,
            *args,
            "--method",
            "global-recoding:levels=age:1",
            "--out",
            tmp_path / "memory",
            "--no-report",
            "--no-shuffle",
        )[0]
        == 0
    )
    code, _, err = veil(
        capsys,
        "run",
        "--data",
        data,
        *args,
        "--method",
        f"global-recoding:levels=age:1,{SPARK}",
        "--out",
        tmp_path / "spark",
    )
    assert code == 0, err
    written = rows(tmp_path / "spark")
    assert written == rows(tmp_path / "memory")
    assert {r[1] for r in written} == {"'=1+1", "'@SUM(A1)"}  # the text as written, escaped
    code, out, _ = veil(capsys, "verify", tmp_path / "spark")
    assert code == 0 and out.startswith("OK: "), out


def test_the_spark_executor_service_maps_in_order(spark, registry):
    from veil.engine import make_executor

    executor = make_executor("spark", registry, master=MASTER)  # a plugin registers it (veil_register_executors)
    assert executor.name == "spark" and executor.map(lambda x: x * x, range(7)) == [0, 1, 4, 9, 16, 25, 36]
    assert executor.map(abs, []) == []


def test_a_generated_hierarchy_on_spark_is_the_in_memory_one(spark, capsys, tmp_path):
    """``--hierarchy age=intervals:…`` on Spark is generated over the column's values, as in memory (it
    was looked for as a file named after the text, after Spark had started)."""
    frame = random_table(3, 300)
    data = tmp_path / "table.csv"
    frame.to_csv(data, index=False)
    common = ["--data", data, "--quasi", "age,sex,zip", "--identifier", "disease", "--model", "k-anonymity:k=3"]
    common += ["--hierarchy", "age=intervals:width=5,fanout=2", "--no-report", "--no-shuffle"]
    code, _, err = veil(capsys, "run", *common, "--method", "global-recoding", "--out", tmp_path / "memory")
    assert code == 0, err
    code, _, err = veil(capsys, "run", *common, "--method", f"global-recoding:{SPARK}", "--out", tmp_path / "spark")
    assert code == 0, err
    memory = json.loads((tmp_path / "memory" / "manifest.json").read_text())
    spread = json.loads((tmp_path / "spark" / "manifest.json").read_text())
    assert spread["details"]["generalisation"] == memory["details"]["generalisation"]
    assert rows(tmp_path / "spark") == rows(tmp_path / "memory")


def test_a_blank_sensitive_value_is_refused_with_the_way_out():
    """The class table's blank sensitive values, counted in records (the rows' weights), named with
    the column and the two ways out."""
    from veil.engine import BadInput
    from veil.plugins._spark.tables import weighted_sensitive_view

    with pytest.raises(BadInput) as refused:
        weighted_sensitive_view(pd.Series(["flu", None, "hiv", None], name="dx"), np.array([2, 3, 1, 4]))
    message = str(refused.value)
    assert "'dx' is blank in 7 records" in message
    assert "executor=local" in message and "--drop-missing" in message and "\n" not in message
