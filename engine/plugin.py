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
TRANSACTIONS = "transactions"  # set-valued records (a BinaryMatrix built from transactions)


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
    randomised: ClassVar[bool] = False
    default_repeats: ClassVar[int] = 1  # runs per setting a study makes when it names no repeats (SPEC: RF 10)
    # the no-privacy reference others are compared to: its utility is shown even when its release
    # fails the privacy model (the release itself is still never written)
    baseline: ClassVar[bool] = False

    def run(self, data, model, params, ctx):  # pragma: no cover - interface
        raise NotImplementedError


class PrivacyModel(Plugin):
    """A privacy model: ``check(release, params) → Verdict`` on materialised data."""

    kind = "privacy-model"

    def check(self, release, params):  # pragma: no cover - interface
        raise NotImplementedError

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

    def write(self, frame, path, params):  # pragma: no cover - interface
        raise NotImplementedError

    def read_back(self, path):  # pragma: no cover - interface
        """Read a file this exporter wrote, for verification."""
        raise NotImplementedError
