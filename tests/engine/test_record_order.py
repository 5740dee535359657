"""Methods that declare they keep the record order (``Algorithm.keeps_record_order``) release the
input's records one for one, in the input's order: a column no method touches comes back as it went
in. And a labelled file's per-cell missing codes follow the rows when a table is taken in another
order or its incomplete records are dropped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.engine import CELL_CODES, PluginCall, Role, RunSpec, Table, execute, make_registry
from veil.engine.data.datasource import DataSource
from veil.engine.data.table import cell_codes_taken

REGISTRY = make_registry()
KEEPING = sorted(c.name for c in REGISTRY.classes("algorithm") if c.keeps_record_order)


def _table(n=24, seed=1) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "sex": rng.choice(["F", "M"], n),
            "ward": rng.choice(["A", "B", "C"], n),
            "serial": [f"S{i:03d}" for i in range(n)],  # untouched by every method: it records the order
            "diagnosis": rng.choice(["x", "y", "z"], n),
        }
    )
    roles = {"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER, "ward": Role.QUASI_IDENTIFIER}
    return Table.from_frame(frame, roles={**roles, "diagnosis": Role.SENSITIVE})


def test_the_methods_that_keep_the_record_order_are_the_expected_ones():
    assert KEEPING == [
        "global-recoding",
        "hilbert",
        "local-recoding",
        "local-suppression",
        "microaggregation",
        "mondrian",
        "noise-addition",
        "patternka-relational",
        "pram",
        "rank-swap",
    ]


@pytest.mark.parametrize("name", KEEPING)
def test_a_method_that_keeps_the_record_order_releases_row_i_as_input_row_i(name):
    cls = REGISTRY.get("algorithm", name)
    fitting = REGISTRY.models_for(cls)
    model = None
    if cls.needs_model:
        model = PluginCall("k-anonymity" if "k-anonymity" in fitting else fitting[0], {"k": 3})
    table = _table()
    result = execute(REGISTRY, table, RunSpec(PluginCall(name, {}), model, 2), release_sensitive=["diagnosis"])
    assert list(result.release.frame["serial"]) == list(table.frame["serial"])


def test_cell_codes_follow_the_rows_taken_and_dropped():
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.nan, 5.0], "b": ["p", "q", None, "s", "t"]})
    table = Table.from_frame(frame)
    table.meta[CELL_CODES] = {"rows": 5, "columns": {"a": (np.array([1, 3]), [98, -9])}}
    taken = table.take([3, 0, 1, 1])
    assert taken.meta[CELL_CODES]["rows"] == 4
    rows, codes = taken.meta[CELL_CODES]["columns"]["a"]
    assert list(rows) == [0, 2, 3] and codes == [-9, 98, 98]
    assert cell_codes_taken(table.meta, [0, 2, 4])[CELL_CODES]["columns"] == {}  # no coded row kept


def test_dropping_incomplete_records_keeps_the_codes_on_their_rows(tmp_path, monkeypatch):
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "b": ["p", "q", None, "s"]})
    read = Table.from_frame(frame)
    read.meta[CELL_CODES] = {"rows": 4, "columns": {"a": (np.array([1]), [98])}}
    source = DataSource(path=str(tmp_path / "x.sav"), drop_missing=True)
    kept = source._reshaped(REGISTRY, read)
    assert len(kept.frame) == 2 and kept.meta[CELL_CODES] == {"rows": 2, "columns": {}}
    source = DataSource(path=str(tmp_path / "x.sav"), missing=("s",))
    masked = source._reshaped(REGISTRY, read)  # no record dropped: the code stays on row 1
    assert list(masked.meta[CELL_CODES]["columns"]["a"][0]) == [1]


def test_the_export_links_each_blank_cell_to_its_code_through_the_shuffle():
    from types import SimpleNamespace

    from veil.engine.release.export import kept_cell_codes

    rng = np.random.default_rng(5)
    n = 30
    coded = rng.choice(n, 12, replace=False)
    codes = list(rng.choice([98, -9, 99], 12))
    data = pd.DataFrame({"q": rng.integers(0, 3, n).astype(float), "s": rng.integers(0, 3, n).astype(float)})
    data.loc[coded, ["q", "s"]] = np.nan
    table = Table.from_frame(data)
    table.meta[CELL_CODES] = {"rows": n, "columns": {"q": (coded, codes), "s": (coded, codes)}}
    released = data.copy()
    released.loc[coded[:3], "s"] = 1.0  # the method gave three of them a value
    release = SimpleNamespace(frame=released, quasi_identifiers=("q",), exact_quasi_identifiers=())
    order = rng.permutation(n)
    written = released.iloc[order].reset_index(drop=True)
    linked = kept_cell_codes(SimpleNamespace(data=table, release=release), written, order)
    assert set(linked) == {"s"}  # a quasi-identifier's blanks stay blanks
    rows, got = linked["s"]
    expected = {int(np.flatnonzero(order == r)[0]): c for r, c in zip(coded[3:], codes[3:])}  # brute force
    assert dict(zip(rows.tolist(), got)) == expected
    assert written["s"].isna().to_numpy()[rows].all()
