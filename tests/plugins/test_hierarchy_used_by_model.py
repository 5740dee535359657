"""A hierarchy attached to a sensitive column that hierarchical (or ordered) t-closeness judges by
is used: no note says otherwise; under EMD between equal categories it is not, and the note says so."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.engine import Hierarchy, PluginCall, Role, Table, make_registry, unused_hierarchies

REGISTRY = make_registry()


def _table():
    frame = pd.DataFrame({"age": [23, 37, 41, 58], "salary-class": ["<=50K", ">50K", "<=50K", ">50K"]})
    table = Table.from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "salary-class": Role.SENSITIVE})
    return table.with_hierarchy("salary-class", Hierarchy.flat(["<=50K", ">50K"]))


@pytest.mark.parametrize("distance", ["hierarchical", "ordered"])
def test_a_model_reading_the_sensitive_hierarchy_uses_it(distance):
    model = PluginCall("t-closeness", {"t": 0.5, "distance": distance})
    assert unused_hierarchies(REGISTRY, _table(), PluginCall("mondrian"), [model]) == ()


def test_without_such_a_model_the_hierarchy_is_named_unused():
    notes = unused_hierarchies(REGISTRY, _table(), PluginCall("mondrian"), [PluginCall("t-closeness", {"t": 0.5})])
    assert notes == ("the hierarchy given for 'salary-class' is not used: only quasi-identifiers are generalised",)
