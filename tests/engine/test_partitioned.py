"""Releases in parts (engine/release/partitioned.py), without Spark: the groups counted from files are
judged as the models judge the release in memory; a method's parts that fail the model are never
released; the manifest's hashes and counts cover every part and ``veil verify`` checks them."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    GENERALISED_TABLE,
    TABLE,
    Algorithm,
    BadInput,
    Context,
    PartsRelease,
    PluginCall,
    PrivacyCheckFailed,
    Release,
    RunSpec,
    ScaleOut,
    bind_models,
    hookimpl,
    make_registry,
    param,
    verify_manifest,
)
from veil.engine.data.datasource import DataSource
from veil.engine.base.io import sha256_file
from veil.engine.release import part_counts
from veil.engine.release.manifest import manifest_digest, read_binding
from veil.engine.release.part_counts import judge_counts
from veil.engine.release.partitioned import export_parts
from veil.engine.release.report import regenerate_report
from veil.engine.release.signing import sign
from veil.engine.run.executors import read_counts

MODELS = [
    ["k-anonymity:k=6"],
    ["l-diversity:l=3,variant=distinct"],
    ["t-closeness:t=0.2"],
    ["delta-disclosure:delta=0.6"],
    ["k-anonymity:k=4", "l-diversity:l=2"],
]


@pytest.mark.parametrize("calls", MODELS)
def test_groups_counted_from_files_are_judged_as_the_release_in_memory(registry, tmp_path, calls):
    model = bind_models(registry, [PluginCall.parse(c) for c in calls])
    seen = set()
    for seed in range(8):  # up to 16 small groups: every model both holds and fails on some
        rng = np.random.default_rng(seed)
        n = int(rng.integers(15, 90))
        frame = pd.DataFrame(
            {
                "a": rng.choice(["x", "y", "z", "w"][: rng.integers(1, 5)], n),
                "b": rng.integers(0, rng.integers(1, 5), n).astype(str),
                "s": rng.choice(["p", "q", "r", "t"][: rng.integers(2, 5)], n),
            }
        )
        files = []
        for i, part in enumerate(np.array_split(np.arange(n), 3)):
            files.append(tmp_path / f"{seed}-{i}.csv")
            frame.iloc[part].to_csv(files[-1], index=False)
        counts, rows = read_counts(files, lambda p: pd.read_csv(p, dtype=str), ["a", "b", "s"])
        assert rows == [len(p) for p in np.array_split(np.arange(n), 3)]
        release = Release(GENERALISED_TABLE, frame, ("a", "b"), sensitive=("s",))
        expected = model.check(release)
        got = judge_counts(model, counts, ["a", "b"], ["s"])
        assert got.holds == expected.holds, (seed, got.message, expected.message)
        for each, verdict in zip(got.each, getattr(expected, "each", None) or [expected]):
            assert each["value"] == pytest.approx(float(verdict.value))
        seen.add(got.holds)
    assert seen == {True, False}


@dataclass(frozen=True)
class WriteParams:
    executor: str = param("here", choices=("here", "elsewhere"))
    size: int = param(1, minimum=1)  # how many records each group of the written release has


class WritesParts(Algorithm):
    """Writes its release in parts itself: every input record in groups of ``size``."""

    name = "writes-parts"
    title = "Writes parts (tests)"
    accepts = (TABLE,)
    needs_model = True
    Params = WriteParams
    scale_out = ScaleOut("elsewhere", reads_files=True)

    def run(self, data, model, params, ctx):  # pragma: no cover - only run_parts is used
        raise NotImplementedError

    def run_parts(self, source, model, params, ctx, scratch):
        frame = pd.read_csv(source.path, dtype=str)
        frame["q"] = [str(i // params.size) for i in range(len(frame))]
        files = []
        for i, part in enumerate(np.array_split(np.arange(len(frame)), 2)):
            files.append(scratch / f"out-{i}.csv")
            frame.iloc[part].to_csv(files[-1], index=False)
        return PartsRelease(
            tuple(files), "csv", tuple(frame.columns), ("q",), records=len(frame), input_rows=len(frame)
        )


@dataclass(frozen=True)
class CoarsenParams:
    executor: str = param("here", choices=("here", "elsewhere"))
    width: int = param(1, minimum=1)  # the width of the bands the quasi-identifier a is written in
    count_input: bool = param(True)  # give the input's classes on a (the report's risk before)


class CoarsensParts(WritesParts):
    """Writes its input's quasi-identifier ``a`` in bands of ``width`` and its sensitive ``s`` as they
    are, in three parts, with the input's classes on ``a`` when asked."""

    name = "coarsens-parts"
    title = "Coarsens parts (tests)"
    Params = CoarsenParams

    def run_parts(self, source, model, params, ctx, scratch):
        frame = pd.read_csv(source.path)
        written = pd.DataFrame({"a": [f"{v // params.width * params.width}+" for v in frame["a"]], "s": frame["s"]})
        files = []
        for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
            files.append(scratch / f"out-{i}.csv")
            written.iloc[part].to_csv(files[-1], index=False)
        classes = frame.groupby("a").size().to_numpy() if params.count_input else None
        return PartsRelease(
            tuple(files),
            "csv",
            ("a", "s"),
            ("a",),
            ("s",),
            records=len(frame),
            input_rows=len(frame),
            input_classes=classes,
        )


