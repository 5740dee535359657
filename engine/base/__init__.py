"""The engine's floor: errors, validation of user input, atomic file writing, the user's cache
and the papers' citations. Imports nothing else of Veil.
"""

from .lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "errors": [
            "BadInput",
            "Cancelled",
            "PluginError",
            "PrivacyCheckFailed",
            "VeilError",
            "VeilWarning",
            "printable",
        ],
        "io": [
            "atomic_path",
            "check_output_file",
            "check_output_path",
            "check_private_folder",
            "check_readable",
            "check_regular",
            "choose_importer",
            "ImportOptions",
            "open_regular",
            "read_data",
            "sha256_file",
            "write_atomic",
        ],
        "papers": ["cite"],
        "usercache": ["cache_dir", "cache_key", "load_cached=load", "source_digest", "store_cached=store"],
    },
)
