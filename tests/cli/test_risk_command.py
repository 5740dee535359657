"""``veil risk``: per-record figures in the table's row order, agreeing with a brute-force count;
bad input refused in one line; an export folder read with its manifest's roles; the household id
withheld from releases."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.desktop.launcher import wants_desktop


def survey_csv(tmp_path, seed=0, n=30):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east"], n),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.choice([20, 30, 40, 50], n),
            "w": rng.integers(1, 40, n),
            "hh": rng.integers(0, 8, n),
            "income": rng.integers(100, 900, n),
        }
    )
    frame.loc[rng.random(n) < 0.1, "sex"] = None
    path = tmp_path / f"survey{seed}.csv"
    frame.to_csv(path, index=False)
    return path, frame


def brute(frame, quasi):
    rows = frame[quasi].to_numpy(dtype=object)
    fk, Fk = [], []
    for row in rows:
        mates = [
            j for j, other in enumerate(rows) if all(pd.isna(a) or pd.isna(b) or a == b for a, b in zip(row, other))
        ]
        fk.append(len(mates))
        Fk.append(float(frame["w"].to_numpy()[mates].sum()))
    return fk, Fk


def test_risk_is_a_command_not_the_desktop():
    assert not wants_desktop(["risk", "--help"])


@pytest.mark.parametrize("seed", [0, 1])
def test_json_records_keep_the_row_order(veil, tmp_path, seed):
    path, frame = survey_csv(tmp_path, seed)
    quasi = ["region", "sex", "age"]
    out = veil("risk", path, "--quasi", ",".join(quasi), "--weight", "w", "--household", "hh", "--json")
    assert out.code == 0, out.err
    body = json.loads(out.out)
    fk, Fk = brute(frame, quasi)
    assert body["records"]["fk"] == fk
    assert body["records"]["Fk"] == Fk
    risk = np.array(body["records"]["risk"])
    for i in range(len(frame)):
        members = (frame["hh"] == frame["hh"][i]).to_numpy()
        assert body["records"]["household_risk"][i] == pytest.approx(1 - np.prod(1 - risk[members]))
    assert body["summary"]["expected_reidentifications"] == pytest.approx(risk.sum())
    assert len(body["ranking"]) == 7 and len(body["records"]["suda_score"]) == len(frame)
    # the same records in another order give the same figures in that order
    order = np.random.default_rng(9).permutation(len(frame))
    shuffled = tmp_path / "shuffled.csv"
    frame.iloc[order].to_csv(shuffled, index=False)
    again = json.loads(
        veil("risk", shuffled, "--quasi", ",".join(quasi), "--weight", "w", "--household", "hh", "--json").out
    )
    for key in ("fk", "Fk", "risk", "household_risk", "suda_score", "dis_score"):
        assert again["records"][key] == pytest.approx(np.array(body["records"][key])[order].tolist())


def test_blanks_as_their_own_value(veil, tmp_path):
    path, frame = survey_csv(tmp_path)
    body = json.loads(veil("risk", path, "--quasi", "region,sex", "--blanks", "value", "--json").out)
    keys = frame[["region", "sex"]].fillna("<blank>").apply(tuple, axis=1)
    assert body["records"]["fk"] == keys.map(keys.value_counts()).tolist()
    assert body["summary"]["blanks"] == "a blank is a value of its own"
    assert body["records"]["risk"] == pytest.approx((1 / np.array(body["records"]["fk"])).tolist())


def test_bad_input_is_one_line(veil, tmp_path):
    path, _ = survey_csv(tmp_path)
    out = veil("risk", path)
    assert out.code == 2 and "quasi-identifiers" in out.err and out.err.count("\n") == 1
    out = veil("risk", path, "--quasi", "region", "--weight", "sex")
    assert out.code == 2 and "at least 1" in out.err


def test_a_large_ranking_needs_a_size(veil, tmp_path):
    frame = pd.DataFrame({f"c{j}": [0, 1] for j in range(14)})
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False)
    out = veil("risk", path, "--quasi", ",".join(frame.columns), "--no-suda")
    assert out.code == 2 and "16,383 combinations" in out.err
    out = veil("risk", path, "--quasi", ",".join(frame.columns), "--no-suda", "--max-size", "2", "--json")
    assert out.code == 0 and len(json.loads(out.out)["ranking"]) == 14 + 91


def test_export_folder_withholds_the_household(veil, tmp_path):
    path, frame = survey_csv(tmp_path)
    out_dir = tmp_path / "out"
    done = veil(
        "run",
        "--data",
        path,
        "--quasi",
        "region,age",
        "--weight",
        "w",
        "--household",
        "hh",
        "--method",
        "mondrian",
        "--model",
        "k-anonymity:k=2",
        "--out",
        out_dir,
        "--no-report",
    )
    assert done.code == 0, done.err
    released = pd.read_csv(out_dir / "release.csv")
    assert "hh" not in released.columns and "w" in released.columns
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["removed_identifiers"] == ["hh"]
    roles = {e["name"]: e["role"] for e in manifest["input"]["schema"]}
    assert roles["hh"] == "household" and roles["w"] == "weight"
    body = json.loads(veil("risk", out_dir, "--json").out)
    assert body["summary"]["weight"] == "w" and body["summary"]["household"] is None
    assert "household id was not released" in body["summary"]["note"]
    assert min(body["records"]["fk"]) >= 2  # 2-anonymity holds on the release's keys


def _household_brute(frame, quasi):
    """Each record's household risk from the definitions: fk, Fk by a blank or * matching any value,
    the individual risk of each, then 1 − Π (1 − r) over the household's members."""
    keys = frame[quasi].mask(frame[quasi].astype(str) == "*")
    fk, Fk = brute(keys.assign(w=frame["w"]), quasi)
    risk = np.array([_indiv(f, F) for f, F in zip(fk, Fk)])
    members = frame["hh"].to_numpy()
    return np.array([1 - np.prod(1 - risk[members == h]) for h in members])


