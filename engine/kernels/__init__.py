"""Compute kernels on the data: bit sets, containment (k-anonymity and k^m-style support of
item sets), merging classes (global recoding's roll-up), frequent/closed/maximal itemset mining and the
longest-pattern search, which runs as its
caller's :class:`SearchOptions` say (above all, how many threads).
"""

from ..base.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "bitsets": ["and_popcount", "support_counts"],
        "grouping": ["count_units", "group_rows", "kernels_loaded=loaded", "merge_classes", "warm_kernels=warm"],
        "containment": [
            "class_sizes_per_record",
            "kac",
            "kac_per_record",
            "KacConstraint",
            "KAnonymityConstraint",
            "Partition",
            "partition_of",
            "SelectionConstraint",
        ],
        "mining": ["CLOSED_ITEMSETS", "FREQUENT_ITEMSETS", "have_pyfim", "MAXIMAL_ITEMSETS", "mine"],
        "limits": ["LengthBounds", "MiningLimit"],
        "options": ["SearchOptions"],
        "longest": ["have_numba", "Longest", "longest_itemsets", "RecordIndex"],  # numba is imported on a search's need
    },
)
