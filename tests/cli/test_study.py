"""`veil study`: a grid of runs into results.csv (one row per run and metric) and its charts."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from veil.engine import demo_path

from .helpers import PNG_MAGIC, all_files, assert_bad_input

DATA = {"path": "people.csv", "identifiers": ["name"], "quasi_identifiers": ["age_band", "sex"], "target": "outcome"}
CHARTS = [
    {"name": "metric-bars", "params": {"metric": "sfc", "x": "k"}},
    {"name": "metric-lines", "params": {"metric": "min-group-size", "x": "k"}},
]


def study_file(folder: Path, **fields) -> Path:
    study = {
        "name": "k sweep",
        "data": DATA,
        "model": "k-anonymity",
        "methods": ["all-features"],
        "sweep": {"k": [1, 2]},
        "metrics": ["sfc", "min-group-size"],
        "charts": CHARTS,
        **fields,
    }
    path = folder / "study.json"
    path.write_text(json.dumps(study), encoding="utf-8")
    return path


def results(out: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO((out / "results.csv").read_text(encoding="utf-8"))))


def test_k_sweep_writes_results_and_charts(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    result = veil("study", study_file(tmp_path), "--out", out)
    assert result.code == 0, result.err
    assert result.out.strip() == str(out)
    rows = results(out)
    assert {"run", "method", "model", "k", "repeat", "seed", "holds", "metric", "value"} <= set(rows[0])
    per_run = Counter(r["run"] for r in rows)
    assert sorted(per_run) == ["0", "1"]
    metrics = {r["metric"] for r in rows}
    assert {"sfc", "min-group-size"} <= metrics
    assert len(rows) == len(per_run) * len(metrics)
    assert len({(r["run"], r["metric"]) for r in rows}) == len(rows)
    assert {r["run"]: r["k"] for r in rows} == {"0": "1", "1": "2"}
    assert all(r["holds"] == "True" and r["error"] == "" for r in rows)
    assert all(r["method"] == "all-features" and r["model"] == "k-anonymity" for r in rows)
    value = {(r["run"], r["metric"]): float(r["value"]) for r in rows}
    assert value["0", "sfc"] == value["1", "sfc"] == 4.0  # age_band, sex, postcode, smoker
    assert value["0", "min-group-size"] == value["1", "min-group-size"] == 2.0
    if ("0", "privacy-value") in value:  # k-anonymity's value is the smallest group, like the metric
        assert value["0", "privacy-value"] == value["0", "min-group-size"]


def test_charts_are_png_and_svg_with_their_data(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    assert veil("study", study_file(tmp_path), "--out", out).code == 0
    for n, name in enumerate(("metric-bars", "metric-lines"), start=1):
        png, svg, data = (out / f"chart-{n}-{name}.{ext}" for ext in ("png", "svg", "csv"))
        assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 1000
        text = svg.read_text(encoding="utf-8")
        assert "<svg" in text and text.rstrip().endswith("</svg>")
        assert data.read_text(encoding="utf-8") == (out / "results.csv").read_text(encoding="utf-8")
    assert not [p for p in all_files(out) if p.name.startswith(".")]  # no temporary files left


def test_a_run_that_fails_its_model_is_recorded(veil, small_csv, tmp_path):
    data = {**DATA, "quasi_identifiers": ["age_band", "sex", "postcode"]}
    out = tmp_path / "out"
    result = veil("study", study_file(tmp_path, data=data), "--out", out)
    assert result.code == 0, result.err
    rows = results(out)
    by_k = {k: [r for r in rows if r["k"] == k] for k in ("1", "2")}
    assert all(r["holds"] == "True" for r in by_k["1"])
    assert by_k["2"] and all(r["holds"] == "False" and "k-anonymity" in r["error"] for r in by_k["2"])
    value = {r["metric"]: r["value"] for r in by_k["2"]}
    # the no-privacy baseline keeps its figures though its release is refused
    assert float(value["sfc"]) == 4 and float(value["min-group-size"]) == 1.0
    assert by_k["2"][0]["seconds"] != ""
    assert float(value.get("privacy-value", "1")) == 1.0  # every record is unique on the postcode


def test_repeats_use_successive_seeds(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    assert veil("study", study_file(tmp_path, repeats=2, seed=10, sweep={"k": [2]}), "--out", out).code == 0
    rows = results(out)
    assert sorted({(r["repeat"], r["seed"]) for r in rows}) == [("0", "10"), ("1", "11")]


def test_the_bundled_demo_study(veil, tmp_path):
    study = demo_path().parent / "studies" / "demo_k_sweep.json"
    if not study.exists():
        pytest.skip("no bundled demo study")
    out = tmp_path / "out"
    result = veil("study", study, "--out", out)
    assert result.code == 0, result.err
    rows = results(out)
    assert sorted({r["k"] for r in rows}, key=int) == [str(k) for k in json.loads(study.read_text())["sweep"]["k"]]
    assert (out / "chart-1-metric-bars.png").read_bytes().startswith(PNG_MAGIC)


BAD_STUDIES = {
    "swept parameter of nobody": {"sweep": {"depth": [1, 2]}},
    "swept parameter without a model": {"model": None},
    "empty sweep": {"sweep": {"k": []}},
    "no methods": {"methods": []},
    "unknown method": {"methods": ["no-such-method"]},
    "unknown model": {"model": "no-such-model"},
    "unknown metric": {"metrics": ["sfc", "beauty"]},
    "unknown chart": {"charts": [{"name": "pie"}]},
    "bad k value": {"sweep": {"k": [2, "two"]}},
    "k above the rows": {"sweep": {"k": [2, 13]}},
    "repeats zero": {"repeats": 0},
    "missing data file": {"data": {"path": "nowhere.csv"}},
}


@pytest.mark.parametrize("fields", BAD_STUDIES.values(), ids=BAD_STUDIES.keys())
def test_bad_study(veil, small_csv, tmp_path, fields):
    before = small_csv.read_bytes()
    out = tmp_path / "out"
    result = veil("study", study_file(tmp_path, **fields), "--out", out)
    assert_bad_input(result)
    assert small_csv.read_bytes() == before


def test_swept_parameter_of_nobody_writes_nothing(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    result = veil("study", study_file(tmp_path, sweep={"depth": [1]}), "--out", out)
    assert_bad_input(result)
    assert "'depth'" in result.err
    assert all_files(out) == []


@pytest.mark.parametrize("content", ["", "{", "[]", '"study"'], ids=["empty", "truncated", "a list", "a string"])
def test_study_file_that_is_not_a_study(veil, write_file, tmp_path, content):
    assert_bad_input(veil("study", write_file("study.json", content), "--out", tmp_path / "out"))


def test_study_file_missing(veil, tmp_path):
    assert_bad_input(veil("study", tmp_path / "nowhere.json", "--out", tmp_path / "out"))


def test_study_out_is_a_file(veil, small_csv, write_file, tmp_path):
    blocker = write_file("blocker", "precious\n")
    assert_bad_input(veil("study", study_file(tmp_path), "--out", blocker))
    assert blocker.read_text() == "precious\n"


def test_study_without_out(veil, small_csv, tmp_path):
    assert_bad_input(veil("study", study_file(tmp_path)))


@pytest.mark.parametrize(
    "fields",
    [{"seed": "x"}, {"repeats": "many"}, {"sweep": [1]}, {"methods": [5]}, {"model": 5}, {"data": "people.csv"}],
    ids=["seed text", "repeats text", "sweep a list", "method a number", "model a number", "data a string"],
)
def test_study_fields_of_the_wrong_type(veil, small_csv, tmp_path, fields):
    assert_bad_input(veil("study", study_file(tmp_path, **fields), "--out", tmp_path / "out"))


def test_chart_of_a_metric_not_computed_is_refused_before_running(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    result = veil(
        "study", study_file(tmp_path, charts=[{"name": "metric-bars", "params": {"metric": "auc"}}]), "--out", out
    )
    assert_bad_input(result)
    assert all_files(out) == []


def test_model_flags_put_every_run_under_those_models(veil, small_csv, tmp_path):
    """`veil study FILE --model …` (Study.with_models once sat, unreachable, inside a helper function)."""
    out = tmp_path / "out"
    path = study_file(tmp_path, sweep={}, charts=[])
    result = veil("study", path, "--out", out, "--model", "k-anonymity:k=2")
    assert result.code == 0, result.err
    models = [json.loads(r["settings"])["models"] for r in results(out)]
    assert all([m["name"] for m in ms] == ["k-anonymity"] and int(ms[0]["params"]["k"]) == 2 for ms in models)


def test_a_method_sweeping_its_own_parameter(veil, small_csv, tmp_path):
    out = tmp_path / "out"
    methods = [{"name": "greedy-hamdist", "sweep": {"on_violation": ["skip", "stop"]}}, "all-features"]
    result = veil("study", study_file(tmp_path, methods=methods, charts=[]), "--out", out)
    assert result.code == 0, result.err
    rows = results(out)
    runs = {(r["method"], r["k"], r["on_violation"]) for r in rows}
    assert runs == {("greedy-hamdist", k, v) for k in "12" for v in ("skip", "stop")} | {
        ("all-features", k, "") for k in "12"
    }


def test_a_method_under_a_model_it_cannot_satisfy_is_refused_before_any_run(veil, small_csv, tmp_path):
    """Hilbert makes groups of at least k records; l-diversity judges the sensitive values in each
    group, which such a method does not make: the study says which models it works under."""
    out = tmp_path / "out"
    path = study_file(
        tmp_path,
        methods=["hilbert"],
        model={"name": "l-diversity", "params": {"l": 2}},
        sweep={},
        charts=[],
        data={**DATA, "sensitive": ["smoker"]},
    )
    result = veil("study", path, "--out", out)
    assert_bad_input(result)
    assert "works under k-anonymity" in result.err and "not l-diversity" in result.err, result.err
    assert "size of each group" in result.err  # what the models it works under judge
    assert all_files(out) == []
