"""Privacy-aware candidate subsets and the evaluation function E(S) (paper 004,
docs/reference.md#privacy-aware-evaluation).

Jafer, Matwin and Sokolova, "A Multi-dimensional Privacy-aware Evaluation Function in Automatic
Feature Selection". A data holder releases a subset S of the attributes for a recipient who
predicts the class C; an attacker uses the same attributes to predict the sensitive attribute SA.

* PBI(S) = (Acc(SA | S) / Acc(SA | BL) − 1) × 100 (Definition 1), or with C = SA,
  (Acc(C | S) / Acc(C | BL) − 1) × 100 (Definition 2); DistP_PBI is the PBI of guessing SA's
  majority value (§3.2).
* PrivR and PerfR rank BL's attributes by how much removing each one changes Acc(SA | ·) and
  Acc(C | ·) (Figure 4); the generator of Figure 5 walks each list from the bottom, removing an
  attribute when the class is still predicted as well as from BL (or not significantly worse,
  paired t-test over the folds) and PBI stays ≤ α.
* E(S) = w1·prf + w2·prv + w3·num over the candidates plus the baseline, with competition ranks
  (rank 1 the worst; §5, equation 4 and Tables 5–6); the release is argmax E(S), ties to the
  smallest subset.

The pure functions (:func:`competition_ranks`, :func:`e_scores`, :func:`rank_candidates`,
:func:`pbi`, :func:`backward_elimination`, :func:`candidate_frame`) hold no state and compute no
classifier; the desktop re-ranks through ``PrivacyAwareCandidates.rerank`` as its weight sliders move
and builds the release for the weights it settles on with ``PrivacyAwareCandidates.reselect``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import (EXPENSIVE, TABLE, Algorithm, BadInput, Metric, Role, Table, feature_subset, form_of, hookimpl, param,
                         params_to_dict)

from ._cv import CLASSIFIERS, CrossValidation, encode, label_codes, paired_p_value

PAPER = "004_b4cef08cb2ecc722"
WEIGHT_TOLERANCE = 1e-3  # w1 + w2 + w3 = 1 within this: the paper's own 0.333 × 3 = 0.999 passes
PAPER_WEIGHTS = ((0.333, 0.333, 0.333), (0.5, 0.25, 0.25), (0.2, 0.6, 0.2))  # Table 6's three cases
BASELINE = "baseline"
PERF_R, PRIV_R = "PerfR", "PrivR"
_DECIMALS = 9  # values equal to 9 decimals tie in a ranking (accuracies are ratios of counts)


# -- E(S): pure and fast --------------------------------------------------------------------------------
def competition_ranks(values: Sequence[float], *, ascending: bool) -> np.ndarray:
    """Standard competition ranks ("1224"): rank 1 for the smallest value when ``ascending``, for the
    largest otherwise; equal values share the best rank of their group and the next rank skips."""
    v = np.round(np.asarray(values, dtype=float), _DECIMALS)
    key = v if ascending else -v
    return np.searchsorted(np.sort(key), key, side="left").astype(np.int64) + 1


def check_weights(weights: Sequence[float]) -> tuple[float, float, float]:
    """(w1, w2, w3) as floats, or :class:`BadInput` if any is negative or they do not sum to 1."""
    try:
        w = tuple(float(x) for x in weights)
    except (TypeError, ValueError):
        raise BadInput(f"weights must be three numbers, got {weights!r}") from None
    if len(w) != 3:
        raise BadInput(f"E(S) takes three weights (performance, privacy, size), got {len(w)}")
    if any(not np.isfinite(x) or x < 0 for x in w):
        raise BadInput(f"weights must be numbers ≥ 0, got {', '.join(map(str, w))}")
    if abs(sum(w) - 1.0) > WEIGHT_TOLERANCE + 1e-12:
        raise BadInput(f"the weights w1 + w2 + w3 must sum to 1, got {sum(w):g} "
                       f"({' + '.join(f'{x:g}' for x in w)})")
    return w  # type: ignore[return-value]


def _columns(candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(candidates, pd.DataFrame):
        rows = candidates.to_dict("records")
    else:
        rows = list(candidates)
    if not rows:
        raise BadInput("there are no candidate subsets to rank")
    try:
        return (np.array([float(r["perf"]) for r in rows]), np.array([float(r["pbi"]) for r in rows]),
                np.array([float(r["size"]) for r in rows]))
    except KeyError as exc:
        raise BadInput(f"every candidate needs 'perf', 'pbi' and 'size'; one lacks {exc}") from None


def factor_ranks(candidates) -> dict:
    """prf (ascending in Perf), prv (descending in PBI) and num (descending in |S|): rank 1 is the
    worst of each, as in the paper's Table 5."""
    perf, pbi_, size = _columns(candidates)
    return {"prf": competition_ranks(perf, ascending=True), "prv": competition_ranks(pbi_, ascending=False),
            "num": competition_ranks(size, ascending=False)}


