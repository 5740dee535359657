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
    paper: ClassVar[str] = ""  # which paper (file under shared/papers) or "" for infrastructure
    description: ClassVar[str] = ""
    Params: ClassVar[type | None] = None

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
    randomised: ClassVar[bool] = False
    default_repeats: ClassVar[int] = 1  # runs per setting a study makes when it names no repeats (SPEC: RF 10)

    def run(self, data, model, params, ctx):  # pragma: no cover - interface
        raise NotImplementedError


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

    @staticmethod
    def explain(params: dict, holds: bool, value) -> str:
        """The verdict in one sentence for the report's headline ("" lets the report word it)."""
        return ""

    def selection_constraint(self, matrix, params):
        """The rule a feature-selection method grows S under (a SelectionConstraint).

        Models that cannot guide feature selection on binary data keep this default.
        """
        from .errors import BadInput

        raise BadInput(f"privacy model {self.name!r} cannot guide feature selection; "
                       f"choose k-ac or k-anonymity")


class Metric(Plugin):
    """A metric: ``compute(original, release, ctx) → float``; ``higher_is_better`` orients charts."""

    kind = "metric"
    higher_is_better: ClassVar[bool] = True
    category: ClassVar[str] = "utility"  # or "privacy"

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
