"""Veil's command line: the same engine as the desktop, headless.

Exit codes: 0 success, 1 a privacy check failed, 2 bad input (one line on stderr, no traceback),
3 an internal error (a bug: one line, the traceback in a log file), 130 interrupted (Ctrl+C, SIGINT),
143 terminated (SIGTERM). An interrupted or terminated export leaves the output folder as it was; a
signal that arrives while an export's files are being moved into place lets that finish, and the
command ends normally saying "finished before the interrupt took effect".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
import threading
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from veil.engine import __version__
from veil.engine.base.constants import DEFAULT_RISK_THRESHOLD
from veil.engine.base.errors import BadInput, Cancelled, PluginError, PrivacyCheckFailed, printable

# The engine's modules (pandas, scikit-learn, matplotlib behind them) are imported by the command
# that needs them, so `veil --help` and argument errors answer at once.
from veil.engine.base.constants import DEFAULT_MAX_RUNS
from veil.engine.base.io import missing_reason
from veil.engine.base.validate import MAX_SEED

EXIT_OK, EXIT_PRIVACY, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def make_registry(plugins: Sequence[str] | None = ()):
    """The plugin registry (imported when a command runs, not for --help), with the plugins being
    tried out (``--plugin``, ``VEIL_PLUGINS``)."""
    from veil.engine.model.registry import make_registry as make, plugins_to_try

    return make(extra=plugins_to_try(plugins))


class _StoreOnce(argparse.Action):
    """argparse's "store", refusing a second value: ``--seed 1 --seed 2`` would silently run seed 2."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in seen:
            parser.error(f"{option_string or self.dest} is given twice; give it once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)  # every option that takes one value
        self.register("action", "store", _StoreOnce)

    def error(self, message):  # one line, exit 2 (argparse's default prints the usage too)
        raise BadInput(f"{message} (see `{self.prog} --help`)")


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number from 0 to {MAX_SEED}, got {value}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {value}")
    return value


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the risk threshold must be a number, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"the risk threshold must be between 0 and 1, got {value}")
    return value


def _hierarchy_flag(text: str) -> tuple[str, str]:
    column, sep, path = text.partition("=")
    if not sep or not column.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"give a hierarchy as COLUMN=FILE or COLUMN=intervals:width=…, got {text!r}")
    return column.strip(), path.strip()


def _kind_flag(text: str) -> tuple[str, str]:
    column, sep, kind = text.partition("=")
    if not sep or not column.strip() or not kind.strip():
        raise argparse.ArgumentTypeError(
            f"give a column's kind as COLUMN=KIND (numeric, categorical, date, …), got {text!r}"
        )
    return column.strip(), kind.strip()


