"""What the Risk tab shows, without Qt: the input's and the selected release's risk as statisticians
measure it (docs/reference.md, "Risk on sample microdata" and "SUDA"), side by side.

Each *side* is a table of records with its quasi-identifiers, its survey weights and its household
ids, taken from the input's roles (:func:`input_side`) or from a run's release (:func:`release_side`,
read as ``veil risk`` reads an export folder: the release's quasi-identifiers, the weight column when
the release keeps it, a suppressed cell a blank, and the household ids the release holds: none
unless the user agreed to release them, and then no household risk). :func:`measure` and
:func:`measure_suda` are the work the tab hands to its worker thread; :class:`Measured` holds a
side's figures and answers what the tab asks of them: the distribution of individual risk, the
records above the user's threshold, and SUDA's contributions.
:func:`measure_ranking` ranks the input's combinations of quasi-identifiers (:class:`Ranking`), and
:func:`marking` says what marking one of them as the quasi-identifiers changes. The figures are the
engine's (``veil.engine.sample_risk``, ``suda``, ``rank_combinations``), the same ``veil risk`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from veil.engine import (
    Combination,
    Role,
    SampleRisk,
    Suda,
    combinations_count,
    rank_combinations,
    risk_histogram,
    sample_risk,
    suda,
    suda_memory,
    suppressed_as_blank,
)

from .events import Event

INPUT, RELEASE = "input", "release"
SIDES = (INPUT, RELEASE)
THRESHOLD = 0.15  # sdcMicro's localSupp threshold: a record above it is at risk
APPROX, EXACT = "approx", "exact"  # the estimators of individual risk for keys seen 3 or more times
STOPPED = "computing its figures was stopped; they are computed when the tab is next shown"
RECORD, RISK, HOUSEHOLD, FK, WEIGHTED_FK, SUDA_SCORE, DIS = (
    "record",
    "individual risk",
    "household risk",
    "fk",
    "Fk",
    "SUDA score",
    "DIS score",
)
NUMBERS = (RECORD, RISK, HOUSEHOLD, FK, WEIGHTED_FK, SUDA_SCORE, DIS)  # the riskiest records' figures
COLUMNS, SIZE, SEPARATION, DISTINCTION, UNIQUES = "columns", "size", "separation", "distinction", "uniques"
RANKED = (COLUMNS, SIZE, SEPARATION, DISTINCTION, UNIQUES)  # the ranking's columns, in the order shown
RANKED_AT_ONCE = 5_000  # more combinations than this are ranked up to a smaller size first (as `veil risk` asks)


@dataclass(frozen=True)
class Side:
    """The records one side measures: ``frame`` holds the quasi-identifiers (a blank is missing), the
    weight column and the household column, in the table's row order."""

    name: str  # INPUT or RELEASE
    title: str
    frame: pd.DataFrame
    quasi: tuple[str, ...]
    weight: str | None = None
    household: str | None = None
    note: str = ""  # what the side lacks and why (a household id not released)

    @property
    def records(self) -> int:
        return len(self.frame)

    def suda_combinations(self, max_size: int | None) -> int:
        return combinations_count(len(self.quasi), max_size)

    def suda_memory(self, max_size: int | None) -> int:
        return suda_memory(self.records, len(self.quasi), max_size)


def input_side(table) -> Side | str:
    """The input measured on the roles the user marked, or why it cannot be."""
    schema = getattr(table, "schema", None)
    if table is None:
        return "Open a table to see its risk."
    if schema is None:
        return "Risk is measured on a table of records: these data are item sets."
    quasi = schema.by_role(Role.QUASI_IDENTIFIER)
    if not quasi:
        return "Mark the columns that identify people as quasi-identifiers (Dataset ▸ Columns) to measure their risk."
    weight, household = schema.weight, schema.household
    columns = list(dict.fromkeys([*quasi, *(c for c in (weight, household) if c)]))
    return Side(INPUT, "input", table.frame[columns].copy(), tuple(quasi), weight, household)


