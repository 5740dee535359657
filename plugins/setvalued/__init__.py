"""Set-valued records: PatternKa (with its privacy model, metric and exporter), its Spark search
and the top-down baseline.
"""
