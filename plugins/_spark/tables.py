"""Global recoding on Apache Spark: tables larger than one process holds
(docs/anonymisation.md#global-recoding-on-spark).

Three Spark steps around the very search of the in-memory path (:func:`veil.plugins.anonymisation._recoding.recode`):

1. **read**: the input, one CSV or Parquet file or a folder of them (a partitioned table; every file
   must have the same columns), and count its *class table*: the records per combination of the
   quasi-identifiers and the sensitive value. Its rows, not the records, reach the driver;
2. **search** on the driver: the hierarchies and the lattice search run on the class table, each
   row weighted by its records (``Attribute`` and ``classes_at`` of :mod:`veil.plugins.anonymisation._lattice`), so
   levels, suppression and metric are those of the in-memory path on the same records;
3. **write**: every record generalised to the chosen levels, the records of the classes written
   ``*`` suppressed in every quasi-identifier, as part files (one per Spark partition) in the
   export's staging folder; the engine names, hashes and counts them and judges them again before
   any is released (:mod:`veil.engine.release.partitioned`).

The driver holds the class table (its rows: the distinct combinations, at most the records) and the
hierarchies; the records stay with Spark. pyspark is imported only inside functions.
"""

from __future__ import annotations

import csv
import threading
import uuid
import warnings
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pandas as pd

from veil.engine import (
    blanks_message,
    COUNT,
    BadInput,
    Cancelled,
    GroupView,
    Hierarchy,
    PartsRelease,
    Role,
    Schema,
    SUPPRESSED,
    Table,
    format_value,
    hierarchy_from_spec,
    is_hierarchy_spec,
)

from .._formulas import escape_formulas
from ..anonymisation._lattice import attributes
from ..anonymisation._recoding import SPARK_BLANKS, parse_levels, recode
from ..anonymisation._sensitive import reads_sensitive
from .session import one_line, spark_session

FORMATS = {".csv": "csv", ".parquet": "parquet"}
ARROW_BATCH = 100_000  # records per batch the release's writer generalises at once


# ------------------------------------------------------------------------------------ the input
def input_files(path: str | Path) -> tuple[list[Path], str]:
    """The files of a table: the file itself, or every CSV or Parquet file under a folder (Spark's
    ``_SUCCESS`` and hidden files skipped); its format. BadInput for anything else."""
    p = Path(path)
    if p.is_file():
        fmt = FORMATS.get(p.suffix.lower())
        if fmt is None:
            raise BadInput(f"{p.name}: a table read on Spark is a .csv or .parquet file, or a folder of them")
        return [p], fmt
    if not p.is_dir():
        raise BadInput(f"no such file or folder: {p}")
    files = sorted(
        f
        for f in p.rglob("*")
        if f.is_file() and not any(part.startswith((".", "_")) for part in f.relative_to(p).parts)
    )
    kinds = {FORMATS.get(f.suffix.lower()) for f in files}
    if not files or None in kinds:
        other = next((f for f in files if FORMATS.get(f.suffix.lower()) is None), None)
        raise BadInput(
            f"the folder {p} holds {other.name if other else 'no files'}; a table read on Spark is a "
            f"folder of .csv or .parquet files"
        )
    if len(kinds) > 1:
        raise BadInput(f"the folder {p} mixes .csv and .parquet files; give a folder of one format")
    return files, kinds.pop()


def check_schemas(files: list[Path], fmt: str, delimiter: str = ",") -> list[str]:
    """The columns every file has (Parquet: with their types); BadInput naming two files that differ."""

    def schema(f: Path):
        if fmt == "parquet":
            import pyarrow.parquet as pq

            try:
                s = pq.read_schema(f)
            except Exception as exc:  # pyarrow's own errors on a damaged footer
                raise BadInput(f"{f.name} cannot be read as parquet: {one_line(exc)}") from None
            return [(n, str(t)) for n, t in zip(s.names, s.types)]
        with open(f, newline="", encoding="utf-8") as handle:
            return [(n, "") for n in next(csv.reader(handle, delimiter=delimiter), [])]

    first = schema(files[0])
    for f in files[1:]:
        other = schema(f)
        if other != first:
            show = lambda s: ", ".join(f"{n} {t}".strip() for n, t in s)
            raise BadInput(
                f"the input's files have different schemas: {files[0].name} has ({show(first)}), "
                f"{f.name} has ({show(other)}); give files with the same columns"
            )
    if not first:
        raise BadInput(f"{files[0].name} has no columns")
    return [n for n, _ in first]


