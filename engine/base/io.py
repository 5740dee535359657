"""Reading data through the importer plugins, and writing files atomically."""

from __future__ import annotations

import errno
import hashlib
import os
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
        Worksheet of an Excel file (default the first).
    fmt : str, optional
        Importer name, overriding detection by extension and content.
    skip_rows : int
        Lines to skip at the top of a delimited text file before anything is read (a title or a
        comment line, like the ``|1x3 Cross validator`` line that opens UCI's adult.test).
    drop_missing : bool
        Drop every record with a missing value in any column once the table is read (the papers'
        Adult: 30,162 of 32,561 records); kept by the data source, so a project and the manifest
        record it.
    """

    encoding: str | None = None
    delimiter: str | None = None
    header: bool | None = None
    names: tuple[str, ...] | None = None
    sheet: str | None = None
    fmt: str | None = None
    skip_rows: int = 0
    drop_missing: bool = False


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def missing_reason(path: str | os.PathLike, what: str = "file") -> str:
    """Why ``path`` cannot be opened, in words: a symbolic link loop, a link to nothing, or not found."""
    p = Path(path)
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{p} is a symbolic link loop (a link that leads back to itself): it reaches no {what}"
        if p.is_symlink():
            return f"{p} is a symbolic link to {os.readlink(p)}, which does not exist"
    return f"{what} not found: {p}"


def check_readable(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise BadInput(missing_reason(p))
    if p.is_dir():
        raise BadInput(f"{p} is a folder, not a data file")
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
            f.readline()
        head = f.read(65536)
    candidates = [registry.create("importer", n) for n in registry.names("importer")]
    candidates.sort(key=lambda imp: imp.priority, reverse=True)
    for imp in candidates:
        if imp.sniff(p, head):
            return imp
    known = sorted({ext for imp in candidates for ext in imp.extensions})
    raise BadInput(f"cannot tell the format of {p.name}; known extensions: {' '.join(known)} "
                   f"(or name the format)")


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


@contextmanager
def atomic_path(target: str | os.PathLike):
    """Yield a temporary path next to ``target``; on success rename it onto ``target``.

    A failure (or a kill) before the rename leaves ``target`` as it was: a previous file stays
    intact, and no partial file ever appears under the target's name.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would survive the rename
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
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