def release_side(title: str, original, release) -> Side | str:
    """A run's release measured as ``veil risk`` measures its export folder, or why it cannot be."""
    frame = getattr(release, "frame", None)
    if frame is None or getattr(release, "kind", "") == "feature-weights" or release.sets is not None:
        return f"{title}: its release is not a table of records, so it has no record risk."
    quasi = [c for c in release.quasi_identifiers if c in frame.columns]
    if not quasi:
        return f"{title}: its release keeps no quasi-identifier, so no record can be told apart by them."
    schema = getattr(original, "schema", None)
    weight = schema.weight if schema is not None else None
    weight = weight if weight in frame.columns else None
    household = schema.household if schema is not None else None
    note = ""
    if household is not None and household not in frame.columns:
        note = "the household id was not released, so the release has no household risk"
    household = household if household in frame.columns else None
    columns = list(dict.fromkeys([*quasi, *(c for c in (weight, household) if c)]))
    return Side(RELEASE, title, suppressed_as_blank(frame[columns], quasi), tuple(quasi), weight, household, note)


def measure(side: Side, blanks_match_any: bool, method: str, ctx) -> SampleRisk:
    """fk, Fk, individual and household risk of every record of ``side`` (the worker's job)."""
    ctx.progress(0.0, f"the risk of the {side.name}")
    return sample_risk(
        side.frame,
        side.quasi,
        weight=side.weight,
        household=side.household,
        blanks_match_any=blanks_match_any,
        method=method,
        check=ctx.check,
        progress=lambda fraction, message: ctx.progress(fraction, f"{message} of the {side.name}"),
    )


def measure_suda(side: Side, max_size: int | None, ctx) -> Suda:
    """SUDA of ``side`` (the worker's job): progress per combination searched, cancelled between them."""

    def progress(fraction: float, message: str) -> None:
        ctx.progress(fraction, f"SUDA of the {side.name}: {message}")

    return suda(side.frame, list(side.quasi), max_size=max_size, check=ctx.check, progress=progress)


def measure_ranking(side: Side, max_size: int | None, ctx) -> list[Combination]:
    """The ranking of the combinations of ``side``'s quasi-identifiers (the worker's job), by the
    engine's ``rank_combinations``, the function ``veil risk`` ranks with: progress per combination,
    cancelled between them."""

    def progress(fraction: float, message: str) -> None:
        ctx.progress(fraction, f"ranking: {message}")

    return rank_combinations(side.frame, list(side.quasi), max_size, check=ctx.check, progress=progress)


def ranking_size(quasi: int) -> int:
    """The largest size of combination ranked by default: all ``quasi`` quasi-identifiers unless that
    means more than :data:`RANKED_AT_ONCE` combinations (at least 1)."""
    size = quasi
    while size > 1 and combinations_count(quasi, size) > RANKED_AT_ONCE:
        size -= 1
    return max(size, 1)


@dataclass(frozen=True)
class Ranking:
    """The input's combinations of quasi-identifiers ranked by separation and distinction. Their
    figures depend only on the values of ``source`` (the open table's frame), not on the roles, so
    the ranking stands while that frame is open, marking a combination as the quasi-identifiers
    included."""

    source: object  # the frame ranked (compared by identity)
    columns: tuple[str, ...]  # the quasi-identifiers whose combinations were ranked
    max_size: int | None
    combinations: tuple[Combination, ...]

    def table(self) -> pd.DataFrame:
        """One row per combination, most separating first (the order ``veil risk`` prints)."""
        c = self.combinations
        return pd.DataFrame(
            {
                COLUMNS: [", ".join(x.columns) for x in c],
                SIZE: np.array([len(x.columns) for x in c], dtype=np.int64),
                SEPARATION: np.array([x.separation for x in c], dtype=float),
                DISTINCTION: np.array([x.distinction for x in c], dtype=float),
                UNIQUES: np.array([x.uniques for x in c], dtype=np.int64),
            }
        )


def marking(schema, columns) -> tuple[list[str], list[str]]:
    """What marking ``columns`` as the quasi-identifiers changes in ``schema``: the columns that become
    quasi-identifiers, and the former quasi-identifiers that become insensitive."""
    chosen = list(columns)
    former = schema.by_role(Role.QUASI_IDENTIFIER)
    return chosen, [c for c in former if c not in chosen]


