"""The population a data set was drawn from (docs/reference.md#presence-map-and-risk-models): the
public table δ-presence and k-map count a released group's matches in.

A population record *matches* a released group when each of its quasi-identifier values matches
the group's released value of that column:

* ``*`` (suppressed, or a hierarchy's top) matches every value;
* a label of the column's hierarchy (attached by the user) matches the leaves under it;
* an interval, written ``[lo, hi]``, ``[lo, hi)`` or ``[lo, hi[`` (Mondrian's ranges and Veil's
  generated hierarchies), matches the numbers inside it;
* any other value matches itself (compared as a hierarchy leaf is, by its label).

:func:`load_with_population` reads a population beside the data (``--population``, or
``--subset-column`` marking the data's records in it).

The rule reads only what a release shows (its values as an exporter writes them) and the
hierarchies, so a run and ``veil verify`` on the written file count the same matches.

>>> pop = Population(pd.DataFrame({"age": [21, 25, 34, 47], "sex": ["F", "M", "F", "F"]}))
>>> pop.matches(pd.DataFrame({"age": ["[20, 30)", "*"], "sex": ["F", "F"]})).tolist()
[1, 3]
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.errors import BadInput
from .generalised import format_value
from .hierarchy import Node, value_label

_RANGE = re.compile(r"^\s*\[\s*(?P<lo>[-+]?[0-9.eE+-]+?)\s*,\s*(?P<hi>[-+]?[0-9.eE+-]+?)\s*(?P<end>[\])\[])\s*$")


@dataclass(frozen=True)
class Population:
    """The population's records (at least the quasi-identifier columns), where they came from, and
    the hierarchies attached to the data's columns (their labels name sets of leaves)."""

    frame: pd.DataFrame
    source: str | None = None
    sha256: str | None = None
    hierarchies: dict = field(default_factory=dict)
    subset_column: str | None = None  # the column of the population file that marks the data's records

    def to_dict(self) -> dict:
        """What a manifest records: where the population is, its hash and size, the subset column, and
        the hierarchies its matches were read by (generated ones too: ``veil verify`` reads them back)."""
        out = {"path": self.source, "sha256": self.sha256, "rows": self.n_rows, "subset_column": self.subset_column}
        if self.hierarchies:
            out["hierarchies"] = {c: h.to_dict() for c, h in self.hierarchies.items()}
        return out

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    def with_hierarchies(self, hierarchies: dict) -> Population:
        return dataclasses.replace(self, hierarchies=dict(hierarchies))

    def value_masks(self, column: str, labels, hierarchy=None) -> tuple[np.ndarray, np.ndarray]:
        """(each population record's distinct-value code, a labels × distinct values matrix of
        matches) for ``column`` and released ``labels`` (texts), read by ``hierarchy`` (default: the
        one attached to the column)."""
        if column not in self.frame.columns:
            raise BadInput(f"the population has no column {column!r}, a quasi-identifier of the release")
        codes, uniques = pd.factorize(self.frame[column], use_na_sentinel=True)
        if (codes < 0).any():
            raise BadInput(f"the population's column {column!r} has missing values; fill or remove them")
        texts = [value_label(v) for v in uniques]
        numbers = pd.to_numeric(pd.Series(list(uniques), dtype=object), errors="coerce").to_numpy(float)
        hierarchy = hierarchy if hierarchy is not None else self.hierarchies.get(column)
        out = np.zeros((len(labels), len(uniques)), dtype=bool)
        for i, label in enumerate(labels):
            out[i] = _matching(str(label), texts, numbers, hierarchy)
        return codes, out

    def matches(self, group_values: pd.DataFrame) -> np.ndarray:
        """How many population records match each row of ``group_values`` (one released group per
        row, one column per quasi-identifier, typed or as written)."""
        if group_values.shape[1] == 0:
            return np.full(len(group_values), self.n_rows, dtype=np.int64)
        per_column = []
        for column in group_values.columns:
            written = [format_value(v) for v in group_values[column]]
            labels, index = np.unique(np.asarray(written, dtype=object).astype(str), return_inverse=True)
            codes, masks = self.value_masks(str(column), labels)
            unread = np.flatnonzero(~masks.any(axis=1))
            if len(unread):  # a released group holds records of the population: its values match some
                raise BadInput(
                    f"the released value {str(labels[unread[0]])!r} of column {column!r} matches no record of "
                    f"the population: give the column's hierarchy (--hierarchy {column}=FILE) or the "
                    f"population the data was drawn from"
                )
            per_column.append((codes, masks, index))
        fast = _disjoint_counts(per_column, len(group_values))
        if fast is not None:
            return fast
        # the population's distinct combinations of values, each counted once
        keys = np.column_stack([c for c, _, _ in per_column])
        combos, weight = np.unique(keys, axis=0, return_counts=True)
        out = np.empty(len(group_values), dtype=np.int64)
        for g in range(len(group_values)):
            hit = np.ones(len(combos), dtype=bool)
            for j, (_, masks, index) in enumerate(per_column):
                hit &= masks[index[g]][combos[:, j]]
            out[g] = int(weight[hit].sum())
        return out

    def check_covers(self, table, columns) -> None:
        """Refuse, in one line, a population that cannot hold the data as a sample of it: a column
        missing, a value outside an attached hierarchy, or fewer population records than data records
        with some combination of quasi-identifier values."""
        columns = list(columns)
        for c in columns:
            if c not in self.frame.columns:
                raise BadInput(f"the population has no column {c!r}, a quasi-identifier of the data")
            if self.frame[c].isna().any():
                raise BadInput(f"the population's column {c!r} has missing values; fill or remove them")
            h = self.hierarchies.get(c)
            if h is not None:
                leaves = set(h.leaves)
                outside = next((v for v in pd.unique(self.frame[c]) if value_label(v) not in leaves), None)
                if outside is not None:
                    raise BadInput(
                        f"the population's value {value_label(outside)!r} of column {c!r} is not in its "
                        f"hierarchy; give a hierarchy that covers the population"
                    )
        if table.n_rows > self.n_rows:
            raise BadInput(
                f"the population ({self.n_rows:,} records) is smaller than the data ({table.n_rows:,} "
                f"records); the data must be a sample of it"
            )
        if not columns:
            return
        short = _shortfall(table.frame[columns], self.frame[columns])
        if short is not None:
            labels, mine, theirs = short
            said = ", ".join(f"{k}={v}" for k, v in zip(columns, labels))
            raise BadInput(
                f"the data holds {mine} records with {said} but the population only {theirs}; the data must "
                f"be a sample of the population"
            )


