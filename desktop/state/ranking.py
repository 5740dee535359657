"""Choosing among a run's candidates at other weights, free of Qt.

A method declares the capability with a :class:`~veil.engine.Ranker` (``Algorithm.ranker``): its
run evaluates candidates once, on the worker, and its release carries them as a typed
:class:`~veil.engine.Ranking` (``Release.ranking``). Choosing among them with other weights needs no
classifier: the ranker ranks them again (``rerank``), gives the charts' table (``table``) and
builds the release for other weights (``reselect``). So the weights are sliders: moving one
re-ranks and redraws on the GUI thread, and the export writes the top of the ranking the sliders
show. No method is recognised by its name and no key of a method's own details is read: any plugin
declaring a ranker gets the tab, with the ranker's title, help, weights, columns and charts.

The weights themselves are the method's parameters the ranker names, so projects and re-runs carry
them. What the roles lack is the method's own ``role_problem``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pandas as pd

from veil.engine import BadInput, PluginCall, Ranking, RunResult, measure

from .events import Event

SCALE = 1000  # the sliders move in thousandths: weights are shown and kept with three decimals
SAME = 1e-9  # weights closer than this are the same weights


def has_weight_sliders(cls) -> bool:
    """Whether ``cls`` declares a ranker whose three weights sum to 1 and can change after a run
    (the desktop's linked sliders)."""
    ranker = cls.ranker if cls.kind == "algorithm" else None
    return (
        ranker is not None
        and ranker.sum_to_one
        and len(ranker.weights) == 3
        and set(ranker.params) <= {s.name for s in cls.param_specs()}
    )


def weighted_methods(registry) -> list:
    """Every algorithm whose weights the ranking tab can move."""
    return [c for c in registry.classes("algorithm") if has_weight_sliders(c)]


def weight_params(cls) -> tuple[str, ...]:
    """The method's parameters that are the ranking's weights, in order."""
    return cls.ranker.params


def rebalance(weights: Sequence[float], index: int, value: float) -> tuple[float, float, float]:
    """Weight ``index`` set to ``value``; the other two share the rest in their current proportion
    (equally when both are 0), so the three always sum to 1. Works in thousandths, so the sum is
    exact to the three decimals the sliders show."""
    milli = [round(float(w) * SCALE) for w in weights]
    moved = min(max(round(float(value) * SCALE), 0), SCALE)
    a, b = (i for i in range(3) if i != index)
    rest, together = SCALE - moved, milli[a] + milli[b]
    share_a = rest // 2 if together <= 0 else round(rest * milli[a] / together)
    out = [0, 0, 0]
    out[index], out[a], out[b] = moved, share_a, rest - share_a
    return tuple(m / SCALE for m in out)  # type: ignore[return-value]


def same_weights(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(abs(float(x) - float(y)) <= SAME for x, y in zip(a, b))


def show_weights(weights: Sequence[float]) -> str:
    return "(" + ", ".join(f"{w:.3f}" for w in weights) + ")"


# -- the configuration ----------------------------------------------------------------------------


def default_weights(cls) -> tuple[float, float, float]:
    specs = {s.name: s.default for s in cls.param_specs()}
    return tuple(float(specs[w]) for w in weight_params(cls))  # type: ignore[return-value]


def weights_in(values: Mapping, cls) -> tuple[float, float, float]:
    """The weights among a method's parameter values (its defaults where they are missing)."""
    defaults = default_weights(cls)
    return tuple(
        float(values[w]) if values.get(w) is not None else d  # type: ignore[return-value]
        for w, d in zip(weight_params(cls), defaults)
    )


def role_problem(cls, data, values: Mapping) -> str:
    """What the column roles lack for ``cls`` (empty when nothing does): the method's own answer."""
    return cls.role_problem(data, values)


def roles_text(cls, data, values: Mapping) -> str:
    """Which columns a run of ``cls`` takes in which role (when the roles name them)."""
    return cls.roles_text(data, values)


# -- the ranking of a finished run ----------------------------------------------------------------


def run_ranking(entry, registry) -> Ranking | None:
    """A finished run's ranking (at the run's weights), when its method's weights are sliders and its
    release carries one."""
    outcome = entry.outcome
    if outcome is None or outcome.result is None:
        return None
    name = entry.planned.spec.method.name
    if name not in registry.names("algorithm"):
        return None
    cls = registry.get("algorithm", name)
    ranking = outcome.result.release.ranking
    return ranking if has_weight_sliders(cls) and ranking is not None and ranking.candidates else None


class RankingState:
    """The ranking of one finished run's candidates at the configuration's weights.

    ``changed`` is emitted when the run shown, its weights or the runs on offer change. Reading
    the ranking computes no classifier: the method's ranker orders the run's candidates again.
    """

    def __init__(self, registry, config, runs):
        self.registry, self.config, self.runs = registry, config, runs
        self.run_id: int | None = None
        self.ranking: Ranking | None = None  # the run's candidates at the sliders' weights
        self.problem = ""  # why there is no ranking (bad weights), else empty
        self._frames: dict[int, pd.DataFrame] = {}
        self._shown: tuple | None = None  # (run id, weights) the ranking is of
        self._newest: int | None = None  # the newest run offered (a newer one is shown when it finishes)
        self.changed = Event()
        config.changed.connect(self._refresh)
        runs.results_changed.connect(self._runs_changed)
        runs.changed.connect(lambda entry: self._runs_changed() if entry is None else None)

    @property
    def method(self):
        """The method of the run shown (before any run: the first method declaring weights)."""
        entry = self.entry()
        if entry is not None and entry.planned.spec.method.name in self.registry.names("algorithm"):
            return self.registry.get("algorithm", entry.planned.spec.method.name)
        offered = weighted_methods(self.registry)
        return offered[0] if offered else None

    @property
    def ranker(self):
        method = self.method
        return method.ranker if method is not None else None

    def title(self) -> str:
        """The ranking's name (the tab's title): the ranker's."""
        ranker = self.ranker
        return ranker.title if ranker is not None and ranker.title else "Ranking"

    def entries(self) -> list:
        """The finished runs that can be ranked, oldest first."""
        return [e for e in self.runs.entries if run_ranking(e, self.registry) is not None]

    def entry(self):
        return self.runs.entry(self.run_id) if self.run_id is not None else None

    def run_ranking(self) -> Ranking | None:
        """The ranking the run shown made (at its own weights)."""
        entry = self.entry()
        return run_ranking(entry, self.registry) if entry is not None else None

    def frame(self) -> pd.DataFrame | None:
        """The run's candidate table (the charts' data and the CSV), made once per run."""
        entry = self.entry()
        if entry is None or self.run_ranking() is None:
            return None
        if self.run_id not in self._frames:
            self._frames[self.run_id] = self.ranker.table(entry.outcome.result.release)
        return self._frames[self.run_id]

    # -- the weights ----------------------------------------------------------------------------
    def weights(self) -> tuple[float, float, float]:
        cls = self.method
        if cls is None:
            return (0.0, 0.0, 0.0)
        choice = self.config.methods.get(cls.name)  # not config.choice: reading adds no entry
        return weights_in(choice.values if choice else {}, cls)

    def set_weights(self, weights: Sequence[float]) -> None:
        """New weights for the method (kept in its configuration, so a re-run or project uses them);
        weights cannot be swept: re-ranking is free."""
        cls = self.method
        if cls is None:
            return
        names = weight_params(cls)
        choice = self.config.choice("algorithm", cls.name)
        values = {**choice.values, **dict(zip(names, (float(w) for w in weights)))}
        sweeps = {k: v for k, v in choice.sweeps.items() if k not in names}
        self.config.set_params("algorithm", cls.name, values, sweeps)

    def run_weights(self) -> tuple[float, ...] | None:
        ranking = self.run_ranking()
        return tuple(ranking.weights) if ranking is not None and ranking.weights else None

    def export_weights(self, run_id: int) -> tuple[float, float, float] | None:
        """The weights run ``run_id`` is to be exported with: the sliders', when they differ from
        the run's own (None: export the run as it was made)."""
        entry = self.runs.entry(run_id)
        ranking = run_ranking(entry, self.registry) if entry is not None else None
        if ranking is None or self.method is None:
            return None
        weights = self.weights()
        return None if same_weights(weights, ranking.weights) else weights

    def export_note(self, run_id: int | None) -> str:
        """What exporting run ``run_id`` releases, when that depends on the sliders' weights."""
        entry = self.runs.entry(run_id) if run_id is not None else None
        ranking = run_ranking(entry, self.registry) if entry is not None else None
        if ranking is None or self.method is None:
            return ""
        ranker, weights = self.ranker, self.weights()
        try:
            top = ranker.rerank(ranking, weights).chosen
        except BadInput as exc:
            return f"The weights cannot rank the candidates: {exc}"
        text = (
            f"Releases subset {top.label} ({', '.join(top.subset)}): the top of the {ranker.title} at the "
            f"sliders' weights w = {show_weights(weights)}"
        )
        if not same_weights(weights, ranking.weights):
            text += f"; the run itself chose {ranking.chosen.label} at w = {show_weights(ranking.weights)}"
        return text + "."

    # -- the run shown --------------------------------------------------------------------------
    def choose(self, run_id: int | None) -> None:
        self.run_id = run_id
        self._refresh(force=True)

    def _runs_changed(self) -> None:
        ids = [e.id for e in self.entries()]
        self._frames = {k: v for k, v in self._frames.items() if k in ids}
        if ids and (self.run_id not in ids or max(ids) > (self._newest or 0)):
            self.run_id = max(ids)  # a new run is shown as it finishes
        elif not ids:
            self.run_id = None
        self._newest = max(ids) if ids else None
        self._refresh(force=True)

    def _refresh(self, *_, force: bool = False) -> None:
        key = (self.run_id, self.weights())
        if key == self._shown and not force:
            return
        self._shown = key
        ranking = self.run_ranking()
        self.ranking, self.problem = None, ""
        if ranking is not None:
            try:
                self.ranking = self.ranker.rerank(ranking, key[1])
            except BadInput as exc:
                self.problem = str(exc)
        self.changed.emit()

    def rows(self) -> list:
        """The ranked candidates at the sliders' weights, best first (each a
        :class:`~veil.engine.RankedCandidate`)."""
        return list(self.ranking.order) if self.ranking is not None else []

    def weights_text(self) -> str:
        return "/".join(f"{w:.3f}" for w in self.weights())

    def data(self) -> pd.DataFrame | None:
        """The candidate table with each candidate's values and place at the current weights (the
        table's rows are the candidates in the run's order)."""
        frame = self.frame()
        if frame is None:
            return None
        out = frame.copy()
        if self.ranking is not None and len(out) == len(self.ranking.candidates):
            by_index = {r.index: r for r in self.ranking.order}
            keys = dict.fromkeys(k for r in self.ranking.order for k in r.values)
            for key in keys:
                out[key] = [by_index[i].values.get(key) for i in range(len(out))]
            out["place"] = [by_index[i].place for i in range(len(out))]
        return out


# -- the export -----------------------------------------------------------------------------------


def reselected(registry, result: RunResult, weights: Sequence[float], ctx) -> RunResult:
    """The run as if made with ``weights``: the method's ranker builds the release from the run's
    candidates (no classifier), then the run's metrics are measured again on that release (as
    ``execute`` measures them), so the manifest's numbers are the released subset's."""
    cls = registry.get("algorithm", result.spec.method.name)
    release = cls.ranker.reselect(result.data, result.release, weights)
    params = (
        dict(release.provenance.params)
        if release.provenance
        else {**result.spec.method.params, **dict(zip(weight_params(cls), weights))}
    )
    spec = dataclasses.replace(result.spec, method=PluginCall(result.spec.method.name, params))
    metrics = {k: float(v) for k, v in measure(registry, spec, result.data, release, ctx).items()}
    return dataclasses.replace(result, spec=spec, release=release, metrics=metrics)
