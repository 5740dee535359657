"""The compiled longest-pattern search's shared state (``st``, one int64 array: its indices below), its
constants, and numba when installed (else plain Python) (:mod:`.longest_dfs` describes the search).
"""

from __future__ import annotations

try:  # numba is optional: without it the kernel is plain Python
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised where numba is not installed
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f


# st (the search's state, int64): indices
(
    NODES,
    THR,
    N_OUT,
    USED,
    OVERFLOW,
    FLOOR,
    R,
    K,
    MAXIMAL,
    MAX_NODES,
    STOPPED,
    COPIED,
    ALIVE,
    PRUNED,
    ROOT_LEN,
    EMAX,
    SKIPPED,
    DEEP,
    WIDE_WORDS,
    PART,
    HELPED,
    HELP_FIRST,
) = range(22)
STATE = 22
WORD = 64  # a branch whose candidates are all numbered below this is searched on one bit mask a record
# (one with at most ``SearchOptions.mask_words`` * WORD candidates on that many words a record: st[WIDE_WORDS])
SHARED_DONE = 1 << 62  # a shared branch's counter once its children are all taken (see _dfs_bits)
PENDING = -2  # a thread's root child in ``active`` while it takes one and makes its masks (see _dfs)