@dataclass(frozen=True)
class TwoSensitiveParams:
    executor: str = param("here", choices=("here", "elsewhere"))
    judge_both: bool = param(True)  # False: the parts say only s was judged


class WritesTwoSensitive(WritesParts):
    """Writes its input's a, s and t as they are, with s and t (or s alone) as the sensitive columns
    its parts were judged on."""

    name = "two-sensitive-parts"
    title = "Two sensitive columns in parts (tests)"
    Params = TwoSensitiveParams
    releases_sensitive = True

    def run_parts(self, source, model, params, ctx, scratch):
        frame = pd.read_csv(source.path)
        frame.to_csv(scratch / "out-0.csv", index=False)
        return PartsRelease(
            (scratch / "out-0.csv",),
            "csv",
            ("a", "s", "t"),
            ("a",),
            ("s", "t") if params.judge_both else ("s",),
            records=len(frame),
            input_rows=len(frame),
        )


class Coarsens(Algorithm):
    """:class:`CoarsensParts`' release, made in memory: the same records in one file."""

    name = "coarsens"
    title = "Coarsens in memory (tests)"
    accepts = (TABLE,)
    needs_model = True
    Params = CoarsenParams

    def run(self, data, model, params, ctx):
        frame = data.frame
        written = pd.DataFrame(
            {"a": [f"{int(v) // params.width * params.width}+" for v in frame["a"]], "s": frame["s"].astype(str)}
        )
        return Release(GENERALISED_TABLE, written, ("a",), sensitive=("s",))


@hookimpl
def veil_register_algorithms():
    return [WritesParts, CoarsensParts, WritesTwoSensitive, Coarsens]


def _export(tmp_path, size, k):
    registry = make_registry(modules=[sys.modules[__name__]])
    data = tmp_path / "in.csv"
    pd.DataFrame({"v": [str(i) for i in range(12)]}).to_csv(data, index=False)
    spec = RunSpec(
        PluginCall("writes-parts", {"executor": "elsewhere", "size": size}),
        [PluginCall("k-anonymity", {"k": k})],
        0,
        (),
    )
    return registry, export_parts(registry, spec, DataSource(path=str(data)), Context(0), tmp_path / "out")


def test_parts_failing_the_model_are_never_released(tmp_path):
    with pytest.raises(PrivacyCheckFailed, match="fails k-anonymity"):
        _export(tmp_path, 2, 3)
    assert not (tmp_path / "out").exists()


