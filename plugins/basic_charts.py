"""Charts over a study's tidy result table: a metric against a parameter (grouped bars or lines)
and privacy against utility with the efficient frontier (paper 001)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, Chart, hookimpl, param


@dataclass(frozen=True)
class MetricParams:
    metric: str = param("auc", help="the metric on the y axis")
    x: str = param("", help="the swept parameter on the x axis (default: the study's first)")


def _metric_table(results: pd.DataFrame, params) -> tuple[pd.DataFrame, str]:
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
    keys = ["method", x] if x != "method" else ["method"]
    table = data.groupby(keys, sort=False, dropna=False)["value"].agg(["mean", "std"]).reset_index()
    fails = (data["holds"] == False) if "holds" in data.columns else pd.Series(False, index=data.index)  # noqa: E712
    table["fails"] = fails.groupby([data[k] for k in keys], sort=False, dropna=False).any().to_numpy()
    return table, x


class MetricBars(Chart):
    name = "metric-bars"
    title = "Metric per parameter value (grouped bars)"
    description = "One group of bars per parameter value, one bar per method; error bars over repeats."
    Params = MetricParams

    def draw(self, results, figure, params):
        table, x = _metric_table(results, params)
        ax = figure.add_subplot()
        methods = list(dict.fromkeys(table["method"]))
        xs = list(dict.fromkeys(table[x])) if x != "method" else [""]
        width = 0.8 / max(len(methods), 1)
        for i, m in enumerate(methods):
            sub = table[table["method"] == m]
            means = [sub[sub[x] == v]["mean"].mean() if x != "method" else sub["mean"].mean() for v in xs]
            stds = [sub[sub[x] == v]["std"].mean() if x != "method" else sub["std"].mean() for v in xs]
            fails = [bool(sub[sub[x] == v]["fails"].any()) if x != "method" else bool(sub["fails"].any()) for v in xs]
            pos = np.arange(len(xs)) + (i - (len(methods) - 1) / 2) * width
            ax.bar(pos, means, width, yerr=np.nan_to_num(stds), label=m, capsize=3)
            for p, mean, failed in zip(pos, means, fails):
                if np.isnan(mean) or failed:  # the release fails its privacy model: say so (a baseline keeps
                    # its figure as the reference, but is never released)
                    ax.annotate("fails\nprivacy\nmodel", (p, 0 if np.isnan(mean) else mean), xytext=(0, 4),
                                textcoords="offset points", ha="center", va="bottom", fontsize="x-small",
                                color="firebrick")
        ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs])
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
    privacy: str = param("privacy-value", help="metric on the x axis (a privacy loss or level)")
    utility: str = param("auc", help="metric on the y axis")
    privacy_higher_is_better: bool = param(True, help="whether a larger privacy value is more private")
    utility_higher_is_better: bool = param(True, help="whether a larger utility value is better")


def efficient_frontier(points: np.ndarray, maximise=(True, True)) -> np.ndarray:
    """Indices of the points no other point beats in both coordinates (paper 001 §4)."""
    signed = points * np.where(maximise, 1.0, -1.0)
    keep = []
    for i, p in enumerate(signed):
        dominated = np.any(np.all(signed >= p, axis=1) & np.any(signed > p, axis=1))
        if not dominated:
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


class PrivacyUtility(Chart):
    name = "privacy-utility"
    title = "Privacy against utility (efficient frontier)"
    paper = "001_f1ec36403a5884c8"
    description = "Every run as a point; the runs no other run beats on both axes are joined as the frontier."
    Params = FrontierParams

    def draw(self, results, figure, params):
        if results.empty:
            raise BadInput("there are no results to draw yet")
        if "label" in results.columns:
            results = results.assign(method=results["label"])
        wide = results.pivot_table(index=["run", "method"], columns="metric", values="value").reset_index()
        for col in (params.privacy, params.utility):
            if col not in wide.columns:
                raise BadInput(f"no results for metric {col!r}")
        wide = wide.dropna(subset=[params.privacy, params.utility])
        ax = figure.add_subplot()
        for m in dict.fromkeys(wide["method"]):
            sub = wide[wide["method"] == m]
            ax.scatter(sub[params.privacy], sub[params.utility], label=m, alpha=0.8)
        pts = wide[[params.privacy, params.utility]].to_numpy(dtype=float)
        if len(pts):
            front = efficient_frontier(pts, (params.privacy_higher_is_better, params.utility_higher_is_better))
            fp = pts[front][np.argsort(pts[front][:, 0])]
            ax.plot(fp[:, 0], fp[:, 1], color="black", lw=1.5, ls="--", label="efficient frontier")
        ax.set_xlabel(params.privacy)
        ax.set_ylabel(params.utility)
        _legend_outside(ax)
        ax.grid(alpha=0.3)


@hookimpl
def veil_register_charts():
    return [MetricBars, MetricLines, PrivacyUtility]
