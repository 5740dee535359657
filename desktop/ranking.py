"""Choosing among privacy-aware candidate subsets by E(S) (paper 004), free of Qt.

A ``privacy-aware-candidates`` run evaluates its candidate subsets once, on the worker. Choosing
among them with other weights needs no classifier: the method's class ranks its candidates again
(``rerank``, well under a millisecond), turns a run's details into the charts' table
(``candidate_frame``) and builds the release for other weights (``reselect``). So the weights are
sliders: moving one re-ranks and redraws on the GUI thread, and the export writes the top of the
ranking the sliders show. The method is reached only through the registry.

The weights themselves are the method's parameters ``w1``, ``w2`` and ``w3`` in the configuration,
so projects and re-runs carry them. The sensitive attribute and the class come from the column
roles; :func:`role_problem` says what is missing before a run could fail on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pandas as pd

from veil.engine import BadInput, PluginCall, Role, RunResult, Table, measure

from .events import Event

METHOD = "privacy-aware-candidates"
WEIGHTS = ("w1", "w2", "w3")
FACTORS = ("performance", "privacy", "size")
ES_CHART, REGIONS_CHART = "privacy-aware-es", "privacy-aware-regions"
SCALE = 1000  # the sliders move in thousandths: weights are shown and kept with three decimals
SAME = 1e-9  # weights closer than this are the same weights


def has_weight_sliders(cls) -> bool:
    """Whether ``cls`` is the method whose E(S) weights the desktop shows as sliders."""
    return cls.name == METHOD and set(WEIGHTS) <= {s.name for s in cls.param_specs()}


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
    return tuple(float(specs[w]) for w in WEIGHTS)  # type: ignore[return-value]


def weights_in(values: Mapping, cls) -> tuple[float, float, float]:
    """The weights among a method's parameter values (its defaults where they are missing)."""
    defaults = default_weights(cls)
    return tuple(float(values[w]) if values.get(w) is not None else d  # type: ignore[return-value]
                 for w, d in zip(WEIGHTS, defaults))


def role_problem(cls, data, values: Mapping) -> str:
    """What the column roles lack for ``cls`` (empty when nothing does). Only the privacy-aware
    method reads roles beyond the target: one sensitive attribute SA and the class C."""
    if cls.name != METHOD or not isinstance(data, Table):
        return ""
    schema = data.schema
    sensitive = schema.by_role(Role.SENSITIVE)
    if schema.target is None:
        return ("needs the class: mark the column to predict as the target under Dataset ▸ Columns")
    if values.get("sensitive_is_class"):
        if sensitive:
            return (f"with C = SA the class {schema.target} is the sensitive attribute, but "
                    f"{', '.join(sensitive)} {'is' if len(sensitive) == 1 else 'are'} also marked sensitive: "
                    "mark it insensitive, or untick C = SA")
        return ""
    if not sensitive:
        return ("needs the sensitive attribute: mark one column as sensitive under Dataset ▸ Columns (or tick "
                "C = SA when the class itself is sensitive)")
    if len(sensitive) > 1:
        return (f"needs exactly one sensitive attribute, but {len(sensitive)} are marked "
                f"({', '.join(sensitive)}): keep one")
    return ""


def roles_text(cls, data, values: Mapping) -> str:
    """Which columns a run of ``cls`` takes as SA and C (when the roles name them)."""
    if cls.name != METHOD or not isinstance(data, Table) or data.schema.target is None:
        return ""
    target = data.schema.target
    if values.get("sensitive_is_class"):
        return f"Sensitive attribute and class (C = SA): {target}, from the column roles."
    sensitive = data.schema.by_role(Role.SENSITIVE)
    if len(sensitive) != 1:
        return ""
    return f"Sensitive attribute: {sensitive[0]}; class: {target} (from the column roles)."


# -- the ranking of a finished run ----------------------------------------------------------------

def ranked_details(entry) -> dict | None:
    """A finished privacy-aware run's details, when it has a release to rank."""
    outcome = getattr(entry, "outcome", None)
    if entry.planned.spec.method.name != METHOD or outcome is None or outcome.result is None:
        return None
    details = outcome.result.release.details
    return details if isinstance(details, Mapping) and details.get("candidates") else None


