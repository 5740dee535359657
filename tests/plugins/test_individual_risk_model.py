"""The individual-risk privacy model (docs/reference.md#individual-risk-model): every group's
individual risk from its sample frequency fk and its sum of survey weights Fk, as sdcMicro's indivRisk
computes it, is at most the threshold. Global recoding's optimum under it is an exhaustive search's
on small random weighted tables; the written release's verdict is recomputed from the file alone; the
per-record values are sdcMicro's on its own test sample; merging groups never raises the risk (the
monotonicity the search prunes by)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from veil.cli import main
from veil.engine import (
    BadInput,
    GroupView,
    Node,
    PluginCall,
    Release,
    Role,
    RunSpec,
    Table,
    bind_models,
    execute,
    make_registry,
    view_of_release,
)

from test_global_recoding import random_table

REGISTRY = make_registry()
QIS = ["town", "age", "job"]


def risk_by_hand(f: float, F: float) -> float:
    """sdcMicro's indivRisk (approx) of a key seen f times standing for F people."""
    if f == F:
        return 1 / f
    p = f / F
    if f == 1:
        return p / (1 - p) * math.log(1 / p)
    if f == 2:
        return p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
    return p / (f - (1 - p))


def weighted_table(seed: int) -> Table:
    table = random_table(seed)
    rng = np.random.default_rng(1000 + seed)
    weights = np.where(rng.random(table.n_rows) < 0.2, 1.0, rng.uniform(1, 40, table.n_rows).round(1))
    frame = table.frame.assign(w=weights)
    roles = {c: table.schema[c].role for c in table.schema.names} | {"w": Role.WEIGHT}
    out = Table.from_frame(frame, roles=roles)
    for c in ("town", "job", "age"):
        if c in table.attached_hierarchies():
            out = out.with_hierarchy(c, table.hierarchy(c))
    return out


def oracle(table: Table, threshold: float, suppression: float) -> dict:
    """Every transformation's loss and suppressed records (None: no solution), from the definitions:
    the records regrouped by their generalised labels, each class's risk from its size and sum of
    weights, the classes above the threshold suppressed while they are at most the limit."""
    hier = {c: table.hierarchy(c) for c in QIS}
    frame = table.frame
    n, limit = len(frame), math.floor(suppression * len(frame) + 1e-9)
    label, under = {}, {}
    for c in QIS:
        h = hier[c]
        for level in range(h.height + 1):
            text = h.generalise_series(frame[c], level)
            label[c, level] = np.where(text.to_numpy() == "*", -1, pd.factorize(text)[0])
            under[c, level] = text.map(lambda x: h.leaf_count(Node(level, x))).to_numpy()
    weights = frame["w"].to_numpy()
    out = {}
    for levels in itertools.product(*(range(hier[c].height + 1) for c in QIS)):
        keys = np.column_stack([label[c, l] for c, l in zip(QIS, levels)])
        _, cls = np.unique(keys, axis=0, return_inverse=True)
        cls = cls.ravel()
        fk, Fk = np.bincount(cls), np.bincount(cls, weights=weights)
        failing = np.array([risk_by_hand(f, F) > threshold for f, F in zip(fk, Fk)])[cls]
        if failing.sum() > limit:
            out[levels] = None
            continue
        star = failing | (keys == -1).all(axis=1)
        loss = 0.0
        for c, level in zip(QIS, levels):
            leaves = len(hier[c].leaves)
            region = np.where(star, leaves, under[c, level])
            loss += float(((region - 1) / (leaves - 1)).sum()) if leaves > 1 else 0.0
        out[levels] = {"loss": loss / (n * len(QIS)), "suppressed": int(failing.sum())}
    return out


def best(results: dict):
    """(loss, levels) of the least loss, ties to the lower node, then to smaller levels."""
    found = None
    for levels, r in results.items():
        if r is None:
            continue
        key = (r["loss"], sum(levels), levels)
        if found is None or key[0] < found[0] - 1e-12 or (abs(key[0] - found[0]) <= 1e-12 and key[1:] < found[1:]):
            found = key
    return found


def run(table, model: str, suppression: float, method: str = "global-recoding", **params):
    spec = RunSpec(
        PluginCall(method, {"suppression": suppression, **params} if method == "global-recoding" else params),
        models=[PluginCall.parse(model)],
    )
    return execute(REGISTRY, table, spec)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("threshold, suppression", [(0.05, 0.0), (0.05, 0.15), (0.12, 0.1)])
