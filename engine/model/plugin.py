"""Base classes of the six plugin kinds.

A plugin is a small class with a stable kebab-case ``name``, a ``title``, the ``paper`` it comes
from, a ``Params`` dataclass (see :mod:`veil.engine.params`) and one method. Plugins are stateless:
everything a call needs comes in through its arguments.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .params import param_specs, parse_params

KINDS = ("algorithm", "privacy-model", "metric", "chart", "importer", "exporter")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# What data an algorithm accepts.
BINARY = "binary"  # a BinaryMatrix (a Table is binarised by the run's recipe first)
TABLE = "table"  # a relational Table
TRANSACTIONS = "transactions"  # set-valued records as a BinaryMatrix (binary methods that also take baskets)
SETS = "sets"  # set-valued records as a SetValued (item sets per record, sparse; PatternKa)


class Plugin:
    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    paper: ClassVar[str] = ""  # which paper (a key of base/papers.py) or "" for infrastructure
    description: ClassVar[str] = ""
    Params: ClassVar[type | None] = None
    preferred: ClassVar[bool] = False  # chosen where a default is needed (the export format, the first chart)

    @classmethod
    def params(cls, values=None):
        """Validated parameters from a mapping of names to values or strings."""
        return parse_params(cls.Params, values, owner=f"{cls.kind} {cls.name!r}")

    @classmethod
    def param_specs(cls):
        return param_specs(cls.Params)

    @classmethod
    def describe(cls) -> dict:
        return {"kind": cls.kind, "name": cls.name, "title": cls.title, "paper": cls.paper,
                "description": cls.description, "params": [s.to_dict() for s in cls.param_specs()]}

    @classmethod
    def valid_name(cls) -> bool:
        return bool(_NAME.match(cls.name))


class Algorithm(Plugin):
    """A method: ``run(data, model, params, ctx) → Release``.

    ``accepts`` lists the data forms it takes; ``needs_labels`` says whether it needs a target.
    ``model`` is a :class:`BoundModel` (privacy model plus its parameters) or None for a run that
    makes no privacy claim.
    """

    kind = "algorithm"
    accepts: ClassVar[tuple[str, ...]] = (BINARY,)
    needs_labels: ClassVar[bool] = False
    needs_model: ClassVar[bool] = False
    supported_models: ClassVar[tuple[str, ...] | None] = None  # privacy models it can work under (None: any)
    releases_sensitive: ClassVar[bool] = False  # whether a column marked sensitive can reach its release
    provides: ClassVar[tuple[str, ...]] = ()  # what its releases carry beyond records, e.g. "feature-ranking"
    withholds_sensitive: ClassVar[bool] = False  # on a table: never releases a sensitive column unless told
    randomised: ClassVar[bool] = False
    # runs per setting a study makes when it names no repeats (RF: 10, docs/reference.md#feature-selection)
    default_repeats: ClassVar[int] = 1
    # the no-privacy reference others are compared to: its utility is shown even when its release
    # fails the privacy model (the release itself is still never written)
    baseline: ClassVar[bool] = False
    # the kinds of release the method makes, each with the parameters that make it (e.g. a mode that
    # generalises and one that bucketises); tests export one release of each. Empty: one, its defaults.
    release_variants: ClassVar[dict[str, dict]] = {}

    # -- capabilities: what the desktop may do with the method, declared so nothing names it --------
    required_roles: ClassVar[tuple[str, ...]] = ()  # column roles a run needs marked ("target", "sensitive")
    adjustable: ClassVar[tuple[str, ...]] = ()  # parameters that can change after a run without re-running it
    adjustable_labels: ClassVar[tuple[str, ...]] = ()  # what each adjustable parameter weighs, in words
    adjustable_sum_to_one: ClassVar[bool] = False  # the adjustable parameters are weights summing to 1
    charts: ClassVar[tuple[str, ...]] = ()  # chart plugins drawing one run's candidates (they take ``weights``)
    ranking_columns: ClassVar[tuple[tuple[str, str], ...]] = ()  # (key, header) of a ranked candidate's row
    ranking_help: ClassVar[str] = ""  # how the ranking is made, one or two sentences under its table

    def run(self, data, model, params, ctx):  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def role_problem(cls, data, values) -> str:
        """What the column roles lack for a run with parameter ``values`` ("" when nothing does)."""
        from ..data.forms import TABLE, form_of

        if form_of(data) != TABLE:
            return ""
        schema = data.schema
        for role in cls.required_roles:
            if role == "target" and schema.target is None:
                return "needs the class: mark the column to predict as the target"
            if role != "target" and not schema.by_role(role):
                return f"needs a {role} column: mark one under Dataset ▸ Columns"
        return ""

    @classmethod
    def roles_text(cls, data, values) -> str:
        """Which columns a run takes in which role, in one sentence ("" when there is nothing to say)."""
        return ""

    @classmethod
    def can_rank(cls, release) -> bool:
        """Whether a finished run's release carries candidates :meth:`rerank` can order."""
        return bool(cls.adjustable) and bool((release.details or {}).get("candidates"))

    @classmethod
    def rerank(cls, candidates, values):
        """The run's candidates ranked at other values of the ``adjustable`` parameters (in their
        order), best first, without re-running: rows with ``index``, ``label`` and ``place``."""
        raise NotImplementedError(f"method {cls.name!r} declares nothing adjustable after a run")

    @classmethod
    def reselect(cls, data, release, values):
        """The release the run would have made at ``values`` of its ``adjustable`` parameters."""
        raise NotImplementedError(f"method {cls.name!r} declares nothing adjustable after a run")

    @classmethod
    def candidate_frame(cls, details):
        """A run's candidates as a table (the data of its ``charts`` and of a CSV)."""
        raise NotImplementedError(f"method {cls.name!r} has no candidates to tabulate")


