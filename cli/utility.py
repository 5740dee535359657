"""``veil utility``: how useful a release still is, column by column, beside its input."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from veil.engine.base.errors import BadInput

from .common import EXIT_OK, Stop

NAME = "utility"
HELP = (
    "per released column: the input's and the release's distributions, statistics and loss; for a "
    "perturbed release, each perturbed column before and after"
)


def add_arguments(u: argparse.ArgumentParser) -> None:
    u.add_argument("folder", help="an export folder (manifest.json and the released file); its input is read again")
    u.add_argument("--json", action="store_true", help="print every figure as JSON")
    u.add_argument("--pair", metavar="A,B", help="also the contingency table of columns A and B, before and after")
    u.add_argument(
        "--csv",
        metavar="DIR",
        help="write summary.csv, distributions.csv (and contingency-*.csv; for a perturbed release "
        "perturbed-histograms.csv, perturbed-pairs.csv, perturbed-categories.csv, perturbed-transitions.csv) into DIR",
    )


@dataclass(frozen=True)
class Options:
    """The flags of ``veil utility``."""

    folder: str
    json: bool
    pair: str | None
    csv: str | None


def _pair(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise BadInput(f"--pair takes two column names separated by a comma, not {text!r}")
    return parts[0], parts[1]


def execute(options: Options, registry, stop: Stop) -> int:
    from veil.engine.release.utility import read_folder_utility

    pair = _pair(options.pair)
    folder = read_folder_utility(registry, options.folder)
    figures = folder.utility()
    tables = folder.contingency(*pair) if pair else None
    shifts = folder.perturbation_figures()  # None unless the release declares perturbed columns
    if options.csv:
        figures.write_csv(Path(options.csv), tables)
        if shifts is not None:
            shifts.write_csv(Path(options.csv))
    if options.json:
        out = figures.to_dict()
        if shifts is not None:
            out["perturbation"] = shifts.to_dict()
        if tables is not None:
            out["contingency"] = {
                "columns": list(pair),
                "before": _table_dict(tables[0]),
                "after": _table_dict(tables[1]),
            }
        json.dump(_finite(out), sys.stdout, indent=2)
        print()
        return EXIT_OK
    print(_text(figures))
    if shifts is not None:
        print(_perturbed_text(shifts))
    if tables is not None:
        for side, table in zip(("before", "after"), tables):
            print(f"\nContingency of {pair[0]} × {pair[1]}, {side}:")
            print(table.to_string())
    return EXIT_OK


def _table_dict(table) -> dict:
    return {
        "rows": [str(r) for r in table.index],
        "columns": [str(c) for c in table.columns],
        "records": table.to_numpy().tolist(),
    }


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _show(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def _text(figures) -> str:
    lines = [f"{figures.rows_before:,} records in the input, {figures.rows_after:,} released"]
    for name, c in figures.columns.items():
        how = "generalised" if c.generalised else "as it was"
        lines.append(
            f"\n{name} ({'number' if c.numeric else 'category'}, {how}): loss {c.loss:.4f}, {c.suppressed:,} suppressed"
        )
        keys = list(dict.fromkeys([*c.summary_before, *c.summary_after]))
        lines.append("  " + f"{'':10} {'before':>16} {'after':>16}")
        for key in keys:
            lines.append(f"  {key:10} {_show(c.summary_before.get(key)):>16} {_show(c.summary_after.get(key)):>16}")
        shown = c.after.head(12)
        more = f" (and {len(c.after) - len(shown):,} more values)" if len(c.after) > len(shown) else ""
        lines.append("  released: " + ", ".join(f"{k}: {v:,}" for k, v in shown.items()) + more)
    return "\n".join(lines)


def _perturbed_text(shifts) -> str:
    lines = ["\nPerturbed columns, before and after:"]
    for name, c in shifts.columns.items():
        if c.numeric:
            lines.append(
                f"\n{name} (number): {c.records:,} records paired, {c.changed:,} changed; correlation of original "
                f"and perturbed {_show(c.correlation)}, mean absolute change {_show(c.mean_abs_change)}"
                if c.paired
                else f"\n{name} (number): the records cannot be paired (the release has another number of them)"
            )
            lines.append(f"  {'bin':>27} {'before':>8} {'after':>8}")
            for lo, hi, b, a in zip(c.edges[:-1], c.edges[1:], c.before, c.after):
                lines.append(f"  [{lo:>12.6g}, {hi:>12.6g}] {int(b):>8,} {int(a):>8,}")
            continue
        changed = "" if c.changed is None else f", {c.changed:,} records published as another category"
        lines.append(f"\n{name} (category){changed}")
        expected = "expected" if c.expected is not None else ""
        lines.append(f"  {'category':16} {'before':>8} {'after':>8} {expected:>9}")
        for i, category in enumerate(c.categories):
            e = f"{c.expected[i]:>9.2f}" if c.expected is not None else ""
            lines.append(f"  {category[:16]:16} {int(c.before[i]):>8,} {int(c.after[i]):>8,} {e}")
        for t in c.transitions:
            lines.append(f"  transition matrix ({t.stratum_text}, {t.records:,} records), row: from, column: to")
            width = max(8, *(len(x) for x in t.categories[:12]))
            lines.append("  " + " " * 16 + " ".join(f"{x[:width]:>{width}}" for x in t.categories))
            for x, row in zip(t.categories, t.matrix):
                lines.append(f"  {x[:16]:16} " + " ".join(f"{v:>{width}.4f}" for v in row))
    return "\n".join(lines)
