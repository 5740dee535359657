"""Check, before setting up, that this machine can run Veil; say what to install if not.

Run by `make run` / `make test`. Exits 2 with an apt-get line when something essential is missing.
"""

from __future__ import annotations

import ctypes.util
import shutil
import sys

QT_LIBS = {  # shared library -> Debian/Ubuntu package (see README "System packages")
    "EGL": "libegl1", "GL": "libgl1", "xkbcommon": "libxkbcommon0", "fontconfig": "libfontconfig1",
    "freetype": "libfreetype6", "glib-2.0": "libglib2.0-0", "dbus-1": "libdbus-1-3", "X11": "libx11-6",
}


def main() -> int:
    problems, packages = [], []
    if sys.version_info < (3, 11):
        problems.append(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError:
        problems.append("Python's venv module is missing")
        packages.append("python3-venv")
    if sys.platform.startswith("linux"):
        for lib, pkg in QT_LIBS.items():
            if ctypes.util.find_library(lib) is None:
                problems.append(f"the library lib{lib} (Qt needs it) is missing")
                packages.append(pkg)
        if shutil.which("gcc") is None:
            problems.append("a C compiler is needed to build the pyfim itemset miner")
            packages += ["gcc", "libc6-dev", "python3-dev"]
        if shutil.which("fc-list") is not None:
            import subprocess

            fonts = subprocess.run(["fc-list"], capture_output=True, text=True).stdout
            if not fonts.strip():
                print("warning: no fonts found; Qt will draw text as boxes (install fonts-dejavu-core)",
                      file=sys.stderr)
    if problems:
        for p in problems:
            print(f"veil setup: {p}", file=sys.stderr)
        if packages:
            print(f"veil setup: install them with: sudo apt-get install -y --no-install-recommends "
                  f"{' '.join(dict.fromkeys(packages))}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