class PrivacyModel(Plugin):
    """A privacy model: ``check(release, params) → Verdict`` on materialised data.

    A model that judges equivalence groups (k-anonymity, l-diversity, t-closeness, δ-disclosure,
    set-valued k-anonymity) sets ``judges_groups`` and implements :meth:`check_groups`, one
    vectorised check over a :class:`~veil.engine.GroupView`; :meth:`check` then comes for free (the
    groups are the records equal on the release's quasi-identifiers, or the release's own
    ``groups``), and a method calls the same :meth:`check_groups` during its search.

    ``higher_is_safer`` orients the model's value on charts: k (higher is safer) against t or δ
    (lower is safer). ``needs_sensitive`` says a sensitive column must be marked.
    """

    kind = "privacy-model"
    judges_groups: ClassVar[bool] = False
    higher_is_safer: ClassVar[bool] = True
    needs_sensitive: ClassVar[bool] = False
    measure: ClassVar[str] = ""  # what the value is, in words ("group size", "JS divergence to Q")
    caveats: ClassVar[tuple[str, ...]] = ()  # what the guarantee does not cover, for the report

    def check(self, release, params):
        """Judge a release; group-judging models build the groups from it and call check_groups."""
        if not self.judges_groups:  # pragma: no cover - interface
            raise NotImplementedError
        from .groups import view_of_release
        from .release import verdict_from_groups

        view = view_of_release(release, needs_sensitive=self.needs_sensitive, model=self.name)
        return verdict_from_groups(self, params, view, self.check_groups(view, params))

    def check_groups(self, view, params):
        """Each group's value and verdict: a :class:`~veil.engine.GroupVerdict`."""
        raise NotImplementedError(f"privacy model {self.name!r} does not judge groups")

    def summary(self, params, verdict) -> str:
        """One sentence on the verdict (the Verdict's message); override for the model's words."""
        k = "holds" if verdict.holds else "fails"
        failing = len(verdict.failing_groups)
        tail = "" if verdict.holds else f": {failing} group{'s' if failing != 1 else ''} break{'s' if failing == 1 else ''} it"
        return f"{k}: worst {self.measure or 'value'} {verdict.worst:.4g}{tail}"

    def monotonicity(self, params) -> str:
        """What merging groups does to the verdict, which lets a search over generalisations prune
        soundly (docs/anonymisation.md#global-recoding): ``"generalisation"`` when a group made of
        passing groups passes, ``"suppression"`` when a group holding any passing group passes
        whatever else it holds (ARX: monotonic with suppression too), ``""`` when nothing is
        promised (the default; nothing is then pruned)."""
        return ""

    @staticmethod
    def explain(params: dict, holds: bool, value) -> str:
        """The verdict in one sentence for the report's headline ("" lets the report word it)."""
        return ""

    def selection_constraint(self, matrix, params):
        """The rule a feature-selection method grows S under (a SelectionConstraint).

        Models that cannot guide feature selection on binary data keep this default.
        """
        from ..base.errors import BadInput

        raise BadInput(f"privacy model {self.name!r} cannot guide feature selection; choose a model that can "
                       f"(see `veil plugins`)")


CHEAP = "cheap"
EXPENSIVE = "expensive"
METRIC_SAMPLE_ROWS = 100_000  # an expensive metric of a larger input runs on a seeded sample of this many records



class GroupSizeModel(PrivacyModel):
    """A model whose every group must hold at least ``params.k`` records (k-anonymity, relational or
    set-valued). Subclasses declare ``Params`` with a ``k`` and word their own ``summary``."""

    judges_groups = True
    measure = "group size"

    def check(self, release, params):
        from ..base.errors import BadInput

        if params.k > release.n_rows:
            raise BadInput(f"k = {params.k} is larger than the number of records ({release.n_rows})")
        return super().check(release, params)

    def check_groups(self, view, params):
        from .groups import GroupVerdict

        sizes = view.sizes
        return GroupVerdict(sizes, sizes >= params.k, higher_is_safer=True)

