"""Run sdcMicro's risk measures beside Veil's on sdcMicro's own data (docs/reference.md#risk-on-sample-microdata).

sdcMicro is not packaged for Debian; it is installed from a checkout of its source
(https://github.com/sdcTools/sdcMicro) into a library folder of its own, its Imports from Debian's
``r-cran-*`` packages (docs/reference.md gives the commands). Nothing of sdcMicro is copied here.
Usage:

    .venv/bin/python scripts/compare_sdcmicro_risk.py --sdcmicro R_LIBRARY_WITH_SDCMICRO

For each case it runs, in one R process, sdcMicro's ``freqCalc`` (fk, Fk), ``indivRisk`` (approx and
exact), ``measure_risk`` (global risk, expected re-identifications, household risk) and ``suda2``
(SUDA and DIS scores, contributions per record, attribute and value), then Veil's
``sample_risk`` and ``suda`` on the same file, and prints how many records agree and the largest
difference. The cases: testdata (sdcMicro's household survey, keys urbrur … sex, weights
``sampling_weight``, households ``ori_hid``) as it is; the same with 3 % of its key cells blanked
(seed 0); the same with a further 5 records blank on every key; free1 (varying weights ``WEIGHT``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from veil.engine import sample_risk, suda

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "sdcmicro"
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
FREE1_KEYS = ["REGION", "SEX", "AGE", "MARSTAT", "KINDPERS", "ETNI"]

R_SCRIPT = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(TRUE)
data <- read.csv(args[1]); out <- args[2]
keys <- strsplit(args[3], ",")[[1]]; w <- args[4]; hid <- if (args[5] == "") NULL else args[5]
f <- freqCalc(data, keyVars = keys, w = w)
approx <- indivRisk(f, method = "approx")$rk
exact <- suppressWarnings(indivRisk(f, method = "exact")$rk)
m <- measure_risk(data, keyVars = keys, w = w, hid = hid)
s <- suppressWarnings(suda2(data, variables = keys, DisFraction = 0.01))
records <- data.frame(fk = f$fk, Fk = f$Fk, approx = approx, exact = exact, risk = m$Res[, "risk"],
                      score = s$score, dis = s$disScore, s$contributionPercent)
if (!is.null(hid)) records$household <- m$Res[, "hier_risk"]
write.csv(records, file.path(out, "records.csv"), row.names = FALSE)
write.csv(data.frame(global_risk = m$global_risk, global_risk_ER = m$global_risk_ER,
                     hier_risk = if (is.null(hid)) NA else m$hier_risk,
                     hier_risk_ER = if (is.null(hid)) NA else m$hier_risk_ER),
          file.path(out, "global.csv"), row.names = FALSE)
write.csv(s$attribute_contributions, file.path(out, "attributes.csv"), row.names = FALSE)
write.csv(s$attribute_level_contributions, file.path(out, "levels.csv"), row.names = FALSE)
"""


def cases() -> list[tuple[str, pd.DataFrame, list[str], str, str | None]]:
    testdata = pd.read_csv(DATA / "testdata.csv")
    blanked = testdata.copy()
    rng = np.random.default_rng(0)
    for key in TESTDATA_KEYS:
        blanked[key] = blanked[key].astype(float).mask(rng.random(len(blanked)) < 0.03)
    complete_blank = blanked[TESTDATA_KEYS].isna().all(axis=1)
    blanked.loc[complete_blank, TESTDATA_KEYS[0]] = testdata.loc[complete_blank, TESTDATA_KEYS[0]]
    all_blank = blanked.copy()
    all_blank.loc[rng.choice(len(all_blank), 5, replace=False), TESTDATA_KEYS] = np.nan
    free1 = pd.read_csv(DATA / "free1.csv")
    return [
        ("testdata", testdata, TESTDATA_KEYS, "sampling_weight", "ori_hid"),
        ("testdata, 3 % of key cells blank", blanked, TESTDATA_KEYS, "sampling_weight", "ori_hid"),
        (
            "testdata, 3 % blank and 5 records blank on every key",
            all_blank,
            TESTDATA_KEYS,
            "sampling_weight",
            "ori_hid",
        ),
        ("free1 (varying weights)", free1, FREE1_KEYS, "WEIGHT", None),
    ]


def run_sdcmicro(library: str, frame: pd.DataFrame, keys: list[str], weight: str, household: str | None, out: Path):
    frame.to_csv(out / "data.csv", index=False)
    (out / "risk.R").write_text(R_SCRIPT)
    env = {**os.environ, "R_LIBS": library}
    command = ["Rscript", str(out / "risk.R"), str(out / "data.csv"), str(out), ",".join(keys), weight, household or ""]
    subprocess.run(command, check=True, env=env)
    return (
        pd.read_csv(out / "records.csv"),
        pd.read_csv(out / "global.csv").iloc[0],
        pd.read_csv(out / "attributes.csv"),
        pd.read_csv(out / "levels.csv"),
    )


