"""Risk and utility of a release next to the data it came from: the numbers of the report.

"Before" is the same kind of data before the method ran: every candidate column of the input
(its quasi-identifiers at their original values, or every feature of a binary matrix), as
:func:`before_release` builds it. "After" is the release as read back from the written file. Both
go through the registry's metric plugins (``prosecutor-risk-max``, ``prosecutor-risk-avg``,
``records-at-risk``; ``auc`` and ``accuracy``), so the report computes nothing a plugin does not.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.binary import BinaryMatrix
from ..base.errors import BadInput
from ..base.constants import DEFAULT_RISK_THRESHOLD
from ..run.jobs import Context
from ..model.groups import population_sizes
from ..model.blanks import check_rule, is_suppressed
from ..model.release import Release, feature_subset
from ..model.risk import reidentification_risk
from ..model.survey_risk import sample_risk, weights_of
from ..data.table import Role, Table

GROUP_SIZE_BINS = ((1, 1, "1"), (2, 2, "2"), (3, 4, "3-4"), (5, 9, "5-9"), (10, 19, "10-19"), (20, None, "20+"))
MAX_CELLS = 50_000_000  # larger data is not densified for the report's before/after figures
MAX_UTILITY_ROWS = 100_000  # beyond this many records the report skips its classifier comparison
MAX_BLANK_PATTERNS = 64  # more patterns of blank quasi-identifiers than this: no sample risk figures (cost ∝ patterns²)


@dataclass(frozen=True)
class ReportOptions:
    """What the report computes and writes.

    Attributes
    ----------
    risk_threshold : float
        A record is "at risk" when its re-identification risk exceeds this (default 0.2: groups
        smaller than 5; see ``plugins/evaluation/risk.py`` for the reasoning).
    utility : bool
        Train the classifier on the original and on the release (the slow part).
    tuned : bool
        Compute the classifier figures with the studies' protocol (each metric's
        ``tuned_report_params``: C tuned per fold on an inner split, six fits a fold) instead of the
        report's own (``report_params``: one stratified cross-validation with a fixed C). The report
        says which was used.
    html, pdf : bool
        Which report files to write.
    """

    risk_threshold: float = DEFAULT_RISK_THRESHOLD
    utility: bool = True
    tuned: bool = False
    html: bool = True
    pdf: bool = True


def before_release(data) -> Release | None:
    """The input as if released whole: every non-identifier column (or every feature), original values.

    Its quasi-identifiers are the columns marked so (all candidate columns when none is), exactly as
    a feature-selection release of the same data would mark them. None when the data is too large
    to lay out densely.
    """
    if isinstance(data, BinaryMatrix):
        if data.n_rows * max(data.n_features, 1) > MAX_CELLS:
            return None
        return feature_subset(data, list(range(data.n_features)))
    if isinstance(data, Table):
        target = data.schema.target
        return feature_subset(data, [c for c in data.released_columns() if c != target])
    return None


def release_as_written(
    frame: pd.DataFrame, roles: Mapping, parts: Mapping | None = None, hierarchies: Mapping | None = None
) -> Release:
    """A release rebuilt from a file read back and the roles its manifest records (BadInput when the
    file lacks a column they name). ``parts`` are the further files of a release in several parts
    (Anatomy's sensitive table): a column they hold counts as present. ``hierarchies``: those
    declared for its sensitive columns (:attr:`Release.hierarchies`)."""
    named = [("quasi-identifier", c) for c in roles.get("quasi_identifiers") or ()]
    named += [("target", roles["target"])] if roles.get("target") else []
    named += [("sensitive", c) for c in roles.get("sensitive") or ()]
    named += [("quasi-identifier", c) for c in roles.get("exact_quasi_identifiers") or ()]
    elsewhere = {c for part in (parts or {}).values() for c in part.columns}
    for role, column in named:
        if column not in frame.columns and not (role == "sensitive" and column in elsewhere):
            raise BadInput(f"the file lacks the {role} column {column!r}")
    return Release(
        "file",
        frame,
        tuple(roles.get("quasi_identifiers") or ()),
        target=roles.get("target"),
        sensitive=tuple(roles.get("sensitive") or ()),
        exact_quasi_identifiers=tuple(roles.get("exact_quasi_identifiers") or ()),
        hierarchies=dict(hierarchies or {}),
        blanks=None if roles.get("blanks") is None else check_rule(roles["blanks"]),
        weight=_named_column(frame, roles.get("weight"), "weight"),
        household=_named_column(frame, roles.get("household"), "household"),
    )


def _named_column(frame: pd.DataFrame, column, role: str) -> str | None:
    """The column of survey weights (or household ids) the manifest names, refused when the file
    lacks it."""
    if column is None:
        return None
    if not isinstance(column, str) or column not in frame.columns:
        raise BadInput(f"the file lacks the {role} column {column!r}")
    return column


def assess(
    registry,
    original,
    before: Release | None,
    after: Release | None,
    options: ReportOptions,
    ctx: Context | None = None,
) -> dict:
    """``{"risk": {...}, "utility": {...}}`` with plain, JSON-ready numbers (None where not computed).
    The household risk after reads the household ids the release holds (they travel with its
    records, whatever order they were written in)."""
    ctx = ctx or Context(0)
    ctx.progress(0.0, "assessing the risk before")
    risk = {
        "model": "prosecutor",
        "threshold": float(options.risk_threshold),
        "before": _risk(registry, original, before, options.risk_threshold, ctx),
    }
    ctx.progress(0.05, "assessing the risk after")
    risk["after"] = _risk(registry, original, after, options.risk_threshold, ctx)
    sample = sample_figures(original, before, after)
    if sample is not None:
        risk["sample"] = sample
    utility = None
    ctx.progress(0.1, "assessing utility" if options.utility else "assessed")
    if options.utility:
        utility = _utility(registry, original, before, after, ctx.child(0.1, 1.0), options.tuned)
    return {"risk": risk, "utility": utility}


def _risk(registry, original, release: Release | None, threshold: float, ctx) -> dict | None:
    if release is None:
        return None
    ctx.check()
    sizes = release.linkage_class_sizes()  # once: the risk figures and the group sizes below share it
    figures = risk_figures(sizes, release.linkage_columns(), threshold, population_sizes(release))
    ctx.check()
    return figures


def sample_figures(original, before: Release | None, after: Release | None) -> dict | None:
    """The risk figures of survey microdata (docs/reference.md#risk-on-sample-microdata) before and
    after: global risk, expected re-identifications, the highest individual risk, sample uniques and,
    with a household column, household risk. Computed when the input is a table marking a weight or a
    household column (survey microdata; without either, individual risk is 1 / fk, the prosecutor
    risk the report shows already), on its quasi-identifiers, a blank or ``*`` matching any value as
    sdcMicro counts it; None otherwise. The households before are the input's ids (``before`` is the
    input in its order); after, the ids the release holds (:attr:`Release.household`, only where the
    user agreed to release them), as the ``household-risk`` metric and ``veil risk`` read them."""
    schema = getattr(original, "schema", None)
    if not isinstance(original, Table) or (schema.weight is None and schema.household is None):
        return None
    quasi = schema.by_role(Role.QUASI_IDENTIFIER)
    if not quasi:
        return None
    households = None if schema.household is None else original.frame[schema.household].to_numpy()
    if before is not None and before.n_rows != original.n_rows:
        households = None  # not the input's records in order
    out = {
        "weight": schema.weight,
        "household": schema.household,
        "blanks": "a blank or * matches any value",
        "method": "approx",
    }
    out["before"] = _sample_side(before, quasi, schema.weight, households)
    released = None
    if after is not None and after.household is not None and after.household in after.frame.columns:
        released = after.frame[after.household].to_numpy()
    out["after"] = _sample_side(after, quasi, schema.weight, released)
    return out if out["before"] is not None or out["after"] is not None else None


def _sample_side(release: Release | None, quasi, weight, households) -> dict | None:
    if release is None:
        return None
    frame = release.frame
    keys = [c for c in quasi if c in frame.columns]
    if not keys or not len(frame):
        return None
    data = pd.DataFrame({c: frame[c].mask(is_suppressed(frame[c])) for c in keys})
    blank = data.isna().to_numpy()
    if blank.any() and len(np.unique(np.packbits(blank, axis=1), axis=0)) > MAX_BLANK_PATTERNS:
        return None  # too many patterns of blanks to join cheaply
    named = {}
    if weight is not None and weight in frame.columns:
        try:
            data["__weight__"] = weights_of(frame, weight)
        except BadInput:  # the weights as written are not numbers of at least 1
            return None
        named["weight"] = "__weight__"
    if households is not None and len(households) == len(frame):
        data["__household__"] = households
        named["household"] = "__household__"
    r = sample_risk(data, keys, **named)
    return {
        "columns": keys,
        "weighted": bool(r.weighted),
        "global_risk": _number(r.global_risk),
        "expected_reidentifications": _number(r.expected_reidentifications),
        "highest_risk": _number(float(r.risk.max())),
        "sample_uniques": int(r.sample_uniques),
        "household_global_risk": _number(r.household_global),
        "household_expected_reidentifications": _number(r.household_expected),
    }


def risk_figures(sizes: np.ndarray, columns: list[str], threshold: float, population=None, weights=None) -> dict:
    """The report's risk figures (a manifest's ``risk.before`` or ``risk.after``) from each record's
    group size (``sizes``), or with ``weights`` from entries standing for that many records each
    (:func:`class_risk`); ``population``: each entry's group size in the population."""
    r = reidentification_risk(sizes, threshold=threshold, population_sizes=population, weights=weights)
    w = np.ones(len(sizes)) if weights is None else np.asarray(weights, dtype=float)
    values = {
        "max": _number(r.prosecutor_max),
        "avg": _number(r.prosecutor_avg),
        "at_risk": _number(r.records_at_risk),
        "journalist_max": _number(r.journalist_max),
        "journalist_avg": _number(r.journalist_avg),
        "marketer": _number(r.marketer),
    }
    held = np.asarray(sizes)[w > 0]
    return {
        "columns": list(columns),
        "records": int(round(float(w.sum()))),
        "groups": int(round(float((w / np.maximum(sizes, 1)).sum()))) if len(sizes) else 0,  # |g|·1/|g| each
        "smallest_group": int(held.min()) if len(held) else None,
        **values,
        "group_sizes": group_size_shares(sizes, weights),
    }


