"""Choosing among a run's candidates at other weights: a capability a method declares, and the typed
ranking its release carries.

Some methods evaluate several candidates once (expensively: classifiers, say) and release the one
their weights rank first; a data holder may want to see the others and move the weights afterwards.
Such a method declares a :class:`Ranker` (``Algorithm.ranker``) and its release carries the run's
:class:`Ranking` (``Release.ranking``): every :class:`Candidate` with its label, what choosing it
releases and its values under named :class:`RankingColumn` s, in the order the run's weights put
them. The ranker orders the same candidates at other weights without re-running anything
(:meth:`Ranker.rerank`) and makes the release the run would have made at them
(:meth:`Ranker.reselect`). Whoever shows a ranking reads these types, never a method's own keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class RankingColumn:
    """A named value of a ranking's candidates (``key`` into :attr:`RankedCandidate.values`) and the
    header it is shown under."""

    key: str
    header: str


@dataclass(frozen=True)
class Weight:
    """One of a method's parameters that weighs its ranking, and what it weighs, in words."""

    param: str
    label: str


@dataclass(frozen=True)
class Candidate:
    """One candidate a run chose among: its label, what choosing it releases (the columns or features
    kept), and its own values by key (those that do not depend on the weights)."""

    label: str
    subset: tuple[str, ...]
    values: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class RankedCandidate:
    """A candidate's place in a ranking: ``place`` 1 is the one released at the ranking's weights;
    ``values`` holds the candidate's own values and those at these weights (its score, say)."""

    place: int
    index: int  # in Ranking.candidates
    candidate: Candidate
    values: Mapping[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.candidate.label

    @property
    def subset(self) -> tuple[str, ...]:
        return self.candidate.subset

    def value(self, key: str):
        """The value of column ``key`` (None when the candidate has none)."""
        return self.values.get(key, self.candidate.values.get(key))


@dataclass(frozen=True)
class Ranking:
    """A run's candidates ranked at some weights, best first.

    ``candidates`` are in the run's order; ``order`` ranks them; ``columns`` are the values worth
    showing for each, in order; ``label_header`` and ``subset_header`` name the candidates' labels
    and subsets; ``about`` is one sentence on the run's setting ("Sensitive attribute …; class …").
    """

    candidates: tuple[Candidate, ...]
    order: tuple[RankedCandidate, ...]
    weights: tuple[float, ...]
    columns: tuple[RankingColumn, ...] = ()
    label_header: str = "Candidate"
    subset_header: str = "Releases"
    about: str = ""

    @property
    def chosen(self) -> RankedCandidate:
        """The candidate released at these weights (place 1)."""
        return self.order[0]

    def frame(self) -> pd.DataFrame:
        """The ranking as a table, in the run's order: label, subset (comma-separated), every value
        of the candidates and at these weights, place and whether it is chosen."""
        import pandas as pd

        by_index = {r.index: r for r in self.order}
        rows = []
        for i, c in enumerate(self.candidates):
            ranked = by_index.get(i)
            values = {**c.values, **(ranked.values if ranked is not None else {})}
            rows.append(
                {
                    "label": c.label,
                    "subset": ", ".join(c.subset),
                    **values,
                    "place": ranked.place if ranked is not None else None,
                    "chosen": ranked is not None and ranked.place == 1,
                }
            )
        return pd.DataFrame(rows)


class Ranker:
    """What a method whose run ranks candidates declares (``Algorithm.ranker``, an instance).

    ``title`` names the ranking (the desktop's tab), ``help`` says in a sentence or two how it is
    made, ``weights`` are the method's parameters that weigh it (in order), ``sum_to_one`` says
    they are shares of 1 (linked sliders), ``charts`` are chart plugins that draw one run's
    candidates from :meth:`table` (each takes a ``weights`` parameter, ``"w1/w2/…"``).
    """

    title: ClassVar[str] = "Ranking"
    help: ClassVar[str] = ""
    weights: ClassVar[tuple[Weight, ...]] = ()
    sum_to_one: ClassVar[bool] = False
    charts: ClassVar[tuple[str, ...]] = ()

    @property
    def params(self) -> tuple[str, ...]:
        """The names of the weighing parameters, in order."""
        return tuple(w.param for w in self.weights)

    def rerank(self, ranking: Ranking, weights: Sequence[float]) -> Ranking:  # pragma: no cover - interface
        """``ranking``'s candidates ranked at ``weights`` (in the order of :attr:`weights`), best
        first. Fast and pure: nothing is evaluated again. BadInput for weights it cannot use."""
        raise NotImplementedError

    def reselect(self, data, release, weights: Sequence[float]):  # pragma: no cover - interface
        """The release the run of ``release`` (made from ``data``) would have made at ``weights``,
        with its ranking and provenance at those weights."""
        raise NotImplementedError

    def table(self, release) -> pd.DataFrame:
        """The run's candidates as a table, one row per candidate in the ranking's order: the data
        of :attr:`charts` and of a CSV. By default the ranking's own :meth:`Ranking.frame`."""
        return release.ranking.frame()
