"""What leaves the machine: the export transaction (staging, manifest, verification), the
assessment of a release against its input, and the report with its HTML/PDF rendering and charts.
"""

from ..base.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "charts": [
            "draw_chart=draw",
            "first_chart",
            "fitting_charts",
            "mark_runs",
            "orientations",
            "picked_run",
            "save_chart",
        ],
        "assessment": ["classifier_skipped", "ReportOptions"],
        "export": ["Export", "ExportRequest", "export_release", "write_release"],
        "manifest": ["ExportOptions", "IntoTable", "read_manifest"],
        "verify": ["read_output", "verify_file", "verify_manifest"],
        "partitioned": ["export_parts"],
        "part_counts": ["judge_counts", "verify_parts"],
        "report": ["regenerate_report"],
        "utility": [
            "ColumnUtility",
            "FolderUtility",
            "Utility",
            "contingency",
            "numeric_columns",
            "read_folder_utility",
            "release_utility=utility",
            "released_value",
        ],
        "perturbed": ["CategoryShift", "NumericShift", "PerturbationFigures", "perturbation_figures"],
        "kept": ["Restored", "input_parts", "keep_results", "kept_folder", "restore_results"],
    },
)