def class_risk(class_sizes: np.ndarray, columns: list[str], threshold: float) -> dict:
    """:func:`risk_figures` from the records of each class (records equal on ``columns``), one entry
    per class: what a release too large to hold is assessed from (its classes counted in its files)."""
    sizes = np.asarray(class_sizes, dtype=np.int64)
    return risk_figures(sizes, columns, threshold, weights=sizes)


def utility_metrics(registry) -> list:
    """The metrics a report compares before and after: those declaring ``in_report`` (a capability,
    so the engine never names one)."""
    return [registry.metric(n) for n in registry.names("metric") if registry.get("metric", n).in_report]


def utility_rows(util: dict) -> list[tuple[str, str]]:
    """(title, key) of each utility figure a manifest recorded, in the order recorded."""
    titles = util.get("titles") or {}
    keys = list(dict.fromkeys([*(util.get("before") or {}), *(util.get("after") or {})]))
    return [(titles.get(k, k), k) for k in keys]


def group_size_shares(sizes: np.ndarray, weights=None) -> dict:
    """Share of records by the size of their group (1, 2, 3-4, 5-9, 10-19, 20+); with ``weights``,
    each entry stands for that many records."""
    sizes = np.asarray(sizes)
    w = np.ones(len(sizes)) if weights is None else np.asarray(weights, dtype=float)
    n = float(w.sum())
    out = {}
    for lo, hi, label in GROUP_SIZE_BINS:
        inside = (sizes >= lo) if hi is None else ((sizes >= lo) & (sizes <= hi))
        out[label] = float(w[inside].sum() / n) if n else 0.0
    return out