def test_household_risk_is_the_released_households_in_the_metric_the_report_and_risk(veil, tmp_path):
    """A release holding the household id (the user agreed): the household-risk metric of the run, the
    report's figure after and `veil risk` on the export folder are one figure, worked here from the
    written file by the definitions. Without the agreement the release holds no household id and
    none of the three has a household risk."""
    path, frame = survey_csv(tmp_path, 4, n=40)
    run = ["run", "--data", path, "--quasi", "region,age", "--weight", "w", "--household", "hh",
           "--method", "global-recoding:suppression=0.3", "--model", "k-anonymity:k=3",
           "--metrics", "household-risk", "--no-report"]  # fmt: skip
    agreed, withheld = tmp_path / "agreed", tmp_path / "withheld"
    assert veil(*run, "--release-household", "--out", agreed).code == 0
    assert veil(*run, "--out", withheld).code == 0

    written = pd.read_csv(agreed / "release.csv", keep_default_na=False, na_values=[""])
    manifest = json.loads((agreed / "manifest.json").read_text())
    assert manifest["roles"]["household"] == "hh" and "hh" not in manifest["removed_identifiers"]
    expected = _household_brute(written, ["region", "age"]).mean()
    body = json.loads(veil("risk", agreed, "--no-suda", "--json").out)
    assert body["summary"]["household"] == "hh"
    assert body["summary"]["household_global_risk"] == pytest.approx(expected)
    assert manifest["risk"]["sample"]["after"]["household_global_risk"] == pytest.approx(expected)
    assert manifest["metrics"]["household-risk"] == pytest.approx(expected)

    manifest = json.loads((withheld / "manifest.json").read_text())
    assert "household" not in manifest["roles"] and manifest["removed_identifiers"] == ["hh"]
    assert "hh" not in pd.read_csv(withheld / "release.csv").columns
    body = json.loads(veil("risk", withheld, "--no-suda", "--json").out)
    assert body["summary"]["household_global_risk"] is None and "not released" in body["summary"]["note"]
    assert manifest["risk"]["sample"]["after"]["household_global_risk"] is None
    assert manifest["metrics"]["household-risk"] is None
    assert manifest["risk"]["sample"]["before"]["household_global_risk"] is not None  # the input holds them


def test_population_uniques_under_each_estimator(veil, tmp_path):
    """The sampling fraction is records / Σ weights unless given; Zayatz's estimate is worked from the
    class sizes here (hypergeometric terms); at fraction 1 the sample is the population; without
    weights or a fraction there is no estimate."""
    from scipy import stats

    path, frame = survey_csv(tmp_path, 2, n=40)
    quasi = ["region", "age"]
    body = json.loads(veil("risk", path, "--quasi", ",".join(quasi), "--weight", "w", "--no-suda", "--json").out)
    unique = body["summary"]["population_uniqueness"]
    n, big = len(frame), float(frame["w"].sum())
    assert unique["sampling_fraction"] == pytest.approx(n / big)
    sizes = frame.groupby(quasi).size().to_numpy()
    population = round(n / (n / big))
    h = {j: stats.hypergeom.pmf(1, population, j, n) for j in set(sizes)}
    f1 = int((sizes == 1).sum())
    zayatz = f1 * (f1 * h[1] / sum(h[j] for j in sizes)) / (n / big) / population
    got = {e["estimator"]: e for e in unique["estimates"]}
    assert set(got) == {"pitman", "zayatz", "snb", "dankar"}
    assert got["zayatz"]["share"] == pytest.approx(zayatz)
    assert got["zayatz"]["uniques"] == pytest.approx(zayatz * population)
    assert got["dankar"]["share"] == pytest.approx(got[got["dankar"]["used"]]["share"])
    whole = json.loads(
        veil("risk", path, "--quasi", ",".join(quasi), "--sample-fraction", "1", "--no-suda", "--json").out
    )
    assert whole["summary"]["population_uniqueness"]["estimates"][0]["share"] == pytest.approx(f1 / n)
    bare = json.loads(veil("risk", path, "--quasi", ",".join(quasi), "--no-suda", "--json").out)
    assert bare["summary"]["population_uniqueness"]["sampling_fraction"] is None
    text = veil("risk", path, "--quasi", ",".join(quasi), "--weight", "w", "--no-suda").out
    assert "population uniques (sampling fraction" in text and "chose" in text
    assert veil("risk", path, "--quasi", "region", "--sample-fraction", "0").code == 2


