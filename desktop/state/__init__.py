"""The desktop's state, free of Qt: the widgets bind to these objects thinly.

Each panel has one state object (:mod:`.dataset`, :mod:`.config`, :mod:`.runs`, :mod:`.chart`). It
holds what the user chose, knows the domain rules (one target column, identifiers never become
features, how a sweep becomes runs) and announces changes through a tiny :class:`~.events.Event`.
What fits what is the engine registry's to say; the states ask it. Beside them: undo and redo
(:mod:`.history`), choosing among a run's ranked candidates (:mod:`.ranking`), what the release
preview and the item-sets view show (:mod:`.release_preview`, :mod:`.setvalued_view`), and the work
handed to the worker thread (:mod:`.tasks`). The import contract "the desktop's state imports no
Qt" (pyproject.toml) keeps the package free of Qt, so the rules are tested without a window.
"""

from .chart import ChartState
from .config import ConfigState, PlannedRun, PluginChoice, metric_fits, model_for, native_to_sets
from .dataset import LEAVE_OUT, RULES_BY_KIND, DatasetState, rules_for, rules_from
from .notes import memory_note, metric_cost_note
from .project import project_of, sensitive_to_confirm
from .runs import CANCELLED, DONE, FAILED, QUEUED, RUNNING, RunEntry, RunsState

__all__ = [
    "CANCELLED",
    "ChartState",
    "ConfigState",
    "DatasetState",
    "DONE",
    "FAILED",
    "LEAVE_OUT",
    "memory_note",
    "metric_cost_note",
    "metric_fits",
    "model_for",
    "native_to_sets",
    "PlannedRun",
    "PluginChoice",
    "project_of",
    "QUEUED",
    "RULES_BY_KIND",
    "rules_for",
    "rules_from",
    "RunEntry",
    "RUNNING",
    "RunsState",
    "sensitive_to_confirm",
]
