"""Every release kind × every exporter that accepts it: write, read back, ``veil verify``
from the files alone (typed generalised values included); a tampered cell is caught.

Both sides come from the plugin manager: the release kinds are those the registered methods make
(each method's declared ``release_variants``, one release per kind), the exporters are every
registered exporter. A pair the exporter declares it cannot hold (``Exporter.refuses``) is skipped,
and the engine refuses it with that reason.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BINARY,
    SETS,
    TABLE,
    BadInput,
    ExportOptions,
    Hierarchy,
    Interval,
    NodeValue,
    PluginCall,
    Role,
    RunSpec,
    SetValued,
    Table,
    execute,
    make_registry,
    parse_value,
    read_manifest,
    verify_file,
    write_release,
)
from veil.cli import main as veil
from veil.engine.data.generalised import SUPPRESSED
from veil.engine.release.parts import GROUP_COLUMN, read_parts

REGISTRY = make_registry()
MODEL_K = 3


def _table(n=60, seed=0) -> Table:
    rng = np.random.default_rng(seed)
    codes = [f"HD{i}" for i in range(6)] + [f"HX{i}" for i in range(3)]
    frame = pd.DataFrame(
        {
            "pid": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(20, 70, n),
            "ward": rng.choice(codes, n),
            "sex": rng.choice(["F", "M"], n),
            "flag": rng.integers(0, 2, n),
            "diagnosis": rng.choice(["x", "y", "z"], n),
            "outcome": rng.integers(0, 2, n),
        }
    )
    table = Table.from_frame(
        frame,
        roles={
            "pid": Role.IDENTIFIER,
            "age": Role.QUASI_IDENTIFIER,
            "ward": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "diagnosis": Role.SENSITIVE,
            "outcome": Role.TARGET,
        },
    )
    return table.with_hierarchy("ward", Hierarchy.masking(codes))  # generalised to typed hierarchy nodes


def _sets(n=60, seed=0) -> SetValued:
    rng = np.random.default_rng(seed)
    items = ["a", "b", "c", "d", "e"]
    return SetValued.from_sets([sorted(rng.choice(items, rng.integers(1, 4), replace=False)) for _ in range(n)])


DATA = {TABLE: _table, BINARY: _table, SETS: _sets}  # a binary method binarises the table by its recipe


def _variants():
    for cls in REGISTRY.classes("algorithm"):
        form = next((f for f in (SETS, TABLE, BINARY) if f in cls.accepts), None)
        if form is None:
            continue
        for variant, params in (cls.release_variants or {"": {}}).items():
            yield cls, form, variant, params


def _spec(cls, params) -> RunSpec:
    fitting = REGISTRY.models_for(cls)
    model = ("k-anonymity" if "k-anonymity" in fitting else fitting[0]) if cls.needs_model else None
    return RunSpec(PluginCall(cls.name, dict(params)), PluginCall(model, {"k": MODEL_K}) if model else None, 3)


def _value_types(release) -> set[str]:
    """The kinds of typed value a release's groups hold (Interval, NodeValue, SUPPRESSED, …)."""
    values = release.group_values
    return set() if values is None else {type(v).__name__ for c in values.columns for v in values[c]}


@functools.cache
def releases() -> dict:
    """One finished run per release kind the registered methods make (the first method, by name, of
    each kind), keyed by that kind; and of a kind already held, a later method's whose groups hold a
    kind of typed value none before held (intervals beside hierarchy nodes), keyed "kind (method)"."""
    out = {}
    for cls, form, variant, params in sorted(_variants(), key=lambda v: (v[0].name, v[2])):
        result = execute(REGISTRY, DATA[form](), _spec(cls, params))
        kind = result.release.kind
        held = [r.release for r in out.values() if r.release.kind == kind]
        if not held:
            out[kind] = result
        elif not _value_types(result.release) <= set().union(*(_value_types(r) for r in held)):
            out[f"{kind} ({cls.name})"] = result
    return out


def test_the_methods_make_every_kind_of_release():
    """The enumeration finds the kinds the issue names (a new kind is simply one more entry)."""
    assert {"feature-subset", "synthetic", "generalised-table", "bucketised-table", "grouped-sets"} <= set(releases())


def _pairs():
    """Every kind the registered methods make × every registered exporter."""
    return [(k, f) for k in sorted(releases()) for f in REGISTRY.names("exporter")]


@pytest.fixture(scope="module")
def registry():
    return REGISTRY