def test_the_manifest_covers_every_part_and_verify_checks_them(tmp_path):
    registry, manifest = _export(tmp_path, 3, 3)
    parts = manifest["output"]["parts_of"]
    assert [p["path"] for p in parts] == ["release.part-00000.csv", "release.part-00001.csv"]
    assert [p["rows"] for p in parts] == [6, 6] and manifest["output"]["rows"] == 12
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == [
        "manifest.json",
        *[p["path"] for p in parts],
        "report.html",
        "report.pdf",
    ]
    assert verify_manifest(registry, tmp_path / "out").holds
    second = tmp_path / "out" / parts[1]["path"]
    second.write_text(second.read_text() + "12,99\n")
    result = verify_manifest(registry, tmp_path / "out")
    assert not result.holds and "release.part-00001.csv was changed after export" in result.message
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    manifest["output"]["parts_of"][1]["path"] = "../in.csv"
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    edited = verify_manifest(registry, tmp_path / "out")
    assert not edited.holds and "changed after it was signed" in edited.message
    sign(manifest)  # even a manifest this workstation signed never names a file outside its folder
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BadInput, match="not a plain file name"):
        verify_manifest(registry, tmp_path / "out")


def test_a_new_export_replaces_the_earlier_ones_files_and_nothing_else(tmp_path):
    _export(tmp_path, 3, 3)
    mine = tmp_path / "out" / "release.notes.txt"  # the user's, in the same folder
    mine.write_text("keep me")
    extra = tmp_path / "out" / "release.part-00002.csv"  # as if the earlier export had had three parts
    extra.write_text("v,q\n")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    manifest["output"]["parts_of"].append({"path": extra.name, "sha256": sha256_file(extra), "rows": 0})
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    _export(tmp_path, 3, 3)  # a manifest edited after it was signed (or planted) names nothing to remove
    assert extra.exists() and mine.read_text() == "keep me"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    manifest["output"]["parts_of"].append({"path": extra.name, "sha256": sha256_file(extra), "rows": 0})
    sign(manifest)  # as this workstation's own export with three parts would have signed it
    (tmp_path / "out" / "manifest.json").write_text(json.dumps(manifest))
    _export(tmp_path, 4, 3)
    assert mine.read_text() == "keep me" and not extra.exists()
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == [
        "manifest.json",
        "release.notes.txt",
        "release.part-00000.csv",
        "release.part-00001.csv",
        "report.html",
        "report.pdf",
    ]


def _brute_risk(frame: pd.DataFrame, column: str, threshold: float = 0.2) -> dict:
    """The report's risk figures counted by hand: the records alike on ``column``."""
    sizes = frame.groupby(column).size()
    n = int(sizes.sum())
    return {
        "records": n,
        "groups": len(sizes),
        "smallest_group": int(sizes.min()),
        "max": 1 / sizes.min(),
        "avg": len(sizes) / n,
        "at_risk": float(sizes[1 / sizes > threshold].sum() / n),
    }