def _shortfall(mine: pd.DataFrame, theirs: pd.DataFrame) -> tuple[list[str], int, int] | None:
    """The combination of value labels the data holds most often among those the population holds
    fewer times: (its labels, the data's count, the population's), or None. Each column's values are
    labelled once per distinct value and numbered jointly across both frames."""
    keys = [np.zeros(len(mine), dtype=np.int64), np.zeros(len(theirs), dtype=np.int64)]
    bound = 1
    for column in mine.columns:
        per = [pd.factorize(f[column], use_na_sentinel=False) for f in (mine, theirs)]
        labels = [[value_label(v) for v in uniques] for _, uniques in per]
        joint, number = pd.factorize(pd.Index(labels[0] + labels[1]))
        span = max(len(number), 1)
        if bound * span >= 1 << 62:  # renumber the combinations so far, densely, across both frames
            both, _ = pd.factorize(np.concatenate(keys))
            keys = [both[: len(keys[0])].astype(np.int64), both[len(keys[0]) :].astype(np.int64)]
            bound = int(both.max()) + 1 if len(both) else 1
        at = [joint[: len(labels[0])], joint[len(labels[0]) :]]
        for k, ((codes, _), code_of) in enumerate(zip(per, at)):
            keys[k] = keys[k] * span + np.asarray(code_of, dtype=np.int64)[codes]
        bound *= span
    ours, row, count = np.unique(keys[0], return_index=True, return_counts=True)
    held, tally = np.unique(keys[1], return_counts=True)
    have = np.zeros(len(ours), dtype=np.int64)
    if len(held):
        at = np.minimum(np.searchsorted(held, ours), len(held) - 1)
        found = held[at] == ours
        have[found] = tally[at[found]]
    short = np.flatnonzero(count > have)
    if not len(short):
        return None
    worst = short[np.argmax(count[short])]
    record = mine.iloc[int(row[worst])]
    return [value_label(record[c]) for c in mine.columns], int(count[worst]), int(have[worst])