def _indiv(f, F):
    """sdcMicro's indivRisk (approx) of a key seen f times standing for F people."""
    p = f / F
    if f == F:
        return 1 / f
    if f == 1:
        return p / (1 - p) * np.log(1 / p)
    if f == 2:
        return p / (1 - p) - (p / (1 - p)) ** 2 * np.log(1 / p)
    return p / (f - (1 - p))


def test_the_manifest_and_report_carry_survey_risk_before_and_after(veil, tmp_path):
    """With a weight and a household column marked (and released), the manifest records the survey risk
    figures before (worked here from the input) and after (from the written file, * matching any
    value); the household ids travel with the records through the shuffle, so shuffled and unshuffled
    exports agree; the report shows them."""
    from veil.engine import make_registry
    from veil.engine.release.report import build_document

    path, frame = survey_csv(tmp_path, 3, n=40)
    frame = frame.assign(sex=frame["sex"].fillna("F"))
    frame.to_csv(path, index=False)
    manifests = []
    for shuffle in ([], ["--no-shuffle"]):
        out_dir = tmp_path / f"out{len(manifests)}"
        args = ["--quasi", "region,age", "--weight", "w", "--household", "hh", "--release-household", "--method"]
        done = veil(
            "run", "--data", path, *args, "global-recoding:suppression=0.3", "--model", "individual-risk:threshold=0.1",
            "--out", out_dir, "--no-report", *shuffle,
        )  # fmt: skip
        assert done.code == 0, done.err
        manifests.append(json.loads((out_dir / "manifest.json").read_text()))
    sample = manifests[0]["risk"]["sample"]
    assert sample["weight"] == "w" and sample["household"] == "hh"
    keys = frame[["region", "age"]].apply(tuple, axis=1)
    fk, Fk = keys.map(keys.value_counts()), frame.groupby(["region", "age"])["w"].transform("sum")
    risk = np.array([_indiv(f, F) for f, F in zip(fk, Fk)])
    before = sample["before"]
    assert before["global_risk"] == pytest.approx(risk.mean())
    assert before["expected_reidentifications"] == pytest.approx(risk.sum())
    assert before["highest_risk"] == pytest.approx(risk.max())
    assert before["sample_uniques"] == int((fk == 1).sum())
    household = frame["hh"].map(pd.Series(np.log1p(-risk)).groupby(frame["hh"]).sum())
    assert before["household_global_risk"] == pytest.approx((1 - np.exp(household)).mean())
    after = sample["after"]
    assert after["highest_risk"] <= 0.1 + 1e-12  # the model held; a * matching any value only lowers the risk
    assert after["expected_reidentifications"] < before["expected_reidentifications"]
    again = manifests[1]["risk"]["sample"]["after"]
    for key in (
        "global_risk",
        "expected_reidentifications",
        "household_global_risk",
        "household_expected_reidentifications",
    ):
        assert again[key] == pytest.approx(after[key])
    doc = build_document(make_registry(), manifests[0])
    section = next(s for s in doc.sections if s.heading.startswith("Risk on survey microdata"))
    cells = [c for b in section.blocks if b.kind == "table" for row in b.content for c in row[1:]]
    assert {c.key for c in cells} >= {"risk.sample.after.household_global_risk", "risk.sample.before.global_risk"}
    # without a weight or household column, no survey figures: the prosecutor risk says it all
    plain = tmp_path / "plain"
    done = veil("run", "--data", path, "--quasi", "region,age", "--method", "global-recoding:suppression=0.3",
                "--model", "k-anonymity:k=2", "--out", plain, "--no-report")  # fmt: skip
    assert done.code == 0, done.err
    assert "sample" not in json.loads((plain / "manifest.json").read_text())["risk"]
