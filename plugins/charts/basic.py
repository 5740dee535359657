"""Charts over a study's tidy result table: a metric against a parameter (grouped bars or lines)
and privacy against utility with the efficient frontier (paper 001)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import mark_runs, BadInput, Chart, hookimpl, param


@dataclass(frozen=True)
class MetricParams:
    metric: str = param("auc", help="the metric on the y axis")
    x: str = param("", help="the swept parameter on the x axis (default: the study's first)")


NOT_SET = "(not set)"  # the x of a run that has no value for the parameter on the x axis


def _metric_table(results: pd.DataFrame, params) -> tuple[pd.DataFrame, str]:
    """Mean and standard deviation of the metric per (method, x), with whether a run of it failed
    its privacy model. Only repeats are averaged: runs whose ``settings`` differ (in anything but
    their seed) that share a method label and an x are told apart by a numbered label."""
    if results.empty:
        raise BadInput("there are no results to draw yet")
    if "label" in results.columns:  # a study's row names (e.g. "k-anonymity HamDist") group the bars
        results = results.assign(method=results["label"])
    data = results[results["metric"] == params.metric]
    if data.empty:
        known = ", ".join(sorted(results["metric"].unique()))
        raise BadInput(f"no results for metric {params.metric!r} (have: {known})")
    sweep = results.attrs.get("sweep") or []
    x = params.x or (sweep[0] if sweep else "method")
    if x not in data.columns:
        raise BadInput(f"the results have no parameter {x!r}")
    if x != "method":
        data = data.assign(**{x: data[x].astype(object).where(data[x].notna() & (data[x] != ""), NOT_SET)})
    data = _apart(data, x)
    keys = ["method", x] if x != "method" else ["method"]
    table = data.groupby(keys, sort=False, dropna=False)["value"].agg(["mean", "std"]).reset_index()
    holds = data["holds"] if "holds" in data.columns else pd.Series(None, index=data.index, dtype=object)
    fails = holds.map(_failed).astype(bool)
    table["fails"] = fails.groupby([data[k] for k in keys], sort=False, dropna=False).any().to_numpy()
    return table, x


def _apart(data: pd.DataFrame, x: str) -> pd.DataFrame:
    """``data`` with the method label of runs that share a (label, x) slot but not their settings
    numbered ("global-recoding [2]"): never averaged as if they were repeats."""
    if "settings" not in data.columns:
        return data
    slot = [data["method"], data[x]] if x != "method" else [data["method"]]
    settings = data["settings"].astype(object).where(data["settings"].notna(), "")
    rank = settings.groupby(slot, sort=False, dropna=False).transform(lambda s: pd.factorize(s)[0])
    many = settings.groupby(slot, sort=False, dropna=False).transform("nunique") > 1
    if not many.any():
        return data
    label = data["method"].astype(str).where(~many, data["method"].astype(str) + " [" + (rank + 1).astype(str) + "]")
    return data.assign(method=label)


def _tick_text(value, width: int = 14) -> str:
    """A tick label wrapped to lines of about ``width`` characters (at most three), so it never runs
    into its neighbour."""
    import textwrap

    lines = textwrap.wrap(_short(value), width) or [""]
    return "\n".join(lines[:3]) + ("…" if len(lines) > 3 else "")


class MetricBars(Chart):
    name = "metric-bars"
    preferred = True  # the chart the desktop shows first
    title = "Metric per parameter value (grouped bars)"
    description = (
        "One group of bars per parameter value, one bar per method; error bars over repeats (runs whose "
        "settings differ are never averaged). A slot with no run is left empty."
    )
    Params = MetricParams

    def draw(self, results, figure, params):
        table, x = _metric_table(results, params)
        ax = figure.add_subplot()
        methods = list(dict.fromkeys(table["method"]))
        xs = list(dict.fromkeys(table[x])) if x != "method" else [""]
        width = 0.8 / max(len(methods), 1)
        for i, m in enumerate(methods):
            sub = table[table["method"] == m]
            rows = [sub[sub[x] == v] if x != "method" else sub for v in xs]
            means = [r["mean"].iloc[0] if len(r) else np.nan for r in rows]  # no run: an empty slot
            stds = [r["std"].iloc[0] if len(r) else np.nan for r in rows]
            fails = [bool(r["fails"].any()) for r in rows]
            pos = np.arange(len(xs)) + (i - (len(methods) - 1) / 2) * width
            held = ~np.isnan(means)  # a slot with no run of m stays empty: no bar, no mark
            ax.bar(pos[held], np.asarray(means)[held], width, yerr=np.nan_to_num(stds)[held], label=m, capsize=3)
            for p, mean, failed in zip(pos, means, fails):
                if failed:  # a run of this slot made a release that fails its privacy model: say so (a
                    # baseline keeps its figure as the reference, but is never released)
                    ax.annotate(
                        "fails\nprivacy\nmodel",
                        (p, 0 if np.isnan(mean) else mean),
                        xytext=(0, 4),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize="x-small",
                        color="firebrick",
                    )
        texts = [_tick_text(v) for v in xs]
        crowded = len(xs) > 6 or max((len(t) for t in texts), default=0) > 14 * max(1, 10 // max(len(xs), 1))
        ax.set_xticks(
            np.arange(len(xs)),
            texts,
            rotation=30 if crowded else 0,
            ha="right" if crowded else "center",
            fontsize="small",
        )
        ax.set_xlabel(x)
        ax.set_ylabel(params.metric)
        _auc_axis(ax, params.metric, table["mean"])
        _legend_outside(ax)
        ax.grid(axis="y", alpha=0.3)


class MetricLines(Chart):
    name = "metric-lines"
    title = "Metric against a parameter (lines)"
    description = "One line per method; shaded band ± one standard deviation over repeats."
    Params = MetricParams
    needs_sweep = True  # a line runs along a swept parameter

    def draw(self, results, figure, params):
        table, x = _metric_table(results, params)
        ax = figure.add_subplot()
        for m in dict.fromkeys(table["method"]):
            sub = table[table["method"] == m]
            xs = pd.to_numeric(sub[x], errors="coerce") if x != "method" else np.zeros(len(sub))
            ax.plot(xs, sub["mean"], marker="o", label=m)
            std = np.nan_to_num(sub["std"].to_numpy())
            ax.fill_between(xs, sub["mean"] - std, sub["mean"] + std, alpha=0.15)
        ax.set_xlabel(x)
        ax.set_ylabel(params.metric)
        _auc_axis(ax, params.metric, table["mean"])
        _legend_outside(ax)
        ax.grid(alpha=0.3)


def _legend_outside(ax) -> None:
    """The legend to the right of the axes, so it never hides a bar or a line."""
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _auc_axis(ax, metric: str, values) -> None:
    """AUC axes start at chance (0.5) when every value is above it: differences stay visible."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if metric.split(":")[0] == "auc" and len(finite) and finite.min() >= 0.5:
        ax.set_ylim(0.5, 1.0)
        ax.axhline(0.5, color="grey", lw=0.8)
        ax.set_ylabel(f"{metric} (0.5 = chance)")