def _disjoint_counts(per_column, n_groups: int) -> np.ndarray | None:
    """The counts at once when, labels that match every population value (``*``) aside, every
    population value matches at most one released label of each column (a full-domain
    generalisation's labels do, its suppressed records ``*`` too): each record then has one label per
    column, and a group's count is the records with its labels in the columns where it has no ``*``,
    counted once for each pattern of ``*`` columns among the groups. None otherwise, or when the
    labels' combinations outgrow one integer."""
    spans, every = [], []
    for _, masks, _ in per_column:
        matches_all = masks.all(axis=1) if masks.shape[1] else np.zeros(masks.shape[0], dtype=bool)
        rest = masks[~matches_all]
        if rest.shape[0] and rest.shape[1] and rest.sum(axis=0).max() > 1:
            return None
        every.append(matches_all)
        spans.append(max(masks.shape[0], 1))
    if np.prod([float(x) for x in spans]) >= 2.0**62:
        return None
    out = np.zeros(n_groups, dtype=np.int64)
    if not n_groups:
        return out
    label = []  # each population record's label per column, among those not matching everyone (−1: none)
    for (codes, masks, _), matches_all in zip(per_column, every):
        some = masks & ~matches_all[:, None]
        label.append(
            np.where(some.any(axis=0), some.argmax(axis=0), -1)[codes] if masks.shape[1] else np.full(len(codes), -1)
        )
    index = [np.asarray(i, dtype=np.int64) for _, _, i in per_column]
    star = np.column_stack([matches_all[i] for matches_all, i in zip(every, index)])
    patterns, which = np.unique(star, axis=0, return_inverse=True)
    for p, pattern in enumerate(patterns):
        groups = np.flatnonzero(which.ravel() == p)
        record_key = np.zeros(len(label[0]), dtype=np.int64)
        held = np.ones(len(record_key), dtype=bool)
        group_key = np.zeros(len(groups), dtype=np.int64)
        radix = 1
        for j in reversed(range(len(per_column))):
            if pattern[j]:
                continue  # ``*`` here: every record matches this column
            held &= label[j] >= 0
            record_key += radix * np.maximum(label[j], 0)
            group_key += radix * index[j][groups]
            radix *= spans[j]
        keys, tally = np.unique(record_key[held], return_counts=True)
        if not len(keys):
            continue
        at = np.minimum(np.searchsorted(keys, group_key), len(keys) - 1)
        out[groups] = np.where(keys[at] == group_key, tally[at], 0)
    return out


def _matching(label: str, texts: list[str], numbers: np.ndarray, hierarchy) -> np.ndarray:
    """Which distinct population values (``texts``, ``numbers``) a released label matches."""
    if label.strip() == "*":
        return np.ones(len(texts), dtype=bool)
    if hierarchy is not None and label in _labels(hierarchy):
        level = _labels(hierarchy)[label]
        under = set(hierarchy.leaves_under(Node(level, label)))
        return np.array([t in under for t in texts], dtype=bool)
    if label.startswith("{") and label.endswith("}"):  # a set of values, as Mondrian writes one: {a, b}
        members = set(label[1:-1].split(", "))
        hit = np.array([t in members or t == label for t in texts], dtype=bool)
        if hit.any():
            return hit
    m = _RANGE.match(label)
    if m:
        try:
            lo, hi = float(m["lo"]), float(m["hi"])
        except ValueError:
            lo = hi = None
        if lo is not None and lo <= hi:
            upper = numbers <= hi if m["end"] == "]" else numbers < hi
            return (numbers >= lo) & upper & ~np.isnan(numbers)
    return np.array([t == label for t in texts], dtype=bool)


