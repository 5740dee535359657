"""The privacy-aware-candidates method (paper 004, docs/reference.md#privacy-aware-evaluation):
candidate subsets from PrivR and PerfR, the one E(S) ranks first released. The E(S) arithmetic,
the generator and the roles are in :mod:`._privacy_aware`.

The method declares a ranker (:class:`EsRanker`): its release carries the candidates as a typed
:class:`~veil.engine.Ranking`, which the ranker orders again at other weights without any
classifier (the desktop's weight sliders) and turns into the release those weights would have made
(the desktop's export at the sliders' weights).
"""

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
    Table,
    Weight,
    feature_subset,
    form_of,
    hookimpl,
    param,
    params_to_dict,
)

from ._cv import CLASSIFIERS, CrossValidation, encode, label_codes, paired_p_value
from ._privacy_aware import (
    PAPER,
    PERF_R,
    PRIV_R,
    Roles,
    backward_elimination,
    candidate_frame,
    check_weights,
    collect_candidates,
    evaluation_frame,
    pbi,
    rank_attributes,
    rank_candidates,
    resolve_roles,
)


# -- the method -------------------------------------------------------------------------------------------
def _weight(default: float, factor: str):
    return param(
        default,
        minimum=0.0,
        maximum=1.0,
        label=f"weight of {factor}",
        help=f"E(S) weight of the {factor} rank; w1 + w2 + w3 must be 1 (within 0.001)",
    )


@dataclass(frozen=True)
class Params:
    classifier: str = param(
        "c4.5", choices=CLASSIFIERS, help="who predicts C and SA: C4.5-like entropy tree or naive Bayes"
    )
    alpha: float = param(
        5.0,
        minimum=-100.0,
        maximum=1000.0,
        label="α (largest PBI, %)",
        help="largest PBI in percent a candidate may have (0: no easier to attack than BL)",
    )
    significance: float = param(
        0.05,
        minimum=0.0,
        exclusive_minimum=True,
        maximum=0.5,
        help="p below which an accuracy under the baseline counts as significantly lower",
    )
    w1: float = _weight(0.333, "performance")  # the paper's "no preference" (Table 6)
    w2: float = _weight(0.333, "privacy")
    w3: float = _weight(0.333, "size")
    sensitive_is_class: bool = param(
        False, label="C = SA", help="the class itself is the sensitive attribute (paper 004 §4.4)"
    )
    folds: int = param(10, minimum=2, maximum=20, help="stratified cross-validation folds")
    missing: str = param(
        "drop-rows",
        choices=("drop-rows", "as-value"),
        help="records with a missing value: left out of the evaluation (the paper), or "
        "a missing value is a category of its own (numbers: the median)",
    )
    sample_rows: int = param(
        0,
        minimum=0,
        help="evaluate on a seeded sample of at most this many records (0: all); the release keeps every record",
    )
    release_sensitive: bool = param(
        False,
        help="also release the sensitive attribute unchanged (the paper's "
        "assumption, §3.1); off: only the chosen attributes and the class",
    )

    def __post_init__(self):
        check_weights((self.w1, self.w2, self.w3))

    @property
    def weights(self) -> tuple[float, float, float]:
        return (self.w1, self.w2, self.w3)


# -- the ranking: E(S) at any weights, from the run's candidates alone -----------------------------------
COLUMNS = (
    RankingColumn("size", "Attributes"),
    RankingColumn("perf", "Perf %"),
    RankingColumn("pbi", "PBI %"),
    RankingColumn("e", "E(S)"),
)
_OWN = ("size", "perf", "pbi", "p_value", "list")  # a candidate's values that do not depend on the weights


def as_candidate(row: dict) -> Candidate:
    """A row of ``details["candidates"]`` as a typed :class:`~veil.engine.Candidate`."""
    return Candidate(str(row["label"]), tuple(row["subset"]), {k: row[k] for k in _OWN if k in row})


