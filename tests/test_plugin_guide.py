"""The plugin guide runs: every example of docs/design.md's plugin guide is a file of docs/examples
shown there whole, loaded with `veil --plugin` through the real command line, and each command the
guide shows prints what the guide says; what the examples claim of their releases is checked from
the files written (the privacy model's release counted group by group, the metric worked record by
record, the exporter's file read back, the chart's data)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.desktop.launcher import tried_plugins, wants_desktop
from veil.engine import Context, PluginCall, PluginError, RunSpec, execute, load_demo, make_registry, plugins_to_try

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
GUIDE_TITLE = "## Adding a privacy model, a method, a metric, an importer, an exporter or a chart"
QUASI = ["age", "sex", "postcode_district", "marital_status", "admission_month"]


def guide() -> str:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    start = text.index(GUIDE_TITLE)
    end = text.find("\n## ", start + len(GUIDE_TITLE))
    return text[start : end if end > 0 else len(text)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", guide(), flags=re.M | re.S)


def console(mentioning: str) -> list[tuple[str, list[str]]]:
    """The commands of the guide's one console block mentioning ``mentioning`` first, each with the
    lines the guide says it prints."""
    found = [b for b in blocks("console") if mentioning in b.split("\n")[0]]
    assert len(found) == 1, mentioning
    commands: list[tuple[str, list[str]]] = []
    for line in found[0].splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    return commands


def veil(command: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a command as the guide writes it (``veil …``, paths from the repository's root) in ``cwd``."""
    argv = shlex.split(command)
    assert argv[0] == "veil"
    argv = [str(ROOT / a) if a.startswith("docs/") else a for a in argv[1:]]
    script = Path(sys.executable).with_name("veil")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "veil.desktop.launcher"]
    return subprocess.run(
        [*head, *argv], cwd=cwd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )


def printed_as_the_guide_says(result: subprocess.CompletedProcess, expected: list[str]) -> None:
    """stdout then stderr, line by line as the guide shows them: "…" alone stands for any lines, "…"
    in a line for any text."""
    pattern = "\n".join(
        "(?:.*\n)*?.*" if line == "…" else ".*".join(map(re.escape, line.split("…"))) for line in expected
    )
    printed = (result.stdout + result.stderr).rstrip("\n")
    assert result.returncode == 0, printed
    assert re.fullmatch(pattern, printed), f"the guide says\n{chr(10).join(expected)}\nbut it printed\n{printed}"


def run_block(mentioning: str, cwd: Path) -> None:
    for command, expected in console(mentioning):
        printed_as_the_guide_says(veil(command, cwd), expected)


# -- the guide shows the files whole ------------------------------------------------------------


def test_every_example_file_is_shown_whole_in_the_guide_and_every_shown_example_is_a_file():
    shown = blocks("python")
    files = sorted(EXAMPLES.glob("*.py"))
    assert {p.name for p in files} >= {
        "alpha_k_anonymity.py",
        "common_first.py",
        "exact_share.py",
        "jsonl_exporter.py",
        "jsonl_importer.py",
        "metric_dots.py",
    }
    texts = {p.read_text(encoding="utf-8") for p in files}
    assert sorted(shown) == sorted(texts)


def test_every_kind_has_an_example_the_registry_takes():
    registry = make_registry(extra=[str(p) for p in sorted(EXAMPLES.glob("*.py"))])
    assert registry.failures == []
    sources = {info.cls.kind for info in registry.all() if info.source.startswith(str(EXAMPLES))}
    assert sources == {"algorithm", "privacy-model", "metric", "chart", "importer", "exporter"}


# -- each example, through the real command line ---------------------------------------------------


def test_the_privacy_model_example_releases_a_table_that_holds(tmp_path):
    run_block("alpha_k_anonymity.py run", tmp_path)
    released = pd.read_csv(tmp_path / "out" / "release.csv", dtype=str)
    groups = released.groupby(QUASI, sort=False)["diagnosis_group"]
    sizes = groups.size()
    largest_share = groups.agg(lambda values: values.value_counts().iloc[0] / len(values))
    assert len(released) == 5000 and len(sizes) == 722  # as the guide prints
    assert sizes.min() >= 5 and largest_share.max() <= 0.5  # every group, counted from the file
    assert largest_share.max() == 0.5
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [v["holds"] for v in manifest["verdicts"]] == [True]
    unknown = veil("veil verify out", tmp_path)  # without the plugin, verify cannot judge it, and says so
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("veil: error: unknown privacy model 'alpha-k-anonymity'")
    assert len(unknown.stderr.strip().splitlines()) == 1