def read_table(session, source):
    """The Spark DataFrame of ``source``'s file or folder, its files and their format."""
    if source.demo or not source.path:
        raise BadInput("a run on Spark reads a file or a folder of files: give --data")
    if (
        source.append
        or source.names
        or source.skip_rows
        or source.drop_missing
        or source.missing
        or source.columns
        or source.sheet
    ):
        raise BadInput(
            "a run on Spark reads the files as they are: names, skipped rows, dropped records and appended "
            "files are not supported there"
        )
    files, fmt = input_files(source.path)
    delimiter = source.delimiter or ","
    columns = check_schemas(files, fmt, delimiter)
    paths = [str(f) for f in files]
    try:
        if fmt == "parquet":
            frame = session.read.option("recursiveFileLookup", True).parquet(*paths)
        else:
            frame = (
                session.read.option("recursiveFileLookup", True)
                .option("header", True)
                .option("inferSchema", True)
                .option("sep", delimiter)
                .option("encoding", source.encoding or "UTF-8")
                .csv(paths)
            )
    except Exception as exc:
        raise BadInput(f"Spark cannot read {source.path}: {one_line(exc)}") from None
    if list(frame.columns) != columns:
        raise BadInput(
            f"Spark reads the columns of {source.path} as {', '.join(frame.columns)}, not {', '.join(columns)}"
        )
    return frame, files, fmt


def roles_of(columns: list[str], given: dict) -> dict[str, Role]:
    unknown = [c for c in given if c not in columns]
    if unknown:
        raise BadInput(f"no column named {unknown[0]!r}; columns are {', '.join(columns)}")
    return {c: Role(given.get(c, Role.INSENSITIVE)) for c in columns}


# ------------------------------------------------------------------------------------ Spark jobs
def run_job(sc, job, ctx, label: str):
    """``job()`` in its own Spark job group on a helper thread: the run's cancel stops the group, and
    its progress shows the group's finished tasks."""
    from pyspark import InheritableThread

    group = f"veil-{uuid.uuid4().hex}"
    out: dict = {}

    def work():
        sc.setJobGroup(group, f"Veil: {label}", interruptOnCancel=True)
        try:
            with warnings.catch_warnings():  # pyspark's notice about pandas 3 concerns its pandas API, unused here
                warnings.filterwarnings("ignore", module="pyspark")
                out["value"] = job()
        except BaseException as exc:  # reported on the calling thread
            out["error"] = exc

    stop = lambda: sc.cancelJobGroup(group)
    unregister = ctx.on_cancel(stop)
    thread = InheritableThread(target=work, daemon=True)
    shown = None
    try:
        thread.start()
        while thread.is_alive():
            thread.join(0.2)
            try:
                ctx.check()
            except Cancelled:
                stop()
                raise
            done, total = tasks(sc, group)
            if total and (done, total) != shown:
                ctx.progress(done / total, f"{label} on Spark: {done}/{total} tasks")
                shown = (done, total)
    finally:
        unregister()
    if "error" in out:
        ctx.check()  # a job stopped by a cancel says Cancelled, not the Java error
        raise BadInput(f"the Spark job ({label}) failed: {one_line(out['error'])}") from None
    return out["value"]


def tasks(sc, group: str) -> tuple[int, int]:
    """The finished and all tasks of the group's jobs so far (Spark's status tracker)."""
    tracker = sc.statusTracker()
    done = total = 0
    for job_id in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job_id)
        for stage_id in info.stageIds if info else []:
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                done, total = done + stage.numCompletedTasks, total + stage.numTasks
    return done, total


