"""A test-only method whose run ranks candidates with a ranker of its own: other weights (a, b, c),
other columns (gain, cost, score), other headers, no charts. The desktop's ranking tab must show
it from what it declares alone. In a module of its own: the worker process imports it by reference.
Nothing here imports Qt."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from veil.engine import (
    TABLE,
    Algorithm,
    BadInput,
    Candidate,
    RankedCandidate,
    Ranker,
    Ranking,
    RankingColumn,
    Role,
    Weight,
    feature_subset,
    hookimpl,
    param,
    params_to_dict,
)

NAME = "toy-ranking-test"
COLUMNS = (RankingColumn("gain", "Gain"), RankingColumn("cost", "Cost"), RankingColumn("score", "Score"))


def check(weights: Sequence[float]) -> tuple[float, ...]:
    w = tuple(float(x) for x in weights)
    if len(w) != 3 or any(x < 0 for x in w) or abs(sum(w) - 1) > 1e-3:
        raise BadInput(f"the toy weights are three shares of 1, got {w}")
    return w


def toy_ranking(candidates: Sequence[Candidate], weights: Sequence[float]) -> Ranking:
    """score = a·gain − b·cost + c·(number of columns kept); best first, ties in the run's order."""
    a, b, c = check(weights)
    scores = [a * k.values["gain"] - b * k.values["cost"] + c * len(k.subset) for k in candidates]
    order = sorted(range(len(candidates)), key=lambda i: (-round(scores[i], 9), i))
    ranked = tuple(
        RankedCandidate(place, i, candidates[i], {"score": scores[i]}) for place, i in enumerate(order, start=1)
    )
    return Ranking(
        tuple(candidates),
        ranked,
        (a, b, c),
        COLUMNS,
        label_header="Option",
        subset_header="Columns kept",
        about="A toy ranking for the tests.",
    )


class ToyRanker(Ranker):
    title = "Toy ranking"
    help = "Score = a·gain − b·cost + c·columns, the highest released."
    weights = (Weight("a", "gain"), Weight("b", "thrift"), Weight("c", "breadth"))
    sum_to_one = True

    def rerank(self, ranking, weights):
        return toy_ranking(ranking.candidates, weights)

    def reselect(self, data, release, weights):
        ranking = toy_ranking(release.ranking.candidates, weights)
        new = feature_subset(
            data, list(ranking.chosen.subset), ranking=ranking, details={"chosen": ranking.chosen.label}
        )
        values = {**release.provenance.params, **dict(zip(self.params, check(weights)))}
        return new.with_provenance(
            dataclasses.replace(release.provenance, params=params_to_dict(ToyRanked.params(values)))
        )


def _weight(default: float, what: str):
    return param(default, minimum=0.0, maximum=1.0, help=f"weight of {what}; a + b + c = 1")


@dataclass(frozen=True)
class ToyParams:
    a: float = _weight(0.6, "gain")
    b: float = _weight(0.3, "thrift")
    c: float = _weight(0.1, "breadth")

    def __post_init__(self):
        check((self.a, self.b, self.c))


class ToyRanked(Algorithm):
    """Candidates: pairs of the table's quasi-identifiers; gain: the distinct values they hold;
    cost: the length of their names."""

    name = NAME
    title = "Toy ranked (test)"
    accepts = (TABLE,)
    Params = ToyParams
    ranker = ToyRanker()

    def run(self, data, model, params, ctx):
        qis = data.schema.by_role(Role.QUASI_IDENTIFIER)[:4]
        pairs = [(x, y) for i, x in enumerate(qis) for y in qis[i + 1 :]]
        candidates = [
            Candidate(
                f"option {i + 1}",
                pair,
                {"gain": sum(int(data.frame[c].nunique()) for c in pair) / 10, "cost": sum(len(c) for c in pair)},
            )
            for i, pair in enumerate(pairs)
        ]
        ranking = toy_ranking(candidates, (params.a, params.b, params.c))
        return feature_subset(
            data, list(ranking.chosen.subset), ranking=ranking, details={"chosen": ranking.chosen.label}
        )


class RankingPlugins:
    __test__ = False  # not a pytest class

    @staticmethod
    @hookimpl
    def veil_register_algorithms():
        return [ToyRanked]
