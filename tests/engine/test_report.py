"""The release report: its numbers are the manifest's, it holds the verdict and both hashes, risk
metrics agree with brute force, ``veil report`` recomputes the same figures, and a missing or
changed input or release is said, never a crash."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import export_plugins
from veil.engine import Context, PluginCall, Release, RunSpec, Table, execute, make_registry, sha256_file
from veil.engine.release.assessment import ReportOptions, group_size_shares
from veil.cli import main
from veil.engine.release.export import export_release
from veil.engine.release.report import regenerate_report

REGISTRY = make_registry(modules=[export_plugins])

# 24 records: every (age_band, sex) pair occurs 4 times.
rng = np.random.default_rng(0)
PEOPLE = pd.DataFrame(
    {
        "name": [f"Person{i:02d}" for i in range(24)],
        "age_band": ["20-39", "40-59", "60+"] * 8,
        "sex": (["F"] * 3 + ["M"] * 3) * 4,
        "smoker": rng.integers(0, 2, 24),
        "outcome": [0, 1] * 12,
    }
)


def people_csv(folder: Path) -> Path:
    path = folder / "people.csv"
    PEOPLE.to_csv(path, index=False)
    return path


def run_cli(*argv) -> int:
    return main([str(a) for a in argv])


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """One export through the command line, report included: 2-anonymity on (age_band, sex)."""
    folder = tmp_path_factory.mktemp("report")
    data = people_csv(folder)
    out = folder / "out"
    assert (
        run_cli(
            "run",
            "--data",
            data,
            "--identifier",
            "name",
            "--quasi",
            "age_band,sex",
            "--target",
            "outcome",
            "--model",
            "k-anonymity:k=2",
            "--method",
            "all-features",
            "--metrics",
            "sfc,auc",
            "--seed",
            2,
            "--out",
            out,
        )
        == 0
    )
    return out


class _Numbers(HTMLParser):
    """Every ``data-key``/``data-value`` pair of the report, and the text of the verdict."""

    def __init__(self):
        super().__init__()
        self.values, self.hashes, self.text = {}, {}, []
        self._key = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-value" in a:
            self.values[a["data-key"]] = a["data-value"]
        elif "data-key" in a:
            self._key = a["data-key"]

    def handle_data(self, data):
        self.text.append(data)
        if self._key:
            self.hashes[self._key] = data.strip()
            self._key = None


def parse(html: str) -> _Numbers:
    parser = _Numbers()
    parser.feed(html)
    return parser


def lookup(manifest: dict, key: str):
    value = manifest
    for part in key.split("."):
        value = value[part]
    return value


def manifest_of(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


# -- the report is the manifest ---------------------------------------------------------------------
def test_every_number_in_the_report_is_the_manifests(exported):
    m = manifest_of(exported)
    numbers = parse((exported / "report.html").read_text(encoding="utf-8")).values
    assert len(numbers) >= 15
    for key, shown in numbers.items():
        expected = lookup(m, key)
        assert shown == ("" if expected is None else repr(expected)), key
    for side in ("before", "after"):  # and every risk and utility figure of the manifest is shown
        for k in ("max", "avg", "at_risk", "smallest_group", "groups"):
            assert f"risk.{side}.{k}" in numbers
        for k in ("auc", "accuracy"):
            assert f"utility.{side}.{k}" in numbers


def test_the_manifest_records_risk_and_utility_before_and_after(exported):
    m = manifest_of(exported)
    before, after = m["risk"]["before"], m["risk"]["after"]
    assert m["risk"]["threshold"] == 0.2
    assert after["columns"] == ["age_band", "sex"] and after["smallest_group"] == 4 and after["groups"] == 6
    assert after["max"] == 0.25 and after["avg"] == pytest.approx(6 / 24) and after["at_risk"] == 1.0
    assert before["columns"] == after["columns"]  # the quasi-identifiers of the input, at original values
    u = m["utility"]
    assert set(u["before"]) == set(u["after"]) == {"auc", "accuracy"}
    assert u["after"]["auc"] == m["metrics"]["auc"]  # the same protocol gives the same number on the same records


def test_the_report_leads_with_the_verdict_and_holds_both_hashes(exported):
    html = (exported / "report.html").read_text(encoding="utf-8")
    m = manifest_of(exported)
    verdict = re.search(r'<section class="verdict (\w+)".*?<p class="headline">(.*?)</p>', html, re.S)
    assert verdict.group(1) == "holds"
    assert (
        verdict.group(2) == "k-anonymity with k = 2 holds: every record shares its quasi-identifiers with at "
        "least 1 other."
    )
    assert html.index('class="verdict') < html.index("<h2>")  # first, before any section
    hashes = parse(html).hashes
    assert hashes["sha256.Released file"] == m["output"]["sha256"] == sha256_file(exported / "release.csv")
    assert hashes["sha256.Input file"] == m["input"]["sha256"]
    assert "Caveats" in html and "l-diversity" in html  # k-anonymity's own caveat


def test_the_report_is_self_contained(exported):
    html = (exported / "report.html").read_text(encoding="utf-8")
    assert html.count("<figure><svg ") == 2 and html.count("</svg><figcaption>") == 2  # the two charts, inline
    assert not re.search(r'(src|href)="(?!data:)', html)  # no external file, script or style sheet
    assert "<script" not in html


def test_identifier_values_never_reach_the_report(exported):
    for name in ("report.html", "manifest.json", "release.csv"):
        text = (exported / name).read_text(encoding="utf-8")
        assert not any(v in text for v in PEOPLE["name"]), name


def test_the_pdf_has_pages_with_the_verdict_and_hashes(exported):
    pdf = (exported / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type /Page\b", pdf)) >= 2
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed: the PDF's text is not checked")
    text = subprocess.run(
        ["pdftotext", "-layout", str(exported / "report.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    m = manifest_of(exported)
    flat = " ".join(text.split())
    assert "k-anonymity with k = 2 holds" in flat
    assert m["output"]["sha256"] in text and m["input"]["sha256"] in text


# -- veil report recomputes -----------------------------------------------------------------------------
def test_regenerating_recomputes_the_same_figures(exported, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    (copy / "report.html").unlink()
    done = regenerate_report(REGISTRY, copy)
    m = manifest_of(copy)
    assert done.checks["release"] == "matches" and done.checks["input"] == "matches"
    assert done.checks["differences"] == []
    assert done.checks["recheck"].startswith("holds")
    for section in ("risk", "utility"):
        for side in ("before", "after"):
            assert done.manifest[section][side] == m[section][side]
    numbers = parse((copy / "report.html").read_text(encoding="utf-8")).values
    assert numbers["risk.before.max"] == repr(m["risk"]["before"]["max"])
    assert manifest_of(copy) == m  # the manifest itself is never rewritten


def test_a_missing_input_leaves_out_the_before_figures(tmp_path):
    data = people_csv(tmp_path)
    out = tmp_path / "out"
    assert (
        run_cli(
            "run",
            "--data",
            data,
            "--identifier",
            "name",
            "--quasi",
            "age_band,sex",
            "--method",
            "all-features",
            "--model",
            "k-anonymity:k=2",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            out,
        )
        == 0
    )
    assert not (out / "report.html").exists()
    data.unlink()
    assert run_cli("report", out, "--no-utility") == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    numbers = parse(html).values
    assert numbers["risk.before.max"] == "" and numbers["risk.after.max"] == "0.25"
    assert "no longer where the manifest says" in html and "“before” figures are left out" in html


def test_a_changed_input_is_said(tmp_path):
    data = people_csv(tmp_path)
    out = tmp_path / "out"
    assert (
        run_cli(
            "run",
            "--data",
            data,
            "--identifier",
            "name",
            "--quasi",
            "age_band,sex",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            out,
        )
        == 0
    )
    data.write_text(data.read_text(encoding="utf-8").replace("Person00", "Someone"), encoding="utf-8")
    done = regenerate_report(REGISTRY, out, utility=False)
    assert done.checks["input"] == "changed" and done.manifest["risk"]["before"] is None
    assert "has changed since the export" in (out / "report.html").read_text(encoding="utf-8")


def test_a_tampered_release_is_reported_and_exits_1(exported, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    with open(copy / "release.csv", "a", encoding="utf-8") as f:
        f.write("60+,M,0,1\n")
    assert run_cli("report", copy, "--no-utility") == 1
    assert "changed since it was exported" in capsys.readouterr().err
    html = (copy / "report.html").read_text(encoding="utf-8")
    assert 'class="verdict changed"' in html and "cannot vouch" in html


def test_a_new_threshold_changes_records_at_risk_only(exported, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    done = regenerate_report(REGISTRY, copy, risk_threshold=0.3, utility=False)
    assert done.manifest["risk"]["threshold"] == 0.3
    assert done.manifest["risk"]["after"]["at_risk"] == 0.0  # risk 0.25 everywhere: not above 0.3
    assert manifest_of(copy)["risk"]["after"]["at_risk"] == 1.0  # but above 0.2
    assert "differences" not in done.checks  # figures for another threshold are not compared


# -- differential privacy in the report ---------------------------------------------------------------
def test_a_dp_release_shows_its_budget_and_assumptions(tmp_path):
    table = Table.from_frame(PEOPLE, roles={"name": "identifier", "outcome": "target"})
    result = execute(REGISTRY, table, RunSpec(PluginCall("fake-dp")))
    done = export_release(REGISTRY, result, tmp_path, report=ReportOptions(utility=False, pdf=False))
    html = done.report_html.read_text(encoding="utf-8")
    assert "ε = 0.5" in html and "class sizes are public" in html and "one record changes" in html
    assert parse(html).values["privacy_budget.epsilon_spent"] == "0.5"
    assert done.report_pdf is None and not (tmp_path / "report.pdf").exists()


def test_no_privacy_model_is_said_first(tmp_path):
    table = Table.from_frame(PEOPLE.drop(columns=["name"]))
    done = export_release(
        REGISTRY,
        execute(REGISTRY, table, RunSpec(PluginCall("all-features"))),
        tmp_path,
        report=ReportOptions(utility=False, pdf=False),
    )
    html = done.report_html.read_text(encoding="utf-8")
    assert 'class="verdict none"' in html and "makes no privacy claim" in html


# -- risk metrics against brute force -----------------------------------------------------------------
def brute_force_risks(frame: pd.DataFrame) -> np.ndarray:
    rows = [tuple("<NA>" if pd.isna(v) else v for v in r) for r in frame.itertuples(index=False)]
    return np.array([1.0 / sum(other == r for other in rows) for r in rows])


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 25),
    m=st.integers(0, 3),
    threshold=st.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_risk_metrics_equal_brute_force(n, m, threshold, seed):
    r = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {f"q{j}": r.choice(["a", "b", None] if j % 2 else [1, 2, 3], n) for j in range(m)}, index=range(n)
    )
    release = Release("test", frame, tuple(frame.columns))
    risks = brute_force_risks(frame) if m else np.full(n, 1.0 / n)
    ctx = Context(0)

    def metric(name, **params):
        plugin = REGISTRY.metric(name)
        return plugin.compute(None, release, plugin.params(params), ctx)

    assert metric("prosecutor-risk-max") == pytest.approx(risks.max())
    assert metric("prosecutor-risk-avg") == pytest.approx(risks.mean())
    assert metric("records-at-risk", threshold=threshold) == pytest.approx(np.mean(risks > threshold))
    sizes = np.rint(1 / risks).astype(int)
    shares = group_size_shares(sizes)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["1"] == pytest.approx(np.mean(sizes == 1))


def test_risk_metrics_have_arx_semantics():
    """Groups of 1, 2 and 5: highest 1, average = groups / records, at risk = records in groups < 5."""
    frame = pd.DataFrame({"q": ["a"] + ["b"] * 2 + ["c"] * 5})
    release = Release("test", frame, ("q",))
    values = {
        name: REGISTRY.metric(name).compute(None, release, REGISTRY.metric(name).params(), Context(0))
        for name in ("prosecutor-risk-max", "prosecutor-risk-avg", "records-at-risk")
    }
    assert values == {
        "prosecutor-risk-max": 1.0,
        "prosecutor-risk-avg": pytest.approx(3 / 8),
        "records-at-risk": pytest.approx(3 / 8),
    }


def test_a_shuffled_release_scores_exactly_as_unshuffled():
    table = Table.from_frame(PEOPLE.drop(columns=["name"]), roles={"outcome": "target"})
    release = execute(REGISTRY, table, RunSpec(PluginCall("all-features"))).release
    shuffled = Release(
        "test",
        release.frame.sample(frac=1, random_state=3).reset_index(drop=True),
        release.quasi_identifiers,
        target="outcome",
    )
    for name in ("auc", "accuracy"):
        metric = REGISTRY.metric(name)
        assert metric.compute(None, release, metric.params(), Context(4)) == metric.compute(
            None, shuffled, metric.params(), Context(4)
        )


def test_an_input_read_differently_is_not_compared(tmp_path):
    """Without the read options (a headerless file read with --names), the input reads back with
    other columns: the report must say so rather than show figures of other data."""
    data = tmp_path / "people.data"
    PEOPLE.drop(columns=["name"]).to_csv(data, index=False, header=False)
    out = tmp_path / "out"
    assert (
        run_cli(
            "run",
            "--data",
            data,
            "--input-format",
            "csv",
            "--names",
            "age_band,sex,smoker,outcome",
            "--quasi",
            "age_band,sex",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            out,
        )
        == 0
    )
    manifest = manifest_of(out)
    assert manifest["input"]["read"]["names"] == ["age_band", "sex", "smoker", "outcome"]
    done = regenerate_report(REGISTRY, out, utility=False)
    assert done.checks["input"] == "matches" and done.manifest["risk"]["before"] == manifest["risk"]["before"]
    from veil.engine.release.signing import sign

    del manifest["input"]["read"]  # as written (and signed) by a caller that did not pass its DataSource
    sign(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    done = regenerate_report(REGISTRY, out, utility=False)
    assert done.checks["input"].startswith("could not be read again (its columns differ")
    assert done.manifest["risk"]["before"] is None


def test_the_recheck_says_holds_once(exported, tmp_path):
    """The regenerated report says "holds: the smallest group …" once, never "holds: holds: …"."""
    copy = tmp_path / "once"
    shutil.copytree(exported, copy)
    done = regenerate_report(REGISTRY, copy, utility=False)
    assert done.checks["recheck"].startswith("holds: ")
    assert "holds: holds" not in (copy / "report.html").read_text(encoding="utf-8")
    assert "holds:" not in done.checks["recheck"][len("holds: ") :]


def test_the_parameters_list_every_privacy_model_and_metrics_that_do_not_apply_take_one_line(tmp_path):
    """A release under k-anonymity and l-diversity lists both in its parameters; a metric the run
    asked for that gave no value on this release (None in the manifest) is named once, not given a
    row of "does not apply". ``veil run`` itself refuses a metric that cannot say anything of the
    method (a feature ranking's accuracy for Mondrian), as the desktop never offers it."""
    from veil.engine.release.report import build_document
    from veil.engine.release.report_render import render_html

    data = people_csv(tmp_path)
    out = tmp_path / "out"
    common = [
        "run",
        "--data",
        data,
        "--identifier",
        "name",
        "--quasi",
        "age_band,sex",
        "--sensitive",
        "smoker",
        "--target",
        "outcome",
        "--model",
        "k-anonymity:k=2",
        "--model",
        "l-diversity:l=2,variant=distinct",
        "--method",
        "mondrian",
    ]
    assert run_cli(*common, "--metrics", "ncp,weights-accuracy", "--out", tmp_path / "refused") == 2
    assert not (tmp_path / "refused").exists()
    assert run_cli(*common, "--metrics", "ncp", "--out", out) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest["metrics"]["weights-accuracy"] = None  # asked for, no value on this release
    doc = build_document(REGISTRY, manifest)
    facts = dict(next(s for s in doc.sections if s.heading == "Parameters").blocks[0].content)
    assert facts["Privacy models"] == (
        "k-anonymity (k = 2); l-diversity (l = 2, variant = distinct, c = 1, estimator = shannon)"
    )
    html = render_html(doc)
    assert "does not apply" not in html
    assert re.search(r"Not applicable to this release, so not shown: [^.]*Accuracy on the top-ranked", html)


def test_a_parameter_left_unset_is_not_listed():
    from veil.engine.release.report import _params_text

    assert _params_text({"k": 5, "sample_fraction": None}) == " (k = 5)"
    assert _params_text({"sample_fraction": None}) == ""