def e_scores(candidates, weights: Sequence[float]) -> np.ndarray:
    """E(S) = w1·prf + w2·prv + w3·num of every candidate (baseline included), in input order.

    ``candidates`` is a sequence of mappings (or a DataFrame) with ``perf``, ``pbi`` and ``size``.
    """
    return _weighted(factor_ranks(candidates), check_weights(weights))


def _weighted(ranks: dict, weights: tuple[float, float, float]) -> np.ndarray:
    w1, w2, w3 = weights
    return w1 * ranks["prf"] + w2 * ranks["prv"] + w3 * ranks["num"]


def rank_candidates(candidates, weights: Sequence[float]) -> list[dict]:
    """The full E(S) ranking, best first: argmax E(S), ties to the smallest |S|, then input order.

    Each entry has the candidate's ``index`` in the input, its ``label`` (when it has one), ``e``,
    ``prf``, ``prv``, ``num`` and ``place`` (1 = the subset to release, 2 = second best, …).
    Pure and fast (well under a millisecond for dozens of candidates): nothing is re-evaluated.
    """
    rows = candidates.to_dict("records") if isinstance(candidates, pd.DataFrame) else list(candidates)
    w = check_weights(weights)
    r = factor_ranks(rows)
    scores = _weighted(r, w)
    size = np.array([float(x["size"]) for x in rows])
    order = np.lexsort((np.arange(len(rows)), size, -np.round(scores, _DECIMALS)))
    return [{"index": int(i), "label": rows[i].get("label"), "e": float(scores[i]), "prf": int(r["prf"][i]),
             "prv": int(r["prv"][i]), "num": int(r["num"][i]), "place": place}
            for place, i in enumerate(order, start=1)]


def best_candidate(candidates, weights: Sequence[float]) -> int:
    """Index of argmax E(S) (ties to the smallest subset, then the earlier candidate)."""
    return rank_candidates(candidates, weights)[0]["index"]


def pbi(accuracy: float, baseline_accuracy: float) -> float:
    """Privacy Breach Increase in percent: (accuracy / baseline_accuracy − 1) × 100 (Definitions 1, 2)."""
    if baseline_accuracy <= 0:
        raise BadInput("the baseline predicts the sensitive attribute with accuracy 0: PBI is undefined")
    return (accuracy / baseline_accuracy - 1.0) * 100.0


# -- the ranker (Figure 4) and the generator (Figure 5) ---------------------------------------------------
def rank_attributes(baseline: Sequence[str], baseline_accuracy: float, accuracy_without: Callable[[str], float],
                    *, ascending: bool) -> list[tuple[str, float]]:
    """Each attribute a with baseline_accuracy − Acc(· | BL − a), sorted (stable in BL's order):
    ascending for PrivR (low → high), descending for PerfR (high → low)."""
    drops = [(a, baseline_accuracy - accuracy_without(a)) for a in baseline]
    return sorted(drops, key=lambda t: t[1] if ascending else -t[1])


@dataclass(frozen=True)
class Step:
    """One try of the generator: remove ``removed`` from the current subset."""

    list: str
    removed: str
    subset: tuple[str, ...]
    perf: float | None
    p_value: float | None
    pbi: float | None
    accepted: bool
    reason: str

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["subset"] = list(self.subset)
        return d