# ------------------------------------------------------------------------------------ the run
def weighted_views(
    counted: pd.DataFrame, sensitive: list[str], weights: np.ndarray, hierarchies=None
) -> list[GroupView]:
    """One weighted view per sensitive column of the class table (each judged on its own), or one
    without sensitive codes when no model reads them."""
    if not sensitive:
        return [weighted_sensitive_view(None, weights)]
    return [weighted_sensitive_view(counted[c], weights, (hierarchies or {}).get(c)) for c in sensitive]


def weighted_sensitive_view(values: pd.Series | None, weights: np.ndarray, hierarchy=None) -> GroupView:
    """Each class-table row's sensitive code, Q over the records, the values (numbers ascending,
    categories in order of appearance), as the in-memory path's view of the records."""
    zeros = np.zeros(len(weights), dtype=np.int64)
    if values is None:
        return GroupView.from_codes(zeros, None, None)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if (codes < 0).any():
        blank = int(np.asarray(weights)[codes < 0].sum())
        raise BadInput(
            f"the sensitive column {values.name!r} is blank in {blank:,} record{'s' if blank != 1 else ''}, which "
            "the Spark executor does not judge: run with executor=local, which judges each group on its known "
            "sensitive values, or drop or fill those records when opening the file (--drop-missing, --fill-missing)"
        )
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    uniques = np.asarray(uniques)
    if numeric:
        order = np.argsort(uniques, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes, uniques = rank[codes], uniques[order]
    q = np.bincount(codes, weights=weights, minlength=len(uniques)) / float(weights.sum())
    return GroupView.from_codes(
        zeros,
        codes.astype(np.int64),
        q,
        tuple(v.item() if isinstance(v, np.generic) else v for v in uniques),
        numeric,
        hierarchy=hierarchy,
    )


def _hierarchies(table: Table, source, qis: list[str]) -> Table:
    """The class table as a :class:`Table` with the source's kinds and hierarchies attached, those of
    its hierarchy folder too (the generated ones then come from the distinct values, as on the records)."""
    if source.kinds:
        table = Table(table.frame, table.schema.with_kinds({c: k for c, k in source.kinds.items() if c in qis}))
    for column, given in source.hierarchies.items():
        if column in qis:  # a file, or a text spec generated over the column's values in the class table
            hierarchy = (
                hierarchy_from_spec(given, table.frame[column], name=column)
                if is_hierarchy_spec(given)
                else Hierarchy.from_arx_csv(given, name=column)
            )
            table = table.with_hierarchy(column, hierarchy)
    found = source.folder_hierarchies(table)  # a folder of hierarchy files, matched as everywhere else
    for column, hierarchy in (found.usable() if found is not None else {}).items():
        if column in qis:
            table = table.with_hierarchy(column, hierarchy)
    return table


def recode_on_spark(source, model, params, ctx, scratch: Path) -> PartsRelease:
    """Global recoding of ``source`` on Spark (module docstring), the release written into ``scratch``."""

    ctx.progress(0.0, f"starting Spark ({params.spark_master})")
    session = spark_session(params.spark_master)
    session.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH))
    frame, files, fmt = read_table(session, source)
    roles = roles_of(list(frame.columns), source.roles)
    declared = [c for c, r in roles.items() if r is Role.QUASI_IDENTIFIER]
    qis = declared or [c for c, r in roles.items() if r is Role.INSENSITIVE]
    sensitive = [c for c, r in roles.items() if r is Role.SENSITIVE]  # every one judged on its own
    qis = [c for c in qis if c not in sensitive]
    if not qis:
        raise BadInput(
            "global recoding needs quasi-identifiers: mark the columns that identify people as quasi-identifiers"
        )
    target = next((c for c, r in roles.items() if r is Role.TARGET), None)
    released = [c for c, r in roles.items() if r not in (Role.IDENTIFIER, Role.HOUSEHOLD)]
    chosen = parse_levels(params.levels, qis)
    reads = bool(sensitive) and reads_sensitive(model)
    keys = qis + (sensitive if reads else [])

    counted = run_job(
        session.sparkContext,
        lambda: frame.groupBy(*keys).count().toPandas(),
        ctx.child(0.0, 0.3),
        "counting the classes",
    )
    weights = counted.pop("count").to_numpy(dtype=np.int64)
    n = int(weights.sum())
    if n == 0:
        raise BadInput("the table has no records to anonymise")
    ctx.progress(0.3, f"global recoding: {len(counted):,} classes of {n:,} records")
    blank = {c: int(weights[counted[c].isna().to_numpy()].sum()) for c in qis}  # records, not classes
    if any(blank.values()):
        raise BadInput(blanks_message({c: m for c, m in blank.items() if m}, "anonymising on Spark", SPARK_BLANKS))
    table = _hierarchies(Table.from_frame(counted.reset_index(drop=True)), source, qis)
    attrs = attributes(table, qis, ctx.check, weights)
    done = recode(
        attrs,
        model,
        params,
        weighted_views(counted, sensitive if reads else [], weights),
        n,
        chosen,
        ctx.child(0.3, 0.8),
        weights,
    )

    # each value's text at its chosen level, and the classes written * (by their nodes)
    texts = {}
    for a, level in zip(done.attrs, done.levels):
        node_text = np.array([format_value(a.value(level, i)) for i in range(a.n_nodes[level])], dtype=object)
        leaf = dict(zip(table.frame[a.name].tolist(), a.leaf.tolist()))
        texts[a.name] = ({v: int(a.anc[level][leaf[v]]) for v in leaf}, node_text, a.n_nodes[level])
    starred = {tuple(int(x) for x in done.table.codes[:, c]) for c in np.flatnonzero(done.written)}
    star = format_value(SUPPRESSED)
    spans = [texts[q][2] for q in qis]
    strides = [int(np.prod(spans[j + 1 :], dtype=object)) for j in range(len(spans))]
    starred_keys = None  # the starred classes as mixed-radix keys, when the keys fit in 63 bits
    if starred and int(np.prod(spans, dtype=object)) < 1 << 62:
        starred_keys = np.array(sorted(sum(c * s for c, s in zip(k, strides)) for k in starred), dtype=np.int64)
    out_path = scratch / "parts"
    part_fmt = params.part_format

    def generalise(batches):
        for batch in batches:
            nodes = [batch[q].map(texts[q][0]).to_numpy(dtype=np.int64) for q in qis]
            hidden = np.zeros(len(batch), dtype=bool)
            if starred_keys is not None:
                key = np.zeros(len(batch), dtype=np.int64)
                for node, stride in zip(nodes, strides):
                    key += node * stride
                hidden = np.isin(key, starred_keys)
            elif starred:
                hidden = np.fromiter((k in starred for k in zip(*nodes)), dtype=bool, count=len(batch))
            for q, node in zip(qis, nodes):
                column = texts[q][1][node]
                column[hidden] = star
                batch[q] = column
            out = batch[released]
            if part_fmt == "csv":  # text cells a spreadsheet would run as formulas, escaped as Veil's CSV does
                escaped = escape_formulas(out)
                escaped.columns = out.columns
                out = escaped
            yield out

    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType(
        [StructField(f.name, StringType(), True) if f.name in qis else f for f in frame.select(*released).schema.fields]
    )

    def write():
        out = frame.select(*released).mapInPandas(generalise, schema)
        writer = out.write.mode("error")
        if part_fmt == "csv":
            writer.option("header", True).option("emptyValue", "").csv(str(out_path))
        else:
            writer.parquet(str(out_path))

    run_job(session.sparkContext, write, ctx.child(0.8, 0.95), "writing the release")
    parts = sorted(p for p in out_path.glob("part-*") if p.is_file() and not p.name.endswith(".crc"))
    if not parts:
        raise BadInput("Spark wrote no part of the release")
    details = {
        **done.details,
        "executor": "spark",
        "spark_master": params.spark_master,
        "classes_read": int(len(counted)),
        "input_files": len(files),
    }
    notes = (
        (f"{done.suppressed:,} of {n:,} records suppressed: every quasi-identifier written *, the records kept",)
        if done.suppressed
        else ()
    )
    return PartsRelease(
        tuple(parts),
        part_fmt,
        tuple(released),
        tuple(qis),
        tuple(c for c in sensitive if c in released),
        target,
        n,
        n,
        details,
        notes,
        SparkExecutor(params.spark_master),
        input_classes(counted, qis, weights),
    )