@dataclass(frozen=True)
class FrontierParams:
    privacy: str = param("privacy-value", help="metric on the x axis: a privacy level or loss (e.g. ploss)")
    utility: str = param("auc", help="metric on the y axis: a utility or its loss (e.g. uloss)")
    privacy_better: str = param(
        "auto",
        choices=("auto", "higher", "lower"),
        help="which way the x axis is more private (auto: as the metric declares)",
    )
    utility_better: str = param(
        "auto",
        choices=("auto", "higher", "lower"),
        help="which way the y axis is more useful (auto: as the metric declares)",
    )
    labels: bool = param(True, help="label each frontier point with its setting")


def efficient_frontier(points: np.ndarray, maximise=(True, True)) -> np.ndarray:
    """Indices of the points no other point beats in both coordinates (paper 001 §4)."""
    signed = points * np.where(maximise, 1.0, -1.0)
    keep = []
    for i, p in enumerate(signed):
        dominated = np.any(np.all(signed >= p, axis=1) & np.any(signed > p, axis=1))
        if not dominated:
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


def _better(choice: str, metric: str, results) -> bool:
    if choice != "auto":
        return choice == "higher"
    declared = results.attrs.get("higher_is_better", {})
    if metric not in declared:
        raise BadInput(f"which way {metric!r} is better is not declared; choose higher or lower")
    return bool(declared[metric])


