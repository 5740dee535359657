"""Privacy models judge groups: one vectorised check shared by a method's search and by verification.

A :class:`GroupView` is what a group-judging privacy model sees: each record's group id, each
record's sensitive value as a code, and the whole table's sensitive distribution Q
(docs/reference.md#anonymising-tables). The model's :meth:`~veil.engine.PrivacyModel.check_groups` returns a
:class:`GroupVerdict`: the value of its measure per group and whether each group passes. The same call answers
Mondrian's "may this split stand?" (a view of the two candidate parts) and the check of a written file (a view
built from the file's quasi-identifier and sensitive columns by :func:`view_of_frame`).

>>> view = GroupView.from_labels([0, 0, 1, 1, 1], ["flu", "hiv", "flu", "flu", "flu"])
>>> view.sizes.tolist()
[2, 3]
>>> view.distributions().round(2).tolist()
[[0.5, 0.5], [1.0, 0.0]]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.errors import BadInput


@dataclass(frozen=True)
class GroupView:
    """Records in groups, with their sensitive values.

    Attributes
    ----------
    groups : int array (n,)
        Group id of every record, 0 … G−1.
    sensitive : int array (n,), optional
        Code of every record's sensitive value, 0 … S−1, or −1 where it is blank: a blank is no
        value, so counts, distributions and Q hold known values only (None when no sensitive
        column is marked).
    values : tuple
        The sensitive value of each code, in code order (ordered ascending for a numeric column).
    overall : float array (S,), optional
        Q, the sensitive distribution of the whole table (by default that of these records).
    numeric : bool
        Whether the sensitive values are numbers (EMD then uses the ordered ground distance).
    weights : int array (n,), optional
        How many records each entry stands for (a method may judge identical records once); sizes,
        counts and Q count them. None: one record each.
    hierarchy : Hierarchy, optional
        The hierarchy declared for the sensitive column, when one was: the ground distance of
        t-closeness's hierarchical EMD, and the declared order of a categorical column's values
        for the ordered EMD (docs/reference.md#t-closeness). None when none was declared.
    population : int array (G,), optional
        How many records of the population the data was drawn from match each group's released
        values (δ-presence, k-map); None when no population is given.
    survey : float array (n,), optional
        The survey weight each entry carries: the sum of the weights (the column marked ``weight``:
        how many people of the population a record stands for) of the records it stands for. Each
        group's sum, :meth:`estimates`, is sdcMicro's Fk, the estimated number of people sharing its
        values (docs/reference.md#risk-on-sample-microdata). None when the data marks no weight
        column or the method was not asked for them (:attr:`~veil.engine.PrivacyModel.reads_weights`).
    """

    groups: np.ndarray
    sensitive: np.ndarray | None = None
    values: tuple = ()
    overall: np.ndarray | None = None
    numeric: bool = False
    weights: np.ndarray | None = None
    hierarchy: object | None = None
    population: np.ndarray | None = None
    survey: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_labels(cls, groups, sensitive=None, *, overall: pd.Series | None = None, hierarchy=None) -> GroupView:
        """A view from any hashable group labels and raw sensitive values.

        ``overall`` (raw values of the whole table) gives Q when these records are only part of it,
        as in a split under test; by default Q is the distribution of ``sensitive`` itself.
        """
        gid, _ = pd.factorize(pd.Series(groups, copy=False), sort=False, use_na_sentinel=False)
        if sensitive is None:
            return cls(gid.astype(np.int64))
        sens = pd.Series(sensitive, copy=False)
        base = pd.Series(overall, copy=False) if overall is not None else sens
        numeric = pd.api.types.is_numeric_dtype(base) and not pd.api.types.is_bool_dtype(base)
        known = base.dropna()
        domain = np.sort(pd.unique(known)) if numeric else pd.unique(known)
        codes = pd.Index(domain).get_indexer(sens)  # a blank is never a value: code −1, counted nowhere
        if (codes[sens.notna().to_numpy()] < 0).any():
            raise BadInput("a sensitive value of the part is not in the whole table")
        q = np.bincount(pd.Index(domain).get_indexer(known), minlength=len(domain)).astype(float)
        return cls(
            gid.astype(np.int64),
            codes.astype(np.int64),
            tuple(domain),
            q / max(q.sum(), 1.0),
            numeric,
            hierarchy=hierarchy,
        )

    @classmethod
    def from_codes(
        cls,
        groups: np.ndarray,
        sensitive: np.ndarray | None,
        overall: np.ndarray | None,
        values: tuple = (),
        numeric: bool = False,
        weights: np.ndarray | None = None,
        hierarchy=None,
        population: np.ndarray | None = None,
        survey: np.ndarray | None = None,
        sizes: np.ndarray | None = None,
        counts: np.ndarray | None = None,
    ) -> GroupView:
        """A view from dense group ids and sensitive codes a method already has (no copies).
        ``sizes`` (G,) and ``counts`` (G × S), when the method has already counted them from the same
        entries, are taken as the view's :attr:`sizes` and :meth:`counts` instead of being counted
        again."""
        view = cls(
            np.asarray(groups),
            None if sensitive is None else np.asarray(sensitive),
            tuple(values),
            None if overall is None else np.asarray(overall, dtype=float),
            numeric,
            None if weights is None else np.asarray(weights),
            hierarchy,
            None if population is None else np.asarray(population, dtype=np.int64),
            None if survey is None else np.asarray(survey, dtype=float),
        )
        if sizes is not None:
            view._cache["sizes"] = np.asarray(sizes)
        if counts is not None:
            view._cache["counts"] = np.asarray(counts)
        return view

    def with_survey(self, survey: np.ndarray | None) -> GroupView:
        """The same view with each entry's survey weight (see ``survey``)."""
        return dataclasses.replace(
            self, survey=None if survey is None else np.asarray(survey, dtype=float), _cache=dict(self._cache)
        )

    def with_population(self, population: np.ndarray | None) -> GroupView:
        """The same view with each group's count of matching population records."""
        return dataclasses.replace(
            self, population=None if population is None else np.asarray(population, np.int64), _cache=dict(self._cache)
        )

    # ------------------------------------------------------------------ derived, cached
    @property
    def n_records(self) -> int:
        return len(self.groups)

    @property
    def n_groups(self) -> int:
        return int(self.groups.max()) + 1 if len(self.groups) else 0

    @property
    def sizes(self) -> np.ndarray:
        if "sizes" not in self._cache:
            self._cache["sizes"] = _count(self.groups, self.weights, self.n_groups)
        return self._cache["sizes"]

    def estimates(self) -> np.ndarray | None:
        """Each group's sum of survey weights, Fk: how many people of the population share its values,
        as the sample estimates it; None without survey weights."""
        if self.survey is None:
            return None
        if "estimates" not in self._cache:
            self._cache["estimates"] = np.bincount(self.groups, weights=self.survey, minlength=self.n_groups)
        return self._cache["estimates"]

    @property
    def n_values(self) -> int:
        if self.overall is not None:
            return len(self.overall)
        return int(self.sensitive.max()) + 1 if self.sensitive is not None and len(self.sensitive) else 0

    def require_sensitive(self, model: str) -> None:
        if self.sensitive is None:
            raise BadInput(f"{model} needs a sensitive column: mark one column's role as sensitive")

    def counts(self) -> np.ndarray:
        """G × S matrix: how many records of each group hold each sensitive value."""
        if "counts" not in self._cache:
            g, s = self.n_groups, self.n_values
            known = self.sensitive >= 0
            if known.all():
                flat = _count(self.groups * s + self.sensitive, self.weights, g * s)
            else:
                weights = None if self.weights is None else self.weights[known]
                flat = _count(self.groups[known] * s + self.sensitive[known], weights, g * s)
            self._cache["counts"] = flat.reshape(g, s)
        return self._cache["counts"]

    def distributions(self) -> np.ndarray:
        """G × S matrix: each group's sensitive distribution P_g."""
        if "dist" not in self._cache:
            c = self.counts()
            self._cache["dist"] = c / np.maximum(c.sum(axis=1, keepdims=True), 1)
        return self._cache["dist"]

    def q(self) -> np.ndarray:
        if self.overall is not None:
            return self.overall
        known = self.sensitive >= 0
        weights = None if self.weights is None else self.weights[known]
        c = _count(self.sensitive[known], weights, self.n_values).astype(float)
        return c / max(c.sum(), 1.0)

    def per_record(self, per_group: np.ndarray) -> np.ndarray:
        return np.asarray(per_group)[self.groups]


def _count(keys: np.ndarray, weights: np.ndarray | None, length: int) -> np.ndarray:
    """How many records hold each key 0 … length−1 (each entry counting its weight)."""
    if weights is None:
        return np.bincount(keys, minlength=length)
    return np.bincount(keys, weights=weights, minlength=length).astype(np.int64)


@dataclass(frozen=True)
class GroupVerdict:
    """A model's value per group and which groups pass.

    ``worst`` is the dataset's value: the smallest value when higher is safer (k), the largest
    when lower is safer (t, δ).
    """

    values: np.ndarray
    ok: np.ndarray
    higher_is_safer: bool = True
    # set by the engine before a summary is written: the records judged and those in failing groups,
    # counted record by record (where a blank matches any value, groups overlap and their sizes do not add up)
    records: int | None = None
    failing_records: int | None = None

    @property
    def holds(self) -> bool:
        return bool(self.ok.all())

    @property
    def worst(self) -> float:
        if len(self.values) == 0:
            return float("nan")
        return float(self.values.min() if self.higher_is_safer else self.values.max())

    @property
    def failing_groups(self) -> np.ndarray:
        return np.flatnonzero(~self.ok)


def group_ids(frame: pd.DataFrame) -> np.ndarray:
    """Dense group ids of the records equal on every column of ``frame`` (missing values equal);
    with no columns, every record is in group 0."""
    if frame.shape[1] == 0:
        return np.zeros(len(frame), dtype=np.int64)
    return frame.groupby(list(frame.columns), dropna=False, sort=False, observed=True).ngroup().to_numpy(np.int64)


def view_of_frame(
    frame: pd.DataFrame,
    quasi_identifiers,
    sensitive: str | None = None,
    *,
    groups: np.ndarray | None = None,
    overall: pd.Series | None = None,
    hierarchy=None,
) -> GroupView:
    """The view a group-judging model checks a released frame by: groups are the records equal on
    the quasi-identifiers (or the release's own ``groups``), sensitive values from ``sensitive``
    (``hierarchy``: the one declared for it, if any)."""
    gid = group_ids(frame[list(quasi_identifiers)]) if groups is None else np.asarray(groups)
    if sensitive is None:
        return GroupView.from_codes(gid, None, None)
    return GroupView.from_labels(gid, frame[sensitive], overall=overall, hierarchy=hierarchy)


def _same_groups(records: pd.Series, values: pd.Series) -> None:
    """BadInput unless every group has as many records in the quasi-identifier table as values in the
    sensitive table (Anatomy publishes one value per record): two parts that disagree were altered."""
    have, listed = records.value_counts(dropna=False), values.value_counts(dropna=False)
    have.index, listed.index = have.index.map(str), listed.index.map(str)
    both = pd.concat([have.rename("records"), listed.rename("values")], axis=1).fillna(0)
    wrong = both[both["records"] != both["values"]]
    if len(wrong):
        g = wrong.index[0]
        raise BadInput(
            f"the quasi-identifier table and the sensitive table disagree: group {g} has "
            f"{int(wrong.loc[g, 'records'])} records but {int(wrong.loc[g, 'values'])} sensitive values "
            f"({len(wrong)} groups differ); the release was altered or damaged"
        )


def views_of_release(
    release, *, needs_sensitive: bool = False, model: str = "this model", as_written: bool = False, survey: bool = False
) -> list:
    """(sensitive column, view) for every sensitive column of the release, each judged on its own
    (a model on sensitive values holds only when it holds for every one); one view without a
    sensitive column when the model needs none or the release has none. ``as_written``: the groups
    of equal written values whatever the release's rule on blanks (the population models, which
    count the population records matching each group as written). ``survey``: each record carries its
    survey weight, when the release has a weight column (a model that reads them)."""
    if as_written and release.blanks is not None:  # the groups of equal written values
        release = dataclasses.replace(release, blanks=None)
    if not needs_sensitive or len(release.sensitive) <= 1:
        view = view_of_release(release, needs_sensitive=needs_sensitive, model=model, survey=survey)
        return [(release.sensitive[0] if release.sensitive else None, view)]
    return [
        (column, view_of_release(release, needs_sensitive=True, model=model, sensitive=column, survey=survey))
        for column in release.sensitive
    ]


def view_of_release(
    release,
    *,
    needs_sensitive: bool = False,
    model: str = "this model",
    sensitive: str | None = None,
    survey: bool = False,
) -> GroupView:
    """The groups of a release (its own ``groups`` or equality on its quasi-identifiers) with one
    sensitive column (``sensitive``, else its first); Q is that column's distribution over the
    release (generalisation and bucketisation keep every record's sensitive value, so this is the
    table's Q). With ``survey``, each record carries its survey weight when the release has a weight
    column."""
    sensitive = sensitive or (release.sensitive[0] if release.sensitive else None)
    if needs_sensitive and sensitive is None:
        raise BadInput(f"{model} needs a sensitive column: mark one column's role as sensitive")
    frame = release.frame
    if sensitive is not None and sensitive not in frame.columns:
        part = release.parts.get("sensitive")
        if part is None or sensitive not in part.columns:
            raise BadInput(f"the release has no column {sensitive!r} to judge {model} by")
        # Anatomy: the sensitive table lists (group, value) pairs; a record's value is unknown, the
        # group's multiset is what counts, so judge the sensitive table's rows by their group.
        if "group" in frame.columns:
            _same_groups(frame["group"], part["group"])
        return GroupView.from_labels(
            part["group"].to_numpy(), part[sensitive], hierarchy=release.hierarchies.get(sensitive)
        )
    codes = release.blank_codes()
    view = _records_view(release, sensitive, codes is None)
    weight = getattr(release, "weight", None) if survey else None
    if weight is not None and weight in frame.columns:
        from .survey_risk import weights_of

        view = view.with_survey(weights_of(frame, weight))
    if codes is None:
        return view
    from .blanks import blank_view

    return blank_view(codes, view)


def _records_view(release, sensitive: str | None, grouped: bool) -> GroupView:
    """:func:`view_of_frame` of the release's records (grouped on its quasi-identifiers, or all in one
    group when ``grouped`` is False: blanks then make the groups), kept with the release: each privacy
    model of a run asks for the same view, and encoding the sensitive column is the dear part."""
    frame = release.frame
    kept = release.__dict__.get("_records_views")
    if kept is None or kept[0] != len(frame):
        kept = (len(frame), {})
        object.__setattr__(release, "_records_views", kept)  # a cache, not a field: eq and replace ignore it
    key = (sensitive, grouped)
    view = kept[1].get(key)
    if view is None:
        view = view_of_frame(
            frame,
            release.quasi_identifiers,
            sensitive,
            groups=release.group_ids() if grouped else np.zeros(len(frame), dtype=np.int64),
            hierarchy=release.hierarchies.get(sensitive) if sensitive is not None else None,
        )
        kept[1][key] = view
    return view


def population_of_release(release, view: GroupView) -> np.ndarray | None:
    """Per group of ``view`` (a view of ``release``'s records): how many records of the release's
    population match the values its records show (:meth:`~veil.engine.Population.matches`); None
    when the release has no population."""
    population = getattr(release, "population", None)
    if population is None:
        return None
    if view.n_records != release.n_rows:
        raise BadInput(
            "the population models judge a release record by record; this release keeps its sensitive "
            "values apart from its records"
        )
    first = np.empty(view.n_groups, dtype=np.int64)
    first[np.asarray(view.groups)[::-1]] = np.arange(view.n_records)[::-1]
    values = release.frame.iloc[first][list(release.quasi_identifiers)].reset_index(drop=True)
    return population.matches(values)


def population_sizes(release) -> np.ndarray | None:
    """Each record's count of matching population records (journalist and marketer risk), when the
    release carries the population it was drawn from and judges records by their own values."""
    if getattr(release, "population", None) is None or release.exact_quasi_identifiers or release.parts:
        return None
    ids = release.group_ids()
    counts = population_of_release(release, GroupView.from_codes(ids, None, None))
    return None if counts is None else counts[ids]
