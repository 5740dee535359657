"""Veil's engine: the Qt-free core (data model, plugin registry, jobs, studies, releases).

Plugins and the desktop use only the names exported here.
"""

from importlib.metadata import PackageNotFoundError, version

from .binary import BinaryMatrix, Feature, pack_rows, popcount, unpack_rows
from .errors import BadInput, Cancelled, PluginError, PrivacyCheckFailed, VeilError, VeilWarning
from .hierarchy import ROOT, Hierarchy, Node, value_label
from .hookspecs import hookimpl
from .inspect import inspect_report
from .mining import have_pyfim, mine
from .longest import Longest, MiningLimit, longest_itemsets
from .kernels import and_popcount, support_counts
from .io import ImportOptions, atomic_path, check_readable, read_data, sha256_file, write_atomic
from .jobs import CancelToken, Context
from .noise import NOISE_SOURCES, SECURE, SEEDED, Noise, SecureNoise, SeededNoise
from .executors import Executor, InProcessExecutor, executor_names, make_executor, register_executor
from .params import ParamSpec, param, param_specs, params_to_dict, parse_params, parse_spec
from .plugin import (BINARY, CHEAP, EXPENSIVE, METRIC_SAMPLE_ROWS, SETS, TABLE, TRANSACTIONS, Algorithm, Chart,
                     Exporter, Importer, Metric, Plugin, PrivacyModel)
from .recipe import Recipe, Step, binarise
from .registry import PluginFailure, Registry, make_registry
from .release import (BUCKETISED_TABLE, FEATURE_SUBSET, GENERALISED_TABLE, GROUPED_SETS, SYNTHETIC, Provenance,
                      Release, Verdict, class_sizes, describe_failures, feature_subset, verdict_from_groups)
from .generalised import SUPPRESSED, Interval, NodeValue, format_value, is_generalised, parse_value, value_width
from .groups import GroupVerdict, GroupView, group_ids, view_of_frame, view_of_release
from .setvalued import SetValued
from .synthetic import power_law_sets
from .data import convert, form_of, grouping_columns, labels_of, provenance_of, table_to_items, target_name
from .charts import draw as draw_chart, mark_runs, orientations, picked_run, save_chart
from .containment import (KacConstraint, KAnonymityConstraint, Partition, SelectionConstraint,
                          class_sizes_per_record, kac, kac_per_record, partition_of)
from .datasource import DataSource, demo_path, load_demo
from .assessment import ReportOptions
from .export import Export, ExportOptions, export_release, read_manifest, verify_file, verify_manifest, write_release
from .report import regenerate_report
from .roles import exposed_sensitive, may_release_sensitive, released_sensitive
from .risk import Risk, prosecutor_risks, reidentification_risk, release_risk
from .bound import CombinedModel, bind_models
from .project import Project
from .runs import BoundModel, PluginCall, RunResult, RunSpec, default_metrics, execute, measure, prepare
from .study import Outcome, Study, outcome_rows, results_frame, run_planned, run_study, settings_of, summarise
from .table import Column, Kind, Role, Schema, Table, check_column_names, detect_kind, suggest_role
from .transactions import parse_transactions, read_transactions
from .worker import Remote, WorkerDied, WorkerProcess

try:
    __version__ = version("veil")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"
