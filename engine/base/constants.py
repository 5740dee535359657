"""Defaults shared by the engine's modules and the command line's help (importing this costs nothing)."""

DEFAULT_RISK_THRESHOLD = 0.2  # a record is at risk in a group smaller than 5 (see plugins/evaluation/risk.py)
DEFAULT_MAX_RUNS = 10_000  # a study larger than this is refused unless the user raises the limit
