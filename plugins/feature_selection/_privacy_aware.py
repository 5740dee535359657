"""Privacy-aware candidate subsets and the evaluation function E(S) (paper 004,
docs/reference.md#privacy-aware-evaluation): what the method (privacy_aware.py), its metrics
(privacy_aware_metrics.py) and its charts (privacy_aware_charts.py) share.

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
classifier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import BadInput, Role, Table

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
        raise BadInput(f"the weights w1 + w2 + w3 must sum to 1, got {sum(w):g} ({' + '.join(f'{x:g}' for x in w)})")
    return w  # type: ignore[return-value]


def _columns(candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(candidates, pd.DataFrame):
        rows = candidates.to_dict("records")
    else:
        rows = list(candidates)
    if not rows:
        raise BadInput("there are no candidate subsets to rank")
    try:
        return (
            np.array([float(r["perf"]) for r in rows]),
            np.array([float(r["pbi"]) for r in rows]),
            np.array([float(r["size"]) for r in rows]),
        )
    except KeyError as exc:
        raise BadInput(f"every candidate needs 'perf', 'pbi' and 'size'; one lacks {exc}") from None


def factor_ranks(candidates) -> dict:
    """prf (ascending in Perf), prv (descending in PBI) and num (descending in |S|): rank 1 is the
    worst of each, as in the paper's Table 5."""
    perf, pbi_, size = _columns(candidates)
    return {
        "prf": competition_ranks(perf, ascending=True),
        "prv": competition_ranks(pbi_, ascending=False),
        "num": competition_ranks(size, ascending=False),
    }


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
    return [
        {
            "index": int(i),
            "label": rows[i].get("label"),
            "e": float(scores[i]),
            "prf": int(r["prf"][i]),
            "prv": int(r["prv"][i]),
            "num": int(r["num"][i]),
            "place": place,
        }
        for place, i in enumerate(order, start=1)
    ]


def best_candidate(candidates, weights: Sequence[float]) -> int:
    """Index of argmax E(S) (ties to the smallest subset, then the earlier candidate)."""
    return rank_candidates(candidates, weights)[0]["index"]


def pbi(accuracy: float, baseline_accuracy: float) -> float:
    """Privacy Breach Increase in percent: (accuracy / baseline_accuracy − 1) × 100 (Definitions 1, 2)."""
    if baseline_accuracy <= 0:
        raise BadInput("the baseline predicts the sensitive attribute with accuracy 0: PBI is undefined")
    return (accuracy / baseline_accuracy - 1.0) * 100.0


# -- the ranker (Figure 4) and the generator (Figure 5) ---------------------------------------------------
def rank_attributes(
    baseline: Sequence[str], baseline_accuracy: float, accuracy_without: Callable[[str], float], *, ascending: bool
) -> list[tuple[str, float]]:
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


def backward_elimination(
    ranked: Sequence[str],
    perf_of: Callable,
    pbi_of: Callable,
    *,
    baseline_perf: float,
    alpha: float,
    significance: float,
    name: str,
) -> list[Step]:
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
            steps.append(
                Step(name, attribute, trial, perf, p_value, None, False, "accuracy significantly below the baseline")
            )
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
    rows = [
        {
            "label": "BL",
            "subset": list(baseline),
            "size": len(baseline),
            "perf": baseline_perf,
            "pbi": 0.0,
            "p_value": 1.0,
            "list": BASELINE,
        }
    ]
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
        rows.append(
            {
                "label": _letter(len(rows) - 1),
                "subset": list(s.subset),
                "size": len(s.subset),
                "perf": s.perf,
                "pbi": s.pbi,
                "p_value": s.p_value,
                "list": s.list,
            }
        )
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
            raise BadInput(
                f"with sensitive_is_class on, the class {target!r} is the sensitive attribute, but "
                f"{', '.join(map(repr, marked))} is also marked sensitive: unmark it or turn "
                f"sensitive_is_class off"
            )
        sensitive = target
    elif len(marked) != 1:
        found = "none is" if not marked else f"{len(marked)} are ({', '.join(marked)})"
        raise BadInput(
            f"privacy-aware selection needs exactly one sensitive attribute, but {found} marked "
            f"sensitive; mark one, or set sensitive_is_class when the class itself is sensitive"
        )
    else:
        sensitive = marked[0]
    baseline = tuple(c for c in table.released_columns() if c not in (target, sensitive))
    if not baseline:
        raise BadInput(
            "there is no attribute to select: every column is the class, the sensitive attribute or an identifier"
        )
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
