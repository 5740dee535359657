"""Veil's engine: the Qt-free core (data model, plugin registry, jobs, studies, releases).

Plugins and the desktop use only the names exported here. They load on first use (PEP 562), so
``veil --help`` and the other commands import only what they need.
"""

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

# public name -> (module of the engine, name in that module)
_EXPORTS = {
    "BinaryMatrix": ("binary", "BinaryMatrix"),
    "Feature": ("binary", "Feature"),
    "pack_rows": ("binary", "pack_rows"),
    "popcount": ("binary", "popcount"),
    "unpack_rows": ("binary", "unpack_rows"),
    "BadInput": ("errors", "BadInput"),
    "Cancelled": ("errors", "Cancelled"),
    "PluginError": ("errors", "PluginError"),
    "PrivacyCheckFailed": ("errors", "PrivacyCheckFailed"),
    "VeilError": ("errors", "VeilError"),
    "VeilWarning": ("errors", "VeilWarning"),
    "ROOT": ("hierarchy", "ROOT"),
    "Hierarchy": ("hierarchy", "Hierarchy"),
    "Node": ("hierarchy", "Node"),
    "value_label": ("hierarchy", "value_label"),
    "hookimpl": ("hookspecs", "hookimpl"),
    "inspect_report": ("inspect", "inspect_report"),
    "have_pyfim": ("mining", "have_pyfim"),
    "mine": ("mining", "mine"),
    "FREQUENT_ITEMSETS": ("mining", "FREQUENT_ITEMSETS"),
    "CLOSED_ITEMSETS": ("mining", "CLOSED_ITEMSETS"),
    "MAXIMAL_ITEMSETS": ("mining", "MAXIMAL_ITEMSETS"),
    "Longest": ("longest", "Longest"),
    "LengthBounds": ("longest", "LengthBounds"),
    "MiningLimit": ("longest", "MiningLimit"),
    "longest_itemsets": ("longest", "longest_itemsets"),
    "RecordIndex": ("longest", "RecordIndex"),
    "and_popcount": ("kernels", "and_popcount"),
    "support_counts": ("kernels", "support_counts"),
    "ImportOptions": ("io", "ImportOptions"),
    "atomic_path": ("io", "atomic_path"),
    "check_readable": ("io", "check_readable"),
    "read_data": ("io", "read_data"),
    "sha256_file": ("io", "sha256_file"),
    "write_atomic": ("io", "write_atomic"),
    "CancelToken": ("jobs", "CancelToken"),
    "Context": ("jobs", "Context"),
    "NOISE_SOURCES": ("noise", "NOISE_SOURCES"),
    "SECURE": ("noise", "SECURE"),
    "SEEDED": ("noise", "SEEDED"),
    "Noise": ("noise", "Noise"),
    "SecureNoise": ("noise", "SecureNoise"),
    "SeededNoise": ("noise", "SeededNoise"),
    "Executor": ("executors", "Executor"),
    "InProcessExecutor": ("executors", "InProcessExecutor"),
    "executor_names": ("executors", "executor_names"),
    "make_executor": ("executors", "make_executor"),
    "register_executor": ("executors", "register_executor"),
    "ParamSpec": ("params", "ParamSpec"),
    "param": ("params", "param"),
    "param_specs": ("params", "param_specs"),
    "params_to_dict": ("params", "params_to_dict"),
    "parse_params": ("params", "parse_params"),
    "parse_spec": ("params", "parse_spec"),
    "BINARY": ("plugin", "BINARY"),
    "CHEAP": ("plugin", "CHEAP"),
    "EXPENSIVE": ("plugin", "EXPENSIVE"),
    "METRIC_SAMPLE_ROWS": ("plugin", "METRIC_SAMPLE_ROWS"),
    "SETS": ("plugin", "SETS"),
    "TABLE": ("plugin", "TABLE"),
    "TRANSACTIONS": ("plugin", "TRANSACTIONS"),
    "Algorithm": ("plugin", "Algorithm"),
    "Chart": ("plugin", "Chart"),
    "Exporter": ("plugin", "Exporter"),
    "Importer": ("plugin", "Importer"),
    "Metric": ("plugin", "Metric"),
    "Plugin": ("plugin", "Plugin"),
    "PrivacyModel": ("plugin", "PrivacyModel"),
    "GroupSizeModel": ("plugin", "GroupSizeModel"),
    "Recipe": ("recipe", "Recipe"),
    "Step": ("recipe", "Step"),
    "binarise": ("recipe", "binarise"),
    "PluginFailure": ("registry", "PluginFailure"),
    "Registry": ("registry", "Registry"),
    "make_registry": ("registry", "make_registry"),
    "BUCKETISED_TABLE": ("release", "BUCKETISED_TABLE"),
    "FEATURE_SUBSET": ("release", "FEATURE_SUBSET"),
    "FEATURE_WEIGHTS": ("release", "FEATURE_WEIGHTS"),
    "GENERALISED_TABLE": ("release", "GENERALISED_TABLE"),
    "GROUPED_SETS": ("release", "GROUPED_SETS"),
    "SYNTHETIC": ("release", "SYNTHETIC"),
    "Provenance": ("release", "Provenance"),
    "Release": ("release", "Release"),
    "Verdict": ("release", "Verdict"),
    "class_sizes": ("release", "class_sizes"),
    "describe_failures": ("release", "describe_failures"),
    "feature_subset": ("release", "feature_subset"),
    "feature_weights": ("release", "feature_weights"),
    "verdict_from_groups": ("release", "verdict_from_groups"),
    "SUPPRESSED": ("generalised", "SUPPRESSED"),
    "Interval": ("generalised", "Interval"),
    "NodeValue": ("generalised", "NodeValue"),
    "format_value": ("generalised", "format_value"),
    "parse_value": ("generalised", "parse_value"),
    "GroupVerdict": ("groups", "GroupVerdict"),
    "GroupView": ("groups", "GroupView"),
    "group_ids": ("groups", "group_ids"),
    "view_of_frame": ("groups", "view_of_frame"),
    "view_of_release": ("groups", "view_of_release"),
    "SetValued": ("setvalued", "SetValued"),
    "column_sets": ("data", "column_sets"),
    "convert": ("data", "convert"),
    "form_of": ("data", "form_of"),
    "grouping_columns": ("data", "grouping_columns"),
    "labels_of": ("data", "labels_of"),
    "provenance_of": ("data", "provenance_of"),
    "table_to_items": ("data", "table_to_items"),
    "target_name": ("data", "target_name"),
    "power_law_sets": ("synthetic", "power_law_sets"),
    "draw_chart": ("charts", "draw"),
    "mark_runs": ("charts", "mark_runs"),
    "orientations": ("charts", "orientations"),
    "picked_run": ("charts", "picked_run"),
    "save_chart": ("charts", "save_chart"),
    "KacConstraint": ("containment", "KacConstraint"),
    "KAnonymityConstraint": ("containment", "KAnonymityConstraint"),
    "Partition": ("containment", "Partition"),
    "SelectionConstraint": ("containment", "SelectionConstraint"),
    "class_sizes_per_record": ("containment", "class_sizes_per_record"),
    "kac": ("containment", "kac"),
    "kac_per_record": ("containment", "kac_per_record"),
    "partition_of": ("containment", "partition_of"),
    "DataSource": ("datasource", "DataSource"),
    "demo_path": ("datasource", "demo_path"),
    "load_demo": ("datasource", "load_demo"),
    "ReportOptions": ("assessment", "ReportOptions"),
    "classifier_skipped": ("assessment", "classifier_skipped"),
    "Export": ("export", "Export"),
    "ExportOptions": ("export", "ExportOptions"),
    "export_release": ("export", "export_release"),
    "read_manifest": ("export", "read_manifest"),
    "verify_file": ("export", "verify_file"),
    "verify_manifest": ("export", "verify_manifest"),
    "write_release": ("export", "write_release"),
    "regenerate_report": ("report", "regenerate_report"),
    "exposed_sensitive": ("roles", "exposed_sensitive"),
    "may_release_sensitive": ("roles", "may_release_sensitive"),
    "released_sensitive": ("roles", "released_sensitive"),
    "unacknowledged_sensitive": ("roles", "unacknowledged_sensitive"),
    "Risk": ("risk", "Risk"),
    "prosecutor_risks": ("risk", "prosecutor_risks"),
    "reidentification_risk": ("risk", "reidentification_risk"),
    "release_risk": ("risk", "release_risk"),
    "CombinedModel": ("bound", "CombinedModel"),
    "bind_models": ("bound", "bind_models"),
    "Project": ("project", "Project"),
    "BoundModel": ("runs", "BoundModel"),
    "PluginCall": ("runs", "PluginCall"),
    "RunResult": ("runs", "RunResult"),
    "RunSpec": ("runs", "RunSpec"),
    "default_metrics": ("runs", "default_metrics"),
    "execute": ("runs", "execute"),
    "measure": ("runs", "measure"),
    "prepare": ("runs", "prepare"),
    "Outcome": ("study", "Outcome"),
    "Study": ("study", "Study"),
    "outcome_rows": ("study", "outcome_rows"),
    "PlannedRun": ("study", "PlannedRun"),
    "check_data": ("study", "check_data"),
    "results_table": ("study", "results_table"),
    "results_frame": ("study", "results_frame"),
    "run_planned": ("study", "run_planned"),
    "run_study": ("study", "run_study"),
    "settings_of": ("study", "settings_of"),
    "summarise": ("study", "summarise"),
    "Column": ("table", "Column"),
    "Kind": ("table", "Kind"),
    "Role": ("table", "Role"),
    "Schema": ("table", "Schema"),
    "Table": ("table", "Table"),
    "check_column_names": ("table", "check_column_names"),
    "detect_kind": ("table", "detect_kind"),
    "suggest_role": ("table", "suggest_role"),
    "parse_transactions": ("transactions", "parse_transactions"),
    "read_transactions": ("transactions", "read_transactions"),
    "Remote": ("worker", "Remote"),
    "WorkerDied": ("worker", "WorkerDied"),
    "WorkerProcess": ("worker", "WorkerProcess"),
    "read_column_names": ("names", "read_column_names"),
    "cite": ("papers", "cite"),
    "cache_dir": ("usercache", "cache_dir"),
    "cache_key": ("usercache", "cache_key"),
    "load_cached": ("usercache", "load"),
    "store_cached": ("usercache", "store"),
    "source_digest": ("usercache", "source_digest"),
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value  # the next access is a plain lookup
    return value


def __dir__():
    return __all__


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .binary import BinaryMatrix, Feature, pack_rows, popcount, unpack_rows  # noqa: F401
    from .errors import BadInput, Cancelled, PluginError, PrivacyCheckFailed, VeilError, VeilWarning  # noqa: F401
    from .hierarchy import ROOT, Hierarchy, Node, value_label  # noqa: F401
    from .hookspecs import hookimpl  # noqa: F401
    from .inspect import inspect_report  # noqa: F401
    from .mining import CLOSED_ITEMSETS, FREQUENT_ITEMSETS, MAXIMAL_ITEMSETS, have_pyfim, mine  # noqa: F401
    from .longest import LengthBounds, Longest, MiningLimit, RecordIndex, longest_itemsets  # noqa: F401
    from .synthetic import power_law_sets  # noqa: F401
    from .kernels import and_popcount, support_counts  # noqa: F401
    from .io import ImportOptions, atomic_path, check_readable, read_data, sha256_file, write_atomic  # noqa: F401
    from .jobs import CancelToken, Context  # noqa: F401
    from .noise import NOISE_SOURCES, SECURE, SEEDED, Noise, SecureNoise, SeededNoise  # noqa: F401
    from .executors import Executor, InProcessExecutor, executor_names, make_executor, register_executor  # noqa: F401
    from .params import ParamSpec, param, param_specs, params_to_dict, parse_params, parse_spec  # noqa: F401
    from .plugin import BINARY, CHEAP, EXPENSIVE, METRIC_SAMPLE_ROWS, SETS, TABLE, TRANSACTIONS, Algorithm, Chart, Exporter, Importer, Metric, Plugin, PrivacyModel, GroupSizeModel  # noqa: F401
    from .recipe import Recipe, Step, binarise  # noqa: F401
    from .registry import PluginFailure, Registry, make_registry  # noqa: F401
    from .release import BUCKETISED_TABLE, FEATURE_SUBSET, FEATURE_WEIGHTS, GENERALISED_TABLE, GROUPED_SETS, SYNTHETIC, Provenance, Release, Verdict, class_sizes, describe_failures, feature_subset, feature_weights, verdict_from_groups  # noqa: F401
    from .generalised import SUPPRESSED, Interval, NodeValue, format_value, parse_value  # noqa: F401
    from .groups import GroupVerdict, GroupView, group_ids, view_of_frame, view_of_release  # noqa: F401
    from .setvalued import SetValued  # noqa: F401
    from .data import column_sets, convert, form_of, grouping_columns, labels_of, provenance_of, table_to_items, target_name  # noqa: F401
    from .charts import draw as draw_chart, mark_runs, orientations, picked_run, save_chart  # noqa: F401
    from .containment import KacConstraint, KAnonymityConstraint, Partition, SelectionConstraint, class_sizes_per_record, kac, kac_per_record, partition_of  # noqa: F401
    from .datasource import DataSource, demo_path, load_demo  # noqa: F401
    from .assessment import ReportOptions, classifier_skipped  # noqa: F401
    from .export import Export, ExportOptions, export_release, read_manifest, verify_file, verify_manifest, write_release  # noqa: F401
    from .report import regenerate_report  # noqa: F401
    from .roles import (exposed_sensitive, may_release_sensitive, released_sensitive,  # noqa: F401
                        unacknowledged_sensitive)
    from .risk import Risk, prosecutor_risks, reidentification_risk, release_risk  # noqa: F401
    from .bound import CombinedModel, bind_models  # noqa: F401
    from .project import Project  # noqa: F401
    from .runs import BoundModel, PluginCall, RunResult, RunSpec, default_metrics, execute, measure, prepare  # noqa: F401
    from .study import Outcome, Study, outcome_rows, results_frame, run_planned, run_study, settings_of, summarise  # noqa: F401
    from .study import PlannedRun, check_data, results_table  # noqa: F401
    from .table import Column, Kind, Role, Schema, Table, check_column_names, detect_kind, suggest_role  # noqa: F401
    from .transactions import parse_transactions, read_transactions  # noqa: F401
    from .worker import Remote, WorkerDied, WorkerProcess  # noqa: F401
    from .names import read_column_names  # noqa: F401
    from .papers import cite  # noqa: F401
    from .usercache import cache_dir, cache_key, load as load_cached, source_digest, store as store_cached  # noqa: F401
    from .longest import LengthBounds, Longest, MiningLimit, RecordIndex, longest_itemsets  # noqa: F401
    from .synthetic import power_law_sets  # noqa: F401

try:
    __version__ = version("veil")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"
