"""The data layer: tables and their schema, binary matrices, set-valued records, recipes that turn
a table into binary features, hierarchies, generalised values and the readers of every input.
"""

from ..base.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "binary": ["BinaryMatrix", "Feature", "pack_mask", "pack_rows", "popcount", "unpack_mask", "unpack_rows"],
        "hierarchy": [
            "build_hierarchy",
            "Hierarchy",
            "hierarchy_from_spec",
            "is_hierarchy_spec",
            "Node",
            "preview_groups",
            "ROOT",
            "value_label",
        ],
        "hierarchy_files": [
            "FolderHierarchies",
            "FolderHierarchy",
            "HierarchyFiles",
            "match_hierarchy_files",
            "read_hierarchy_folder",
        ],
        "inspect": ["inspect_report"],
        "missing": [
            "blanks_message",
            "describe_missing",
            "fill_missing",
            "FILL_CHOICES",
            "missing_counts",
            "missing_message",
            "MISSING_VALUE",
        ],
        "recipe": ["binarise", "Recipe", "Step"],
        "generalised": ["format_value", "Interval", "NodeValue", "parse_value", "SUPPRESSED"],
        "setvalued": ["SetValued"],
        "forms": [
            "column_sets",
            "convert",
            "form_of",
            "grouping_columns",
            "labels_of",
            "provenance_of",
            "table_to_items",
            "target_name",
        ],
        "datasource": ["DataSource", "demo_path", "load_demo"],
        "table": [
            "check_column_names",
            "Column",
            "detect_kind",
            "FILE_LABELS",
            "CELL_CODES",
            "Kind",
            "Role",
            "Schema",
            "suggest_role",
            "Table",
        ],
        "transactions": ["parse_transactions", "read_transactions"],
        "names": ["read_column_names"],
        "population": ["load_with_population", "Population", "read_population"],
    },
)