NO_TARGET = "the data has no target column, so no classifier was trained"


def classifier_skipped(release: Release | None) -> str:
    """Why a report on this release trains no classifier ("" when it trains one: the release has a
    target column and at most ``MAX_UTILITY_ROWS`` records). The export dialog says it beforehand."""
    if release is None:
        return ""
    if release.target is None:
        return NO_TARGET
    if release.n_rows > MAX_UTILITY_ROWS:
        return (
            f"more than {MAX_UTILITY_ROWS:,} records: the classifier comparison was skipped "
            f"(run the utility metrics on a sample instead)"
        )
    return ""


def report_params(metric, tuned: bool = False):
    """The parameters a report computes ``metric`` with (see :class:`ReportOptions`)."""
    return metric.params(metric.tuned_report_params if tuned else metric.report_params)


def _utility(registry, original, before: Release | None, after: Release | None, ctx, tuned: bool = False) -> dict:
    target = (after or before).target if (after or before) is not None else None
    metrics = utility_metrics(registry)
    protocols = [m.protocol(report_params(m, tuned)) for m in metrics]
    out = {
        "classifier": next((p for p in protocols if p), "the metrics' own protocol"),
        "target": target,
        "before": None,
        "after": None,
        "note": None,
        "titles": {m.name: m.title for m in metrics},
    }
    skipped = (
        next((why for why in map(classifier_skipped, (after, before)) if why), None)
        if (after or before) is not None
        else NO_TARGET
    )
    if skipped:
        out["note"] = skipped
        return out
    for i, (side, release) in enumerate((("before", before), ("after", after))):
        if release is None:
            continue
        sub = ctx.child(i / 2, (i + 1) / 2)
        out[side] = {}
        for metric in metrics:
            sub.check()
            out[side][metric.name] = _number(_memoised(metric, original, release, sub, report_params(metric, tuned)))
    return out