def test_a_release_in_parts_is_reported_as_its_manifest_and_its_parts_say(tmp_path):
    from test_report import lookup, parse  # beside this file

    registry = make_registry(modules=[sys.modules[__name__]])
    calls = [PluginCall.parse("k-anonymity:k=2"), PluginCall.parse("l-diversity:l=2,variant=distinct")]
    seen = set()
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(20, 80))
        frame = pd.DataFrame({"a": rng.integers(0, 40, n), "s": rng.choice(["p", "q", "r"], n)})
        data = tmp_path / f"in-{seed}.csv"
        frame.to_csv(data, index=False)
        out = tmp_path / f"out-{seed}"
        spec = RunSpec(
            PluginCall(
                "coarsens-parts",
                {"executor": "elsewhere", "width": (1, 10, 25)[seed % 3], "count_input": seed % 2 == 0},
            ),
            calls,
            0,
            (),
        )
        try:
            manifest = export_parts(registry, spec, DataSource(path=str(data)), Context(0), out)
        except PrivacyCheckFailed:
            assert not out.exists()  # a refused release leaves no report either
            seen.add(False)
            continue
        seen.add(True)
        parts = [p["path"] for p in manifest["output"]["parts_of"]]
        assert sorted(f.name for f in out.iterdir()) == ["manifest.json", *parts, "report.html", "report.pdf"]
        written = pd.concat([pd.read_csv(out / p, dtype=str) for p in parts], ignore_index=True)
        risk = manifest["risk"]
        for key, value in _brute_risk(written, "a").items():
            assert risk["after"][key] == pytest.approx(value), key
        if seed % 2 == 0:
            for key, value in _brute_risk(frame, "a").items():
                assert risk["before"][key] == pytest.approx(value), key
        else:
            assert risk["before"] is None and risk["before_note"] == part_counts.NO_BEFORE
        html = (out / "report.html").read_text(encoding="utf-8")
        shown = parse(html)
        assert "${" not in html and "None" not in "".join(shown.text)
        for key in (
            "risk.after.smallest_group",
            "risk.after.groups",
            "risk.after.max",
            "risk.after.at_risk",
            "risk.before.smallest_group",
            "risk.before.groups",
        ):
            expected = lookup(manifest, key.rsplit(".", 1)[0]) or {}
            assert shown.values[key] == (
                "" if expected.get(key.rsplit(".", 1)[1]) is None else repr(expected[key.rsplit(".", 1)[1]])
            ), key
        text = " ".join(" ".join(shown.text).split())
        assert 'data-status="holds"' in html and "k-anonymity with k = 2 holds" in text
        assert "l-diversity, on each sensitive column: s, effective l" in text
        assert "This file contains the column marked sensitive: s." in text
        assert part_counts.NO_CLASSIFIER in text and text.count("No classifier comparison") == 1
        assert (part_counts.BEFORE_SCOPE if seed % 2 == 0 else part_counts.NO_BEFORE) in text
        for p in manifest["output"]["parts_of"]:  # every part with its records and fingerprint
            assert shown.hashes[f"sha256.Part {parts.index(p['path']) + 1} ({p['rows']:,} records)"] == p["sha256"]
        assert read_binding(out / "report.html")["manifest-sha256"] == manifest_digest(manifest)
        assert manifest["export"]["files"]["report.pdf"] == sha256_file(out / "report.pdf")
        assert verify_manifest(registry, out).holds
    assert seen == {True, False}


def test_veil_report_recounts_a_release_in_parts_and_verify_names_a_report_of_another_export(tmp_path):
    registry, manifest = _export(tmp_path, 3, 3)
    out = tmp_path / "out"
    done = regenerate_report(registry, out)
    assert done.checks["release"] == "matches" and done.checks["recheck"].startswith("holds")
    assert done.checks["differences"] == [] and done.manifest["risk"]["after"] == manifest["risk"]["after"]
    assert verify_manifest(registry, out).holds  # a regenerated report still belongs to its export
    (out / "report.html").write_text(
        (tmp_path / "out" / "report.html").read_text().replace(manifest_digest(manifest), "0" * 64)
    )
    named = verify_manifest(registry, out)
    assert not named.holds and "report.html belongs to" in named.message
    part = out / manifest["output"]["parts_of"][0]["path"]
    part.write_text(part.read_text() + "12,3\n")
    assert regenerate_report(registry, out).checks["release"] == "changed"
    assert "cannot vouch" in (out / "report.html").read_text()