@dataclass(frozen=True)
class Measured:
    """One side's figures: its sample risk, and SUDA's once the user asked for it."""

    side: Side
    risk: SampleRisk
    suda: Suda | None = None

    def with_suda(self, found: Suda | None) -> Measured:
        return replace(self, suda=found)

    def histogram(self) -> list[dict]:
        """Records per bin of individual risk (the bins ``veil risk`` prints)."""
        return risk_histogram(self.risk.risk)

    def above(self, threshold: float) -> int:
        """Records whose individual risk exceeds ``threshold`` (sdcMicro's localSupp rule)."""
        return int((self.risk.risk > threshold).sum())

    def figures(self, threshold: float) -> dict[str, object]:
        """The side's figures by name, in the order the tab lists them (None: not measured here)."""
        r, n = self.risk, self.side.records
        above = self.above(threshold)
        out = {
            "records": n,
            "sample uniques (fk = 1)": r.sample_uniques,
            "records whose key is seen twice": int((r.fk == 2).sum()),
            "highest individual risk": float(r.risk.max()) if n else None,
            "global risk": r.global_risk,
            "expected re-identifications": r.expected_reidentifications,
            f"records above {threshold:g}": above,
            f"share above {threshold:g}": above / n if n else None,
            "household global risk": r.household_global,
            "household expected re-identifications": r.household_expected,
        }
        if self.suda is not None:
            out[f"records with an MSU (up to {self.suda.max_size} columns)"] = self.suda.records_with_msu
            out["highest DIS score"] = float(self.suda.dis.max()) if n else None
        return out

    def riskiest(self, threshold: float) -> pd.DataFrame:
        """The records above ``threshold``, riskiest first (ties in row order): their number in the
        table (from 1), their figures and their values on the quasi-identifiers."""
        r = self.risk
        rows = np.flatnonzero(r.risk > threshold)
        rows = rows[np.argsort(-r.risk[rows], kind="stable")]
        columns = {RECORD: rows + 1, RISK: r.risk[rows]}
        if r.household is not None:
            columns[HOUSEHOLD] = r.household[rows]
        columns[FK] = r.fk[rows].astype(np.int64)
        if r.weighted:
            columns[WEIGHTED_FK] = r.Fk[rows]
        if self.suda is not None:
            columns[SUDA_SCORE] = self.suda.score[rows]
            columns[DIS] = self.suda.dis[rows]
        table = pd.DataFrame(columns)
        for c in self.side.quasi:
            table[c] = self.side.frame[c].to_numpy()[rows]
        return table

    def contributions(self) -> dict[str, float]:
        """SUDA's contribution of each quasi-identifier, in % (empty before SUDA was computed)."""
        return {} if self.suda is None else dict(self.suda.attribute_contribution)


def sort_order(table: pd.DataFrame, column: str, descending: bool) -> np.ndarray:
    """The rows of ``table`` sorted on ``column``: numbers as numbers, anything else as text; equal
    values in row order and blanks last, either way."""
    values = table[column]
    missing = values.isna().to_numpy()
    present = np.flatnonzero(~missing)
    if pd.api.types.is_numeric_dtype(values.dtype):
        keys = values.to_numpy(dtype=float)[present]
    else:
        keys = pd.Series(values.to_numpy()[present]).map(str).rank(method="dense").to_numpy()
    order = present[np.argsort(-keys if descending else keys, kind="stable")]
    return np.concatenate([order, np.flatnonzero(missing)])


