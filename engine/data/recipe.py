"""Reproducible binarisation recipes: how a Table becomes a BinaryMatrix.

A recipe is a list of steps, one per source column, each with a rule:

``one-hot``      one feature per category (``values`` fixes the categories and their order)
``equals``       one feature: column == ``value``
``equal-width``  ``bins`` intervals of equal width between the column's min and max
``quantile``     ``bins`` intervals holding about equal numbers of rows
``cuts``         intervals between explicit ``cuts`` (right-open, the last one closed)
``positive``     one feature: value > 0
``binary``       the column already holds 0/1 (anything else is refused)

:meth:`Recipe.fit` resolves data-dependent choices (categories, interval edges) into explicit
values, so a fitted recipe written to a project file rebuilds exactly the same features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .binary import BinaryMatrix, Feature
from ..base.errors import BadInput
from ..base.validate import NULL, NUMBER, check_shape
from .table import Kind, Role, Table

RULES = ("one-hot", "equals", "equal-width", "quantile", "cuts", "positive", "binary")


@dataclass(frozen=True)
class Step:
    column: str
    rule: str
    bins: int | None = None
    cuts: tuple[float, ...] | None = None
    values: tuple | None = None
    value: object = None

    def __post_init__(self):
        if self.rule not in RULES:
            raise BadInput(f"unknown binarisation rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.rule in ("equal-width", "quantile") and (self.bins is None or self.bins < 1):
            raise BadInput(f"rule {self.rule!r} on column {self.column!r} needs bins ≥ 1")
        if self.rule == "cuts" and (not self.cuts or list(self.cuts) != sorted(self.cuts)):
            raise BadInput(f"rule 'cuts' on column {self.column!r} needs increasing cut points")

    def to_dict(self) -> dict:
        d = {"column": self.column, "rule": self.rule}
        for key in ("bins", "cuts", "values", "value"):
            v = getattr(self, key)
            if v is not None:
                d[key] = list(v) if isinstance(v, tuple) else v
        return d

    @classmethod
    def from_dict(cls, d: Mapping, where: str = "recipe step") -> Step:
        check_shape(
            d,
            {"column": str, "rule": str, "bins": (int, NULL), "cuts": ([NUMBER], NULL), "values": (list, NULL)},
            where,
        )
        try:
            return cls(
                column=str(d["column"]),
                rule=str(d["rule"]),
                bins=d.get("bins"),
                cuts=tuple(float(c) for c in d["cuts"]) if d.get("cuts") is not None else None,
                values=tuple(d["values"]) if d.get("values") is not None else None,
                value=d.get("value"),
            )
        except KeyError as exc:
            raise BadInput(f"a recipe step lacks {exc.args[0]!r}") from None


@dataclass(frozen=True)
class Recipe:
    """Steps turning a Table's columns into binary features; the target column gives the labels."""

    steps: tuple[Step, ...]
    target: str | None = None
    fitted: bool = False
    notes: dict = field(default_factory=dict)

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def default_for(cls, table: Table, *, bins: int = 4) -> Recipe:
        """One-hot for categorical and small-domain columns, quantile intervals for numeric ones.

        Identifiers are never binarised; the target column provides the labels.
        """
        steps = []
        for col in table.schema.columns:
            if col.role in (Role.IDENTIFIER, Role.HOUSEHOLD, Role.TARGET):
                continue
            s = table.frame[col.name]
            if col.kind is Kind.BINARY:
                steps.append(Step(col.name, "binary"))
            elif col.kind is Kind.NUMERIC and s.nunique(dropna=True) > 2 * bins:
                steps.append(Step(col.name, "quantile", bins=bins))
            else:
                steps.append(Step(col.name, "one-hot"))
        return cls(tuple(steps), table.schema.target)

    def to_dict(self) -> dict:
        return {"target": self.target, "fitted": self.fitted, "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, d: Mapping, where: str = "recipe") -> Recipe:
        check_shape(d, {"steps": (list, NULL), "target": (str, NULL), "fitted": (bool, NULL)}, where)
        steps = d.get("steps") or []
        return cls(
            tuple(Step.from_dict(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)),
            d.get("target"),
            bool(d.get("fitted")),
        )

    # -- fit and apply ----------------------------------------------------------------------------
    def fit(self, table: Table) -> Recipe:
        """Resolve categories and interval edges on ``table`` into explicit values.

        A step on column ``"*"`` stands for every column no other step names (identifiers and the
        target excepted), in the table's order.
        """
        steps = _expand(self.steps, table, self.target)
        return Recipe(tuple(_fit_step(s, _column(table, s.column)) for s in steps), self.target, True)

    def apply(self, table: Table) -> BinaryMatrix:
        """Build the BinaryMatrix; fits first when the recipe is not fitted yet."""
        import scipy.sparse as sp

        recipe = self if self.fitted else self.fit(table)
        blocks, features = [], []
        for step in recipe.steps:
            s = _column(table, step.column)
            if table.schema[step.column].role in (Role.IDENTIFIER, Role.HOUSEHOLD):
                raise BadInput(f"column {step.column!r} is an identifier and cannot become a feature")
            mat, feats = _apply_step(step, s)
            blocks.append(mat)
            features.extend(feats)
        n = table.n_rows
        matrix = sp.hstack(blocks, format="csc") if blocks else sp.csc_matrix((n, 0), dtype=bool)
        labels = None
        if recipe.target is not None:
            labels = _column(table, recipe.target).to_numpy()
        return BinaryMatrix.from_sparse(
            matrix, features, labels, meta={"recipe": recipe.to_dict(), "source": table.source}
        )


def _expand(steps: tuple[Step, ...], table: Table, target: str | None) -> list[Step]:
    named = {s.column for s in steps if s.column != "*"}
    out = []
    for step in steps:
        if step.column != "*":
            out.append(step)
            continue
        for col in table.schema.columns:
            if col.name in named or col.name == target or col.role in (Role.IDENTIFIER, Role.HOUSEHOLD, Role.TARGET):
                continue
            out.append(Step(col.name, step.rule, step.bins, step.cuts, step.values, step.value))
    return out


def _column(table: Table, name: str) -> pd.Series:
    if name not in table.frame.columns:
        raise BadInput(f"the recipe names column {name!r}, which the table does not have")
    return table.frame[name]


def _numeric(s: pd.Series, step: Step) -> np.ndarray:
    values = pd.to_numeric(s, errors="coerce")
    bad = values.isna() & s.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise BadInput(f"rule {step.rule!r} needs numbers, but column {step.column!r} row {i + 1} holds {s.iloc[i]!r}")
    return values.to_numpy(dtype=float)


def _fit_step(step: Step, s: pd.Series) -> Step:
    if step.rule == "one-hot" and step.values is None:
        cats = sorted(pd.unique(s.dropna()), key=lambda v: (str(type(v)), v))
        return Step(step.column, "one-hot", values=tuple(_plain(v) for v in cats))
    if step.rule in ("equal-width", "quantile"):
        x = _numeric(s, step)
        x = x[~np.isnan(x)]
        if len(x) == 0:
            raise BadInput(f"column {step.column!r} has no numbers to cut into intervals")
        if step.rule == "equal-width":
            edges = np.linspace(x.min(), x.max(), step.bins + 1)
        else:
            edges = np.unique(np.quantile(x, np.linspace(0, 1, step.bins + 1)))
        inner = tuple(float(e) for e in edges[1:-1])
        lo, hi = float(x.min()), float(x.max())
        return Step(step.column, "cuts", cuts=inner if inner else (hi,), values=(lo, hi))
    if step.rule == "cuts" and step.values is None:
        x = _numeric(s, step)
        x = x[~np.isnan(x)]
        if len(x):
            return Step(step.column, "cuts", cuts=step.cuts, values=(float(x.min()), float(x.max())))
    return step


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _apply_step(step: Step, s: pd.Series):
    import scipy.sparse as sp

    n = len(s)
    col = step.column
    if step.rule == "binary":
        x = _numeric(s, step)
        if not np.all(np.isin(x, (0.0, 1.0))):
            i = int(np.flatnonzero(~np.isin(x, (0.0, 1.0)))[0])
            raise BadInput(f"column {col!r} must be binary (0/1), but row {i + 1} holds {s.iloc[i]!r}")
        return sp.csc_matrix(x.reshape(-1, 1).astype(bool)), [Feature(col, col, 1, "binary")]
    if step.rule == "positive":
        x = _numeric(s, step)
        return sp.csc_matrix((x > 0).reshape(-1, 1)), [Feature(col, col, None, "positive")]
    if step.rule == "equals":
        hit = (s == step.value).to_numpy(dtype=bool)
        return sp.csc_matrix(hit.reshape(-1, 1)), [Feature(f"{col}={step.value}", col, step.value, "one-hot")]
    if step.rule == "one-hot":
        values = list(step.values)
        codes = pd.Categorical(s, categories=values).codes
        rows = np.flatnonzero(codes >= 0)
        mat = sp.csc_matrix((np.ones(len(rows), bool), (rows, codes[rows])), shape=(n, len(values)))
        return mat, [Feature(f"{col}={v}", col, v, "one-hot") for v in values]
    # cuts: right-open intervals (-inf, c1), [c1, c2), ..., [ck, +inf)
    x = _numeric(s, step)
    cuts = np.asarray(step.cuts, dtype=float)
    codes = np.searchsorted(cuts, x, side="right")
    ok = ~np.isnan(x)
    rows = np.flatnonzero(ok)
    k = len(cuts) + 1
    mat = sp.csc_matrix((np.ones(len(rows), bool), (rows, codes[rows])), shape=(n, k))
    bounds = [-np.inf, *cuts.tolist(), np.inf]
    lo_all, hi_all = step.values if step.values else (None, None)
    feats = []
    for b in range(k):
        lo, hi = bounds[b], bounds[b + 1]
        shown_lo = lo if np.isfinite(lo) else lo_all
        shown_hi = hi if np.isfinite(hi) else hi_all
        name = f"{col}∈[{_fmt(shown_lo)},{_fmt(shown_hi)}{']' if b == k - 1 else ')'}"
        feats.append(Feature(name, col, (float(lo), float(hi)), "interval"))
    return mat, feats


def _fmt(v) -> str:
    if v is None:
        return "…"
    v = float(v)
    return str(int(v)) if v.is_integer() else f"{v:.4g}"


def binarise(table: Table, recipe: Recipe | Sequence[Mapping] | None = None) -> BinaryMatrix:
    """Convenience: the BinaryMatrix of ``table`` under ``recipe`` (the default recipe when None)."""
    if recipe is None:
        recipe = Recipe.default_for(table)
    elif not isinstance(recipe, Recipe):
        recipe = Recipe(tuple(Step.from_dict(s) for s in recipe), table.schema.target)
    return recipe.apply(table)
