"""The shape a run's memory estimate reads: the most distinct values of a column are counted only
when a plugin's memory cost reads them, and then as before (each column's distinct values, a blank
one of them)."""

import pickle

import numpy as np
import pandas as pd

from veil.engine import Role, Table
from veil.engine.model.plugin import MemoryCost
from veil.engine.run.memory import release_shape, shape_of


def _table():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "age": np.arange(300) % 50,
            "town": rng.choice(["a", "b", None], 300),
            "score": rng.normal(size=300).round(1),
        }
    )
    return Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "town": Role.QUASI_IDENTIFIER})


class _Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1


def test_distinct_values_are_counted_when_read_and_once():
    table = _table()
    counted = _Counter()
    shape = shape_of(table, counted)
    assert counted.calls == 0
    assert MemoryCost(per_record=8.0).bytes(shape) > 0 and counted.calls == 0  # a cost not reading them
    expected = max(int(table.frame[c].nunique(dropna=False)) for c in table.frame.columns)
    assert shape.max_distinct == expected == 50  # the ages
    assert counted.calls == len(table.frame.columns)
    assert shape.max_distinct == expected and counted.calls == len(table.frame.columns)  # kept
    per = MemoryCost(fixed=0, per_record=0, per_cell=0, per_record_distinct=2.0)
    assert per.bytes(shape_of(table)) == 2 * table.n_rows * expected


def test_a_shape_counted_later_compares_prints_and_pickles_as_one_counted_at_once():
    table = _table()
    lazy, eager = shape_of(table), shape_of(table)
    _ = eager.max_distinct
    again = pickle.loads(pickle.dumps(lazy))
    assert again == eager == lazy and repr(lazy) == repr(eager)
    small = lazy.sampled(10)
    assert small.max_distinct == 10 and small.rows == 10
    assert release_shape_of(table, lazy).max_distinct == eager.max_distinct


def release_shape_of(table, shape):
    from veil.engine import GENERALISED_TABLE, Release

    release = Release(GENERALISED_TABLE, table.frame, ("age", "town"))
    return release_shape(release, shape)
