"""The two curves of paper 003 (docs/reference.md#feature-weighting), drawn from a study's result table.

* ``accuracy-vs-epsilon``: accuracy against log10 ε (the paper's ε from 1e-8 to 1, at 10 % of the
  features); one line per method label, a band of ± one standard deviation over repeats.
* ``accuracy-vs-features``: accuracy against the number of features kept (the paper's ε = 0.01).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, Chart, hookimpl, param

PAPER = "003_5ee0bd0faa8a52c8"


@dataclass(frozen=True)
class EpsilonParams:
    metric: str = param("weights-accuracy", help="the metric on the y axis (as the study names it)")
    x: str = param(
        "",
        help="the swept privacy budget on the x axis, drawn as log10 (default: the study's first "
        "swept parameter, e.g. epsilon)",
    )


@dataclass(frozen=True)
class FeaturesParams:
    metric: str = param("weights-accuracy", help="the metric on the y axis (as the study names it)")
    x: str = param(
        "",
        help="the swept number of features on the x axis, e.g. the methods' top (default: the "
        "study's first swept parameter)",
    )


def _curves(results: pd.DataFrame, metric: str, x: str) -> pd.DataFrame:
    """Mean and standard deviation of ``metric`` per method label and value of ``x``."""
    if results.empty:
        raise BadInput("there are no results to draw yet")
    results = results.assign(method=results["label"]) if "label" in results.columns else results
    data = results[results["metric"] == metric]
    if data.empty:
        known = ", ".join(sorted(results["metric"].unique()))
        raise BadInput(f"no results for metric {metric!r} (have: {known})")
    if not x:
        sweep = results.attrs.get("sweep") or []
        if not sweep:
            raise BadInput("the study sweeps no parameter; name the x axis")
        x = sweep[0]
    if x not in data.columns:
        raise BadInput(f"the results have no parameter {x!r}")
    data = data.assign(_x=pd.to_numeric(data[x], errors="coerce")).dropna(subset=["_x"])
    return data.groupby(["method", "_x"], sort=True)["value"].agg(["mean", "std"]).reset_index()


def _draw_lines(ax, table: pd.DataFrame, xs_of) -> None:
    for method in dict.fromkeys(table["method"]):
        sub = table[table["method"] == method]
        xs = xs_of(sub["_x"].to_numpy(dtype=float))
        ax.plot(xs, sub["mean"], marker="o", ms=4, label=method)
        std = np.nan_to_num(sub["std"].to_numpy(dtype=float))
        ax.fill_between(xs, sub["mean"] - std, sub["mean"] + std, alpha=0.15)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


class AccuracyVsEpsilon(Chart):
    name = "accuracy-vs-epsilon"
    title = "Accuracy against the privacy budget (log10 ε)"
    paper = PAPER
    description = "One line per method: accuracy as ε grows (paper 003, Figures 1–2)."
    Params = EpsilonParams
    needs_metrics = ("weights-accuracy",)
    needs_sweep = True

    def draw(self, results, figure, params):
        table = _curves(results, params.metric, params.x)
        table = table[table["_x"] > 0]
        if table.empty:
            raise BadInput(f"no positive values of {params.x!r} to draw on a log scale")
        ax = figure.add_subplot()
        _draw_lines(ax, table, np.log10)
        ax.set_xlabel(f"log10 {params.x or (results.attrs.get('sweep') or ['ε'])[0]}")
        ax.set_ylabel(params.metric)


class AccuracyVsFeatures(Chart):
    name = "accuracy-vs-features"
    title = "Accuracy against the number of features"
    paper = PAPER
    description = "One line per method: accuracy as more top-ranked features are kept (paper 003, Figures 3–4)."
    Params = FeaturesParams
    needs_metrics = ("weights-accuracy",)
    needs_sweep = True

    def draw(self, results, figure, params):
        table = _curves(results, params.metric, params.x)
        ax = figure.add_subplot()
        _draw_lines(ax, table, lambda v: v)
        ax.set_xlabel("number of features")
        ax.set_ylabel(params.metric)


@hookimpl
def veil_register_charts():
    return [AccuracyVsEpsilon, AccuracyVsFeatures]