def test_the_method_example_keeps_common_features_the_model_allows(tmp_path):
    run_block("common_first.py run", tmp_path)
    released = pd.read_csv(tmp_path / "out" / "release.csv")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    features = [c for c in released.columns if c != manifest["roles"]["target"]]
    assert 0 < len(features) <= 8
    assert released.groupby(features).size().min() >= 5  # k-anonymity on the released features
    result = veil("veil verify out", tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("OK:")


def test_the_metric_example_computes_what_it_says_record_by_record(tmp_path):
    run_block("exact_share.py run", tmp_path)
    written = json.loads((tmp_path / "out" / "manifest.json").read_text())["metrics"]["exact-share"]
    assert f'"exact-share": {written}' in guide()
    registry = make_registry(extra=[str(EXAMPLES / "alpha_k_anonymity.py"), str(EXAMPLES / "exact_share.py")])
    table = load_demo()
    model = PluginCall("alpha-k-anonymity", {"k": 5, "alpha": 0.5})
    result = execute(registry, table, RunSpec(PluginCall("mondrian"), (model,), 0, ("exact-share",)), Context(0))
    release = result.release.frame
    same = [
        str(release.at[i, c]) == str(table.frame.at[i, c]) for i in release.index for c in QUASI if c in release.columns
    ]
    assert result.metrics["exact-share"] == pytest.approx(sum(same) / len(same))
    assert written == pytest.approx(result.metrics["exact-share"])
    assert 0 < written < 1


def test_the_exporter_writes_what_the_importer_reads_back(tmp_path):
    run_block("jsonl_exporter.py run", tmp_path)
    run_block("jsonl_importer.py inspect", tmp_path)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (manifest["output"]["path"], manifest["output"]["format"]) == ("release.jsonl", "jsonl")
    registry = make_registry(extra=[str(EXAMPLES / "jsonl_importer.py"), str(EXAMPLES / "jsonl_exporter.py")])
    path = tmp_path / "out" / "release.jsonl"
    table = registry.create("importer", "jsonl").read(path, None)
    back = registry.exporter("jsonl").read_back(path)
    assert table.frame.shape == (5000, 40) and list(table.frame.columns) == manifest["output"]["columns"]
    pd.testing.assert_frame_equal(table.frame.astype(str), back.astype(str), check_dtype=False)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["age"] for line in lines[:3]] == back["age"].astype(str).tolist()[:3]


