"""What Veil remembers between sessions, kept with QSettings (organisation "Veil").

Every key is declared here with its default, under a version number: settings written by another
version are dropped rather than misread. When ``VEIL_SETTINGS_DIR`` is set (the tests set it),
the settings are an INI file in that folder, so tests never read the developer's own settings;
otherwise each platform's native place is used (registry, plist, ~/.config).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from veil.engine import ImportOptions

VERSION = 1
MAX_RECENT = 10
DEFAULTS = {
    "window/geometry": None,
    "window/state": None,
    "recent/files": "[]",  # JSON list of {"path", "kind": "data" | "project", "options": {...}}
    "session/last": "",  # JSON {"kind": "data" | "project" | "demo", "path", "options"}
    "folders/open": "",
    "folders/export": "",
    "cluster/master": "",  # a cluster's master URL the runs of methods that can scale out go to ("" = here)
}


def options_to_dict(options: ImportOptions | None) -> dict:
    if options is None:
        return {}
    return {
        k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(options).items() if v is not None
    }


def options_from_dict(d: dict | None) -> ImportOptions:
    d = dict(d or {})
    if d.get("names"):
        d["names"] = tuple(d["names"])
    known = {f.name for f in dataclasses.fields(ImportOptions)}
    return ImportOptions(**{k: v for k, v in d.items() if k in known})


class Settings:
    def __init__(self):
        folder = os.environ.get("VEIL_SETTINGS_DIR")
        if folder:
            QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, folder)
            self.q = QSettings(QSettings.IniFormat, QSettings.UserScope, "Veil", "Veil")
        else:
            self.q = QSettings("Veil", "Veil")
        if self.q.value("version") not in (None, VERSION, str(VERSION)):
            self.q.clear()
        self.q.setValue("version", VERSION)

    @property
    def path(self) -> str:
        return self.q.fileName()

    def session_file(self) -> Path:
        """Where the last session is kept as a project file, beside the settings."""
        return Path(self.path).parent / "last-session.veil.json"

    def get(self, key: str):
        value = self.q.value(key, DEFAULTS[key])
        return DEFAULTS[key] if value is None else value

    def set(self, key: str, value) -> None:
        if key not in DEFAULTS:
            raise KeyError(f"undeclared setting {key!r}")
        self.q.setValue(key, value)

    def sync(self) -> None:
        self.q.sync()

    # -- window layout --------------------------------------------------------------------------
    def save_window(self, geometry: QByteArray, state: QByteArray) -> None:
        self.set("window/geometry", geometry)
        self.set("window/state", state)

    def window(self) -> tuple[QByteArray | None, QByteArray | None]:
        g, s = self.get("window/geometry"), self.get("window/state")
        return (g if isinstance(g, QByteArray) else None, s if isinstance(s, QByteArray) else None)

    # -- recent files and the last session ------------------------------------------------------
    def recent(self) -> list[dict]:
        try:
            entries = json.loads(self.get("recent/files"))
        except (TypeError, json.JSONDecodeError):
            return []
        return [e for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)]

    def add_recent(self, path: str | Path, kind: str = "data", options: ImportOptions | None = None) -> None:
        path = str(Path(path).resolve())
        entries = [e for e in self.recent() if e["path"] != path]
        entries.insert(0, {"path": path, "kind": kind, "options": options_to_dict(options)})
        self.set("recent/files", json.dumps(entries[:MAX_RECENT]))

    def clear_recent(self) -> None:
        self.set("recent/files", "[]")

    def remember_session(
        self, kind: str, path: str | Path | None = None, options: ImportOptions | None = None, **extra
    ):
        entry = {
            "kind": kind,
            "path": str(Path(path).resolve()) if path else None,
            "options": options_to_dict(options),
            **extra,
        }
        self.set("session/last", json.dumps(entry))

    def last_session(self) -> dict | None:
        """What to reopen: the last data file or project, if it still exists."""
        try:
            entry = json.loads(self.get("session/last") or "null")
        except (TypeError, json.JSONDecodeError):
            return None
        if not isinstance(entry, dict) or entry.get("kind") not in ("data", "project", "session"):
            return None
        if not (entry.get("path") and Path(entry["path"]).is_file()):
            return None
        if entry["kind"] == "session" and not _session_data_exists(Path(entry["path"])):
            return None  # the data it was working on is gone
        return entry


def _session_data_exists(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8")).get("data") or {}
    except (OSError, ValueError, AttributeError):
        return False
    if data.get("demo"):
        return True
    return bool(data.get("path")) and (path.parent / data["path"]).is_file()
