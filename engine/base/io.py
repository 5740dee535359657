"""Reading data through the importer plugins, and writing files atomically."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import BadInput


@dataclass(frozen=True)
class ImportOptions:
    """How to read a file; None means "detect".

    Attributes
    ----------
    encoding : str, optional
        Text encoding (detected: UTF-8 with or without BOM, UTF-16 with BOM, else cp1252).
    delimiter : str, optional
        Field separator of delimited text (detected among , ; tab | and space).
    header : bool, optional
        Whether the first row holds column names (detected).
    names : tuple of str, optional
        Column names for a headerless file (default ``col1`` … ``colN``).
    sheet : str, optional
        Worksheet of an Excel file (default the first), data frame of an R file, table of a database.
    query : str, optional
        A database's rows as a read-only query selects them (``SELECT …``), instead of a table.
    fmt : str, optional
        Importer name, overriding detection by extension and content.
    skip_rows : int
        Lines to skip at the top of a delimited text file before anything is read (a title or a
        comment line, like the ``|1x3 Cross validator`` line that opens UCI's adult.test).
    drop_missing : bool
        Drop every record with a missing value in any column once the table is read (the papers'
        Adult: 30,162 of 32,561 records); kept by the data source, so a project and the manifest
        record it.
    fill_missing : str, optional
        Instead, fill every missing cell: ``"value"`` (a value of its own) or ``"impute"`` (median or
        most frequent value; see :mod:`veil.engine.data.missing`).
    """

    encoding: str | None = None
    delimiter: str | None = None
    header: bool | None = None
    names: tuple[str, ...] | None = None
    sheet: str | None = None
    query: str | None = None
    fmt: str | None = None
    skip_rows: int = 0
    drop_missing: bool = False
    fill_missing: str | None = None


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """What an ``st_mode`` is, in words ("a regular file", "a named pipe (FIFO)", …)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike, *, follow_symlinks: bool = True) -> os.stat_result:
    """The ``stat`` of ``path`` when it is a regular file; BadInput naming what it is otherwise (a named
    pipe, a socket, a device, a folder, or, with ``follow_symlinks=False``, a symbolic link).

    Veil never opens anything but a regular file: reading a FIFO blocks until someone writes to it,
    and a device such as ``/dev/zero`` never ends. OSError (a missing file) passes through."""
    st = os.stat(path, follow_symlinks=follow_symlinks)
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{path} is {file_kind(st.st_mode)}, not a regular file; Veil reads only regular files")
    return st


def open_regular(path: str | os.PathLike, *, follow_symlinks: bool = True):
    """``path`` opened for binary reading, only when it is a regular file (see :func:`check_regular`).

    Checked before opening (so a device is never opened) and again on the open file (so nothing
    swapped in between is read); opened without blocking, so a FIFO put there meanwhile cannot
    hold the call, and, with ``follow_symlinks=False``, never through a symbolic link."""
    check_regular(path, follow_symlinks=follow_symlinks)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise BadInput(f"{path} is a symbolic link, not a regular file; Veil does not follow it here") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{path} is {file_kind(st.st_mode)}, not a regular file; Veil reads only regular files")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20, *, follow_symlinks: bool = True) -> str:
    """SHA-256 of a regular file (BadInput for a FIFO, a device, … : see :func:`open_regular`)."""
    h = hashlib.sha256()
    with open_regular(path, follow_symlinks=follow_symlinks) as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def missing_reason(path: str | os.PathLike, what: str = "file") -> str:
    """Why ``path`` cannot be opened, in words: a symbolic link loop, a link to nothing, not a regular
    file (a folder, a device, a FIFO), or not found."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{p} is a symbolic link loop (a link that leads back to itself): it reaches no {what}"
        if p.is_symlink():
            return f"{p} is a symbolic link to {os.readlink(p)}, which does not exist"
        return f"{what} not found: {p}"
    if not stat.S_ISREG(st.st_mode):  # there, but a folder, a device or a FIFO: never "not found"
        return f"{p} is {file_kind(st.st_mode)}, not a {what}; Veil reads only regular files"
    return f"{what} not found: {p}"


def check_readable(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise BadInput(missing_reason(p))
    if p.is_dir():
        raise BadInput(f"{p} is a folder, not a data file")
    check_regular(p)  # a FIFO or a device would block or never end
    if not os.access(p, os.R_OK):
        raise BadInput(f"cannot read {p}: permission denied")
    if p.stat().st_size == 0:
        raise BadInput(f"{p} is empty")
    return p


def choose_importer(registry, path: str | os.PathLike, options: ImportOptions):
    """The importer plugin for ``path``: the one named in ``options.fmt``, else the first that
    recognises the file (extension or content)."""
    p = check_readable(path)
    if options.fmt:
        return registry.create("importer", options.fmt)
    with open(p, "rb") as f:
        for _ in range(options.skip_rows):  # sniff what will be read, not the skipped title
            if not f.readline():
                break  # past the end (a skip of 10**30 rows stops here): the importer says so
        head = f.read(65536)
    candidates = [registry.create("importer", n) for n in registry.names("importer")]
    candidates.sort(key=lambda imp: imp.priority, reverse=True)
    for imp in candidates:
        if imp.sniff(p, head):
            return imp
    known = sorted({ext for imp in candidates for ext in imp.extensions})
    raise BadInput(f"cannot tell the format of {p.name}; known extensions: {' '.join(known)} (or name the format)")


def read_data(registry, path: str | os.PathLike, options: ImportOptions | None = None):
    """Read ``path`` with the matching importer; returns a Table (or BinaryMatrix for transactions)
    carrying the file's path and SHA-256. The file is opened read-only and never modified."""
    options = options or ImportOptions()
    importer = choose_importer(registry, path, options)
    data = importer.read(Path(path), options)
    digest = sha256_file(path)
    if hasattr(data, "frame"):
        import dataclasses

        data = dataclasses.replace(data, source=str(path), sha256=digest)
    else:
        data.meta.update(source=str(path), sha256=digest)
    return data


