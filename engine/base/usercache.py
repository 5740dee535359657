"""A small cache of computed figures in the user's cache directory, kept across processes.

A figure is stored under a key its caller derives from everything it depends on (a digest of the
data's content, the seed, the settings, the code that computes it); a later process asking for the
same key reads it back instead of computing it again. Each entry is one JSON file that repeats its
full key, so a file renamed, truncated, corrupt or written for another key is ignored (and computed
again), never returned. Writes are atomic (a temporary file renamed), and any failure to read or
write the cache (a read-only home, a full disk) only means the figure is computed.

Where: ``$VEIL_CACHE_DIR`` when set (an empty value or ``off`` turns the cache off), otherwise
``$XDG_CACHE_HOME/veil`` or ``~/.cache/veil`` (``%LOCALAPPDATA%\\veil\\cache`` on Windows,
``~/Library/Caches/veil`` on macOS).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from .errors import BadInput
from .io import open_regular

FORMAT = 1  # of an entry's file; entries of another format are ignored
MAX_ENTRIES = 400  # per namespace (a classifier figure takes about 300 bytes)


def cache_dir() -> Path | None:
    """The cache's folder (not created here), or None when the cache is turned off."""
    chosen = os.environ.get("VEIL_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen).expanduser()
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "veil" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "veil"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "veil"


def cache_key(*parts) -> str:
    """SHA-256 of the parts' ``repr`` (strings, numbers, tuples of them) and bytes, in order."""
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _entry(namespace: str, key: str) -> Path | None:
    folder = cache_dir()
    if folder is None or not key.isalnum() or not namespace.replace("-", "").isalnum():
        return None
    return folder / namespace / key[:2] / f"{key}.json"


def load(namespace: str, key: str):
    """The value stored under ``key`` in ``namespace``, or None (absent, unreadable, corrupt, or
    written for another key or format)."""
    path = _entry(namespace, key)
    if path is None:
        return None
    try:
        with open_regular(path) as f:  # never a FIFO or a device put in its place
            entry = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, BadInput):
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("format") != FORMAT
        or entry.get("namespace") != namespace
        or entry.get("key") != key
        or "value" not in entry
    ):
        return None
    try:
        os.utime(path)  # recently used: pruned last
    except OSError:
        pass
    return entry["value"]


def store(namespace: str, key: str, value) -> bool:
    """Keep ``value`` (JSON-ready; NaN allowed) under ``key``; False when it could not be written."""
    path = _entry(namespace, key)
    if path is None:
        return False
    try:
        text = json.dumps({"format": FORMAT, "namespace": namespace, "key": key, "value": value})
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, TypeError, ValueError):
        return False
    prune(namespace)
    return True


def prune(namespace: str, keep: int | None = None) -> int:
    """Remove the least recently used entries of ``namespace`` beyond ``keep`` (default
    :data:`MAX_ENTRIES`), down to 80 % of it; return how many were removed."""
    keep = MAX_ENTRIES if keep is None else keep
    folder = cache_dir()
    if folder is None:
        return 0
    try:
        files = list((folder / namespace).glob("??/*.json"))
        if len(files) <= keep:
            return 0
        dated = sorted(files, key=lambda p: p.stat().st_mtime)
    except OSError:
        return 0
    removed = 0
    for path in dated[: len(files) - int(keep * 0.8)]:
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def source_digest(*files) -> str:
    """SHA-256 of source files' bytes: a key part that changes whenever the code computing a
    figure does (so a cached figure never outlives the code that made it)."""
    h = hashlib.sha256()
    for f in files:
        try:
            h.update(Path(f).read_bytes())
        except OSError:
            h.update(os.urandom(16))  # unreadable: never match a stored entry
    return h.hexdigest()
