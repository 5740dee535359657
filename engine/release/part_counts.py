"""A release in parts judged from its files: the groups counted in the parts (here, a chunk at a
time, or on the method's executor), each privacy model's verdict on them, the report's risk figures
from those counts, and ``veil verify``'s check of every part (docs/design.md#tables-larger-than-memory).

:mod:`.partitioned` exports a release in parts with these; :mod:`.verify` and :mod:`.report` check
and report one again. Groups are records equal on every written quasi-identifier, values compared as
the text written; a record written ``*`` in every one matches any value, as in a release of one file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from ..base.io import check_regular, sha256_file
from ..model.blanks import blank_view, suppressed_records
from ..model.bound import bind_models
from ..model.groups import GroupView
from ..model.params import params_to_dict
from ..run.executors import COUNT, read_counts
from .assessment import class_risk


@dataclass(frozen=True)
class CountsVerdict:
    """The privacy models' verdict on groups counted from files."""

    holds: bool
    message: str
    each: tuple[dict, ...]


def judge_counts(model, counts: pd.DataFrame, qis: list[str], sensitive: list[str]) -> CountsVerdict:
    """Judge the groups of ``counts`` (one row per combination of ``qis`` and ``sensitive`` values as
    text, its records in ``count``) with every model (a bound model or a combined one): each model
    judging sensitive values judges every sensitive column, and all must hold."""
    weights = counts[COUNT].to_numpy(dtype=np.int64)
    groups = (
        counts.groupby(qis, sort=False, dropna=False).ngroup().to_numpy()
        if qis
        else np.zeros(len(counts), dtype=np.int64)
    )
    # records written * in every quasi-identifier match any value and join no other group, as in a
    # release of one file (docs/reference.md#blanks)
    starred = suppressed_records(counts, qis) if qis else np.zeros(len(counts), dtype=bool)
    codes = None
    if starred.any():
        codes = np.column_stack([pd.factorize(counts[q])[0] for q in qis]).astype(np.int64)
        codes[starred] = -1
    each, words = [], []
    for m in model.models:
        if not m.judges_groups:
            raise BadInput(
                f"privacy model {m.name} does not judge groups of records, so a release in parts cannot be "
                f"checked against it"
            )
        if m.needs_sensitive and not sensitive:
            raise BadInput(f"privacy model {m.name} needs a sensitive column; mark one")
        columns = sensitive if m.needs_sensitive else [None]
        holds, said, worst, by_column = True, [], None, {}
        for column in columns:
            view = _view(groups, weights, None if column is None else counts[column])
            if codes is not None:
                view = blank_view(codes, view)
            gv = m.check_groups(view)
            holds &= bool(gv.holds)
            text = m.plugin.summary(m.params, gv)
            said.append(f"{column}: {text}" if column is not None and len(columns) > 1 else text)
            worst = float(gv.worst) if worst is None else (min if gv.higher_is_safer else max)(worst, float(gv.worst))
            if column is not None:
                by_column[column] = {"holds": bool(gv.holds), "value": float(gv.worst), "message": text}
        # the keys of a release in one file's verdicts (Verdict.to_dict), so the report reads both alike
        each.append(
            {
                "model": m.name,
                "params": params_to_dict(m.params),
                "holds": holds,
                "value": worst,
                "message": "; ".join(said),
                **({"by_column": by_column} if by_column else {}),
            }
        )
        words.append("; ".join(said))
    return CountsVerdict(all(e["holds"] for e in each), "; ".join(words), tuple(each))


def _view(groups: np.ndarray, weights: np.ndarray, texts: pd.Series | None) -> GroupView:
    """The groups with their sensitive values (numbers when every value reads as one, ordered)."""
    if texts is None:
        return GroupView.from_codes(groups, None, None, weights=weights)
    numbers = pd.to_numeric(texts, errors="coerce")
    numeric = bool(numbers.notna().all()) and len(texts) > 0
    codes, uniques = pd.factorize(numbers if numeric else texts, sort=numeric)
    values = tuple(v.item() if isinstance(v, np.generic) else v for v in np.asarray(uniques))
    q = np.bincount(codes, weights=weights, minlength=len(values)) / max(float(weights.sum()), 1.0)
    return GroupView.from_codes(groups, codes.astype(np.int64), q, values, numeric, weights)


