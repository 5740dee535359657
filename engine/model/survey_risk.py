"""Risk as statisticians measure it on sample microdata: key frequencies, individual and household
risk, and which combinations of quasi-identifiers tell records apart.

The definitions, with their papers and where Veil and sdcMicro differ, are in docs/reference.md
("Risk on sample microdata"). In short, for each record i and its key (its values on the
quasi-identifiers):

* ``fk`` — the records of the sample that share the key; ``Fk`` — the sum of their survey weights,
  an estimate of how many people of the population share it. A blank (a missing value, or a value
  a method suppressed) matches any value by default, as sdcMicro's ``freqCalc`` counts it; with
  ``blanks_match_any=False`` it is a value of its own.
* individual risk (Benedetti and Franconi 1998) — the probability of a correct re-identification
  of the record, from ``fk`` and ``pk = fk / Fk``; without weights ``1 / fk``.
* global risk and expected re-identifications — the mean and the sum of the individual risks.
* household risk (Franconi and Polettini 2004) — ``1 − Π (1 − r_j)`` over the record's household.
* distinction and separation (ARX's attribute risk) — of a combination of quasi-identifiers: the
  share of records whose combination is distinct, and the share of pairs of records it tells apart.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..data.generalised import SUPPRESSED

APPROX, EXACT = "approx", "exact"


def key_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The records' keys as an n × m array of codes, one column per quasi-identifier, −1 for a blank
    (a missing value or a suppressed one)."""
    n = len(frame)
    codes = np.empty((n, len(columns)), dtype=np.int64)
    for j, column in enumerate(columns):
        values = frame[column]
        blank = values.isna().to_numpy(copy=True)
        if values.dtype == object:  # a value a method suppressed
            blank |= np.fromiter((v is SUPPRESSED for v in values), bool, n)
        if values.dtype == object:  # typed values (intervals, nodes) and mixed types compare as text
            values = values.map(lambda v: v if isinstance(v, str) else repr(v) if not pd.isna(v) else v)
        c, _ = pd.factorize(values.where(~blank), use_na_sentinel=True)
        codes[:, j] = c
    return codes


