"""Test-wide set-up: Qt runs offscreen unless told otherwise, and never reads the user's settings."""

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # QT_QPA_PLATFORM=xcb pytest to watch the windows
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("LOKY_MAX_CPU_COUNT", "2")
if not os.environ.get("XDG_RUNTIME_DIR"):
    _runtime = tempfile.mkdtemp(prefix="xdg-runtime-")
    os.chmod(_runtime, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = _runtime
os.environ["VEIL_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="veil-settings-")
# figures remembered across processes go to a fresh folder, never the user's cache (see engine/usercache.py)
os.environ["VEIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="veil-cache-")