class RankingState:
    """The E(S) ranking of one finished privacy-aware run at the configuration's weights.

    ``changed`` is emitted when the run shown, its weights or the runs on offer change. Reading
    the ranking computes no classifier: the method's ``rerank`` orders the run's candidates.
    """

    def __init__(self, registry, config, runs):
        self.registry, self.config, self.runs = registry, config, runs
        self.run_id: int | None = None
        self.ranking: list[dict] = []
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
        return self.registry.get("algorithm", METHOD) if METHOD in self.registry.names("algorithm") else None

    def entries(self) -> list:
        """The finished runs that can be ranked, oldest first."""
        return [e for e in self.runs.entries if ranked_details(e) is not None]

    def entry(self):
        return self.runs.entry(self.run_id) if self.run_id is not None else None

    def details(self) -> dict | None:
        entry = self.entry()
        return ranked_details(entry) if entry is not None else None

    def frame(self) -> pd.DataFrame | None:
        """The run's candidate table (the charts' data and the CSV), made once per run."""
        details = self.details()
        if details is None:
            return None
        if self.run_id not in self._frames:
            self._frames[self.run_id] = self.method.candidate_frame(details)
        return self._frames[self.run_id]

    # -- the weights ----------------------------------------------------------------------------
    def weights(self) -> tuple[float, float, float]:
        cls = self.method
        choice = self.config.methods.get(METHOD)  # not config.choice: reading adds no entry
        return weights_in(choice.values if choice else {}, cls) if cls else (0.0, 0.0, 0.0)

    def set_weights(self, weights: Sequence[float]) -> None:
        """New weights for the method (kept in its configuration, so a re-run or project uses them);
        weights cannot be swept: re-ranking is free."""
        choice = self.config.choice("algorithm", METHOD)
        values = {**choice.values, **dict(zip(WEIGHTS, (float(w) for w in weights)))}
        sweeps = {k: v for k, v in choice.sweeps.items() if k not in WEIGHTS}
        self.config.set_params("algorithm", METHOD, values, sweeps)

    def run_weights(self) -> tuple[float, ...] | None:
        details = self.details()
        return tuple(details["weights"]) if details and details.get("weights") else None

    def export_weights(self, run_id: int) -> tuple[float, float, float] | None:
        """The weights run ``run_id`` is to be exported with: the sliders', when they differ from
        the run's own (None: export the run as it was made)."""
        entry = self.runs.entry(run_id)
        details = ranked_details(entry) if entry is not None else None
        if details is None or self.method is None:
            return None
        weights = self.weights()
        return None if same_weights(weights, details.get("weights") or ()) else weights

    def export_note(self, run_id: int | None) -> str:
        """What exporting run ``run_id`` releases, when that depends on the sliders' weights."""
        entry = self.runs.entry(run_id) if run_id is not None else None
        details = ranked_details(entry) if entry is not None else None
        if details is None or self.method is None:
            return ""
        weights = self.weights()
        try:
            top = self.method.rerank(details["candidates"], weights)[0]
        except BadInput as exc:
            return f"The E(S) weights cannot rank the candidates: {exc}"
        subset = details["candidates"][top["index"]]["subset"]
        text = (f"Releases subset {top['label']} ({', '.join(subset)}): the top of the E(S) ranking at the "
                f"sliders' weights w = {show_weights(weights)}")
        if not same_weights(weights, details.get("weights") or ()):
            text += f"; the run itself chose {details.get('chosen')} at w = {show_weights(details['weights'])}"
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
        details = self.details()
        self.ranking, self.problem = [], ""
        if details is not None:
            try:
                self.ranking = self.method.rerank(details["candidates"], key[1])
            except BadInput as exc:
                self.problem = str(exc)
        self.changed.emit()

    def rows(self) -> list[dict]:
        """The ranking with each candidate's size, Perf, PBI and attributes, best first."""
        details = self.details()
        if details is None:
            return []
        candidates = details["candidates"]
        return [{**r, "size": candidates[r["index"]]["size"], "perf": candidates[r["index"]]["perf"],
                 "pbi": candidates[r["index"]]["pbi"], "subset": list(candidates[r["index"]]["subset"])}
                for r in self.ranking]

    def weights_text(self) -> str:
        return "/".join(f"{w:.3f}" for w in self.weights())

    def data(self) -> pd.DataFrame | None:
        """The candidate table with each candidate's E(S) and place at the current weights."""
        frame = self.frame()
        if frame is None:
            return None
        out = frame.copy()
        if self.ranking:
            by_index = {r["index"]: r for r in self.ranking}
            out["e"] = [by_index[i]["e"] for i in range(len(out))]
            out["place"] = [by_index[i]["place"] for i in range(len(out))]
        return out


# -- the export -----------------------------------------------------------------------------------

def reselected(registry, result: RunResult, weights: Sequence[float], ctx) -> RunResult:
    """The run as if made with ``weights``: the method's ``reselect`` builds the release from the
    run's details (no classifier), then the run's metrics are measured again on that release (as
    ``execute`` measures them), so the manifest's numbers are the released subset's."""
    cls = registry.get("algorithm", result.spec.method.name)
    release = cls.reselect(result.data, result.release, weights)
    params = dict(release.provenance.params) if release.provenance else {
        **result.spec.method.params, **dict(zip(WEIGHTS, weights))}
    spec = dataclasses.replace(result.spec, method=PluginCall(result.spec.method.name, params))
    metrics = {k: float(v) for k, v in measure(registry, spec, result.data, release, ctx).items()}
    return dataclasses.replace(result, spec=spec, release=release, metrics=metrics)
