"""Compare Veil's perturbation with sdcMicro's own definitions (docs/reference.md#perturbation).

sdcMicro is not packaged for Debian, so its functions are read from a checkout of its source
(https://github.com/sdcTools/sdcMicro) at run time and evaluated by R (`apt-get install r-base-core
r-cran-mass`): pramWORK's invariant transition construction, dUtilityWORK (IL1s, eigen) and dRiskWORK.
Nothing of sdcMicro is copied here. Usage:

    .venv/bin/python scripts/compare_sdcmicro_perturbation.py --sdcmicro PATH_TO_SDCMICRO_CHECKOUT

It prints, on sdcMicro's own data (testdata's `water`, Tarragona's 13 columns): the largest difference
between sdcMicro's invariant PRAM matrix and Veil's from the same diagonal, and sdcMicro's IL1s, eigen
and dRisk beside Veil's il1s, eigen-loss and interval-disclosure on one noisy release, and the
variance growth of both tools' correlated and additive noise.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import Context, Table
from veil.plugins.perturbation import _measures as measures
from veil.plugins.perturbation.noise import add_noise
from veil.plugins.perturbation.pram import invariant_matrix

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "sdcmicro"

R_SCRIPT = r"""
args <- commandArgs(TRUE)
src <- args[1]; out <- args[2]
read_source <- function(file) {
  path <- file.path(src, "R", file)
  if (file.exists(path)) readLines(path) else system(paste0("git -C ", src, " show HEAD:R/", file), intern = TRUE)
}
defs <- function(file, name) {
  for (e in parse(text = read_source(file)))
    if (is.call(e) && identical(as.character(e[[1]]), "<-") && identical(as.character(e[[2]]), name))
      eval(e, globalenv())
}
defs("pram.R", "pramWORK"); defs("dUtility.R", "dUtilityWORK"); defs("dRisk.R", "dRiskWORK")
eval(body(pramWORK)[[2]])  # its first statement defines calcTransitionMatrix
td <- read.csv(args[3])
x <- factor(td$water)
set.seed(1); pds <- stats::runif(length(levels(x)), min = 0.8, max = 1)
set.seed(1); Rs <- calcTransitionMatrix(x, pd = 0.8, alpha = 0.5)
write.csv(data.frame(level = levels(x), pd = pds), file.path(out, "pds.csv"), row.names = FALSE)
write.csv(Rs, file.path(out, "Rs.csv"))
orig <- read.csv(args[4]); pert <- read.csv(args[5])
n <- nrow(orig); q <- ncol(orig)
set.seed(2)
xm <- as.matrix(orig) + MASS::mvrnorm(n, rep(0, q), Sigma = 25 / 100 * cov(orig))
xa <- apply(as.matrix(orig), 2, function(v) v + stats::rnorm(n, 0, 50 / 100 * sd(v)))
write.csv(data.frame(
  il1s_sum = dUtilityWORK(orig, pert, method = "IL1s"),
  eigen = dUtilityWORK(orig, pert, method = "eigen"),
  drisk_005 = dRiskWORK(orig, pert, k = 0.05),
  drisk_1 = dRiskWORK(orig, pert, k = 1),
  correlated_25 = mean(diag(cov(xm)) / diag(cov(orig))),
  additive_50 = mean(diag(cov(xa)) / diag(cov(orig)))
), file.path(out, "measures.csv"), row.names = FALSE)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdcmicro", required=True, help="a checkout (or git directory) of sdcTools/sdcMicro")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        tarragona = pd.read_csv(DATA / "Tarragona.csv")
        noisy = add_noise(tarragona.to_numpy(float), 0.5, "correlated", Context(0).rng)
        pd.DataFrame(noisy, columns=tarragona.columns).to_csv(out / "noisy.csv", index=False)
        (out / "cmp.R").write_text(R_SCRIPT)
        subprocess.run(
            [
                "Rscript",
                str(out / "cmp.R"),
                args.sdcmicro,
                str(out),
                str(DATA / "testdata.csv"),
                str(DATA / "Tarragona.csv"),
                str(out / "noisy.csv"),
            ],
            check=True,
        )
        water = Table.from_frame(pd.read_csv(DATA / "testdata.csv")).frame["water"]
        levels = sorted(water.unique())
        shares = water.value_counts().reindex(levels).to_numpy() / len(water)
        diagonal = pd.read_csv(out / "pds.csv")["pd"].to_numpy()
        p = np.repeat(((1 - diagonal) / (len(levels) - 1))[:, None], len(levels), axis=1)
        np.fill_diagonal(p, diagonal)
        theirs = pd.read_csv(out / "Rs.csv", index_col=0).to_numpy()
        print(f"PRAM (testdata water, {len(levels)} categories, pd=0.8, alpha=0.5): ", end="")
        print(f"max |Veil − sdcMicro| = {np.abs(invariant_matrix(p, shares, 0.5) - theirs).max():.1e}")
        r = pd.read_csv(out / "measures.csv").iloc[0]
        x, y = tarragona.to_numpy(float), noisy
        n, q = x.shape
        print(f"IL1s: sdcMicro {r['il1s_sum']:.6g} (a sum) / (n·p) = {r['il1s_sum'] / (n * q):.6f}; ", end="")
        print(f"Veil {measures.il1s(x, y):.6f}")
        print(f"eigen: sdcMicro {r['eigen']:.6f}; Veil {measures.eigen_loss(x, y):.6f}")
        print(f"dRisk k=0.05: sdcMicro {r['drisk_005']:.6f}; Veil {measures.interval_disclosure(x, y, 0.05):.6f}")
        print(f"dRisk k=1: sdcMicro {r['drisk_1']:.6f}; Veil {measures.interval_disclosure(x, y, 1.0):.6f}")
        veil_correlated = np.mean(np.var(y, axis=0, ddof=1) / np.var(x, axis=0, ddof=1))
        additive = add_noise(x, 0.5, "additive", Context(0).rng)
        veil_additive = np.mean(np.var(additive, axis=0, ddof=1) / np.var(x, axis=0, ddof=1))
        print(f"variance growth, correlated (sdcMicro noise=25, Veil level=0.5): {r['correlated_25']:.4f} and ", end="")
        print(f"{veil_correlated:.4f} (both 1.25 in expectation)")
        print(f"variance growth, additive (sdcMicro noise=50, Veil level=0.5): {r['additive_50']:.4f} and ", end="")
        print(f"{veil_additive:.4f} (both 1.25 in expectation)")


if __name__ == "__main__":
    main()
