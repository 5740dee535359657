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

Any exception in step 2 (a full disk, Ctrl+C, SIGTERM through ``veil run``) rolls back: the earlier
files are put back from ``old/`` and the new ones removed, so the earlier export is intact. A kill
(SIGKILL, power loss) leaves the staging folder with its journal; the next export into the folder
finds it (its lock is no longer held), rolls back a commit that was under way and removes it, and
``veil verify`` names it meanwhile (:func:`leftovers`).

A staging folder is "live" while the process that made it holds an exclusive ``flock`` on its
``lock`` file; the kernel releases the lock when the process dies, however it dies. Without
``fcntl`` (Windows) a staging folder counts as stale after a day.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import BadInput
from ..base.io import sha256_file

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
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.path: Path | None = None
        self.files: dict[str, Path] = {}  # final name -> prepared file
        self._lock_fd: int | None = None
        self.committed = False

    # -- life cycle
    def __enter__(self) -> Staging:
        missing = []  # the folders this export makes (removed again when it writes nothing)
        for parent in (self.folder, *self.folder.parents):
            if parent.exists() or parent.is_symlink():
                break
            missing.append(parent)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._made = missing
        remove_stale(self.folder)
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=self.folder))  # mode 0700
        self._lock_fd = _lock(self.path / LOCK)
        (self.path / NEW).mkdir(mode=0o700)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
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
        if Path(name).name != name or name in (".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        path = self.path / NEW / name
        self.files[name] = path
        return path

    # -- committing
    def commit(self, remove: tuple[str, ...] = (), last: str | None = None) -> None:
        """Move every prepared file onto its name (``last`` after the others) and delete the
        earlier export's files named in ``remove``; on any exception put the folder back as it was."""
        names = sorted(self.files, key=lambda n: (n == last, n))
        for name in names:
            _fsync_file(self.files[name])
            os.chmod(self.files[name], 0o666 & ~_umask())  # as any new file would be (mkstemp's 0600 is not)
        remove = tuple(n for n in dict.fromkeys(remove) if n not in self.files and (self.folder / n).exists())
        old = self.path / OLD
        old.mkdir(mode=0o700)
        backed_up = []
        for name in (*names, *remove):
            target = self.folder / name
            if target.exists() or target.is_symlink():
                _backup(target, old / name)
                backed_up.append(name)
        journal = {"state": "committing", "new": {n: sha256_file(self.files[n]) for n in names},
                   "backed_up": backed_up, "remove": list(remove), "pid": os.getpid(),
                   "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write_journal(self.path, journal)
        try:
            for name in names:
                _replace(self.files[name], self.folder / name)
            for name in remove:
                os.unlink(self.folder / name)
            _fsync_dir(self.folder)
            journal["state"] = "committed"
            _write_journal(self.path, journal)
        except BaseException:
            self._rollback(journal)
            raise
        self.committed = True

    def _rollback(self, journal: dict) -> None:
        rollback(self.folder, self.path, journal)


def _backup(target: Path, backup: Path) -> None:
    try:
        os.link(target, backup, follow_symlinks=False)
    except OSError:  # no hard links here (some network or FAT file systems): copy
        shutil.copy2(target, backup, follow_symlinks=False)


def _write_journal(staging: Path, journal: dict) -> None:
    tmp = staging / (JOURNAL + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(journal, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, staging / JOURNAL)
    _fsync_dir(staging)


def rollback(folder: Path, staging: Path, journal: dict) -> None:
    """Put ``folder`` back as it was before the commit ``journal`` describes: the earlier files from
    ``staging/old``, and no file of the new export (a file is the new export's when its SHA-256 is
    the one the journal recorded)."""
    old = staging / OLD
    new = journal.get("new") or {}
    for name in [*new, *(journal.get("remove") or [])]:
        target, backup = folder / name, old / name
        if name in (journal.get("backed_up") or []) and (backup.exists() or backup.is_symlink()):
            os.replace(backup, target)
        elif name in new and target.exists() and not target.is_symlink() and sha256_file(target) == new[name]:
            os.unlink(target)
    _fsync_dir(folder)


# -- stale staging folders -------------------------------------------------------------------------
def _lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(fd, str(os.getpid()).encode())
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _is_live(staging: Path) -> bool:
    """Whether the process that made ``staging`` is still at work (it holds the lock)."""
    lock = staging / LOCK
    try:
        age = time.time() - staging.stat().st_mtime
    except OSError:
        return False
    if fcntl is None:
        return age < UNLOCKED_STALE_SECONDS
    if not lock.exists():  # made a moment ago, or killed between making the folder and locking it
        return age < 60
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)
    return False


def read_journal(staging: Path) -> dict | None:
    try:
        journal = json.loads((staging / JOURNAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return journal if isinstance(journal, dict) else None


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
            return (f"a killed export left its private temporary folder {name} before any of its files reached "
                    f"its name")
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
        if p.name.startswith(PREFIX) and p.is_dir() and not p.is_symlink():
            live = _is_live(p)
            found.append(Leftover(p, live, None if live else read_journal(p)))
        elif LEGACY_PART.fullmatch(p.name) and p.is_file():
            found.append(Leftover(p, False))
    for item in found:
        if item.interrupted_commit:
            for name, digest in (item.journal.get("new") or {}).items():
                target = folder / name
                if target.exists() and not target.is_symlink():
                    item.members[name] = "new" if sha256_file(target) == digest else "earlier"
    return found


def remove_stale(folder: str | os.PathLike) -> list[Path]:
    """Remove what killed exports left in ``folder`` (rolling back a half-done commit first, so the
    earlier export is whole again); return what was removed. Live staging folders are left alone."""
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
    """BadInput when a target is one of the protected files (same file by any path, link or hard link)."""
    for target in targets:
        target = Path(target)
        if not target.exists():
            continue
        for keep in protected:
            if keep and Path(keep).exists() and os.path.samefile(keep, target):
                raise BadInput(f"writing {target.name} would overwrite the input file {Path(keep).name}; "
                               f"choose another output folder")