class RiskState:
    """The tab's settings and each side's figures. ``changed`` is emitted with ``"sides"`` (what is
    measured changed: figures must be computed again), ``"measured"`` (figures arrived),
    ``"threshold"``, ``"settings"`` (blanks or method: figures must be computed again) or
    ``"ranking"`` (the input's ranking arrived or went)."""

    def __init__(self):
        self.threshold = THRESHOLD
        self.blanks_match_any = True
        self.method = APPROX
        self.suda_max_size: int | None = None  # all quasi-identifiers
        self.sides: dict[str, Side | str] = {INPUT: input_side(None), RELEASE: "Select a finished run to compare."}
        self.measured: dict[str, Measured] = {}
        self._suda: dict[str, tuple[Side, Suda]] = {}  # SUDA's figures outlive a new rule on blanks
        self.failed: dict[str, str] = {}  # side -> why its figures could not be computed
        self.ranking: Ranking | None = None  # the input's ranking of quasi-identifier combinations
        self.ranking_max_size: int | None = None  # the default: see ranking_size
        self.ranking_source = None  # the open table's frame, the one a ranking must be of
        self.changed = Event()

    # -- what is measured -------------------------------------------------------------------------
    def set_side(self, name: str, side: Side | str) -> None:
        self.sides[name] = side
        self.measured.pop(name, None)
        self._suda.pop(name, None)
        self.failed.pop(name, None)
        self.changed.emit("sides")

    def side(self, name: str) -> Side | None:
        side = self.sides.get(name)
        return side if isinstance(side, Side) else None

    def why_not(self, name: str) -> str:
        """Why side ``name`` has no figures ('' when it has them or they are being computed)."""
        side = self.sides.get(name)
        if isinstance(side, str):
            return side
        return self.failed.get(name, "")

    def to_measure(self) -> list[str]:
        """The sides whose figures are missing."""
        return [n for n in SIDES if self.side(n) is not None and n not in self.measured and n not in self.failed]

    def to_suda(self) -> list[str]:
        """The sides without SUDA's figures."""
        return [n for n in SIDES if self.side(n) is not None and n not in self._suda]

    # -- results ------------------------------------------------------------------------------------
    def record(self, name: str, side: Side, risk: SampleRisk) -> bool:
        """Keep ``risk`` if ``side`` is still what side ``name`` measures, under the rules now chosen
        (False: it came too late)."""
        if self.sides.get(name) is not side or (risk.blanks_match_any, risk.method) != (
            self.blanks_match_any,
            self.method,
        ):
            return False
        kept = self._suda.get(name)
        self.measured[name] = Measured(side, risk, kept[1] if kept is not None else None)
        self.changed.emit("measured")
        return True

    def record_suda(self, name: str, side: Side, found: Suda) -> bool:
        """Keep SUDA's figures of ``side`` if it is still what side ``name`` measures."""
        if self.sides.get(name) is not side:
            return False
        self._suda[name] = (side, found)
        if name in self.measured:
            self.measured[name] = self.measured[name].with_suda(found)
        self.changed.emit("measured")
        return True

    def stop(self, name: str, side: Side) -> None:
        """The user stopped computing side ``name``'s figures: not computed again until :meth:`resume`."""
        self.fail(name, side, STOPPED)

    def resume(self) -> None:
        """The sides the user stopped are to be computed again."""
        for name in [n for n, why in self.failed.items() if why == STOPPED]:
            del self.failed[name]

    def fail(self, name: str, side: Side, message: str) -> None:
        if self.sides.get(name) is side:
            self.failed[name] = message
            self.changed.emit("measured")

    def record_ranking(self, source, side: Side, max_size: int | None, combinations) -> bool:
        """Keep the ranking of ``side``'s quasi-identifiers, computed on the frame ``source``, if that frame
        is still the open table's (False: it came too late)."""
        if self.ranking_source is not source:
            return False
        self.ranking = Ranking(source, side.quasi, max_size, tuple(combinations))
        self.changed.emit("ranking")
        return True

    def forget_ranking(self, source) -> None:
        """The open table's frame is now ``source``: a ranking of another frame is dropped."""
        self.ranking_source = source
        if self.ranking is not None and self.ranking.source is not source:
            self.ranking = None
            self.changed.emit("ranking")

    def rank_size(self) -> int | None:
        """The largest size of combination the input's ranking goes up to (None: all)."""
        side = self.side(INPUT)
        if side is None:
            return self.ranking_max_size
        if self.ranking_max_size is None:
            size = ranking_size(len(side.quasi))
            return None if size >= len(side.quasi) else size
        return None if self.ranking_max_size >= len(side.quasi) else self.ranking_max_size

    def to_rank(self) -> bool:
        """Whether the input's ranking is missing or was made on other quasi-identifiers or another size."""
        side = self.side(INPUT)
        if side is None:
            return False
        r = self.ranking
        return r is None or (r.columns, r.max_size) != (side.quasi, self.rank_size())

    # -- settings -----------------------------------------------------------------------------------
    def set_threshold(self, value: float) -> None:
        if value != self.threshold:
            self.threshold = float(value)
            self.changed.emit("threshold")

    def set_rules(self, blanks_match_any: bool, method: str) -> None:
        """A new rule for blanks or a new estimator: every side is measured again (SUDA, which counts
        a blank as matching nothing either way, is kept)."""
        if (blanks_match_any, method) == (self.blanks_match_any, self.method):
            return
        self.blanks_match_any, self.method = blanks_match_any, method
        self.measured.clear()
        self.failed.clear()
        self.changed.emit("settings")

    def rules_text(self) -> str:
        blanks = "a blank matches any value" if self.blanks_match_any else "a blank is a value of its own"
        return f"individual risk {self.method} with weights, 1 / fk without; {blanks}"
