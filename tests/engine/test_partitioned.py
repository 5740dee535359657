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

from veil.engine import (GENERALISED_TABLE, TABLE, Algorithm, BadInput, Context, PartsRelease, PluginCall,
                         PrivacyCheckFailed, Release, RunSpec, ScaleOut, bind_models, hookimpl, make_registry, param,
                         verify_manifest)
from veil.engine.data.datasource import DataSource
from veil.engine.base.io import sha256_file
from veil.engine.release.partitioned import export_parts, judge_counts
from veil.engine.release.signing import sign
from veil.engine.run.executors import read_counts

MODELS = [["k-anonymity:k=6"], ["l-diversity:l=3,variant=distinct"], ["t-closeness:t=0.2"],
          ["delta-disclosure:delta=0.6"], ["k-anonymity:k=4", "l-diversity:l=2"]]


@pytest.mark.parametrize("calls", MODELS)
def test_groups_counted_from_files_are_judged_as_the_release_in_memory(registry, tmp_path, calls):
    model = bind_models(registry, [PluginCall.parse(c) for c in calls])
    seen = set()
    for seed in range(8):  # up to 16 small groups: every model both holds and fails on some
        rng = np.random.default_rng(seed)
        n = int(rng.integers(15, 90))
        frame = pd.DataFrame({"a": rng.choice(["x", "y", "z", "w"][:rng.integers(1, 5)], n),
                              "b": rng.integers(0, rng.integers(1, 5), n).astype(str),
                              "s": rng.choice(["p", "q", "r", "t"][:rng.integers(2, 5)], n)})
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
        return PartsRelease(tuple(files), "csv", tuple(frame.columns), ("q",), records=len(frame),
                            input_rows=len(frame))


@hookimpl
def veil_register_algorithms():
    return [WritesParts]


def _export(tmp_path, size, k):
    registry = make_registry(modules=[sys.modules[__name__]])
    data = tmp_path / "in.csv"
    pd.DataFrame({"v": [str(i) for i in range(12)]}).to_csv(data, index=False)
    spec = RunSpec(PluginCall("writes-parts", {"executor": "elsewhere", "size": size}),
                   [PluginCall("k-anonymity", {"k": k})], 0, ())
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
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == ["manifest.json", *[p["path"] for p in parts],
                                                                   "report.html", "report.pdf"]
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
        "manifest.json", "release.notes.txt", "release.part-00000.csv", "release.part-00001.csv", "report.html",
        "report.pdf"]
