"""Drawing chart plugins headless (matplotlib Agg) and saving them with their data."""

from __future__ import annotations

from pathlib import Path

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn, not when a plugin names mark_runs
    from matplotlib.figure import Figure

from ..base.io import write_atomic
from ..run.runs import PluginCall


def draw(registry, call: PluginCall, results: pd.DataFrame, figure: Figure) -> Figure:
    """Draw chart ``call`` of ``results`` onto ``figure``.

    The chart sees, in ``results.attrs["higher_is_better"]``, each metric's declared orientation
    (``privacy-value``: the run's privacy model's), so no chart guesses which way is better, and in
    ``results.attrs["category"]`` whether it measures privacy or utility; it may
    tag what it draws with :func:`mark_runs` so a click on a point selects the run.
    """
    chart = registry.chart(call.name)
    results = results.copy()
    results.attrs["higher_is_better"] = orientations(registry, results)
    results.attrs["category"] = categories(registry, results)
    figure.veil_runs = []
    chart.draw(results, figure, chart.params(call.params))
    return figure


def fitting_charts(registry, results: pd.DataFrame) -> list[str]:
    """The charts that apply to ``results``, as each chart declares (:meth:`Chart.fits`); with no
    results yet, those that need nothing in particular."""
    charts = registry.classes("chart")
    if results is None or results.empty:
        return [c.name for c in charts if not (c.needs_metrics or c.needs_sweep or c.draws_trade_off)]
    return [c.name for c in charts if not c.fits(results)]


def first_chart(registry, results: pd.DataFrame, runs=None) -> PluginCall | None:
    """The chart that answers what the latest runs decide: the :class:`~veil.engine.TradeOff` their
    method declares (for runs ``runs``, default every run), drawn by the first chart that draws a
    trade-off, when the results computed its metrics; None when no method declares one that
    applies (the preferred chart then stays)."""
    if results is None or results.empty or "method" not in results.columns:
        return None
    latest = results if runs is None else results[results["run"].isin(list(runs))]
    computed = list(dict.fromkeys(latest.loc[latest["value"].notna(), "metric"].astype(str)))
    charts = [c for c in registry.classes("chart") if c.draws_trade_off and not c.fits(results)]
    for method in dict.fromkeys(latest["method"]):
        if method not in registry.names("algorithm") or not charts:
            continue
        trade = registry.get("algorithm", method).trade_off
        if trade is None or (trade.swept and latest[latest["method"] == method]["run"].nunique() < 2):
            continue
        pair = trade.pick(computed)
        if pair is not None:
            return PluginCall(charts[0].name, charts[0].trade_off_params(*pair))
    return None


def orientations(registry, results: pd.DataFrame) -> dict:
    """Whether a larger value is better, for every metric of a result table that declares it."""
    out = {}
    if "metric" not in results.columns:
        return out
    for text in pd.unique(results["metric"]):
        name = str(text).split(":")[0]
        if name == "privacy-value":
            texts = [m for m in pd.unique(results.get("model", pd.Series(dtype=object))) if isinstance(m, str)]
            models = [m.split(":")[0] for t in texts for m in t.split(" + ")[:1]]  # privacy-value: the first model's
            found = {registry.privacy_model(m).higher_is_safer for m in models if m in registry.names("privacy-model")}
            if len(found) == 1:
                out[text] = found.pop()
        elif name in registry.names("metric"):
            out[text] = bool(registry.metric(name).higher_is_better)
    return out


def categories(registry, results: pd.DataFrame) -> dict:
    """Each metric's declared category ("privacy" or "utility"); ``privacy-value`` is privacy."""
    out = {}
    for text in pd.unique(results["metric"]) if "metric" in results.columns else ():
        name = str(text).split(":")[0]
        if name == "privacy-value":
            out[text] = "privacy"
        elif name in registry.names("metric"):
            out[text] = registry.metric(name).category
    return out


def mark_runs(figure: Figure, artist, runs) -> None:
    """Say which run each point of ``artist`` (a scatter) draws, so clicking it can select the run."""
    artist.set_picker(6)
    figure.veil_runs = [*getattr(figure, "veil_runs", []), (artist, [int(r) for r in runs])]


def picked_run(figure: Figure, artist, index: int) -> int | None:
    """The run a pick event on ``artist`` at point ``index`` names (None when it names none)."""
    for marked, runs in getattr(figure, "veil_runs", []):
        if marked is artist and 0 <= index < len(runs):
            return runs[index]
    return None


def save_chart(
    registry, call: PluginCall, results: pd.DataFrame, out_dir: str | Path, stem: str | None = None, size=(7.0, 4.5)
) -> list[Path]:
    """Write ``stem.png``, ``stem.svg`` and the chart's data ``stem.csv``; return the paths."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