def weights_of(frame: pd.DataFrame, column: str | None) -> np.ndarray | None:
    """The survey weights of ``column`` as floats, refused with a sentence when one is missing, not a
    number or below 1 (a weight is how many people of the population a record stands for)."""
    if column is None:
        return None
    if column not in frame.columns:
        raise BadInput(f"the weight column {column!r} is not in the data")
    w = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(w) | (w < 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = frame[column].iloc[i]
        value = value.item() if isinstance(value, np.generic) else value  # 0, not np.int64(0)
        raise BadInput(
            f"the weight column {column!r} must hold numbers of at least 1 (how many people each record "
            f"stands for); record {i + 1} has {value!r}"
        )
    return w


def _group(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each record's key id and the distinct keys (rows of ``codes``)."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64), np.empty((1, 0), dtype=np.int64)
    radix = codes.max(axis=0, initial=-1) + 2  # codes run from −1
    if float(np.prod(radix.astype(float))) < 2**62:  # one number per key: a 1-D unique is much faster
        flat = np.zeros(len(codes), dtype=np.int64)
        for j in range(codes.shape[1]):
            flat = flat * int(radix[j]) + (codes[:, j] + 1)
        _, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
        return inverse.reshape(-1), codes[first]
    keys, inverse = np.unique(codes, axis=0, return_inverse=True)
    return inverse.reshape(-1), keys


def _project(keys: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Ids of the keys' values on ``columns`` (equal ids: equal values)."""
    return _group(keys[:, columns])[0]


def frequencies(
    codes: np.ndarray, weights: np.ndarray | None = None, *, blanks_match_any: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``fk`` and ``Fk`` of every record (``Fk`` = ``fk`` without weights).

    With ``blanks_match_any`` two keys match when they are equal wherever neither is blank: the keys
    are grouped by their pattern of blanks, and each pair of patterns is joined on the columns blank in
    neither (time O(patterns² · n); a table without blanks has one pattern)."""
    n = len(codes)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    inverse, keys = _group(codes)
    count = np.bincount(inverse, minlength=len(keys)).astype(float)
    total = np.bincount(inverse, weights=w, minlength=len(keys))
    if not blanks_match_any or not (keys < 0).any():
        return count[inverse], total[inverse]
    blank = keys < 0
    patterns, pattern_of = np.unique(blank, axis=0, return_inverse=True)
    pattern_of = pattern_of.reshape(-1)
    fk, Fk = np.zeros(len(keys)), np.zeros(len(keys))
    members = [np.flatnonzero(pattern_of == p) for p in range(len(patterns))]
    for p, mine in enumerate(members):
        for q, theirs in enumerate(members):
            shared = np.flatnonzero(~patterns[p] & ~patterns[q])
            both = np.concatenate([mine, theirs])
            ids = _project(keys[both], shared)
            mine_ids, their_ids = ids[: len(mine)], ids[len(mine) :]
            size = int(ids.max()) + 1
            fk[mine] += np.bincount(their_ids, weights=count[theirs], minlength=size)[mine_ids]
            Fk[mine] += np.bincount(their_ids, weights=total[theirs], minlength=size)[mine_ids]
    return fk[inverse], Fk[inverse]


def _exact_risk(f: int, p: float) -> float:
    """Benedetti and Franconi's individual risk of a key seen ``f`` ≥ 3 times, E[1/F] for F − f negative
    binomial (f, p), as the integral ∫₀¹ p^f t^(f−1) / (1 − (1 − p) t)^f dt (E[1/F] = ∫₀¹ E[t^(F−1)] dt),
    evaluated in logarithms: sdcMicro's closed form (an alternating series in p^(1−f)) gives the same
    value where it does not overflow, and overflows for large keys of small pk (docs/reference.md)."""
    from scipy.integrate import quad

    log_p, q = math.log(p), 1.0 - p

    def integrand(t: float) -> float:
        if t <= 0.0:
            return 0.0
        return math.exp(f * log_p + (f - 1) * math.log(t) - f * math.log1p(-q * t))

    # The integrand rises to 1 at t = 1 within a width of about p / f: for a large key of small p that
    # peak is too narrow for quad to find from [0, 1] alone (it returned 0 for f = 5000, p = 0.01), so
    # it is told where the peak lies.
    width = 1.0 / max(f / p - 1.0, 1.0)
    points = sorted({1.0 - j * width for j in (1, 4, 16, 64, 256, 1024) if 0.0 < 1.0 - j * width < 1.0})
    value, _ = quad(integrand, 0.0, 1.0, epsabs=0.0, epsrel=1e-10, limit=400, points=points or None)
    return value


def individual_risk(
    fk: np.ndarray, Fk: np.ndarray, *, weighted: bool, method: str = APPROX, check=None, progress=None
) -> np.ndarray:
    """Each record's individual risk (Benedetti and Franconi 1998), as sdcMicro's ``indivRisk``:
    without weights ``1 / fk``; with them, from ``pk = fk / Fk``: ``pk / (1 − pk) · log(1 / pk)`` for
    ``fk = 1``, ``pk / (1 − pk) − (pk / (1 − pk))² · log(1 / pk)`` for ``fk = 2``, and for ``fk ≥ 3``
    ``pk / (fk − (1 − pk))`` (approx) or the exact value; ``1 / fk`` where ``fk = Fk``. The exact value
    takes one integral per distinct (fk, Fk): ``check()`` is called between them (it raises to cancel)
    and ``progress(fraction, message)`` told how far they are."""
    if method not in (APPROX, EXACT):
        raise BadInput(f"individual risk is computed {APPROX!r} or {EXACT!r}, not {method!r}")
    fk, Fk = np.asarray(fk, dtype=float), np.asarray(Fk, dtype=float)
    if not weighted:
        return 1.0 / fk
    with np.errstate(divide="ignore", invalid="ignore"):
        p = fk / Fk
        odds = p / (1 - p)
        log_inverse = np.log(1 / p)
        risk = np.where(
            fk == 1, odds * log_inverse, np.where(fk == 2, odds - odds**2 * log_inverse, p / (fk - (1 - p)))
        )
    big = np.flatnonzero((fk > 2) & (fk != Fk))
    if method == EXACT and len(big):  # one integral per distinct (fk, Fk)
        pairs, inverse = np.unique(np.stack([fk[big], Fk[big]], axis=1), axis=0, return_inverse=True)
        values = np.empty(len(pairs))
        for i, (f, F) in enumerate(pairs):
            if i % 64 == 0:
                if check is not None:
                    check()
                if progress is not None:
                    progress(i / len(pairs), "exact individual risk")
            values[i] = _exact_risk(int(f), f / F)
        risk[big] = values[inverse.reshape(-1)]
    whole = fk == Fk
    risk[whole] = 1.0 / fk[whole]
    return risk


def household_risk(risk: np.ndarray, households: pd.Series | np.ndarray) -> np.ndarray:
    """Each record's household risk (Franconi and Polettini 2004): the probability that at least one
    member of its household is re-identified, ``1 − Π (1 − r_j)`` over the members, taken as
    independent. A record without a household id is a household of its own."""
    h = pd.Series(np.asarray(households, dtype=object))
    ids, _ = pd.factorize(h, use_na_sentinel=True)
    alone = ids < 0
    ids = np.where(alone, ids.max(initial=-1) + 1 + np.arange(len(ids)), ids)
    _, ids = np.unique(ids, return_inverse=True)
    with np.errstate(divide="ignore"):
        log_safe = np.log1p(-np.minimum(np.asarray(risk, dtype=float), 1.0))
    total = np.bincount(ids, weights=log_safe)
    return 1.0 - np.exp(total[ids])


@dataclass(frozen=True)
class SampleRisk:
    """The per-record figures of one table and their summaries."""

    fk: np.ndarray
    Fk: np.ndarray
    risk: np.ndarray
    household: np.ndarray | None
    weighted: bool
    blanks_match_any: bool
    method: str

    @property
    def expected_reidentifications(self) -> float:
        return float(self.risk.sum())

    @property
    def global_risk(self) -> float:
        return float(self.risk.mean()) if len(self.risk) else float("nan")

    @property
    def household_expected(self) -> float | None:
        return None if self.household is None else float(self.household.sum())

    @property
    def household_global(self) -> float | None:
        return None if self.household is None or not len(self.household) else float(self.household.mean())

    @property
    def sample_uniques(self) -> int:
        return int((self.fk == 1).sum())

    def blanks_words(self) -> str:
        return "a blank matches any value" if self.blanks_match_any else "a blank is a value of its own"


def sample_risk(
    frame: pd.DataFrame,
    quasi: Sequence[str],
    *,
    weight: str | None = None,
    household: str | None = None,
    blanks_match_any: bool = True,
    method: str = APPROX,
    check=None,
    progress=None,
) -> SampleRisk:
    """fk, Fk, individual and household risk of every record of ``frame`` on ``quasi`` (``check`` and
    ``progress``: see :func:`individual_risk`)."""
    if not quasi:
        raise BadInput("risk needs quasi-identifiers: mark the columns that identify people as quasi-identifiers")
    weights = weights_of(frame, weight)
    fk, Fk = frequencies(key_codes(frame, quasi), weights, blanks_match_any=blanks_match_any)
    risk = individual_risk(fk, Fk, weighted=weights is not None, method=method, check=check, progress=progress)
    hh = None
    if household is not None:
        if household not in frame.columns:
            raise BadInput(f"the household column {household!r} is not in the data")
        hh = household_risk(risk, frame[household])
    return SampleRisk(fk, Fk, risk, hh, weights is not None, blanks_match_any, method)


RISK_BINS = (0.0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0)  # the bins of the distribution of record risk


def risk_histogram(risk: np.ndarray, bins: Sequence[float] = RISK_BINS) -> list[dict]:
    """The records in each bin of individual risk: ``(from, to]``, the first bin ``[0, to]``."""
    risk = np.asarray(risk, dtype=float)
    out = []
    for lo, hi in zip(bins, bins[1:]):
        inside = (risk > lo) & (risk <= hi) if lo else (risk <= hi)
        out.append({"from": lo, "to": hi, "records": int(inside.sum())})
    return out


def suppressed_as_blank(frame: pd.DataFrame, quasi: Sequence[str]) -> pd.DataFrame:
    """A copy of a release's ``frame`` whose quasi-identifier cells written ``*`` (suppressed, as the
    exporters write them) are missing: blanks to the risk figures."""
    frame = frame.copy()
    for c in quasi:
        frame[c] = frame[c].mask(frame[c].astype(str) == "*")
    return frame


# -- which combinations of quasi-identifiers tell records apart (ARX's attribute risk) ---------------


def combinations_count(m: int, max_size: int | None = None) -> int:
    """How many non-empty combinations of ``m`` quasi-identifiers have at most ``max_size`` of them."""
    top = m if max_size is None else min(max_size, m)
    return sum(math.comb(m, k) for k in range(1, top + 1))


@dataclass(frozen=True)
class Combination:
    columns: tuple[str, ...]
    distinction: float  # distinct keys / records
    separation: float  # pairs of records with different keys / all pairs
    uniques: int  # records whose key no other record has


def rank_combinations(
    frame: pd.DataFrame, quasi: Sequence[str], max_size: int | None = None, *, check=None, progress=None
) -> list[Combination]:
    """Distinction and separation of every combination of ``quasi`` of at most ``max_size`` columns, the
    most separating first (a blank is a value of its own, as ARX counts it). ``check()`` is called
    between combinations (it raises to cancel); ``progress(fraction, message)`` after each."""
    codes = key_codes(frame, quasi)
    n = len(frame)
    pairs = n * (n - 1) / 2
    out = []
    top = len(quasi) if max_size is None else min(max_size, len(quasi))
    total = combinations_count(len(quasi), max_size)
    for k in range(1, top + 1):
        for combo in itertools.combinations(range(len(quasi)), k):
            if check is not None:
                check()
            if progress is not None:
                progress(len(out) / total, f"{len(out):,} of {total:,} combinations")
            inverse, keys = _group(codes[:, combo])
            sizes = np.bincount(inverse, minlength=len(keys)).astype(float)
            same = float((sizes * (sizes - 1) / 2).sum())
            out.append(
                Combination(
                    tuple(quasi[j] for j in combo),
                    len(keys) / n if n else float("nan"),
                    1.0 - same / pairs if pairs else float("nan"),
                    int((sizes == 1).sum()),
                )
            )
    out.sort(key=lambda c: (-c.separation, -c.distinction, len(c.columns)))
    return out
