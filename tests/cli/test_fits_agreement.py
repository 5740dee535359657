"""The command line and the desktop agree on what fits: for every installed method and each data form
the desktop offers exactly the registry's answer, and ``veil run`` refuses, in one line with exit 2
and the same reason, a method, privacy model or metric the desktop would not offer (``veil study``'s
check before any run gives the same reason for a method)."""

from __future__ import annotations

import numpy as np
import pytest

from veil.desktop.state import ConfigState, metric_fits
from veil.engine import BadInput, DataSource, PluginCall, RunSpec, check_data, make_registry, unfit

from .helpers import SMALL_CSV, assert_bad_input

REGISTRY = make_registry()
TABLE_ROLES = ("--target", "outcome", "--quasi", "age_band,sex", "--sensitive", "smoker", "--identifier", "name")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fits")
    (folder / "small.csv").write_text(SMALL_CSV, encoding="utf-8")
    rng = np.random.default_rng(5)
    lines = [" ".join(map(str, sorted(rng.choice(np.arange(1, 12), 3, replace=False)))) for _ in range(30)]
    (folder / "baskets.dat").write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = DataSource.from_dict(  # as the command line reads it with the flags below
        {
            "path": str(folder / "small.csv"),
            "target": "outcome",
            "quasi_identifiers": ["age_band", "sex"],
            "sensitive": ["smoker"],
            "identifiers": ["name"],
        }
    ).load(REGISTRY)
    baskets = DataSource.from_dict({"path": str(folder / "baskets.dat")}).load(REGISTRY)
    return {
        "table": (table, ("--data", folder / "small.csv", *TABLE_ROLES)),
        "baskets": (baskets, ("--data", folder / "baskets.dat")),
    }


def _desktop_offers(data, method: str) -> tuple[bool, str]:
    """Whether the desktop's configuration takes ``method`` for ``data``, and its message if not."""
    config = ConfigState()
    config.select(method)
    try:
        config.study(REGISTRY, data)
    except BadInput as exc:
        return False, str(exc)
    return True, ""


@pytest.mark.parametrize("form", ["table", "baskets"])
def test_the_desktop_offers_the_registrys_methods_and_the_cli_refuses_the_others(files, form, veil, tmp_path):
    data, given = files[form]
    offered = {cls.name for cls in REGISTRY.methods_for(data)}
    assert offered and offered != set(REGISTRY.names("algorithm"))  # both answers occur on each form
    for name in REGISTRY.names("algorithm"):
        on_desktop, said = _desktop_offers(data, name)
        assert on_desktop == (name in offered), name
        if name in offered:
            assert unfit(REGISTRY, data, RunSpec(PluginCall(name))) == ""
            continue
        reason = REGISTRY.method_fit(name, data).reason
        assert reason in said, (name, said)
        with pytest.raises(BadInput) as planned:  # veil study's check before any run says the same
            check_data(REGISTRY, data, RunSpec(PluginCall(name)))
        assert reason in str(planned.value)
        result = veil("run", *given, "--method", name, "--out", tmp_path / name)
        assert_bad_input(result)
        assert f"method {name!r} {reason}" in result.err, result.err
        assert not (tmp_path / name).exists()


def test_a_model_that_cannot_judge_item_sets_is_refused_as_the_desktop_greys_it_out(files, veil, tmp_path):
    data, given = files["baskets"]
    method = REGISTRY.methods_for(data)[0].name
    refused = [m for m in REGISTRY.names("privacy-model") if not REGISTRY.model_fit(m, data)]
    assert refused and len(refused) < len(REGISTRY.names("privacy-model"))
    for model in refused:
        reason = REGISTRY.model_fit(model, data).reason
        assert model not in REGISTRY.models_for(data=data)
        result = veil("run", *given, "--method", method, "--model", model, "--out", tmp_path / model)
        assert_bad_input(result)
        assert f"privacy model {model!r} {reason}" in result.err, result.err


def test_a_metric_the_desktop_greys_out_for_a_method_is_refused_with_the_same_reason(files, veil, tmp_path):
    data, given = files["table"]
    checked = 0
    for cls in REGISTRY.methods_for(data):
        offered = {m.name for m in REGISTRY.metrics_for(cls.name)}
        for metric in REGISTRY.names("metric"):  # the desktop's greying agrees with the registry everywhere
            assert metric_fits(REGISTRY, metric, [cls.name], None) == (metric in offered), (cls.name, metric)
        other = next((m for m in REGISTRY.names("metric") if m not in offered), None)
        if other is None:
            continue
        reason = REGISTRY.metric_fit(other, cls.name).reason
        result = veil("run", *given, "--method", cls.name, "--metrics", other, "--out", tmp_path / cls.name)
        assert_bad_input(result)
        assert f"metric {other!r} {reason}" in result.err, result.err
        checked += 1
    assert checked
