"""What bounds a pattern search: the user's limits (time, branches) and the length bounds one run's
searches prove for its later ones. The miners (:mod:`.mining`, :mod:`.longest_fim`,
:mod:`.longest_dfs`) and their dispatcher (:mod:`.longest`) all import from here.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable

import numpy as np

from ..base.errors import BadInput
from .grouping import settle


class MiningLimit(BadInput):
    """The search reached its user-set limit (time or branches) before it finished."""


class LengthBounds:
    """What the searches of one run prove for its later searches on fewer of the same records.

    PatternKa mines the records left after each group it removes, hundreds of times on large data, and
    most of every search proves that no pattern as long as the longest ends in one of the less popular
    items. Removing records makes no pattern closed that was not, so such a proof stays true:
    ``below[x]`` is a length every closed frequent itemset whose greatest item (in the fixed ``order``)
    is x is shorter than, for the records searched and every subset of them. A later search does not
    enter a root child whose bound is not above the length it wants.

    Why the bound holds: a search enumerates, in its root child c, every closed pattern whose greatest
    item is c and which is at least as long as the length it wanted there (``reach[c]`` is that length,
    or one more than the longest such pattern it found). A closed frequent itemset X of fewer records
    (a subset of them) was closed and frequent on the records searched: the records holding X now are
    some of those that held it then, and the items all of them hold include the items all of those
    held, so X's closure then was X; and its support was no smaller. Hence |X| < reach[c] for its
    greatest item c. (Non-closed itemsets have no such bound: the closure of one may end in a later
    item.) The item order must stay fixed across the searches: it is set by the first one (falling
    support, ties by item code) and kept.

    ``deep``: each search also searches every root child it enters down to that child's own longest
    closed pattern (``True``), or to at most ``deep`` lengths below the length it wants (an int;
    what it finds shorter than the length wanted raises the child's bound and is not kept), so
    ``below[c]`` is exact for the records searched, or at most ``deep`` below the length wanted, not
    just "shorter than the length wanted". A later search then skips every item whose patterns are all
    shorter than it wants: as the length wanted falls, an item is searched again only once its bound
    is reached, not at every length the run passes. To each item's longest, that makes the first
    search much dearer, so PatternKa goes two lengths deeper only: the next search skips the items
    when the length falls by one or two, as it does from the third mining on. ``deepen_first``
    (default True): the first search (no bounds yet) is deep too; PatternKa searches its first mining
    at its own length only, since the groups of the first patterns remove the records that stand out
    and the length falls far: bounds two lengths lower are no use there.

    Only closed searches whose root holds no pattern of its own (no item in every record) use and
    update the bounds; a search given a bounds object on other records than a subset of the first
    one's gives wrong answers.
    """

    def __init__(self, deep: bool | int = False, deepen_first: bool = True):
        self.order: np.ndarray | None = None  # item codes, the enumeration order of every search
        self.below: np.ndarray | None = None  # per item code
        self.deep = deep
        self.deepen_first = deepen_first
        self.room = 0  # patterns a search's store needed room for: the next ones start with as much

    def update(self, order: np.ndarray, below: np.ndarray, room: int = 0) -> None:
        self.order, self.below, self.room = order, below, max(self.room, room)


def run_limited(
    fn,
    args: tuple,
    *,
    max_seconds: float | None,
    check: Callable[[], None] | None,
    what: str,
    waiting: Callable[[], None] | None = None,
):
    """``fn(*args)``, in a forked child when a time limit or a cancel check is given (where the platform
    can fork): the child is killed at the deadline (:class:`MiningLimit`) or when ``check`` raises.
    The C miners cannot be interrupted; a child can. Without fork the call runs here. ``waiting`` is
    called every 50 ms while the child works (to report its progress)."""
    if (max_seconds is None and check is None) or not hasattr(os, "fork"):
        return fn(*args)

    settle()  # no lock held by a thread loading numba's kernels may be copied into the child
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send the answer, leave without any cleanup of the parent's state
        code = 0
        try:
            os.close(read_end)
            try:
                answer = ("ok", fn(*args))
            except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
                answer = ("error", exc)
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
        except BaseException:  # noqa: BLE001 - the parent sees an empty answer
            code = 1
        os._exit(code)
    os.close(write_end)
    chunks = []
    finished = False
    try:
        while True:
            wait = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            ready, _, _ = select.select([read_end], [], [], wait)
            if ready:
                chunk = os.read(read_end, 1 << 20)
                if not chunk:
                    finished = True
                    break
                chunks.append(chunk)
                continue
            if waiting is not None:
                waiting()
            if check is not None:
                check()
            if deadline is not None and time.monotonic() >= deadline:
                raise MiningLimit(
                    f"{what} stopped after {max_seconds:g} s without finishing; raise the time "
                    f"limit, raise k or ask for fewer patterns"
                )
    finally:
        os.close(read_end)
        if not finished:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError(f"{what} ended in its child process without an answer")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "error":
        raise value
    return value
