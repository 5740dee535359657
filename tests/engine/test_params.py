from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.engine import BadInput, param, param_specs, params_to_dict, parse_params, parse_spec


@dataclass(frozen=True)
class P:
    k: int = param(5, minimum=1, maximum=1000, help="group size")
    eps: float = param(1.0, minimum=0.0, exclusive_minimum=True, help="privacy budget")
    mode: str = param("skip", choices=("skip", "stop"))
    flag: bool = param(True)
    top: int | None = param(None, minimum=1)


def test_defaults_and_specs():
    specs = {s.name: s for s in param_specs(P)}
    assert list(specs) == ["k", "eps", "mode", "flag", "top"]
    assert specs["k"].help == "group size" and specs["top"].optional
    assert parse_params(P, {}) == P()


def test_strings_convert():
    p = parse_params(P, {"k": "8", "eps": "0.5", "mode": "stop", "flag": "no", "top": "3"})
    assert p == P(k=8, eps=0.5, mode="stop", flag=False, top=3)
    assert parse_params(P, params_to_dict(p)) == p


@pytest.mark.parametrize(
    "values, words",
    [
        ({"k": "0"}, "≥ 1"),
        ({"k": "1001"}, "≤ 1000"),
        ({"eps": "0"}, "> 0.0"),
        ({"eps": "-1"}, "> 0.0"),
        ({"mode": "halt"}, "one of skip, stop"),
        ({"k": "abc"}, "must be a whole number"),
        ({"k": "2.5"}, "must be a whole number"),
        ({"flag": "maybe"}, "must be true or false"),
        ({"nope": 1}, "no parameter 'nope'"),
    ],
)
def test_bad_values_name_the_problem(values, words):
    with pytest.raises(BadInput, match=words):
        parse_params(P, values)


@given(st.integers(-5, 2000))
def test_bounds_oracle(k):
    if 1 <= k <= 1000:
        assert parse_params(P, {"k": k}).k == k
    else:
        with pytest.raises(BadInput):
            parse_params(P, {"k": k})


def test_parse_spec():
    assert parse_spec("k-anonymity:k=5") == ("k-anonymity", {"k": "5"})
    assert parse_spec("greedy:a=1, b=x") == ("greedy", {"a": "1", "b": "x"})
    assert parse_spec("all-features") == ("all-features", {})
    for bad in ("", ":k=1", "m:k", "m:=3"):
        with pytest.raises(BadInput):
            parse_spec(bad)
