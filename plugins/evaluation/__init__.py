"""Metrics of any release: counts, group sizes, classifiers, re-identification risk."""