def input_classes(counted: pd.DataFrame, qis: list[str], weights: np.ndarray) -> np.ndarray:
    """The records of each class of the input on the quasi-identifiers, from the class table counted
    for the search (its rows may also split a class by sensitive value): the report's risk before."""
    if len(counted.columns) == len(qis):
        return weights.copy()
    keys = counted[qis].reset_index(drop=True)
    return pd.Series(weights).groupby([keys[q] for q in qis], sort=False, dropna=False).sum().to_numpy(dtype=np.int64)


def recode_table_on_spark(data, qis: list[str], sensitive: list[str], model, params, ctx):
    """Global recoding of a table already loaded here (the desktop's runs) with its class table counted
    on Spark (``params.spark_master``) and the search on it; the release is made here from the
    records, as the in-memory path makes it. Returns the :class:`.global_recoding.Recoding` of the
    class table (its levels, suppression and details: the search's)."""

    ctx.progress(0.0, f"starting Spark ({params.spark_master})")
    session = spark_session(params.spark_master)
    reads = bool(sensitive) and reads_sensitive(model)
    keys = qis + (list(sensitive) if reads else [])
    chosen = parse_levels(params.levels, qis)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="pyspark")
        frame = session.createDataFrame(data.frame[keys].reset_index(drop=True))
    counted = run_job(
        session.sparkContext,
        lambda: frame.groupBy(*keys).count().toPandas(),
        ctx.child(0.0, 0.3),
        "counting the classes",
    )
    weights = counted.pop("count").to_numpy(dtype=np.int64)
    table = Table(counted.reset_index(drop=True), Schema(tuple(data.schema[c] for c in keys)))
    attrs = attributes(table, qis, ctx.check, weights)
    hierarchies = {c: data.schema[c].hierarchy for c in sensitive}
    done = recode(
        attrs,
        model,
        params,
        weighted_views(counted, sensitive if reads else [], weights, hierarchies),
        int(weights.sum()),
        chosen,
        ctx.child(0.3, 0.9),
        weights,
    )
    return done