def test_global_recoding_finds_the_exhaustive_optimum(seed, threshold, suppression):
    table = weighted_table(seed)
    results = oracle(table, threshold, suppression)
    want = best(results)
    model = f"individual-risk:threshold={threshold}"
    if want is None:
        with pytest.raises(BadInput, match="no transformation satisfies"):
            run(table, model, suppression)
        return
    gen = run(table, model, suppression).release.details["generalisation"]
    found = tuple(gen["levels"][c] for c in QIS)
    assert gen["loss"] == pytest.approx(want[0], rel=1e-9, abs=1e-12)
    assert found == want[2]
    assert gen["suppressed_records"] == results[found]["suppressed"]


def test_weights_change_the_answer_and_without_them_the_risk_is_one_over_fk():
    """The same table judged with and without its weights: weighted risk is below 1 / fk, so the model
    without weights is highest-risk, and weights let a finer transformation pass."""
    table = weighted_table(3)
    unweighted = Table.from_frame(table.frame.drop(columns="w"), roles={c: table.schema[c].role for c in QIS + ["dx"]})
    for c in table.attached_hierarchies():
        unweighted = unweighted.with_hierarchy(c, table.hierarchy(c))
    a = run(unweighted, "individual-risk:threshold=0.25", 0.1).release.details["generalisation"]
    b = run(unweighted, "highest-risk:threshold=0.25", 0.1).release.details["generalisation"]
    assert (a["levels"], a["suppressed_records"]) == (b["levels"], b["suppressed_records"])
    c = run(table, "individual-risk:threshold=0.25", 0.1).release.details["generalisation"]
    assert c["loss"] < a["loss"]


def test_mondrian_parts_each_hold():
    table = weighted_table(1)
    result = run(table, "individual-risk:threshold=0.1", 0.0, method="mondrian")
    release = result.release
    assert release.weight == "w" and result.verdict.holds
    groups = release.group_ids()
    frame = pd.DataFrame({"g": groups, "w": table.frame["w"].to_numpy()})
    stats = frame.groupby("g")["w"].agg(["size", "sum"])
    assert max(risk_by_hand(f, F) for f, F in zip(stats["size"], stats["sum"])) <= 0.1
    # Mondrian stops where a cut would break the model: some part cannot be cut and still hold
    assert len(stats) > 1


def test_the_written_release_holds_when_recomputed_from_the_file(tmp_path):
    table = weighted_table(2)
    data = tmp_path / "survey.csv"
    table.frame.to_csv(data, index=False)
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--data",
            str(data),
            "--quasi",
            "town,job",
            "--weight",
            "w",
            "--method",
            "global-recoding:suppression=0.2",
            "--model",
            "individual-risk:threshold=0.08",
            "--out",
            str(out),
            "--no-report",
        ]
    )
    assert code == 0
    written = pd.read_csv(out / "release.csv", dtype=str)
    kept = written[~(written[["town", "job"]] == "*").all(axis=1)]
    stats = kept.assign(w=kept["w"].astype(float)).groupby(["town", "job"])["w"].agg(["size", "sum"])
    assert max(risk_by_hand(f, F) for f, F in zip(stats["size"], stats["sum"])) <= 0.08
    assert main(["verify", str(out)]) == 0
    # the same file judged without its weights (each record stands for itself) fails: the weights count
    bare = out / "release.csv"
    assert main(["verify", str(bare), "--model", "individual-risk:threshold=0.08", "--quasi", "town,job"]) == 1
    assert (
        main(["verify", str(bare), "--model", "individual-risk:threshold=0.08", "--quasi", "town,job", "--weight", "w"])
        == 0
    )


# sdcMicro's own test sample and the indivRisk values its tests publish (tests/engine/test_survey_risk.py)
SAMPLE = pd.DataFrame(
    {
        "A": [2, 3, 2, 2, 3, 3, 1, 2],
        "B": [3, 3, 3, 3, 3, 3, 4, 3],
        "C": [1, 3, 1, 2, 1, 1, 1, 1],
        "weight": [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51],
    }
)
APPROX = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01369863]
EXACT = [0.01355297, *APPROX[1:2], 0.01355297, *APPROX[3:7], 0.01355297]


