"""Reproduce paper 003's experiments (docs/reference.md#feature-weighting): FWELL and Private FWELL on six datasets.

For each dataset: 10-fold stratified CV; in each fold everything is computed from the training part
only. FWELL's λ is tuned inside the training part (5-fold CV of the held-out logistic loss of the
margins from {1e-4, …, 1}, the product's rule; also, per classifier, by inner-CV accuracy of the top
10 % of the features); L-BFGS to a gradient below 1e-8, and the paper's gradient steps for comparison.
Private FWELL's λ is fixed in advance (Veil's default 1 and 0.01, both in the grid) and Gamma-norm
noise is added (``--repeats`` draws per fold, seeded); a random order of the features is the floor.
LinearSVC (C = 1) and 3-NN trained on the top features; accuracy on the held-out part.

Curves: accuracy vs log10 ε at 10 % of the features (ε = 1e-8 … 1), and accuracy vs the number of
features at ε = 0.01 (Figures 13–24). Writes ``docs/fwell/results/<dataset>.csv`` (one row per fold,
draw, setting and classifier), ``docs/fwell/results/summary.csv`` and the figures
``docs/fwell/figures/*.png``.

Usage::

    .venv/bin/python scripts/reproduce_paper003.py [--datasets sonar,wdbc] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.io as sio  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from veil.plugins import _fwell as core  # noqa: E402
from veil.plugins.weighting.fwell_eval import fold_accuracy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
OUT = ROOT / "docs" / "fwell"
EPSILONS = [10.0**e for e in range(-8, 1)]
EPSILON_FEATURES = 0.01
# Private FWELL's λ is fixed in advance: Veil's default (core.PRIVATE_LAMBDA) and 0.01, both from the grid
PRIVATE_LAMBDAS = (core.PRIVATE_LAMBDA, 0.01)
CLASSIFIERS = {"3-nn": "3NN", "linear-svc": "SVM"}


# -- the datasets (what differs from the paper is said in docs/fwell.md) -----------------------------------
def basehock():
    m = sio.loadmat(DATA / "scikit_feature" / "BASEHOCK.mat")
    return np.asarray(m["X"], dtype=float), m["Y"].ravel()


def lung():
    """lung_small (73 × 325, 7 classes): the largest class (7, 21 records) against the rest."""
    m = sio.loadmat(DATA / "scikit_feature" / "lung_small.mat")
    y = m["Y"].ravel()
    return np.asarray(m["X"], dtype=float), np.where(y == 7, 1, 0)


def sonar():
    frame = pd.read_csv(DATA / "uci_sonar" / "sonar.all-data", header=None)
    return frame.iloc[:, :-1].to_numpy(dtype=float), frame.iloc[:, -1].to_numpy()


def soybean():
    """soybean-small (47 × 35, 4 classes): D1 and D2 against D3 and D4."""
    frame = pd.read_csv(DATA / "uci_soybean_small" / "soybean-small.data", header=None)
    y = frame.iloc[:, -1].isin(["D1", "D2"]).astype(int).to_numpy()
    return frame.iloc[:, :-1].to_numpy(dtype=float), y


def waveform():
    """waveform (5,000 × 21): classes 1 and 2, which gives the paper's 3,343 records."""
    frame = pd.read_csv(DATA / "uci_waveform" / "waveform.data", header=None)
    keep = frame.iloc[:, -1].isin([1, 2]).to_numpy()
    return frame.iloc[keep, :-1].to_numpy(dtype=float), frame.iloc[keep, -1].to_numpy()


def wdbc():
    frame = pd.read_csv(DATA / "uci_wdbc" / "wdbc.data", header=None)
    return frame.iloc[:, 2:].to_numpy(dtype=float), frame.iloc[:, 1].to_numpy()


DATASETS = {"basehock": basehock, "lung": lung, "sonar": sonar, "soybean": soybean, "waveform": waveform, "wdbc": wdbc}


