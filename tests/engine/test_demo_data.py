"""The bundled demo table: reproducible from its script, well formed, and worth anonymising."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
RESOURCES = REPO / "resources"
SCRIPT = REPO / "scripts" / "make_demo_data.py"
KINDS = {"numeric", "categorical", "binary", "date"}
ROLES = {"identifier", "quasi-identifier", "sensitive", "target", "insensitive"}


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return pd.read_csv(RESOURCES / "demo_hospital.csv", dtype={"admission_month": str})


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads((RESOURCES / "demo_hospital.json").read_text(encoding="utf-8"))


def by_role(schema: dict, role: str, kind: str | None = None) -> list[str]:
    return [c["name"] for c in schema["columns"] if c["role"] == role and kind in (None, c["kind"])]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["demo_hospital.csv", "demo_hospital.json"])
def test_script_reproduces_the_committed_files_byte_for_byte(regenerated, name):
    assert sha256(regenerated / name) == sha256(RESOURCES / name)


def test_csv_is_utf8_with_lf_line_endings_and_small():
    raw = (RESOURCES / "demo_hospital.csv").read_bytes()
    raw.decode("utf-8")
    assert b"\r" not in raw and raw.endswith(b"\n")
    assert len(raw) < 1_500_000


def test_shape_identifiers_and_flags(frame, schema):
    assert len(frame) == 5_000
    identifiers = by_role(schema, "identifier")
    assert set(identifiers) == {"patient_name", "mrn"}
    for column in identifiers:
        assert frame[column].is_unique, column
    assert frame["mrn"].str.fullmatch(r"MRN-\d{7}").all()
    flags = by_role(schema, "insensitive", "binary")
    assert len(flags) >= 28
    for column in [*flags, "readmitted_30d"]:
        assert set(frame[column].unique()) <= {0, 1}, column
        assert 0.01 < frame[column].mean() < 0.6, column  # every flag is present, none is the norm
    assert frame["age"].between(18, 95).all()
    assert set(frame["sex"]) == {"F", "M"}


def test_schema_lists_every_column_once_with_valid_kind_and_role(frame, schema):
    assert schema["source"] == "synthetic, made by scripts/make_demo_data.py"
    assert schema["suggested"] == {"model": "k-anonymity", "k": 5}
    names = [c["name"] for c in schema["columns"]]
    assert names == list(frame.columns)
    for column in schema["columns"]:
        assert column["kind"] in KINDS and column["role"] in ROLES, column
        assert column["name"].isascii() and column["name"] == column["name"].lower()
        assert column["description"]
    assert by_role(schema, "target") == ["readmitted_30d"]
    assert by_role(schema, "sensitive") == ["diagnosis_group"]


def test_flags_are_correlated_as_in_a_real_hospital(frame):
    def lift(drug: str, condition: str) -> float:
        return frame.loc[frame[condition] == 1, drug].mean() / frame.loc[frame[condition] == 0, drug].mean()

    for drug, condition in [
        ("metformin", "diabetes"),
        ("insulin", "diabetes"),
        ("ace_inhibitor", "hypertension"),
        ("statin", "hypertension"),
        ("inhaler", "copd"),
        ("anticoagulant", "atrial_fibrillation"),
    ]:
        assert lift(drug, condition) > 3, (drug, condition)
    old = frame["age"] >= 70
    assert frame.loc[old, "heart_failure"].mean() > 3 * frame.loc[~old, "heart_failure"].mean()


def test_target_is_learnable_but_not_trivially(frame, schema):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    features = [*by_role(schema, "insensitive", "binary"), "age"]
    x = frame[features].to_numpy(dtype=float)
    x[:, -1] = (x[:, -1] - 60) / 15
    y = frame["readmitted_30d"].to_numpy()
    assert 0.15 <= y.mean() <= 0.20
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    auc = cross_val_score(LogisticRegression(max_iter=1000), x, y, cv=folds, scoring="roc_auc").mean()
    assert 0.62 < auc < 0.92


def class_sizes(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Size of each record's equivalence class on ``columns``."""
    return frame.groupby(columns)[columns[0]].transform("size").to_numpy()


def test_quasi_identifiers_single_out_most_patients_until_generalised(frame):
    assert (class_sizes(frame, ["age", "sex", "postcode_district"]) == 1).mean() > 0.5
    coarse = frame.assign(postcode_area=frame["postcode_district"].str.extract(r"^([A-Z]+)", expand=False))
    assert coarse["postcode_area"].nunique() >= 20
    assert class_sizes(coarse, ["sex", "postcode_area"]).min() >= 20
