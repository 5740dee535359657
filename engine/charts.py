"""Drawing chart plugins headless (matplotlib Agg) and saving them with their data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .io import write_atomic
from .runs import PluginCall


def draw(registry, call: PluginCall, results: pd.DataFrame, figure: Figure) -> Figure:
    chart = registry.chart(call.name)
    chart.draw(results, figure, chart.params(call.params))
    return figure


def save_chart(registry, call: PluginCall, results: pd.DataFrame, out_dir: str | Path, stem: str | None = None,
               size=(7.0, 4.5)) -> list[Path]:
    """Write ``stem.png``, ``stem.svg`` and the chart's data ``stem.csv``; return the paths."""
    out = Path(out_dir)
    stem = stem or call.name
    figure = Figure(figsize=size, dpi=120, layout="constrained")
    FigureCanvasAgg(figure)
    draw(registry, call, results, figure)
    written = []
    for ext in ("png", "svg"):
        written.append(write_atomic(out / f"{stem}.{ext}", lambda p, ext=ext: figure.savefig(p, format=ext)))
    written.append(write_atomic(out / f"{stem}.csv", lambda p: results.to_csv(p, index=False)))
    return written