def feature_grid(d: int) -> list[int]:
    if d <= 60:
        step = max(1, math.ceil(d / 10))
        return sorted(set(range(1, d + 1, step)) | {d})
    return [g for g in (5, 10, 20, 50, 100, 200, 500, 1000) if g <= d]


# -- one dataset --------------------------------------------------------------------------------------
def accuracy_lambda(x, xs, codes, train, m: int, seed: int, folds: int = 5) -> dict[str, float]:
    """λ per classifier by inner cross-validation *inside the training part*: for each λ of the grid,
    FWELL's weights on the inner training records, the classifier on their top ``m`` features, accuracy
    on the inner held-out records; the best mean accuracy (ties: the larger λ). The held-out fold of the
    outer loop is never seen."""
    inner = StratifiedKFold(max(2, min(folds, int(np.bincount(codes[train]).min()))), shuffle=True, random_state=seed)
    scores = {(clf, lam): [] for clf in CLASSIFIERS for lam in core.LAMBDA_GRID}
    for itrain, itest in inner.split(train, codes[train]):
        itrain, itest = train[itrain], train[itest]
        z = core.margins(x[itrain], codes[itrain])
        for lam in core.LAMBDA_GRID:
            ranked = list(core.ranking(core.solve_lbfgs(z, lam).w))
            for clf in CLASSIFIERS:
                scores[clf, lam].append(fold_accuracy(xs, codes, itrain, itest, ranked, m, clf, seed))
    return {
        clf: max(core.LAMBDA_GRID, key=lambda lam: (round(float(np.mean(scores[clf, lam])), 12), lam))
        for clf in CLASSIFIERS
    }


