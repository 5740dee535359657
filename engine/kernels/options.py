"""How a pattern search may run: :class:`SearchOptions`, passed in by the caller and read from nowhere
else. :func:`~veil.engine.longest_itemsets`, the compiled search of :mod:`.longest_dfs` and
:meth:`~veil.engine.RecordIndex.holders` take one; the default is every core and the search's own
sizes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..base.errors import BadInput

PARALLEL_ENTRIES = 200_000  # a search over this many (record, item) entries or more is split between threads
MASK_WORDS = 128  # a branch with at most this many words (× 64) of candidates is searched on bit masks


@dataclass(frozen=True)
class SearchOptions:
    """What the caller decides about a pattern search, besides its data and its limits.

    Attributes
    ----------
    threads : int or None
        The most threads one search (and one lookup of many patterns' records) may use; None: every
        core of the machine (``os.cpu_count()``). A run passes its context's
        :attr:`~veil.engine.Context.threads`.
    parallel_entries : int
        A search is split between threads only from this many (record, item) entries on, and without a
        branch limit (which counts one thread's branches); below, one thread does it all. Tests lower
        it to split small searches.
    mask_words : int
        The most 64-bit words a record a branch's candidate items may take for the branch to be
        searched on bit masks; a branch with more candidates is searched on item lists. Tests lower
        it so that small data meet every kind of branch.
    capacity : int or None
        The patterns a search's store holds at first (None: enough for most searches); a search
        that needs more runs again with four times as many. Tests make it small to run that path.
    help_first : bool
        A thread helps another with its root child before taking one of its own, not only once every
        root child is taken. Tests use it so that threads share a child's children often.
    """

    threads: int | None = None
    parallel_entries: int = PARALLEL_ENTRIES
    mask_words: int = MASK_WORDS
    capacity: int | None = None
    help_first: bool = False

    def __post_init__(self):
        if self.threads is not None and self.threads < 1:
            raise BadInput(f"a search needs at least one thread, not {self.threads}")
        if self.parallel_entries < 0:
            raise BadInput("the entries from which a search is split cannot be negative")
        if self.mask_words < 1:
            raise BadInput("a bit-mask branch takes at least one word a record")
        if self.capacity is not None and self.capacity < 1:
            raise BadInput("the pattern store holds at least one pattern")

    @property
    def cores(self) -> int:
        """:attr:`threads`, or every core of the machine when it is None."""
        return self.threads if self.threads is not None else max(1, os.cpu_count() or 1)