def test_the_chart_example_draws_each_runs_features_kept(tmp_path):
    run_block("metric_dots.py study", tmp_path)
    study = tmp_path / "study"
    assert (study / "chart-1-metric-dots.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (study / "chart-1-metric-dots.svg").exists()
    results = pd.read_csv(study / "results.csv")
    kept = results[results["metric"] == "sfc"].sort_values("k")
    assert kept["k"].tolist() == [2, 5, 10, 50]
    assert kept["value"].tolist() == [10, 10, 9, 7]  # as the guide says
    assert "10, 10, 9 and 7\nfeatures for k = 2, 5, 10 and 50" in guide()
    assert np.all(np.diff(kept["value"]) <= 0)  # a larger k never lets more features through


# -- trying a plugin out -----------------------------------------------------------------------------


def test_veil_plugins_loads_the_same_as_the_option(tmp_path):
    listed = os.pathsep.join([str(EXAMPLES / "common_first.py"), str(EXAMPLES / "metric_dots.py")])
    result = veil("veil plugins --json", tmp_path, env={"VEIL_PLUGINS": listed})
    assert result.returncode == 0, result.stderr
    listed = {p["name"]: p for p in json.loads(result.stdout)["plugins"]}
    assert listed["common-first"]["kind"] == "algorithm" and listed["metric-dots"]["kind"] == "chart"
    assert plugins_to_try(["a.py"], f"b.py{os.pathsep}{os.pathsep}a.py") == ("a.py", "b.py")


@pytest.mark.parametrize(
    "source, says",
    [
        (
            "import nothing_of_that_name\n",
            "failed to load: ModuleNotFoundError: No module named 'nothing_of_that_name'",
        ),
        ("def broken(:\n", "failed to load: SyntaxError"),
        ("x = 1\n", "registers nothing"),
        (
            "from veil.engine import Metric, hookimpl\n"
            "class Free(Metric):\n    name = 'free'\n    title = 'Free'\n"
            "@hookimpl\ndef veil_register_metrics():\n    return [Free]\n",
            "is refused: metric Free ('free') declares no cost",
        ),
        (
            "from veil.engine import Algorithm, hookimpl\n"
            "class Taken(Algorithm):\n    name = 'mondrian'\n"
            "@hookimpl\ndef veil_register_algorithms():\n    return [Taken]\n",
            "is refused: method name 'mondrian' is already taken by veil",
        ),
    ],
)
def test_a_plugin_that_cannot_be_tried_stops_the_command_with_one_line(tmp_path, source, says):
    plugin = tmp_path / "mine.py"
    plugin.write_text(source, encoding="utf-8")
    result = veil(f"veil --plugin {plugin} plugins", tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"veil: error: plugin {plugin} ")
    assert says in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with pytest.raises(PluginError, match=re.escape(says.split(": ")[0])):
        make_registry(extra=[str(plugin)])


def test_a_missing_plugin_file_or_module_is_named():
    with pytest.raises(PluginError, match="plugin /no/such/plugin.py: no such file"):
        make_registry(extra=["/no/such/plugin.py"])
    with pytest.raises(PluginError, match="plugin no_such_module_here failed to load: ModuleNotFoundError"):
        make_registry(extra=["no_such_module_here"])


def test_the_worker_process_builds_the_same_plugins_from_the_recipe():
    registry = make_registry(extra=[str(EXAMPLES / "common_first.py")])
    assert registry.recipe["extra"] == (str(EXAMPLES / "common_first.py"),)
    again = make_registry(**registry.recipe)
    assert again.get("algorithm", "common-first") is registry.get("algorithm", "common-first")  # pickles by name


def test_the_launcher_hands_plugins_before_a_command_to_the_command_line():
    assert tried_plugins(["--plugin", "a.py", "--plugin=b", "run", "--demo"]) == (["a.py", "b"], ["run", "--demo"])
    assert not wants_desktop(["--plugin", "a.py", "run"])
    assert wants_desktop(["--plugin", "a.py"]) and wants_desktop(["--plugin", "a.py", "data.csv"])
    assert tried_plugins(["data.csv", "--plugin", "a.py"]) == ([], ["data.csv", "--plugin", "a.py"])


def test_the_desktop_loads_the_plugins_it_is_given():
    pytest.importorskip("PySide6")
    from veil.desktop.app import load_registry

    registry = load_registry((str(EXAMPLES / "common_first.py"),))
    assert "common-first" in registry.names("algorithm")
    assert registry.recipe["extra"] == (str(EXAMPLES / "common_first.py"),)  # the worker process loads it too


def test_a_model_that_needs_the_whole_table_passes_mondrians_cuts_and_fails_its_release():
    """What the guide warns of: Mondrian asks a model about the parts of each cut it tries, so a rule
    on a share of *all* records (judged from the view's own records) lets cuts stand whose release
    then fails the same rule, and the run is refused, never written."""
    from veil.engine import GroupVerdict, Judgement, PrivacyCheckFailed, PrivacyModel, hookimpl

    class WholeTableShare(PrivacyModel):
        name = "whole-table-share-test"
        title = "Groups of at least a share of all records (test)"
        judges = (Judgement.GROUPS,)
        judges_groups = True

        def check_groups(self, view, params):
            share = view.sizes / view.sizes.sum()
            return GroupVerdict(share, share >= 0.02, higher_is_safer=True)

    class Hooks:
        @staticmethod
        @hookimpl
        def veil_register_privacy_models():
            return [WholeTableShare]

    registry = make_registry(modules=[Hooks])
    spec = RunSpec(PluginCall("mondrian"), (PluginCall("whole-table-share-test"),), 0, ())
    with pytest.raises(PrivacyCheckFailed, match="the release of 'mondrian' fails whole-table-share-test"):
        execute(registry, load_demo().with_roles({"diagnosis_group": "insensitive"}), spec, Context(0))