def test_every_column_marked_sensitive_is_judged_in_parts_and_released_without_asking(tmp_path):
    """Under a model that reads sensitive values, a method releasing them judges each column marked
    sensitive: both are released without --release-sensitive, each judged on the parts as written; a
    method whose parts were judged on one only is refused for the other, and nothing is written."""
    registry = make_registry(modules=[sys.modules[__name__]])
    data = tmp_path / "in.csv"
    pd.DataFrame({"a": [1, 1, 2, 2], "s": ["p", "q", "p", "q"], "t": ["x", "y", "x", "x"]}).to_csv(data, index=False)
    source = DataSource(path=str(data), roles={"a": "quasi-identifier", "s": "sensitive", "t": "sensitive"})
    model = [PluginCall.parse("l-diversity:l=2,variant=distinct")]
    with pytest.raises(PrivacyCheckFailed, match="t"):  # t has one value in the group a = 2
        export_parts(
            registry,
            RunSpec(PluginCall("two-sensitive-parts", {"executor": "elsewhere"}), model, 0, ()),
            source,
            Context(0),
            tmp_path / "both",
        )
    assert not (tmp_path / "both").exists()
    pd.DataFrame({"a": [1, 1, 2, 2], "s": ["p", "q", "p", "q"], "t": ["x", "y", "x", "y"]}).to_csv(data, index=False)
    manifest = export_parts(
        registry,
        RunSpec(PluginCall("two-sensitive-parts", {"executor": "elsewhere"}), model, 0, ()),
        source,
        Context(0),
        tmp_path / "both",
    )
    assert set(manifest["verdicts"][0]["by_column"]) == {"s", "t"} and manifest["verdict"]["holds"]
    with pytest.raises(BadInput, match="marked sensitive t"):
        export_parts(
            registry,
            RunSpec(PluginCall("two-sensitive-parts", {"executor": "elsewhere", "judge_both": False}), model, 0, ()),
            source,
            Context(0),
            tmp_path / "one",
        )
    assert not (tmp_path / "one").exists()


def test_the_input_of_a_release_in_parts_is_fingerprinted_file_or_folder(tmp_path):
    from veil.engine.release.partitioned import input_digest

    registry, manifest = _export(tmp_path, 3, 3)
    assert manifest["input"]["sha256"] == sha256_file(tmp_path / "in.csv")
    folder = tmp_path / "table"
    (folder / "part").mkdir(parents=True)
    for name, text in (("a.csv", "v\n1\n"), ("part/b.csv", "v\n2\n")):
        (folder / name).write_text(text)
    first = input_digest(folder)
    assert input_digest(folder) == first and input_digest(None) is None
    (folder / "part" / "b.csv").write_text("v\n3\n")
    changed = input_digest(folder)
    (folder / "part" / "b.csv").write_text("v\n2\n")
    (folder / "c.csv").write_text("")
    assert len({first, changed, input_digest(folder)}) == 3  # a file changed, then one added


def _shape(manifest: dict) -> dict:
    """The manifest's fields in order, with those of its sections every export writes."""
    sections = ("method", "privacy_model", "input", "output", "roles", "verdict", "export")
    return {
        "fields": list(manifest),
        # roles' "blanks" and "exact_quasi_identifiers" are written only where they apply
        **{
            k: [
                f
                for f in manifest[k]
                if f not in ("read", "schema", "parts", "parts_of", "blanks", "exact_quasi_identifiers")
            ]
            for k in sections
        },
    }


