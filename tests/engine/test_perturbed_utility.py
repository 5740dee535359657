"""A perturbed release before and after (docs/perturbation.md, "Before and after"): the figures worked
by hand on small tables, and ``veil utility`` on an exported, shuffled release pairing each record
with its own input record again."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from veil.cli import main as cli_main
from veil.engine import BadInput, Perturbation, Transition, perturbation_figures

BEFORE = pd.DataFrame({"x": [1, 2, 3, 4], "c": ["a", "a", "a", "b"], "s": ["p", "p", "q", "q"]})
AFTER = pd.DataFrame({"x": [1.0, 2.0, 5.0, 5.0], "c": ["a", "b", "a", "b"], "s": ["p", "p", "q", "q"]})


def test_a_perturbed_number_by_hand():
    shift = perturbation_figures(BEFORE, AFTER, Perturbation(("x",)), bins=4).columns["x"]
    assert shift.numeric and shift.paired
    # shared bins over both sides' values 1 … 5: [1, 2) [2, 3) [3, 4) [4, 5]
    assert shift.edges.tolist() == [1, 2, 3, 4, 5]
    assert shift.before.tolist() == [1, 1, 1, 1] and shift.after.tolist() == [1, 1, 0, 2]
    assert (shift.records, shift.changed) == (4, 2)
    assert shift.mean_abs_change == pytest.approx((0 + 0 + 2 + 1) / 4)
    # Pearson: Σ dx·dy = 7.5, Σ dx² = 5, Σ dy² = 12.75
    assert shift.correlation == pytest.approx(7.5 / math.sqrt(5 * 12.75))
    assert shift.original.tolist() == [1, 2, 3, 4] and shift.perturbed.tolist() == [1, 2, 5, 5]


def test_a_perturbed_category_by_hand_with_its_matrix_and_the_expected_counts():
    p = Transition("c", ("a", "b"), np.array([[0.75, 0.25], [0.0, 1.0]]), records=4)
    shift = perturbation_figures(BEFORE, AFTER, Perturbation(("c",), (p,))).columns["c"]
    assert not shift.numeric and shift.categories == ("a", "b")
    assert shift.before.tolist() == [3, 1] and shift.after.tolist() == [2, 2]
    # (3, 1) · P = (2.25, 0.75 + 1)
    assert shift.expected.tolist() == pytest.approx([2.25, 1.75])
    assert shift.changed == 1 and shift.transitions == (p,)


def test_the_expected_counts_add_each_stratum_through_its_own_matrix():
    p = Transition("c", ("a", "b"), np.array([[0.5, 0.5], [0.5, 0.5]]), {"s": "p"}, 2)
    q = Transition("c", ("a", "b"), np.array([[1.0, 0.0], [0.2, 0.8]]), {"s": "q"}, 2)
    shift = perturbation_figures(BEFORE, AFTER, Perturbation(("c",), (p, q))).columns["c"]
    # stratum p: (2, 0)·P = (1, 1); stratum q: (1, 1)·Q = (1.2, 0.8)
    assert shift.expected.tolist() == pytest.approx([2.2, 1.8])
    table = perturbation_figures(BEFORE, AFTER, Perturbation(("c",), (p, q))).tables()["perturbed-transitions.csv"]
    assert len(table) == 8 and set(table["stratum"]) == {"s = p", "s = q"}
    # a matrix that leaves one of the input's categories without a row: no expectation claimed
    partial = Transition("c", ("a",), np.array([[1.0]]))
    assert perturbation_figures(BEFORE, AFTER, Perturbation(("c",), (partial,))).columns["c"].expected is None


def test_a_release_of_another_number_of_records_is_not_paired_and_a_bad_matrix_is_refused():
    shift = perturbation_figures(BEFORE, AFTER.iloc[:3], Perturbation(("x", "c"))).columns
    assert not shift["x"].paired and shift["x"].before.sum() == 4 and shift["x"].after.sum() == 3
    assert shift["c"].changed is None
    with pytest.raises(BadInput, match="2×2, not 3×3"):
        Transition("c", ("a", "b", "z"), np.eye(2))
    back = Perturbation.from_dict(
        json.loads(json.dumps(Perturbation(("c",), (Transition("c", ("a",), [[1]]),)).to_dict()))
    )
    assert back.columns == ("c",) and back.transitions[0].matrix.tolist() == [[1.0]]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """PRAM within strata and noise, each exported shuffled by ``veil run``."""
    folder = tmp_path_factory.mktemp("perturbed")
    rng = np.random.default_rng(3)
    n = 120
    frame = pd.DataFrame(
        {
            "pid": np.arange(n),
            "region": rng.choice(["n", "s", "e"], n, p=[0.6, 0.3, 0.1]),
            "sex": rng.choice(["F", "M"], n),
            "income": rng.normal(50_000, 10_000, n).round(2),
        }
    )
    data = folder / "people.csv"
    frame.to_csv(data, index=False)
    common = ["run", "--data", str(data), "--identifier", "pid", "--quasi", "region,sex", "--no-report"]
    pram, noise = folder / "pram", folder / "noise"
    assert cli_main([*common, "--method", "pram:columns=region,strata=sex", "--out", str(pram)]) == 0
    assert cli_main([*common, "--method", "noise-addition:columns=income,level=0.5", "--out", str(noise)]) == 0
    return frame, pram, noise


def test_veil_utility_pairs_each_released_record_with_its_input_again(exported, capsys, tmp_path):
    frame, pram, noise = exported
    capsys.readouterr()
    assert cli_main(["utility", str(pram), "--json", "--csv", str(tmp_path / "csv")]) == 0
    printed = json.loads(capsys.readouterr().out)
    manifest = json.loads((pram / "manifest.json").read_text())
    assert manifest["shuffled"]
    region = printed["perturbation"]["region"]
    # the method counted its changes on the records in order; the file's rows are shuffled, so the
    # same count says the shuffle was undone
    assert region["changed_records"] == manifest["details"]["pram"]["columns"]["region"]["changed_records"]
    assert region["before"] == [int((frame["region"] == c).sum()) for c in region["categories"]]
    assert [t["stratum"] for t in region["transitions"]] == [
        {"sex": s} for s in dict.fromkeys(frame["sex"])
    ]  # one matrix per stratum, as the manifest declares them
    assert region["transitions"] == manifest["perturbation"]["transitions"]
    written = pd.read_csv(tmp_path / "csv" / "perturbed-categories.csv")
    assert written["after"].tolist() == region["after"]

    assert cli_main(["utility", str(noise), "--json"]) == 0
    income = json.loads(capsys.readouterr().out)["perturbation"]["income"]
    released = pd.read_csv(noise / "release.csv")["income"]
    assert income["records"] == len(frame) and sum(income["bins"]["before"]) == len(frame)
    # noise of 0.5 standard deviations: the pairs correlate near 1/√1.25 ≈ 0.89; shuffled pairs would not
    assert income["correlation"] > 0.75
    assert income["mean_abs_change"] < np.abs(released.to_numpy() - frame["income"].to_numpy()).mean()
    assert cli_main(["utility", str(noise)]) == 0
    assert "income (number): 120 records paired, 120 changed" in capsys.readouterr().out


def test_veil_utility_gives_a_noisy_number_the_figures_of_a_number(exported, capsys):
    """The released incomes hardly repeat: ``veil utility`` gives their quartiles, mean and deviation as
    numpy computes them from the released file, and no mode (the desktop's tab shows the same figures)."""
    frame, _, noise = exported
    capsys.readouterr()
    assert cli_main(["utility", str(noise), "--json"]) == 0
    income = json.loads(capsys.readouterr().out)["columns"]["income"]
    assert income["numeric"] and not income["generalised"]
    for side, values in (
        ("summary_before", frame["income"]),
        ("summary_after", pd.read_csv(noise / "release.csv")["income"]),
    ):
        summary, values = income[side], values.to_numpy(float)
        assert "mode" not in summary
        assert [summary[k] for k in ("q1", "median", "q3")] == pytest.approx(np.quantile(values, [0.25, 0.5, 0.75]))
        assert (summary["mean"], summary["std"]) == pytest.approx((values.mean(), values.std(ddof=1)))
    assert cli_main(["utility", str(noise)]) == 0
    assert "q1" in capsys.readouterr().out