def backward_elimination(ranked: Sequence[str], perf_of: Callable, pbi_of: Callable, *, baseline_perf: float,
                         alpha: float, significance: float, name: str) -> list[Step]:
    """Figure 5 on one ranked list R₁..R_k: from S = BL, for i = k … 1 try S' = S − R_i; keep it when
    Acc(C | S') ≥ Perf_BLC or the difference is not significant (p ≥ ``significance``) and
    PBI(S') ≤ α. ``perf_of(S') → (Perf, p-value)``, ``pbi_of(S') → PBI``; PBI is only asked for when
    the performance test passes. A removal that would leave no attribute is refused."""
    subset = list(ranked)
    steps = []
    for attribute in reversed(list(ranked)):
        trial = tuple(a for a in subset if a != attribute)
        if not trial:
            steps.append(Step(name, attribute, trial, None, None, None, False, "would leave no attribute"))
            continue
        perf, p_value = perf_of(trial)
        if perf < baseline_perf and p_value < significance:
            steps.append(Step(name, attribute, trial, perf, p_value, None, False,
                              "accuracy significantly below the baseline"))
            continue
        value = pbi_of(trial)
        if value > alpha:
            steps.append(Step(name, attribute, trial, perf, p_value, value, False, "PBI above alpha"))
            continue
        subset = list(trial)
        steps.append(Step(name, attribute, trial, perf, p_value, value, True, "accepted"))
    return steps


def collect_candidates(baseline: Sequence[str], baseline_perf: float, steps: Sequence[Step]) -> list[dict]:
    """The candidate set: the baseline, then each accepted subset once (a subset both lists reach
    is listed once, under both names), labelled BL, A, B, …"""
    rows = [{"label": "BL", "subset": list(baseline), "size": len(baseline), "perf": baseline_perf, "pbi": 0.0,
             "p_value": 1.0, "list": BASELINE}]
    seen = {frozenset(baseline): 0}
    for s in steps:
        if not s.accepted:
            continue
        key = frozenset(s.subset)
        if key in seen:
            row = rows[seen[key]]
            if s.list not in row["list"].split(", "):
                row["list"] = f"{row['list']}, {s.list}"
            continue
        seen[key] = len(rows)
        rows.append({"label": _letter(len(rows) - 1), "subset": list(s.subset), "size": len(s.subset),
                     "perf": s.perf, "pbi": s.pbi, "p_value": s.p_value, "list": s.list})
    return rows