def _canon(value):
    """A cell as a comparable typed value: an interval, a node's label, ``*``, a number, text or a
    blank (``""``)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return ""
    value = parse_value(value)
    if value is SUPPRESSED:
        return "*"
    if isinstance(value, Interval):
        return (
            float(value.lo)
            if value.lo == value.hi and value.closed
            else (float(value.lo), float(value.hi), value.closed)
        )
    if isinstance(value, NodeValue):
        return value.label
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def _tamper(exporter, path: Path, frame: pd.DataFrame, column: str | None) -> None:
    """Rewrite ``path`` with one cell changed so the first record's group becomes a group of one."""
    if exporter.writes_sets and "items" in frame.columns:
        lines = path.read_text(encoding="utf-8").splitlines()
        first = next(i for i, line in enumerate(lines) if not line.startswith("@"))
        lines[first] = lines[first] + " 999999"  # an item no other record publishes
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    frame = frame.copy()
    if column is None:
        column = frame.columns[0]
    cell = frame[column]
    if pd.api.types.is_numeric_dtype(cell) and not pd.api.types.is_bool_dtype(cell):
        frame[column] = cell.astype(float)
        frame.loc[0, column] = float(np.nanmax(cell.to_numpy(dtype=float))) + 1000.0
    else:
        frame[column] = cell.astype(object)
        frame.loc[0, column] = "tampered"
    exporter.write(frame, path, exporter.params())


@pytest.mark.parametrize("kind, fmt", _pairs())
def test_every_release_kind_through_every_exporter_that_accepts_it(registry, tmp_path, capsys, kind, fmt):
    result = releases()[kind]
    release = result.release
    exporter = registry.exporter(fmt)
    refused = exporter.refuses(release)
    if refused:
        with pytest.raises(BadInput, match="choose the format"):  # the engine refuses it, with the reason
            write_release(registry, result, tmp_path, ExportOptions(fmt))
        assert not any(tmp_path.iterdir()), "a refused export writes nothing"
        pytest.skip(f"{fmt} declares it cannot hold a {kind} release: {refused}")

    out = tmp_path / "out"
    manifest = write_release(registry, result, out, ExportOptions(fmt, shuffle=False))
    path = out / manifest["output"]["path"]

    # read back from the file alone: as many records, the released columns, the typed values
    back = registry.exporter(fmt).read_back(path)
    assert len(back) == release.n_rows
    if release.sets is not None:
        names = back.attrs.get("item_names") or {}
        written = [{names.get(t, t) for t in cell.split()} for cell in back["items"]]
        expected = [set(np.asarray(release.sets.item_names, dtype=object)[release.sets.row(g)]) for g in release.groups]
        assert written == expected
    else:
        frame = release.frame
        assert [str(c) for c in back.columns] == [str(c) for c in frame.columns]
        for column in frame.columns:
            typed = [_canon(v) for v in frame[column]]
            if release.group_values is not None and column in release.group_values.columns:
                # a generalised cell is its group's typed value, written in ARX's notation and parsed back
                typed = [_canon(release.group_values[column].iloc[g]) for g in release.groups]
            got = [_canon(v) for v in back[column]]
            assert got == typed or all(_same_number(a, b) for a, b in zip(got, typed)), column
    parts = read_parts(exporter, path, list(manifest["output"].get("parts") or {}))
    assert set(parts) == set(release.parts)
    for name, part in parts.items():
        assert len(part) == len(release.parts[name])

    # `veil verify` from the files: the manifest's hashes, then the privacy model on the file read back
    assert veil(["verify", str(out)]) == 0, capsys.readouterr()
    capsys.readouterr()

    # a tampered cell is caught: by the hash, and by the model judging the file alone
    roles = read_manifest(out / "manifest.json")["roles"]
    qis = [c for c in roles["quasi_identifiers"] if c in back.columns]
    grouped_on = GROUP_COLUMN if GROUP_COLUMN in back.columns else (qis[0] if qis else None)  # buckets: their ids
    _tamper(exporter, path, back, grouped_on)
    assert veil(["verify", str(out)]) == 1
    assert "changed after export" in capsys.readouterr().out
    models = [PluginCall.parse(m) for m in manifest.get("privacy_models") or []]
    judges = models and all(getattr(registry.get("privacy-model", m.name), "judges_groups", False) for m in models)
    if judges and qis:
        try:
            checked = verify_file(registry, path, fmt, models, roles, parts=list(release.parts))
        except BadInput as exc:  # the parts of a release no longer agree with each other
            assert "disagree" in str(exc)
        else:
            assert not checked.holds, f"the tampered {fmt} file of a {kind} release still passes its model"


def _same_number(a, b) -> bool:
    """Equal, both missing, or equal to 15 significant digits (all a spreadsheet cell keeps)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-15)
    return a == b