def _csv_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _columns(text: str) -> list[str]:
    """Column names, comma-separated: at least one (``--quasi ""``, from an unset shell variable,
    would otherwise leave the roles as if the flag were not there)."""
    names = _csv_list(text)
    if not names:
        raise argparse.ArgumentTypeError(f"expected one or more column names, comma-separated, got {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="veil", description="Release sensitive tables safely. With no command, opens the desktop.")
    p.add_argument("--version", action="version", version=f"veil {__version__}")
    p.add_argument(
        "--plugin",
        action="append",
        metavar="MODULE",
        help="load a plugin without installing it: a module's name or a .py file (repeatable; also VEIL_PLUGINS)",
    )
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    r = sub.add_parser("run", help="run one method and write the release and its manifest")
    r.add_argument("project", nargs="?", help="a project file (.json) to run instead of --data/--demo")
    r.add_argument(
        "--max-runs",
        dest="max_runs",
        type=_positive_int,
        help=f"refuse a project of more runs than this (default {DEFAULT_MAX_RUNS:,}); every run is "
        f"checked before the first starts",
    )
    src = r.add_mutually_exclusive_group()
    src.add_argument("--data", help="the input file")
    src.add_argument("--demo", action="store_true", help="use the bundled demo data")
    _data_options(r)
    r.add_argument(
        "--model",
        action="append",
        help="privacy model as NAME[:key=value,...], e.g. k-anonymity:k=5; "
        "repeat it to combine models (the release must satisfy all)",
    )
    r.add_argument("--method", help="method as NAME[:key=value,...], e.g. all-features")
    r.add_argument(
        "--metrics",
        type=_csv_list,
        help="metrics to compute (comma-separated; default: the cheap ones that fit "
        "the method; classifier metrics such as auc only when named)",
    )
    r.add_argument("--seed", type=_seed, help=f"random seed, a whole number from 0 to {MAX_SEED} (default 0)")
    r.add_argument(
        "--format",
        help="output format, an exporter's name (see `veil plugins`; default: the preferred "
        "exporter, CSV; a set-valued release: the first format that writes item sets)",
    )
    r.add_argument("--no-shuffle", action="store_true", help="keep the input's row order in the release")
    r.add_argument(
        "--release-sensitive",
        dest="release_sensitive",
        metavar="COLUMNS",
        action="extend",
        type=_csv_list,
        default=[],
        help="release these columns marked sensitive although no privacy model protects them "
        "(comma-separated, repeatable); without it a run that would release one is refused",
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
        type=_threshold,
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

    rp = sub.add_parser("report", help="regenerate report.html and report.pdf of an export folder")
    rp.add_argument("folder", help="the folder holding manifest.json and the released file")
    rp.add_argument("--risk-threshold", type=_threshold, help="risk threshold (default: the manifest's)")
    rp.add_argument(
        "--no-utility", action="store_true", help="do not retrain the classifier; show the recorded figures"
    )

    s = sub.add_parser("study", help="run a study file and write results.csv and its charts")
    s.add_argument("study", help="the study file (.json)")
    s.add_argument("--out", required=True, help="output folder")
    s.add_argument(
        "--max-runs",
        dest="max_runs",
        type=_positive_int,
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

    v = sub.add_parser("verify", help="re-check a released file against its privacy model")
    v.add_argument("path", help="a manifest.json (or its folder), or a released file with --model")
    v.add_argument(
        "--model",
        action="append",
        help="privacy model for a bare file, NAME[:key=value,...] (repeat it to check several)",
    )
    v.add_argument(
        "--public-key",
        help="the signer's public key (a release-signing-key.pub): refuse a manifest this key did not sign",
    )
    v.add_argument("--format", help="format of a bare file (default from its extension)")
    v.add_argument("--target", help="the target column of a bare file")
    v.add_argument(
        "--sensitive",
        action="extend",
        type=_columns,
        default=[],
        help="sensitive columns of a bare file (comma-separated)",
    )
    v.add_argument(
        "--population", metavar="FILE", help="for a bare file: the population it was drawn from (δ-presence, k-map)"
    )
    v.add_argument(
        "--quasi", action="extend", type=_columns, help="quasi-identifier columns (default: all but target/sensitive)"
    )
    v.add_argument(
        "--hierarchy",
        action="append",
        type=_hierarchy_flag,
        default=[],
        help="for a bare file: a column's hierarchy as COLUMN=FILE (ARX's CSV format, repeatable): a "
        "sensitive column's for t-closeness with distance=hierarchical or ordered; with "
        "--population, a quasi-identifier's, whose labels the file shows",
    )
    v.add_argument(
        "--executor",
        default="in-process",
        help="where a release in parts is read back and counted (default in-process; spark: on Apache "
        "Spark, with --master)",
    )
    v.add_argument(
        "--master",
        help="the master URL of the executor's cluster, e.g. local[2] or spark://host:7077 "
        "(default: the executor's own)",
    )

    i = sub.add_parser("inspect", help="describe a data file: rows, columns, kinds, suggested roles")
    i.add_argument("path")
    _read_options(i)

    h = sub.add_parser("hierarchy", help="generate a column's hierarchy (e.g. intervals) and write it in ARX's format")
    h.add_argument("path", help="the data file")
    h.add_argument("--column", required=True, help="the column to build the hierarchy for")
    h.add_argument(
        "--build",
        required=True,
        metavar="SPEC",
        help="what to generate: intervals:width=10,fanout=2,start=0,bottom=20,top=90 (width of the first "
        "level, neighbours merged per level, where the intervals start, bottom and top coding), "
        "quantiles:bins=4,fanout=2, masking or dates",
    )
    h.add_argument("--out", help="the ARX hierarchy file to write (default: print it)")
    _read_options(h)

    pl = sub.add_parser("plugins", help="list the installed plugins")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _read_options(p):
    p.add_argument("--names", type=_columns, help="column names for a headerless file, comma-separated")
    p.add_argument(
        "--names-from",
        dest="names_from",
        metavar="FILE",
        help="read the column names from FILE: a UCI .names file or a one-line header",
    )
    p.add_argument("--input-format", dest="input_format", help="importer name (default: detected)")
    p.add_argument("--delimiter", help="field separator (default: detected)")
    p.add_argument("--encoding", help="text encoding (default: detected)")
    p.add_argument(
        "--skip-rows",
        dest="skip_rows",
        type=int,
        default=0,
        help="lines to skip at the top of a text file (e.g. 1 for UCI's adult.test)",
    )
    p.add_argument(
        "--drop-missing",
        dest="drop_missing",
        action="store_true",
        help="drop every record with a missing value (an empty cell or '?') in any column, as the "
        "papers do with Adult; the manifest records it",
    )
    p.add_argument(
        "--fill-missing",
        dest="fill_missing",
        choices=("value", "impute"),
        help="instead, fill every missing value: 'value' keeps a blank as a value of its own, 'impute' "
        "uses the column's median (numbers) or most frequent value; the manifest records it",
    )


def _data_options(p):
    _read_options(p)
    p.add_argument("--target", help="the column to predict")
    p.add_argument(
        "--sensitive",
        action="extend",
        type=_columns,
        default=[],
        help="sensitive columns (comma-separated, repeatable)",
    )
    p.add_argument(
        "--identifier",
        action="extend",
        type=_columns,
        default=[],
        help="direct identifier columns, never released (comma-separated, repeatable)",
    )
    p.add_argument(
        "--quasi",
        action="extend",
        type=_columns,
        default=[],
        help="quasi-identifier columns (comma-separated, repeatable)",
    )
    p.add_argument(
        "--hierarchy",
        action="append",
        type=_hierarchy_flag,
        default=[],
        help="a column's generalisation hierarchy as COLUMN=FILE (ARX's CSV format) or generated as "
        "COLUMN=intervals:width=10,fanout=2,start=0,bottom=20,top=90 (also quantiles:bins=4, "
        "masking, dates; repeatable)",
    )
    p.add_argument(
        "--kind",
        action="append",
        type=_kind_flag,
        default=[],
        help="a column's kind as COLUMN=KIND, overriding the detected one: numeric, categorical, date, … (repeatable)",
    )


def _source(args):
    from veil.engine.data.datasource import DataSource
    from veil.engine.data.names import read_column_names

    if args.names_from:
        if args.names:
            raise BadInput("give --names or --names-from, not both")
        args.names = list(read_column_names(args.names_from))
    d = {
        "path": getattr(args, "data", None) or getattr(args, "path", None),
        "demo": getattr(args, "demo", False),
        "names": args.names,
        "fmt": args.input_format,
        "delimiter": args.delimiter,
        "encoding": args.encoding,
        "skip_rows": args.skip_rows,
        "drop_missing": getattr(args, "drop_missing", False),
        "fill_missing": getattr(args, "fill_missing", None),
        "target": getattr(args, "target", None),
        "identifiers": getattr(args, "identifier", []),
        "quasi_identifiers": getattr(args, "quasi", []),
        "sensitive": getattr(args, "sensitive", []),
        "hierarchies": _hierarchies(getattr(args, "hierarchy", None) or []),
        "kinds": _once_per_column(getattr(args, "kind", None) or [], "--kind"),
    }
    return DataSource.from_dict(d)


def _once_per_column(given: list[tuple[str, str]], flag: str) -> dict:
    found: dict[str, str] = {}
    for column, value in given:
        if column in found:
            raise BadInput(
                f"{flag} is given twice for column {column!r} ({found[column]} and {value}); give one per column"
            )
        found[column] = value
    return found


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


def _hierarchies(given: list[tuple[str, str]]) -> dict:
    """Column → hierarchy file of the --hierarchy flags; a column given two is refused (one would be
    dropped without a word)."""
    return _once_per_column(given, "--hierarchy")


class _Progress:
    """A tqdm bar on a terminal; silent otherwise."""

    def __init__(self, label: str):
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=1000,
                desc=label,
                file=sys.stderr,
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed} {postfix}",
            )

    def __call__(self, fraction: float, message: str) -> None:
        if self.bar is not None:
            self.bar.n = int(fraction * 1000)
            self.bar.set_postfix_str(message, refresh=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def cmd_run(args, registry) -> int:
    from veil.engine.release.export import refuse_inputs_in_output
    from veil.engine.release.signing import signer
    from veil.engine.run.project import Project
    from veil.engine.run.runs import check_runs, unfit
    from veil.engine.run.runs import PluginCall, RunSpec, default_metrics

    if args.project:
        if args.data or args.demo:
            raise BadInput(
                f"give either a project file or --data/--demo, not both: {args.project!r} was read as a "
                f"project file (--data takes one file; a pattern matching several files gives several)"
            )
        given = [
            flag
            for flag, value in (
                ("--method", args.method),
                ("--model", args.model),
                ("--metrics", args.metrics),
                ("--seed", args.seed),
            )
            if value is not None
        ]
        if given:
            raise BadInput(f"{given[0]} does not apply to a project file, whose runs say what to do")
        read = [
            flag
            for flag, value in (
                ("--names", args.names),
                ("--names-from", args.names_from),
                ("--input-format", args.input_format),
                ("--delimiter", args.delimiter),
                ("--encoding", args.encoding),
                ("--skip-rows", args.skip_rows),
                ("--drop-missing", args.drop_missing),
                ("--fill-missing", args.fill_missing),
                ("--target", args.target),
                ("--sensitive", args.sensitive),
                ("--identifier", args.identifier),
                ("--quasi", args.quasi),
                ("--hierarchy", args.hierarchy),
                ("--kind", args.kind),
                ("--population", args.population),
                ("--subset-column", args.subset_column),
            )
            if value
        ]
        if read:  # the project's own data section says how to read its data; the flag would be ignored
            raise BadInput(f"{read[0]} does not apply to a project file, whose data section says how to read it")
        project = Project.load(args.project)
        args.release_sensitive = [*project.release_sensitive, *args.release_sensitive]
        source = project.data
        data = project.load_data(registry)
        specs = list(project.runs)
        if not specs:
            raise BadInput(f"{args.project} has no runs to execute")
    else:
        if not (args.data or args.demo or (args.population and args.subset_column)):
            raise BadInput("no input: give --data FILE, --demo or a project file")
        if not args.method:
            raise BadInput("no method: give --method NAME (see `veil plugins`)")
        source = _source(args)
        metrics = tuple(args.metrics) if args.metrics is not None else ()
        seed = 0 if args.seed is None else args.seed
        specs = [RunSpec(PluginCall.parse(args.method), _models(args.model), seed, metrics)]
        method = registry.algorithm(specs[0].method.name)
        if method.reads_files(method.params(specs[0].method.params)):
            return _run_parts(registry, specs[0], source, args)  # the method reads the files itself
        data = _with_population(registry, source, args)
    if not args.out:
        raise BadInput("no output folder: give --out DIR")
    if args.format:
        registry.exporter(args.format)  # fail early on an unknown format
    out = Path(args.out)
    if args.project:
        check_runs(registry, specs, max_runs=DEFAULT_MAX_RUNS if args.max_runs is None else args.max_runs)
    elif args.max_runs is not None:
        raise BadInput("--max-runs applies to a project file, whose runs it counts")
    for n, spec in enumerate(specs, start=1):  # what the desktop would not offer on this data is refused
        reason = unfit(registry, data, spec)
        if reason and len(specs) > 1:
            raise BadInput(f"run {n} of {len(specs):,} ({spec.method.name}): {reason}; nothing was run")
        if reason:
            raise BadInput(reason)
    names_from = getattr(args, "names_from", None)
    for target in [out] if len(specs) == 1 else [out / f"run-{n}" for n in range(1, len(specs) + 1)]:
        refuse_inputs_in_output(
            target,
            source=source,
            project=args.project,  # before any method runs
            inputs=(names_from,) if names_from else (),
        )
    signer()  # the signing key readable (made on the first export): a key others may read is refused before the run
    executor = _executor(args, registry)
    _hierarchy_notes(registry, data, [spec.method for spec in specs])
    failed = []
    for n, spec in enumerate(specs, start=1):
        if hasattr(args, "stop") and args.stop.next_run():  # a signal came while the last export finished
            raise Interrupted(args.stop.deferred)
        if not spec.metrics and args.metrics is None:
            spec = RunSpec(
                spec.method,
                spec.models,
                spec.seed,
                default_metrics(registry, spec.method.name, spec.model.name if spec.model else None),
                spec.recipe,
            )
        target = out if len(specs) == 1 else out / f"run-{n}"
        try:
            manifest = _run_one(registry, data, spec, target, args, source, executor)
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
    if failed:
        print(
            f"veil: {len(failed)} of {len(specs)} runs failed their privacy model and wrote nothing "
            f"(run {', '.join(map(str, failed))}); the others were written",
            file=sys.stderr,
        )
        return EXIT_PRIVACY
    return EXIT_OK


def _hierarchy_notes(registry, data, calls) -> None:
    """Before any run: a note for each hierarchy given that a method will not generalise along."""
    from veil.engine.run.runs import unused_hierarchies

    notes = dict.fromkeys(note for call in calls for note in unused_hierarchies(registry, data, call))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _with_population(registry, source, args):
    """The data, with the population it was drawn from when ``--population`` names one."""
    from veil.engine.data.population import load_with_population

    if args.subset_column and not args.population:
        raise BadInput("--subset-column marks the data's records in a population: give --population FILE too")
    if not args.population:
        return source.load(registry)
    if not Path(args.population).is_file():
        raise BadInput(missing_reason(Path(args.population)))
    return load_with_population(registry, source, args.population, args.subset_column)


def _run_parts(registry, spec, source, args) -> int:
    """A run whose method reads its input files itself and writes its release in parts (a table
    larger than memory, e.g. global recoding on Spark)."""
    from veil.engine.release.assessment import ReportOptions
    from veil.engine.release.partitioned import export_parts
    from veil.engine.run.jobs import Context
    from veil.engine.run.noise import SECURE

    if not args.out:
        raise BadInput("no output folder: give --out DIR")
    if args.population:
        raise BadInput(
            "--population: a release in parts is not judged against a population; run the models that "
            "read one on a table held in memory"
        )
    if args.metrics:
        raise BadInput("--metrics: a release in parts is measured by its generalisation figures only (in its manifest)")
    if args.format:
        raise BadInput(
            f"--format: a release in parts is written in the format its method's parameters name, not {args.format!r}"
        )
    progress = _Progress(spec.method.name)
    try:
        manifest = export_parts(
            registry,
            spec,
            source,
            Context(spec.seed, progress, noise_source=SECURE),
            Path(args.out),
            version=__version__,
            release_sensitive=args.release_sensitive,
            report=None if args.no_report else ReportOptions(risk_threshold=args.risk_threshold, utility=False),
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
    print(args.out)
    return EXIT_OK


def _executor(args, registry):
    from veil.engine.run.executors import make_executor

    return make_executor(args.executor, registry)


def _run_one(registry, data, spec, target: Path, args, source, executor=None) -> dict:
    from veil.engine.release.assessment import ReportOptions
    from veil.engine.release.export import export_release
    from veil.engine.release.manifest import ExportOptions
    from veil.engine.run.jobs import Context
    from veil.engine.run.noise import SECURE
    from veil.engine.run.runs import execute

    progress = _Progress(spec.method.name)
    token = args.stop.token() if hasattr(args, "stop") else None
    report = (
        None
        if args.no_report
        else ReportOptions(risk_threshold=args.risk_threshold, tuned=getattr(args, "tuned_report", False))
    )
    read = (getattr(args, "names_from", None), getattr(args, "population", None))  # never written over
    try:
        # one context for the run and its export; a release draws its DP noise from the OS's secure
        # source, the seed still drives everything else
        ctx = Context(spec.seed, progress, token, noise_source=SECURE, executor=executor)
        result = execute(
            registry, data, spec, ctx.child(0.0, 0.8), version=__version__, release_sensitive=args.release_sensitive
        )
        fmt = args.format or _default_format(registry, result)
        return export_release(
            registry,
            result,
            target,
            ExportOptions(fmt, not args.no_shuffle),
            report=report,
            source=source,
            project=args.project,
            version=__version__,
            ctx=ctx.child(0.8, 1.0),
            inputs=tuple(f for f in read if f),
        ).manifest
    finally:
        progress.close()


def _default_format(registry, result) -> str:
    """The preferred exporter, or for a set-valued release the first exporter that streams item sets."""
    if result.release.sets is not None:
        for name in registry.names("exporter"):
            if registry.exporter(name).writes_sets:
                return name
    return registry.preferred("exporter")


def _models(texts) -> list:
    """The privacy models of repeated ``--model`` flags (each NAME[:key=value,...])."""
    from veil.engine.run.runs import PluginCall

    return [PluginCall.parse(t) for t in texts or ()]


def cmd_study(args, registry) -> int:
    from veil.engine.release.charts import save_chart
    from veil.engine.run.jobs import Context
    from veil.engine.run.study import Study, run_study

    study = Study.load(args.study)
    if args.max_runs is not None:
        study = dataclasses.replace(study, max_runs=args.max_runs)
    study.check_size(registry)  # before the data is read: a grid too large is refused at once
    if args.model:
        study = study.with_models(_models(args.model))
    out = Path(args.out)
    _refuse_overwriting_study(study, Path(args.study), out)  # before anything runs
    data = study.data.load(registry)
    _hierarchy_notes(registry, data, [spec.method for spec in study.iter_runs(registry)])
    progress = _Progress(study.name)
    try:
        results = run_study(
            registry,
            study,
            Context(study.seed, progress, executor=_executor(args, registry)),
            data=data,
            version=__version__,
        )
    finally:
        progress.close()
    out.mkdir(parents=True, exist_ok=True)
    from veil.engine.base.io import write_atomic

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


def cmd_report(args, registry) -> int:
    from veil.engine.release.report import regenerate_report

    done = regenerate_report(registry, args.folder, risk_threshold=args.risk_threshold, utility=not args.no_utility)
    for path in done.paths.values():
        print(path)
    if not done.release_intact:
        state = "has changed since it was exported" if done.checks.get("release") == "changed" else "is missing"
        print(f"veil: the released file {state}; the report says so", file=sys.stderr)
        return EXIT_PRIVACY
    return EXIT_OK


def cmd_verify(args, registry) -> int:
    from veil.engine import Hierarchy
    from veil.engine.release.verify import read_released, verify_file, verify_manifest
    from veil.engine.release.parts import read_parts

    path = Path(args.path)
    if not path.exists():
        raise BadInput(missing_reason(path, "manifest" if path.suffix == ".json" else "file"))
    if path.is_dir() or path.suffix == ".json":
        if args.model:
            raise BadInput("a manifest names its own privacy model; drop --model or verify the data file")
        if args.population or args.hierarchy:
            raise BadInput(
                "a manifest names its own population and hierarchies; drop --population and --hierarchy "
                "or verify the data file"
            )
        key = None
        if args.public_key is not None:
            from veil.engine.release.signing import read_public_key

            key = read_public_key(_existing(args.public_key, "public key"))
        from veil.engine.run.executors import make_executor

        if args.master and args.executor == "in-process":
            raise BadInput(
                "--master names a cluster's master: give it with --executor spark (or another cluster executor)"
            )
        executor = make_executor(args.executor, registry, **({"master": args.master} if args.master else {}))
        result = verify_manifest(registry, path, key, executor)
    else:
        if not args.model:
            raise BadInput("a bare file needs --model NAME[:key=value,...] to check against")
        if args.public_key is not None:
            raise BadInput("--public-key checks a manifest's signature; a bare file has none (verify its folder)")
        if not path.exists():
            raise BadInput(missing_reason(path))
        fmt = args.format or _format_of(registry, path)
        frame_cols = list(read_released(registry, fmt, path).columns)
        part_cols = [c for part in read_parts(registry.exporter(fmt), path).values() for c in part.columns]
        _check_verify_roles(args.target, args.sensitive, args.quasi or [])
        excluded = {args.target, *args.sensitive}
        for col in [args.target, *args.sensitive, *(args.quasi or [])]:
            if col and col not in frame_cols and (col not in part_cols or col in (args.quasi or [])):
                beside = (
                    ""
                    if part_cols or col in (args.quasi or [])
                    else (
                        f", and no part file beside it holds it (a bucketised release keeps its sensitive values in "
                        f"{path.stem}.sensitive{path.suffix}, which is not there)"
                    )
                )
                raise BadInput(f"{path.name} has no column {col!r}{beside}")
        quasi = args.quasi or [c for c in frame_cols if c not in excluded]
        roles = {"quasi_identifiers": quasi, "target": args.target, "sensitive": args.sensitive}
        hierarchies = {}
        for column, file in _hierarchies(args.hierarchy).items():
            if column not in args.sensitive and not args.population:
                raise BadInput(
                    f"--hierarchy names {column!r}, which is not a sensitive column given by --sensitive "
                    f"(a quasi-identifier's hierarchy is read only with --population)"
                )
            if not Path(file).is_file():
                raise BadInput(missing_reason(Path(file), "hierarchy file"))
            if column in args.sensitive:
                hierarchies[column] = Hierarchy.from_arx_csv(file, name=column)
        result = verify_file(
            registry,
            path,
            fmt,
            _models(args.model),
            roles,
            hierarchies=hierarchies,
            population=_bare_population(registry, args),
        )
    message = result.message
    for word in ("holds:", "fails:"):  # the models' messages start with their verdict; "OK:" already says it
        if message.lower().startswith(word):
            message = message[len(word) :].strip()
    print(("OK: " if result.holds else "FAILED: ") + message)
    return EXIT_OK if result.holds else EXIT_PRIVACY


def _bare_population(registry, args):
    """The population ``veil verify`` counts a bare file's groups in (None without --population)."""
    from veil.engine.data.datasource import DataSource
    from veil.engine.data.hierarchy import Hierarchy
    from veil.engine.data.population import Population

    if not args.population:
        return None
    if not Path(args.population).is_file():
        raise BadInput(missing_reason(Path(args.population)))
    table = DataSource(path=args.population).load(registry)
    hierarchies = {
        c: Hierarchy.from_arx_csv(f, name=c) for c, f in _hierarchies(args.hierarchy).items() if c not in args.sensitive
    }
    return Population(table.frame, args.population, table.sha256, hierarchies)


def _existing(text: str, what: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise BadInput(missing_reason(path, what))
    return path


def _check_verify_roles(target, sensitive, quasi) -> None:
    """A column named by two of --target, --sensitive and --quasi is refused, naming both."""
    seen: dict[str, str] = {}
    for role, columns in (("target", [target] if target else []), ("sensitive", sensitive), ("quasi", quasi)):
        for column in columns:
            if seen.get(column, role) != role:
                raise BadInput(
                    f"column {column!r} is given two roles, --{seen[column]} and --{role}; give each column one role"
                )
            seen[column] = role


def _format_of(registry, path: Path) -> str:
    ext = path.suffix.lstrip(".").lower()
    for name in registry.names("exporter"):
        if registry.get("exporter", name).extension == ext:
            return name
    raise BadInput(f"cannot tell the format of {path.name}; give --format")


def cmd_hierarchy(args, registry) -> int:
    from veil.engine.base.io import write_text_atomic
    from veil.engine.data.hierarchy import hierarchy_from_spec, preview_groups
    from veil.engine.data.table import Table

    data = _source(args).load(registry)
    if not isinstance(data, Table):
        raise BadInput("a hierarchy generalises a table's column; this file holds item sets")
    if args.column not in data.frame.columns:
        raise BadInput(f"no column named {args.column!r}; columns are {', '.join(map(str, data.frame.columns))}")
    values = data.frame[args.column]
    hierarchy = hierarchy_from_spec(args.build, values, name=args.column)
    hierarchy.check_values(values.dropna())
    text = hierarchy.to_arx_csv()
    for level in range(1, hierarchy.height):
        groups = preview_groups(hierarchy, values, level)
        shown = ", ".join(f"{g} ({n:,})" for g, n in zip(groups["group"][:8], groups["records"][:8]))
        more = f", … {len(groups) - 8} more" if len(groups) > 8 else ""
        print(f"level {level}: {len(groups)} groups: {shown}{more}", file=sys.stderr)
    if not args.out:
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(args.out)
    if out.resolve() == Path(args.path).resolve():
        raise BadInput(f"{out} is the data file; write the hierarchy to another file")
    write_text_atomic(out, text)
    print(out)
    return EXIT_OK


def cmd_inspect(args, registry) -> int:
    from veil.engine.data.inspect import inspect_report

    data = _source(args).load(registry)
    print(inspect_report(data))
    return EXIT_OK


def cmd_plugins(args, registry) -> int:
    from veil.engine.base.papers import cite

    infos = registry.all()
    if args.json:
        entries = [
            {
                **i.cls.describe(),
                "citation": cite(i.cls.paper, full=True) or None,
                "source": i.source,
                "version": i.version,
            }
            for i in infos
        ]
        failures = [{"source": f.source, "error": f.error} for f in registry.failures]
        print(json.dumps({"plugins": entries, "failed": failures}, indent=2, default=str))
        return EXIT_OK
    width = max((len(i.cls.name) for i in infos), default=10)
    for info in infos:
        cls = info.cls
        paper = f"  [{cite(cls.paper)}]" if cls.paper else ""
        print(f"{cls.kind:<14} {cls.name:<{width}}  {cls.title}{paper}")
        for spec in cls.param_specs():
            bounds = spec.describe_bounds()
            print(
                f"{'':<14} {'':<{width}}    {spec.name} = {spec.default!r}"
                + (f"  ({bounds})" if bounds else "")
                + (f"  {spec.help}" if spec.help else "")
            )
    for f in registry.failures:
        print(f"FAILED         {f.source}: {f.error}")
    return EXIT_OK


COMMANDS = {
    "run": cmd_run,
    "study": cmd_study,
    "verify": cmd_verify,
    "report": cmd_report,
    "inspect": cmd_inspect,
    "hierarchy": cmd_hierarchy,
    "plugins": cmd_plugins,
}


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM: unwinds like Ctrl+C, so an export under way removes what it prepared."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _Stop:
    """The cancel token a command's runs and exports share, made on first use (``--help`` imports no
    run module). While an export holds a step that must finish (its commit), the signal handler
    defers to the token instead of raising: :attr:`deferred` then names the signal."""

    def __init__(self):
        self._token = None

    def token(self):
        if self._token is None:
            from veil.engine.run.jobs import CancelToken

            self._token = CancelToken()
        return self._token

    def defer(self, signum: int) -> bool:
        return self._token is not None and self._token.defer(signum)

    def next_run(self) -> bool:
        """Before the next run: the last export's hold ends (it has been reported); whether a signal
        came meanwhile (the command then stops)."""
        if self._token is not None:
            self._token.release()
        return self.deferred is not None

    @property
    def deferred(self) -> int | None:
        return None if self._token is None else self._token.deferred


@contextmanager
def _signals_interrupt(stop: _Stop, program: bool = False):
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (the first one; a second
    one while cleaning up is ignored, so the clean-up finishes), unless an export's commit is under
    way: then ``stop`` keeps it and the commit finishes first. Elsewhere, nothing changes.

    Afterwards the earlier handlers are back; for the ``program`` itself, the signals are ignored
    instead: the process is about to exit with the command's code, and a signal now comes too late
    to stop anything (Python's default would end a finished run as if it had been interrupted)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen = []

    def handler(signum, frame):
        if seen:
            return
        seen.append(signum)
        if stop.defer(signum):
            return
        raise Interrupted(signum)

    wanted = [signal.SIGINT, signal.SIGTERM]
    previous = {s: signal.getsignal(s) for s in wanted}
    for s in wanted:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, signal.SIG_IGN if program else h)


def main(argv: Sequence[str] | None = None, *, program: bool | None = None) -> int:
    """Run a command; return its exit code (never raises for user errors). ``program``: called as the
    process's own entry point, which exits with the code (default: when ``argv`` is None)."""
    program = argv is None if program is None else program
    argv = list(sys.argv[1:] if argv is None else argv)
    stop = _Stop()
    args = None
    try:
        with _signals_interrupt(stop, program), warnings.catch_warnings():
            if not sys.warnoptions:  # NumPy's overflow notes name source lines: not for the terminal (-W shows them)
                warnings.simplefilter("ignore", RuntimeWarning)
            args = build_parser().parse_args(argv)
            if args.command is None:
                raise BadInput("no command given (see `veil --help`)")
            args.stop = stop
            registry = make_registry(args.plugin)
            code = COMMANDS[args.command](args, registry)
        if stop.deferred is not None:  # the signal came while the export's files were moved into place
            what = "termination" if stop.deferred == signal.SIGTERM else "interrupt"
            print(f"veil: finished before the {what} took effect", file=sys.stderr)
        return code
    except Interrupted as exc:
        print("veil: terminated" if exc.signum == signal.SIGTERM else "veil: interrupted", file=sys.stderr)
        return 128 + exc.signum
    except PrivacyCheckFailed as exc:
        print(printable(f"veil: privacy check failed: {exc}"), file=sys.stderr)
        return EXIT_PRIVACY
    except (BadInput, PluginError) as exc:
        print(f"veil: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (Cancelled, KeyboardInterrupt):  # a signal deferred by a held step stops the work at its next check
        print("veil: terminated" if stop.deferred == signal.SIGTERM else "veil: interrupted", file=sys.stderr)
        return 128 + stop.deferred if stop.deferred is not None else EXIT_INTERRUPTED
    except OSError as exc:  # a folder that is a file, a full disk, no permission: say which path
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        if not where and getattr(args, "out", None):  # a write's error names no file: name the folder written
            where = f" the output folder {args.out}"
        print(printable(f"veil: error: cannot access{where}: {exc.strerror or exc}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print("veil: error: not enough memory for this data", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug in Veil or a plugin: one line for the user, details in a log
        log = _log_traceback()
        print(
            f"veil: internal error: {type(exc).__name__}: {_one_line(str(exc))} (details in {log}; please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _log_traceback() -> str:
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="veil-error-", suffix=".log", delete=False) as f:
        traceback.print_exc(file=f)
        return f.name


def _one_line(text: str) -> str:
    """The first line of a message, its spaces collapsed and its control characters escaped (a column
    name holding ESC or BEL sequences is shown, never obeyed by the terminal)."""
    return printable(" ".join(text.split("\n")[0].split()))


if __name__ == "__main__":
    sys.exit(main())
