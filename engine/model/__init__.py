"""The vocabulary of a run: releases and verdicts, equivalence groups, roles, risk, the plugin
base classes with their hook specifications and registry, and parameter declarations.
"""

from ..base.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "hookspecs": ["hookimpl"],
    "params": ["param", "param_specs", "params_to_dict", "ParamSpec", "parse_params", "parse_spec"],
    "plugin": ["Algorithm", "BINARY", "Chart", "CHEAP", "DataShape", "ReportFact", "EXPENSIVE", "Exporter", "GroupSizeModel", "HierarchyUse",
               "Importer", "Judgement", "judgement_words", "MemoryCost", "Metric", "METRIC_SAMPLE_ROWS", "Plugin",
               "PrivacyModel", "ScaleOut", "SETS", "TABLE", "TRANSACTIONS"],
    "lattice": ["NodeStatus", "SolutionSpace"],
    "ranking": ["Candidate", "RankedCandidate", "Ranker", "Ranking", "RankingColumn", "Weight"],
    "registry": ["make_registry", "PluginFailure", "Registry"],
    "release": ["BUCKETISED_TABLE", "class_sizes", "describe_failures", "FEATURE_SUBSET", "feature_subset", "FEATURE_WEIGHTS", "feature_weights", "GENERALISED_TABLE", "GROUPED_SETS", "grouped_sets", "ITEMS_COLUMN", "PartsRelease", "Provenance", "Release", "SYNTHETIC", "Verdict", "verdict_from_groups"],
    "groups": ["group_ids", "GroupVerdict", "GroupView", "population_of_release", "population_sizes", "view_of_frame",
               "view_of_release"],
    "roles": ["exposed_sensitive", "may_release_sensitive", "released_sensitive", "unacknowledged_sensitive"],
    "risk": ["prosecutor_risks", "reidentification_risk", "release_risk", "Risk"],
    "bound": ["bind_models", "CombinedModel"],
})
