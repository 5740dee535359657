"""``veil run --hierarchies DIR`` and a data section's ``"hierarchy_folder"``: a folder's files matched
to the columns by name exactly as the desktop's "Load hierarchies from a folder…" matches them (ARX's
``*_hierarchy_<column>.csv`` before a plain ``<column>.csv``), what matched and what was not used
printed, and the release the one the same hierarchies given one by one make."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.engine import DataSource, read_hierarchy_folder


@pytest.fixture
def folder(tmp_path):
    """Towns, ages and sexes; the towns' and ages' hierarchies in ARX's name and a plain name, a
    file naming sex whose values are not the data's, and a file naming no column."""
    rng = np.random.default_rng(3)
    rows = [(town, int(rng.integers(20, 70)), str(rng.choice(["F", "M"]))) for town in "abcd" for _ in range(30)]
    pd.DataFrame(rows, columns=["town", "age", "sex"]).to_csv(tmp_path / "in.csv", index=False)
    hierarchies = tmp_path / "hierarchies"
    hierarchies.mkdir()
    (hierarchies / "in_hierarchy_town.csv").write_text("a;north;*\nb;north;*\nc;south;*\nd;south;*\n")
    (hierarchies / "town.csv").write_text("a;*\nb;*\nc;*\nd;*\n")  # the ARX-named file wins
    (hierarchies / "age.csv").write_text("".join(f"{a};{a // 10 * 10}s;*\n" for a in range(20, 70)))
    (hierarchies / "sex.csv").write_text("female;*\nmale;*\n")  # not the data's values
    (hierarchies / "notes.csv").write_text("x;*\n")
    return tmp_path


def _args(folder, out, *given):
    return [
        "run",
        "--data",
        folder / "in.csv",
        "--quasi",
        "town,age",
        *given,
        "--method",
        "global-recoding",
        "--model",
        "k-anonymity:k=10",
        "--out",
        folder / out,
        "--no-report",
    ]


def test_a_folder_gives_the_release_its_files_given_one_by_one_give(veil, folder):
    hierarchies = folder / "hierarchies"
    by_folder = veil(*_args(folder, "by-folder", "--hierarchies", hierarchies))
    assert by_folder.code == 0, by_folder.err
    lines = by_folder.err.splitlines()
    assert "  town ← in_hierarchy_town.csv (levels 0–2)" in lines
    assert "  age ← age.csv (levels 0–2)" in lines
    assert any(line.startswith("  sex: sex.csv not used: ") for line in lines)  # and why
    assert "  town: town.csv not used: in_hierarchy_town.csv is taken" in lines
    assert "  not used, naming no column: notes.csv" in lines
    one_by_one = veil(
        *_args(
            folder,
            "one-by-one",
            "--hierarchy",
            f"town={hierarchies / 'in_hierarchy_town.csv'}",
            "--hierarchy",
            f"age={hierarchies / 'age.csv'}",
        )
    )
    assert one_by_one.code == 0, one_by_one.err
    a, b = (json.loads((folder / d / "manifest.json").read_text(encoding="utf-8")) for d in ("by-folder", "one-by-one"))
    assert a["details"]["generalisation"]["levels"] == b["details"]["generalisation"]["levels"]
    assert (folder / "by-folder" / a["output"]["path"]).read_bytes() == (
        folder / "one-by-one" / b["output"]["path"]
    ).read_bytes()


def test_a_hierarchy_given_by_name_takes_precedence_and_a_project_names_its_folder(veil, folder):
    project = {
        "veil_project": 1,
        "data": {
            "path": "in.csv",
            "quasi_identifiers": ["town", "age"],
            "hierarchy_folder": "hierarchies",  # beside the project file
            "hierarchies": {"town": "hierarchies/town.csv"},
        },
        "runs": [{"method": {"name": "global-recoding"}, "model": {"name": "k-anonymity", "params": {"k": 10}}}],
    }
    path = folder / "p.veil.json"
    path.write_text(json.dumps(project), encoding="utf-8")
    done = veil("run", path, "--out", folder / "out", "--no-report")
    assert done.code == 0, done.err
    assert "  town: in_hierarchy_town.csv not used: its hierarchy is given by name" in done.err.splitlines()
    manifest = json.loads((folder / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["details"]["generalisation"]["lattice_nodes"] == 2 * 3  # town.csv's 2 levels, not 3


def test_the_cli_and_the_desktop_read_a_folder_alike(folder, registry):
    source = DataSource(path=str(folder / "in.csv"), hierarchy_folder=str(folder / "hierarchies"))
    table = source.load(registry)
    desktop = read_hierarchy_folder(DataSource(path=str(folder / "in.csv")).load(registry), folder / "hierarchies")
    assert {c: h.to_arx_csv() for c, h in desktop.usable().items()} == {
        c.name: c.hierarchy.to_arx_csv() for c in table.schema.columns if c.hierarchy is not None
    }
    assert set(desktop.usable()) == {"town", "age"}


def test_a_model_parameter_out_of_range_is_the_only_line_before_anything_is_read(veil, folder):
    """A privacy model's parameter out of range is refused in one line, before the data and the
    hierarchy folder are read (their listing would otherwise come first)."""
    from .helpers import assert_bad_input

    out = veil(*_args(folder, "bad", "--hierarchies", folder / "hierarchies"), "--model", "k-anonymity:k=0")
    assert_bad_input(out)
    assert "'k'" in out.err and not (folder / "bad").exists()