_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 32


def _memoised(metric, original, release: Release, ctx: Context, params=None):
    """``metric.compute`` with default parameters, remembered by the release's content.

    The classifier metrics depend on the records, the target and the seed only, never on the row
    order (they sort rows canonically), so a digest of the sorted row hashes is a sound key. Export
    after export of the same input then trains the "before" classifier once, and an unchanged
    release (all features) costs nothing more.
    """
    params = metric.params() if params is None else params
    key = (
        type(metric).__module__,
        type(metric).__qualname__,
        repr(params),
        ctx.seed,
        release.target,
        _release_digest(release),
    )
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    value = metric.compute(original, release, params, ctx)
    with _MEMO_LOCK:
        _MEMO[key] = value
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return value


def _release_digest(release: Release) -> str:
    """:func:`content_digest` of a release's frame, computed once per release and kept (as
    :meth:`Release.group_ids` is): the figures of one export share it."""
    digest = release.__dict__.get("_content_digest")
    if digest is None:
        digest = content_digest(release.frame)
        object.__setattr__(release, "_content_digest", digest)  # a cache, not a field
    return digest


def content_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's columns, dtypes and rows, independent of the row order."""
    h = hashlib.sha256()
    h.update("\x1f".join(f"{c}:{frame[c].dtype}" for c in frame.columns).encode())
    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy() if len(frame.columns) else np.zeros(0, np.uint64)
    h.update(np.sort(rows).tobytes())
    h.update(str(len(frame)).encode())
    return h.hexdigest()


def _number(v) -> float | None:
    if v is None:
        return None
    v = float(v)
    return v if np.isfinite(v) else None
