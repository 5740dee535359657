"""A perturbed release beside its input, column by column (docs/perturbation.md, "Before and after").

For each column the release declares perturbed (:class:`~veil.engine.Perturbation`): a column of
numbers has the input's and the release's histograms on shared bins and its records' original and
perturbed values paired (a seeded sample of them for a scatter, with their correlation and the mean
absolute change over all); a column of categories has its category counts before and after, the
counts the transition matrices lead one to expect (Σ over strata of the stratum's counts times its
matrix), and the matrices themselves. The desktop's Utility tab draws these figures and
``veil utility`` prints and writes the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..model.perturbation import Perturbation, Transition

BINS = 30  # histogram bins shared by the input and the release
PAIRS = 2_000  # records drawn (seeded) for a scatter of original against perturbed values
PAIR_SEED = 0  # the sample's seed: the same figures every time for the same release


@dataclass(frozen=True)
class NumericShift:
    """A perturbed column of numbers: ``before`` and ``after`` count the records in each bin of
    ``edges`` (the last bin closed); ``records`` have a value on both sides, ``changed`` of them a
    different one; ``correlation`` (Pearson) and ``mean_abs_change`` are over all of them;
    ``original`` / ``perturbed`` are a seeded sample of the pairs (every pair when ``records`` ≤
    :data:`PAIRS`). Without aligned records (``paired`` False) only the histograms are given."""

    name: str
    edges: np.ndarray
    before: np.ndarray
    after: np.ndarray
    paired: bool
    records: int = 0
    changed: int = 0
    correlation: float = float("nan")
    mean_abs_change: float = float("nan")
    original: np.ndarray = field(default_factory=lambda: np.empty(0))
    perturbed: np.ndarray = field(default_factory=lambda: np.empty(0))

    numeric = True

    def to_dict(self) -> dict:
        return {
            "numeric": True,
            "bins": {
                "lower": self.edges[:-1].tolist(),
                "upper": self.edges[1:].tolist(),
                "before": self.before.astype(int).tolist(),
                "after": self.after.astype(int).tolist(),
            },
            "paired": self.paired,
            "records": self.records,
            "changed_records": self.changed,
            "correlation": self.correlation,
            "mean_abs_change": self.mean_abs_change,
            "pairs_shown": int(len(self.original)),
        }


@dataclass(frozen=True)
class CategoryShift:
    """A perturbed column of categories: records per category before and after (in ``categories``'
    order), ``expected`` the counts after that the ``transitions`` lead one to expect (None without
    matrices or when they do not cover the input's categories), ``changed`` the records published as
    another category (None without aligned records)."""

    name: str
    categories: tuple[str, ...]
    before: np.ndarray
    after: np.ndarray
    expected: np.ndarray | None
    changed: int | None
    transitions: tuple[Transition, ...]

    numeric = False

    def to_dict(self) -> dict:
        return {
            "numeric": False,
            "categories": list(self.categories),
            "before": self.before.astype(int).tolist(),
            "after": self.after.astype(int).tolist(),
            "expected": None if self.expected is None else self.expected.tolist(),
            "changed_records": self.changed,
            "transitions": [t.to_dict() for t in self.transitions],
        }


@dataclass(frozen=True)
class PerturbationFigures:
    """The perturbed columns' figures, in the order the release declares them."""

    columns: dict[str, NumericShift | CategoryShift]

    def to_dict(self) -> dict:
        return {name: c.to_dict() for name, c in self.columns.items()}

    def tables(self) -> dict[str, pd.DataFrame]:
        """The figures as tidy tables, by the name of the CSV file each is written to."""
        bins, pairs, counts, matrices = [], [], [], []
        for name, c in self.columns.items():
            if isinstance(c, NumericShift):
                for lo, hi, b, a in zip(c.edges[:-1], c.edges[1:], c.before, c.after):
                    bins.append({"column": name, "lower": lo, "upper": hi, "before": int(b), "after": int(a)})
                pairs += [{"column": name, "original": o, "perturbed": p} for o, p in zip(c.original, c.perturbed)]
                continue
            for i, category in enumerate(c.categories):
                counts.append(
                    {
                        "column": name,
                        "category": category,
                        "before": int(c.before[i]),
                        "after": int(c.after[i]),
                        "expected": None if c.expected is None else float(c.expected[i]),
                    }
                )
            for t in c.transitions:
                for i, source in enumerate(t.categories):
                    for j, published in enumerate(t.categories):
                        matrices.append(
                            {
                                "column": name,
                                "stratum": t.stratum_text,
                                "from": source,
                                "to": published,
                                "probability": float(t.matrix[i, j]),
                            }
                        )
        return {
            "perturbed-histograms.csv": pd.DataFrame(bins, columns=["column", "lower", "upper", "before", "after"]),
            "perturbed-pairs.csv": pd.DataFrame(pairs, columns=["column", "original", "perturbed"]),
            "perturbed-categories.csv": pd.DataFrame(
                counts, columns=["column", "category", "before", "after", "expected"]
            ),
            "perturbed-transitions.csv": pd.DataFrame(
                matrices, columns=["column", "stratum", "from", "to", "probability"]
            ),
        }

    def write_csv(self, folder) -> list:
        """Write :meth:`tables` into ``folder``, each file atomically."""
        from pathlib import Path

        from ..base.io import write_text_atomic

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        return [write_text_atomic(folder / name, t.to_csv(index=False)) for name, t in self.tables().items()]


def _numbers(series: pd.Series) -> np.ndarray | None:
    """The column as floats (NaN for a blank), or None when some present value is not a number."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return None
    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.to_numpy(dtype=float, na_value=np.nan)
    values = pd.to_numeric(series, errors="coerce")
    if values.isna().sum() != series.isna().sum():
        return None
    return values.to_numpy(dtype=float, na_value=np.nan)


def numeric_shift(name: str, before: pd.Series, after: pd.Series, *, paired: bool, bins: int = BINS) -> NumericShift:
    x, y = _numbers(before), _numbers(after)
    present = np.concatenate([x[~np.isnan(x)], y[~np.isnan(y)]])
    edges = np.histogram_bin_edges(present, bins=bins) if len(present) else np.array([0.0, 1.0])
    counts_before = np.histogram(x[~np.isnan(x)], bins=edges)[0]
    counts_after = np.histogram(y[~np.isnan(y)], bins=edges)[0]
    if not paired:
        return NumericShift(name, edges, counts_before, counts_after, False)
    both = ~np.isnan(x) & ~np.isnan(y)
    xs, ys = x[both], y[both]
    n = len(xs)
    correlation = float("nan")
    if n > 1 and xs.std() > 0 and ys.std() > 0:
        correlation = float(np.corrcoef(xs, ys)[0, 1])
    shown = np.arange(n)
    if n > PAIRS:
        shown = np.sort(np.random.default_rng(PAIR_SEED).choice(n, PAIRS, replace=False))
    return NumericShift(
        name,
        edges,
        counts_before,
        counts_after,
        True,
        int(n),
        int((xs != ys).sum()),
        correlation,
        float(np.abs(ys - xs).mean()) if n else float("nan"),
        xs[shown],
        ys[shown],
    )


def _texts(series: pd.Series) -> pd.Series:
    return series.map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))


def category_shift(
    name: str, before: pd.Series, after: pd.Series, transitions, *, paired: bool, strata: pd.DataFrame | None = None
) -> CategoryShift:
    """``strata``: the input's columns the transitions' strata name (to count each stratum's records)."""
    b, a = _texts(before.reset_index(drop=True)), _texts(after.reset_index(drop=True))
    order = list(dict.fromkeys([*sorted(b.dropna().unique()), *(c for t in transitions for c in t.categories)]))
    order += sorted(set(a.dropna().unique()) - set(order))
    counts_before = b.value_counts().reindex(order, fill_value=0).to_numpy()
    counts_after = a.value_counts().reindex(order, fill_value=0).to_numpy()
    expected = _expected(b, order, transitions, strata)
    changed = int(((b != a) & b.notna()).sum()) if paired else None
    return CategoryShift(name, tuple(order), counts_before, counts_after, expected, changed, tuple(transitions))


def _expected(b: pd.Series, order: list[str], transitions, strata: pd.DataFrame | None) -> np.ndarray | None:
    """Σ over the transitions of (the stratum's records per category) · P, over ``order``; None when a
    category of the input has no row in its stratum's matrix (the counts would not add up)."""
    if not transitions:
        return None
    where = {c: i for i, c in enumerate(order)}
    expected = np.zeros(len(order))
    covered = np.zeros(len(b), dtype=bool)
    for t in transitions:
        rows = np.ones(len(b), dtype=bool)
        for column, value in t.stratum.items():
            if strata is None or column not in strata.columns:
                return None
            cells = strata[column].reset_index(drop=True)
            rows &= cells.isna().to_numpy() if value is None else (_texts(cells) == str(value)).to_numpy()
        counts = b[rows].value_counts().reindex(list(t.categories), fill_value=0).to_numpy(dtype=float)
        covered |= rows & b.isin(t.categories).to_numpy()
        published = counts @ t.matrix
        for j, category in enumerate(t.categories):
            expected[where[category]] += published[j]
    if (b.notna().to_numpy() & ~covered).any():
        return None
    return expected


def perturbation_figures(
    before: pd.DataFrame, after: pd.DataFrame, perturbation: Perturbation, *, bins: int = BINS
) -> PerturbationFigures:
    """The figures of every column ``perturbation`` declares that both ``before`` (the input) and
    ``after`` (the release, its records in the input's order) hold. Records are paired when the two
    have as many; a column is drawn as numbers when both sides' values are numbers."""
    paired = len(before) == len(after)
    strata_names = {k for t in perturbation.transitions for k in t.stratum}
    strata = before[[c for c in before.columns if c in strata_names]] if strata_names else None
    columns: dict = {}
    for name in perturbation.columns:
        if name not in before.columns or name not in after.columns:
            continue
        transitions = perturbation.transitions_of(name)
        if not transitions and _numbers(before[name]) is not None and _numbers(after[name]) is not None:
            columns[name] = numeric_shift(name, before[name], after[name], paired=paired, bins=bins)
        else:
            columns[name] = category_shift(name, before[name], after[name], transitions, paired=paired, strata=strata)
    return PerturbationFigures(columns)