class Metric(Plugin):
    """A metric: ``compute(original, release, ctx) → float``; ``higher_is_better`` orients charts.

    A metric declares what it costs. ``cost = "cheap"`` (time linear in the records: counts, group
    sizes, distances over a release's columns) is computed by default for every run it fits;
    ``cost = "expensive"`` (it trains classifiers or re-runs the method) is computed only when the
    user chooses it, with an estimate shown beforehand (:meth:`estimate_seconds`), and on an input
    of more than :data:`METRIC_SAMPLE_ROWS` records on a seeded sample of that many (the run's
    manifest and report say so).
    """

    kind = "metric"
    higher_is_better: ClassVar[bool] = True
    category: ClassVar[str] = "utility"  # or "privacy"
    accepts: ClassVar[tuple[str, ...]] = (TABLE, BINARY)  # data forms it gives a number on (NaN elsewhere)
    in_report: ClassVar[bool] = False  # compared before/after in every export's report (a classifier's score)
    requires: ClassVar[str] = ""  # what a release must carry for a number (an Algorithm's ``provides``); NaN elsewhere
    cost: ClassVar[str] = CHEAP  # or EXPENSIVE
    # expensive metrics: seconds per record and released column on the reference machine
    # (docs/benchmarks.md), from which the estimate before a run is made
    seconds_per_cell: ClassVar[float] = 0.0
    # the data forms (BINARY, TABLE, TRANSACTIONS) of the methods whose releases it measures (None: those
    # of ``accepts``)
    fits_forms: ClassVar[tuple[str, ...] | None] = None

    @classmethod
    def fits(cls, algorithm: type, model: type | None) -> bool:
        """Whether this metric says something of a run of ``algorithm`` under ``model`` (classes)."""
        forms = cls.fits_forms if cls.fits_forms is not None else cls.accepts
        return any(f in algorithm.accepts for f in forms)

    @classmethod
    def estimate_seconds(cls, n_rows: int, n_columns: int) -> float:
        """About how long one computation takes on data of this shape (0 for cheap metrics)."""
        return cls.seconds_per_cell * min(n_rows, METRIC_SAMPLE_ROWS) * max(n_columns, 1)

    def compute(self, original, release, params, ctx):  # pragma: no cover - interface
        raise NotImplementedError


class Chart(Plugin):
    """A chart: ``draw(results, figure, params)`` from a tidy result table onto a matplotlib Figure."""

    kind = "chart"

    def draw(self, results, figure, params):  # pragma: no cover - interface
        raise NotImplementedError


class Importer(Plugin):
    """Reads a file format: ``read(path, options) → Table`` (or a BinaryMatrix for transactions)."""

    kind = "importer"
    extensions: ClassVar[tuple[str, ...]] = ()
    priority: ClassVar[int] = 0  # which importer wins when several recognise a file (higher first)

    def sniff(self, path, head: bytes) -> bool:
        """Whether this importer recognises the file (by extension by default)."""
        return str(path).lower().endswith(self.extensions)

    def read(self, path, options):  # pragma: no cover - interface
        raise NotImplementedError


class Exporter(Plugin):
    """Writes a released DataFrame: ``write(frame, path, params)`` (the engine makes it atomic)."""

    kind = "exporter"
    extension: ClassVar[str] = ""
    writes_sets: ClassVar[bool] = False  # can stream a set-valued release (write_sets)

    def write(self, frame, path, params):  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def refuses(cls, release) -> str:
        """Why this format cannot hold ``release`` ("" when it can): declared, so the engine and the
        tests know which release kinds an exporter accepts without trying. By default a set-valued
        release needs an exporter that ``writes_sets``; anything else is a table this writes."""
        if getattr(release, "sets", None) is not None and not cls.writes_sets:
            return f"a set-valued release is written one item set per line, which {cls.name} does not do"
        return ""

    def write_sets(self, sets, rows, path, params):  # pragma: no cover - interface
        """Write a set-valued release: line i is ``sets`` row ``rows[i]`` (a group's centre), in chunks."""
        raise NotImplementedError

    def read_back(self, path):  # pragma: no cover - interface
        """Read a file this exporter wrote, for verification (with the column names as given to ``write``)."""
        raise NotImplementedError

    def header(self, names):
        """The column names as the file shows them, e.g. escaped so a spreadsheet cannot run one as a
        formula; recorded in the manifest (``output.written_columns``) where they differ."""
        return [str(n) for n in names]