# ------------------------------------------------------------------------------------ the executor
class SparkExecutor:
    """The ``spark`` executor service: counts tables in files on a Spark session (``master``) and maps
    functions over items as Spark tasks."""

    name = "spark"

    def __init__(self, master: str = "local[*]", check=None, threads: int | None = None):
        self.master, self._check, self.threads = master, check, threads
        self._lock = threading.Lock()

    def _session(self):
        with self._lock:
            return spark_session(self.master)

    def map(self, fn, items) -> list:
        items = list(items)
        sc = self._session().sparkContext
        return sc.parallelize(items, max(1, min(len(items), sc.defaultParallelism))).map(fn).collect() if items else []

    def class_counts(self, files, fmt: str, columns: list[str]) -> tuple[pd.DataFrame, list[int]]:
        """See :meth:`veil.engine.Executor.class_counts`: every value read as text, on Spark."""
        from pyspark.sql import functions as F

        session = self._session()
        paths = [str(Path(f)) for f in files]
        try:
            if fmt == "csv":
                frame = session.read.option("header", True).option("inferSchema", False).csv(paths)
            else:
                frame = session.read.option("recursiveFileLookup", True).parquet(*paths)
        except Exception as exc:
            raise BadInput(f"Spark cannot read the release: {one_line(exc)}") from None
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise BadInput(f"the release lacks the column {missing[0]!r}")
        texts = [F.coalesce(F.col(c).cast("string"), F.lit("")).alias(c) for c in columns]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module="pyspark")
            counted = (
                frame.select(*texts, F.input_file_name().alias("_file")).groupBy("_file", *columns).count().toPandas()
            )
        names = counted.pop("_file").map(lambda uri: unquote(uri.rsplit("/", 1)[-1]))
        per_file = counted[COUNT].groupby(names).sum()
        rows = [int(per_file.get(Path(f).name, 0)) for f in files]
        if columns:
            counts = counted.groupby(columns, sort=False).sum().reset_index()
        else:
            counts = pd.DataFrame({COUNT: [int(counted[COUNT].sum())]})
        return counts, rows

    def close(self) -> None:
        pass