def agreement(name: str, ours: np.ndarray, theirs: np.ndarray, rtol: float = 1e-9) -> str:
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    finite = np.isfinite(theirs)
    equal = np.isclose(ours[finite], theirs[finite], rtol=rtol, atol=1e-12)
    gap = np.abs(ours[finite] - theirs[finite]).max(initial=0.0)
    text = f"{name}: {equal.sum():,} of {finite.sum():,} records agree (largest difference {gap:.2e})"
    if (~finite).any():
        text += f"; sdcMicro gives no finite value for {(~finite).sum():,}"
    return text


def compare(library: str, label: str, frame, keys, weight, household) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        records, totals, attributes, levels = run_sdcmicro(library, frame, keys, weight, household, Path(tmp))
    print(f"\n## {label}: {len(frame):,} records, keys {', '.join(keys)}, weight {weight}", end="")
    print(f", households {household}" if household else "")
    blank = frame[keys].isna()
    print(f"blank key cells {int(blank.to_numpy().sum()):,}; records blank on every key {int(blank.all(axis=1).sum())}")
    approx = sample_risk(frame, keys, weight=weight, household=household, method="approx")
    exact = sample_risk(frame, keys, weight=weight, method="exact")
    fk_equal = approx.fk == records["fk"].to_numpy()
    print(agreement("fk", approx.fk, records["fk"]))
    print(agreement("Fk", approx.Fk, records["Fk"]))
    if not fk_equal.all():
        where = np.flatnonzero(~fk_equal)
        gaps = (approx.fk - records["fk"].to_numpy())[where]
        print(f"  fk differs on {len(where):,} records, Veil − sdcMicro from {gaps.min():g} to {gaps.max():g}")
        same = fk_equal & (approx.Fk == records["Fk"].to_numpy())
        print("  " + agreement("approx risk where fk and Fk agree", approx.risk[same], records["approx"][same]))
    print(agreement("individual risk, approx", approx.risk, records["approx"]))
    print(agreement("individual risk, exact", exact.risk, records["exact"], rtol=1e-7))
    print(agreement("measure_risk's risk (approx)", approx.risk, records["risk"]))
    print(
        f"global risk: sdcMicro {totals['global_risk']:.6f}, Veil {approx.global_risk:.6f}; "
        f"expected re-identifications: sdcMicro {totals['global_risk_ER']:.4f}, "
        f"Veil {approx.expected_reidentifications:.4f}"
    )
    if household:
        print(agreement("household risk", approx.household, records["household"]))
        print(
            f"household risk: sdcMicro {totals['hier_risk']:.6f} ({totals['hier_risk_ER']:.4f} expected), "
            f"Veil {approx.household_global:.6f} ({approx.household_expected:.4f} expected)"
        )
    found = suda(frame, keys, dis_fraction=0.01)
    print(agreement("SUDA score", found.score, records["score"]))
    print(agreement("DIS score", found.dis, records["dis"], rtol=1e-6))
    ours = found.contribution
    theirs = records[[f"{k}_contribution" for k in keys]].to_numpy()
    gap = np.abs(ours - theirs).max()
    print(
        f"record contributions: {np.isclose(ours, theirs, atol=1e-9).all(axis=1).sum():,} of {len(frame):,} "
        f"records agree (largest difference {gap:.2e})"
    )
    attr = attributes.set_index("variable")["contribution"]
    gap = max(abs(found.attribute_contribution[k] - attr[k]) for k in keys)
    print(
        "attribute contributions (sdcMicro / Veil, %): "
        + "; ".join(f"{k} {attr[k]:.2f} / {found.attribute_contribution[k]:.2f}" for k in keys)
        + f" (largest difference {gap:.1e})"
    )
    level_gap, level_count = 0.0, 0
    for row in levels.itertuples():
        ours_value = found.value_contribution[row.variable].get(row.attribute)
        theirs_value = row.contribution
        if ours_value is None:
            ours_value = 0.0
        if np.isnan(theirs_value):
            theirs_value = 0.0
        level_gap = max(level_gap, abs(ours_value - theirs_value))
        level_count += 1
    print(f"value contributions: {level_count} values, largest difference {level_gap:.1e} points")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdcmicro", required=True, help="an R library folder holding an installed sdcMicro")
    args = parser.parse_args()
    for case in cases():
        compare(args.sdcmicro, *case)


if __name__ == "__main__":
    main()