SETTING_SKIP = {
    "run",
    "label",
    "method",
    "model",
    "repeat",
    "seed",
    "settings",
    "holds",
    "metric",
    "value",
    "seconds",
    "error",
}


def _setting(row, keys) -> str:
    parts = [f"{k}={_short(row[k])}" for k in keys if k in row and pd.notna(row[k]) and row[k] != ""]
    return ", ".join(parts)


def _point_label(row, keys) -> str:
    """A point's label: the setting that sets its run apart, else its run's number (as the results
    table shows it), so every point can be told from the others."""
    return _setting(row, keys) or f"#{int(row['run'])}"


def _failed(holds) -> bool:
    """Whether a run's ``holds`` says its release failed its model (None or NaN: no model, not a failure)."""
    return holds is not None and not pd.isna(holds) and not bool(holds)


def _short(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


class PrivacyUtility(Chart):
    name = "privacy-utility"
    title = "Privacy against utility (efficient frontier)"
    paper = "001_f1ec36403a5884c8"
    description = (
        "Every run as a point for any pair of a privacy and a utility metric; the runs no other run "
        "beats on both axes are joined as the efficient frontier, the others greyed. Click a point to "
        "select its run."
    )
    Params = FrontierParams
    draws_trade_off = True

    @classmethod
    def trade_off_params(cls, x: str, y: str) -> dict:
        return {"privacy": x, "utility": y}

    def draw(self, results, figure, params):
        if results.empty:
            raise BadInput("there are no results to draw yet")
        x, y = params.privacy, params.utility
        maximise = (_better(params.privacy_better, x, results), _better(params.utility_better, y, results))
        if "label" in results.columns:
            results = results.assign(method=results["label"].fillna(results["method"]))
        keys = [c for c in results.columns if c not in SETTING_SKIP]
        index = ["run", "method", *keys]
        filled = results.assign(**{k: results[k].astype(object).where(results[k].notna(), "") for k in keys})
        wide = filled.pivot_table(index=index, columns="metric", values="value", dropna=False).reset_index()
        for col in (x, y):
            if col not in wide.columns:
                raise BadInput(f"no results for metric {col!r}")
        wide = wide.dropna(subset=[x, y]).reset_index(drop=True)
        if wide.empty:
            raise BadInput(f"no run has both {x} and {y}")
        pts = wide[[x, y]].to_numpy(dtype=float)
        holds = results.drop_duplicates("run").set_index("run")["holds"] if "holds" in results.columns else None
        fails = np.array([holds is not None and _failed(holds.get(r)) for r in wide["run"]], dtype=bool)
        front = np.zeros(len(wide), dtype=bool)
        ok = np.flatnonzero(~fails)  # a release that fails its model can never be chosen: not on the frontier
        if len(ok):
            front[ok[efficient_frontier(pts[ok], maximise)]] = True
        ax = figure.add_subplot()
        dominated = ~front & ~fails
        colours = {}
        for m in dict.fromkeys(wide["method"]):  # each method one colour, on and off the frontier
            colours[m] = f"C{len(colours) % 10}"
            mine = (wide["method"] == m).to_numpy()
            on, off = front & mine, dominated & mine
            if on.any():
                dots = ax.scatter(
                    pts[on, 0], pts[on, 1], color=colours[m], label=m, zorder=3, edgecolor="black", linewidth=0.5
                )
                mark_runs(figure, dots, wide.loc[on, "run"])
            if off.any():  # dominated: the method's colour, hollow
                rings = ax.scatter(
                    pts[off, 0],
                    pts[off, 1],
                    facecolor="none",
                    edgecolor=colours[m],
                    alpha=0.8,
                    label=f"{m} (dominated)" if not on.any() else None,
                    zorder=2,
                )
                mark_runs(figure, rings, wide.loc[off, "run"])
        if dominated.any():
            ax.scatter([], [], facecolor="none", edgecolor="#707070", label="hollow: dominated")
        if fails.any():
            failed = ax.scatter(
                pts[fails, 0],
                pts[fails, 1],
                facecolor="none",
                edgecolor="#c5221f",
                marker="X",
                label="fails its privacy model",
            )
            mark_runs(figure, failed, wide.loc[fails, "run"])
        fp = pts[front][np.argsort(pts[front][:, 0])] if front.any() else np.zeros((0, 2))
        ax.plot(fp[:, 0], fp[:, 1], color="black", lw=1.2, ls="--", label="efficient frontier", zorder=2)
        private = results.attrs.get("category", {}).get(x, "privacy") == "privacy"
        ax.set_xlabel(f"{x} ({'higher' if maximise[0] else 'lower'} is {'more private' if private else 'better'})")
        ax.set_ylabel(f"{y} ({'higher' if maximise[1] else 'lower'} is better)")
        _legend_outside(ax)
        ax.grid(alpha=0.3)
        if params.labels:  # last: the axes are laid out as they will be drawn
            # frontier points first, then the dominated ones (greyer); a label that would overlap one
            # already placed tries other sides of its point, and is left out when none is free
            order = [*np.flatnonzero(front), *np.flatnonzero(dominated)]
            texts = [(i, _point_label(wide.iloc[i], keys), "black" if front[i] else "#707070") for i in order]
            figure.veil_hidden_labels = place_labels(figure, ax, pts, texts, lines=[fp])


LABEL_OFFSETS = ((4, 4), (4, -11), (-4, 4), (-4, -11), (5, -3), (-5, -3), (4, 12), (-4, 12), (4, -19), (-4, -19))


def place_labels(figure, ax, pts: np.ndarray, texts, lines=()) -> int:
    """Annotate each point (index, text, colour) at the first offset where its label overlaps no label
    placed before it, no point and no drawn line (``lines``: polylines in data coordinates), nor
    leaves the axes; labels with no free place are left out. Returns how many were left out (each
    point stays clickable, and its run's row says its setting)."""
    if not hasattr(figure.canvas, "get_renderer") and type(figure.canvas).__name__ == "FigureCanvasBase":
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)  # a bare Figure: give it the raster canvas that measures text
    try:
        renderer = figure.canvas.get_renderer()
    except AttributeError:  # a canvas that cannot measure text: place every label at its first offset
        renderer = None
    placed, hidden = [], 0
    ax.autoscale_view()  # the data limits as they will be drawn: points and labels are measured where they land
    engine = figure.get_layout_engine()
    if renderer is not None and engine is not None:  # a constrained layout moves the axes when drawn: now
        engine.execute(figure)
    box = ax.get_window_extent(renderer) if renderer is not None else None
    if renderer is not None:  # the points themselves are obstacles: a label never covers a marker
        from matplotlib.transforms import Bbox

        r = 3.5 * figure.dpi / 72
        placed += [Bbox.from_extents(px - r, py - r, px + r, py + r) for px, py in ax.transData.transform(pts)]
        for line in lines:  # a line is a chain of small boxes along it, one every r pixels
            xy = ax.transData.transform(np.asarray(line, dtype=float).reshape(-1, 2))
            for (x0, y0), (x1, y1) in zip(xy[:-1], xy[1:]):
                steps = max(1, int(np.hypot(x1 - x0, y1 - y0) / r))
                for t in np.linspace(0.0, 1.0, steps + 1):
                    px, py = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
                    placed.append(Bbox.from_extents(px - 1, py - 1, px + 1, py + 1))
    for i, text, colour in texts:
        for dx, dy in LABEL_OFFSETS if renderer is not None else LABEL_OFFSETS[:1]:
            ann = ax.annotate(
                text,
                pts[i],
                textcoords="offset points",
                xytext=(dx, dy),
                fontsize=7,
                color=colour,
                ha="left" if dx >= 0 else "right",
            )
            if renderer is None:
                break
            extent = ann.get_window_extent(renderer)
            inside = box.x0 <= extent.x0 and extent.x1 <= box.x1 and box.y0 <= extent.y0 and extent.y1 <= box.y1
            if inside and not any(extent.overlaps(other) for other in placed):
                placed.append(extent)
                break
            ann.remove()
        else:
            hidden += 1
    return hidden


@hookimpl
def veil_register_charts():
    return [MetricBars, MetricLines, PrivacyUtility]
