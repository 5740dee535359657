"""``veil report``: regenerate an export folder's report.html and report.pdf."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from .arguments import threshold
from .common import EXIT_OK, EXIT_PRIVACY, Stop

NAME = "report"
HELP = "regenerate report.html and report.pdf of an export folder"


def add_arguments(rp: argparse.ArgumentParser) -> None:
    rp.add_argument("folder", help="the folder holding manifest.json and the released file")
    rp.add_argument("--risk-threshold", type=threshold, help="risk threshold (default: the manifest's)")
    rp.add_argument(
        "--no-utility", action="store_true", help="do not retrain the classifier; show the recorded figures"
    )


@dataclass(frozen=True)
class Options:
    """The flags of ``veil report``."""

    folder: str
    risk_threshold: float | None
    no_utility: bool


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.release.report import regenerate_report

    done = regenerate_report(
        registry, options.folder, risk_threshold=options.risk_threshold, utility=not options.no_utility
    )
    for path in done.paths.values():
        print(path)
    if done.checks.get("input") == "not read":  # a manifest from elsewhere: the input it names was not read
        print(f"note: {done.checks['input_note']}", file=sys.stderr)
    if not done.release_intact:
        state = "has changed since it was exported" if done.checks.get("release") == "changed" else "is missing"
        print(f"veil: the released file {state}; the report says so", file=sys.stderr)
        return EXIT_PRIVACY
    return EXIT_OK
