"""What fits what, as the registry answers it: which methods take some data, which privacy models and
metrics fit a method, which forms data is handed to a method in. Checked against brute force over
the installed plugins' declarations on small random data of every form, and against the engine
itself: every conversion the registry names is one ``convert`` makes, and every method it offers is
handed the data by ``prepare`` without a refusal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.engine import (
    BINARY,
    SETS,
    TABLE,
    TRANSACTIONS,
    BinaryMatrix,
    Judgement,
    Recipe,
    SetValued,
    Table,
    convert,
    form_of,
    make_registry,
    prepare,
)

REGISTRY = make_registry()
ALL_FORMS = (TABLE, BINARY, TRANSACTIONS, SETS)


def _table(rng) -> Table:
    n = int(rng.integers(8, 20))
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "sex": rng.choice(["F", "M"], n),
            "town": rng.choice(["a", "b", "c"], n),
            "illness": rng.choice(["x", "y", "z"], n),
            "label": rng.integers(0, 2, n),
        }
    )
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "illness": "sensitive", "label": "target"}
    return Table.from_frame(frame, roles=roles)


def _baskets(rng, labelled: bool) -> BinaryMatrix:
    n = int(rng.integers(6, 15))
    sets = [[f"i{j}" for j in rng.choice(8, int(rng.integers(1, 5)), replace=False)] for _ in range(n)]
    labels = rng.integers(0, 2, n) if labelled else None
    return BinaryMatrix.from_transactions(sets, labels=labels)


def _data(seed: int):
    """One of each form, with and without labels where labels are optional."""
    rng = np.random.default_rng(seed)
    matrix, labelled = _baskets(rng, False), _baskets(rng, True)
    return {
        "table": _table(rng),
        "baskets": matrix,
        "labelled baskets": labelled,
        "sets": SetValued.from_binary(matrix),
        "labelled sets": SetValued.from_binary(labelled),
    }


def _offered_forms(data) -> set[str]:
    """The oracle's rule, stated once: a table is taken as it is or as its binary features; records
    of item sets as item sets or as a record × item matrix (and never the other way round)."""
    return {TABLE, BINARY} if isinstance(data, Table) else {BINARY, TRANSACTIONS, SETS}


def _judged(cls) -> set:
    return {Judgement(j) for j in cls.judges}


def _made(cls) -> set:
    return {Judgement(j) for j in cls.satisfies}


SEEDS = range(4)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_conversions_named_are_the_ones_the_engine_makes(seed):
    for name, data in _data(seed).items():
        found = REGISTRY.conversions(data)
        assert {c.target for c in found} == _offered_forms(data), name
        assert found[0].source == form_of(data) and all(c.source == form_of(data) for c in found)
        for c in found:  # each one is real: convert hands the data over in that form
            done = convert(
                data, (c.target,), recipe=Recipe.default_for(data) if c.source == TABLE and c.target == BINARY else None
            )
            want = {TABLE: "table", BINARY: "binary", TRANSACTIONS: "binary", SETS: "sets"}[c.target]
            assert form_of(done) == want, (name, c)
            assert c.as_is == (done is data), (name, c)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_methods_offered_are_those_whose_declarations_fit_the_data(seed):
    for name, data in _data(seed).items():
        set_valued = not isinstance(data, Table)
        want = [
            cls.name
            for cls in REGISTRY.classes("algorithm")
            if set(cls.accepts) & _offered_forms(data)
            and not (set_valued and cls.needs_labels and getattr(data, "labels", None) is None)
        ]
        assert [c.name for c in REGISTRY.methods_for(data)] == sorted(want), name
        for cls in REGISTRY.classes("algorithm"):
            fit = REGISTRY.method_fit(cls.name, data)
            assert fit.fits == (cls.name in want) and bool(fit.reason) != fit.fits, (name, cls.name)
            assert "\n" not in fit.reason
            if fit:  # the engine hands every offered method the data without a refusal
                prepared = prepare(data, cls)
                assert form_of(prepared) in {"table", "binary", "sets"}


def test_there_is_no_method_before_there_is_data():
    assert REGISTRY.methods_for(None) == []
    assert all(not REGISTRY.method_fit(cls, None) for cls in REGISTRY.classes("algorithm"))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_the_models_fitting_a_method_share_a_kind_of_judgement_and_can_judge_the_data(seed):
    models = REGISTRY.classes("privacy-model")
    for name, data in _data(seed).items():
        set_valued = not isinstance(data, Table)
        for method in [None, *REGISTRY.classes("algorithm")]:
            want = [
                m.name
                for m in models
                if not (set_valued and m.needs_sensitive)
                and (method is None or not method.satisfies or _made(method) & _judged(m))
            ]
            assert REGISTRY.models_for(method, data) == want, (name, method and method.name)
            for m in models:
                fit = REGISTRY.model_fit(m.name, data, method)
                assert fit.fits == (m.name in want) and bool(fit.reason) != fit.fits
    assert any(m.needs_sensitive for m in models) and any(not m.needs_sensitive for m in models)


def _metric_declares_fit(metric, method, model) -> bool:
    """A metric fits what it declares: a metric with its own ``fits`` says so itself; any other
    measures a form the method takes, and the method's releases carry what it requires."""
    from veil.engine import Metric

    if metric.fits.__func__ is not Metric.fits.__func__:
        return metric.fits(method, model)
    forms = metric.fits_forms if metric.fits_forms is not None else metric.accepts
    return (not metric.requires or metric.requires in method.provides) and bool(set(forms) & set(method.accepts))


def test_the_metrics_fitting_a_method_measure_what_its_releases_are():
    for method in REGISTRY.classes("algorithm"):
        for model in [None, *REGISTRY.classes("privacy-model")]:
            want = [m.name for m in REGISTRY.classes("metric") if _metric_declares_fit(m, method, model)]
            assert [m.name for m in REGISTRY.metrics_for(method, model)] == want, method.name
            for m in REGISTRY.classes("metric"):
                fit = REGISTRY.metric_fit(m.name, method.name, model)
                assert fit.fits == (m.name in want) and bool(fit.reason) != fit.fits and "\n" not in fit.reason
    # both answers occur: the test could fail either way
    answers = {bool(REGISTRY.metric_fit(m, a)) for m in REGISTRY.names("metric") for a in REGISTRY.names("algorithm")}
    assert answers == {True, False}