@pytest.mark.parametrize("method, values", [("approx", APPROX), ("exact", EXACT)])
def test_the_groups_risk_is_sdcmicros_indivrisk(method, values):
    release = Release("file", SAMPLE, ("A", "B", "C"), weight="weight")
    view = view_of_release(release, survey=True)
    assert view_of_release(release).survey is None  # only a model reading weights is handed them
    model = bind_models(REGISTRY, [PluginCall.parse(f"individual-risk:threshold=0.1,method={method}")])
    verdict = model.check_groups(view)
    assert view.per_record(verdict.values) == pytest.approx(values, abs=5e-9)
    assert view.per_record(verdict.ok).tolist() == [v <= 0.1 for v in values]
    held = model.plugin.check(release, model.params)
    assert not held.holds and held.value == pytest.approx(max(values), abs=5e-9)


def test_merging_groups_never_raises_the_risk():
    """A group holding a passing group passes ("suppression" monotonicity, which the search prunes by):
    random pairs of groups with their sizes and sums of weights, approx and exact."""
    rng = np.random.default_rng(7)
    for method, cases in (("approx", 3000), ("exact", 150)):
        model = bind_models(REGISTRY, [PluginCall.parse(f"individual-risk:threshold=0.5,method={method}")])
        assert model.plugin.monotonicity(model.params) == "suppression"
        f = rng.integers(1, 30, (cases, 2))
        F = f * np.exp(rng.uniform(0, 6, (cases, 2)))
        ones = rng.random((cases, 2)) < 0.1  # every record of the group stands for itself: Fk = fk
        F[ones] = f[ones]
        sizes = np.column_stack([f, f.sum(axis=1)]).ravel()
        sums = np.column_stack([F, F.sum(axis=1)]).ravel()
        view = GroupView.from_codes(np.arange(3 * cases), None, None, weights=sizes, survey=sums)
        risk = model.check_groups(view).values.reshape(cases, 3)
        assert (risk[:, 2] <= risk[:, :2].min(axis=1) * (1 + 1e-9)).all()


def test_local_suppression_under_the_model_is_sdcmicros_localsupp_rule():
    """Cells blanked until every record's risk is at most the threshold, a blank matching any value (a
    record blank throughout joins no other's key): recomputed record by record from the release."""
    rng = np.random.default_rng(5)
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.choice([20, 30, 40, 50], n),
            "sex": rng.choice(["m", "f"], n),
            "town": rng.choice(list("abcd"), n),
            "w": rng.uniform(1, 30, n).round(1),
        }
    )
    roles = {"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER, "town": Role.QUASI_IDENTIFIER}
    table = Table.from_frame(frame, roles={**roles, "w": Role.WEIGHT})
    result = run(table, "individual-risk:threshold=0.05", 0.0, method="local-suppression")
    out = result.release.frame
    keys = out[list(roles)].to_numpy(dtype=object)
    blank = pd.isna(out[list(roles)]).to_numpy()
    whole = blank.all(axis=1)
    risks = []
    for i in range(n):
        mates = [
            j
            for j in range(n)
            if (whole[i] or not whole[j])
            and all(blank[i, c] or blank[j, c] or keys[i, c] == keys[j, c] for c in range(len(roles)))
        ]
        risks.append(risk_by_hand(len(mates), float(frame["w"].to_numpy()[mates].sum())))
    assert max(risks) <= 0.05 + 1e-12
    assert result.release.details["blanked_total"] > 0  # the input failed: some cells had to go


def test_feasibility_is_judged_with_the_weights():
    """15 records standing for 100 people each hold at 0.05 (the check before a run counts the weights);
    standing for themselves, no release can: 1/15 is above it, refused before the run."""
    frame = pd.DataFrame({"a": list("xyxyxyxyxy") + ["x"] * 5, "w": [100.0] * 15})
    weighted = Table.from_frame(frame, roles={"a": Role.QUASI_IDENTIFIER, "w": Role.WEIGHT})
    assert run(weighted, "individual-risk:threshold=0.05", 0.0).verdict.holds
    plain = Table.from_frame(frame.drop(columns="w"), roles={"a": Role.QUASI_IDENTIFIER})
    with pytest.raises(BadInput, match="cannot hold on this data whatever the method does"):
        run(plain, "individual-risk:threshold=0.05", 0.0)
