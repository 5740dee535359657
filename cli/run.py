"""``veil run``: run one method (or a project file's runs) and write each release with its manifest and report."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

from veil.engine import __version__
from veil.engine.base.constants import DEFAULT_MAX_RUNS, DEFAULT_RISK_THRESHOLD
from veil.engine.base.errors import BadInput, PrivacyCheckFailed, printable
from veil.engine.base.io import missing_reason
from veil.engine.base.validate import MAX_SEED

from .arguments import DataOptions, csv_list, data_options, models, positive_int, seed, source, threshold
from .common import EXIT_OK, EXIT_PRIVACY, Interrupted, Progress, Stop, folder_notes, hierarchy_notes

NAME = "run"
HELP = "run one method and write the release and its manifest"


def add_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("project", nargs="?", help="a project file (.json) to run instead of --data/--demo")
    r.add_argument(
        "--max-runs",
        dest="max_runs",
        type=positive_int,
        help=f"refuse a project of more runs than this (default {DEFAULT_MAX_RUNS:,}); every run is "
        f"checked before the first starts",
    )
    src = r.add_mutually_exclusive_group()
    src.add_argument("--data", help="the input file")
    src.add_argument("--demo", action="store_true", help="use the bundled demo data")
    data_options(r)
    r.add_argument(
        "--model",
        action="append",
        help="privacy model as NAME[:key=value,...], e.g. k-anonymity:k=5; "
        "repeat it to combine models (the release must satisfy all)",
    )
    r.add_argument("--method", help="method as NAME[:key=value,...], e.g. all-features")
    r.add_argument(
        "--then",
        metavar="METHOD",
        help="a second step perturbing the method's release record for record, as NAME[:key=value,...], e.g. "
        "pram:columns=marital_status; the privacy models judge the final release",
    )
    r.add_argument(
        "--aggregate",
        action="append",
        metavar="COLUMN=FUNCTION",
        help="aggregate the quasi-identifier COLUMN inside the release's groups instead of grouping on it, by "
        "one of mean, geometric-mean, median, mode, interval, set (e.g. age=mean); repeat it for several columns",
    )
    r.add_argument(
        "--metrics",
        type=csv_list,
        help="metrics to compute (comma-separated; default: the cheap ones that fit "
        "the method; classifier metrics such as auc only when named)",
    )
    r.add_argument("--seed", type=seed, help=f"random seed, a whole number from 0 to {MAX_SEED} (default 0)")
    r.add_argument(
        "--format",
        help="output format, an exporter's name (see `veil plugins`; default: the preferred "
        "exporter, CSV; a set-valued release: the first format that writes item sets)",
    )
    r.add_argument("--no-shuffle", action="store_true", help="keep the input's row order in the release")
    r.add_argument(
        "--into",
        metavar="DATABASE",
        help="write the release as a new table of this existing database (a format that writes tables, "
        "SQLite) instead of a file; the manifest and report still go to --out",
    )
    r.add_argument(
        "--into-table",
        dest="into_table",
        metavar="NAME",
        default="release",
        help="with --into: the table's name (letters, digits and _; default release)",
    )
    r.add_argument(
        "--replace-table",
        dest="replace_table",
        action="store_true",
        help="with --into: replace a table of that name already in the database (refused without it)",
    )
    r.add_argument(
        "--release-sensitive",
        dest="release_sensitive",
        metavar="COLUMNS",
        action="extend",
        type=csv_list,
        default=[],
        help="release these columns marked sensitive although no privacy model protects them "
        "(comma-separated, repeatable); without it a run that would release one is refused",
    )
    r.add_argument(
        "--release-household",
        dest="release_household",
        action="store_true",
        help="release the column marked household (an identifier, withheld without it); the release's "
        "household risk is then computed from it",
    )
    r.add_argument("--no-report", action="store_true", help="write no report.html/report.pdf (faster)")
    r.add_argument(
        "--tuned-report",
        dest="tuned_report",
        action="store_true",
        help="the report's classifier with C tuned per fold, as studies do (six times the fits; "
        "default: one stratified cross-validation with C = 1)",
    )
    r.add_argument(
        "--risk-threshold",
        type=threshold,
        default=DEFAULT_RISK_THRESHOLD,
        help="a record is at risk when its re-identification risk exceeds this "
        f"(default {DEFAULT_RISK_THRESHOLD}: groups smaller than 5)",
    )
    r.add_argument(
        "--population",
        metavar="FILE",
        help="the population the data was drawn from, read like the data (δ-presence and k-map count "
        "each released group's matches in it)",
    )
    r.add_argument(
        "--subset-column",
        dest="subset_column",
        metavar="NAME",
        help="with --population and no --data: the population's 1/0 column marking the data's records",
    )
    r.add_argument("--out", help="output folder")
    r.add_argument(
        "--executor",
        default="in-process",
        help="where a method's parallel work runs (default in-process; others come with plugins)",
    )


@dataclass(frozen=True)
class Options(DataOptions):
    """The flags of ``veil run``."""

    project: str | None
    max_runs: int | None
    data: str | None
    demo: bool
    model: list[str] | None
    method: str | None
    then: str | None
    aggregate: list[str] | None
    metrics: list[str] | None
    seed: int | None
    format: str | None
    no_shuffle: bool
    into: str | None
    into_table: str
    replace_table: bool
    release_sensitive: list[str]
    release_household: bool
    no_report: bool
    tuned_report: bool
    risk_threshold: float
    population: str | None
    subset_column: str | None
    out: str | None
    executor: str


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.release.export import check_into, refuse_inputs_in_output
    from veil.engine.release.manifest import IntoTable
    from veil.engine.release.signing import signer
    from veil.engine.run.executors import make_executor
    from veil.engine.run.project import Project
    from veil.engine.model.aggregation import parse_aggregates
    from veil.engine.run.runs import PluginCall, RunSpec, check_runs, unfit

    if options.project:
        _refuse_flags_of_a_project(options)
        project = Project.load(options.project)
        options = dataclasses.replace(
            options,
            release_sensitive=[*project.release_sensitive, *options.release_sensitive],
            release_household=project.release_household or options.release_household,
        )
        data_source = project.data
        data = project.load_data(registry)
        specs = list(project.all_runs)  # the configured runs, then the transformations chosen one by one
        if not specs:
            raise BadInput(f"{options.project} has no runs to execute")
    else:
        if not (options.data or options.demo or (options.population and options.subset_column)):
            raise BadInput("no input: give --data FILE, --demo or a project file")
        if not options.method:
            raise BadInput("no method: give --method NAME (see `veil plugins`)")
        data_source = source(options, options.data, options.demo)
        metrics = tuple(options.metrics) if options.metrics is not None else ()
        run_seed = 0 if options.seed is None else options.seed
        then = PluginCall.parse(options.then) if options.then else None
        specs = [
            RunSpec(
                PluginCall.parse(options.method),
                models(options.model),
                run_seed,
                metrics,
                then=then,
                aggregates=parse_aggregates(options.aggregate),
            )
        ]
        method = registry.algorithm(specs[0].method.name)
        for model in specs[0].models:  # a parameter out of range is refused before any file is read
            registry.privacy_model(model.name).params(model.params)
        if method.reads_files(method.params(specs[0].method.params)):
            if then is not None:
                raise BadInput("--then: a release written in parts by its method is not perturbed afterwards")
            return _run_parts(registry, specs[0], data_source, options)  # the method reads the files itself
        data = _with_population(registry, data_source, options)
    if not options.out:
        raise BadInput("no output folder: give --out DIR")
    if options.format:
        registry.exporter(options.format)  # fail early on an unknown format
    if options.into is None and (options.into_table != "release" or options.replace_table):
        raise BadInput("--into-table and --replace-table name the table of a database: give --into DATABASE too")
    if options.into is not None and len(specs) > 1:
        raise BadInput("--into writes one release into a database: give it with one run, not a project of several")
    out = Path(options.out)
    if options.project:
        check_runs(registry, specs, max_runs=DEFAULT_MAX_RUNS if options.max_runs is None else options.max_runs)
    elif options.max_runs is not None:
        raise BadInput("--max-runs applies to a project file, whose runs it counts")
    for n, spec in enumerate(specs, start=1):  # what the desktop would not offer on this data is refused
        reason = unfit(registry, data, spec)
        if reason and len(specs) > 1:
            raise BadInput(f"run {n} of {len(specs):,} ({spec.method.name}): {reason}; nothing was run")
        if reason:
            raise BadInput(reason)
    for target in _targets(out, len(specs)):
        refuse_inputs_in_output(
            target,
            source=data_source,
            project=options.project,  # before any method runs
            inputs=(options.names_from,) if options.names_from else (),
        )
    if options.into:  # the database writable and the table's name free (or to be replaced), before the run
        check_into(
            registry,
            options.format or _default_format(registry, None, into=True),
            IntoTable(options.into, options.into_table, options.replace_table),
            protected=[*data_source.files(), options.project, options.names_from, options.population],
        )
    signer()  # the signing key readable (made on the first export): a key others may read is refused before the run
    executor = make_executor(options.executor, registry)
    folder_notes(data_source, data)
    hierarchy_notes(registry, data, specs)
    read_as = (getattr(data, "meta", None) or {}).get("read_as")  # an item-set file's grammar decided
    if read_as:
        where = getattr(data, "source", None) or data.meta.get("source") or "the data"
        print(printable(f"note: {where} was read as {read_as}"), file=sys.stderr)
    return _run_all(registry, data, specs, out, options, data_source, executor, stop)


def _refuse_flags_of_a_project(options: Options) -> None:
    """A project file says what to run and how to read its data: a flag that says it too is refused
    (it would be ignored)."""
    if options.data or options.demo:
        raise BadInput(
            f"give either a project file or --data/--demo, not both: {options.project!r} was read as a "
            f"project file (--data takes one file; a pattern matching several files gives several)"
        )
    given = [
        flag
        for flag, value in (
            ("--method", options.method),
            ("--then", options.then),
            ("--aggregate", options.aggregate),
            ("--model", options.model),
            ("--metrics", options.metrics),
            ("--seed", options.seed),
        )
        if value is not None
    ]
    if given:
        raise BadInput(f"{given[0]} does not apply to a project file, whose runs say what to do")
    read = [
        flag
        for flag, value in (
            ("--names", options.names),
            ("--names-from", options.names_from),
            ("--input-format", options.input_format),
            ("--delimiter", options.delimiter),
            ("--encoding", options.encoding),
            ("--skip-rows", options.skip_rows),
            ("--table", options.table),
            ("--query", options.query),
            ("--drop-missing", options.drop_missing),
            ("--fill-missing", options.fill_missing),
            ("--target", options.target),
            ("--sensitive", options.sensitive),
            ("--identifier", options.identifier),
            ("--quasi", options.quasi),
            ("--hierarchy", options.hierarchy),
            ("--hierarchies", options.hierarchy_folder),
            ("--kind", options.kind),
            ("--population", options.population),
            ("--subset-column", options.subset_column),
        )
        if value
    ]
    if read:  # the project's own data section says how to read its data; the flag would be ignored
        raise BadInput(f"{read[0]} does not apply to a project file, whose data section says how to read it")


def _targets(out: Path, runs: int) -> list[Path]:
    """The folder each run writes: ``out`` for one run, ``out/run-N`` for several."""
    return [out] if runs == 1 else [out / f"run-{n}" for n in range(1, runs + 1)]


def _run_all(registry, data, specs, out: Path, options: Options, data_source, executor, stop: Stop) -> int:
    """Each run in turn, written to its folder; a run that fails its privacy model (of several) is reported
    and the others go on."""
    from veil.engine.run.runs import RunSpec, default_metrics

    failed = []
    for n, (spec, target) in enumerate(zip(specs, _targets(out, len(specs))), start=1):
        if stop.next_run():  # a signal came while the last export finished
            raise Interrupted(stop.deferred)
        if not spec.metrics and options.metrics is None:
            spec = RunSpec(
                spec.method,
                spec.models,
                spec.seed,
                default_metrics(
                    registry,
                    spec.method.name,
                    spec.model.name if spec.model else None,
                    spec.then.name if spec.then else None,
                ),
                spec.recipe,
                then=spec.then,
                aggregates=spec.aggregates,
            )
        try:
            manifest = _run_one(registry, data, spec, target, options, data_source, stop, executor)
        except PrivacyCheckFailed as exc:
            if len(specs) == 1:
                raise
            # one failing run does not stop the others; the exit code says that some failed
            print(
                printable(
                    f"veil: run {n} ({spec.method.name}): privacy check failed, nothing written to {target}: {exc}"
                ),
                file=sys.stderr,
            )
            failed.append(n)
            continue
        _report_release(manifest, target)
    if failed:
        print(
            f"veil: {len(failed)} of {len(specs)} runs failed their privacy model and wrote nothing "
            f"(run {', '.join(map(str, failed))}); the others were written",
            file=sys.stderr,
        )
        return EXIT_PRIVACY
    return EXIT_OK


def _report_release(manifest: dict, target: Path) -> None:
    """What a written release holds that its user should know (stderr), then its folder (stdout)."""
    reached = manifest.get("released_sensitive") or []
    if reached:
        print(
            printable(
                f"note: the release in {target} contains the column{'s' if len(reached) > 1 else ''} "
                f"marked sensitive: {', '.join(reached)} (listed in its manifest and report)"
            ),
            file=sys.stderr,
        )
    budget = (manifest.get("privacy_budget") or {}).get("epsilon_spent")
    if manifest["privacy_model"]["name"] is None and budget is not None:
        print(
            f"note: the release in {target} claims {budget:g}-differential privacy under the assumptions "
            f"listed in its manifest and report; no k-anonymity-style model was checked",
            file=sys.stderr,
        )
    elif manifest["privacy_model"]["name"] is None:
        print(f"note: no privacy model was chosen; the release in {target} makes no privacy claim", file=sys.stderr)
    print(printable(_summary(manifest)), file=sys.stderr)
    print(target)


def _summary(manifest: dict) -> str:
    """One line for the person at the terminal: each model's verdict, the groups, the suppressed records
    (stdout stays the folder alone, for scripts)."""
    parts = [f"{v['model']} {v['message']}" for v in manifest.get("verdicts") or [] if v.get("message")]
    groups = ((manifest.get("risk") or {}).get("after") or {}).get("groups")
    if groups is not None:
        parts.append(f"{groups:,} group{'s' if groups != 1 else ''}")
    suppressed = ((manifest.get("details") or {}).get("generalisation") or {}).get("suppressed_records")
    if suppressed is not None:
        parts.append(
            "no record suppressed"
            if not suppressed
            else f"{suppressed:,} record{'s' if suppressed != 1 else ''} suppressed"
        )
    rows = (manifest.get("output") or {}).get("rows")
    head = f"released {rows:,} records" if rows is not None else "released"
    return "; ".join([head, *parts])


def _with_population(registry, data_source, options: Options):
    """The data, with the population it was drawn from when ``--population`` names one."""
    from veil.engine.data.population import load_with_population

    if options.subset_column and not options.population:
        raise BadInput("--subset-column marks the data's records in a population: give --population FILE too")
    if not options.population:
        return data_source.load(registry)
    if not Path(options.population).is_file():
        raise BadInput(missing_reason(Path(options.population)))
    return load_with_population(registry, data_source, options.population, options.subset_column)


def _run_parts(registry, spec, data_source, options: Options) -> int:
    """A run whose method reads its input files itself and writes its release in parts (a table
    larger than memory, e.g. global recoding on Spark)."""
    from veil.engine.release.assessment import ReportOptions
    from veil.engine.release.partitioned import export_parts
    from veil.engine.run.jobs import Context
    from veil.engine.run.noise import SECURE

    if not options.out:
        raise BadInput("no output folder: give --out DIR")
    if options.release_household:
        raise BadInput("--release-household: a release in parts never holds the household id")
    if options.population:
        raise BadInput(
            "--population: a release in parts is not judged against a population; run the models that "
            "read one on a table held in memory"
        )
    if options.metrics:
        raise BadInput("--metrics: a release in parts is measured by its generalisation figures only (in its manifest)")
    if options.into:
        raise BadInput("--into: a release in parts is written as part files, not into a database")
    if options.format:
        raise BadInput(
            f"--format: a release in parts is written in the format its method's parameters name, "
            f"not {options.format!r}"
        )
    progress = Progress(spec.method.name)
    try:
        manifest = export_parts(
            registry,
            spec,
            data_source,
            Context(spec.seed, progress, noise_source=SECURE),
            Path(options.out),
            version=__version__,
            release_sensitive=options.release_sensitive,
            report=None if options.no_report else ReportOptions(risk_threshold=options.risk_threshold, utility=False),
        )
    finally:
        progress.close()
    gen = (manifest.get("details") or {}).get("generalisation") or {}
    levels = ", ".join(f"{c} {lv}" for c, lv in (gen.get("levels") or {}).items())
    out = manifest["output"]
    print(
        f"{manifest['verdict']['message']}; {out['rows']:,} records in {len(out['parts_of'])} parts; levels "
        f"{levels}; {gen.get('suppressed_records', 0):,} suppressed",
        file=sys.stderr,
    )
    print(options.out)
    return EXIT_OK


def _run_one(registry, data, spec, target: Path, options: Options, data_source, stop: Stop, executor=None) -> dict:
    from veil.engine.release.assessment import ReportOptions
    from veil.engine.release.export import export_release
    from veil.engine.release.manifest import ExportOptions, IntoTable
    from veil.engine.run.jobs import Context
    from veil.engine.run.noise import SECURE
    from veil.engine.run.runs import execute as execute_run

    progress = Progress(spec.method.name)
    token = stop.token()
    report = (
        None if options.no_report else ReportOptions(risk_threshold=options.risk_threshold, tuned=options.tuned_report)
    )
    read = (options.names_from, options.population)  # never written over
    try:
        # one context for the run and its export; a release draws its DP noise from the OS's secure
        # source, the seed still drives everything else
        ctx = Context(spec.seed, progress, token, noise_source=SECURE, executor=executor)
        result = execute_run(
            registry,
            data,
            spec,
            ctx.child(0.0, 0.8),
            version=__version__,
            release_sensitive=options.release_sensitive,
            release_household=options.release_household,
        )
        fmt = options.format or _default_format(registry, result, into=options.into is not None)
        into = IntoTable(options.into, options.into_table, options.replace_table) if options.into else None
        return export_release(
            registry,
            result,
            target,
            ExportOptions(fmt, not options.no_shuffle, into=into),
            report=report,
            source=data_source,
            project=options.project,
            version=__version__,
            ctx=ctx.child(0.8, 1.0),
            inputs=tuple(f for f in read if f),
        ).manifest
    finally:
        progress.close()


def _default_format(registry, result, into: bool = False) -> str:
    """The preferred exporter, or for a set-valued release the first exporter that streams item sets,
    or (``into`` a database) the first that writes tables."""
    if into:
        able = [n for n in registry.names("exporter") if registry.exporter(n).writes_tables]
        return able[0] if able else registry.preferred("exporter")
    if result.release.sets is not None:
        for name in registry.names("exporter"):
            if registry.exporter(name).writes_sets:
                return name
    return registry.preferred("exporter")
