"""An export as one transaction: every file is prepared in a private folder beside the target, then
all of them are moved into place together, or none is.

The staging folder ``DIR/.veil-staging-XXXX`` is made with mode 0700 (only its owner can read what
is prepared there) on the same file system as ``DIR``, so a file reaches its final name by one
``rename``. Nothing is written to it before the release has passed its privacy check in memory.

The commit (:meth:`Staging.commit`):

1. hard-links (or copies) every file of the folder that the new export replaces or removes into
   ``staging/old/``, and writes ``staging/journal.json`` with state ``committing``, the names of
   the new files and their SHA-256;
2. renames each new file onto its name, the manifest last, then removes the earlier export's files
   that the new one does not have (an old ``report.html`` beside a new release without a report);
3. marks the journal ``committed`` and deletes the staging folder.

Any exception in step 2 (a full disk, a failing rename) rolls back: the earlier files are put back
from ``old/`` and the new ones removed, so the earlier export is intact. An interrupt (Ctrl+C,
SIGTERM through ``veil run``) is not let in halfway: making the staging folder, the whole commit
with the staging folder's removal, and the removal after a failure are each held steps
(:meth:`CancelToken.holding <veil.engine.run.jobs.CancelToken.holding>`, given as ``hold``); a
signal that arrives during one is deferred by its handler and takes effect when the step ends. So
an interrupted export has either finished (every file in place, no staging folder) or written
nothing. A kill
(SIGKILL, power loss) leaves the staging folder with its journal; the next export into the folder
finds it (its lock is no longer held), rolls back a commit that was under way and removes it, and
``veil verify`` names it meanwhile (:func:`leftovers`).

A staging folder is "live" while the process that made it holds an exclusive ``flock`` on its
``lock`` file; the kernel releases the lock when the process dies, however it dies. Without
``fcntl`` (Windows) a staging folder counts as stale after a day.

What a killed export left is acted on only when it is provably Veil's own (:func:`read_journal`):
the staging folder is a real folder (not a link) of this user that no one else may write to, its
journal and lock are regular files, the journal names the very folder it lies in (name and inode:
a journal copied or planted from elsewhere does not) and the process whose id the lock holds, and
it names nothing but plain file names of the export folder with their SHA-256. Anything else is
refused (BadInput) before anything is touched. Recovery never follows a link, never leaves the
export folder, and never opens anything but a regular file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import BadInput
from ..base.io import check_private_folder, file_kind, open_regular, sha256_file

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

PREFIX = ".veil-staging-"
JOURNAL = "journal.json"
LOCK = "lock"
NEW, OLD = "new", "old"
UNLOCKED_STALE_SECONDS = 24 * 3600  # without flock (Windows), or a folder killed before its lock existed
# earlier Veils wrote an export's files through ".release.csv.XXXX.part" files beside the target
LEGACY_PART = re.compile(r"\.(release\.[A-Za-z0-9]+|manifest\.json|report\.html|report\.pdf)\.[A-Za-z0-9_]+\.part")
MAX_JOURNAL_BYTES = 1 << 20  # an export's journal is well under a kilobyte per file
MAX_JOURNAL_NAMES = 1000  # files one journal may name (an export has a handful)
MAX_LOCK_BYTES = 64
_JOURNAL_KEYS = {"state", "new", "backed_up", "remove", "pid", "started", "folder"}
_STATES = ("committing", "committed")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def plain_name(name) -> bool:
    """Whether ``name`` is a plain file name: one component, which joined to a folder stays in it
    (no separator, no ``.``/``..``, no NUL or control character, not a staging folder's name)."""
    return (
        isinstance(name, str)
        and 0 < len(name.encode("utf-8", "surrogateescape")) <= 255
        and name not in (".", "..")
        and not name.startswith(PREFIX)
        and not any(c in "/\\" or ord(c) < 32 or c == "\x7f" for c in name)
        and (os.name != "nt" or ":" not in name)
        and Path(name).name == name
    )


def _shown(text: str) -> str:
    """A name for a one-line message: as it is when printable, else quoted with escapes."""
    return text if text.isprintable() else repr(text)


def _refuse(staging: Path, why: str):
    raise BadInput(
        f"{_shown(str(staging))} was not left by a Veil export into this folder: {why}; nothing was "
        f"touched (look at what it holds, then remove it to export here)"
    )


def _replace(src: Path, dst: Path) -> None:
    """One rename of the commit (a seam: tests make it fail at the i-th call)."""
    os.replace(src, dst)


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Staging:
    """A private folder in ``folder`` where the files of one export are prepared.

    Use as a context manager: leaving it without :meth:`commit` (an exception, a cancel) deletes the
    folder and everything in it, so the target folder is as it was. Entering it first removes the
    stale staging folders of killed exports (rolling back a commit one of them left half done).

    ``hold`` (``ctx.holding``: a callable returning a context manager) wraps each step that must not
    be interrupted halfway: entering, the commit with the folder's removal (``final=True``: once it
    succeeds the export is done), the removal after a failure. Without it a ``KeyboardInterrupt`` may
    still land inside one.
    """

    def __init__(self, folder: str | os.PathLike, hold=None):
        self.folder = Path(folder)
        self._hold = hold or _no_hold
        self.path: Path | None = None
        self.files: dict[str, Path] = {}  # final name -> prepared file
        self._lock_fd: int | None = None
        self.committed = False

    # -- life cycle
    def __enter__(self) -> Staging:
        with self._hold():
            try:
                self._enter()
            except BaseException:
                self.discard()
                raise
        return self

    def _enter(self) -> None:
        missing = []  # the folders this export makes (removed again when it writes nothing)
        for parent in (self.folder, *self.folder.parents):
            if parent.exists() or parent.is_symlink():
                break
            missing.append(parent)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._made = missing
        check_private_folder(self.folder, "the output folder")
        remove_stale(self.folder)
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=self.folder))  # mode 0700
        self._lock_fd = _lock(self.path / LOCK)
        (self.path / NEW).mkdir(mode=0o700)

    def __exit__(self, exc_type, exc, tb) -> None:
        with self._hold():
            self.discard()

    def discard(self) -> None:
        """Delete the staging folder (after a commit, or instead of one)."""
        if self.path is not None and self.path.exists():
            shutil.rmtree(self.path, ignore_errors=True)
        self._release()
        if not self.committed:
            for folder in getattr(self, "_made", ()):
                try:
                    folder.rmdir()  # only if still empty
                except OSError:
                    break

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    # -- preparing
    def file(self, name: str) -> Path:
        """The path to prepare the export's file ``name`` at (``folder/name`` after the commit)."""
        if not plain_name(name):
            raise ValueError(f"not a plain file name: {name!r}")
        path = self.path / NEW / name
        self.files[name] = path
        return path

    # -- committing
    def commit(self, remove: tuple[str, ...] = (), last: str | None = None, then=None) -> None:
        """Move every prepared file onto its name (``last`` after the others), delete the earlier
        export's files named in ``remove`` and the staging folder, as one held step; on any exception
        put the folder back as it was. ``then`` (no arguments), when given, is called once every file
        is in place and before the commit counts as done: the commit of a database transaction the
        export also made (:class:`~veil.engine.TableWrite`), so that when it fails the folder is put
        back too, and a kill before it leaves both undone."""
        with self._hold(final=True):
            self._commit(remove, last, then)
            self.discard()

    def _commit(self, remove: tuple[str, ...], last: str | None, then=None) -> None:
        names = sorted(self.files, key=lambda n: (n == last, n))
        for name in names:
            _fsync_file(self.files[name])
            os.chmod(self.files[name], 0o666 & ~_umask())  # as any new file would be (mkstemp's 0600 is not)
        remove = tuple(n for n in dict.fromkeys(remove) if n not in self.files and (self.folder / n).exists())
        for name in names:  # a link is replaced (never written through); a device, FIFO or folder is refused
            mode = _mode(self.folder / name)
            if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                raise BadInput(
                    f"{self.folder / name} is {file_kind(mode)}; an export replaces only a regular file there: "
                    f"move it away"
                )
        old = self.path / OLD
        old.mkdir(mode=0o700)
        backed_up = []
        for name in (*names, *remove):
            target = self.folder / name
            if target.exists() or target.is_symlink():
                _backup(target, old / name)
                backed_up.append(name)
        journal = {
            "state": "committing",
            "new": {n: sha256_file(self.files[n]) for n in names},
            "backed_up": backed_up,
            "remove": list(remove),
            "pid": os.getpid(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "folder": _identity(self.path),
        }
        why = _journal_problem(journal)  # never write a journal that recovery would refuse
        if why:
            raise BadInput(f"cannot export into {self.folder}: {why}")
        _write_journal(self.path, journal)
        try:
            for name in names:
                _replace(self.files[name], self.folder / name)
            for name in remove:
                os.unlink(self.folder / name)
            _fsync_dir(self.folder)
            if then is not None:
                then()
            journal["state"] = "committed"
            _write_journal(self.path, journal)
        except BaseException:
            self._rollback(journal)
            raise
        self.committed = True

    def _rollback(self, journal: dict) -> None:
        rollback(self.folder, self.path, journal)


def _no_hold(final: bool = False):
    return nullcontext()


def _backup(target: Path, backup: Path) -> None:
    try:
        os.link(target, backup, follow_symlinks=False)
    except OSError:  # no hard links here (some network or FAT file systems): copy
        mode = os.lstat(target).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):  # never read a FIFO or a device to copy it
            raise BadInput(f"{target} is {file_kind(mode)}, not a file Veil can replace; move it away") from None
        shutil.copy2(target, backup, follow_symlinks=False)