def test_a_release_in_parts_and_in_one_file_have_manifests_of_one_shape_written_alike(tmp_path):
    from veil.engine import execute, export_release

    registry = make_registry(modules=[sys.modules[__name__]])
    data = tmp_path / "données.csv"  # its path, in both manifests, is not ASCII
    pd.DataFrame({"a": [i % 20 for i in range(60)], "s": ["p", "q", "r"] * 20}).to_csv(data, index=False)
    model = [PluginCall.parse("k-anonymity:k=2")]
    params = {"width": 10, "count_input": False}
    source = DataSource(path=str(data))
    in_parts = export_parts(
        registry,
        RunSpec(PluginCall("coarsens-parts", {**params, "executor": "elsewhere"}), model, 0, ()),
        source,
        Context(0),
        tmp_path / "parts",
    )
    result = execute(registry, source.load(registry), RunSpec(PluginCall("coarsens", params), model, 0, ()))
    in_one = export_release(registry, result, tmp_path / "one", source=source).manifest

    assert _shape(in_parts) == _shape(in_one)
    for folder, manifest in ((tmp_path / "parts", in_parts), (tmp_path / "one", in_one)):
        text = (folder / "manifest.json").read_text(encoding="utf-8")
        assert json.loads(text) == manifest
        assert text == json.dumps(manifest, indent=2, allow_nan=False) + "\n"  # the same JSON settings
        assert text.isascii() and "donn\\u00e9es.csv" in text  # the input's path, escaped alike
    # the same records, judged alike
    written = pd.concat(
        [pd.read_csv(tmp_path / "parts" / p["path"], dtype=str) for p in in_parts["output"]["parts_of"]]
    )
    one = pd.read_csv(tmp_path / "one" / in_one["output"]["path"], dtype=str)
    assert sorted(map(tuple, written.to_numpy())) == sorted(map(tuple, one.to_numpy()))
    assert in_parts["verdict"]["holds"] is in_one["verdict"]["holds"] is True


def test_verify_names_a_stray_part_in_the_folder(tmp_path, capsys):
    """A part the manifest does not list (a raw record in ``release.part-99999.csv``) is taken in by
    whatever reads the folder's parts: ``veil verify`` names it and fails."""
    from veil.cli import main

    _export(tmp_path, 3, 3)
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "out")]) == 0
    (tmp_path / "out" / "release.part-99999.csv").write_text("v\n99\n")
    assert main(["verify", str(tmp_path / "out")]) == 1
    said = capsys.readouterr().out
    assert "release.part-99999.csv lies beside the release but is not part of the export" in said, said


def test_the_utility_of_a_release_in_parts_is_read_a_part_at_a_time_with_the_figures_of_one_file(tmp_path):
    import dataclasses

    from veil.engine import execute, export_release
    from veil.engine.release.utility import read_folder_utility

    registry = make_registry(modules=[sys.modules[__name__]])
    data = tmp_path / "in.csv"
    pd.DataFrame({"a": [i % 20 for i in range(60)], "s": ["p", "q", "r", "q"] * 15}).to_csv(data, index=False)
    model = [PluginCall.parse("k-anonymity:k=2")]
    params = {"width": 10, "count_input": False}
    source = DataSource(path=str(data))
    spec = RunSpec(PluginCall("coarsens-parts", {**params, "executor": "elsewhere"}), model, 0, ())
    export_parts(registry, spec, source, Context(0), tmp_path / "parts")
    result = execute(registry, source.load(registry), RunSpec(PluginCall("coarsens", params), model, 0, ()))
    export_release(registry, result, tmp_path / "one", source=source)

    in_parts, in_one = (read_folder_utility(registry, tmp_path / d) for d in ("parts", "one"))
    read = []
    spied = dataclasses.replace(in_parts, read=lambda path: read.append(path.name) or in_parts.read(path))
    figures = spied.utility()
    assert read == [f"release.part-{i:05d}.csv" for i in range(3)]  # each part read once, in turn
    assert figures.to_dict() == in_one.utility().to_dict()
    assert figures.rows_after == 60 and dict(figures.columns["a"].after) == {"0+": 30, "10+": 30}
    assert dict(figures.columns["s"].after) == {"p": 15, "q": 30, "r": 15}
    for got, want in zip(spied.contingency("a", "s"), in_one.contingency("a", "s")):
        assert got.equals(want)
    # a < 10 are the records i with i % 20 < 10: their i % 4 are 0 1 2 3 0 1 2 3 0 1, three times
    assert spied.contingency("a", "s")[1].loc["0+"].to_dict() == {"p": 9, "q": 15, "r": 6}