def check_private_folder(folder: str | os.PathLike, what: str = "the folder") -> os.stat_result:
    """The ``stat`` of ``folder`` when Veil may put files in it; BadInput saying why not otherwise.

    Refused: something that is not a folder, a folder of another user (root's excepted: only root
    can write there), and a folder anyone may write to without the sticky bit (``/tmp`` has it),
    where another user could swap a link or a FIFO in place of what Veil writes (docs/security.md)."""
    folder = Path(folder)
    st = os.stat(folder)
    if not stat.S_ISDIR(st.st_mode):
        raise BadInput(f"{what} {folder} is {file_kind(st.st_mode)}, not a folder")
    if hasattr(os, "geteuid") and st.st_uid not in (os.geteuid(), 0):
        raise BadInput(
            f"{what} {folder} belongs to another user (uid {st.st_uid}), who could replace what Veil writes "
            f"there; choose a folder of yours"
        )
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise BadInput(
            f"{what} {folder} may be written by anyone (mode {stat.filemode(st.st_mode)}, no sticky bit): "
            f"another user could replace what Veil writes there; chmod o-w it or choose another folder"
        )
    return st


def check_output_file(target: str | os.PathLike) -> None:
    """BadInput unless ``target`` is absent or a regular file: Veil replaces only a regular file,
    never a link (it is not written through either), a device, a FIFO, a socket or a folder."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise BadInput(f"{target} is {file_kind(mode)}; Veil writes over only a regular file: name another file")


def check_output_path(target: str | os.PathLike) -> None:
    """Before any work: BadInput when ``target`` could not be written by :func:`atomic_path`
    (not a regular file, or in an existing folder another user may write)."""
    check_output_file(target)
    parent = Path(target).parent
    if parent.exists():
        check_private_folder(parent)


@contextmanager
def atomic_path(target: str | os.PathLike):
    """Yield a temporary path next to ``target``; on success rename it onto ``target``.

    A failure (or a kill) before the rename leaves ``target`` as it was: a previous file stays
    intact, and no partial file ever appears under the target's name. ``target`` must be absent or a
    regular file, in a folder no other user may write (:func:`check_output_file`,
    :func:`check_private_folder`); the temporary file is made new (``O_EXCL``, never through a link)
    and the target checked again just before the rename.
    """
    target = Path(target)
    check_output_file(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot make the folder {target.parent}: {exc.strerror or exc}") from None
    check_private_folder(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)  # O_EXCL|O_NOFOLLOW
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would survive the rename
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        check_output_file(target)  # nothing but a regular file swapped in meanwhile
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(target: str | os.PathLike, writer: Callable[[Path], None]) -> Path:
    with atomic_path(target) as tmp:
        writer(tmp)
    return Path(target)


def write_text_atomic(target: str | os.PathLike, text: str) -> Path:
    return write_atomic(target, lambda p: p.write_text(text, encoding="utf-8"))
