"""Running things: jobs and their context (progress, cancel, noise), a single run, studies and
projects, executors and the worker process.
"""

from ..base.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "jobs": ["CancelToken", "Context"],
        "noise": ["Noise", "NOISE_SOURCES", "SECURE", "SecureNoise", "SEEDED", "SeededNoise"],
        "executors": ["COUNT", "Executor", "executor_names", "InProcessExecutor", "make_executor"],
        "project": ["Project"],
        "memory": [
            "MemoryEstimate",
            "available_memory",
            "check_memory",
            "estimate_method",
            "estimate_runs",
            "estimate_metrics",
            "format_bytes",
        ],
        "runs": [
            "BoundModel",
            "check_fits",
            "default_metrics",
            "execute",
            "fitting_metrics",
            "measure",
            "PluginCall",
            "prepare",
            "RunResult",
            "RunSpec",
            "unfit",
            "unused_hierarchies",
        ],
        "study": [
            "check_data",
            "Outcome",
            "outcome_rows",
            "PlannedRun",
            "results_frame",
            "results_table",
            "run_planned",
            "run_study",
            "settings_of",
            "data_setting",
            "Study",
            "summarise",
        ],
        "worker": ["Remote", "WorkerDied", "WorkerProcess"],
    },
)