def _identity(staging: Path) -> dict:
    """What ties a journal to the staging folder it was written in: its name and inode."""
    return {"name": staging.name, "inode": os.lstat(staging).st_ino}


def _write_journal(staging: Path, journal: dict) -> None:
    tmp = staging / (JOURNAL + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(journal, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, staging / JOURNAL)
    _fsync_dir(staging)


def _mode(path: Path) -> int | None:
    """``lstat`` mode of ``path`` (a link is not followed); None when nothing is there."""
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None


def rollback(folder: Path, staging: Path, journal: dict) -> None:
    """Put ``folder`` back as it was before the commit ``journal`` describes: the earlier files from
    ``staging/old``, and no file of the new export (a file is the new export's when it is a regular
    file whose SHA-256 is the one the journal recorded).

    Only plain names are acted on, only inside ``folder``; a backup is moved back only when it is a
    regular file or a link (Veil backs up a link as a link), and no link is followed."""
    old = staging / OLD
    old_ok = stat.S_ISDIR(_mode(old) or 0)  # a link in its place would lead elsewhere
    new = journal.get("new") or {}
    backed_up = set(journal.get("backed_up") or [])
    for name in [*new, *(journal.get("remove") or [])]:
        if not plain_name(name):
            continue
        target, backup = folder / name, old / name
        kept = _mode(backup) if old_ok and name in backed_up else None
        if kept is not None and (stat.S_ISREG(kept) or stat.S_ISLNK(kept)):
            os.replace(backup, target)
        elif (
            name in new and stat.S_ISREG(_mode(target) or 0) and sha256_file(target, follow_symlinks=False) == new[name]
        ):
            os.unlink(target)
    _fsync_dir(folder)


# -- stale staging folders -------------------------------------------------------------------------
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def _lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NO_FOLLOW, 0o600)
    os.write(fd, str(os.getpid()).encode())
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _check_ours(staging: Path, path: Path, what: str, folder: bool = False) -> os.stat_result:
    """The ``lstat`` of ``path`` (the staging folder itself, its lock or its journal) when it is what
    Veil makes there: a real folder, or a regular file; of this user; a folder no one else may write to."""
    st = os.lstat(path)
    if folder != stat.S_ISDIR(st.st_mode) or not (folder or stat.S_ISREG(st.st_mode)):
        _refuse(staging, f"{what} is {file_kind(st.st_mode)}, not {'a folder' if folder else 'a regular file'}")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        _refuse(staging, f"{what} belongs to another user")
    if folder and os.name == "posix" and st.st_mode & 0o022:
        _refuse(staging, f"{what} may be written by other users")
    return st