def _letter(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def candidate_frame(details: Mapping) -> pd.DataFrame:
    """The candidate table of a release's ``details`` as a DataFrame, ready for CSV and the charts:
    label, subset (comma-separated), size, perf, pbi, p_value, list, chosen, and the run's alpha,
    distp_pbi and baseline_perf on every row (so a CSV alone re-draws the charts)."""
    try:
        rows = details["candidates"]
        base = details["baseline"]
    except (KeyError, TypeError):
        raise BadInput("these results hold no candidate table (run privacy-aware-candidates first)") from None
    frame = pd.DataFrame([{**r, "subset": ", ".join(r["subset"])} for r in rows])
    frame["chosen"] = frame["label"] == details.get("chosen")
    frame["alpha"] = float(details.get("alpha", np.nan))
    frame["distp_pbi"] = float(base.get("distp_pbi", np.nan))
    frame["baseline_perf"] = float(base.get("perf", np.nan))
    return frame


# -- roles and the records evaluated -----------------------------------------------------------------------
@dataclass(frozen=True)
class Roles:
    sensitive: str
    target: str
    baseline: tuple[str, ...]

    @property
    def same(self) -> bool:
        return self.sensitive == self.target


def resolve_roles(table: Table, sensitive_is_class: bool) -> Roles:
    """SA from the sensitive role (or the class when C = SA), C from the target role, and BL = every
    other column that is not an identifier."""
    schema = table.schema
    target = schema.target
    if target is None:
        raise BadInput("privacy-aware selection needs the class: mark one column as the target")
    marked = schema.by_role(Role.SENSITIVE)
    if sensitive_is_class:
        if marked:
            raise BadInput(f"with sensitive_is_class on, the class {target!r} is the sensitive attribute, but "
                           f"{', '.join(map(repr, marked))} is also marked sensitive: unmark it or turn "
                           f"sensitive_is_class off")
        sensitive = target
    elif len(marked) != 1:
        found = "none is" if not marked else f"{len(marked)} are ({', '.join(marked)})"
        raise BadInput(f"privacy-aware selection needs exactly one sensitive attribute, but {found} marked "
                       f"sensitive; mark one, or set sensitive_is_class when the class itself is sensitive")
    else:
        sensitive = marked[0]
    baseline = tuple(c for c in table.released_columns() if c not in (target, sensitive))
    if not baseline:
        raise BadInput("there is no attribute to select: every column is the class, the sensitive attribute "
                       "or an identifier")
    return Roles(sensitive, target, baseline)


def evaluation_frame(table: Table, roles: Roles, missing: str, sample_rows: int, seed: int) -> pd.DataFrame:
    """The records the classifiers see: never one with a missing SA or class; with ``drop-rows`` none
    with a missing value at all (the paper's choice); at most ``sample_rows`` of them, drawn with
    ``seed`` (0 keeps all)."""
    columns = list(dict.fromkeys([*roles.baseline, roles.sensitive, roles.target]))
    frame = table.frame[columns]
    frame = frame.dropna() if missing == "drop-rows" else frame.dropna(subset=[roles.sensitive, roles.target])
    if sample_rows and len(frame) > sample_rows:
        picked = np.sort(np.random.default_rng(seed).choice(len(frame), sample_rows, replace=False))
        frame = frame.iloc[picked]
    return frame.reset_index(drop=True)


# -- the method -------------------------------------------------------------------------------------------
def _weight(default: float, factor: str):
    return param(default, minimum=0.0, maximum=1.0, label=f"weight of {factor}",
                 help=f"E(S) weight of the {factor} rank; w1 + w2 + w3 must be 1 (within 0.001)")


@dataclass(frozen=True)
class Params:
    classifier: str = param("c4.5", choices=CLASSIFIERS,
                            help="who predicts C and SA: C4.5-like entropy tree or naive Bayes")
    alpha: float = param(5.0, minimum=-100.0, maximum=1000.0, label="α (largest PBI, %)",
                         help="largest PBI in percent a candidate may have (0: no easier to attack than BL)")
    significance: float = param(0.05, minimum=0.0, exclusive_minimum=True, maximum=0.5,
                                help="p below which an accuracy under the baseline counts as significantly lower")
    w1: float = _weight(0.333, "performance")  # the paper's "no preference" (Table 6)
    w2: float = _weight(0.333, "privacy")
    w3: float = _weight(0.333, "size")
    sensitive_is_class: bool = param(False, label="C = SA",
                                     help="the class itself is the sensitive attribute (paper 004 §4.4)")
    folds: int = param(10, minimum=2, maximum=20, help="stratified cross-validation folds")
    missing: str = param("drop-rows", choices=("drop-rows", "as-value"),
                         help="records with a missing value: left out of the evaluation (the paper), or "
                              "a missing value is a category of its own (numbers: the median)")
    sample_rows: int = param(0, minimum=0, help="evaluate on a seeded sample of at most this many records "
                                                "(0: all); the release keeps every record")
    release_sensitive: bool = param(False, help="also release the sensitive attribute unchanged (the paper's "
                                                "assumption, §3.1); off: only the chosen attributes and the class")

    def __post_init__(self):
        check_weights((self.w1, self.w2, self.w3))

    @property
    def weights(self) -> tuple[float, float, float]:
        return (self.w1, self.w2, self.w3)


class PrivacyAwareCandidates(Algorithm):
    """Candidate subsets from PrivR and PerfR, and the one E(S) ranks first (paper 004 §4–5).

    Roles: SA is the one column marked sensitive (or, with ``sensitive_is_class``, the class), C the
    target, BL every other non-identifier column.

    What is released: the chosen attributes S and the class C, for every record; SA is withheld
    unless ``release_sensitive`` is on. The paper assumes SA is published unmodified (§3.1) and
    bounds how much S helps an attacker *infer* it. Printed next to S, SA would not need inferring:
    every record's value could simply be read, which PBI does not measure. So Veil withholds it by
    default, and a data holder in the paper's setting (the recipient needs SA) turns
    ``release_sensitive`` on. With C = SA the class is the sensitive attribute and is released,
    since predicting it is the recipient's task. Records left out of the evaluation (missing values,
    ``sample_rows``) are still released; identifiers never are.

    ``release.details`` holds the run: ``baseline`` (Perf_BLC, Perf_BLP, DistP_PBI), ``rankings``
    (PerfR, PrivR with their accuracy drops), ``steps`` (every removal tried, with why it was kept or
    refused), ``candidates`` (label, subset, size, Perf %, PBI %, p-value, list), ``weights``,
    ``ranking`` (the full E(S) ranking) and ``chosen``.
    """

    name = "privacy-aware-candidates"
    title = "Privacy-aware candidate subsets, chosen by E(S)"
    paper = PAPER
    description = ("Backward elimination along the privacy (PrivR) and performance (PerfR) rankings keeps "
                   "subsets that predict the class as well as all attributes and help an attacker predict "
                   "the sensitive attribute by at most α %; E(S) weighs their performance, privacy and size.")
    accepts = (TABLE,)
    needs_labels = True
    Params = Params

    # Capabilities: E(S)'s weights change after a run without re-running it (the desktop's ranking tab).
    required_roles = ("target", "sensitive")
    withholds_sensitive = True  # SA is released only with release_sensitive (its own parameter)
    adjustable = ("w1", "w2", "w3")
    adjustable_labels = ("performance", "privacy", "size")
    adjustable_sum_to_one = True
    charts = ("privacy-aware-es", "privacy-aware-regions")
    ranking_columns = (("place", "Place"), ("label", "Subset"), ("size", "Attributes"), ("perf", "Perf %"),
                       ("pbi", "PBI %"), ("e", "E(S)"), ("subset", "Attributes kept"))
    ranking_help = ("E(S) = w1·prf + w2·prv + w3·num over the candidates (rank 1 the worst of each); the highest "
                    "E(S) is released, ties to the smallest subset.")

    rerank = staticmethod(rank_candidates)
    candidate_frame = staticmethod(candidate_frame)

    @classmethod
    def role_problem(cls, data, values) -> str:
        """What the roles lack: one sensitive attribute SA and the class C (or C = SA)."""
        if form_of(data) != TABLE:
            return ""
        schema = data.schema
        sensitive = schema.by_role(Role.SENSITIVE)
        if schema.target is None:
            return "needs the class: mark the column to predict as the target under Dataset ▸ Columns"
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

    @classmethod
    def roles_text(cls, data, values) -> str:
        """Which columns a run takes as SA and C (when the roles name them)."""
        if form_of(data) != TABLE or data.schema.target is None:
            return ""
        target = data.schema.target
        if values.get("sensitive_is_class"):
            return f"Sensitive attribute and class (C = SA): {target}, from the column roles."
        sensitive = data.schema.by_role(Role.SENSITIVE)
        if len(sensitive) != 1:
            return ""
        return f"Sensitive attribute: {sensitive[0]}; class: {target} (from the column roles)."

    def run(self, data, model, params, ctx):
        roles = resolve_roles(data, params.sensitive_is_class)
        seed = int(ctx.seed or 0)
        frame = evaluation_frame(data, roles, params.missing, params.sample_rows, seed)
        if len(frame) < params.folds:
            raise BadInput(f"only {len(frame)} records remain to evaluate (after leaving out missing values); "
                           f"{params.folds}-fold cross-validation needs at least {params.folds}")
        kinds = {c.name: c.kind for c in data.schema.columns}
        targets = {roles.target: label_codes(frame[roles.target])}
        targets[roles.sensitive] = label_codes(frame[roles.sensitive])
        k = len(roles.baseline)
        budget = 1 + 3 * k if roles.same else 2 + 6 * k
        cv = CrossValidation(encode(frame, kinds, roles.baseline), targets, params.classifier, params.folds, seed,
                             ctx, budget)
        details = self._evaluate(cv, roles, params)
        details["records"] = len(frame)
        chosen = next(r for r in details["candidates"] if r["label"] == details["chosen"])
        ctx.progress(1.0, "candidates ranked")
        return feature_subset(data, self._released(chosen["subset"], roles, params),
                              notes=self._notes(chosen, roles, params), details=details)

    def _evaluate(self, cv: CrossValidation, roles: Roles, params) -> dict:
        bl, c, sa = roles.baseline, roles.target, roles.sensitive
        base_c = cv.accuracy(c, bl)
        base_sa = cv.accuracy(sa, bl)

        def without(target):
            return lambda a: cv.accuracy(target, [x for x in bl if x != a]).accuracy

        priv_r = rank_attributes(bl, base_sa.accuracy, without(sa), ascending=True)
        perf_r = rank_attributes(bl, base_c.accuracy, without(c), ascending=False)

        def perf_of(subset):
            score = cv.accuracy(c, subset)
            return score.accuracy, paired_p_value(score.folds, base_c.folds)

        def pbi_of(subset):
            return pbi(cv.accuracy(sa, subset).accuracy, base_sa.accuracy)

        steps = []
        for name, ranked in ((PERF_R, perf_r), (PRIV_R, priv_r)):
            steps += backward_elimination([a for a, _ in ranked], perf_of, pbi_of, baseline_perf=base_c.accuracy,
                                          alpha=params.alpha, significance=params.significance, name=name)
        candidates = collect_candidates(bl, base_c.accuracy, steps)
        ranking = rank_candidates(candidates, params.weights)
        return {
            "paper": PAPER, "mode": "C = SA" if roles.same else "C != SA", "sensitive": sa, "target": c,
            "classifier": params.classifier, "folds": params.folds, "alpha": params.alpha,
            "significance": params.significance,
            "baseline": {"attributes": list(bl), "perf": base_c.accuracy, "perf_sa": base_sa.accuracy,
                         "majority_sa": cv.majority_share(sa),
                         "distp_pbi": pbi(cv.majority_share(sa), base_sa.accuracy)},
            "rankings": {PERF_R: [{"attribute": a, "drop": v} for a, v in perf_r],
                         PRIV_R: [{"attribute": a, "drop": v} for a, v in priv_r]},
            "steps": [s.to_dict() for s in steps],
            "candidates": candidates,
            "weights": list(params.weights),
            "ranking": ranking,
            "chosen": ranking[0]["label"],
            "evaluations": cv.evaluations,
        }

    @classmethod
    def reselect(cls, data: Table, release, weights: Sequence[float]):
        """The release this run would have made with other weights, from its details alone (no
        classifier runs): what the desktop exports after its weight sliders moved."""
        details = release.details
        w = check_weights(weights)
        values = dict(release.provenance.params) if release.provenance else {}
        params = cls.params({**values, "w1": w[0], "w2": w[1], "w3": w[2]})
        ranking = rank_candidates(details["candidates"], w)
        chosen = details["candidates"][ranking[0]["index"]]
        roles = resolve_roles(data, params.sensitive_is_class)
        new = feature_subset(data, cls._released(chosen["subset"], roles, params),
                             notes=cls._notes(chosen, roles, params),
                             details={**details, "weights": list(w), "ranking": ranking, "chosen": chosen["label"]})
        if release.provenance is None:
            return new
        return new.with_provenance(dataclasses.replace(release.provenance, params=params_to_dict(params)))

    @staticmethod
    def _released(subset, roles: Roles, params) -> list[str]:
        if params.release_sensitive and not roles.same:
            return [*subset, roles.sensitive]
        return list(subset)

    @staticmethod
    def _notes(chosen: dict, roles: Roles, params) -> tuple[str, ...]:
        notes = [f"released subset {chosen['label']} ({', '.join(chosen['subset'])}): Perf {chosen['perf']:.3f} %, "
                 f"PBI {chosen['pbi']:.3f} %, the best E(S) for w = ({params.w1:g}, {params.w2:g}, {params.w3:g})"]
        if roles.same:
            notes.append(f"C = SA: the class {roles.target!r} is the sensitive attribute")
        elif params.release_sensitive:
            notes.append(f"the sensitive attribute {roles.sensitive!r} is released unchanged")
        else:
            notes.append(f"the sensitive attribute {roles.sensitive!r} is withheld")
        return tuple(notes)


# -- metrics ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MetricParams:
    classifier: str = param("c4.5", choices=CLASSIFIERS, help="classifier of the cross-validation")
    folds: int = param(10, minimum=2, maximum=20, help="stratified cross-validation folds")
    form: str = param("auto", choices=("auto", "sensitive-column", "sensitive-class"),
                      help="SA: the column marked sensitive, or the class (C = SA); auto: the marked "
                           "column if there is one, else the class")


class _SubsetMetric(Metric):
    """A value of the released attributes of a feature-subset release of a Table.

    A release made by privacy-aware-candidates carries the value it was chosen with (same classifier,
    folds, records and seed) and it is reported as is; any other feature subset is evaluated here.
    Other releases (generalised tables, binary matrices) give NaN.
    """

    accepts = (TABLE,)

    paper = PAPER
    Params = MetricParams
    detail_key = ""
    cost = EXPENSIVE  # cross-validated classifiers on several attribute subsets
    seconds_per_cell = 1.5e-5  # seconds per record and column (the plan's estimate)
    fits_forms = (TABLE,)

    def compute(self, original, release, params, ctx):
        own = _chosen_value(release, self.detail_key)
        if own is not None:
            return own
        if form_of(original) != TABLE or release.selected_features is None:
            return float("nan")
        try:
            roles = resolve_roles(original, _same(original, params.form))
        except BadInput:
            return float("nan")
        subset = [c for c in release.selected_features if c in roles.baseline]
        known = self.known(roles, subset)
        if known is not None:
            return known
        frame = evaluation_frame(original, roles, "drop-rows", 0, int(ctx.seed or 0))
        if len(frame) < params.folds:
            return float("nan")
        kinds = {c.name: c.kind for c in original.schema.columns}
        targets = {roles.target: label_codes(frame[roles.target]),
                   roles.sensitive: label_codes(frame[roles.sensitive])}
        try:
            cv = CrossValidation(encode(frame, kinds, roles.baseline), targets, params.classifier, params.folds,
                                 int(ctx.seed or 0), ctx, 2)
        except BadInput:  # too few records of every class to fill the folds: the value does not apply
            return float("nan")
        return float(self.value(cv, roles, subset))

    def known(self, roles, subset):
        """The value when it needs no classifier, else None."""
        return None

    def value(self, cv, roles, subset):  # pragma: no cover - interface
        raise NotImplementedError


def _same(table: Table, form: str) -> bool:
    if form == "auto":
        return not table.schema.by_role(Role.SENSITIVE)
    return form == "sensitive-class"


def _chosen_value(release, key: str):
    d = release.details or {}
    if "candidates" not in d or "chosen" not in d:
        return None
    if key == "distp_pbi":
        return float(d["baseline"]["distp_pbi"])
    row = next((r for r in d["candidates"] if r["label"] == d["chosen"]), None)
    return None if row is None else float(row[key])


class PbiMetric(_SubsetMetric):
    name = "pbi"
    title = "Privacy Breach Increase (PBI, %)"
    description = ("How much easier the released attributes make predicting the sensitive attribute than all "
                   "attributes do: (Acc(SA | S) / Acc(SA | BL) − 1) × 100; with C = SA, of the class.")
    category = "privacy"
    higher_is_better = False
    detail_key = "pbi"

    def known(self, roles, subset):
        return 0.0 if set(subset) == set(roles.baseline) else None

    def value(self, cv, roles, subset):
        return pbi(cv.accuracy(roles.sensitive, subset).accuracy, cv.accuracy(roles.sensitive, roles.baseline).accuracy)


class DistPPbiMetric(_SubsetMetric):
    name = "distp-pbi"
    title = "DistP_PBI (%)"
    description = ("The PBI of an attacker who only guesses the sensitive attribute's most frequent value: the "
                   "most privacy a release of these records can offer.")
    category = "privacy"
    higher_is_better = False
    detail_key = "distp_pbi"

    def value(self, cv, roles, subset):
        return pbi(cv.majority_share(roles.sensitive), cv.accuracy(roles.sensitive, roles.baseline).accuracy)


class CvAccuracyMetric(_SubsetMetric):
    name = "cv-accuracy"
    title = "Accuracy of the class from the released attributes (%, 10-fold CV)"
    description = "Perf(S): stratified cross-validated accuracy of C4.5 (or naive Bayes) predicting the class."
    category = "utility"
    higher_is_better = True
    detail_key = "perf"

    def value(self, cv, roles, subset):
        return cv.accuracy(roles.target, subset).accuracy


@hookimpl
def veil_register_algorithms():
    return [PrivacyAwareCandidates]


@hookimpl
def veil_register_metrics():
    return [PbiMetric, DistPPbiMetric, CvAccuracyMetric]
