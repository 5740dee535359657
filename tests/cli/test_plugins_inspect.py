"""`veil plugins` (text and JSON) and `veil inspect FILE`."""

from __future__ import annotations

import json

import pytest

from veil.engine import make_registry

from .helpers import HEADERLESS_CSV, SMALL_CSV, assert_bad_input, sha256

EXPORTERS = {"csv", "tsv", "xlsx", "parquet", "spmf"}


def test_plugins_json_lists_every_plugin(veil):
    result = veil("plugins", "--json")
    assert result.code == 0 and result.err == ""
    listing = json.loads(result.out)
    assert listing["failed"] == []
    plugins = listing["plugins"]
    for p in plugins:
        assert {"kind", "name", "title", "paper", "params"} <= set(p)
        assert p["name"] and p["title"] and isinstance(p["params"], list)
    names = {(p["kind"], p["name"]) for p in plugins}
    assert ("algorithm", "all-features") in names
    assert ("privacy-model", "k-anonymity") in names
    assert {n for k, n in names if k == "exporter"} >= EXPORTERS
    k = next(p for p in plugins if p["name"] == "k-anonymity")
    assert k["paper"] and [s["name"] for s in k["params"]] == ["k"]
    assert k["params"][0]["type"] == "int" and k["params"][0]["minimum"] == 1
    registry = make_registry()
    assert len(plugins) == len(registry.all())


def test_plugins_text_has_one_line_per_plugin(veil):
    result = veil("plugins")
    assert result.code == 0
    registry = make_registry()
    heads = [line.split()[:2] for line in result.out.splitlines() if not line.startswith(" ")]
    assert heads == [[i.cls.kind, i.cls.name] for i in registry.all()]
    assert "k = 5" in result.out


def test_inspect_reports_rows_columns_and_kinds(veil, small_csv):
    before = sha256(small_csv)
    result = veil("inspect", small_csv)
    assert result.code == 0, result.err
    text = result.out
    assert "rows" in text and str(SMALL_CSV.count("\n") - 1) in text
    lines = {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}
    assert lines["rows"][1] == "12" and lines["columns"][1] == "6"
    assert lines["smoker"][1] == "binary"
    assert lines["age_band"][1] == "categorical"
    assert lines["name"][2] == "identifier"
    assert sha256(small_csv) == before


def test_inspect_headerless_with_names(veil, write_file, importers):
    data = write_file("numbers.csv", HEADERLESS_CSV)
    result = veil("inspect", data, "--names", "a,b,score,label")
    assert result.code == 0, result.err
    lines = {line.split()[0]: line.split() for line in result.out.splitlines() if line.strip()}
    assert lines["rows"][1] == "6"
    assert lines["score"][1] == "numeric" and lines["a"][1] == "binary"
    default = veil("inspect", data)
    assert "col4" in default.out


@pytest.mark.parametrize(
    "content, extra",
    [(b"", ()), (b"a,b\n1,2,3\n4\n", ()), (b"1,2\n", ("--names", "a"))],
    ids=["empty", "ragged", "names mismatch"],
)
def test_inspect_bad_file(veil, write_file, importers, content, extra):
    data = write_file("bad.csv", content)
    assert_bad_input(veil("inspect", data, *extra))
    assert data.read_bytes() == content


def test_inspect_missing_file(veil, tmp_path):
    assert_bad_input(veil("inspect", tmp_path / "gone.csv"))


def test_failed_third_party_plugin_is_listed_not_fatal(monkeypatch, capsys):
    import json
    import types

    from veil.cli import program as cli

    from veil.engine import hookimpl, make_registry

    broken = types.ModuleType("broken_plugin")

    def hook():
        raise RuntimeError("cannot start")

    broken.veil_register_algorithms = hookimpl(hook)
    monkeypatch.setattr(cli, "make_registry", lambda plugins=(): make_registry(modules=[broken]))
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "FAILED" in out and "broken_plugin" in out and "all-features" in out
    assert cli.main(["plugins", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["failed"][0]["source"] == "broken_plugin"