def _is_live(staging: Path) -> bool:
    """Whether the process that made ``staging`` is still at work (it holds the lock)."""
    lock = staging / LOCK
    try:
        age = time.time() - os.lstat(staging).st_mtime
    except OSError:
        return False
    if fcntl is None:
        return age < UNLOCKED_STALE_SECONDS
    if _mode(lock) is None:  # made a moment ago, or killed between making the folder and locking it
        return age < 60
    _check_ours(staging, lock, f"its {LOCK}")
    try:
        fd = os.open(lock, os.O_RDWR | _NO_FOLLOW)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _refuse(staging, f"its {LOCK} is not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)
    return False


def _read_small(staging: Path, path: Path, what: str, limit: int) -> bytes:
    """A regular file of the staging folder, read without following a link, at most ``limit`` bytes."""
    st = _check_ours(staging, path, what)
    if st.st_size > limit:
        _refuse(staging, f"{what} holds {st.st_size:,} bytes, more than Veil ever writes there ({limit:,})")
    with open_regular(path, follow_symlinks=False) as f:
        raw = f.read(limit + 1)
    if len(raw) > limit:
        _refuse(staging, f"{what} holds more than {limit:,} bytes")
    return raw


def read_journal(staging: Path) -> dict | None:
    """The journal of a stale staging folder, when it is provably the one Veil wrote there (see the
    module's docstring); None when there is none (the export was killed before its commit began).
    Anything else raises BadInput, and nothing is touched."""
    _check_ours(staging, staging, "it", folder=True)
    path = staging / JOURNAL
    if _mode(path) is None:
        return None
    raw = _read_small(staging, path, f"its {JOURNAL}", MAX_JOURNAL_BYTES)
    try:
        journal = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeated_keys)
    except (ValueError, RecursionError):  # invalid UTF-8 or JSON, a key given twice, nesting too deep
        _refuse(staging, f"its {JOURNAL} is not a journal Veil writes")
    why = _journal_problem(journal)
    if why:
        _refuse(staging, f"its {JOURNAL} {why}")
    if journal["folder"] != _identity(staging):
        _refuse(staging, f"its {JOURNAL} was written in another folder")
    lock = staging / LOCK
    holder = _read_small(staging, lock, f"its {LOCK}", MAX_LOCK_BYTES) if _mode(lock) is not None else b""
    if holder.decode("ascii", "replace") != str(journal["pid"]):
        _refuse(staging, f"its {JOURNAL} was not written by the process that held its {LOCK}")
    old = staging / OLD
    if _mode(old) is not None:
        _check_ours(staging, old, f"its {OLD} folder", folder=True)
    return journal


