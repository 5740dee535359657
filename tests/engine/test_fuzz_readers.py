"""Property-based fuzzing of every importer and every JSON reader: whatever the bytes or the JSON,
the only exception that escapes is BadInput (the command line's exit 2, the desktop's dialog).

Inputs are mutations of valid files (bytes flipped, cut, spliced) and JSON documents of random
shape whose keys are drawn from the ones the readers look for, so the fuzz reaches past the first
check."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.engine import (
    BadInput,
    ImportOptions,
    Project,
    Study,
    make_registry,
    read_data,
    read_manifest,
    verify_manifest,
)

SMALL_CSV = "name,age_band,sex,outcome\nAnn,20-29,F,1\nBob,20-29,F,0\nCid,30-39,M,0\nDee,30-39,M,1\n"

FUZZ = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
REGISTRY = make_registry()


def seed_files() -> dict[str, bytes]:
    """One valid file per importer, the starting points of the mutations."""
    frame = pd.read_csv(io.StringIO(SMALL_CSV))
    excel, parquet = io.BytesIO(), io.BytesIO()
    frame.to_excel(excel, index=False)
    frame.to_parquet(parquet, index=False)
    return {
        "csv": SMALL_CSV.encode(),
        "excel": excel.getvalue(),
        "parquet": parquet.getvalue(),
        "arff": b"@relation t\n@attribute a numeric\n@attribute b {x,y}\n@data\n1,x\n2,y\n3,x\n",
        "libsvm": b"1 1:0.5 3:1\n-1 2:1 3:0.25\n1 1:1\n",
        "transactions": b"1 2 3\n2 3\n1 4 5\n3 5\n",
        "mat": b"MATLAB 5.0 MAT-file" + bytes(108) + b"\x00\x01IM",
    }


SEEDS = seed_files()
EXTENSION = {name: REGISTRY.get("importer", name).extensions[0] for name in REGISTRY.names("importer")}


@st.composite
def mutated(draw, base: bytes) -> bytes:
    """``base`` with a few bytes overwritten, a slice cut out, random bytes spliced in or a truncation."""
    data = bytearray(base)
    for _ in range(draw(st.integers(0, 4))):
        if not data:
            break
        op = draw(st.sampled_from(["flip", "cut", "splice", "truncate"]))
        i = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[i : i + draw(st.integers(1, 64))]
        elif op == "splice":
            data[i:i] = draw(st.binary(min_size=1, max_size=32))
        else:
            del data[i:]
    return bytes(data)


def only_bad_input(call) -> None:
    try:
        call()
    except BadInput:
        pass


@pytest.mark.parametrize("importer", sorted(REGISTRY.names("importer")))
@FUZZ
@given(data=st.data())
def test_an_importer_raises_nothing_but_bad_input(importer, data):
    base = SEEDS.get(importer, b"")
    content = data.draw(st.one_of(mutated(base), st.binary(max_size=512)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzz{EXTENSION[importer]}"
        path.write_bytes(content)
        only_bad_input(lambda: read_data(REGISTRY, path, ImportOptions(fmt=importer)))
        assert path.read_bytes() == content  # an importer never modifies its input


@pytest.mark.parametrize("importer", ["csv", "excel", "parquet"])
@FUZZ
@given(content=st.binary(max_size=2048))
def test_detection_raises_nothing_but_bad_input(importer, content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzz{EXTENSION[importer]}"
        path.write_bytes(content)
        only_bad_input(lambda: read_data(REGISTRY, path))


# -- JSON -------------------------------------------------------------------------------------------------------
KEYS = [
    "veil_project",
    "data",
    "schema",
    "recipe",
    "runs",
    "results",
    "path",
    "demo",
    "names",
    "fmt",
    "delimiter",
    "encoding",
    "header",
    "skip_rows",
    "roles",
    "kinds",
    "target",
    "sensitive",
    "identifiers",
    "quasi_identifiers",
    "sha256",
    "method",
    "model",
    "seed",
    "metrics",
    "name",
    "params",
    "kind",
    "role",
    "steps",
    "column",
    "rule",
    "bins",
    "cuts",
    "values",
    "value",
    "fitted",
    "methods",
    "sweep",
    "repeats",
    "charts",
    "label",
    "fixed",
    "features",
    "max_runs",
    "output",
    "privacy_model",
    "format",
    "risk",
    "threshold",
    "before",
    "after",
    "utility",
    "verdict",
    "input",
    "read",
    "quasi",
    "k",
    "epsilon",
    "m",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 2**33),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "",
            "in.csv",
            "k-anonymity",
            "all-features",
            "one-hot",
            "numeric",
            "target",
            "sex",
            "csv",
            "0" * 64,
            "../etc",
            "k-anonymity:k=2",
        ]
    ),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=25,
)


def document(required: dict) -> st.SearchStrategy:
    """A JSON object holding ``required``'s keys (with fuzzed or valid values) and random others."""
    fields = {k: st.one_of(st.just(v), JSON) for k, v in required.items()}
    return st.fixed_dictionaries(fields, optional={k: JSON for k in KEYS[:20] if k not in required})


def write_json(folder: Path, name: str, value) -> Path:
    path = folder / name
    path.write_text(json.dumps(value, allow_nan=True), encoding="utf-8")
    (folder / "in.csv").write_text(SMALL_CSV, encoding="utf-8")
    return path


@FUZZ
@given(
    value=st.one_of(
        JSON, document({"veil_project": 1, "data": {"path": "in.csv"}, "runs": [{"method": "all-features"}]})
    )
)
def test_a_project_file_raises_nothing_but_bad_input(value):
    with tempfile.TemporaryDirectory() as folder:
        path = write_json(Path(folder), "p.json", value)

        def load():
            project = Project.load(path)
            project.load_data(REGISTRY)

        only_bad_input(load)


@FUZZ
@given(
    value=st.one_of(
        JSON,
        document(
            {"methods": ["all-features"], "data": {"path": "in.csv"}, "sweep": {"k": [1, 2]}, "model": "k-anonymity"}
        ),
    )
)
def test_a_study_file_raises_nothing_but_bad_input(value):
    with tempfile.TemporaryDirectory() as folder:
        path = write_json(Path(folder), "s.json", value)

        def load():
            study = Study.load(path)
            study.check_size(REGISTRY)
            study.runs(REGISTRY)

        only_bad_input(load)


@FUZZ
@given(
    value=st.one_of(
        JSON,
        document(
            {
                "output": {"path": "in.csv", "sha256": "0" * 64, "format": "csv"},
                "privacy_model": {"name": "k-anonymity", "params": {"k": 2}},
                "roles": {"quasi_identifiers": ["sex"]},
            }
        ),
    )
)
def test_a_manifest_raises_nothing_but_bad_input(value):
    with tempfile.TemporaryDirectory() as folder:
        path = write_json(Path(folder), "manifest.json", value)
        only_bad_input(lambda: read_manifest(path))
        only_bad_input(lambda: verify_manifest(REGISTRY, path))
