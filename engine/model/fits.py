"""What fits what: which methods take some data, which privacy models and metrics fit a method, and
which forms data is handed to a method in.

Every answer is decided from what plugins declare in typed form (``Algorithm.accepts``,
``needs_labels``, ``satisfies``; ``PrivacyModel.judges``, ``needs_sensitive``; ``Metric.accepts``,
``fits_forms``, ``requires``), never from a plugin's name. The desktop offers exactly what these
functions accept and the command line refuses what they refuse, with the same one-line reason, so
the two never disagree (:class:`~veil.engine.Registry` asks them on its installed plugins).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..data.forms import describe_form, form_of
from .plugin import BINARY, SETS, TABLE, TRANSACTIONS

_SET_VALUED = ("binary", "sets")  # the forms of records of item sets: a transaction matrix, item sets


@dataclass(frozen=True)
class Conversion:
    """A form data can be handed to a method in: ``source`` is the data's form, ``target`` one a
    method may accept (:data:`~veil.engine.TABLE`, ``BINARY``, ``TRANSACTIONS``, ``SETS``),
    ``how`` says in words what the conversion does."""

    source: str
    target: str
    how: str

    @property
    def as_is(self) -> bool:
        return self.how == _AS_IS


@dataclass(frozen=True)
class Fit:
    """Whether ``plugin`` (a class) fits, and when it does not, why: the end of a sentence about it
    ("works on set-valued records, not on a relational table"), one line."""

    plugin: type
    reason: str = ""

    @property
    def fits(self) -> bool:
        return not self.reason

    def __bool__(self) -> bool:
        return self.fits


_AS_IS = "as it is"
_CONVERSIONS = {
    TABLE: ((TABLE, _AS_IS), (BINARY, "its binary features, made by the feature rules")),
    "binary": (
        (BINARY, _AS_IS),
        (TRANSACTIONS, _AS_IS),
        (SETS, "each record's 1-features as its item set"),
    ),
    "sets": (
        (SETS, _AS_IS),
        (BINARY, "a record × item matrix of its item sets"),
        (TRANSACTIONS, "a record × item matrix of its item sets"),
    ),
}


def conversions(data) -> tuple[Conversion, ...]:
    """The forms ``data`` is handed to a method in, its own form first. A table is taken as it is or
    as its binary features; records of item sets (a transaction matrix or set-valued records) as item
    sets or as a record × item matrix. (A table's quasi-identifiers become items only inside a method
    that declares it takes a table and does so itself.)"""
    form = form_of(data)
    return tuple(Conversion(form, target, how) for target, how in _CONVERSIONS.get(form, ()))


def set_valued(data) -> bool:
    """Whether ``data`` is records of item sets (a transaction matrix or set-valued records)."""
    return data is not None and form_of(data) in _SET_VALUED


def method_fit(algorithm: type, data) -> Fit:
    """Whether method ``algorithm`` takes ``data``: it accepts a form the data converts to
    (:func:`conversions`), and a method needing labels gets them from set-valued records (which
    cannot be given a target afterwards; a table's target can be marked still)."""
    if data is None:
        return Fit(algorithm, "needs data to work on: open or give a dataset first")
    forms = {c.target for c in conversions(data)}
    if not forms & set(algorithm.accepts):
        takes = " or ".join(dict.fromkeys(describe_form(a) for a in algorithm.accepts))
        return Fit(algorithm, f"works on {takes}, not on {describe_form(form_of(data))}")
    if algorithm.needs_labels and set_valued(data) and data.labels is None:
        return Fit(algorithm, "needs a target, and these set-valued records have no labels")
    return Fit(algorithm)


def model_fit(model: type, data=None, algorithm: type | None = None, *, mismatch: str = "") -> Fit:
    """Whether privacy model ``model`` can judge a release of ``data`` (one needing a sensitive
    column cannot judge records of item sets, which have no columns) and, given ``algorithm``, the
    method works under it (``mismatch``: the registry's reason when it does not)."""
    if data is not None and model.needs_sensitive and set_valued(data):
        return Fit(model, "needs a sensitive column, and set-valued records have none")
    if algorithm is not None and not algorithm.works_under(model):
        return Fit(model, mismatch or f"is not a model {algorithm.name} works under")
    return Fit(model)


def metric_fit(metric: type, algorithm: type, model: type | None = None) -> Fit:
    """Whether ``metric`` says something of a run of ``algorithm`` (under ``model``): it measures a
    form the method takes, and the method's releases carry what it requires (``Metric.fits``)."""
    if metric.fits(algorithm, model):
        return Fit(metric)
    if metric.requires and metric.requires not in getattr(algorithm, "provides", ()):
        return Fit(metric, f"needs releases that carry a {metric.requires}, which {algorithm.name} does not make")
    forms = metric.fits_forms if metric.fits_forms is not None else metric.accepts
    if not set(forms) & set(algorithm.accepts):
        measured = " or ".join(dict.fromkeys(describe_form(f) for f in forms))
        return Fit(metric, f"measures releases of methods working on {measured}, which {algorithm.name} does not take")
    return Fit(metric, f"says nothing of a release of {algorithm.name}")  # the metric's own fits says so
