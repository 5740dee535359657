"""Charts of paper 004 (docs/reference.md#privacy-aware-evaluation): the four regions of PBI against Perf (Figure
6) and E(S) per
candidate for several weight settings (Figures 9–11).

Both draw a *candidate table*: the ``candidate_frame`` of a privacy-aware-candidates release (or its
CSV), one row per subset with ``label, subset, size, perf, pbi, list, chosen, alpha, distp_pbi,
baseline_perf``. Given a study's tidy result table instead, each run (method and swept values,
averaged over repeats) is one candidate, its Perf and PBI read from the ``utility`` and
``privacy`` metrics and its size from ``sfc``.

The scatter puts Perf on x and PBI on y, as the paper's Figure 6 does: only then are its compass
names right (region I, north-west, is more PBI and less accuracy than the baseline; IV, south-east,
the reverse).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, Chart, hookimpl, param

from ._privacy_aware import BASELINE, PAPER, PAPER_WEIGHTS, check_weights, rank_candidates

CANDIDATE_COLUMNS = {"label", "perf", "pbi", "size"}
STYLE = {BASELINE: ("black", "s"), "PerfR": ("tab:blue", "o"), "PrivR": ("tab:orange", "^")}
BOTH = ("tab:purple", "D")


def as_candidates(results: pd.DataFrame, utility: str, privacy: str) -> tuple[pd.DataFrame, list[str]]:
    """The candidate table to draw and the metrics it lacks (a study table may not compute them)."""
    if results is None or results.empty:
        raise BadInput("there are no results to draw yet")
    if CANDIDATE_COLUMNS <= set(results.columns):
        frame = results.copy()
        for col, default in (
            ("list", "candidate"),
            ("chosen", False),
            ("alpha", np.nan),
            ("distp_pbi", np.nan),
            ("baseline_perf", np.nan),
            ("subset", ""),
        ):
            if col not in frame.columns:
                frame[col] = default
        base = frame[frame["list"] == BASELINE]
        if frame["baseline_perf"].isna().all() and len(base):
            frame["baseline_perf"] = float(base["perf"].iloc[0])
        return frame, []
    if "metric" not in results.columns:
        raise BadInput("these results are neither a candidate table nor a study's result table")
    return _runs_as_candidates(results, utility, privacy)


def _runs_as_candidates(results: pd.DataFrame, utility: str, privacy: str) -> tuple[pd.DataFrame, list[str]]:
    sweep = [c for c in results.attrs.get("sweep", []) if c in results.columns]
    # Repeats of one setting are consecutive runs: run − repeat names the setting (the same method
    # may appear twice with different parameters, which the result table does not record).
    runs = (
        results.assign(setting=results["run"] - results["repeat"])
        if "repeat" in results.columns
        else results.assign(setting=results["run"])
    )
    name = "label" if "label" in runs.columns else "method"  # a study's per-method label, when it has one
    wide = (
        runs.groupby(["setting", name, "method", *sweep, "metric"], sort=False, dropna=False)["value"]
        .mean()
        .unstack("metric")
        .reset_index()
    )
    missing = [m for m in (utility, privacy) if m not in wide.columns]
    labels = [" ".join([str(r[name]), *(f"{k}={r[k]}" for k in sweep)]) for _, r in wide.iterrows()]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} (run {int(s)})" for lab, s in zip(labels, wide["setting"])]
    base = wide[wide["method"] == "all-features"]
    distp = wide["distp-pbi"].round(6).dropna().unique() if "distp-pbi" in wide.columns else []
    frame = pd.DataFrame(
        {
            "label": labels,
            "subset": labels,
            "size": wide["sfc"] if "sfc" in wide.columns else np.nan,
            "perf": wide[utility] if utility in wide.columns else np.nan,
            "pbi": wide[privacy] if privacy in wide.columns else np.nan,
            "list": wide[name].astype(str),
            "chosen": False,
            "alpha": np.nan,
            "distp_pbi": float(distp[0]) if len(distp) == 1 else np.nan,  # only when every run shares it
            "baseline_perf": float(base[utility].mean()) if len(base) and utility in wide.columns else np.nan,
        }
    )
    return frame, missing


def _style(list_name: str, palette: dict) -> tuple[str, str]:
    if list_name in STYLE:
        return STYLE[list_name]
    if "," in str(list_name):
        return BOTH
    if list_name not in palette:
        palette[list_name] = (f"C{len(palette) + 2}", "o")
    return palette[list_name]


def _first(frame: pd.DataFrame, col: str) -> float:
    values = pd.to_numeric(frame[col], errors="coerce").dropna()
    return float(values.iloc[0]) if len(values) else float("nan")


@dataclass(frozen=True)
class RegionParams:
    utility: str = param("cv-accuracy", help="for a study's result table: the metric giving Perf (x)")
    privacy: str = param("pbi", help="for a study's result table: the metric giving PBI (y)")
    labels: str = param("letter", choices=("letter", "subset"), help="label each point by letter or by subset")
    weights: str = param("", help="ring the best subset under these weights w1/w2/w3 (empty: the run's own choice)")


class PrivacyRegions(Chart):
    name = "privacy-aware-regions"
    title = "PBI against Perf: the four regions"
    paper = PAPER
    description = (
        "Every candidate subset at (Perf, PBI) with the baseline's lines dividing the four regions "
        "(I NW worst … IV SE best), the α line and the DistP_PBI line (paper 004, Figure 6)."
    )
    Params = RegionParams
    needs_metrics = ("pbi",)  # a study's runs are candidates only when their PBI was computed

    def draw(self, results, figure, params):
        frame, missing = as_candidates(results, params.utility, params.privacy)
        ax = figure.add_subplot()
        base_perf, alpha, distp = (_first(frame, c) for c in ("baseline_perf", "alpha", "distp_pbi"))
        ax.axhline(0.0, color="grey", lw=1, ls="--", label="baseline PBI (0)")
        if np.isfinite(base_perf):
            ax.axvline(base_perf, color="grey", lw=1, ls="--", label=f"baseline Perf ({base_perf:.2f} %)")
        if missing:
            _say(
                ax,
                f"not computed: {', '.join(missing)}; add {'them' if len(missing) > 1 else 'it'} to the "
                f"study's metrics to place the runs",
            )
            return
        if np.isfinite(alpha):
            ax.axhline(alpha, color="firebrick", lw=1.2, ls=":", label=f"α = {alpha:g} %")
        if np.isfinite(distp):
            ax.axhline(distp, color="seagreen", lw=1.2, ls="-.", label=f"DistP_PBI = {distp:.2f} %")
        palette: dict = {}
        for name in dict.fromkeys(frame["list"]):
            sub = frame[frame["list"] == name]
            color, marker = _style(name, palette)
            ax.scatter(sub["perf"], sub["pbi"], color=color, marker=marker, s=36, zorder=3, label=str(name))
        if params.weights.strip():
            best = rank_candidates(frame, parse_weight_settings(params.weights)[0])[0]["index"]
            frame["chosen"] = np.arange(len(frame)) == best
        chosen = frame[frame["chosen"].astype(bool)]
        if len(chosen):
            ax.scatter(
                chosen["perf"],
                chosen["pbi"],
                s=220,
                facecolors="none",
                edgecolors="black",
                lw=1.5,
                zorder=4,
                label="released (best E(S))",
            )
        shown = _labelled(frame, params.weights)
        for i, (_, r) in enumerate(frame.iterrows()):
            if i not in shown:
                continue
            text = r["label"] if params.labels == "letter" else (r["subset"] or r["label"])
            ax.annotate(str(text), (r["perf"], r["pbi"]), xytext=(7, 5), textcoords="offset points", fontsize="x-small")
        _regions(ax)
        ax.margins(0.12)  # room for the labels and the region names
        ax.set_xlabel("Perf(S): accuracy of the class (%)")
        ax.set_ylabel("PBI(S) (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _regions(ax) -> None:
    for x, y, ha, va, text in (
        (0.01, 0.99, "left", "top", "I (NW): worst"),
        (0.99, 0.99, "right", "top", "II (NE): better Perf, more PBI"),
        (0.01, 0.01, "left", "bottom", "III (SW): less PBI, lower Perf"),
        (0.99, 0.01, "right", "bottom", "IV (SE): best"),
    ):
        ax.text(x, y, text, transform=ax.transAxes, ha=ha, va=va, fontsize="x-small", color="dimgrey")


LABEL_ALL_UP_TO = 15


def _labelled(frame, weights: str) -> set[int]:
    """Which points get a label: all of a small candidate set; of a large one, the baseline, the
    released subset and the eight best by E(S) (their labels would otherwise pile up)."""
    if len(frame) <= LABEL_ALL_UP_TO:
        return set(range(len(frame)))
    setting = parse_weight_settings(weights)[0] if weights.strip() else (1 / 3, 1 / 3, 1 / 3)
    best = [r["index"] for r in rank_candidates(frame, setting)[:8]]
    keep = set(best)
    labels = frame["label"].astype(str).tolist()
    keep |= {i for i, lab in enumerate(labels) if lab.upper() in ("BL", "BASELINE")}
    if "chosen" in frame.columns:
        keep |= set(np.flatnonzero(frame["chosen"].astype(bool).to_numpy()).tolist())
    return keep


def _say(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize="small", wrap=True)


def parse_weight_settings(text: str) -> list[tuple[float, float, float]]:
    """``"0.333/0.333/0.333; 0.5/0.25/0.25"`` → [(0.333, 0.333, 0.333), (0.5, 0.25, 0.25)]; the numbers
    of one setting may be separated by ``/``, ``,`` or spaces, settings by ``;``."""
    settings = []
    for part in filter(None, (p.strip() for p in str(text).split(";"))):
        numbers = [x for x in re.split(r"[/,\s]+", part) if x]
        settings.append(check_weights(numbers))
    if not settings:
        raise BadInput("give at least one weight setting w1/w2/w3 (settings separated by ';')")
    return settings


def _default_weights() -> str:
    return "; ".join("/".join(f"{w:g}" for w in ws) for ws in PAPER_WEIGHTS)


@dataclass(frozen=True)
class EsParams:
    weights: str = param(
        _default_weights(), help="weight settings w1/w2/w3 (performance/privacy/size), separated by ';'"
    )
    utility: str = param("cv-accuracy", help="for a study's result table: the metric giving Perf")
    privacy: str = param("pbi", help="for a study's result table: the metric giving PBI")
    labels: str = param("letter", choices=("letter", "subset"), help="label the x axis by letter or by subset")


class EsPerCandidate(Chart):
    name = "privacy-aware-es"
    title = "E(S) per candidate subset for several weight settings"
    paper = PAPER
    description = (
        "E(S) = w1·prf + w2·prv + w3·num of every candidate (baseline included) for each weight "
        "setting; a star marks each setting's argmax (paper 004, Figures 9–11)."
    )
    Params = EsParams
    needs_metrics = ("pbi",)

    def draw(self, results, figure, params):
        settings = parse_weight_settings(params.weights)
        frame, missing = as_candidates(results, params.utility, params.privacy)
        ranked = frame.assign(
            perf=frame["perf"].fillna(0.0), pbi=frame["pbi"].fillna(0.0), size=frame["size"].fillna(0.0)
        )  # a metric not computed ties every run
        ax = figure.add_subplot()
        xs = np.arange(len(frame))
        for ws in settings:
            order = rank_candidates(ranked, ws)
            e = np.empty(len(frame))
            for entry in order:
                e[entry["index"]] = entry["e"]
            (line,) = ax.plot(xs, e, marker="o", ms=4, lw=1.2, label=f"w = ({ws[0]:g}, {ws[1]:g}, {ws[2]:g})")
            best = order[0]["index"]
            ax.scatter([xs[best]], [e[best]], marker="*", s=180, color=line.get_color(), edgecolors="black", zorder=4)
        _list_separators(ax, frame)
        texts = (
            frame["label"]
            if params.labels == "letter"
            else frame["subset"].where(frame["subset"] != "", frame["label"])
        )
        crowded = len(frame) > 30
        upright = params.labels == "letter" and not crowded
        ax.set_xticks(
            xs,
            [str(t) for t in texts],
            rotation=0 if upright else (90 if crowded else 60),
            ha="center" if upright or crowded else "right",
            fontsize="x-small" if crowded else "small",
        )
        ax.set_xlabel("candidate subset")
        ax.set_ylabel("E(S)")
        if missing:
            ax.set_title(f"not computed: {', '.join(missing)} (every run ties on it)", fontsize="small")
        ax.grid(alpha=0.3)
        ax.legend(
            fontsize="x-small",
            title="★ best subset",
            title_fontsize="x-small",
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )


def _list_separators(ax, frame: pd.DataFrame) -> None:
    lists = [name.split(",")[0].strip() for name in frame["list"].astype(str)]  # "PerfR, PrivR" is PerfR's
    for i in range(1, len(lists)):
        if lists[i] != lists[i - 1] and lists[i] not in lists[:i]:
            ax.axvline(i - 0.5, color="lightgrey", lw=1, ls=":")
            ax.text(
                i - 0.4,
                0.99,
                lists[i],
                transform=ax.get_xaxis_transform(),
                va="top",
                fontsize="x-small",
                color="dimgrey",
            )


@hookimpl
def veil_register_charts():
    return [PrivacyRegions, EsPerCandidate]