@functools.lru_cache(maxsize=64)
def _labels(hierarchy) -> dict:
    """Each label of the hierarchy with its level (the lowest level it appears at)."""
    found: dict = {}
    for level in range(hierarchy.height + 1):
        for node in hierarchy.nodes(level):
            found.setdefault(node.label, level)
    return found


_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}


def subset_mask(series: pd.Series, column: str) -> np.ndarray:
    """Which records a 0/1 (true/false, yes/no) column marks; BadInput names a value it cannot read."""
    text = series.map(lambda v: value_label(v).strip().lower() if not pd.isna(v) else "")
    wrong = text[~text.isin(_TRUE | _FALSE)]
    if len(wrong):
        raise BadInput(
            f"the subset column {column!r} must hold 1/0 (or true/false, yes/no); it holds {series[wrong.index[0]]!r}"
        )
    return text.isin(_TRUE).to_numpy()


def _read_table(registry, source, path: str):
    """The population file as a table, read with ``source``'s options (not its roles, hierarchies,
    appended files or kept columns)."""
    from .table import Table

    plain = dataclasses.replace(
        source,
        path=str(path),
        demo=False,
        roles={},
        hierarchies={},
        append=(),
        columns=None,
        population=None,
        subset_column=None,
    )
    whole = plain.load(registry)
    if not isinstance(whole, Table):
        raise BadInput(f"{Path(path).name}: a population is a table of records, not transactions")
    return whole


def read_population(registry, source, path: str, table=None) -> Population:
    """The population in the file ``path``, read with the options ``source`` reads the data with;
    with ``table`` (the data), refused in one line when it cannot hold the data as a sample of it
    (:meth:`Population.check_covers` on the table's quasi-identifiers)."""
    from .table import Role

    whole = _read_table(registry, source, path)
    found = Population(whole.frame.reset_index(drop=True), str(Path(path).resolve()), whole.sha256)
    if table is not None:
        attached = table.with_population(found).population
        attached.check_covers(table, table.schema.by_role(Role.QUASI_IDENTIFIER))
    return found


def load_with_population(registry, source, population: str, subset_column: str | None = None):
    """The data ``source`` names with the population it was drawn from attached: the file
    ``population``, read with the same options, or, with ``subset_column``, that file's records the
    column marks as the data (the column itself dropped). BadInput, in one line, when the population
    cannot hold the data as a sample of it."""
    from .table import Role, Schema, Table

    whole = _read_table(registry, source, population)
    if subset_column is not None:
        if source.path or source.demo:
            raise BadInput("give the data with --data or mark it with --subset-column in the population, not both")
        if subset_column not in whole.frame.columns:
            raise BadInput(f"the population has no column {subset_column!r} to mark the data's records")
        chosen = subset_mask(whole.frame[subset_column], subset_column)
        if not chosen.any():
            raise BadInput(f"the subset column {subset_column!r} marks no record of the population")
        marked = dataclasses.replace(source, path=str(population), demo=False)
        table = marked.load(registry)
        keep = [c for c in table.schema.columns if c.name != subset_column]
        frame = table.frame.loc[chosen, [c.name for c in keep]].reset_index(drop=True)
        data = Table(frame, Schema(tuple(keep)), table.source, table.sha256)
        people = whole.frame.drop(columns=[subset_column])
    else:
        data = source.load(registry)
        if not isinstance(data, Table):
            raise BadInput("a population applies to a table of records, not to transactions")
        people = whole.frame
    found = Population(
        people.reset_index(drop=True), str(Path(population).resolve()), whole.sha256, subset_column=subset_column
    )
    data = data.with_population(found)
    data.population.check_covers(data, data.schema.by_role(Role.QUASI_IDENTIFIER))
    return data