def es_ranking(candidates: Sequence[Candidate], weights: Sequence[float], about: str = "") -> Ranking:
    """The candidates ranked by E(S) at ``weights``, best first (see :func:`rank_candidates`); each
    ranked candidate's values add ``e`` and the factor ranks ``prf``, ``prv``, ``num``."""
    candidates = tuple(candidates)
    ranked = rank_candidates([{"label": c.label, **c.values} for c in candidates], weights)
    order = tuple(
        RankedCandidate(
            r["place"],
            r["index"],
            candidates[r["index"]],
            {**candidates[r["index"]].values, "e": r["e"], "prf": r["prf"], "prv": r["prv"], "num": r["num"]},
        )
        for r in ranked
    )
    return Ranking(
        candidates,
        order,
        check_weights(weights),
        COLUMNS,
        label_header="Subset",
        subset_header="Attributes kept",
        about=about,
    )


class EsRanker(Ranker):
    """E(S)'s weights w1, w2, w3 (shares of 1) move after a run without re-running it."""

    title = "E(S) ranking"
    help = (
        "E(S) = w1·prf + w2·prv + w3·num over the candidates (rank 1 the worst of each); the highest E(S) is "
        "released, ties to the smallest subset."
    )
    weights = (Weight("w1", "performance"), Weight("w2", "privacy"), Weight("w3", "size"))
    sum_to_one = True
    charts = ("privacy-aware-es", "privacy-aware-regions")

    def rerank(self, ranking: Ranking, weights: Sequence[float]) -> Ranking:
        return es_ranking(ranking.candidates, weights, ranking.about)

    def reselect(self, data: Table, release, weights: Sequence[float]):
        """The release this run would have made with other weights, from its details alone (no
        classifier runs): what the desktop exports after its weight sliders moved."""
        method = PrivacyAwareCandidates
        details = release.details
        w = check_weights(weights)
        values = dict(release.provenance.params) if release.provenance else {}
        params = method.params({**values, "w1": w[0], "w2": w[1], "w3": w[2]})
        ranking = rank_candidates(details["candidates"], w)
        chosen = details["candidates"][ranking[0]["index"]]
        roles = resolve_roles(data, params.sensitive_is_class)
        new = feature_subset(
            data,
            method._released(chosen["subset"], roles, params),
            notes=method._notes(chosen, roles, params),
            details={**details, "weights": list(w), "ranking": ranking, "chosen": chosen["label"]},
            ranking=es_ranking([as_candidate(r) for r in details["candidates"]], w, _about(roles)),
        )
        if release.provenance is None:
            return new
        return new.with_provenance(dataclasses.replace(release.provenance, params=params_to_dict(params)))

    def table(self, release):
        """The candidate table of the release's details (:func:`candidate_frame`): the charts' data."""
        return candidate_frame(release.details)


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
    ``ranking`` (the full E(S) ranking) and ``chosen``, for the manifest and report; ``release.ranking``
    holds the same candidates and ranking typed, for the ranker (:class:`EsRanker`) and the desktop.
    """

    name = "privacy-aware-candidates"
    title = "Privacy-aware candidate subsets, chosen by E(S)"
    paper = PAPER
    description = (
        "Backward elimination along the privacy (PrivR) and performance (PerfR) rankings keeps "
        "subsets that predict the class as well as all attributes and help an attacker predict "
        "the sensitive attribute by at most α %; E(S) weighs their performance, privacy and size."
    )
    accepts = (TABLE,)
    needs_labels = True
    Params = Params

    withholds_sensitive = True  # SA is released only with release_sensitive (its own parameter)
    ranker = EsRanker()  # E(S)'s weights change after a run without re-running it (the desktop's ranking tab)

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
                return (
                    f"with C = SA the class {schema.target} is the sensitive attribute, but "
                    f"{', '.join(sensitive)} {'is' if len(sensitive) == 1 else 'are'} also marked sensitive: "
                    "mark it insensitive, or untick C = SA"
                )
            return ""
        if not sensitive:
            return (
                "needs the sensitive attribute: mark one column as sensitive under Dataset ▸ Columns (or tick "
                "C = SA when the class itself is sensitive)"
            )
        if len(sensitive) > 1:
            return (
                f"needs exactly one sensitive attribute, but {len(sensitive)} are marked "
                f"({', '.join(sensitive)}): keep one"
            )
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
            raise BadInput(
                f"only {len(frame)} records remain to evaluate (after leaving out missing values); "
                f"{params.folds}-fold cross-validation needs at least {params.folds}"
            )
        kinds = {c.name: c.kind for c in data.schema.columns}
        targets = {roles.target: label_codes(frame[roles.target])}
        targets[roles.sensitive] = label_codes(frame[roles.sensitive])
        k = len(roles.baseline)
        budget = 1 + 3 * k if roles.same else 2 + 6 * k
        cv = CrossValidation(
            encode(frame, kinds, roles.baseline), targets, params.classifier, params.folds, seed, ctx, budget
        )
        details = self._evaluate(cv, roles, params)
        details["records"] = len(frame)
        chosen = next(r for r in details["candidates"] if r["label"] == details["chosen"])
        ctx.progress(1.0, "candidates ranked")
        ranking = es_ranking([as_candidate(r) for r in details["candidates"]], params.weights, _about(roles))
        return feature_subset(
            data,
            self._released(chosen["subset"], roles, params),
            notes=self._notes(chosen, roles, params),
            details=details,
            ranking=ranking,
        )

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
            steps += backward_elimination(
                [a for a, _ in ranked],
                perf_of,
                pbi_of,
                baseline_perf=base_c.accuracy,
                alpha=params.alpha,
                significance=params.significance,
                name=name,
            )
        candidates = collect_candidates(bl, base_c.accuracy, steps)
        ranking = rank_candidates(candidates, params.weights)
        return {
            "paper": PAPER,
            "mode": "C = SA" if roles.same else "C != SA",
            "sensitive": sa,
            "target": c,
            "classifier": params.classifier,
            "folds": params.folds,
            "alpha": params.alpha,
            "significance": params.significance,
            "baseline": {
                "attributes": list(bl),
                "perf": base_c.accuracy,
                "perf_sa": base_sa.accuracy,
                "majority_sa": cv.majority_share(sa),
                "distp_pbi": pbi(cv.majority_share(sa), base_sa.accuracy),
            },
            "rankings": {
                PERF_R: [{"attribute": a, "drop": v} for a, v in perf_r],
                PRIV_R: [{"attribute": a, "drop": v} for a, v in priv_r],
            },
            "steps": [s.to_dict() for s in steps],
            "candidates": candidates,
            "weights": list(params.weights),
            "ranking": ranking,
            "chosen": ranking[0]["label"],
            "evaluations": cv.evaluations,
        }

    @staticmethod
    def _released(subset, roles: Roles, params) -> list[str]:
        if params.release_sensitive and not roles.same:
            return [*subset, roles.sensitive]
        return list(subset)

    @staticmethod
    def _notes(chosen: dict, roles: Roles, params) -> tuple[str, ...]:
        notes = [
            f"released subset {chosen['label']} ({', '.join(chosen['subset'])}): Perf {chosen['perf']:.3f} %, "
            f"PBI {chosen['pbi']:.3f} %, the best E(S) for w = ({params.w1:g}, {params.w2:g}, {params.w3:g})"
        ]
        if roles.same:
            notes.append(f"C = SA: the class {roles.target!r} is the sensitive attribute")
        elif params.release_sensitive:
            notes.append(f"the sensitive attribute {roles.sensitive!r} is released unchanged")
        else:
            notes.append(f"the sensitive attribute {roles.sensitive!r} is withheld")
        return tuple(notes)


def _about(roles: Roles) -> str:
    if roles.same:
        return f"Sensitive attribute and class (C = SA): {roles.target}."
    return f"Sensitive attribute {roles.sensitive}, class {roles.target}."


@hookimpl
def veil_register_algorithms():
    return [PrivacyAwareCandidates]
