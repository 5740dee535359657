"""What a method produces (a Release) and what a privacy model says of it (a Verdict)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.binary import BinaryMatrix
from ..data.table import Role, Table
from .lattice import SolutionSpace
from .perturbation import Perturbation
from .ranking import Ranking

FEATURE_SUBSET = "feature-subset"
GENERALISED_TABLE = "generalised-table"
CELL_BLANKED = 1  # a cell the method blanked (Release.cell_changes)
CELL_AGGREGATED = 2  # a cell the method replaced by its group's aggregate
BUCKETISED_TABLE = "bucketised-table"
GROUPED_SETS = "grouped-sets"
SYNTHETIC = "synthetic"
FEATURE_WEIGHTS = "feature-weights"  # a weight and rank per feature; no records
PERTURBED_TABLE = "perturbed-table"  # every record kept, some values replaced at random (docs/perturbation.md)
ITEMS_COLUMN = "items"  # the one quasi-identifier of a grouped-sets release: each record's published set


@dataclass(frozen=True)
class Provenance:
    """Where a release came from."""

    method: str
    params: dict
    seed: int | None
    input_sha256: str | None
    veil_version: str
    model: str | None = None
    model_params: dict = field(default_factory=dict)
    models: tuple = ()  # every privacy model of the run, as {"name", "params"} (model: the first)
    then: dict | None = None  # a second step's method, as {"name", "params"}: it perturbed the first's release

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Release:
    """A method's output, materialised as a DataFrame.

    Attributes
    ----------
    kind : str
        feature-subset, generalised-table, bucketised-table, grouped-sets, synthetic,
        perturbed-table (every record, some columns perturbed: no groups) or feature-weights (one
        row per feature: ``feature, weight, rank``; no records are released, so no record-level
        privacy model applies: see :func:`feature_weights`).
    frame : pandas.DataFrame
        The records as they would be exported (identifiers never included).
    quasi_identifiers : list of str
        The columns a privacy model groups records by.
    target, sensitive : column names, where the release has them.
    selected_features : list of str, optional
        For feature selection: the chosen features, in selection order.
    details : dict
        Method-specific results worth reporting (candidate tables, flip rates, …). The manifest
        keeps them (made JSON-safe) and the report lists them. Two keys have a fixed meaning:

        ``details["epsilon_spent"]`` (float)
            A differentially private method puts the privacy budget ε its release consumed here
            (selection and release together), e.g. ``1.0``.
        ``details["assumptions"]`` (list of str)
            The assumptions its guarantee rests on, in words a data holder can read (the
            caveats of docs/reference.md), e.g. ``["neighbouring datasets differ in the feature values of one record",
            "class sizes are public"]``.

        When ``epsilon_spent`` is present the manifest's ``privacy_budget`` is
        ``{"epsilon_spent": …, "assumptions": […]}`` and the report shows both prominently.
    notes : tuple of str
        Remarks for the reader of the report ("all features released", …).
    groups : int array (n,), optional
        Every record's equivalence group (0 … G−1), for a release that anonymises records
        (generalised, bucketised, grouped sets). Privacy models judge these groups; without it the
        groups are the records equal on the quasi-identifiers.
    group_values : pandas.DataFrame, optional
        One row per group: each quasi-identifier's typed generalised value (an
        :class:`~veil.engine.Interval`, :class:`~veil.engine.NodeValue`, ``SUPPRESSED`` or the exact
        value). ``frame`` holds the same values as exporters write them.
    parts : mapping of str to DataFrame
        Further tables of a release in several parts, joined to ``frame`` by the ``group`` column:
        Anatomy's sensitive table (``{"sensitive": …}``) beside its quasi-identifier table.
    sets : SetValued, optional
        A set-valued release's item sets: each *group's* centre (one row per group, sparse), with
        ``groups`` giving every record's row. ``frame`` then holds only the per-record columns
        (target, group); exporters stream the sets in chunks, never as a dense records × items frame.
    exact_quasi_identifiers : tuple of str
        Quasi-identifiers the release publishes *exact* beside its groups (bucketisation, Anatomy):
        the groups hide which sensitive value is a record's, not who the record is. An attacker
        links a person to records on these columns, so the re-identification risk groups on them
        (:meth:`linkage_class_sizes`), while the privacy model judges ``groups``.
    weight : str, optional
        The column of survey weights the release carries (the input's column marked ``weight``): how
        many people of the population each record stands for. The run sets it; the manifest records
        it among the roles, and the models that read weights (``PrivacyModel.reads_weights``) judge
        each group by the sum of its records' weights.
    household : str, optional
        The column of household ids the release carries (the input's column marked ``household``),
        only when the user agreed to release it (``execute(..., release_household=True)``): the
        household risk of the release is computed from it (docs/reference.md#risk-on-sample-microdata).
    blanks : str, optional
        What a blank or suppressed quasi-identifier cell means when the release's records are
        counted in groups (:mod:`~veil.engine.model.blanks`): ``"any-value"`` (it matches any value)
        or ``"own-value"``; the run sets it, the manifest records it among the roles.
    cell_changes : mapping of str to ndarray
        The cells a method changed one by one (local suppression's blanks, microaggregation's
        aggregates), per quasi-identifier: each record's :data:`CELL_BLANKED`,
        :data:`CELL_AGGREGATED` or 0; what the desktop's preview marks. Empty for methods that
        change whole columns or records.
    population : Population, optional
        The population the data was drawn from (``--population``), where the run had one: the
        population models (δ-presence, k-map) count each group's matches in it.
    ranking : Ranking, optional
        For a method that declares a :class:`~veil.engine.Ranker`: the candidates its run chose
        among, ranked at the run's weights (the first is what this release holds). Typed, so it
        is shown without knowing the method; ``details`` keeps the method's own account for the
        manifest and report.
    hierarchies : mapping of str to Hierarchy
        The hierarchies declared for the release's sensitive columns (the run sets them from its
        input): what a model whose distance follows a hierarchy (t-closeness's hierarchical or
        ordered EMD) judges the release by. The manifest keeps them, so the file verifies alone.
    solution_space : SolutionSpace, optional
        For a method that searched a lattice of generalisation levels: every node's status, metric
        and suppression, and the optimum, so the desktop can show the space and release another node.
    """

    kind: str
    frame: pd.DataFrame
    quasi_identifiers: tuple[str, ...]
    provenance: Provenance | None = None
    target: str | None = None
    sensitive: tuple[str, ...] = ()
    selected_features: tuple[str, ...] | None = None
    details: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    groups: np.ndarray | None = None
    group_values: pd.DataFrame | None = None
    parts: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    sets: object | None = None  # a SetValued of group centres
    exact_quasi_identifiers: tuple[str, ...] = ()
    ranking: Ranking | None = None
    hierarchies: Mapping[str, object] = field(default_factory=dict)
    solution_space: SolutionSpace | None = None  # the lattice a full-domain search walked (engine/model/lattice.py)
    population: object | None = None  # a veil.engine.Population
    # what a blank or suppressed quasi-identifier cell means when groups are counted: "any-value" or
    # "own-value" (engine/model/blanks.py); None: records are grouped by equal written values
    blanks: str | None = None
    perturbation: Perturbation | None = None
    # the released column of survey weights (the input's column marked ``weight``), when the release
    # carries it: the risk models read each record's weight from it (GroupView.survey)
    weight: str | None = None
    # the released column of household ids, when the user agreed to release it: household risk reads it
    household: str | None = None
    # the cells a method changed one by one, per quasi-identifier: each record's CELL_BLANKED,
    # CELL_AGGREGATED or 0 (as it was, or generalised with its column), what a preview marks
    cell_changes: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def n_groups(self) -> int | None:
        return None if self.groups is None else (int(self.groups.max()) + 1 if len(self.groups) else 0)

    def group_sizes(self) -> np.ndarray | None:
        return None if self.groups is None else np.bincount(self.groups)

    def with_provenance(self, provenance: Provenance) -> Release:
        return dataclasses.replace(self, provenance=provenance)

    def take_rows(self, rows) -> Release:
        """The release of the given records only (in that order): what a metric measured on a
        sample sees."""
        rows = np.asarray(rows, dtype=np.int64)
        frame = self.frame.iloc[rows].reset_index(drop=True)
        groups = None if self.groups is None else np.asarray(self.groups)[rows]
        changes = {c: np.asarray(v)[rows] for c, v in self.cell_changes.items()}
        return dataclasses.replace(self, frame=frame, groups=groups, cell_changes=changes)

    def quasi_identifier_frame(self) -> pd.DataFrame:
        return self.frame[list(self.quasi_identifiers)]

    def group_ids(self) -> np.ndarray:
        """Every record's equivalence group: the release's own ``groups`` when it knows them, else
        dense ids (0 … G−1) of the records equal on the quasi-identifiers (missing values equal).

        Computed once per release and kept (read-only): a Release and its frame are not changed
        after it is made (``dataclasses.replace`` makes a new one, which computes its own). The
        model check, the risk figures and the class sizes of one export share it.
        """
        if self.groups is not None:
            return np.asarray(self.groups)
        ids = self.__dict__.get("_qi_group_ids")
        if ids is None or len(ids) != len(self.frame):
            from .groups import group_ids

            ids = group_ids(self.quasi_identifier_frame())
            ids.setflags(write=False)
            object.__setattr__(self, "_qi_group_ids", ids)  # a cache, not a field: eq and replace ignore it
        return ids

    def blank_codes(self) -> np.ndarray | None:
        """The quasi-identifiers as codes with −1 where a cell matches any value, when the release's
        rule on blanks makes any cell do so (None: its groups are a partition)."""
        if self.blanks is None or self.parts or self.exact_quasi_identifiers or self.sets is not None:
            return None
        kept = self.__dict__.get("_blank_codes")  # computed once, as group_ids is (the model check,
        if kept is not None and kept[0] == len(self.frame):  # the risk figures and the class sizes ask)
            return kept[1]
        from .blanks import blank_codes, has_blanks

        qis = [c for c in self.quasi_identifiers if c in self.frame.columns]
        codes = blank_codes(self.frame, qis, self.blanks) if has_blanks(self.frame, qis, self.blanks) else None
        if codes is not None:
            codes.setflags(write=False)
        object.__setattr__(self, "_blank_codes", (len(self.frame), codes))  # a cache, not a field
        return codes

    def class_sizes(self) -> np.ndarray:
        """Size of each record's equivalence class: its group's size when the release knows its
        groups, else the records equal to it on the quasi-identifiers; where a blank matches any
        value, every record it could share a group with (:mod:`~veil.engine.model.blanks`)."""
        codes = self.blank_codes()
        if codes is not None:
            from .blanks import compatible_sizes

            return compatible_sizes(codes)
        ids = self.group_ids()
        if len(ids) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.bincount(ids)[ids].astype(np.int64)

    def linkage_class_sizes(self) -> np.ndarray:
        """Size of each record's class of look-alikes for an attacker who knows a person's published
        values: the records equal on the quasi-identifiers published exact, when the release has
        them (bucketisation: its groups do not hide who is in the table), else :meth:`class_sizes`.
        The re-identification risk figures use these sizes; the privacy model uses the groups."""
        if not self.exact_quasi_identifiers:
            return self.class_sizes()
        return class_sizes(self.frame[list(self.exact_quasi_identifiers)])

    def linkage_columns(self) -> list[str]:
        """The columns :meth:`linkage_class_sizes` groups on (the risk figures' "columns")."""
        return list(self.exact_quasi_identifiers or self.quasi_identifiers)

    def roles(self) -> dict:
        roles = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "target": self.target,
            "sensitive": list(self.sensitive),
        }
        if self.exact_quasi_identifiers:
            roles["exact_quasi_identifiers"] = list(self.exact_quasi_identifiers)
        if self.blanks is not None:
            roles["blanks"] = self.blanks
        if self.weight is not None:
            roles["weight"] = self.weight
        if self.household is not None:
            roles["household"] = self.household
        return roles


def class_sizes(frame: pd.DataFrame) -> np.ndarray:
    """Size of each record's equivalence class: the records equal to it on every column of ``frame``
    (missing values compare equal). With no columns every record is in one class of size n."""
    if frame.shape[1] == 0:
        return np.full(len(frame), len(frame), dtype=np.int64)
    group = frame.groupby(list(frame.columns), dropna=False, sort=False).ngroup().to_numpy()
    return np.bincount(group)[group].astype(np.int64)


def grouped_sets(centres, groups: np.ndarray, *, details=None, notes=()) -> Release:
    """The release of set-valued records in groups: record i publishes row ``groups[i]`` of
    ``centres`` (a SetValued, one row per group). Memory O(items held): each record's published text
    is a reference to its group's one string, never a records × items frame."""
    groups = np.asarray(groups, dtype=np.int64)
    texts = np.empty(centres.n_rows, dtype=object)
    for g, line in enumerate(line for chunk in centres.iter_chunks() for line in chunk):
        texts[g] = " ".join(sorted(line.split()))
    frame = pd.DataFrame({ITEMS_COLUMN: texts[groups], "group": groups})
    return Release(
        GROUPED_SETS,
        frame,
        (ITEMS_COLUMN,),
        groups=groups,
        sets=centres,
        details=dict(details or {}),
        notes=tuple(notes),
    )


def feature_subset(
    data, selected: list[int] | list[str], *, notes=(), details=None, ranking: Ranking | None = None
) -> Release:
    """The release of a feature-selection method: the chosen features (and the target).

    ``data`` is a BinaryMatrix (features by index) or a Table (columns by name). In a Table,
    quasi-identifiers are the selected columns marked so, or every selected column when none is.
    ``ranking``: the candidates the run chose the features among (see :class:`~veil.engine.Ranking`).
    """
    details = dict(details or {})
    if isinstance(data, BinaryMatrix):
        idx = [int(j) for j in selected]
        sub = data.select(idx)
        frame = sub.to_frame()
        names = sub.feature_names
        target = None
        if data.labels is not None:
            from ..data.forms import target_name

            target = _free_name(target_name(data), names)  # the target column's own name, as in the input
            frame[target] = data.labels
        return Release(
            FEATURE_SUBSET,
            frame,
            tuple(names),
            target=target,
            selected_features=tuple(names),
            notes=tuple(notes),
            details=details,
            ranking=ranking,
        )
    assert isinstance(data, Table)
    names = [str(s) for s in selected]
    schema = data.schema
    qis = [n for n in names if schema[n].role is Role.QUASI_IDENTIFIER] or [
        n for n in names if schema[n].role in (Role.QUASI_IDENTIFIER, Role.INSENSITIVE)
    ]
    sensitive = [n for n in names if schema[n].role is Role.SENSITIVE]
    cols = list(names)
    target = schema.target
    if target is not None and target not in cols:
        cols.append(target)
    frame = data.frame[cols].reset_index(drop=True)
    return Release(
        FEATURE_SUBSET,
        frame,
        tuple(qis),
        target=target,
        sensitive=tuple(sensitive),
        selected_features=tuple(names),
        notes=tuple(notes),
        details=details,
        ranking=ranking,
    )


def feature_weights(names, weights, *, top: int | None = None, notes=(), details=None) -> Release:
    """A release of feature weights instead of records: a frame ``feature, weight, rank`` ordered by
    rank (1 = the largest weight; ties: the earlier feature first), all features or the ``top`` ones.

    It holds no record, so it has no quasi-identifiers and no target; ``selected_features`` lists the
    released features by rank. A differentially private method states its ε in ``details`` as usual.
    """
    names = [str(n) for n in names]
    weights = np.asarray(weights, dtype=np.float64)
    if len(names) != len(weights):
        raise ValueError("one weight per feature")
    order = np.lexsort((np.arange(len(weights)), -weights))
    if top is not None:
        order = order[: int(top)]
    frame = pd.DataFrame(
        {
            "feature": [names[i] for i in order],
            "weight": weights[order],
            "rank": np.arange(1, len(order) + 1, dtype=np.int64),
        }
    )
    return Release(
        FEATURE_WEIGHTS,
        frame,
        (),
        selected_features=tuple(frame["feature"]),
        notes=tuple(notes),
        details=dict(details or {}),
    )


def _free_name(base: str, taken: list[str]) -> str:
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


@dataclass(frozen=True)
class Verdict:
    """A privacy model's judgement of a release.

    Attributes
    ----------
    holds : bool
    value : float
        The dataset's value of the model's measure (e.g. smallest class size for k-anonymity).
    per_record : numpy array, optional
        The measure per record (e.g. each record's class size).
    failing_rows : numpy array
        Indices of the records that break the model (empty when it holds).
    message : str
        One sentence a data holder can read.
    parts : tuple of Verdict
        For several models combined: each model's own verdict (this one is their conjunction).
    measure : str
        What ``per_record`` holds, in words ("group size", "containment support"); used when the
        failing records are listed.
    by_column : tuple of (str, Verdict)
        For a model on sensitive values: its verdict on each sensitive column (this one holds when
        every one holds; its value is the least safe), e.g. each column's effective l.
    """

    model: str
    params: dict
    holds: bool
    value: float
    message: str
    per_record: np.ndarray | None = None
    failing_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    measure: str = ""
    parts: tuple = ()  # a combined model's verdict: one Verdict per model
    by_column: tuple = ()  # a model on sensitive values: (column, Verdict) for each sensitive column

    def to_dict(self) -> dict:
        out = {
            "model": self.model,
            "params": self.params,
            "holds": bool(self.holds),
            "value": _plain(self.value),
            "message": self.message,
            "failing_records": int(len(self.failing_rows)),
        }
        if self.by_column:
            out["by_column"] = self.columns_dict()
        return out

    def columns_dict(self) -> dict:
        """``{column: {"holds", "value", "message"}}`` of :attr:`by_column` (empty without)."""
        return {
            column: {"holds": bool(v.holds), "value": _plain(v.value), "message": v.message}
            for column, v in self.by_column
        }

    @property
    def each(self) -> tuple:
        """One verdict per model: ``parts`` of a combined verdict, else this one."""
        return self.parts or (self,)


def verdict_from_groups(model, params, view, gv) -> Verdict:
    """A record-level :class:`Verdict` from a model's :class:`~veil.engine.GroupVerdict`."""
    from .params import params_to_dict

    per_record = view.per_record(gv.values)
    failing = np.flatnonzero(~view.per_record(gv.ok))
    gv = dataclasses.replace(gv, records=view.n_records, failing_records=len(failing))
    value = gv.worst
    if np.isfinite(value) and float(value).is_integer() and gv.higher_is_safer:
        value = int(value)
    return Verdict(
        model.name,
        params_to_dict(params),
        gv.holds,
        value,
        model.summary(params, gv),
        per_record,
        failing,
        measure=model.measure,
    )


def worst_of(judged, higher_is_safer: bool = True) -> Verdict:
    """One verdict from a model's verdicts on several sensitive columns ((column, verdict) pairs): it
    holds when every one holds; its value is the least safe, its failing records those of every
    column, and its message names each column's verdict."""
    judged = [(column, v) for column, v in judged]
    by_column = tuple((column, v) for column, v in judged if column is not None)
    if len(judged) == 1:
        return dataclasses.replace(judged[0][1], by_column=by_column)
    verdicts = [v for _, v in judged]
    pick = min if higher_is_safer else max
    worst = pick(verdicts, key=lambda v: (v.holds, v.value) if higher_is_safer else (not v.holds, v.value))
    failing = np.unique(np.concatenate([np.asarray(v.failing_rows, dtype=np.int64) for v in verdicts]))
    message = "; ".join(f"{column}: {v.message}" for column, v in judged)
    return dataclasses.replace(
        worst, holds=all(v.holds for v in verdicts), failing_rows=failing, message=message, by_column=by_column
    )


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def describe_failures(verdict: Verdict, release: Release, *, limit: int = 3, rows: np.ndarray | None = None) -> str:
    """Which records fail and why, on one line: at most ``limit`` of them, each with its row number
    (1-based, in ``release.frame``, or ``rows[i] + 1`` when ``rows`` maps them elsewhere), its
    quasi-identifier values and the size of its group.

    >>> describe_failures(verdict, release)  # doctest: +SKIP
    'row 4 (age_band=20-29, sex=F: a group of 1), row 9 (…: a group of 1) and 3 more'
    """
    failing = np.asarray(verdict.failing_rows, dtype=np.int64)
    if len(failing) == 0:
        return ""
    sizes = release.class_sizes()
    qi = release.quasi_identifier_frame()
    shown = []
    for i in failing[:limit]:
        number = int(rows[i] if rows is not None else i) + 1
        values = ", ".join(f"{c}={_short(qi.iat[i, j])}" for j, c in enumerate(qi.columns[:4]))
        values += ", …" if qi.shape[1] > 4 else ""
        why = f"a group of {int(sizes[i])}"
        if verdict.measure and verdict.measure != "group size" and verdict.per_record is not None:
            why += f", {verdict.measure} {_short(verdict.per_record[i])}"
        shown.append(f"row {number} ({values}: {why})" if values else f"row {number} ({why})")
    more = len(failing) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def _short(v, width: int = 24) -> str:
    text = " ".join(str(_plain(v)).split())
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class PartsRelease:
    """A generalised table a method wrote itself as part files (a table larger than this process
    holds; :meth:`Algorithm.run_parts`). The records are every part's, in any order.

    ``files``: the parts, in the folder the method was given; ``fmt``: csv or parquet;
    ``records``: how many the method wrote (the engine counts them again); ``input_rows``: how many
    it read; ``counter``: the executor that reads the parts back for the privacy check (one with
    ``class_counts``; None: this process); ``input_classes``: the records of each class of the input
    on the quasi-identifiers (one entry per class), when the method counted them, for the report's
    risk before (None: not counted, and the report says so)."""

    files: tuple
    fmt: str
    columns: tuple[str, ...]
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...] = ()
    target: str | None = None
    records: int = 0
    input_rows: int = 0
    details: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    counter: object = None
    input_classes: object = None
