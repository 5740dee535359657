"""Anonymising tables: Mondrian, Hilbert-curve k-anonymity, relational PatternKa, and the
privacy models and metrics on equivalence groups.
"""