def _no_repeated_keys(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError("a key is given twice")
    return d


def _journal_problem(journal) -> str | None:
    """What makes ``journal`` other than a journal Veil writes, in words; None when nothing does."""
    if not isinstance(journal, dict):
        return "is not a JSON object"
    unknown = sorted(set(journal) - _JOURNAL_KEYS)
    if unknown:
        return f"holds the unknown field {_shown(unknown[0])}"
    missing = sorted(k for k in _JOURNAL_KEYS - {"started"} if k not in journal)
    if missing:
        return f"lacks the field {missing[0]}"
    if journal["state"] not in _STATES:
        return "has an unknown state"
    pid = journal["pid"]
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return "names no process"
    if not isinstance(journal.get("started", ""), str) or len(journal.get("started", "")) > 64:
        return "has an invalid start time"
    folder = journal["folder"]
    if not (
        isinstance(folder, dict)
        and set(folder) == {"name", "inode"}
        and isinstance(folder["name"], str)
        and isinstance(folder["inode"], int)
        and not isinstance(folder["inode"], bool)
    ):
        return "does not say which folder it belongs to"
    new, backed_up, remove = journal["new"], journal["backed_up"], journal["remove"]
    if not isinstance(new, dict) or not isinstance(backed_up, list) or not isinstance(remove, list):
        return "is not a journal Veil writes"
    if len(new) + len(backed_up) + len(remove) > MAX_JOURNAL_NAMES:
        return f"names more than {MAX_JOURNAL_NAMES:,} files"
    for name in (*new, *backed_up, *remove):
        if not plain_name(name):
            return f"names {_shown(repr(name))}, which is not a plain file name in the export folder"
    if not all(isinstance(d, str) and _SHA256.fullmatch(d) for d in new.values()):
        return "gives a file a hash that is not a SHA-256"
    if len(set(backed_up)) != len(backed_up) or len(set(remove)) != len(remove) or set(remove) & set(new):
        return "names a file twice"
    if not set(backed_up) <= set(new) | set(remove):
        return "backs up a file that the export neither writes nor removes"
    return None


@dataclass
class Leftover:
    """What a killed (or running) export left in a folder."""

    path: Path
    live: bool  # an export is still at work in it
    journal: dict | None = None  # the commit it was making, if it had started one
    members: dict = field(default_factory=dict)  # for an interrupted commit: name -> "new" | "earlier"

    @property
    def interrupted_commit(self) -> bool:
        return not self.live and bool(self.journal) and self.journal.get("state") == "committing"

    @property
    def mixed(self) -> bool:
        """An interrupted commit that left the folder with some of its files and not others."""
        states = set(self.members.values())
        return self.interrupted_commit and "new" in states and not self.all_moved

    @property
    def all_moved(self) -> bool:
        """Every file of the interrupted commit had reached its name (the kill came just after)."""
        return all(self.members.get(n) == "new" for n in (self.journal or {}).get("new") or {})

    def describe(self) -> str:
        name = self.path.name
        if self.interrupted_commit and self.all_moved:
            return f"a killed export left its private temporary folder {name} after all its files were in place"
        if self.interrupted_commit and not self.mixed:
            return f"a killed export left its private temporary folder {name} before any of its files reached its name"
        if self.live:
            return f"an export into this folder is still running ({name})"
        if self.path.is_file():
            return f"a killed export of an earlier Veil left the temporary file {name}"
        if self.interrupted_commit:
            return f"an export into this folder was killed while moving its files into place ({name})"
        return f"a killed export left its private temporary folder {name} (none of its files reached their names)"


def leftovers(folder: str | os.PathLike) -> list[Leftover]:
    """Staging folders (and older Veils' ``.part`` files) in ``folder``, live or stale."""
    folder = Path(folder)
    found = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    for p in entries:
        if p.name.startswith(PREFIX):  # Veil makes only real folders by that name: a link or a file is refused
            _check_ours(p, p, "it", folder=True)
            live = _is_live(p)
            found.append(Leftover(p, live, None if live else read_journal(p)))
        elif LEGACY_PART.fullmatch(p.name) and stat.S_ISREG(_mode(p) or 0):
            found.append(Leftover(p, False))
    for item in found:
        if item.interrupted_commit:
            for name, digest in (item.journal.get("new") or {}).items():
                target = folder / name
                if stat.S_ISREG(_mode(target) or 0):  # never a link, a FIFO or a device
                    same = sha256_file(target, follow_symlinks=False) == digest
                    item.members[name] = "new" if same else "earlier"
    return found


def remove_stale(folder: str | os.PathLike) -> list[Path]:
    """Remove what killed exports left in ``folder`` (rolling back a half-done commit first, so the
    earlier export is whole again); return what was removed. Live staging folders are left alone.

    Every leftover is checked first (:func:`leftovers` raises BadInput for one Veil did not leave),
    so a refusal touches nothing."""
    removed = []
    for item in leftovers(folder):
        if item.live:
            continue
        if item.path.is_file():
            item.path.unlink(missing_ok=True)
        else:
            if item.interrupted_commit and not item.all_moved:
                rollback(Path(folder), item.path, item.journal)
            shutil.rmtree(item.path, ignore_errors=True)
        removed.append(item.path)
    return removed


def refuse_overwriting(targets, protected) -> None:
    """BadInput when a target is one of the protected files (the same file by any path, link or hard
    link), naming both; ``protected`` holds paths, or (path, what it is) pairs such as
    ``(path, "hierarchy file")``."""
    kept = []
    for keep in protected:
        keep, what = keep if isinstance(keep, tuple) else (keep, "input file")
        if keep and os.path.exists(keep):
            kept.append((Path(keep), what))
    for target in targets:
        target = Path(target)
        if not os.path.exists(target):
            continue
        for keep, what in kept:
            if os.path.samefile(keep, target):
                raise BadInput(
                    f"writing {_shown(target.name)} would overwrite the {what} {_shown(str(keep))}; "
                    f"choose another output folder"
                )