def run_dataset(
    name: str, repeats: int, seed: int, epsilons=EPSILONS, by_accuracy: bool = True
) -> tuple[pd.DataFrame, dict]:
    started = time.perf_counter()
    x, y = DATASETS[name]()
    codes = core.check_labels(y)
    n, d = x.shape
    xs = core.scale_unit(x)  # the classifiers see the features scaled to [0, 1], as the paper does
    m10 = max(1, math.ceil(0.1 * d))
    grid = feature_grid(d)
    folds = StratifiedKFold(min(10, int(np.bincount(codes).min())), shuffle=True, random_state=seed)
    rows, fold_rows = [], []
    for f, (train, test) in enumerate(folds.split(xs, codes)):
        # FWELL: λ cross-validated inside the training part only (held-out logistic loss of the margins)
        found = core.fold_weights(x, codes, train, seed=seed)
        z = core.margins(x[train], codes[train])
        paper = core.solve_paper_gd(z, found.lam)
        private = {lam: core.solve_lbfgs(z, lam).w for lam in PRIVATE_LAMBDAS}
        fold_rows.append(
            {
                "fold": f,
                "n_train": len(train),
                "lambda": found.lam,
                "lbfgs_norm": np.linalg.norm(found.w),
                "paper_gd_norm": np.linalg.norm(paper.w),
                "lbfgs_objective": found.solution.objective,
                "paper_gd_objective": paper.objective,
                "lbfgs_gradient": found.solution.gradient_norm,
                "large_lambda_epsilon": core.large_lambda_epsilon(z),
                **{f"norm_lambda_{lam:g}": np.linalg.norm(w) for lam, w in private.items()},
            }
        )

        def score(ranked, m, clfs=tuple(CLASSIFIERS), **key):
            for clf in clfs:
                acc = fold_accuracy(xs, codes, train, test, ranked, m, clf, seed)
                rows.append({"dataset": name, "fold": f, "classifier": clf, "features": m, **key, "accuracy": acc})

        exact = list(core.ranking(found.w))
        score(exact, m10, curve="epsilon", method="FWELL", lam=found.lam, epsilon=np.inf, repeat=0)
        score(
            list(core.ranking(paper.w)),
            m10,
            curve="epsilon",
            method="FWELL (paper-gd)",
            lam=found.lam,
            epsilon=np.inf,
            repeat=0,
        )
        if by_accuracy:
            for clf, lam in accuracy_lambda(x, xs, codes, train, m10, seed).items():
                w = found.w if lam == found.lam else core.solve_lbfgs(z, lam).w
                score(
                    list(core.ranking(w)),
                    m10,
                    (clf,),
                    curve="epsilon",
                    method="FWELL (λ by accuracy)",
                    lam=lam,
                    epsilon=np.inf,
                    repeat=0,
                )
        for lam, w in private.items():
            score(
                list(core.ranking(w)),
                m10,
                curve="epsilon",
                method=f"FWELL λ={lam:g}",
                lam=lam,
                epsilon=np.inf,
                repeat=0,
            )
        for g in grid:
            score(exact, g, curve="features", method="FWELL", lam=found.lam, epsilon=np.inf, repeat=0)
        for r in range(repeats):
            shuffled = list(np.random.default_rng([seed, f, r, 7]).permutation(d))
            score(shuffled, m10, curve="epsilon", method="random", lam=np.nan, epsilon=0.0, repeat=r)
            for g in grid:
                score(shuffled, g, curve="features", method="random", lam=np.nan, epsilon=0.0, repeat=r)
            for j, (lam, w) in enumerate(private.items()):
                for i, eps in enumerate(epsilons):
                    source = core.SeededSource(np.random.default_rng([seed, f, r, i, j]))
                    noisy = core.private_weights(w, len(train), eps, lam, source)
                    score(
                        list(core.ranking(noisy)),
                        m10,
                        curve="epsilon",
                        method=f"Private FWELL λ={lam:g}",
                        lam=lam,
                        epsilon=eps,
                        repeat=r,
                    )
                source = core.SeededSource(np.random.default_rng([seed, f, r, 99, j]))
                noisy = list(core.ranking(core.private_weights(w, len(train), EPSILON_FEATURES, lam, source)))
                for g in grid:
                    score(
                        noisy,
                        g,
                        curve="features",
                        method=f"Private FWELL λ={lam:g}",
                        lam=lam,
                        epsilon=EPSILON_FEATURES,
                        repeat=r,
                    )
        print(f"  {name}: fold {f + 1} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    folds_frame = pd.DataFrame(fold_rows)
    lams = folds_frame["lambda"].value_counts().sort_index()
    info = {
        "dataset": name,
        "records": n,
        "features": d,
        "classes": len(np.unique(codes)),
        "lambda_in_folds": "; ".join(f"{lam:g} ×{c}" for lam, c in lams.items()),
        "top_10pct": m10,
        "repeats": repeats,
        "seconds": round(time.perf_counter() - started, 1),
        "lbfgs_objective": folds_frame["lbfgs_objective"].mean(),
        "paper_gd_objective": folds_frame["paper_gd_objective"].mean(),
        "lbfgs_gradient_max": folds_frame["lbfgs_gradient"].max(),
        "lbfgs_weight_norm": folds_frame["lbfgs_norm"].mean(),
        "paper_gd_weight_norm": folds_frame["paper_gd_norm"].mean(),
        # the large-λ limit of the ε at which E‖b‖ = ‖w‖: 4d/(n‖z̄‖), whatever λ
        "large_lambda_epsilon": folds_frame["large_lambda_epsilon"].mean(),
    }
    for lam in PRIVATE_LAMBDAS:  # E‖b‖ = d · 2/(nελ) equals ‖w_λ‖ at this ε
        info[f"epsilon_noise_equals_weights_lambda_{lam:g}"] = float(
            (2 * d / (folds_frame["n_train"] * lam * folds_frame[f"norm_lambda_{lam:g}"])).mean()
        )
    return pd.DataFrame(rows), info


# -- figures ------------------------------------------------------------------------------------------
def plot_epsilon(frame: pd.DataFrame, name: str, path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    data = frame[frame["curve"] == "epsilon"]
    for ax, (clf, title) in zip(axes, CLASSIFIERS.items()):
        sub = data[data["classifier"] == clf]
        for lam in PRIVATE_LAMBDAS:
            private = (
                sub[sub["method"] == f"Private FWELL λ={lam:g}"].groupby("epsilon")["accuracy"].agg(["mean", "std"])
            )
            xs = np.log10(private.index.to_numpy(dtype=float))
            ax.plot(xs, private["mean"], marker="o", ms=4, label=f"Private FWELL, λ = {lam:g} (fixed)")
            ax.fill_between(xs, private["mean"] - private["std"], private["mean"] + private["std"], alpha=0.15)
        for method, style, colour in (("FWELL", "--", "black"), ("random", ":", "grey")):
            level = sub[sub["method"] == method]["accuracy"].mean()
            label = "FWELL (λ tuned in each training fold)" if method == "FWELL" else "random 10 % of the features"
            ax.axhline(level, ls=style, color=colour, label=label)
        ax.set_title(f"{title} — {name}")
        ax.set_xlabel("log10 ε")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy (10-fold CV, top 10 % features)")
    axes[1].legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_features(frame: pd.DataFrame, name: str, path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    data = frame[frame["curve"] == "features"]
    curves = [("FWELL", "FWELL (λ tuned in each training fold)")]
    curves += [
        (f"Private FWELL λ={lam:g}", f"Private FWELL, ε = {EPSILON_FEATURES:g}, λ = {lam:g}") for lam in PRIVATE_LAMBDAS
    ]
    curves.append(("random", "random order"))
    for ax, (clf, title) in zip(axes, CLASSIFIERS.items()):
        sub = data[data["classifier"] == clf]
        for method, label in curves:
            curve = sub[sub["method"] == method].groupby("features")["accuracy"].mean()
            ax.plot(
                curve.index,
                curve.to_numpy(),
                marker="o",
                ms=3,
                label=label,
                ls=":" if method == "random" else "-",
                color="grey" if method == "random" else None,
            )
        ax.set_title(f"{title} — {name}")
        ax.set_xlabel("number of features")
        if curve.index.max() > 100:
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy (10-fold CV)")
    axes[1].legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summarise(frame: pd.DataFrame, info: dict) -> dict:
    eps = frame[frame["curve"] == "epsilon"]
    feats = frame[frame["curve"] == "features"]
    out = dict(info)
    for clf in CLASSIFIERS:
        sub = eps[eps["classifier"] == clf]
        for method in (
            "FWELL",
            "FWELL (paper-gd)",
            "FWELL (λ by accuracy)",
            "random",
            *(f"FWELL λ={lam:g}" for lam in PRIVATE_LAMBDAS),
        ):
            out[f"{clf} {method}"] = sub[sub["method"] == method]["accuracy"].mean()
        for lam in PRIVATE_LAMBDAS:
            private = sub[sub["method"] == f"Private FWELL λ={lam:g}"].groupby("epsilon")["accuracy"].mean()
            for e in (1.0, 1e-2, 1e-4, 1e-8):
                out[f"{clf} λ={lam:g} ε={e:g}"] = private.get(e, np.nan)
        # Figures 13–24: the mean gap to FWELL over the feature counts, at ε = 0.01
        fsub = feats[feats["classifier"] == clf]
        fwell = fsub[fsub["method"] == "FWELL"].groupby("features")["accuracy"].mean()
        for method in ("random", *(f"Private FWELL λ={lam:g}" for lam in PRIVATE_LAMBDAS)):
            curve = fsub[fsub["method"] == method].groupby("features")["accuracy"].mean()
            out[f"{clf} features gap {method}"] = float((fwell - curve).mean())
    return out


def markdown_tables(summary: pd.DataFrame) -> str:
    """The tables of docs/fwell.md from the summary."""
    order = [d for d in DATASETS if d in set(summary["dataset"])]
    rows = summary.set_index("dataset").loc[order]
    out = [
        "| dataset | classifier | FWELL, λ in fold (margin loss) | FWELL, λ in fold (accuracy) | random 10 % | "
        "Private λ = 1, ε = 1 | ε = 0.01 | ε = 1e-4 | ε = 1e-8 | Private λ = 0.01, ε = 1 | ε = 0.01 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows.iterrows():
        for clf, short in CLASSIFIERS.items():
            cells = [
                r[f"{clf} FWELL"],
                r.get(f"{clf} FWELL (λ by accuracy)", np.nan),
                r[f"{clf} random"],
                *(r[f"{clf} λ=1 ε={e:g}"] for e in (1.0, 1e-2, 1e-4, 1e-8)),
                *(r[f"{clf} λ=0.01 ε={e:g}"] for e in (1.0, 1e-2)),
            ]
            out.append(f"| {name} | {short} | " + " | ".join("–" if pd.isna(c) else f"{c:.3f}" for c in cells) + " |")
    out += [
        "",
        "| dataset | n × d | λ chosen in the 10 training folds | ‖w‖ (that λ) | ε where E‖b‖ = ‖w‖, λ = 0.01 | "
        "λ = 1 | large-λ limit 4d/(n‖z̄‖) | draws | seconds |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows.iterrows():
        out.append(
            f"| {name} | {int(r['records'])} × {int(r['features'])} | {r['lambda_in_folds']} | "
            f"{r['lbfgs_weight_norm']:.1f} | {r['epsilon_noise_equals_weights_lambda_0.01']:.3g} | "
            f"{r['epsilon_noise_equals_weights_lambda_1']:.3g} | **{r['large_lambda_epsilon']:.3g}** | "
            f"{int(r['repeats'])} | {r['seconds']:.0f} |"
        )
    out += [
        "",
        "| dataset | classifier | FWELL − random | FWELL − Private λ = 1 | FWELL − Private λ = 0.01 |",
        "|---|---|---:|---:|---:|",
    ]
    for name, r in rows.iterrows():
        for clf, short in CLASSIFIERS.items():
            out.append(
                f"| {name} | {short} | {r[f'{clf} features gap random']:+.3f} | "
                f"{r[f'{clf} features gap Private FWELL λ=1']:+.3f} | "
                f"{r[f'{clf} features gap Private FWELL λ=0.01']:+.3f} |"
            )
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated, from: " + ", ".join(DATASETS))
    p.add_argument("--repeats", type=int, default=5, help="noise draws per fold and ε")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--no-accuracy-lambda",
        action="store_true",
        help="skip FWELL with λ chosen by inner-CV accuracy (a margin search per inner fold: slow on BASEHOCK)",
    )
    p.add_argument("--tables", action="store_true", help="print docs/fwell.md's tables from the summary and stop")
    args = p.parse_args(argv)
    if args.tables:
        print(markdown_tables(pd.read_csv(OUT / "results" / "summary.csv")))
        return 0
    (OUT / "results").mkdir(parents=True, exist_ok=True)
    (OUT / "figures").mkdir(parents=True, exist_ok=True)
    summary_path = OUT / "results" / "summary.csv"
    for name in [s.strip() for s in args.datasets.split(",") if s.strip()]:
        print(f"{name} …", file=sys.stderr)
        frame, info = run_dataset(name, args.repeats, args.seed, EPSILONS, not args.no_accuracy_lambda)
        frame.to_csv(OUT / "results" / f"{name}.csv", index=False)
        plot_epsilon(frame, name, OUT / "figures" / f"{name}_epsilon.png")
        plot_features(frame, name, OUT / "figures" / f"{name}_features.png")
        row = summarise(frame, info)
        summary = pd.read_csv(summary_path) if summary_path.exists() else pd.DataFrame()  # another run may have written
        if not summary.empty:
            summary = summary[summary["dataset"] != name]
        summary = pd.concat([summary, pd.DataFrame([row])], ignore_index=True)
        summary.to_csv(summary_path, index=False)
        print(pd.DataFrame([row]).T.to_string(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
