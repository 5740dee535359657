"""Hierarchies as first-class: generators for codes, dates and chosen groups; kept in the schema,
the project file and the manifest; ``--hierarchy COL=FILE`` on the command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from veil.engine import BadInput, DataSource, Hierarchy, Project, Schema, load_demo
from veil.cli import main


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text("ABCD1234", min_size=1, max_size=5), min_size=1, max_size=20, unique=True))
def test_masking_hides_one_more_character_from_the_right_per_level(codes):
    h = Hierarchy.masking(codes)
    width = max(map(len, codes))
    assert h.height == width  # above the leaf: width - 1 masked levels, then the root
    for code in codes:
        padded = code.ljust(width, "*")
        for level in range(1, width):
            assert h.generalise(code, level) == padded[: width - level] + "*" * level
        assert h.generalise(code, h.height) == "*"


def test_masking_groups_codes_sharing_a_prefix():
    h = Hierarchy.masking(["HD4", "HD7", "HX1", "Q2"])
    assert h.lca(["HD4", "HD7"]).label == "HD*" and h.lca(["HD4", "HX1"]).label == "H**"
    assert [h.generalise("Q2", lv) for lv in (1, 2, 3)] == ["Q2*", "Q**", "*"]  # padded to the longest code


def test_dates_go_day_month_year():
    h = Hierarchy.dates(["2024-03-17", "2024-03-02", "2023-12-31"])
    assert [h.generalise("2024-03-17", lv) for lv in range(4)] == ["2024-03-17", "2024-03", "2024", "*"]
    assert h.lca(["2024-03-17", "2024-03-02"]).label == "2024-03"
    with pytest.raises(BadInput, match="not a date"):
        Hierarchy.dates(["2024-03-17", "soon"])


def test_grouping_chosen_values():
    h = Hierarchy.grouping(["FR", "DE", "JP", "US"], {"Europe": ["FR", "DE"], "Asia": ["JP"]}, other="Other")
    assert [h.generalise(v, 1) for v in ("FR", "DE", "JP", "US")] == ["Europe", "Europe", "Asia", "Other"]
    with pytest.raises(BadInput, match="two groups"):
        Hierarchy.grouping(["FR"], {"A": ["FR"], "B": ["FR"]})
    with pytest.raises(BadInput, match="does not occur"):
        Hierarchy.grouping(["FR"], {"A": ["XX"]})


def test_a_hierarchy_is_kept_in_the_schema_and_the_project_file(tmp_path):
    table = load_demo()
    h = Hierarchy.masking(table.frame["postcode_district"], name="postcode_district")
    table = table.with_hierarchy("postcode_district", h)
    back = Schema.from_dict(json.loads(json.dumps(table.schema.to_dict())))
    assert back["postcode_district"].hierarchy == h
    Project(DataSource(demo=True), schema=table.schema).save(tmp_path / "p.json")
    loaded = Project.load(tmp_path / "p.json").load_data(None)
    assert loaded.schema["postcode_district"].hierarchy == h


def test_cli_hierarchy_flag_reaches_the_manifest(tmp_path, capsys):
    frame = pd.DataFrame({"zip": ["13053", "13068", "13053", "14850", "14853", "14850"] * 3, "y": [0, 1] * 9})
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    arx = tmp_path / "zip.csv"
    arx.write_text(Hierarchy.masking(frame["zip"]).to_arx_csv(), encoding="utf-8")
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                "--data",
                str(data),
                "--target",
                "y",
                "--quasi",
                "zip",
                "--hierarchy",
                f"zip={arx}",
                "--method",
                "all-features",
                "--metrics",
                "sfc",
                "--no-report",
                "--out",
                str(out),
            ]
        )
        == 0
    ), capsys.readouterr().err
    schema = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["input"]["schema"]
    assert {e["name"]: e.get("hierarchy") is not None for e in schema} == {"zip": True, "y": False}
    assert main(["run", "--data", str(data), "--hierarchy", "zip", "--method", "all-features", "--out", str(out)]) == 2
    assert "COLUMN=FILE" in capsys.readouterr().err


def test_the_builder_and_its_preview_count_every_record_once():
    from veil.engine.data.hierarchy import build_hierarchy, preview_groups

    ages = load_demo().frame["age"]
    h = build_hierarchy("intervals", ages, width=10)
    for level in range(h.height + 1):
        groups = preview_groups(h, ages, level)
        assert groups["records"].sum() == ages.notna().sum()
    assert len(preview_groups(h, ages, h.height)) == 1
    with pytest.raises(BadInput, match="NAME: value"):
        build_hierarchy("grouping", ["FR"], groups="FR DE")
    with pytest.raises(BadInput, match="unknown kind"):
        build_hierarchy("spiral", ["FR"])
