"""Base classes of the six plugin kinds.

A plugin is a small class with a stable kebab-case ``name``, a ``title``, the ``paper`` it comes
from, a ``Params`` dataclass (see :mod:`veil.engine.params`) and one method. Plugins are stateless:
everything a call needs comes in through its arguments.

Every method a plugin implements is annotated here; ``tests/engine/test_plugin_types.py`` checks that
each registered plugin's declarations have the declared types and its methods the declared
parameters. What a method's run receives as ``ctx`` is described by :class:`RunContext`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias, runtime_checkable

from .params import param_specs, parse_params

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    from ..base.io import ImportOptions
    from ..data.binary import BinaryMatrix
    from ..data.datasource import DataSource
    from ..data.setvalued import SetValued
    from ..data.table import Role, Table
    from ..kernels.containment import SelectionConstraint
    from .bound import BoundModel, CombinedModel
    from .groups import GroupVerdict, GroupView
    from .ranking import Ranker
    from .release import PartsRelease, Release, Verdict

    Data: TypeAlias = Table | BinaryMatrix | SetValued  # what a method runs on, in one of its forms
    Model: TypeAlias = BoundModel | CombinedModel  # the privacy model(s) a method runs under, bound

KINDS = ("algorithm", "privacy-model", "metric", "chart", "importer", "exporter")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MB = 1 << 20


@dataclass(frozen=True)
class ReportFact:
    """One line of a report's facts a method contributes: a label and its text; ``key`` (a path in
    the release's details, e.g. ``"generalisation.suppressed_records"``) and ``value`` when the text
    shows a number the manifest holds, so the report can tie the two."""

    label: str
    text: str
    key: str | None = None
    value: object = None


@dataclass(frozen=True)
class DataShape:
    """What a plugin's memory cost is a function of: records, columns (features, items), cells held
    (a table's cells; the ones a sparse binary matrix or item sets hold), the most distinct values
    of a column, the bytes the data itself takes and, for a release that publishes groups of records
    alike (its ``group_values``), how many groups."""

    rows: int
    columns: int
    cells: int
    max_distinct: int = 0
    nbytes: int = 0
    groups: int = 0

    def sampled(self, rows: int) -> DataShape:
        """The shape of a seeded sample of at most ``rows`` records."""
        if self.rows <= rows:
            return self
        share = rows / self.rows
        return replace(
            self,
            rows=rows,
            cells=int(self.cells * share),
            nbytes=int(self.nbytes * share),
            max_distinct=min(self.max_distinct, rows),
            groups=min(self.groups, rows),
        )


@dataclass(frozen=True)
class MemoryCost:
    """The memory (bytes) a plugin needs beyond its input, as a function of the data's shape: a fixed
    part and parts per record, per cell held, per record × column (a dense records × features
    array of sparse data), per record × most distinct values of a column, per published group × most
    distinct values (a region of every group over a column's values) and per pair of records.
    Declared on the plugin's class
    (``memory_cost``); the memory harness (tests/test_memory_harness.py) checks that it bounds what
    the plugin really takes."""

    fixed: float = 16 * MB
    per_record: float = 256.0
    per_cell: float = 64.0
    per_record_column: float = 0.0
    per_record_distinct: float = 0.0
    per_group_distinct: float = 0.0
    per_record_pair: float = 0.0

    def bytes(self, shape: DataShape) -> int:
        return int(
            self.fixed
            + self.per_record * shape.rows
            + self.per_cell * shape.cells
            + self.per_record_column * shape.rows * shape.columns
            + self.per_record_distinct * shape.rows * shape.max_distinct
            + self.per_group_distinct * shape.groups * shape.max_distinct
            + self.per_record_pair * shape.rows * shape.rows
        )


@runtime_checkable
class RunContext(Protocol):
    """What a method or a metric receives as ``ctx`` (the engine's ``Context``, docs/design.md#the-run-context):
    progress and cancellation, the run's random generator and noise source, the executor service,
    how a blocking backend stops itself, and a context for a slice of the work."""

    seed: int
    mode: str  # "release" or "study"
    rng: np.random.Generator
    noise: Any  # the run's Noise (engine/run/noise.py): secure in a release, seeded in a study

    @property
    def executor(self) -> Any:  # the chosen executor service (engine/run/executors.py)
        ...

    def progress(self, fraction: float, message: str = "", *, check: bool = True) -> None: ...

    def check(self) -> None: ...

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]: ...

    def child(self, start: float, end: float, seed: int | None = None) -> RunContext: ...

    def spawn_seed(self) -> int: ...


# What data an algorithm accepts.
BINARY = "binary"  # a BinaryMatrix (a Table is binarised by the run's recipe first)
TABLE = "table"  # a relational Table
TRANSACTIONS = "transactions"  # set-valued records as a BinaryMatrix (binary methods that also take baskets)
SETS = "sets"  # set-valued records as a SetValued (item sets per record, sparse; PatternKa)


class Judgement(str, Enum):
    """A kind of privacy judgement: what a privacy model looks at in a release, and so what a method
    has to make for the model to hold.

    A privacy model declares the kinds it judges (:attr:`PrivacyModel.judges`), a method the kinds
    it can satisfy (:attr:`Algorithm.satisfies`); the method works under the model when they share
    one. So the engine and the desktop pair methods with models by what they do, never by name.
    """

    GROUP_SIZE = "group-size"  # every group of records the release makes alike holds at least k records
    GROUPS = "groups"  # each group of records alike in the release, one group at a time (check_groups)
    FEATURE_SETS = "feature-sets"  # which binary features may be released together (selection_constraint)
    CONTAINMENT = "containment"  # how many records contain each record's released 1-features
    # each combination of a few quasi-identifiers on its own (PrivacyModel.combined_columns)
    COMBINATIONS = "combinations"

    @property
    def words(self) -> str:
        """What a model of this kind judges, in words for a message."""
        return _JUDGEMENT_WORDS[self]


_JUDGEMENT_WORDS = {
    Judgement.GROUP_SIZE: "the size of each group of records the release makes alike",
    Judgement.GROUPS: "each group of records alike in the release, one group at a time",
    Judgement.FEATURE_SETS: "which binary features may be released together",
    Judgement.CONTAINMENT: "how many records contain each record's released features",
    Judgement.COMBINATIONS: "each combination of a few quasi-identifiers, one combination at a time",
}


class HierarchyUse(str, Enum):
    """Which of a table's hierarchies a method generalises along: none; those of its categorical
    quasi-identifiers only (numbers it generalises its own way, by their ranges); or every
    quasi-identifier's, numbers included. The engine tells the user before a run which attached
    hierarchies the method will not use (:func:`~veil.engine.unused_hierarchies`)."""

    NONE = "none"
    CATEGORICAL = "categorical"
    ALL = "all"


def judgements(kinds: Iterable[Judgement | str]) -> frozenset[Judgement]:
    """Declared kinds of judgement as :class:`Judgement` members (a member or its value each);
    ValueError names one that is neither."""
    return frozenset(Judgement(k) for k in kinds)


def judgement_words(kinds: Iterable[Judgement | str]) -> str:
    """``kinds`` in words: "a model judging A" or "a model judging A or B"."""
    return "a model judging " + " or ".join(Judgement(k).words for k in kinds)


class Plugin:
    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    paper: ClassVar[str] = ""  # which paper (a key of base/papers.py) or "" for infrastructure
    description: ClassVar[str] = ""
    Params: ClassVar[type | None] = None
    preferred: ClassVar[bool] = False  # chosen where a default is needed (the export format, the first chart)
    memory_cost: ClassVar[MemoryCost] = MemoryCost()  # beyond the input: see MemoryCost

    @classmethod
    def memory(cls, shape: DataShape, params: Any = None) -> int:
        """Bytes the plugin needs beyond its input on data of ``shape`` (with ``params``): its declared
        :attr:`memory_cost`; a plugin whose cost depends on its parameters overrides this."""
        return cls.memory_cost.bytes(shape)

    @classmethod
    def params(cls, values: dict[str, Any] | None = None) -> Any:
        """Validated parameters from a mapping of names to values or strings."""
        return parse_params(cls.Params, values, owner=f"{cls.kind} {cls.name!r}")

    @classmethod
    def param_specs(cls) -> list:
        return param_specs(cls.Params)

    @classmethod
    def hint(cls, params: Any) -> str:
        """A sentence on what valid ``params`` imply, shown under the parameter form and recomputed as
        the fields change (e.g. the class size a privacy budget implies); "" for none. The desktop
        computes it on a background thread after a pause in the edits, so it may take a moment,
        but it must be a pure function of ``params`` (safe to call from another thread) and must
        not read the data."""
        return ""

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {
            "kind": cls.kind,
            "name": cls.name,
            "title": cls.title,
            "paper": cls.paper,
            "description": cls.description,
            "params": [s.to_dict() for s in cls.param_specs()],
        }

    @classmethod
    def valid_name(cls) -> bool:
        return bool(_NAME.match(cls.name))


@dataclass(frozen=True)
class ScaleOut:
    """How a method's run goes to a cluster (docs/design.md#tables-larger-than-memory): the parameter
    choosing where it runs (``executor_param``), the value sending it to the cluster (``value``), the
    parameter holding the cluster's address (``master_param``), and whether such a run reads its
    input files itself and writes its release as parts (``reads_files``: the table need not fit in
    this process; :meth:`Algorithm.run_parts`)."""

    value: str
    executor_param: str = "executor"
    master_param: str = "spark_master"
    reads_files: bool = False
    only_there: tuple[str, ...] = ()  # further parameters that apply to a cluster's run alone (its parts' format)

    def cluster_params(self) -> tuple[str, ...]:
        """The parameters that say nothing about a run made here."""
        return (self.executor_param, self.master_param, *self.only_there)

    def chosen(self, params: Any) -> bool:
        """Whether ``params`` send the run to the cluster."""
        return getattr(params, self.executor_param, None) == self.value


@dataclass(frozen=True)
class TradeOff:
    """What a method's runs trade against each other, drawn first after they finish: a metric on the
    x axis (what is given up for privacy, e.g. suppressed records, or the privacy model's own value)
    against one on the y axis (the information lost). Each is a list of metric names in order of
    preference; the first one the results computed is drawn. ``swept``: only when the runs sweep a
    parameter (one run is one point, and a single point answers nothing)."""

    x: tuple[str, ...]
    y: tuple[str, ...]
    swept: bool = False

    def pick(self, computed) -> tuple[str, str] | None:
        """(x metric, y metric): the first of each this trade-off prefers that is ``computed``."""
        names = {str(m).split(":")[0]: str(m) for m in reversed(list(computed))}
        x = next((names[m] for m in self.x if m in names), None)
        y = next((names[m] for m in self.y if m in names), None)
        return (x, y) if x and y else None


class Algorithm(Plugin):
    """A method: ``run(data, model, params, ctx) → Release``.

    ``accepts`` lists the data forms it takes; ``needs_labels`` says whether it needs a target.
    ``model`` is a :class:`BoundModel` (privacy model plus its parameters) or None for a run that
    makes no privacy claim.

    ``satisfies`` lists the kinds of privacy judgement (:class:`Judgement`) the method makes its
    release for: it works under a privacy model that judges one of them. A method that satisfies
    none (the default) does not steer by the model at all; any model then judges its release after
    the run, and a release that fails is refused.

    ``ranker`` (a :class:`~veil.engine.Ranker`, or None) is declared by a method whose run ranks
    candidates by weights that may move after the run; its releases then carry a typed
    :class:`~veil.engine.Ranking`.
    """

    kind = "algorithm"
    accepts: ClassVar[tuple[str, ...]] = (BINARY,)
    needs_labels: ClassVar[bool] = False
    needs_model: ClassVar[bool] = False
    satisfies: ClassVar[tuple[Judgement, ...]] = ()  # judgements it makes its release for (empty: judged afterwards)
    releases_sensitive: ClassVar[bool] = False  # whether a column marked sensitive can reach its release
    provides: ClassVar[tuple[str, ...]] = ()  # what its releases carry beyond records, e.g. "feature-ranking"
    withholds_sensitive: ClassVar[bool] = False  # on a table: never releases a sensitive column unless told
    randomised: ClassVar[bool] = False
    # it perturbs a table's values record for record, keeping every record and column: it may run as a
    # run's second step (``RunSpec.then``), on the release of a first method that releases the records
    perturbs: ClassVar[bool] = False
    # runs per setting a study makes when it names no repeats (RF: 10, docs/reference.md#feature-selection)
    default_repeats: ClassVar[int] = 1
    # the no-privacy reference others are compared to: its utility is shown even when its release
    # fails the privacy model (the release itself is still never written)
    baseline: ClassVar[bool] = False
    # the kinds of release the method makes, each with the parameters that make it (e.g. a mode that
    # generalises and one that bucketises); tests export one release of each. Empty: one, its defaults.
    release_variants: ClassVar[dict[str, dict]] = {}

    # its table release holds the input's records one for one, in the input's order (release row i
    # is input row i: cells may change, no record is added, dropped or moved), so the export can link
    # each released cell to the input's (a labelled file's per-cell missing codes, docs/formats.md)
    keeps_record_order: ClassVar[bool] = False
    # its table release puts every record in one group (records alike on the quasi-identifiers it
    # grouped, or its own ``groups``; a suppressed record * throughout), so a quasi-identifier it is
    # told not to group on can be aggregated inside those groups (RunSpec.aggregates,
    # docs/anonymisation.md#aggregating-a-column-inside-the-groups). False: such a run is refused.
    aggregates_in_groups: ClassVar[bool] = False
    ranker: ClassVar[Ranker | None] = None  # how its candidates are ranked again at other weights
    scale_out: ClassVar[ScaleOut | None] = None  # how a run of it goes to a cluster (None: it runs here only)
    uses_hierarchies: ClassVar[HierarchyUse] = HierarchyUse.NONE  # see hierarchy_use
    trade_off: ClassVar[TradeOff | None] = None  # the chart that answers what its runs decide (see TradeOff)

    @classmethod
    def applicable_params(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters that say something about a run made with ``params`` (a dict, as a manifest
        records them): without an empty value (a ``levels`` not given) nor, for a run made here,
        the parameters of a cluster's run (:class:`ScaleOut`). What a report's method line shows."""
        shown = {k: v for k, v in params.items() if v is not None and v != ""}
        scale = cls.scale_out
        if scale is not None and shown.get(scale.executor_param) != scale.value:
            shown = {k: v for k, v in shown.items() if k not in scale.cluster_params()}
        return shown

    @classmethod
    def hierarchy_use(cls, params: Any) -> HierarchyUse:
        """Which attached hierarchies a run with ``params`` generalises along: :attr:`uses_hierarchies`
        unless a parameter changes it (Mondrian's ``numbers``)."""
        return cls.uses_hierarchies

    @classmethod
    def blank_rule(cls, params: Any) -> str | None:
        """What a blank quasi-identifier means in a run with ``params`` (``"any-value"`` or
        ``"own-value"``, engine/model/blanks.py) when the method lets the user choose; None otherwise.
        A column aggregated inside the groups keeps its blanks only where a blank matches any value."""
        return None

    def run(self, data: Data, model: Model | None, params: Any, ctx: RunContext) -> Release:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def reads_files(cls, params: Any) -> bool:
        """Whether a run with ``params`` reads its input files itself (:meth:`run_parts`) instead of
        being handed a table loaded here."""
        return cls.scale_out is not None and cls.scale_out.reads_files and cls.scale_out.chosen(params)

    def run_parts(  # pragma: no cover - interface
        self, source: DataSource, model: Model | None, params: Any, ctx: RunContext, scratch: Path
    ) -> PartsRelease:
        """Read ``source`` (a DataSource naming a file or a folder of parts), anonymise it and write the
        release into the empty folder ``scratch`` as part files: a :class:`~veil.engine.PartsRelease`.
        The engine then names, hashes, counts and re-checks the parts before any is released."""
        raise NotImplementedError

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {**super().describe(), "satisfies": [Judgement(j).value for j in cls.satisfies]}

    @classmethod
    def works_under(cls, model: type[PrivacyModel] | PrivacyModel | Model) -> bool:
        """Whether the method can run under privacy model ``model`` (a class or an instance): it
        satisfies a kind of judgement the model makes, or it steers by no model at all."""
        return not cls.satisfies or bool(judgements(cls.satisfies) & judgements(getattr(model, "judges", ())))

    @classmethod
    def role_problem(cls, data: Data, values: dict[str, Any]) -> str:
        """What the column roles lack for a run with parameter ``values`` ("" when nothing does)."""
        return ""

    @classmethod
    def roles_text(cls, data: Data, values: dict[str, Any]) -> str:
        """Which columns a run takes in which role, in one sentence ("" when there is nothing to say)."""
        return ""

    @classmethod
    def report_facts(cls, details: dict[str, Any], rows: int | None) -> list[ReportFact]:
        """What the report's "What was released" section says of a release's ``details`` (as the
        manifest keeps them; ``rows``: the records released), beyond what every release shows."""
        return []


def _without_suppressed(release):
    """The release without its records written ``*`` in every quasi-identifier, for a model judging
    the release as a whole: a suppressed record is left out of its judgement, as the methods leave
    it out (docs/reference.md#suppressing-the-riskiest-groups); the release itself when it has none
    or keeps its groups apart from its records."""
    import dataclasses

    import numpy as np

    from .blanks import suppressed_records

    if release.sets is not None or release.parts:
        return release
    gone = suppressed_records(release.frame, list(release.quasi_identifiers))
    if not gone.any() or gone.all():  # every record suppressed: the release is judged as it stands
        return release
    groups = release.groups
    if groups is not None:
        groups = np.unique(np.asarray(groups)[~gone], return_inverse=True)[1].astype(np.int64)
    return dataclasses.replace(
        release,
        frame=release.frame[~gone].reset_index(drop=True),
        groups=groups,
        group_values=None,
        cell_changes={},
    )


class PrivacyModel(Plugin):
    """A privacy model: ``check(release, params) → Verdict`` on materialised data.

    A model that judges equivalence groups (k-anonymity, l-diversity, t-closeness, δ-disclosure,
    set-valued k-anonymity) sets ``judges_groups`` and implements :meth:`check_groups`, one
    vectorised check over a :class:`~veil.engine.GroupView`; :meth:`check` then comes for free (the
    groups are the records equal on the release's quasi-identifiers, or the release's own
    ``groups``), and a method calls the same :meth:`check_groups` during its search.

    ``higher_is_safer`` orients the model's value on charts: k (higher is safer) against t or δ
    (lower is safer). ``needs_sensitive`` says a sensitive column must be marked.

    ``judges`` lists the kinds of judgement (:class:`Judgement`) the model makes: the methods that
    satisfy one of them work under it (a group-judging model judges :attr:`Judgement.GROUPS`).
    """

    kind = "privacy-model"
    judges: ClassVar[tuple[Judgement, ...]] = ()
    judges_groups: ClassVar[bool] = False
    higher_is_safer: ClassVar[bool] = True
    needs_sensitive: ClassVar[bool] = False
    measure: ClassVar[str] = ""  # what the value is, in words ("group size", "JS divergence to Q")
    # judges each group against the population the data was drawn from, when the run has one
    # (GroupView.population: δ-presence, k-map)
    reads_population: ClassVar[bool] = False
    # judges each group by its survey weights, when the data marks a weight column (GroupView.survey:
    # a method then carries each record's weight into the views it asks about)
    reads_weights: ClassVar[bool] = False
    # judges the release as a whole (every group carries the release's verdict), and suppressing its
    # smallest groups, the riskiest, is how a suppression limit meets it: a method with a limit then
    # suppresses the fewest smallest groups that make it hold, as ARX enforces its risk-based criteria
    # (docs/reference.md#suppressing-the-riskiest-groups)
    suppresses_smallest: ClassVar[bool] = False
    caveats: ClassVar[tuple[str, ...]] = ()  # what the guarantee does not cover, for the report
    # the caveats instead when the run judged against a population table (None: ``caveats`` either way)
    caveats_with_population: ClassVar[tuple[str, ...] | None] = None
    # parameters a population table makes unused (k-map's sampling fraction): the desktop greys them
    # out while a population is open
    population_replaces: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def reads_sensitive_hierarchy(cls, params: Any) -> bool:
        """Whether the model, with these parameters, judges a sensitive column through the hierarchy
        attached to it (then that hierarchy is used even when the method generalises nothing by it)."""
        return False

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {**super().describe(), "judges": [Judgement(j).value for j in cls.judges]}

    def check(self, release: Release, params: Any) -> Verdict:
        """Judge a release; group-judging models build the groups from it and call check_groups."""
        if not self.judges_groups:  # pragma: no cover - interface
            raise NotImplementedError
        from .groups import views_of_release
        from .release import verdict_from_groups, worst_of

        if self.suppresses_smallest:
            release = _without_suppressed(release)
        size = self.combined_columns(params)
        if size is not None and size < len(release.quasi_identifiers):
            from .combinations import check_combinations

            return check_combinations(self, params, release, size)
        views = views_of_release(
            release,
            needs_sensitive=self.needs_sensitive,
            model=self.name,
            as_written=self.reads_population,
            survey=self.reads_weights,
        )
        if self.reads_population and getattr(release, "population", None) is not None:
            from .groups import population_of_release

            views = [(column, view.with_population(population_of_release(release, view))) for column, view in views]
        judged = [
            (
                column if self.needs_sensitive else None,
                verdict_from_groups(self, params, view, self.check_groups(view, params)),
            )
            for column, view in views
        ]
        return worst_of(judged, self.higher_is_safer)

    def combined_columns(self, params: Any) -> int | None:
        """m when the model judges every combination of at most m quasi-identifiers on its own (an
        intruder who knows at most m of them: the groups are the records alike on those columns),
        None (the default) when it judges them all together. Such a model judges
        :attr:`Judgement.COMBINATIONS`, which only a method that works combination by combination
        satisfies (docs/models.md#k-anonymity-on-every-m-quasi-identifiers)."""
        return None

    def infeasible(self, view: GroupView, params: Any) -> str:
        """Why no release of these records can satisfy the model with ``params``, in words naming the
        reason (e.g. "l = 5 is above the number of distinct sensitive values (3)"), or "" when the
        model sees none. ``view`` holds every record in one group (the coarsest release of all), with
        one sensitive column. The engine asks before any run and falls back on the model's verdict
        on that view."""
        return ""

    def check_groups(self, view: GroupView, params: Any) -> GroupVerdict:
        """Each group's value and verdict: a :class:`~veil.engine.GroupVerdict`."""
        raise NotImplementedError(f"privacy model {self.name!r} does not judge groups")

    def summary(self, params: Any, verdict: Verdict) -> str:
        """One sentence on the verdict (the Verdict's message); override for the model's words."""
        k = "holds" if verdict.holds else "fails"
        failing = len(verdict.failing_groups)
        tail = (
            ""
            if verdict.holds
            else f": {failing} group{'s' if failing != 1 else ''} break{'s' if failing == 1 else ''} it"
        )
        return f"{k}: worst {self.measure or 'value'} {verdict.worst:.4g}{tail}"

    def monotonicity(self, params: Any) -> str:
        """What merging groups does to the verdict, which lets a search over generalisations prune
        soundly (docs/anonymisation.md#global-recoding): ``"generalisation"`` when a group made of
        passing groups passes, ``"suppression"`` when a group holding any passing group passes
        whatever else it holds (ARX: monotonic with suppression too), ``""`` when nothing is
        promised (the default; nothing is then pruned)."""
        return ""

    def necessary_groups(self, view: GroupView, params: Any) -> np.ndarray | None:
        """A weaker condition than the model's that is monotone under suppression, as a boolean per
        group, or None (the default) when the model offers none. Every group passing the model must
        meet it, and a group holding any group that meets it must meet it too (e.g. "holds at least
        l distinct sensitive values" for l-diversity). A search with a suppression limit prunes on
        it where the model itself promises nothing under suppression
        (docs/anonymisation.md#global-recoding)."""
        return None

    @classmethod
    def display_title(cls, params: dict[str, Any]) -> str:
        """The model's title as its parameters (a mapping of names to values) make it, where they change
        what it is (e.g. "one-sided δ-disclosure"); its ``title`` by default."""
        return cls.title

    @staticmethod
    def explain(params: dict[str, Any], holds: bool, value: Any) -> str:
        """The verdict in one sentence for the report's headline ("" lets the report word it)."""
        return ""

    def selection_constraint(self, matrix: BinaryMatrix, params: Any) -> SelectionConstraint:
        """The rule a feature-selection method grows S under (a SelectionConstraint).

        Models that cannot guide feature selection on binary data keep this default.
        """
        from ..base.errors import BadInput

        raise BadInput(
            f"privacy model {self.name!r} cannot guide feature selection; choose a model that can (see `veil plugins`)"
        )


CHEAP = "cheap"
EXPENSIVE = "expensive"
METRIC_SAMPLE_ROWS = 100_000  # an expensive metric of a larger input runs on a seeded sample of this many records


class GroupSizeModel(PrivacyModel):
    """A model whose every group must hold at least ``params.k`` records (k-anonymity, relational or
    set-valued). Subclasses declare ``Params`` with a ``k`` and word their own ``summary``."""

    judges = (Judgement.GROUP_SIZE, Judgement.GROUPS)
    judges_groups = True
    measure = "group size"

    def check(self, release: Release, params: Any) -> Verdict:
        from ..base.errors import BadInput

        if params.k > release.n_rows:
            raise BadInput(f"k = {params.k} is larger than the number of records ({release.n_rows})")
        return super().check(release, params)

    def check_groups(self, view: GroupView, params: Any) -> GroupVerdict:
        from .groups import GroupVerdict

        sizes = view.sizes
        return GroupVerdict(sizes, sizes >= params.k, higher_is_safer=True)


class Metric(Plugin):
    """A metric: ``compute(original, release, ctx) → float``; ``higher_is_better`` orients charts.

    A metric must declare what it costs; there is no default, and the registry refuses a metric
    that does not say (a new metric would otherwise join every user's default runs unasked).
    ``cost = CHEAP`` (time linear in the records: counts, group sizes, distances over a release's
    columns) is computed by default for every run it fits; ``cost = EXPENSIVE`` (it trains
    classifiers or re-runs the method) is computed only when the user chooses it, with an estimate
    shown beforehand (:meth:`estimate_seconds`), and on an input of more than
    :data:`METRIC_SAMPLE_ROWS` records on a seeded sample of that many (the run's manifest and
    report say so).
    """

    kind = "metric"
    higher_is_better: ClassVar[bool] = True
    category: ClassVar[str] = "utility"  # or "privacy"
    accepts: ClassVar[tuple[str, ...]] = (TABLE, BINARY)  # data forms it gives a number on (NaN elsewhere)
    in_report: ClassVar[bool] = False  # compared before/after in every export's report (a classifier's score)
    # the parameters an export's report computes it with (its defaults where not given): a study's
    # protocol may be dearer than a release needs, e.g. a classifier's C tuned per fold
    report_params: ClassVar[dict] = {}
    # the parameters a report asks for when the user wants the study's protocol there too
    tuned_report_params: ClassVar[dict] = {}
    requires: ClassVar[str] = ""  # what a release must carry for a number (an Algorithm's ``provides``); NaN elsewhere
    # the column roles the data must mark for a number (a household, weights); NaN on data marking none
    needs_roles: ClassVar[tuple[Role, ...]] = ()
    cost: ClassVar[str]  # CHEAP or EXPENSIVE, declared by every metric (no default)
    # expensive metrics: seconds per record and released column, from which the estimate before a run
    # is made
    seconds_per_cell: ClassVar[float] = 0.0
    # the data forms (BINARY, TABLE, TRANSACTIONS) of the methods whose releases it measures (None: those
    # of ``accepts``)
    fits_forms: ClassVar[tuple[str, ...] | None] = None

    @classmethod
    def fits(cls, algorithm: type[Algorithm], model: type[PrivacyModel] | None) -> bool:
        """Whether this metric says something of a run of ``algorithm`` under ``model`` (classes): it
        gives a number on a form the method takes, and the method's releases carry what it requires
        (``requires`` among the method's ``provides``)."""
        forms = cls.fits_forms if cls.fits_forms is not None else cls.accepts
        carried = not cls.requires or cls.requires in getattr(algorithm, "provides", ())
        return carried and any(f in algorithm.accepts for f in forms)

    def protocol(self, params: Any) -> str:
        """How this metric was computed with ``params``, in words for the report ("" when there is
        nothing to say)."""
        return ""

    @classmethod
    def estimate_seconds(cls, n_rows: int, n_columns: int) -> float:
        """About how long one computation takes on data of this shape (0 for cheap metrics)."""
        return cls.seconds_per_cell * min(n_rows, METRIC_SAMPLE_ROWS) * max(n_columns, 1)

    def compute(self, original: Data, release: Release, params: Any, ctx: RunContext) -> float:  # pragma: no cover
        raise NotImplementedError


class Chart(Plugin):
    """A chart: ``draw(results, figure, params)`` from a tidy result table onto a matplotlib Figure.

    What it draws is declared, so the desktop offers it only for results it applies to (:meth:`fits`):
    ``needs_metrics``, metrics of which the results must have computed at least one (empty: any);
    ``needs_sweep``, whether it draws against a swept parameter; ``draws_trade_off``, whether it
    draws one metric against another (a method's :class:`TradeOff`), with the parameters
    :meth:`trade_off_params` gives."""

    kind = "chart"
    needs_metrics: ClassVar[tuple[str, ...]] = ()
    needs_sweep: ClassVar[bool] = False
    draws_trade_off: ClassVar[bool] = False

    @classmethod
    def fits(cls, results: pd.DataFrame | None) -> str:
        """Why this chart does not apply to ``results`` (a tidy result table), "" when it does."""
        if results is None or "metric" not in getattr(results, "columns", ()):
            return "there are no results"
        computed = set(results.loc[results["value"].notna(), "metric"].astype(str).str.split(":").str[0])
        if cls.needs_metrics and not computed & set(cls.needs_metrics):
            return f"no run computed {' or '.join(cls.needs_metrics)}"
        if cls.needs_sweep and not results.attrs.get("sweep"):
            return "the runs sweep no parameter"
        if cls.draws_trade_off and len(computed) < 2:
            return "the runs computed fewer than two metrics"
        return ""

    @classmethod
    def trade_off_params(cls, x: str, y: str) -> dict:
        """This chart's parameters drawing metric ``x`` against ``y`` (only where it ``draws_trade_off``)."""
        raise NotImplementedError

    def draw(self, results: pd.DataFrame, figure: Figure, params: Any) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class Importer(Plugin):
    """Reads a file format: ``read(path, options) → Table`` (or a BinaryMatrix for transactions)."""

    kind = "importer"
    extensions: ClassVar[tuple[str, ...]] = ()
    priority: ClassVar[int] = 0  # which importer wins when several recognise a file (higher first)

    def sniff(self, path: Path, head: bytes) -> bool:
        """Whether this importer recognises the file (by extension by default)."""
        return str(path).lower().endswith(self.extensions)

    def read(self, path: Path, options: ImportOptions) -> Table | BinaryMatrix:  # pragma: no cover - interface
        raise NotImplementedError

    def head(self, path: Path, options: ImportOptions, rows: int) -> Table | None:
        """The file's first ``rows`` records read at little cost, for a preview (labels applied as
        :meth:`read` applies them); None when this format is only read whole."""
        return None


class TableWrite:
    """One transaction adding a release as a table of an existing database file, which an exporter
    that ``writes_tables`` opens (:meth:`Exporter.open_table`) and the export drives: ``write`` the
    frame, ``read_back`` the table as the transaction sees it, its ``sha256`` (the content digest
    :meth:`Exporter.table_sha256` computes again later), then ``commit`` (the table and nothing else
    becomes visible) or ``close`` without a commit (nothing in the database changed). Used as a
    context manager, it closes on leaving."""

    def write(self, frame: pd.DataFrame) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def read_back(self) -> pd.DataFrame:  # pragma: no cover - interface
        raise NotImplementedError

    def sha256(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def commit(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def __enter__(self) -> TableWrite:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Exporter(Plugin):
    """Writes a released DataFrame: ``write(frame, path, params)`` (the engine makes it atomic).

    An exporter that ``writes_tables`` can also add a release as a new table of an existing
    database file (:meth:`open_table`), read such a table back (:meth:`read_table`) and digest its
    content (:meth:`table_sha256`), which the manifest records and ``veil verify`` checks."""

    kind = "exporter"
    extension: ClassVar[str] = ""
    writes_sets: ClassVar[bool] = False  # can stream a set-valued release (write_sets)
    writes_tables: ClassVar[bool] = False  # can add a release as a table of an existing database

    def open_table(self, database: Path, table: str, replace: bool) -> TableWrite:  # pragma: no cover
        """Begin the transaction adding ``table`` to ``database``; BadInput when the name is not one
        a table may have, the database cannot be written, or the table exists and ``replace`` is off."""
        raise NotImplementedError

    def read_table(self, database: Path, table: str) -> pd.DataFrame:  # pragma: no cover - interface
        """A table this exporter wrote into ``database``, read as :meth:`read_back` reads a file."""
        raise NotImplementedError

    def table_sha256(self, database: Path, table: str) -> str:  # pragma: no cover - interface
        """The SHA-256 of ``table``'s content in ``database`` (the same digest the write recorded)."""
        raise NotImplementedError

    def write(self, frame: pd.DataFrame, path: Path, params: Any) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def refuses(cls, release: Release) -> str:
        """Why this format cannot hold ``release`` ("" when it can): declared, so the engine and the
        tests know which release kinds an exporter accepts without trying. By default a set-valued
        release needs an exporter that ``writes_sets``; anything else is a table this writes."""
        if getattr(release, "sets", None) is not None and not cls.writes_sets:
            return f"a set-valued release is written one item set per line, which {cls.name} does not do"
        return ""

    def write_sets(  # pragma: no cover - interface
        self, sets: SetValued, rows: np.ndarray, path: Path, params: Any
    ) -> None:
        """Write a set-valued release: line i is ``sets`` row ``rows[i]`` (a group's centre), in chunks."""
        raise NotImplementedError

    def read_back(self, path: Path) -> pd.DataFrame:  # pragma: no cover - interface
        """Read a file this exporter wrote, for verification (with the column names as given to ``write``)."""
        raise NotImplementedError

    def header(self, names: Sequence[object]) -> list[str]:
        """The column names as the file shows them, e.g. escaped so a spreadsheet cannot run one as a
        formula; recorded in the manifest (``output.written_columns``) where they differ."""
        return [str(n) for n in names]
