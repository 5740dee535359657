"""Set-valued records: PatternKa (:mod:`.patternka`) and its Spark search, the top-down baseline, the
privacy model of their releases (:mod:`.set_k_anonymity`) and its metric (:mod:`.metrics`), with
what they share in :mod:`._grouping` (the exporter of their releases is :mod:`veil.plugins.io.itemsets`).
"""
