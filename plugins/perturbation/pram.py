"""PRAM, the post-randomisation method (Gouweleeuw, Kooiman, Willenborg and De Wolf 1998;
docs/perturbation.md#pram).

Each value of a categorical column is replaced by a category drawn from its row of a transition
matrix P (P[i, j]: the probability that category i is published as j). P is the user's (a CSV file,
used exactly as given) or built from a retention probability r: r on the diagonal and (1 − r)/(L − 1)
elsewhere, over the L categories present. The *invariant* PRAM keeps the expected category counts:
with π the categories' shares, Q[k, j] = P[j, k]·π_j / Σ_i π_i·P[i, k] is the probability that a
published k came from j, R = P·Q satisfies πᵀR = πᵀ, and the matrix used is αR + (1 − α)I (sdcMicro's
construction, with a fixed rather than a random diagonal). Within strata, each stratum has its own π
and matrix. Every matrix used goes into the release's details, hence the manifest: an analyst needs
it to correct estimates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.engine import TABLE, Algorithm, BadInput, MemoryCost, ReportFact, Transition, hookimpl, param

from ._common import (
    PERTURBED_CATEGORIES,
    CATEGORICAL_KINDS,
    PROVIDES,
    chosen_columns,
    generator,
    perturbed_release,
    released_frame,
    strata_ids,
)

TOLERANCE = 1e-9  # how far a row of a user's matrix may sum from 1


def retention_matrix(categories: int, retention: float) -> np.ndarray:
    """P with ``retention`` on the diagonal and the rest spread evenly over the other categories
    (the identity for a single category)."""
    if categories == 1:
        return np.ones((1, 1))
    off = (1.0 - retention) / (categories - 1)
    p = np.full((categories, categories), off)
    np.fill_diagonal(p, retention)
    return p


def invariant_matrix(p: np.ndarray, shares: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """α·P·Q + (1 − α)·I, where Q[k, j] = P[j, k]·π_j / Σ_i π_i·P[i, k] (``shares`` = π): a matrix
    whose stationary distribution is π (πᵀR = πᵀ), so the expected counts after PRAM are the counts
    before. A category published by no one (Σ_i π_i·P[i, k] = 0) contributes nothing."""
    p = np.asarray(p, dtype=float)
    pi = np.asarray(shares, dtype=float)
    published = pi @ p  # Σ_i π_i P[i, k]
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(published[:, None] > 0, p.T * pi[None, :] / published[:, None], 0.0)
    r = p @ q
    return alpha * r + (1.0 - alpha) * np.eye(len(pi))


def draw(codes: np.ndarray, matrix: np.ndarray, rng: np.random.Generator, check=None) -> np.ndarray:
    """Each code i replaced by j drawn with probability ``matrix[i, j]``: one uniform per record,
    looked up in its row's cumulative sums, so a transition of probability zero is never drawn (its
    interval of the cumulative sums is empty). Codes below 0 (missing values) stay."""
    out = codes.copy()
    u = rng.random(len(codes))
    for i in range(matrix.shape[0]):
        if check is not None:
            check()
        rows = np.flatnonzero(codes == i)
        if not len(rows):
            continue
        cdf = np.cumsum(matrix[i])
        cdf /= cdf[-1]
        last = int(np.flatnonzero(matrix[i] > 0)[-1])
        out[rows] = np.minimum(np.searchsorted(cdf, u[rows], side="right"), last)
    return out


def read_matrix(path: str, method: str) -> pd.DataFrame:
    """A transition matrix from a CSV file: a header row of the published categories, then one row
    per original category (its name first, then its probabilities)."""
    try:
        m = pd.read_csv(path, index_col=0, dtype=str, keep_default_na=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise BadInput(f"{method}: cannot read the transition matrix {path!r}: {exc}") from None
    m.index = m.index.map(str)
    m.columns = m.columns.map(str)
    try:
        values = m.to_numpy(dtype=float)
    except ValueError:
        raise BadInput(f"{method}: the transition matrix {path!r} holds a value that is not a number") from None
    if list(m.index) != list(m.columns):
        raise BadInput(
            f"{method}: the transition matrix's rows ({', '.join(m.index)}) and columns "
            f"({', '.join(m.columns)}) must name the same categories in the same order"
        )
    if not np.isfinite(values).all() or (values < 0).any():
        raise BadInput(f"{method}: the transition matrix's probabilities must be numbers from 0 to 1")
    bad = np.flatnonzero(np.abs(values.sum(axis=1) - 1.0) > TOLERANCE)
    if len(bad):
        raise BadInput(
            f"{method}: row {m.index[bad[0]]!r} of the transition matrix sums to {values[bad[0]].sum():.6g}, not 1"
        )
    return pd.DataFrame(values, index=m.index, columns=m.columns)


@dataclass(frozen=True)
class PramParams:
    columns: str = param(
        "", help="columns to perturb, separated by semicolons (empty: the categorical quasi-identifiers)"
    )
    retention: float = param(
        0.8, minimum=0.0, maximum=1.0, help="probability that a value is kept, on the diagonal of the built matrix"
    )
    invariant: bool = param(True, help="make the built matrix invariant: the expected category counts are kept")
    alpha: float = param(
        0.5,
        minimum=0.0,
        maximum=1.0,
        help="invariant PRAM's weight of the invariant matrix against the identity (sdcMicro's alpha)",
    )
    strata: str = param("", help="columns whose combinations are strata, each with its own matrix (semicolons)")
    matrix: str = param(
        "", help="a CSV file holding the transition matrix (one column only; used exactly as given)", sweepable=False
    )


class Pram(Algorithm):
    name = "pram"
    keeps_record_order = True  # every record, in the input's order
    title = "PRAM (post-randomisation)"
    paper = "gouweleeuw-pram"
    description = (
        "Replaces each categorical value by one drawn from a transition matrix — the user's, or one "
        "keeping a value with the retention probability — optionally invariant (expected category counts "
        "kept) and within strata; the matrices go into the manifest (Gouweleeuw et al. 1998)."
    )
    accepts = (TABLE,)
    releases_sensitive = True
    randomised = True
    perturbs = True
    provides = (PROVIDES, PERTURBED_CATEGORIES)
    Params = PramParams
    # the codes, one uniform and the drawn codes per record and column, the output frame's copy
    memory_cost = MemoryCost(per_record=64.0, per_cell=48.0)

    def run(self, data, model, params, ctx):
        columns = chosen_columns(data, params.columns, CATEGORICAL_KINDS, self.name, "categories")
        if params.matrix and len(columns) != 1:
            raise BadInput(f"{self.name}: a transition matrix applies to one column; name it (columns=NAME)")
        given = read_matrix(params.matrix, self.name) if params.matrix else None
        strata, strata_names = strata_ids(data, params.strata, self.name)
        rng, source = generator(ctx)
        frame = released_frame(data)
        n_strata = int(strata.max()) + 1 if len(strata) else 0
        report = {}
        changed = {}
        transitions = []
        for c_index, column in enumerate(columns):
            values = data.frame[column].reset_index(drop=True)
            codes, categories = pd.factorize(values, sort=True)
            labels = [str(v) for v in categories]
            if given is not None:
                missing = sorted(set(labels) - set(given.index))
                if missing:
                    raise BadInput(f"{self.name}: the transition matrix has no row for {column} = {missing[0]!r}")
                order = [given.index.get_loc(lab) for lab in labels]
                extra = [i for i in range(len(given.index)) if i not in set(order)]
                labels = labels + [given.index[i] for i in extra]
                categories = pd.Index(list(categories) + [given.index[i] for i in extra])
                full = given.to_numpy()[np.ix_(order + extra, order + extra)]
            out = codes.copy()
            entries = []
            for s in range(n_strata):
                ctx.progress((c_index + s / max(n_strata, 1)) / len(columns), f"PRAM: {column}")
                rows = np.flatnonzero((strata == s) & (codes >= 0))
                if not len(rows):
                    continue
                if given is not None:
                    used = full  # the user's matrix over every category it names
                    local, present = codes[rows], np.arange(len(labels))
                    construction = "given"
                else:
                    local, present = _local_codes(codes[rows])
                    p = retention_matrix(len(present), params.retention)
                    if params.invariant:
                        shares = np.bincount(local, minlength=len(present)) / len(rows)
                        used = invariant_matrix(p, shares, params.alpha)
                        construction = "invariant"
                    else:
                        used = p
                        construction = "retention"
                drawn = draw(local, used, rng, ctx.check)
                out[rows] = present[drawn]
                entries.append(
                    {
                        "stratum": _stratum_values(data, strata_names, rows[0]),
                        "records": int(len(rows)),
                        "categories": [labels[i] for i in present],
                        "matrix": used.round(12).tolist(),
                        "construction": construction,
                    }
                )
                stratum = entries[-1]
                transitions.append(
                    Transition(column, tuple(stratum["categories"]), used, stratum["stratum"], stratum["records"])
                )
            frame[column] = _as_column(values, np.asarray(categories, dtype=object), out)
            changed[column] = int((out != codes).sum())
            report[column] = {"strata": entries, "changed_records": changed[column]}
        details = {
            "pram": {
                "columns": report,
                "strata_columns": strata_names,
                "retention": params.retention,
                "invariant": bool(params.invariant and given is None),
                "alpha": params.alpha if params.invariant and given is None else None,
                "matrix_file": params.matrix or None,
            }
        }
        ctx.progress(1.0, "PRAM: done")
        return perturbed_release(data, frame, columns, self.name, details, source, ctx, transitions)

    @classmethod
    def report_facts(cls, details, rows):
        pram = details.get("pram") or {}
        facts = []
        for column, entry in (pram.get("columns") or {}).items():
            changed = entry.get("changed_records", 0)
            facts.append(
                ReportFact(
                    f"PRAM on {column}",
                    f"{changed:,} records changed; {len(entry.get('strata') or [])} transition matrices "
                    "(one per stratum) in the manifest",
                    key=f"pram.columns.{column}.changed_records",
                    value=changed,
                )
            )
        return facts


def _local_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The codes of one stratum renumbered over the categories it holds (0 … L−1), and those
    categories' global codes."""
    present, local = np.unique(codes, return_inverse=True)
    return local.astype(np.int64), present


def _as_column(values: pd.Series, categories: np.ndarray, codes: np.ndarray) -> pd.Series:
    """The drawn ``codes`` as values of the input column's type; missing values (code −1) stay."""
    result = pd.Series(categories[np.maximum(codes, 0)], dtype=object)
    result[codes < 0] = values[codes < 0]
    if isinstance(values.dtype, pd.CategoricalDtype):  # a matrix's extra categories join the column's
        known = list(values.cat.categories)
        extra = [c for c in pd.unique(result.dropna()) if c not in set(known)]
        return pd.Series(pd.Categorical(result, categories=known + extra, ordered=values.cat.ordered))
    if values.dtype == object:
        return result
    return result.astype(values.dtype)


def _stratum_values(table, names: list[str], row: int) -> dict:
    return {name: _plain(table.frame[name].iloc[row]) for name in names}


def _plain(value):
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value


@hookimpl
def veil_register_algorithms():
    return [Pram]
