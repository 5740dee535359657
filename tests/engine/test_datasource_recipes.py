"""Data sources that append files, drop missing values, keep columns and attach hierarchies."""

import pytest

from veil.engine import BadInput, DataSource, make_registry


def _write(tmp_path):
    (tmp_path / "a.csv").write_text("age,city,dx,extra\n30,A1,flu,1\n40,?,hiv,2\n50,B1,cold,3\n")
    (tmp_path / "b.csv").write_text("junk line\n60,A2,flu,4\n?,B2,hiv,5\n")
    (tmp_path / "city.csv").write_text("A1;A;*\nA2;A;*\nB1;B;*\nB2;B;*\n")


def test_append_missing_columns_and_hierarchies(tmp_path):
    _write(tmp_path)
    spec = {
        "path": "a.csv",
        "append": [{"path": "b.csv", "skip_rows": 1, "header": False}],
        "missing": ["?"],
        "drop_missing": True,
        "columns": ["age", "city", "dx"],
        "hierarchies": {"city": "city.csv"},
        "sensitive": "dx",
        "quasi_identifiers": ["age", "city"],
    }
    source = DataSource.from_dict(spec, tmp_path)
    table = source.load(make_registry())
    assert table.frame["age"].tolist() == [30, 50, 60] and table.columns == ["age", "city", "dx"]
    assert table.schema["city"].hierarchy.leaves_under("A") == ("A1", "A2")
    assert table.schema["dx"].role.value == "sensitive"
    again = DataSource.from_dict(source.to_dict()).load(make_registry())
    assert again.frame.equals(table.frame) and again.sha256 == table.sha256 and table.sha256


def test_bad_recipes_are_refused_naming_the_field(tmp_path):
    _write(tmp_path)
    with pytest.raises(BadInput, match="'append' must be"):
        DataSource.from_dict({"path": "a.csv", "append": "b.csv"}, tmp_path)
    with pytest.raises(BadInput, match="no column named 'zzz'"):
        DataSource.from_dict({"path": "a.csv", "columns": ["zzz"], "missing": ["?"]}, tmp_path).load(make_registry())
    with pytest.raises(BadInput, match="3 columns, but 4 column names"):
        DataSource.from_dict({"path": "a.csv", "append": [{"path": "city.csv", "header": False}]}, tmp_path).load(
            make_registry()
        )


def test_recode_maps_cell_texts_after_appending(tmp_path):
    # adult.test's labels carry a trailing dot: recoding merges them with adult.data's
    (tmp_path / "a.csv").write_text("age,income\n30,<=50K\n40,>50K\n")
    (tmp_path / "b.csv").write_text("|1x3 Cross validator\n50,<=50K.\n60,>50K.\n70,>50K\n")
    spec = {
        "path": "a.csv",
        "append": [{"path": "b.csv", "skip_rows": 1, "header": False}],
        "recode": {"income": {"<=50K.": "<=50K", ">50K.": ">50K"}},
        "target": "income",
    }
    source = DataSource.from_dict(spec, tmp_path)
    table = source.load(make_registry())
    assert table.frame["income"].tolist() == ["<=50K", ">50K", "<=50K", ">50K", ">50K"]
    assert table.frame["age"].tolist() == [30, 40, 50, 60, 70]
    again = DataSource.from_dict(source.to_dict()).load(make_registry())
    assert again.frame.equals(table.frame)
    plain = DataSource.from_dict({k: v for k, v in spec.items() if k != "recode"}, tmp_path).load(make_registry())
    assert set(plain.frame["income"]) == {"<=50K", ">50K", "<=50K.", ">50K."}
    with pytest.raises(BadInput, match="recode: no column named 'salary'"):
        DataSource.from_dict({"path": "a.csv", "recode": {"salary": {"a": "b"}}}, tmp_path).load(make_registry())
    with pytest.raises(BadInput, match="recode of 'income' must map cell texts"):
        DataSource.from_dict({"path": "a.csv", "recode": {"income": ["<=50K."]}}, tmp_path)


@pytest.mark.dataset
def test_the_paper_001_adult_table_has_45222_records(datasets_dir):
    import json
    from pathlib import Path

    import veil.resources

    recipe = Path(veil.resources.__file__).parent / "studies" / "paper001_adult_data.json"
    spec = json.loads(recipe.read_text())
    table = DataSource.from_dict(spec, recipe.parent).load(make_registry())
    assert table.n_rows == 45_222
    assert table.schema.by_role(table.schema["occupation"].role) == ["occupation"]
    assert table.schema["education"].hierarchy is not None