def count_parts(
    registry, files: list[Path], fmt: str, columns: list[str], counter=None
) -> tuple[pd.DataFrame, list[int]]:
    """:meth:`Executor.class_counts` on ``counter`` when it has one, else in this process, each part
    read back by the exporter of ``fmt``."""
    if counter is not None and hasattr(counter, "class_counts"):
        return counter.class_counts(list(files), fmt, list(columns))
    return read_counts(list(files), registry.exporter(fmt).read_back, list(columns))


NO_CLASSIFIER = (
    "a release in parts is never held in one process, so no classifier was trained on it (to measure "
    "usefulness, run the same method on a sample held in memory)"
)
NO_BEFORE = "the method did not count the input's classes, so there are no “before” figures"
BEFORE_SCOPE = (
    "“Before” counts the input's records alike on the quasi-identifiers, as the method counted them; a "
    "release in one file counts them on every column it could release, which can only give more risk."
)


def parts_assessment(counts: pd.DataFrame, qis: list[str], input_classes, threshold: float) -> dict:
    """The manifest's ``risk`` and ``utility`` for a release in parts, from what the export knows
    without holding the records: "after" from the classes counted in the parts (records equal on
    every written quasi-identifier, the suppressed ones one class, as in a release of one file);
    "before" from the input's classes on the quasi-identifiers when the method counted them
    (:attr:`PartsRelease.input_classes`). No classifier is trained (:data:`NO_CLASSIFIER`)."""
    weights = counts[COUNT].to_numpy(dtype=np.int64)
    if qis:
        after = (
            pd.Series(weights)
            .groupby([counts[q].reset_index(drop=True) for q in qis], sort=False, dropna=False)
            .sum()
            .to_numpy(dtype=np.int64)
        )
    else:
        after = np.array([weights.sum()], dtype=np.int64)
    risk = {
        "model": "prosecutor",
        "threshold": float(threshold),
        "before": None if input_classes is None else class_risk(input_classes, qis, threshold),
        "after": class_risk(after, qis, threshold),
    }
    if input_classes is None:
        risk["before_note"] = NO_BEFORE
    else:
        risk["before_scope"] = BEFORE_SCOPE
    return {"risk": risk, "utility": {"before": None, "after": None, "note": NO_CLASSIFIER}}


def verify_parts(registry, manifest: dict, executor=None) -> tuple[bool, str]:
    """Re-check a release in parts: every part's SHA-256 and records as the manifest lists them, then
    the privacy models on the groups counted from the parts (on ``executor`` when it counts tables)."""
    folder = Path(manifest["_dir"])
    out = manifest["output"]
    parts = out.get("parts_of")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise BadInput("the manifest's output.parts_of must list the release's parts")
    problems, files = [], []
    for entry in parts:
        name = entry.get("path")
        if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
            raise BadInput("the manifest's output.parts_of names a part that is not a plain file name")
        path = folder / name
        if not path.exists():
            problems.append(f"incomplete export: {name} is missing")
            continue
        check_regular(path)
        if sha256_file(path) != entry.get("sha256"):
            problems.append(f"{name} was changed after export: its SHA-256 differs from the manifest")
        files.append(path)
    if problems:
        return False, "; ".join(problems)
    roles = manifest["roles"]
    qis, sensitive = list(roles.get("quasi_identifiers") or []), list(roles.get("sensitive") or [])
    counts, rows = count_parts(
        registry, files, out.get("format") or registry.preferred("exporter"), qis + sensitive, executor
    )
    for entry, n in zip(parts, rows):
        if entry.get("rows") != n:
            return False, f"{entry['path']} holds {n:,} records, not the {entry.get('rows')} its manifest lists"
    from ..run.runs import PluginCall

    calls = [PluginCall.parse(m) for m in manifest.get("privacy_models") or []]
    pm = manifest["privacy_model"]
    calls = calls or [PluginCall(pm["name"], pm.get("params") or {})]
    verdict = judge_counts(bind_models(registry, calls), counts, qis, sensitive)
    return verdict.holds, f"{verdict.message} ({len(parts)} parts, {sum(rows):,} records)"
